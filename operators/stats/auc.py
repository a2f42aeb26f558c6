"""Prequential AUC (docs/method.md §18): the area under the ROC curve of a window's scores.

Brzezinski and Stefanowski ("Prequential AUC", Knowledge and Information Systems, 2017)
compute the AUC of a sliding window of scored examples from a sorted structure of its scores,
updated as each example enters and the oldest leaves. Here that structure is a treap keyed by
distinct score with subtree counts of positives and negatives (:mod:`.auc_kernels`, compiled),
and beside it the doubled Mann-Whitney count

    U2 = 2 #(positive scored above negative) + #(positive and negative scored equal)

over the window's (positive, negative) pairs, updated at each entry and exit from the counts
above and below the score (O(log w) expected per example, memory O(w)). The AUC is then
``(U2 / 2) / (P N)``: ties count one half, as in MOA's
``WindowAUCImbalancedPerformanceEvaluator``, and with integer counts the value is the very
double MOA's sum gives. A window with no positive or no negative has no AUC (``None``; MOA
writes 1 there).

One structure per class, one-vs-rest (that class positive, its score the learner's score for
it): the binary AUC is the positive class's; with more classes, the mean of the classes' AUCs
that are defined. A class first seen late enters its structure with the window's earlier
examples as negatives of score 0, the score every learner gave a class it did not know.

The window is the measures' (``sizes``: each example's window size after it, from
:meth:`~.windows.Window.update_many`); without sizes, the whole stream (cumulative), exactly,
in memory of the number of distinct scores seen.
"""

from __future__ import annotations

import types

import numpy as np

from foldstream.operators.stats.detectors import compiled
from foldstream.operators.stats.measures import _mean

#: The score-based measures of ``evaluation.scores``, in output order.
SCORE_MEASURES = ("auc",)


def _kernel() -> types.ModuleType:
    """The compiled loops (operators/stats/auc_kernels.py), imported on first use."""
    return compiled("stats.auc_kernels")


# The slots of a structure's integer state array.
ROOT = 0      # the root node (-1: empty)
FREE = 1      # the first free node (-1: none), linked through LEFT
USED = 2      # nodes taken from the pool so far
HEAD = 3      # the ring's oldest example
COUNT = 4     # examples in the ring (the window)
POS = 5       # positive examples in the window
NEG = 6       # negative examples in the window
U2 = 7        # 2 #(positive scored above negative) + #(positive and negative scored equal)
RNG = 8       # the state of the priorities' generator
STATE_SLOTS = 9


# The columns of a structure's integer node array.
LEFT = 0
RIGHT = 1
PRIO = 2
NPOS = 3      # positives of this node's score
NNEG = 4      # negatives of this node's score
SPOS = 5      # positives of its subtree
SNEG = 6      # negatives of its subtree
NODE_COLUMNS = 7


def new_state() -> np.ndarray:
    """The integer state of an empty structure."""
    state = np.zeros(STATE_SLOTS, dtype=np.int64)
    state[ROOT] = -1
    state[FREE] = -1
    state[RNG] = 88172645463325252  # any seed: the counts do not depend on the tree's shape
    return state


_FIRST = 64


class OneVsRest:
    """The AUC structure of one class against the others over a window (see the module).

    >>> s = OneVsRest(windowed=True)
    >>> s.add(np.array([0.9, 0.2, 0.6, 0.6]), np.array([True, False, False, True]),
    ...       np.array([1, 2, 3, 3]))
    >>> s.value()  # window [0.2-, 0.6-, 0.6+]: 1 pair above, 1 tie of 2
    0.75
    """

    def __init__(self, windowed: bool):
        self.state = new_state()
        self.nodes = np.zeros((_FIRST, NODE_COLUMNS), dtype=np.int64)
        self.keys = np.zeros(_FIRST, dtype=np.float64)
        self.path = np.zeros(_FIRST, dtype=np.int64)
        self.ring_s = np.zeros(_FIRST if windowed else 0, dtype=np.float64)
        self.ring_p = np.zeros(_FIRST if windowed else 0, dtype=np.bool_)

    @property
    def count(self) -> int:
        """Examples in the window."""
        return int(self.state[POS] + self.state[NEG])

    def value(self) -> float | None:
        """The AUC of the window; ``None`` without a positive or a negative."""
        pos, neg = int(self.state[POS]), int(self.state[NEG])
        if pos == 0 or neg == 0:
            return None
        return (float(self.state[U2]) / 2.0) / (float(pos) * float(neg))

    def _room(self, n: int, most: int) -> None:
        """Room for ``n`` more examples, the window holding at most ``most`` after them."""
        state, count = self.state, self.count
        used = int(state[USED])
        need = min(used + n, max(used, count + n)) + 1
        if need > self.keys.shape[0]:
            size = max(need, 2 * self.keys.shape[0])
            nodes = np.zeros((size, NODE_COLUMNS), dtype=np.int64)
            nodes[:used] = self.nodes[:used]
            keys = np.zeros(size, dtype=np.float64)
            keys[:used] = self.keys[:used]
            self.nodes, self.keys, self.path = nodes, keys, np.zeros(size, dtype=np.int64)
        cap = self.ring_s.shape[0]
        if cap:
            need = max(count, most) + 2  # before an exit, one more than the window
            if need > cap:
                size = max(need, 2 * cap)
                head = int(state[HEAD])
                ring_s = np.zeros(size, dtype=np.float64)
                ring_p = np.zeros(size, dtype=np.bool_)
                ring_s[:count] = np.roll(self.ring_s, -head)[:count]
                ring_p[:count] = np.roll(self.ring_p, -head)[:count]
                self.ring_s, self.ring_p = ring_s, ring_p
                state[HEAD] = 0

    def add(self, scores: np.ndarray, positive: np.ndarray, sizes: np.ndarray | None) -> None:
        """Examples in turn: their scores for the class, whether they are of it, and the window
        size after each (``None``: cumulative)."""
        n = len(scores)
        if not n:
            return
        if sizes is None:
            sizes = np.zeros(0, dtype=np.int64)
        self._room(n, int(sizes.max()) if len(sizes) else 0)
        _kernel().auc_run(self.state, self.nodes, self.keys, self.path, self.ring_s, self.ring_p,
                          np.ascontiguousarray(scores, dtype=np.float64),
                          np.ascontiguousarray(positive, dtype=np.bool_),
                          np.ascontiguousarray(sizes, dtype=np.int64))

    def backfill(self, count: int) -> None:
        """``count`` earlier examples, none of the class, all of score 0."""
        if count > 0:
            self._room(1, count)
            if self.ring_s.shape[0]:
                self._room(count, count)
            _kernel().auc_backfill(self.state, self.nodes, self.keys, self.path, self.ring_s,
                                   self.ring_p, count)


class WindowAuc:
    """One learner's AUC on a fold: a :class:`OneVsRest` per class of the stream.

    Parameters
    ----------
    windowed
        Whether examples leave (a sliding or ADWIN window; the sizes come with each update);
        otherwise the whole stream.

    Examples
    --------
    >>> auc = WindowAuc(windowed=False)
    >>> auc.update(np.array([0, 1, 0, 1]), np.array([[0.8, 0.2], [0.3, 0.7], [0.4, 0.6],
    ...                                               [0.5, 0.5]]), None)
    >>> auc.value(2, positive=1), auc.value(2, positive=0)
    (0.75, 0.75)
    """

    def __init__(self, windowed: bool):
        self.windowed = windowed
        self.classes: list[OneVsRest] = []

    def update(self, y: np.ndarray, scores: np.ndarray, sizes: np.ndarray | None) -> None:
        """Scored examples in turn: true class codes, scores (one row per example, one column
        per class code) and window sizes (``None``: cumulative)."""
        k = scores.shape[1] if scores.ndim == 2 else 0
        while len(self.classes) < k:
            seen = self.classes[0].count if self.classes else 0
            made = OneVsRest(self.windowed)
            made.backfill(seen)
            self.classes.append(made)
        if not len(y):
            return
        for c, structure in enumerate(self.classes):
            column = scores[:, c] if c < k else np.zeros(len(y))
            structure.add(column, y == c, sizes)

    def value(self, n_classes: int, positive: int) -> float | None:
        """The AUC for a stream of ``n_classes`` classes so far: the ``positive`` class's
        (-1: not seen, ``None``) with at most two, else the mean of the classes' defined AUCs."""
        if n_classes <= 2:
            if 0 <= positive < min(n_classes, len(self.classes)):
                return self.classes[positive].value()
            return None
        return _mean([s.value() for s in self.classes[:n_classes]])


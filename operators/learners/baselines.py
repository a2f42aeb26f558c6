"""Baseline learners of foldstream's own, usable like river's (by dotted path in a configuration).

River has the majority class over the whole stream (``river.dummy.PriorClassifier``) and the
no-change classifier (``river.dummy.NoChangeClassifier``); Bifet et al. (2015, Figure 2) also
plot the majority class over a sliding window, which adapts to a change of the class ratio as
fast as the window forgets. :class:`MajorityWindowClassifier` is that learner.
"""

from __future__ import annotations

from collections import Counter, deque
from itertools import compress
from typing import Any

from river import base


class MajorityWindowClassifier(base.Classifier):
    """Predicts the most frequent label of the last ``window_size`` labels it learnt.

    Ties go to the label seen first since the learner started (as the evaluator's majority
    baseline breaks them); before any label it predicts ``None`` (not ready: scored as wrong).
    A label learnt with weight ``w`` counts ``w`` times and takes ``w`` places of the window,
    as a repeated example would. Memory is O(window_size), each call O(1) but ``predict_one``,
    O(labels in the window).

    Parameters
    ----------
    window_size : int
        How many of the most recent labels are counted.

    Examples
    --------
    >>> model = MajorityWindowClassifier(window_size=3)
    >>> model.predict_one({}) is None
    True
    >>> for y in ["a", "b", "b", "a", "a"]:
    ...     model.learn_one({}, y)
    >>> model.predict_one({})  # the window holds b, a, a
    'a'
    >>> model.predict_proba_one({})
    {'a': 0.666..., 'b': 0.333...}
    >>> model.learn_one({}, "b", w=2)  # a, b, b
    >>> model.predict_one({})
    'b'
    """

    def __init__(self, window_size: int = 1000):
        if isinstance(window_size, bool) or not isinstance(window_size, int) or window_size < 1:
            raise ValueError(f"window_size must be an integer >= 1, got {window_size!r}")
        self.window_size = window_size
        self._window: deque = deque()
        self._counts: Counter = Counter()
        self._first_seen: dict[Any, int] = {}

    def learn_one(self, x: dict, y: Any, w: int = 1) -> None:
        if y not in self._first_seen:
            self._first_seen[y] = len(self._first_seen)
        for _ in range(int(w)):
            self._window.append(y)
            self._counts[y] += 1
            if len(self._window) > self.window_size:
                old = self._window.popleft()
                self._counts[old] -= 1
                if not self._counts[old]:
                    del self._counts[old]

    def predict_proba_one(self, x: dict) -> dict[Any, float]:
        n = len(self._window)
        return {y: count / n for y, count in self._counts.items()} if n else {}

    def predict_one(self, x: dict) -> Any:
        if not self._counts:
            return None
        first = self._first_seen
        return max(self._counts.items(), key=lambda item: (item[1], -first[item[0]]))[0]


def no_change_batch(model: Any, y: list[int], weights: list[int], scored: list[bool],
                    classes: list) -> list[int]:
    """River's ``NoChangeClassifier`` (``model``) through a fold's batch at once, with the
    predictions and the state that predicting then learning each example in turn gives
    (:func:`~foldstream.operators.learners.fitting.learn`): an example's prediction is the
    label of the last example before it learnt with a weight above 0 (the model's
    ``last_class`` before the batch's first such example; -1, not ready, before any), and -1
    where it is not ``scored``. ``y`` are class codes into ``classes``; returns the predicted
    codes, and ``model`` has learnt the batch.

    >>> from river.dummy import NoChangeClassifier
    >>> model = NoChangeClassifier()
    >>> no_change_batch(model, [0, 1, 1, 0], [1, 0, 2, 1], [True, True, True, False], ["a", "b"])
    [-1, 0, 0, -1]
    >>> model.last_class, sorted(model.classes)
    ('a', ['a', 'b'])
    """
    last = model.last_class
    code = -1 if last is None else {label: code for code, label in enumerate(classes)}.get(last, -1)
    # One pass in Python: a batch's lists hold a few hundred examples, which numpy's conversions
    # of the lists (in and out) cost several times over.
    pred = []
    append = pred.append
    for t, weight in zip(y, weights):
        append(code)
        if weight > 0:
            code = t
    if not all(scored):
        pred = [p if s else -1 for p, s in zip(pred, scored)]
    learnt = dict.fromkeys(compress(y, weights))  # weights are never negative
    if learnt:
        model.last_class = classes[code]
        model.classes.update(classes[c] for c in learnt)
    return pred

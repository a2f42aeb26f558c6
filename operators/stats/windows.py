"""Windows over one evaluator's scored examples (docs/method.md §3, §4).

A window keeps the weighted confusion counts of the examples it covers, together with how many
of them the two label-only baselines got right, so that ``p0``, ``pc``, ``pm`` and ``pper`` are
always measured over the same examples. Each example is a triple of class codes: the true class
``t``, the prediction ``p`` (-1: none) and the stream's previous label ``prev`` (-1: none),
which is the persistent baseline's prediction. The majority baseline predicts the most frequent
true class of the window *before* the example; ties go to the smallest code, the class seen
first in the stream.

Why arrays: a window is updated once per scored example, per learner and fold; as Python
objects that would be most of the evaluation's time with a cheap learner. Every window keeps
its counts in one numpy array and updates them a segment at a time in one compiled loop
(operators/stats/kernels.py) that does, example by example, the arithmetic described here in
the same order, so that every count, integer or float, is what the example-by-example update
gave (tests/test_windows.py keeps that update as the oracle).

Why one module: the four kinds share the :class:`Window` base's array layout,
and each kind's reader of its older pickled layouts (a checkpoint's) sits beside the layout it
converts; :class:`WindowSpec`, the one description of a window that the configuration, the plans
and the evaluator pass around, names those kinds and their defaults, which are defined here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from foldstream.operators.stats import detectors
from foldstream.operators.stats.detectors import NO_MAJORITY, Adwin

#: The kinds of window, each with the name of its one parameter (``None``: it has none).
WINDOW_KINDS = {"cumulative": None, "sliding": "size", "fading": "alpha", "adwin": "delta"}
SLIDING_SIZE = 1000
"""Default ``size`` of a sliding window: the last this many scored examples."""
FADING_ALPHA = 0.999
"""Default fading factor (Gama et al. 2009): of a fading window, and of the Q statistic."""
ADWIN_DELTA = 0.002
"""Default ADWIN confidence ``delta`` (river's): of an ADWIN window, and of ADWIN alarms."""
_DEFAULTS = {"size": SLIDING_SIZE, "alpha": FADING_ALPHA, "delta": ADWIN_DELTA}


@dataclass(slots=True)
class Counts:
    """A read-only view of a window's counts (fading already applied).

    ``cm[(t, p)]`` is the weight of true class ``t`` predicted as ``p``; ``rows[t]`` the weight of
    true class ``t``; ``maj`` and ``per`` the weight the majority and persistent baselines got
    right; ``n`` the total weight.
    """

    n: float
    cm: dict[tuple[int, int], float]
    rows: dict[int, float]
    maj: float
    per: float


class Updated(NamedTuple):
    """What :meth:`Window.update_many` tells of each example, right after it: the window's
    size, whether it detected a change (``None``: a window that detects none) and its majority
    baseline's prediction (the one the next example gets, unless given its own)."""

    sizes: np.ndarray
    drifts: np.ndarray | None
    after: np.ndarray


class Window:
    """Base class: a window's counts, updated a segment of examples at a time.

    Every window keeps its counts in numpy arrays laid out as :mod:`.detectors` says (the
    scalars and a row per class in one array, the confusion cells its examples fell in in a
    hash table), updated by one compiled loop per segment (:mod:`~foldstream.operators.stats.kernels`)
    that does, example by example, what the windows' documented update does: :meth:`update` is
    :meth:`update_many` of one example. Its memory grows with the classes and the cells seen,
    never with the square of the classes (docs/memory.md).
    """

    kind = "cumulative"
    drift = False  # set by windows that detect change (ADWIN)
    _keep_zero_cells = False  # a cell all of whose examples left is dropped when the table grows

    def __init__(self, dtype: type = np.int64) -> None:
        self._classes = 0  # class capacity of the counts' layout
        self._agg = np.zeros(detectors.stats_size(0), dtype=dtype)
        self._keys, self._vals = detectors.cell_table(dtype=dtype)
        self._used = np.zeros(1, dtype=np.int64)  # places of the table taken
        self._majority_a = np.array([-1], dtype=np.int64)

    def __setstate__(self, state: dict) -> None:
        if "_keys" not in state:  # pickled with a dense matrix of the classes: read it in
            state = self._from_matrix(state)
        self.__dict__.update(state)

    @property
    def size(self) -> int | float:
        """The number of examples (fading: their total weight) in the window."""
        return int(self._agg[0])

    def majority(self) -> int:
        """The majority baseline's prediction now: the most frequent class, ties to the
        smallest code (-1: an empty window)."""
        return int(self._majority_a[0])

    def _grow(self, classes: int) -> None:
        self._agg = detectors.relayout(self._agg, self._classes, classes)
        self._classes = classes

    def _make_room(self) -> None:
        """More room for cells (the table rebuilt, with what it must keep), and for anything
        else a compiled loop stopped for."""
        self._keys, self._vals = detectors.rehashed(self._keys, self._vals,
                                                    keep_zero=self._keep_zero_cells)
        self._used[0] = int(np.count_nonzero(self._keys != detectors.EMPTY))

    def update(self, t: int, p: int, prev: int, maj: int | None = None) -> None:
        """Score one example: the baselines first (from the window before it), then add it.

        ``maj`` is the majority baseline's prediction when it was made earlier than now (a
        delayed label, docs/method.md §13: the window's majority when the example arrived);
        ``None``: the window's majority now.
        """
        self.update_many(np.array([t]), np.array([p]), np.array([prev]),
                         np.array([NO_MAJORITY if maj is None else maj]))

    def update_many(self, t: np.ndarray, p: np.ndarray, prev: np.ndarray,
                    majs: np.ndarray | None = None) -> Updated:
        """:meth:`update` for each example in turn (``majs[i]``: example ``i``'s ``maj``,
        :data:`~.detectors.NO_MAJORITY` for ``None``)."""
        n = len(t)
        t = np.asarray(t, dtype=np.int64)
        p = np.asarray(p, dtype=np.int64)
        prev = np.asarray(prev, dtype=np.int64)
        majs = np.full(n, NO_MAJORITY, dtype=np.int64) if majs is None else \
            np.asarray(majs, dtype=np.int64)
        if n:
            need = max(int(t.max()), int(p.max())) + 1
            if need > self._classes:
                self._grow(need)
        after = np.zeros(n, dtype=np.int64)
        sizes, drifts = self._run(t, p, prev, majs, after)
        return Updated(sizes, drifts, after)

    def _run(self, t: np.ndarray, p: np.ndarray, prev: np.ndarray, majs: np.ndarray,
             after: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        raise NotImplementedError

    def _held_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """The places of the table that hold a cell to report, and their keys."""
        held = self._keys != detectors.EMPTY
        if not self._keep_zero_cells:
            held &= self._vals != 0
        at = np.flatnonzero(held)
        return at, self._keys[at]

    def counts(self) -> Counts:
        agg, classes = self._agg.tolist(), self._classes
        rows = {c: float(v) for c, v in enumerate(agg[3:3 + classes]) if v}
        at, keys = self._held_cells()
        by_cell = np.argsort(keys, kind="stable")  # by true, then predicted class
        cm = {detectors.cell_of(k): float(v)
              for k, v in zip(keys[by_cell].tolist(), self._vals[at[by_cell]].tolist())}
        return Counts(float(agg[0]), cm, rows, float(agg[1]), float(agg[2]))

    def _load_cells(self, cells: list[tuple[int, int, float]], orders: list[int] | None = None
                    ) -> None:
        """Put cells ``(t, p, value)`` into the window's empty table (with their ``orders``, a
        fading window's)."""
        self._keys, self._vals = detectors.cell_table(detectors.table_capacity(len(cells)),
                                                      self._vals.dtype)
        keys = np.array([detectors.cell_key(t, p) for t, p, _ in cells], dtype=np.int64)
        vals = np.array([v for _, _, v in cells], dtype=self._vals.dtype)
        order = np.zeros(self._keys.shape[0] if orders is not None else 0, dtype=np.int64)
        detectors._kernels().cells_load(self._keys, self._vals, keys, vals, order,
                                        np.array(orders or [], dtype=np.int64))
        if orders is not None:
            self._cell_order = order
        self._used[0] = len(cells)

    def _from_matrix(self, state: dict) -> dict:
        """A state pickled with the dense layout (``agg``: ``[n, maj, per, rows (C), cm (C x
        (C + 1))]``, column ``p + 1`` of row ``t`` holding cell ``(t, p)``), in this one."""
        state = dict(state)
        classes, dense = state["_classes"], state["_agg"]
        cells = np.flatnonzero(dense[detectors.stats_size(classes):])
        keys = _matrix_keys(classes, cells)
        state["_agg"] = dense[:detectors.stats_size(classes)].copy()
        state["_keys"], state["_vals"] = detectors.cell_table(
            detectors.table_capacity(len(cells)), dense.dtype)
        detectors._kernels().cells_load(state["_keys"], state["_vals"], keys,
                                        dense[detectors.stats_size(classes) + cells],
                                        np.zeros(0, np.int64), np.zeros(0, np.int64))
        state["_used"] = np.array([len(cells)], dtype=np.int64)
        return state


def _matrix_keys(classes: int, cells: np.ndarray) -> np.ndarray:
    """The keys (:func:`~.detectors.cell_key`) of the cells at ``cells`` of a dense matrix of
    ``classes`` rows and ``classes + 1`` columns (column 0: no prediction)."""
    t, column = np.divmod(np.asarray(cells, dtype=np.int64), classes + 1)
    return (t << 32) | column


# What a cumulative window passes the compiled loop for ADWIN's state: empty, so never written.
_NO_INTS = np.zeros(0, dtype=np.int64)
_NO_FLOATS = np.zeros(0)
_NO_FLOATS_2D = np.zeros((0, 0))
_NO_MIRROR = np.zeros((0, 0, 0), dtype=np.int64)


class CumulativeWindow(Window):
    """Every scored example since the start.

    Its counts are integers in one numpy array, updated a batch at a time by compiled code
    (:func:`~foldstream.operators.stats.kernels.window_run`), in the same order and with the same
    results as :meth:`Window.update` example by example.

    >>> w = CumulativeWindow()
    >>> for t, p, prev in [(0, 0, -1), (1, 0, 0), (1, 1, 1)]:
    ...     w.update(t, p, prev)
    >>> c = w.counts(); (c.n, c.maj, c.per, w.majority())
    (3.0, 0.0, 1.0, 1)
    """

    _adwin: Adwin | None = None

    def _run(self, t: np.ndarray, p: np.ndarray, prev: np.ndarray, majs: np.ndarray,
             after: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        n = len(t)
        sizes = np.zeros(n, dtype=np.int64)
        if not n:
            return sizes, None if self._adwin is None else np.zeros(0, dtype=np.bool_)
        adwin = self._adwin
        drifts = np.zeros(n, dtype=np.bool_)
        if adwin is None:
            tot = var = _NO_FLOATS_2D
            cnt = ints = _NO_INTS
            fs = _NO_FLOATS
            delta, clock, max_buckets, mwl, grace = 0.0, 1, 0, 0, 0
        else:
            self._mirror = adwin._reserve(n, self._mirror)
            tot, var, cnt, fs, ints = adwin._tot, adwin._var, adwin._cnt, adwin._fs, adwin._ints
            delta, clock, max_buckets = adwin.delta, adwin.clock, adwin.max_buckets
            mwl, grace = adwin.min_window_length, adwin.grace_period
        run = detectors._kernels().window_run
        done = 0
        while True:
            if adwin is None:
                mir, pk, pv, pool = _NO_MIRROR, _NO_INTS, _NO_INTS, _NO_INTS
            else:
                mir, pk, pv, pool = self._mirror, self._pool_keys, self._pool_vals, self._pool
            done = run(t, p, prev, majs, self._classes, self._agg, self._keys, self._vals,
                       self._used, self._majority_a, adwin is not None, tot, var, cnt, fs, ints,
                       delta, clock, max_buckets, mwl, grace, mir, pk, pv, pool, sizes, drifts,
                       after, done)
            if done == n:
                break
            self._make_room()
        if adwin is None:
            return sizes, None
        self.drift = bool(drifts[-1])
        return sizes, drifts


class SlidingWindow(CumulativeWindow):
    """The last ``size`` scored examples.

    The examples it holds sit in a ring, each ``(t, p, maj_ok, per_ok)`` packed in one integer
    (grown as it fills, up to ``size``); the oldest leaves before a new one comes in once it is full, and the
    majority baseline is then recounted over the classes. One compiled loop per segment
    (:func:`~foldstream.operators.stats.kernels.sliding_run`).

    >>> w = SlidingWindow(2)
    >>> for t, p, prev in [(0, 0, -1), (1, 0, 0), (1, 1, 1)]:
    ...     w.update(t, p, prev)
    >>> c = w.counts(); (c.n, c.cm, w.majority())
    (2.0, {(1, 0): 1.0, (1, 1): 1.0}, 1)
    """

    kind = "sliding"
    _FIRST_RING = 64  # rows of the ring at first; it doubles, up to the window's size

    def __init__(self, size: int):
        super().__init__()
        self.width = check_size(size)
        self._ring = np.zeros(min(self.width, self._FIRST_RING), dtype=np.int64)
        self._ring_state = np.zeros(2, dtype=np.int64)  # the oldest row, the number of rows

    def __setstate__(self, state: dict) -> None:
        if "_buffer" in state:  # pickled before the counts were arrays: read it into them
            state = _sliding_from_dicts(state)
        super().__setstate__(state)

    def _run(self, t: np.ndarray, p: np.ndarray, prev: np.ndarray, majs: np.ndarray,
             after: np.ndarray) -> tuple[np.ndarray, None]:
        n = len(t)
        count = int(self._ring_state[1])
        cap = self._ring.shape[0]
        need = min(self.width, count + n)
        if need > cap:  # not full yet, so its rows run from 0: grow it at the end
            grown = np.zeros(min(self.width, max(need, 2 * cap)), dtype=np.int64)
            grown[:count] = self._ring[:count]
            self._ring = grown
        sizes = np.zeros(n, dtype=np.int64)
        done = 0
        while done < n:
            done = detectors._kernels().sliding_run(
                t, p, prev, majs, self._classes, self._agg, self._keys, self._vals, self._used,
                self._majority_a, self._ring, self._ring_state, self.width, sizes, after, done)
            if done < n:
                self._make_room()
        return sizes, None


def _sliding_from_dicts(state: dict) -> dict:
    """A :class:`SlidingWindow`'s pickled state of the dict-and-deque layout, in arrays."""
    window = SlidingWindow(state["width"])
    buffer = list(state["_buffer"])
    if buffer:
        window._grow(max(max(t, p) for t, p, _, _ in buffer) + 1)
        window._ring = np.zeros(max(len(buffer), window._ring.shape[0]), dtype=np.int64)
        pack = detectors._kernels()._pack
        window._ring[:len(buffer)] = [pack(*example) for example in buffer]
    window._ring_state[:] = (0, len(buffer))
    window._load_cells([(t, p, c) for (t, p), c in state["_cm"].items()])
    agg = window._agg
    for t, c in state["_rows"].items():
        agg[3 + t] = c
    agg[:3] = (state["_n"], state["_maj"], state["_per"])
    window._majority_a[0] = state["_majority"]
    return dict(window.__dict__)


class FadingWindow(Window):
    """Every count is multiplied by ``alpha`` before each new example is added (Gama et al.).

    Fading is applied lazily: counts are stored divided by a running scale ``alpha**t`` and
    multiplied back when read, so an update costs O(1) rather than one multiply per count; when
    the scale falls below ``1e-150`` the stored counts take it and it starts again from 1. One
    compiled loop per segment (:func:`~foldstream.operators.stats.kernels.fading_run`) does every
    float operation of the example-by-example update in the same order, so every count is the
    same float; the counts read out in the order the example-by-example dicts filled, which
    decides the order of the measures' float sums.

    >>> w = FadingWindow(0.5)
    >>> for t, p, prev in [(0, 0, -1), (1, 0, 0), (1, 1, 1)]:
    ...     w.update(t, p, prev)
    >>> c = w.counts(); (c.n, c.cm, c.per)
    (1.75, {(0, 0): 0.25, (1, 0): 0.5, (1, 1): 1.0}, 1.0)
    """

    kind = "fading"
    _RESCALE_BELOW = 1e-150
    _keep_zero_cells = True  # a faded cell stays, in its place of the order, even at 0.0

    def __init__(self, alpha: float):
        super().__init__(np.float64)
        self.alpha = check_alpha(alpha)
        self._scale_a = np.ones(1)  # stored value * scale = faded value
        self._order = np.zeros(detectors.stats_size(0), dtype=np.int64)
        self._cell_order = np.zeros(self._keys.shape[0], dtype=np.int64)

    def __setstate__(self, state: dict) -> None:
        if "_scale" in state:  # pickled before the counts were arrays: read it into them
            state = _fading_from_dicts(state)
        super().__setstate__(state)

    @property
    def size(self) -> float:
        return float(self._agg[0] * self._scale_a[0])

    def _grow(self, classes: int) -> None:
        self._order = detectors.relayout(self._order, self._classes, classes)
        super()._grow(classes)

    def _make_room(self) -> None:
        self._keys, self._vals, self._cell_order = detectors.rehashed(
            self._keys, self._vals, self._cell_order, keep_zero=True)
        self._used[0] = int(np.count_nonzero(self._keys != detectors.EMPTY))

    def _run(self, t: np.ndarray, p: np.ndarray, prev: np.ndarray, majs: np.ndarray,
             after: np.ndarray) -> tuple[np.ndarray, None]:
        n = len(t)
        sizes = np.zeros(n)
        done = 0
        while done < n:
            done = detectors._kernels().fading_run(
                t, p, prev, majs, self._classes, self._agg, self._order, self._keys,
                self._vals, self._cell_order, self._used, self._majority_a, self._scale_a,
                self.alpha, self._RESCALE_BELOW, sizes, after, done)
            if done < n:
                self._make_room()
        return sizes, None

    def counts(self) -> Counts:
        s = float(self._scale_a[0])
        agg, order, classes = self._agg.tolist(), self._order.tolist(), self._classes
        at, keys = self._held_cells()
        by_order = np.argsort(self._cell_order[at], kind="stable")  # as first touched
        cm = {detectors.cell_of(k): v * s
              for k, v in zip(keys[by_order].tolist(), self._vals[at[by_order]].tolist())}
        rows = sorted((order[3 + c], c) for c in range(classes) if order[3 + c])
        return Counts(agg[0] * s, cm, {c: agg[3 + c] * s for _, c in rows}, agg[1] * s,
                      agg[2] * s)

    def _from_matrix(self, state: dict) -> dict:
        classes, dense, order = state["_classes"], state["_agg"], state["_order"]
        cells = np.flatnonzero(order[detectors.stats_size(classes):])
        state = dict(state)
        state["_agg"] = dense[:detectors.stats_size(classes)].copy()
        state["_order"] = order[:detectors.stats_size(classes)].copy()
        at = detectors.stats_size(classes) + cells
        state["_keys"], state["_vals"] = detectors.cell_table(
            detectors.table_capacity(len(cells)), np.float64)
        state["_cell_order"] = np.zeros(state["_keys"].shape[0], dtype=np.int64)
        detectors._kernels().cells_load(state["_keys"], state["_vals"],
                                        _matrix_keys(classes, cells), dense[at],
                                        state["_cell_order"], order[at])
        state["_used"] = np.array([len(cells)], dtype=np.int64)
        return state


def _fading_from_dicts(state: dict) -> dict:
    """A :class:`FadingWindow`'s pickled state of the dict layout, in arrays (the dicts' order
    kept as the order their cells were first touched)."""
    window = FadingWindow(state["alpha"])
    cm, rows = state["_cm"], state["_rows"]
    if cm:
        window._grow(max(max(t, p) for t, p in cm) + 1)
    window._load_cells([(t, p, v) for (t, p), v in cm.items()], list(range(1, len(cm) + 1)))
    agg, order = window._agg, window._order
    for i, (t, v) in enumerate(rows.items(), start=len(cm) + 1):
        agg[3 + t], order[3 + t] = v, i
    order[0] = len(cm) + len(rows)
    agg[:3] = (state["_n"], state["_maj"], state["_per"])
    window._scale_a[0] = state["_scale"]
    window._majority_a[0] = state["_majority"]
    return dict(window.__dict__)


class AdwinWindow(CumulativeWindow):
    """ADWIN's current window over the 0/1 loss, in O(log W) memory.

    ADWIN (:class:`~foldstream.operators.stats.detectors.Adwin`, river's algorithm) decides the
    window. Its exponential histogram is mirrored bucket for bucket (same sizes, same merges,
    ``max_buckets`` per level), each bucket holding the confusion counts of its examples, so
    that when ADWIN drops its oldest buckets the same examples leave these counts; both run in
    one compiled loop (:func:`~foldstream.operators.stats.kernels.window_run`). river's ADWIN also
    restarts from an empty window on the update after it detects a change; the mirror restarts
    with it.

    >>> w = AdwinWindow(delta=0.002)
    >>> for i in range(2000):
    ...     w.update(0, 0 if i < 1000 else 1, 0)
    >>> w.size < 1000, w.size == w.adwin.width
    (True, True)
    """

    kind = "adwin"

    def __init__(self, delta: float = ADWIN_DELTA, max_buckets: int = 5, clock: int = 32):
        super().__init__()
        self.delta = check_delta(delta)
        self._adwin = Adwin(delta=self.delta, clock=clock, max_buckets=max_buckets)
        self._mirror = np.zeros(self._adwin._tot.shape + (detectors.MIRROR_FIELDS,),
                                dtype=np.int64)
        self._pool_keys = np.zeros(64, dtype=np.int64)  # the buckets' runs of cells
        self._pool_vals = np.zeros(64, dtype=np.int64)
        self._pool = np.zeros(2, dtype=np.int64)  # the pool's top, and its live entries

    @property
    def adwin(self) -> Adwin:
        """The window's ADWIN (its width is the window's size)."""
        return self._adwin

    def _make_room(self) -> None:
        super()._make_room()
        adwin = self._adwin
        runs = 1 if adwin.max_buckets >= 2 else self._mirror.shape[0] + 1
        self._pool_keys, self._pool_vals = detectors.compacted(
            self._mirror, adwin._cnt, self._pool_keys, self._pool_vals, self._pool,
            runs * (int(self._pool[1]) + 1))

    def _from_matrix(self, state: dict) -> dict:
        classes, mirror = state["_classes"], state["_mirror"]
        state = super()._from_matrix(state)
        first = detectors.stats_size(classes)
        levels, places = mirror.shape[:2]
        new = np.zeros((levels, places, detectors.MIRROR_FIELDS), dtype=np.int64)
        keys, vals = [], []
        for level in range(levels):
            for b in range(int(state["_adwin"]._cnt[level])):
                stats = mirror[level, b]
                cells = np.flatnonzero(stats[first:])  # in key order
                new[level, b] = (len(keys), len(cells), stats[1], stats[2])
                keys += _matrix_keys(classes, cells).tolist()
                vals += stats[first + cells].tolist()
        state["_mirror"] = new
        size = max(64, 1 << (2 * (len(keys) + 1)).bit_length())
        state["_pool_keys"] = np.zeros(size, dtype=np.int64)
        state["_pool_vals"] = np.zeros(size, dtype=np.int64)
        state["_pool_keys"][:len(keys)], state["_pool_vals"][:len(vals)] = keys, vals
        state["_pool"] = np.array([len(keys), len(keys)], dtype=np.int64)
        return state

    @property
    def buckets(self) -> int:
        """How many summaries the window holds: O(log W)."""
        return int(self._adwin._cnt.sum())


# ------------------------------------------------------------------------------------ the spec
def check_size(size: Any) -> int:
    """A sliding window's ``size``: an integer >= 1 (:class:`ValueError` otherwise)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"a sliding window's size must be an integer >= 1, got {size!r}")
    return size


def check_alpha(alpha: Any) -> float:
    """A fading factor: a number in (0, 1] (:class:`ValueError` otherwise)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < alpha <= 1.0:
        raise ValueError(f"a fading factor must be a number in (0, 1], got {alpha!r}")
    return float(alpha)


def check_delta(delta: Any) -> float:
    """An ADWIN confidence: a number in (0, 1) (:class:`ValueError` otherwise)."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0.0 < delta < 1.0:
        raise ValueError(f"an ADWIN delta must be a number in (0, 1), got {delta!r}")
    return float(delta)


#: The check of each window parameter, by name.
PARAMETER_CHECKS = {"size": check_size, "alpha": check_alpha, "delta": check_delta}


@dataclass(frozen=True, slots=True)
class WindowSpec:
    """Which window an evaluator keeps (docs/method.md §4): its kind and its one parameter.

    The parameter of the kind defaults to :data:`SLIDING_SIZE`, :data:`FADING_ALPHA` or
    :data:`ADWIN_DELTA`; a parameter out of range, or one the kind does not take, is a
    :class:`ValueError`. Frozen, so that plans holding it pickle and hash.

    Examples
    --------
    >>> WindowSpec()
    WindowSpec(kind='adwin', size=None, alpha=None, delta=0.002)
    >>> WindowSpec("sliding", size=500).items()
    (('kind', 'sliding'), ('size', 500))
    >>> WindowSpec("fading").make().alpha
    0.999
    >>> WindowSpec("sliding", size=0)
    Traceback (most recent call last):
    ...
    ValueError: a sliding window's size must be an integer >= 1, got 0
    """

    kind: str = "adwin"
    size: int | None = None
    alpha: float | None = None
    delta: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in WINDOW_KINDS:
            raise ValueError(f"unknown window kind {self.kind!r}; "
                             f"expected one of {', '.join(WINDOW_KINDS)}")
        wanted = WINDOW_KINDS[self.kind]
        for name, check in PARAMETER_CHECKS.items():
            value = getattr(self, name)
            if value is None:
                continue
            if name != wanted:
                raise ValueError(f"{name} does not apply to a window of kind {self.kind}")
            object.__setattr__(self, name, check(value))
        if wanted is not None and getattr(self, wanted) is None:
            object.__setattr__(self, wanted, _DEFAULTS[wanted])

    @property
    def parameter(self) -> int | float | None:
        """The value of the kind's parameter (``None`` for a cumulative window)."""
        wanted = WINDOW_KINDS[self.kind]
        return None if wanted is None else getattr(self, wanted)

    def items(self) -> tuple[tuple[str, Any], ...]:
        """``(("kind", kind), (parameter, value))``: the ``window`` of the output records."""
        wanted = WINDOW_KINDS[self.kind]
        return (("kind", self.kind),) + (() if wanted is None else ((wanted, self.parameter),))

    def make(self) -> Window:
        """A fresh, empty window of this spec."""
        if self.kind == "sliding":
            return SlidingWindow(self.size)
        if self.kind == "fading":
            return FadingWindow(self.alpha)
        if self.kind == "adwin":
            return AdwinWindow(self.delta)
        return CumulativeWindow()


def make_window(kind: str, *, size: int | None = None, alpha: float | None = None,
                delta: float | None = None) -> Window:
    """A fresh window of the configured kind (docs/method.md §4): ``WindowSpec(...).make()``.

    >>> make_window("sliding", size=3).width, make_window("sliding").width
    (3, 1000)
    >>> make_window("adwin", delta=1.0)
    Traceback (most recent call last):
    ...
    ValueError: an ADWIN delta must be a number in (0, 1), got 1.0
    """
    return WindowSpec(kind, size, alpha, delta).make()

"""ADWIN and Page-Hinkley as compiled code, a batch of values per call (docs/method.md §4, §5).

Why: every fold of every learner updates an ADWIN (its window, or its alarm detector) and a
Page-Hinkley test once per scored example. Through river's classes that is a Python call chain
per example per fold, about half of an evaluation's time with a cheap learner. Here the same
algorithms run as ``numba``-compiled loops over a whole batch of values at once.

They are river's (0.23) algorithms reimplemented to make *exactly* the same decisions with the
same floating-point arithmetic in the same order (``river/drift/adwin_c.pyx`` and
``river/drift/page_hinkley.py``), so that the records stay byte for byte what river's classes
gave: ``tests/test_detectors.py`` checks every detection and estimation against river's own
classes on long random and drifting sequences. That includes river's restart: a detector that
detected a change on one update starts afresh from an empty state on the next.

The state is held in small numpy arrays, so a detector pickles (Flink's keyed state) and
restores as any Python object does. The kernels are compiled on first use and cached on disk
(``cache=True``): a process that finds the cache loads them in a fraction of a second.

:class:`Adwin` also serves :class:`~foldstream.operators.stats.windows.AdwinWindow`: the window's
per-bucket confusion counts are merged and dropped in the same loop as ADWIN's own buckets
(:func:`~foldstream.operators.stats.kernels.window_run`), so that the examples that leave ADWIN's window leave the counts.
"""

from __future__ import annotations

import builtins
import importlib
import threading
import types
from typing import NamedTuple

import numpy as np


_LOADED: dict[str, types.ModuleType] = {}
_LOADING = threading.Lock()


def compiled(name: str) -> types.ModuleType:
    """A module of compiled loops (``kernels``: operators/stats/kernels.py; ``draws``:
    operators/stats/draws.py), imported on first use: importing numba takes about half a second,
    which commands that evaluate nothing need not pay.

    PyFlink's Python workers replace ``builtins.print`` by a bound method of their own, which
    numba's import refuses (it looks ``print`` up in the module the function names); the first
    import puts the interpreter's own ``print`` back for its duration. A worker runs bundles in
    several threads: a module is handed out only once its import has finished (a thread that
    found it half-initialised in ``sys.modules`` failed on a missing kernel), under a lock."""
    module = _LOADED.get(name)
    if module is not None:
        return module
    with _LOADING:
        if name not in _LOADED:
            shown = builtins.print
            own = getattr(getattr(shown, "__self__", None), "_print", None)
            swap = not isinstance(shown, types.BuiltinFunctionType) and \
                isinstance(own, types.BuiltinFunctionType)
            if swap:
                builtins.print = own
            try:
                _LOADED[name] = importlib.import_module(f"foldstream.operators.{name}")
            finally:
                if swap:
                    builtins.print = shown
    return _LOADED[name]


def _kernels() -> types.ModuleType:
    """The compiled loops of the detectors and windows (operators/stats/kernels.py)."""
    return compiled("kernels")


# ---------------------------------------------------------------------------------------- ADWIN
# Scalars of an ADWIN, in two small arrays (one float, one integer) so a kernel can update them.
_TOTAL, _VARIANCE, _WIDTH = 0, 1, 2  # float state
_TICK, _DETECTIONS, _LEVELS, _DRIFT = 0, 1, 2, 3  # integer state

ADWIN_CLOCK = 32
"""river's defaults for ADWIN's other parameters (``clock``, ``max_buckets``,
``min_window_length``, ``grace_period``)."""
ADWIN_MAX_BUCKETS = 5
ADWIN_MIN_WINDOW_LENGTH = 5
ADWIN_GRACE_PERIOD = 10


class Adwin:
    """ADWIN (Bifet & Gavaldà 2007) as river's ``drift.ADWIN`` computes it, compiled.

    ``update`` takes one value, :meth:`update_many` a whole array; ``drift_detected``, ``width``
    and ``estimation`` mean what they mean on river's class.

    >>> adwin = Adwin()
    >>> detected = adwin.update_many(np.r_[np.zeros(1000), np.ones(1000)])
    >>> int(np.flatnonzero(detected)[0]), adwin.width < 1000
    (1023, True)
    """

    def __init__(self, delta: float = 0.002, clock: int = ADWIN_CLOCK,
                 max_buckets: int = ADWIN_MAX_BUCKETS,
                 min_window_length: int = ADWIN_MIN_WINDOW_LENGTH,
                 grace_period: int = ADWIN_GRACE_PERIOD):
        self.delta = float(delta)
        self.clock = int(clock)
        self.max_buckets = int(max_buckets)
        self.min_window_length = int(min_window_length)
        self.grace_period = int(grace_period)
        self._tot = np.zeros((8, self.max_buckets + 1))
        self._var = np.zeros((8, self.max_buckets + 1))
        self._cnt = np.zeros(8, dtype=np.int64)
        self._fs = np.zeros(3)
        self._ints = np.array([0, 0, 1, 0], dtype=np.int64)

    # river's properties
    @property
    def drift_detected(self) -> bool:
        return bool(self._ints[_DRIFT])

    @property
    def width(self) -> float:
        return float(self._fs[_WIDTH])

    @property
    def total(self) -> float:
        return float(self._fs[_TOTAL])

    @property
    def variance(self) -> float:
        return float(self._fs[_VARIANCE])

    @property
    def n_detections(self) -> int:
        return int(self._ints[_DETECTIONS])

    @property
    def estimation(self) -> float:
        width = self.width
        return 0.0 if width == 0 else self.total / width

    def _reserve(self, more: int, mirror: np.ndarray | None = None) -> np.ndarray | None:
        """Enough rows of buckets for ``more`` values (a width W needs about log2(W) rows)."""
        need = (int(self._fs[_WIDTH]) + more).bit_length() + 2
        rows = self._cnt.shape[0]
        if need <= rows:
            return mirror
        grow = need - rows
        self._tot = np.concatenate([self._tot, np.zeros((grow, self._tot.shape[1]))])
        self._var = np.concatenate([self._var, np.zeros((grow, self._var.shape[1]))])
        self._cnt = np.concatenate([self._cnt, np.zeros(grow, dtype=np.int64)])
        if mirror is not None:
            mirror = np.concatenate([mirror, np.zeros((grow,) + mirror.shape[1:], np.int64)])
        return mirror

    def update(self, x: float) -> None:
        """One value (river's ``update``)."""
        self.update_many(np.array([x], dtype=np.float64))

    def update_many(self, values: np.ndarray) -> np.ndarray:
        """Each value in turn; whether a change was detected right after each (booleans)."""
        values = np.asarray(values, dtype=np.float64)
        n = values.shape[0]
        detected = np.zeros(n, dtype=np.bool_)
        if n:
            self._reserve(n)
            _kernels().adwin_run(values, self._tot, self._var, self._cnt, self._fs, self._ints,
                       self.delta, self.clock, self.max_buckets, self.min_window_length,
                       self.grace_period, detected, np.empty(n))
        return detected


# -------------------------------------------------------------------------------- Page-Hinkley
_N, _MEAN, _SUM_INC, _SUM_DEC, _MIN_INC, _MAX_DEC, _PH_DRIFT = range(7)
_MODES = {"up": 0, "down": 1, "both": 2}


class PageHinkleyParams(NamedTuple):
    """Page-Hinkley's parameters (river's names), with their defaults: ``mode`` ``"up"``
    alarms on a rising value only, what a rising loss is (Gama et al. 2009 detect increases of
    the error rate; docs/method.md §7); river's own default is ``"both"``."""

    min_instances: int = 30
    delta: float = 0.005
    threshold: float = 50.0
    alpha: float = 1 - 0.0001
    mode: str = "up"
    series: str = "value"


SERIES = ("value", "error_rate")
"""What Page-Hinkley tests: each value given (river's test), or the running mean of them, the
error rate when the values are 0/1 losses (Gama et al. 2009, §5; docs/method.md §7)."""

PAGE_HINKLEY = PageHinkleyParams()
"""The defaults of :class:`PageHinkley` and of ``evaluation.alarms.page_hinkley``."""


class PageHinkley:
    """The Page-Hinkley test as river's ``drift.PageHinkley`` computes it, compiled (the
    defaults are :data:`PAGE_HINKLEY`).

    >>> ph = PageHinkley()
    >>> detected = ph.update_many(np.r_[np.zeros(500), np.ones(500)])
    >>> int(np.flatnonzero(detected)[0])
    553

    ``series="error_rate"`` is Gama et al.'s (2009, §5) use: the test watches the error rate,
    the running mean of every value given (0/1 losses), rather than each value:

    >>> rng = np.random.default_rng(1)
    >>> losses = np.r_[rng.random(5000) < 0.1, rng.random(5000) < 0.3].astype(float)
    >>> def delay(alpha):  # examples from the change to the first alarm after it
    ...     alarms = np.flatnonzero(PageHinkley(delta=0.001, threshold=2.5, alpha=alpha,
    ...                                         series="error_rate").update_many(losses))
    ...     return int(alarms[alarms >= 5000][0]) - 5000
    >>> delay(1 - 1e-4), delay(1.0)
    (442, 446)
    """

    def __init__(self, min_instances: int = PAGE_HINKLEY.min_instances,
                 delta: float = PAGE_HINKLEY.delta, threshold: float = PAGE_HINKLEY.threshold,
                 alpha: float = PAGE_HINKLEY.alpha, mode: str = PAGE_HINKLEY.mode,
                 series: str = PAGE_HINKLEY.series):
        if mode not in _MODES:
            raise ValueError(f"Invalid 'mode'. Valid values are: {tuple(_MODES)}")
        if series not in SERIES:
            raise ValueError(f"Invalid 'series'. Valid values are: {SERIES}")
        self.min_instances = min_instances
        self.delta = float(delta)
        self.threshold = float(threshold)
        self.alpha = float(alpha)
        self.mode = mode
        self.series = series
        self._s = np.array([0.0, 0.0, 0.0, 0.0, np.inf, -1.0, 0.0])
        self._rate = np.zeros(2)  # error_rate: the sum and count of the values given

    def __setstate__(self, state: dict) -> None:
        """A detector pickled before it had a series watches the values themselves."""
        state.setdefault("series", "value")
        state.setdefault("_rate", np.zeros(2))
        self.__dict__.update(state)

    @property
    def drift_detected(self) -> bool:
        return bool(self._s[_PH_DRIFT])

    @property
    def estimation(self) -> float:
        return float(self._s[_MEAN])

    def update(self, x: float) -> None:
        """One value (river's ``update``)."""
        self.update_many(np.array([x], dtype=np.float64))

    def update_many(self, values: np.ndarray) -> np.ndarray:
        """Each value in turn; whether a change was detected right after each (booleans)."""
        values = np.asarray(values, dtype=np.float64)
        if self.series == "error_rate":
            return self._update_rates(values)
        return self._run(values)

    def _run(self, values: np.ndarray) -> np.ndarray:
        detected = np.zeros(values.shape[0], dtype=np.bool_)
        if values.shape[0]:
            _kernels().page_hinkley_run(values, self._s, float(self.min_instances), self.delta,
                              self.threshold, self.alpha, _MODES[self.mode], detected)
        return detected

    def _update_rates(self, values: np.ndarray) -> np.ndarray:
        """The test on the running error rate: the mean of every value given so far (an alarm
        restarts the test, not the learner's error rate)."""
        total, count = self._rate.tolist()
        rates = (total + np.cumsum(values)) / (count + np.arange(1, values.shape[0] + 1))
        self._rate[:] = (total + values.sum(), count + values.shape[0])
        return self._run(rates)


# ------------------------------------------------------------------- the windows' count layout
# A window's counts, in memory that grows with the classes and the confusion cells seen:
#
# * ``agg``, one flat array ``[n, maj, per, rows (C)]``, C the class capacity (the classes seen);
# * the confusion cells, an open-addressing hash table: ``keys`` (:data:`EMPTY` where no cell
#   is) and ``vals`` of the same length, a power of two at most half full, the key of cell
#   ``(t, p)`` :func:`cell_key` (``p`` -1: no prediction). Only cells an example fell in are
#   held, so a window holds at most as many as it has examples, whatever the classes;
# * an ADWIN window's bucket mirror (:class:`~foldstream.operators.stats.windows.AdwinWindow`): per
#   bucket ``[start, length, maj, per]`` of its own cells, a run of ``(key, count)`` sorted by
#   key in a pool of two arrays (freed runs are reclaimed by :func:`compacted`).
_N_SLOT, _MAJ_SLOT, _PER_SLOT, _ROWS = 0, 1, 2, 3
_START, _LENGTH, _BMAJ, _BPER = 0, 1, 2, 3  # a mirrored bucket's fields
MIRROR_FIELDS = 4
EMPTY = -1
"""The key of an empty place of a hash table of cells."""
NO_MAJORITY = -2
"""In ``majs``: the window's majority now, not one given (a delayed label's)."""
_FIRST_CELLS = 16  # places of a fresh table of cells


def relayout(counts: np.ndarray, old: int, new: int) -> np.ndarray:
    """Counts laid out for ``old`` classes (last axis), laid out for ``new`` classes.

    >>> a = np.arange(3 + 2)  # n, maj, per; rows (2 classes)
    >>> relayout(a, 2, 3).tolist()
    [0, 1, 2, 3, 4, 0]
    """
    out = np.zeros(counts.shape[:-1] + (stats_size(new),), dtype=counts.dtype)
    out[..., :_ROWS + old] = counts[..., :_ROWS + old]
    return out


def stats_size(classes: int) -> int:
    """The length of a window's ``agg`` array for ``classes`` classes: linear in them."""
    return _ROWS + classes


def cell_key(t: int, p: int) -> int:
    """The key of confusion cell ``(t, p)`` (``p`` -1: no prediction); keys sort as the cells
    do, by true then predicted class.

    >>> cell_key(0, -1), cell_key(1, 1), cell_of(cell_key(1, 1))
    (0, 4294967298, (1, 1))
    """
    return (t << 32) | (p + 1)


def cell_of(key: int) -> tuple[int, int]:
    """The cell ``(t, p)`` of a key (:func:`cell_key`)."""
    return key >> 32, (key & 0xFFFFFFFF) - 1


def cell_table(capacity: int = _FIRST_CELLS, dtype: type = np.int64
               ) -> tuple[np.ndarray, np.ndarray]:
    """An empty hash table of cells: ``(keys, vals)``."""
    return np.full(capacity, EMPTY, dtype=np.int64), np.zeros(capacity, dtype=dtype)


def table_capacity(cells: int) -> int:
    """The places of a table that holds ``cells`` cells with room to grow by as many again: a
    power of two, at most a quarter full.

    >>> table_capacity(0), table_capacity(5), table_capacity(100)
    (16, 32, 512)
    """
    return max(_FIRST_CELLS, 1 << (4 * cells + 3).bit_length())


def rehashed(keys: np.ndarray, vals: np.ndarray, order: np.ndarray | None = None,
             keep_zero: bool = False, extra: int = 0) -> tuple:
    """A table of cells rebuilt with room for ``extra`` cells more: its cells of value 0 left out
    (an integer window's cells its examples all left), unless ``keep_zero`` (a fading window's,
    whose order is part of what it reports). ``order``: a value per cell carried along.

    Returns ``(keys, vals)``, or ``(keys, vals, order)`` with an ``order``."""
    held = keys != EMPTY
    if not keep_zero:
        held &= vals != 0
    at = np.flatnonzero(held)
    new_keys, new_vals = cell_table(table_capacity(len(at) + extra), vals.dtype)
    new_order = None if order is None else np.zeros(new_keys.shape[0], dtype=np.int64)
    _kernels().cells_load(new_keys, new_vals, keys[at], vals[at],
                          np.zeros(0, np.int64) if order is None else new_order,
                          np.zeros(0, np.int64) if order is None else order[at])
    return (new_keys, new_vals) if order is None else (new_keys, new_vals, new_order)


def compacted(mirror: np.ndarray, buckets: np.ndarray, pool_keys: np.ndarray,
              pool_vals: np.ndarray, pool: np.ndarray, need: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """A bucket mirror's pool with its live runs only (the runs of merged and dropped buckets
    reclaimed) and room for ``need`` entries more; ``mirror``'s starts and ``pool`` (``[top,
    live]``) updated. ``buckets[level]``: the buckets of each level (ADWIN's ``_cnt``)."""
    size = max(64, 1 << (int(pool[1]) + need - 1).bit_length())
    new_keys = np.zeros(size, dtype=np.int64)
    new_vals = np.zeros(size, dtype=np.int64)
    _kernels().pool_compact(mirror, buckets, pool_keys, pool_vals, new_keys, new_vals, pool)
    return new_keys, new_vals


def fade(values: np.ndarray, alpha: float, start: float) -> float:
    """``s = v + alpha * s`` for each of ``values`` in turn, from ``start``: a faded sum.

    >>> fade(np.array([1.0, 0.0, 1.0]), 0.5, 0.0)
    1.25
    """
    values = np.asarray(values, dtype=np.float64)
    if not values.shape[0]:
        return start
    return float(_kernels().fade_run(values, float(alpha), float(start)))

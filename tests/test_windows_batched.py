"""The sliding and fading windows, a segment at a time (operators/stats/windows.py, issue 20), against
their example-by-example implementation before it, kept here as the oracle.

The golden file covers ADWIN windows only, so these windows are compared here on long random
streams cut into random segments, with classes that appear late, examples without a prediction,
delayed labels' majorities and, for the fading window, factors small enough that the stored
counts are rescaled again and again: every count, its float, the order the counts read out in
(which decides the order of the measures' float sums), the size, the majority, and the
measures themselves. A window pickled in the old layout reads into the new one and goes on as
the old one would.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections import deque

import numpy as np
import pytest

from foldstream.operators.stats import measures
from foldstream.operators.stats.detectors import NO_MAJORITY
from foldstream.operators.stats.windows import FadingWindow, SlidingWindow


# ------------------------------------------------------- the oracle: the implementation before
class OldWindow:
    def __init__(self) -> None:
        self._cm: dict = {}
        self._rows: dict = {}
        self._maj = 0
        self._per = 0
        self._n = 0
        self._majority = -1
        self.drift = False

    @property
    def size(self):
        return self._n

    def majority(self) -> int:
        return self._majority

    def _add(self, t, p, maj_ok, per_ok) -> None:
        cm, rows = self._cm, self._rows
        cm[t, p] = cm.get((t, p), 0) + 1
        rt = rows[t] = rows.get(t, 0) + 1
        self._maj += maj_ok
        self._per += per_ok
        self._n += 1
        m = self._majority
        if m < 0 or rt > rows[m] or (rt == rows[m] and t < m):
            self._majority = t

    def _remove(self, cm, maj, per, n) -> None:
        own, rows = self._cm, self._rows
        for (t, p), c in cm.items():
            left = own[t, p] - c
            if left:
                own[t, p] = left
            else:
                del own[t, p]
            left = rows[t] - c
            if left:
                rows[t] = left
            else:
                del rows[t]
        self._maj -= maj
        self._per -= per
        self._n -= n
        self._majority = min(rows, key=lambda c: (-rows[c], c)) if rows else -1

    def counts(self) -> measures.Counts:
        return measures.Counts(float(self._n), {k: float(v) for k, v in self._cm.items()},
                               {k: float(v) for k, v in self._rows.items()}, float(self._maj),
                               float(self._per))


class OldSliding(OldWindow):
    def __init__(self, size: int):
        super().__init__()
        self.width = size
        self._buffer: deque = deque()

    def update(self, t, p, prev, maj=None) -> None:
        maj_ok, per_ok = int((self._majority if maj is None else maj) == t), int(prev == t)
        if len(self._buffer) == self.width:
            ot, op, omaj, oper = self._buffer.popleft()
            self._remove({(ot, op): 1}, omaj, oper, 1)
        self._buffer.append((t, p, maj_ok, per_ok))
        self._add(t, p, maj_ok, per_ok)


class OldFading(OldWindow):
    _RESCALE_BELOW = 1e-150

    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha
        self._scale = 1.0
        self._cm = {}

    @property
    def size(self):
        return self._n * self._scale

    def update(self, t, p, prev, maj=None) -> None:
        maj_ok, per_ok = int((self._majority if maj is None else maj) == t), int(prev == t)
        self._scale *= self.alpha
        if self._scale < self._RESCALE_BELOW:
            self._rescale()
        inc = 1.0 / self._scale
        cm, rows = self._cm, self._rows
        cm[t, p] = cm.get((t, p), 0.0) + inc
        rt = rows[t] = rows.get(t, 0.0) + inc
        self._maj += maj_ok * inc
        self._per += per_ok * inc
        self._n += inc
        m = self._majority
        if m < 0 or rt > rows[m] or (rt == rows[m] and t < m):
            self._majority = t

    def _rescale(self) -> None:
        s = self._scale
        self._cm = {k: v * s for k, v in self._cm.items()}
        self._rows = {k: v * s for k, v in self._rows.items()}
        self._maj *= s
        self._per *= s
        self._n *= s
        self._scale = 1.0

    def counts(self) -> measures.Counts:
        s = self._scale
        return measures.Counts(self._n * s, {k: v * s for k, v in self._cm.items()},
                               {k: v * s for k, v in self._rows.items()}, self._maj * s,
                               self._per * s)


# ---------------------------------------------------------------------------------- streams
def stream(rng: np.random.Generator, n: int, classes: int):
    """True classes drifting in their frequencies, a class that appears late, predictions
    right most of the time (-1 now and then), the previous label, and delayed majorities."""
    probs = rng.dirichlet(np.ones(classes), size=4)
    t = np.concatenate([rng.choice(classes, size=n // 4, p=pr) for pr in probs])
    t[: n // 3] %= max(1, classes - 1)  # the last class only from a third of the way on
    p = np.where(rng.random(len(t)) < 0.7, t, rng.integers(-1, classes, size=len(t)))
    prev = np.r_[-1, t[:-1]]
    majs = np.where(rng.random(len(t)) < 0.3, rng.integers(-1, classes, size=len(t)),
                    NO_MAJORITY)
    return t, p, prev, majs


def same(new, old) -> None:
    a, b = new.counts(), old.counts()
    assert a.cm == b.cm and a.rows == b.rows
    if isinstance(new, FadingWindow):  # every float, in the same order (integers add up alike)
        assert list(a.cm.items()) == list(b.cm.items())
        assert list(a.rows.items()) == list(b.rows.items())
    assert (a.n, a.maj, a.per) == (b.n, b.maj, b.per)
    assert new.size == old.size and type(new.size) is type(old.size)
    assert new.majority() == old.majority()
    labels = [f"c{i}" for i in range(max((max(k) for k in a.cm), default=0) + 1)]
    assert json.dumps(measures.compute(a, labels)) == json.dumps(measures.compute(b, labels))
    assert measures.binary_counts(a, 0, 2) == measures.binary_counts(b, 0, 2)


def run_both(rng, new, old, t, p, prev, majs) -> None:
    """The new window a random segment at a time, the old example by example, compared at
    every segment's end; each example's size and majority after it as well."""
    i = 0
    while i < len(t):
        j = min(len(t), i + int(rng.choice([1, 2, 7, 50, 333, 1000])))
        updated = new.update_many(t[i:j], p[i:j], prev[i:j], majs[i:j])
        for k in range(i, j):
            m = majs[k]
            old.update(int(t[k]), int(p[k]), int(prev[k]), None if m == NO_MAJORITY else int(m))
            assert updated.sizes[k - i] == old.size and updated.after[k - i] == old.majority()
        same(new, old)
        i = j


@pytest.mark.parametrize("size, classes, seed", [(1, 2, 0), (3, 3, 1), (100, 2, 2), (1000, 5, 3),
                                                  (5000, 3, 4)])
def test_the_sliding_window_counts_as_before(size, classes, seed):
    rng = np.random.default_rng(seed)
    t, p, prev, majs = stream(rng, 12_000, classes)
    run_both(rng, SlidingWindow(size), OldSliding(size), t, p, prev, majs)


@pytest.mark.parametrize("alpha, classes, seed", [(0.999, 2, 0), (0.99, 4, 1), (0.5, 3, 2),
                                                  (0.001, 2, 3), (1.0, 3, 4)])
def test_the_fading_window_counts_as_before_float_for_float(alpha, classes, seed):
    """0.5 and 0.001 rescale the stored counts every few hundred or every second example."""
    rng = np.random.default_rng(seed)
    t, p, prev, majs = stream(rng, 12_000, classes)
    run_both(rng, FadingWindow(alpha), OldFading(alpha), t, p, prev, majs)


@pytest.mark.parametrize("make_new, make_old", [(lambda: SlidingWindow(50), lambda: OldSliding(50)),
                                                (lambda: FadingWindow(0.9), lambda: OldFading(0.9))])
def test_a_window_pickled_in_the_old_layout_reads_in_and_goes_on_as_before(make_new, make_old):
    rng = np.random.default_rng(9)
    t, p, prev, majs = stream(rng, 6_000, 3)
    old = make_old()
    for k in range(3_000):
        m = majs[k]
        old.update(int(t[k]), int(p[k]), int(prev[k]), None if m == NO_MAJORITY else int(m))
    new = make_new()
    new = pickle.loads(pickle.dumps(new))  # the class's own way in: __setstate__
    new.__setstate__(copy.deepcopy(old.__dict__))  # as unpickling an old checkpoint does
    same(new, old)
    run_both(rng, new, old, t[3_000:], p[3_000:], prev[3_000:], majs[3_000:])


@pytest.mark.parametrize("make", [lambda: SlidingWindow(40), lambda: FadingWindow(0.7)])
def test_the_new_windows_pickle_and_go_on_as_before(make):
    rng = np.random.default_rng(5)
    t, p, prev, majs = stream(rng, 4_000, 3)
    w = make()
    w.update_many(t[:2_000], p[:2_000], prev[:2_000], majs[:2_000])
    v = pickle.loads(pickle.dumps(w))
    for window in (w, v):
        window.update_many(t[2_000:], p[2_000:], prev[2_000:], majs[2_000:])
    assert list(w.counts().cm.items()) == list(v.counts().cm.items())
    assert w.counts() == v.counts() and w.size == v.size and w.majority() == v.majority()


# -------------------------------------------------------- McNemar's counts of a pair's window
class OldPairCounts:
    """``evaluator._PairCounts`` before it was batched: one code at a time, a deque."""

    def __init__(self, kind: str, alpha: float, cap: int):
        self.kind, self.alpha, self.cap = kind, alpha, cap
        self.a = 0.0
        self.b = 0.0
        self._recent = deque() if kind in ("sliding", "adwin") else None

    def update(self, code: int, shared: float) -> None:
        if self.kind == "fading":
            self.a *= self.alpha
            self.b *= self.alpha
        if code == 1:
            self.a += 1
        elif code == 2:
            self.b += 1
        recent = self._recent
        if recent is not None:
            recent.append(code)
            keep = min(shared, self.cap)
            while len(recent) > keep:
                old = recent.popleft()
                if old == 1:
                    self.a -= 1
                elif old == 2:
                    self.b -= 1


@pytest.mark.parametrize("kind, alpha, cap", [("sliding", 1.0, 65_536), ("adwin", 1.0, 300),
                                              ("fading", 0.99, 65_536), ("fading", 0.3, 10),
                                              ("cumulative", 1.0, 65_536)])
def test_the_pair_counts_count_as_before(kind, alpha, cap):
    """Shared windows that grow, hold and collapse (an ADWIN detection), codes in segments;
    an old pickled state reads in halfway and goes on alike."""
    from foldstream.operators.stages.evaluator import _PairCounts

    rng = np.random.default_rng(7)
    n = 20_000
    codes = rng.choice(3, size=n, p=[0.6, 0.25, 0.15])
    shared = np.minimum(np.arange(1, n + 1), 700)
    for at in (3_000, 9_000, 15_000):  # collapses, then growth again
        shared[at:] = np.minimum(np.arange(1, n - at + 1), rng.integers(50, 900))
    new, old = _PairCounts(kind, alpha, cap), OldPairCounts(kind, alpha, cap)
    i = 0
    while i < n:
        j = min(n, i + int(rng.choice([1, 5, 64, 500, 2_000])))
        new.update_many(codes[i:j], shared[i:j])
        for k in range(i, j):
            old.update(int(codes[k]), int(shared[k]))
        assert (new.a, new.b) == (old.a, old.b)
        if i < n // 2 <= j:
            new = _PairCounts.__new__(_PairCounts)
            new.__setstate__(copy.deepcopy(old.__dict__))
            new = pickle.loads(pickle.dumps(new))
        i = j
    assert new._ring.shape[0] <= min(cap + 1, 2 * 901)  # as long as the shared window, at most

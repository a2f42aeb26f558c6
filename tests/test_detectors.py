"""The compiled ADWIN and Page-Hinkley (operators/stats/detectors.py) against river's own classes.

river's classes are the oracle here and only here: every detection position, width, total,
variance and estimation must be equal (not close) on long random and drifting sequences, fed
in batches of random sizes, so that the records stay byte for byte what river's classes gave.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from river.drift import ADWIN, PageHinkley as RiverPageHinkley

from foldstream.operators.stats.detectors import Adwin, PageHinkley
from foldstream.operators.stages.evaluator import EvalPlan, FoldEvaluator, StateFormatError
from foldstream.operators.stats.windows import AdwinWindow, CumulativeWindow


def sequence(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    """0/1 losses (bits), or real values (normal), with abrupt changes of level."""
    levels = np.repeat(rng.uniform(0.02, 0.7, size=8), n // 8 + 1)[:n]
    if kind == "bits":
        return (rng.random(n) < levels).astype(float)
    return rng.normal(levels * 3, rng.uniform(0.1, 1.0))


def in_batches(rng: np.random.Generator, values: np.ndarray, update_many) -> np.ndarray:
    out, i = [], 0
    while i < len(values):
        j = i + int(rng.integers(1, 700))
        out.append(update_many(values[i:j]))
        i = j
    return np.concatenate(out)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["bits", "normal"])
@pytest.mark.parametrize("params", [{}, {"delta": 0.2}, {"delta": 0.002, "clock": 1},
                                    {"delta": 0.01, "max_buckets": 2, "grace_period": 40,
                                     "min_window_length": 9}])
def test_adwin_equals_river(seed, kind, params):
    rng = np.random.default_rng(seed)
    values = sequence(rng, 30_000 if params.get("clock") != 1 else 8_000, kind)
    ours, river = Adwin(**params), ADWIN(**params)
    detected = in_batches(rng, values, ours.update_many)
    expected, widths, estimations = [], [], []
    for v in values:
        river.update(v)
        expected.append(river.drift_detected)
    assert np.flatnonzero(detected).tolist() == np.flatnonzero(expected).tolist()
    assert len(np.flatnonzero(expected)) >= 1
    assert (ours.width, ours.total, ours.variance, ours.estimation) == \
        (river.width, river.total, river.variance, river.estimation)


def test_adwin_estimation_and_width_after_every_update():
    rng = np.random.default_rng(11)
    values = sequence(rng, 6_000, "bits")
    ours, river = Adwin(delta=0.05), ADWIN(delta=0.05)
    for v in values:
        ours.update(v)
        river.update(v)
        assert (ours.drift_detected, ours.width, ours.estimation) == \
            (river.drift_detected, river.width, river.estimation)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("params", [{"mode": "up"}, {"mode": "down", "threshold": 5.0},
                                    {"mode": "both", "min_instances": 5, "delta": 0.0,
                                     "threshold": 3.0, "alpha": 0.99}])
def test_page_hinkley_equals_river(seed, params):
    rng = np.random.default_rng(seed)
    values = sequence(rng, 40_000, "bits" if seed % 2 else "normal")
    ours, river = PageHinkley(**params), RiverPageHinkley(**params)
    detected = in_batches(rng, values, ours.update_many)
    expected = []
    for v in values:
        river.update(v)
        expected.append(river.drift_detected)
    assert np.flatnonzero(detected).tolist() == np.flatnonzero(expected).tolist()
    assert len(np.flatnonzero(expected)) >= 1
    assert ours.estimation == river._x_mean.get()


def test_detectors_and_windows_pickle_and_go_on_as_before():
    rng = np.random.default_rng(3)
    values = sequence(rng, 5_000, "bits")
    t = rng.integers(0, 3, size=5_000)
    p = np.where(values > 0, (t + 1) % 3, t)
    for make in (Adwin, PageHinkley):
        a = make()
        a.update_many(values[:2_500])
        b = pickle.loads(pickle.dumps(a))
        assert a.update_many(values[2_500:]).tolist() == b.update_many(values[2_500:]).tolist()
    for make in (CumulativeWindow, AdwinWindow):
        w = make()
        w.update_many(t[:2_500], p[:2_500], t[:2_500])
        v = pickle.loads(pickle.dumps(w))
        for window in (w, v):
            window.update_many(t[2_500:], p[2_500:], t[2_500:])
        assert w.counts() == v.counts() and w.size == v.size and w.majority() == v.majority()


def test_a_fold_evaluator_of_an_older_state_format_is_refused():
    evaluator = FoldEvaluator("s", 3, EvalPlan(("a",)))
    assert pickle.loads(pickle.dumps(evaluator)).fold == 3
    del evaluator.__dict__["_state_format"]  # as a checkpoint written before format 2
    with pytest.raises(StateFormatError, match="stream 's', fold 3 in state format 1"):
        pickle.loads(pickle.dumps(evaluator))

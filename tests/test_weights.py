"""Fold weights: distributions per mode, purity, and independence from batching (docs/method.md §2)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from foldstream.operators.stages.fanout import Batcher, FanOut, FanOutPlan
from foldstream.operators.records.base import Example
from foldstream.operators.stats.weights import fold_weights

KEYS = list(range(1, 20_001))


def test_bootstrap_weights_are_poisson_one():
    w = fold_weights("bootstrap", 10, seed=1, stream="s", keys=KEYS)
    assert w.shape == (20_000, 10) and w.min() >= 0
    observed = np.bincount(w.ravel(), minlength=6)[:6]
    expected = stats.poisson(1).pmf(np.arange(6)) * w.size
    # chi-square goodness of fit on 0..5 (the tail is tiny): a fair generator passes easily
    chi2 = ((observed - expected) ** 2 / expected).sum()
    assert chi2 < stats.chi2(5).ppf(0.999), (observed, expected)
    # folds are independent of each other
    corr = np.corrcoef(w.T)
    assert np.abs(corr[np.triu_indices(10, 1)]).max() < 0.05


@pytest.mark.parametrize("mode,row_sum", [("cv", 9), ("split", 1)])
def test_cv_and_split_pick_one_fold_uniformly(mode, row_sum):
    w = fold_weights(mode, 10, seed=3, stream="s", keys=KEYS)
    assert set(np.unique(w)) == {0, 1} and (w.sum(axis=1) == row_sum).all()
    held = w.argmin(axis=1) if mode == "cv" else w.argmax(axis=1)
    counts = np.bincount(held, minlength=10)
    assert stats.chisquare(counts).pvalue > 0.001


def test_round_robin_follows_the_position_like_moa():
    positions = np.arange(1, 13)
    w = fold_weights("cv", 4, 1, "s", list(positions), positions, "round_robin")
    assert (w.argmin(axis=1) == (positions - 1) % 4).all()


def test_weights_are_a_pure_function_of_seed_stream_key_fold():
    a = fold_weights("bootstrap", 5, 7, "elec", KEYS[:1000])
    # any subset, order or batching of the keys draws the same rows
    shuffled = np.random.default_rng(0).permutation(1000)
    b = fold_weights("bootstrap", 5, 7, "elec", [KEYS[i] for i in shuffled])
    assert (b == a[shuffled]).all()
    assert (fold_weights("bootstrap", 5, 7, "elec", KEYS[500:1000]) == a[500:]).all()
    # the first folds do not change when k grows
    assert (fold_weights("bootstrap", 8, 7, "elec", KEYS[:1000])[:, :5] == a).all()
    # a different seed or stream draws differently; string keys work too
    assert (fold_weights("bootstrap", 5, 8, "elec", KEYS[:1000]) != a).any()
    assert (fold_weights("bootstrap", 5, 7, "other", KEYS[:1000]) != a).any()
    s = fold_weights("bootstrap", 5, 7, "elec", ["id-1", "id-2"])
    assert (s == fold_weights("bootstrap", 5, 7, "elec", ["id-1", "id-2"])).all()


def fan_out(batch_size: int, labels: list[str]) -> list[tuple]:
    batcher = Batcher("s", batch_size)
    fan = FanOut("s", FanOutPlan(mode="bootstrap", folds=3, seed=5, lags=2))
    rows = []
    batches = [b for y in labels for b in batcher.add(Example("s", {}, y))]
    for batch in batches + batcher.flush(final=True):
        for fb in fan.process(batch):
            for i in range(len(fb)):
                rows.append((fb.fold, fb.start + i + 1, fb.weights[i], fb.y[i], fb.prev_y[i], fb.lags[i]))
    return sorted(rows)


def test_fan_out_is_independent_of_batch_size():
    labels = list("abacbbcaab" * 7)
    reference = fan_out(500, labels)
    assert len(reference) == 3 * 70
    for size in (1, 7, 64):
        assert fan_out(size, labels) == reference
    # codes in order of first appearance; previous labels for the persistent baseline and lags
    first = [r for r in reference if r[0] == 0][:4]
    assert [r[3] for r in first] == [0, 1, 0, 2] and [r[4] for r in first] == [-1, 0, 1, 0]
    assert first[3][5] == ("a", "b")

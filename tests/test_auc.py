"""Prequential AUC (operators/stats/auc.py) against the definition, counted pair by pair."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from foldstream.operators.stats.auc import OneVsRest, WindowAuc


def brute_force(scores, positive) -> float | None:
    """The AUC of scored examples by counting every (positive, negative) pair, ties one half:
    O(n^2), the definition."""
    pos = [s for s, p in zip(scores, positive) if p]
    neg = [s for s, p in zip(scores, positive) if not p]
    if not pos or not neg:
        return None
    u2 = sum(2 if a > b else 1 if a == b else 0 for a in pos for b in neg)
    return (u2 / 2.0) / (len(pos) * len(neg))


def _stream(seed: int, n: int, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores on a coarse grid (many ties), labels loosely related to them."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, n) / (levels - 1)
    positive = rng.random(n) < 0.2 + 0.6 * scores
    return scores, positive


@pytest.mark.parametrize("seed,w,levels", [(0, 1, 3), (1, 7, 3), (2, 25, 5), (3, 50, 11),
                                           (4, 40, 1000)])
def test_sliding_window_equals_the_pairs_at_every_position(seed, w, levels):
    scores, positive = _stream(seed, 400, levels)
    s = OneVsRest(windowed=True)
    for i in range(len(scores)):
        s.add(scores[i:i + 1], positive[i:i + 1], np.array([min(i + 1, w)]))
        lo = max(0, i + 1 - w)
        assert s.value() == brute_force(scores[lo:i + 1], positive[lo:i + 1]), i
        assert s.count == i + 1 - lo


def test_variable_window_as_adwin_shrinks_it():
    """Sizes that grow and drop at once (ADWIN's cuts): the last size examples each time."""
    scores, positive = _stream(5, 600, 4)
    rng = np.random.default_rng(9)
    sizes, size = [], 0
    for _ in range(600):
        size = size + 1 if rng.random() > 0.02 else max(1, size // 3)
        sizes.append(size)
    sizes = np.array(sizes)
    s = OneVsRest(windowed=True)
    at = 0
    for cut in np.sort(rng.choice(np.arange(1, 600), 40, replace=False)).tolist() + [600]:
        s.add(scores[at:cut], positive[at:cut], sizes[at:cut])
        end = cut - 1
        lo = end + 1 - sizes[end]
        assert s.value() == brute_force(scores[lo:cut], positive[lo:cut]), cut
        at = cut


def test_cumulative_equals_the_pairs_and_keeps_one_node_per_distinct_score():
    scores, positive = _stream(6, 500, 6)
    s = OneVsRest(windowed=False)
    for i in range(0, 500, 37):
        s.add(scores[i:i + 37], positive[i:i + 37], None)
        assert s.value() == brute_force(scores[:i + 37], positive[:i + 37])
    assert s.state[2] <= 6  # nodes ever taken: the distinct scores
    assert s.ring_s.shape[0] == 0


def test_batches_and_pickling_do_not_change_the_value():
    scores, positive = _stream(7, 700, 5)
    sizes = np.minimum(np.arange(1, 701), 100)
    one = OneVsRest(windowed=True)
    one.add(scores, positive, sizes)
    cut = OneVsRest(windowed=True)
    for lo in range(0, 700, 61):
        cut.add(scores[lo:lo + 61], positive[lo:lo + 61], sizes[lo:lo + 61])
        cut = pickle.loads(pickle.dumps(cut))
    assert one.value() == cut.value() == brute_force(scores[600:], positive[600:])


def test_memory_of_a_sliding_window_stays_flat():
    scores, positive = _stream(8, 20_000, 1000)
    s = OneVsRest(windowed=True)
    for lo in range(0, 20_000, 500):
        s.add(scores[lo:lo + 500], positive[lo:lo + 500],
              np.minimum(np.arange(lo + 1, lo + 501), 200))
    assert s.keys.shape[0] <= 2 * (200 + 500 + 1) and s.ring_s.shape[0] <= 2 * 202


def test_one_vs_rest_mean_with_a_class_seen_late():
    """Three classes, the third first seen at example 150: its structure starts with the
    window's earlier examples as negatives of score 0."""
    rng = np.random.default_rng(10)
    n, w = 300, 80
    y = rng.integers(0, 2, n)
    y[150:] = rng.integers(0, 3, n - 150)
    y[150] = 2
    raw = rng.integers(0, 4, (n, 3)) / 3.0
    raw[:150, 2] = 0.0  # nobody scores a class it does not know
    sizes = np.minimum(np.arange(1, n + 1), w)
    auc = WindowAuc(windowed=True)
    auc.update(y[:150], raw[:150, :2], sizes[:150])
    lo = 150 - w
    assert auc.value(2, 1) == brute_force(raw[lo:150, 1], y[lo:150] == 1)
    auc.update(y[150:], raw[150:], sizes[150:])
    lo = n - w
    expected = [brute_force(raw[lo:, c], y[lo:] == c) for c in range(3)]
    assert auc.value(3, 0) == pytest.approx(sum(expected) / 3, abs=0)
    assert auc.value(2, -1) is None


def test_no_positive_or_no_negative_is_undefined():
    s = OneVsRest(windowed=True)
    s.add(np.array([0.5, 0.7]), np.array([True, True]), np.array([1, 2]))
    assert s.value() is None

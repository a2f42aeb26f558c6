"""Tests of foldstream.operators.stats.significance (docs/method.md §6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from foldstream.operators.stats import significance as stats

# Table 1 of Bifet et al. (docs/method.md §6)
A = [77.98, 72.26, 76.95, 77.94, 72.23, 76.90, 77.93, 72.37, 76.93, 77.97]
B = [77.91, 72.27, 76.97, 76.57, 71.63, 75.48, 75.75, 71.33, 74.54, 77.94]

fold_value = st.one_of(st.none(), st.integers(0, 20).map(lambda i: i / 20))


def _is_plain(x) -> bool:
    return x is None or type(x) in (float, int, bool)


# ----------------------------------------------------------------------------------------------
# mean_std
# ----------------------------------------------------------------------------------------------


def test_mean_std_basic():
    assert stats.mean_std([1.0, 2.0, 3.0, 4.0]) == (2.5, pytest.approx(np.std([1, 2, 3, 4], ddof=1)))
    mean, std = stats.mean_std([1, 2, 3])
    assert type(mean) is float and type(std) is float


def test_mean_std_undefined():
    assert stats.mean_std([]) == (None, None)
    assert stats.mean_std([None, None]) == (None, None)
    assert stats.mean_std([None, 0.25, float("nan")]) == (0.25, None)
    assert stats.mean_std([None, 1.0, 3.0]) == (2.0, pytest.approx(math.sqrt(2)))


@given(st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6)), max_size=12))
def test_mean_std_matches_numpy(values):
    defined = [v for v in values if v is not None]
    mean, std = stats.mean_std(values)
    if not defined:
        assert (mean, std) == (None, None)
        return
    assert mean == pytest.approx(float(np.mean(defined)), rel=1e-12, abs=1e-9)
    if len(defined) < 2:
        assert std is None
    else:
        assert std == pytest.approx(float(np.std(defined, ddof=1)), rel=1e-9, abs=1e-6)


# ----------------------------------------------------------------------------------------------
# Wilcoxon
# ----------------------------------------------------------------------------------------------


def test_wilcoxon_worked_example():
    res = stats.wilcoxon(A, B, 0.05)
    assert res == {"statistic": 3.0, "p_value": 0.009765625, "reject": True}
    assert all(_is_plain(v) for v in res.values())
    assert type(res["statistic"]) is float and type(res["reject"]) is bool


def test_wilcoxon_worked_example_rank_sums():
    # The paper (and docs/method.md §6) say "rank sums 53 and 3", but ten ranks sum to 55: the
    # positive ranks of its own Table 1 (4, 7, 5, 8, 9, 6, 10, 3) add up to 52. The statistic,
    # the smaller sum 3, and the exact p-value are what the test vector fixes.
    d = np.subtract(A, B)
    ranks = scipy.stats.rankdata(np.abs(d))
    assert ranks.tolist() == [4, 1, 2, 7, 5, 8, 9, 6, 10, 3]  # the paper's Rank column
    assert ranks[d > 0].sum() == 52
    assert ranks[d < 0].sum() == 3 == stats.wilcoxon(A, B, 0.05)["statistic"]


def test_signed_rank_sums_are_the_two_sums_behind_the_statistic():
    assert stats.signed_rank_sums(A, B) == (52.0, 3.0) and stats.signed_rank_sums(B, A) == (3.0, 52.0)
    assert stats.signed_rank_sums([0.5, 0.7], [0.5, 0.7]) is None
    assert stats.signed_rank_sums([None, 1.0, 2.0, 3.0], [5.0, 1.0, 1.5, 4.0]) == (1.0, 2.0)
    assert stats.signed_rank_sums([2.0, 3.0], [1.0, 4.0]) == (1.5, 1.5)  # tied ranks: no side


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(fold_value, fold_value), min_size=1, max_size=15))
def test_signed_rank_sums_name_the_side_of_the_wilcoxon_statistic(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    sums, res = stats.signed_rank_sums(a, b), stats.wilcoxon(a, b, 0.05)
    if res["statistic"] is None:
        assert sums is None
        return
    n = len(stats._pairs(a, b)[0]) - sum(x == y for x, y in zip(*stats._pairs(a, b)))
    assert min(sums) == res["statistic"] and sum(sums) == n * (n + 1) / 2


def test_wilcoxon_alpha():
    assert stats.wilcoxon(A, B, 0.009765625)["reject"] is True  # p <= alpha rejects
    assert stats.wilcoxon(A, B, 0.005)["reject"] is False


def test_wilcoxon_undefined():
    none = {"statistic": None, "p_value": None, "reject": False}
    assert stats.wilcoxon([], [], 0.05) == none
    assert stats.wilcoxon([None, 1.0], [2.0, None], 0.05) == none
    assert stats.wilcoxon([0.5, 0.7, 0.9], [0.5, 0.7, 0.9], 0.05) == none


def test_wilcoxon_drops_undefined_pairs():
    a = A[:5] + [None] + A[5:]
    b = B[:5] + [0.3] + B[5:]
    assert stats.wilcoxon(a, b, 0.05) == stats.wilcoxon(A, B, 0.05)


def test_wilcoxon_length_mismatch():
    with pytest.raises(ValueError):
        stats.wilcoxon([1.0, 2.0], [1.0], 0.05)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 2])
def test_bad_alpha(alpha):
    with pytest.raises(ValueError):
        stats.wilcoxon(A, B, alpha)
    with pytest.raises(ValueError):
        stats.sign_test(A, B, alpha)


@pytest.mark.slow  # 200 random samples against scipy
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(fold_value, fold_value), min_size=0, max_size=15))
def test_wilcoxon_matches_scipy(pairs):
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    res = stats.wilcoxon(a, b, 0.05)
    xs = [x for x, y in pairs if x is not None and y is not None]
    ys = [y for x, y in pairs if x is not None and y is not None]
    assert all(_is_plain(v) for v in res.values())
    if not xs or all(x == y for x, y in zip(xs, ys)):
        assert res == {"statistic": None, "p_value": None, "reject": False}
        return
    ref = scipy.stats.wilcoxon(xs, ys)
    assert res["statistic"] == pytest.approx(float(ref.statistic))
    assert res["p_value"] == pytest.approx(float(ref.pvalue))
    assert res["reject"] == (res["p_value"] <= 0.05)


# ----------------------------------------------------------------------------------------------
# sign test
# ----------------------------------------------------------------------------------------------


def test_sign_test_worked_example():
    res = stats.sign_test(A, B, 0.05)
    assert res == {"wins_a": 8, "wins_b": 2, "ties": 0, "p_value": 0.109375, "reject": False}
    assert type(res["p_value"]) is float
    assert stats.sign_test(A, B, 0.2)["reject"] is True


def test_sign_test_ties_and_undefined():
    res = stats.sign_test([1.0, 2.0, 3.0, None, 5.0], [1.0, 1.0, 1.0, 4.0, 6.0], 0.05)
    assert (res["wins_a"], res["wins_b"], res["ties"]) == (2, 1, 1)
    assert res["p_value"] == pytest.approx(scipy.stats.binomtest(2, 3, 0.5).pvalue)
    assert stats.sign_test([], [], 0.05) == {
        "wins_a": 0, "wins_b": 0, "ties": 0, "p_value": None, "reject": False}
    assert stats.sign_test([1.0], [1.0], 0.05)["p_value"] is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(fold_value, fold_value), max_size=15))
def test_sign_test_properties(pairs):
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    res = stats.sign_test(a, b, 0.05)
    swapped = stats.sign_test(b, a, 0.05)
    defined = sum(1 for x, y in pairs if x is not None and y is not None)
    assert res["wins_a"] + res["wins_b"] + res["ties"] == defined
    assert (swapped["wins_a"], swapped["wins_b"]) == (res["wins_b"], res["wins_a"])
    assert swapped["p_value"] == res["p_value"]
    if res["wins_a"] + res["wins_b"]:
        assert res["p_value"] == scipy.stats.binomtest(
            res["wins_a"], res["wins_a"] + res["wins_b"], 0.5).pvalue
    assert all(_is_plain(v) for v in res.values())


# ----------------------------------------------------------------------------------------------
# Friedman and Nemenyi
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_learners, demsar", [(2, 1.960), (3, 2.343), (4, 2.569), (5, 2.728),
                                                 (6, 2.850), (10, 3.164)])
def test_nemenyi_q_matches_demsar(n_learners, demsar):
    q = stats.nemenyi_q(n_learners, 0.05)
    assert type(q) is float
    assert abs(q - demsar) < 1e-3


def test_nemenyi_q_alpha_010():
    # Demšar (2006), Table 5(a), alpha = 0.10
    for n_learners, demsar in [(2, 1.645), (3, 2.052), (4, 2.291), (5, 2.459)]:
        assert abs(stats.nemenyi_q(n_learners, 0.10) - demsar) < 1e-3


class _CountingQuantiles:
    """Stands in for ``scipy.stats.studentized_range``, counting the quantiles computed (the
    slow part of a Nemenyi critical value)."""

    def __init__(self, dist):
        self.dist = dist
        self.calls = 0

    def ppf(self, *args, **kwargs):
        self.calls += 1
        return self.dist.ppf(*args, **kwargs)


@pytest.fixture
def quantiles(monkeypatch) -> _CountingQuantiles:
    counting = _CountingQuantiles(scipy.stats.studentized_range)
    monkeypatch.setattr(scipy.stats, "studentized_range", counting)
    return counting


def test_nemenyi_q_computes_each_quantile_once(quantiles):
    # (11, 0.0123) and (12, 0.0123): asked for nowhere else, so not computed yet
    first = stats.nemenyi_q(11, 0.0123)
    assert [stats.nemenyi_q(11, 0.0123) for _ in range(5)] == [first] * 5
    assert quantiles.calls == 1
    assert stats.nemenyi_q(12, 0.0123) > first
    assert quantiles.calls == 2


def test_nemenyi_q_needs_two_learners():
    with pytest.raises(ValueError):
        stats.nemenyi_q(1, 0.05)


def test_friedman_demsar_critical_difference():
    # Demšar (2006), §3.2.2: four algorithms on 14 data sets, CD = 1.25 at alpha = 0.05
    rng = np.random.default_rng(0)
    values = rng.random((4, 14)).tolist()
    res = stats.friedman_nemenyi(values, ["c4.5", "c4.5m", "c4.5cf", "c4.5m+cf"], 0.05)
    assert round(res["critical_difference"], 2) == 1.25
    assert res["critical_difference"] == pytest.approx(
        stats.nemenyi_q(4, 0.05) * math.sqrt(4 * 5 / (6 * 14)))


def test_friedman_ranks_by_hand():
    values = [
        [0.9, 0.8, 0.7, None],  # learner a
        [0.8, 0.8, 0.6, 0.5],  # learner b
        [0.7, 0.6, 0.8, 0.9],  # learner c
    ]
    res = stats.friedman_nemenyi(values, ["a", "b", "c"], 0.05)
    # usable folds 0..2; fold ranks: (1,2,3), (1.5,1.5,3), (2,3,1)
    assert res["learners"] == ["a", "b", "c"]
    assert res["average_ranks"] == pytest.approx([4.5 / 3, 6.5 / 3, 7 / 3])
    assert sum(res["average_ranks"]) == pytest.approx(6.0)  # L(L+1)/2
    ref = scipy.stats.friedmanchisquare([0.9, 0.8, 0.7], [0.8, 0.8, 0.6], [0.7, 0.6, 0.8])
    assert res["friedman"]["statistic"] == pytest.approx(float(ref.statistic))
    assert res["friedman"]["p_value"] == pytest.approx(float(ref.pvalue))
    assert res["critical_difference"] == pytest.approx(
        stats.nemenyi_q(3, 0.05) * math.sqrt(3 * 4 / (6 * 3)))


def test_friedman_two_learners():
    res = stats.friedman_nemenyi([[0.9, 0.5], [0.8, 0.6]], ["a", "b"], 0.05)
    assert res["average_ranks"] == [1.5, 1.5]
    assert res["friedman"] == {"statistic": None, "p_value": None}
    assert res["critical_difference"] is None


def test_friedman_one_usable_fold():
    res = stats.friedman_nemenyi([[0.9, None], [0.8, 0.6], [0.7, 0.1]], ["a", "b", "c"], 0.05)
    assert res["average_ranks"] == [1.0, 2.0, 3.0]
    assert res["friedman"] == {"statistic": None, "p_value": None}
    assert res["critical_difference"] == pytest.approx(stats.nemenyi_q(3, 0.05) * math.sqrt(2))


def test_friedman_no_usable_fold():
    res = stats.friedman_nemenyi([[None, 0.5], [0.8, None], [0.7, 0.1]], ["a", "b", "c"], 0.05)
    assert res["average_ranks"] == [None, None, None]
    assert res["friedman"] == {"statistic": None, "p_value": None}
    assert res["critical_difference"] is None


def test_friedman_all_equal():
    res = stats.friedman_nemenyi([[0.5, 0.7]] * 3, ["a", "b", "c"], 0.05)
    assert res["average_ranks"] == [2.0, 2.0, 2.0]
    assert res["friedman"] == {"statistic": None, "p_value": None}
    assert res["critical_difference"] is not None


def test_friedman_shape_errors():
    with pytest.raises(ValueError):
        stats.friedman_nemenyi([[0.5, 0.7]] * 2, ["a", "b", "c"], 0.05)
    with pytest.raises(ValueError):
        stats.friedman_nemenyi([[0.5, 0.7], [0.5], [0.1, 0.2]], ["a", "b", "c"], 0.05)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 6).flatmap(
    lambda n: st.lists(st.lists(fold_value, min_size=n, max_size=n), min_size=1, max_size=6)))
def test_friedman_properties(values):
    n_learners = len(values)
    names = [f"l{i}" for i in range(n_learners)]
    res = stats.friedman_nemenyi(values, names, 0.05)
    usable = [j for j in range(len(values[0])) if all(row[j] is not None for row in values)]
    ranks = res["average_ranks"]
    if not usable:
        assert ranks == [None] * n_learners
        return
    assert all(type(r) is float for r in ranks)
    assert sum(ranks) == pytest.approx(n_learners * (n_learners + 1) / 2)
    assert all(1.0 <= r <= n_learners for r in ranks)
    if n_learners < 3:
        assert res["friedman"] == {"statistic": None, "p_value": None}
        assert res["critical_difference"] is None
    else:
        assert res["critical_difference"] == pytest.approx(
            stats.nemenyi_q(n_learners, 0.05)
            * math.sqrt(n_learners * (n_learners + 1) / (6 * len(usable))))
        p = res["friedman"]["p_value"]
        assert p is None or 0.0 <= p <= 1.0


def test_friedman_at_every_report_computes_its_critical_value_once(quantiles):
    """A ranking record at every report must not compute the studentized range quantile again:
    it is the costly part of a ranking (about 3 ms, four times the rest)."""
    rng = np.random.default_rng(1)
    values = rng.random((5, 10)).tolist()
    names = list("abcde")
    first = stats.friedman_nemenyi(values, names, 0.0456)  # alpha 0.0456: used nowhere else
    assert first["critical_difference"] is not None
    assert all(stats.friedman_nemenyi(values, names, 0.0456) == first for _ in range(200))
    assert quantiles.calls == 1


# ----------------------------------------------------------------------------------------------
# McNemar
# ----------------------------------------------------------------------------------------------


def test_mcnemar_values():
    res = stats.mcnemar([10, 12], [3, 5], 0.05)
    assert res["a"] == 22 and res["b"] == 8
    assert res["folds_a"] == [10, 12] and res["folds_b"] == [3, 5]
    assert res["statistic"] == pytest.approx(14**2 / 30)
    assert res["p_value"] == pytest.approx(scipy.stats.chi2.sf(14**2 / 30, 1))
    assert res["reject"] is True
    assert res["example_based"] is True
    assert all(_is_plain(v) for k, v in res.items() if k not in ("folds_a", "folds_b"))


def test_mcnemar_sign():
    ab = stats.mcnemar([10, 12], [3, 5], 0.05)
    ba = stats.mcnemar([3, 5], [10, 12], 0.05)
    assert ba["statistic"] == -ab["statistic"] < 0
    assert ba["p_value"] == ab["p_value"]


def test_mcnemar_equal_and_empty():
    res = stats.mcnemar([4, 1], [2, 3], 0.05)
    assert res["statistic"] == 0.0 and res["p_value"] == 1.0 and res["reject"] is False
    empty = stats.mcnemar([0, 0], [0, 0], 0.05)
    assert (empty["statistic"], empty["p_value"], empty["reject"]) == (None, None, False)
    assert empty["a"] == 0 and empty["b"] == 0
    assert stats.mcnemar([], [], 0.05)["statistic"] is None


def test_mcnemar_weighted_counts_and_numpy_input():
    res = stats.mcnemar(np.array([1.5, 2.5]), np.array([0.5, 0.5]), 0.05)
    assert type(res["a"]) is float and res["a"] == 4.0 and res["b"] == 1.0
    assert all(type(x) is float for x in res["folds_a"])
    assert res["statistic"] == pytest.approx(9 / 5)


# ----------------------------------------------------------------------------------------------
# Q statistic
# ----------------------------------------------------------------------------------------------


def test_q_statistic_values():
    res = stats.q_statistic([2.0, 1.0, 4.0], [1.0, 1.0, 2.0])
    assert res["value"] == pytest.approx(math.log(7 / 4))
    assert res["folds"] == pytest.approx([math.log(2), 0.0, math.log(2)])
    assert all(type(x) is float for x in res["folds"])


def test_q_statistic_undefined():
    res = stats.q_statistic([0.0, 1.0, 0.0, None], [0.0, 0.0, 1.0, 1.0])
    assert res["folds"] == [None, None, None, None]
    assert res["value"] == 0.0  # the sums over the defined folds are 1 and 1
    assert stats.q_statistic([0.0, 0.0], [1.0, 2.0])["value"] is None
    assert stats.q_statistic([1.0, 2.0], [0.0, 0.0])["value"] is None

def test_q_statistic_sums_over_defined_folds():
    res = stats.q_statistic([0.0, 3.0, None], [1.0, 1.0, 5.0])
    assert res["folds"][0] is None and res["folds"][2] is None
    assert res["value"] == pytest.approx(math.log(3 / 2))
    assert stats.q_statistic([], [])["value"] is None

"""The fold tests (operators/stats/significance.py, docs/method.md §6).

Worked values and properties, and scipy's numbers at table cost: every comparison with scipy is
``==`` on the floats, not ``approx``, so that the records do not change by a bit. The reference
is scipy itself, called on many vectors at once (``axis=1``), rows grouped so that scipy's
``auto`` choice, made once per call, is the one it would make for each row alone.
"""

from __future__ import annotations

import gzip
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from foldstream.operators.stats import significance as stats
from foldstream.operators.stats.significance import signed_rank_test

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


# The fold tests at table cost give scipy's numbers, == on the floats (the records must not change
# by a bit): scipy itself is the reference, called on many vectors at once.

ALTERNATIVES = ("two-sided", "less", "greater")


def _vector(rng: np.random.Generator, k: int) -> np.ndarray:
    """``k`` fold differences, most with ties or zeros: small integers, tenths, differences of
    accuracies over 200 examples (equal in theory, not always in floating point), rounded
    normals."""
    kind = rng.integers(4)
    if kind == 0:
        return rng.integers(-3, 4, size=k).astype(float)
    if kind == 1:
        return rng.integers(-30, 31, size=k) / 10.0
    if kind == 2:
        return rng.integers(150, 190, size=k) / 200 - rng.integers(150, 190, size=k) / 200
    return np.round(rng.normal(size=k), 1)


def _vectors(seed: int, per_k: int, ks=range(1, 26)) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for k in ks:
        for _ in range(per_k):
            v = _vector(rng, k)
            if k == 1 and v[0] == 0:
                v = np.array([1.5])  # scipy refuses one zero difference (test_single_zero)
            out.append(v)
    return out


def _scipy(vectors: list[np.ndarray], alternative: str, correction: bool = False
           ) -> list[tuple[float, float]]:
    """``scipy.stats.wilcoxon``'s (statistic, p-value) of each vector, in batches of rows of
    one length that all have, or all lack, ties or zeros."""
    groups: dict[tuple[int, bool], list[int]] = {}
    for i, v in enumerate(vectors):
        nonzero = np.abs(v[v != 0])
        tied_or_zero = bool(nonzero.size < v.size or np.unique(nonzero).size < nonzero.size)
        groups.setdefault((v.size, tied_or_zero), []).append(i)
    out: list[tuple[float, float]] = [(math.nan, math.nan)] * len(vectors)
    for rows in groups.values():
        for start in range(0, len(rows), 50):
            chunk = rows[start:start + 50]
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")  # 0/0 of scipy's z when every difference is 0
                res = scipy.stats.wilcoxon(np.array([vectors[i] for i in chunk]), axis=1,
                                           alternative=alternative, correction=correction)
            for j, i in enumerate(chunk):
                out[i] = (float(res.statistic[j]), float(res.pvalue[j]))
    return out


def _same(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))


def _check(vectors: list[np.ndarray], alternative: str, correction: bool = False) -> None:
    expected = _scipy(vectors, alternative, correction)
    wrong = []
    for v, (statistic, p_value) in zip(vectors, expected):
        res = signed_rank_test(list(v), alternative=alternative, correction=correction)
        if not (_same(res.statistic, statistic) and _same(res.p_value, p_value)):
            wrong.append((list(v), (statistic, p_value), res))
    assert not wrong, f"{len(wrong)} of {len(vectors)} differ from scipy, e.g. {wrong[:3]}"


# ------------------------------------------------------------------------- equal to scipy
def test_equal_to_scipy_quick():
    """Live against scipy, every k from 1 to 25 (the one-sided alternatives up to 9, where
    scipy's permutation test is cheap): bit for bit scipy's statistic and p-value."""
    _check(_vectors(seed=7, per_k=2), "two-sided")
    for alternative in ("less", "greater"):
        _check(_vectors(seed=8, per_k=2, ks=range(1, 10)), alternative)


#: scipy's own (statistic, p-value) of the 12,000 vectors of :func:`_reference_sets`, computed
#: once by :func:`write_reference` (about 15 CPU-minutes of scipy's permutation tests, too long to
#: repeat in every run of the suite): the vectors, the installed scipy's version and its answers.
REFERENCE = Path(__file__).parent / "data" / "wilcoxon-scipy-reference.json.gz"


def _reference_sets() -> dict[str, list[np.ndarray]]:
    """10,000 random fold-difference vectors, k = 1..25 (400 each), most with ties or zeros,
    two-sided as the project calls the test; 1,000 more for each one-sided alternative."""
    return {"two-sided": _vectors(seed=2026, per_k=400), "less": _vectors(seed=11, per_k=40),
            "greater": _vectors(seed=12, per_k=40)}


def write_reference(path: Path = REFERENCE) -> None:
    """Compute scipy's answers for :func:`_reference_sets` and write them to ``path``
    (``python tests/test_significance.py``)."""
    sets = {alternative: {"vectors": [v.tolist() for v in vectors],
                          "expected": [[repr(s), repr(p)] for s, p in _scipy(vectors, alternative)]}
            for alternative, vectors in _reference_sets().items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump({"scipy": scipy.__version__, "sets": sets}, f)


def test_equal_to_scipy_10000_vectors():
    """The 10,000 vectors (and 2,000 one-sided) against scipy's answers stored by
    :func:`write_reference`, bit for bit: the stored vectors are the ones this file generates,
    and the stored answers those of the scipy the project pins (else they are recomputed)."""
    with gzip.open(REFERENCE, "rt", encoding="utf-8") as f:
        stored = json.load(f)
    sets = _reference_sets()
    ties_or_zeros = sum(1 for v in sets["two-sided"]
                        if np.unique(np.abs(v)).size < v.size or 0 in v)
    assert len(sets["two-sided"]) == 10_000 and ties_or_zeros > 0.8 * 10_000
    for alternative, vectors in sets.items():
        assert stored["sets"][alternative]["vectors"] == [v.tolist() for v in vectors]
        if stored["scipy"] != scipy.__version__:  # another scipy: ask it (slow)
            _check(vectors, alternative)
            continue
        wrong = []
        for v, (statistic, p_value) in zip(vectors, stored["sets"][alternative]["expected"]):
            res = signed_rank_test(list(v), alternative=alternative)
            if not (_same(res.statistic, float(statistic)) and _same(res.p_value, float(p_value))):
                wrong.append((v.tolist(), (statistic, p_value), res))
        assert not wrong, f"{len(wrong)} of {len(vectors)} differ from scipy, e.g. {wrong[:3]}"


def test_the_stored_reference_is_scipys_answer():
    """A sample of the stored answers, asked of scipy again (one vector of each k and each
    alternative, where scipy's permutation test is cheap): the file holds what scipy says."""
    with gzip.open(REFERENCE, "rt", encoding="utf-8") as f:
        stored = json.load(f)
    if stored["scipy"] != scipy.__version__:
        pytest.skip(f"the reference is scipy {stored['scipy']}'s")
    for alternative, entry in stored["sets"].items():
        rows = [i for i, v in enumerate(entry["vectors"]) if len(v) <= 9 or len(v) >= 14][::37]
        vectors = [np.array(entry["vectors"][i]) for i in rows]
        live = _scipy(vectors, alternative)
        for i, (statistic, p_value) in zip(rows, live):
            s, p = map(float, entry["expected"][i])
            assert _same(statistic, s) and _same(p_value, p), (alternative, entry["vectors"][i])


def test_continuity_correction_equal_to_scipy():
    """The normal approximation (k > 13 with ties or zeros) with scipy's continuity
    correction."""
    vectors = _vectors(seed=3, per_k=6, ks=range(14, 26))
    for alternative in ALTERNATIVES:
        _check(vectors, alternative, correction=True)


def test_exact_table_equal_to_scipy_up_to_50():
    """No zero, no tie: scipy's exact distribution for every n up to 50, at rank sums spread
    over the whole range (both tails and the middle), the three alternatives."""
    rng = np.random.default_rng(4)
    vectors = []
    for n in range(1, 51):
        for share in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0):
            signs = np.where(rng.random(n) < share, -1.0, 1.0)
            vectors.append(signs * rng.permutation(np.arange(1.0, n + 1.0)) * 0.01)
    for alternative in ALTERNATIVES:
        _check(vectors, alternative)


def test_each_method_is_used():
    """The three ways scipy's ``auto`` computes the p-value are all reproduced."""
    assert signed_rank_test([1.0, -2.0, 3.0]).method == "exact"
    assert signed_rank_test([1.0, -1.0, 3.0]).method == "permutation"
    assert signed_rank_test([0.0, 1.0, 3.0]).method == "permutation"
    assert signed_rank_test([1.0] * 14).method == "asymptotic"
    assert signed_rank_test(list(range(1, 52))).method == "asymptotic"  # above 50: scipy too
    _check([np.arange(1.0, 52.0) * (-1) ** np.arange(51)], "two-sided")


# ------------------------------------------------------------------------------ edge cases
@pytest.mark.parametrize("k", [2, 10, 13, 14, 25])
def test_all_zeros(k):
    """No difference at all: scipy's permutation test gives p = 1 up to 13 folds, its normal
    approximation NaN (a zero standard error) beyond; the statistic is 0."""
    _check([np.zeros(k)], "two-sided")
    res = signed_rank_test([0.0] * k)
    assert res.statistic == 0.0
    assert res.p_value == 1.0 if k <= 13 else math.isnan(res.p_value)


def test_single_difference():
    """k = 1: one sign pattern of two; positive or negative, p = 1."""
    _check([np.array([0.25]), np.array([-3.0])], "two-sided")
    assert signed_rank_test([0.25]).p_value == 1.0
    assert signed_rank_test([-3.0], alternative="less").p_value == 0.5


def test_single_zero():
    """One zero difference: scipy's permutation test refuses a sample of one; here p = 1 (both
    sign patterns give the same rank sum). The project's :func:`stats.wilcoxon` never asks:
    with every difference zero it reports the test as undefined."""
    with pytest.raises(ValueError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scipy.stats.wilcoxon([0.0])
    assert signed_rank_test([0.0]).p_value == 1.0
    assert stats.wilcoxon([0.5], [0.5], 0.05)["p_value"] is None


@pytest.mark.parametrize("k", [3, 10, 14, 25])
def test_all_tied(k):
    """Every difference of the same size, in both directions and all one way."""
    ones = np.ones(k)
    mixed = np.where(np.arange(k) % 3 == 0, -1.0, 1.0)
    _check([ones, -ones, mixed, 0.1 * mixed], "two-sided")
    _check([ones, -ones, mixed], "less")


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_25_folds_one_way(sign):
    """25 folds all positive or all negative, untied (exact) and tied (asymptotic)."""
    _check([sign * np.arange(1.0, 26.0), sign * np.repeat([1.0, 2.0, 3.0, 4.0, 5.0], 5)],
           "two-sided")
    assert signed_rank_test(sign * np.arange(1.0, 26.0)).p_value == 2.0 / 2**25


def test_nan_propagates():
    res = signed_rank_test([1.0, math.nan, 2.0])
    assert math.isnan(res.p_value) and math.isnan(res.statistic)
    assert math.isnan(scipy.stats.wilcoxon([1.0, math.nan, 2.0]).pvalue)


def test_empty_and_bad_alternative():
    assert math.isnan(signed_rank_test([]).p_value)
    with pytest.raises(ValueError, match="alternative"):
        signed_rank_test([1.0], alternative="both")


# ------------------------------------------------------------------ the project's wrappers
def test_wilcoxon_of_fold_values_equal_to_scipy():
    """The aggregator's call, fold accuracies of two learners (differences near-tied in
    floating point): :func:`stats.wilcoxon` gives scipy's statistic and p-value."""
    rng = np.random.default_rng(5)
    for k in (3, 5, 10, 13, 20, 25):
        for _ in range(3 if k >= 10 else 20):
            a = list(rng.integers(1500, 1700, size=k) / 2000)
            b = list(rng.integers(1500, 1700, size=k) / 2000)
            if all(x == y for x, y in zip(a, b)):
                continue
            expected = scipy.stats.wilcoxon(a, b)
            got = stats.wilcoxon(a, b, 0.05)
            assert got["statistic"] == float(expected.statistic)
            assert got["p_value"] == float(expected.pvalue)


def test_wilcoxon_does_not_call_scipy(monkeypatch):
    """The fold tests no longer run scipy's test per call (it fails without the tables)."""
    def refuse(*args, **kwargs):
        raise AssertionError("scipy called per report")

    monkeypatch.setattr(scipy.stats, "wilcoxon", refuse)
    monkeypatch.setattr(scipy.stats, "permutation_test", refuse)
    res = stats.wilcoxon([0.8, 0.7, 0.7, 0.9], [0.7, 0.7, 0.6, 0.8], 0.05)
    assert res == {"statistic": 0.0, "p_value": 0.25, "reject": False}


def test_signed_rank_sums_unchanged():
    """The rank sums the verdicts read are scipy's ``rankdata`` sums, as before."""
    for v in _vectors(seed=9, per_k=3):
        if not v.any():
            continue
        d = v[v != 0]
        ranks = scipy.stats.rankdata(np.abs(d))
        expected = (float(ranks[d > 0].sum()), float(ranks[d < 0].sum()))
        assert stats.signed_rank_sums(list(v), [0.0] * v.size) == expected


def test_sign_test_equal_to_binomtest():
    """The cached sign-test p-value is scipy's ``binomtest`` for every count up to 25 folds."""
    for n in range(1, 26):
        for wins in range(n + 1):
            expected = float(scipy.stats.binomtest(wins, n, 0.5).pvalue)
            got = stats.sign_test([1.0] * wins + [0.0] * (n - wins),
                                  [0.0] * wins + [1.0] * (n - wins), 0.05)
            assert got["p_value"] == expected


if __name__ == "__main__":
    write_reference()

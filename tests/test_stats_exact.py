"""The fold tests at table cost (operators/stats/significance.py, docs/method.md §6) give scipy's numbers.

:func:`~foldstream.operators.stats.significance.signed_rank_test` replaces ``scipy.stats.wilcoxon`` (whose
permutation test over the 2^k sign patterns cost about 0.1 s a call) and the sign test's
p-values are cached; the records must not change by a bit, so every comparison here is ``==``
on the floats, not ``approx``. The reference is scipy itself, called on many vectors at once
(``axis=1``), rows grouped so that scipy's ``auto`` choice, made once per call, is the one it
would make for each row alone.
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

from foldstream.operators.stats import significance as stats
from foldstream.operators.stats.significance import signed_rank_test

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
    (``python tests/test_stats_exact.py``)."""
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

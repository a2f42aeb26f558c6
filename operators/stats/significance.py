"""Comparisons of learners across folds (docs/method.md §6, Bifet et al. 2015 §4).

Every function here is pure: it takes the per-fold values that the aggregation step holds at
one stream position and returns plain Python values (``float``, ``int``, ``bool``, ``list``,
``dict``) ready for the JSON output records of docs/method.md §10. An undefined number is ``None``,
never ``NaN`` and never ``0``.

A per-fold value may itself be ``None`` (the measure is undefined on that fold, for example
kappa on a window of one class). Such folds are dropped: per learner for :func:`mean_std`,
pairwise for the paired tests (:func:`wilcoxon`, :func:`sign_test`, :func:`q_statistic`), and
for every learner at once in :func:`friedman_nemenyi`. A float ``NaN`` is treated like ``None``.

Why one module: these are the tests the aggregator runs together on one
report's fold values, and they share that handling of undefined folds (``_pairs``,
``_defined``) and the level check (:func:`check_level`); the bulk is the signed-rank test's
exact, permutation and asymptotic p-values, which :func:`wilcoxon` and the verdict wording's
:func:`signed_rank_sums` both read.

The worked example of docs/method.md §6 (Table 1 of Bifet et al.) is used throughout the examples:

>>> A = [77.98, 72.26, 76.95, 77.94, 72.23, 76.90, 77.93, 72.37, 76.93, 77.97]
>>> B = [77.91, 72.27, 76.97, 76.57, 71.63, 75.48, 75.75, 71.33, 74.54, 77.94]
>>> wilcoxon(A, B, 0.05)
{'statistic': 3.0, 'p_value': 0.009765625, 'reject': True}
>>> sign_test(A, B, 0.05)
{'wins_a': 8, 'wins_b': 2, 'ties': 0, 'p_value': 0.109375, 'reject': False}
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from foldstream.operators.records.base import plain

__all__ = [
    "mean_std",
    "wilcoxon",
    "signed_rank_test",
    "SignedRankResult",
    "signed_rank_sums",
    "sign_test",
    "friedman_nemenyi",
    "nemenyi_q",
    "mcnemar",
    "q_statistic",
]

Value = float | int | None


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


def _defined(x: object) -> bool:
    """True when ``x`` is a number, not ``None`` and not ``NaN``."""
    if x is None:
        return False
    try:
        return not math.isnan(x)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"expected a number or None, got {x!r}") from None


def _float_or_none(x: object) -> float | None:
    """A plain finite-or-infinite ``float``, or ``None`` for ``None``/``NaN``."""
    if x is None:
        return None
    f = float(x)  # type: ignore[arg-type]
    return None if math.isnan(f) else f


def check_level(alpha: float) -> float:
    """A significance level: a number in (0, 1), as a float (:class:`ValueError` otherwise). The
    one check of every test's ``alpha``, here and in :mod:`.sequential`.

    >>> check_level(0.05)
    0.05
    >>> check_level(1)
    Traceback (most recent call last):
    ValueError: alpha must lie in (0, 1), got 1.0
    """
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    return alpha


def _pairs(a: Sequence[Value], b: Sequence[Value]) -> tuple[list[float], list[float]]:
    """The folds where both ``a`` and ``b`` are defined, as two lists of floats."""
    if len(a) != len(b):
        raise ValueError(f"paired values need the same number of folds, got {len(a)} and {len(b)}")
    xs: list[float] = []
    ys: list[float] = []
    for x, y in zip(a, b):
        if _defined(x) and _defined(y):
            xs.append(float(x))  # type: ignore[arg-type]
            ys.append(float(y))  # type: ignore[arg-type]
    return xs, ys


# ----------------------------------------------------------------------------------------------
# per learner
# ----------------------------------------------------------------------------------------------


def mean_std(values: Sequence[Value]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation of the defined per-fold values.

    Parameters
    ----------
    values : sequence of float or None
        One value per fold; ``None`` (or ``NaN``) marks an undefined value and is dropped.

    Returns
    -------
    mean : float or None
        The mean of the defined values; ``None`` when no value is defined.
    std : float or None
        The sample standard deviation (``ddof=1``, as MOA's ``[err]``); ``None`` when fewer
        than two values are defined.

    Examples
    --------
    >>> mean_std([1.0, 2.0, None, 3.0])
    (2.0, 1.0)
    >>> mean_std([0.5])
    (0.5, None)
    >>> mean_std([None, None])
    (None, None)
    """
    xs = [float(v) for v in values if _defined(v)]  # type: ignore[arg-type]
    if not xs:
        return None, None
    arr = np.asarray(xs, dtype=float)
    mean = float(arr.mean())
    if arr.size < 2:
        return mean, None
    return mean, float(arr.std(ddof=1))


# ----------------------------------------------------------------------------------------------
# paired tests over folds
# ----------------------------------------------------------------------------------------------


#: Up to this many differences (zeros included), scipy's ``method="auto"`` takes the exact
#: distribution of the rank sum when no difference is zero or tied...
_EXACT_MAX = 50
#: ...and, with zeros or ties, the permutation test over all 2^n sign patterns (exhaustive, so
#: deterministic, since 2^13 is below its default 9,999 resamples); above it, the normal
#: approximation.
_PERMUTATION_MAX = 13
_ALTERNATIVES = ("two-sided", "less", "greater")


class SignedRankResult(NamedTuple):
    """The Wilcoxon signed-rank test of one vector of differences (:func:`signed_rank_test`)."""

    #: ``min(r_plus, r_minus)`` for the two-sided test, else ``r_plus`` (as scipy reports it).
    statistic: float
    p_value: float
    #: The sum of the ranks of the positive differences, and of the negative ones.
    r_plus: float
    r_minus: float
    #: How the p-value was computed: ``"exact"``, ``"permutation"`` or ``"asymptotic"``.
    method: str


class _SignedRanks(NamedTuple):
    """The non-zero differences ranked by absolute value, ties sharing their average rank.

    Ranks are kept doubled, so that every average rank is an integer."""

    doubled: tuple[int, ...]  # doubled rank of each non-zero difference, in input order
    positive: tuple[bool, ...]  # whether that difference is positive
    ties: tuple[int, ...]  # the sizes of the groups of tied absolute values (size > 1 only)
    zeros: int  # how many differences are zero

    def doubled_sums(self) -> tuple[int, int]:
        """The doubled rank sums of the positive and of the negative differences."""
        plus = sum(r for r, positive in zip(self.doubled, self.positive) if positive)
        return plus, sum(self.doubled) - plus


def _signed_ranks(diffs: Sequence[float]) -> _SignedRanks:
    """Rank ``abs(d)`` over the non-zero differences ``d`` (``scipy.stats.rankdata``'s
    ``"average"`` method: a group of tied values at sorted positions ``i..j`` (from 0) shares
    the rank ``(i + j) / 2 + 1``, doubled here to ``i + j + 2``)."""
    nonzero = [float(d) for d in diffs if d != 0]
    order = sorted(range(len(nonzero)), key=lambda i: abs(nonzero[i]))
    doubled = [0] * len(nonzero)
    ties = []
    i = 0
    while i < len(order):
        j = i
        value = abs(nonzero[order[i]])
        while j + 1 < len(order) and abs(nonzero[order[j + 1]]) == value:
            j += 1
        for m in range(i, j + 1):
            doubled[order[m]] = i + j + 2
        if j > i:
            ties.append(j - i + 1)
        i = j + 1
    return _SignedRanks(tuple(doubled), tuple(d > 0 for d in nonzero), tuple(ties),
                        len(diffs) - len(nonzero))


@functools.lru_cache(maxsize=64)
def _exact_pvalues(n: int, alternative: str) -> tuple[float, ...]:
    """The exact p-value of every rank sum ``r_plus = 0 .. n(n+1)/2`` of ``n`` untied non-zero
    differences, computed with scipy's own arithmetic (``scipy.stats._wilcoxon``'s
    ``WilcoxonDistribution``: the same probabilities, summed over the same slices), so that each
    value is bit for bit the one ``scipy.stats.wilcoxon`` returns. One table per ``n``."""
    pmfs = np.ones(1, dtype=np.float64)
    for k in range(1, n + 1):
        previous = pmfs
        pmfs = np.zeros(k * (k + 1) // 2 + 1, dtype=np.float64)
        m = len(previous)
        pmfs[:m] = previous * 0.5
        pmfs[-m:] += previous * 0.5
    mean = n * (n + 1) / 4

    def cdf(k: int) -> np.float64:
        return pmfs[: k + 1].sum() if k <= mean else 1 - pmfs[k + 1:].sum()

    def sf(k: int) -> np.float64:
        return pmfs[k:].sum() if k <= mean else 1 - pmfs[:k].sum()

    if alternative == "less":
        values = [cdf(r) for r in range(len(pmfs))]
    elif alternative == "greater":
        values = [sf(r) for r in range(len(pmfs))]
    else:
        values = [np.clip(2 * np.minimum(sf(r), cdf(r)), 0, 1) for r in range(len(pmfs))]
    return tuple(float(v) for v in values)


@functools.lru_cache(maxsize=4096)
def _null_counts(doubled: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The null distribution of the doubled rank sum over the ``2^k`` sign patterns of ``k``
    non-zero differences with these (sorted) doubled ranks, as cumulative counts: ``at_most[s]``
    patterns have a doubled sum of at most ``s``, ``at_least[s]`` of at least ``s``. It depends
    only on the tie pattern, hence the cache."""
    counts = [1]
    for r in doubled:
        grown = counts + [0] * r
        for s, c in enumerate(counts):
            grown[s + r] += c
        counts = grown
    at_most = list(counts)
    for s in range(1, len(at_most)):
        at_most[s] += at_most[s - 1]
    total = at_most[-1]
    at_least = [total] + [total - at_most[s - 1] for s in range(1, len(counts))]
    return tuple(at_most), tuple(at_least)


def _permutation_pvalue(ranks: _SignedRanks, r2: int, alternative: str) -> float:
    """The p-value of ``scipy.stats.permutation_test`` over all ``2^n`` sign patterns (zeros
    included: flipping a zero changes nothing, so each counts twice), with its arithmetic:
    ``count / 2^n``, the two-sided value twice the smaller side, clipped to 1."""
    at_most, at_least = _null_counts(tuple(sorted(ranks.doubled)))
    weight = 1 << ranks.zeros
    patterns = 1 << (len(ranks.doubled) + ranks.zeros)
    less = float(at_most[r2] * weight) / patterns
    greater = float(at_least[r2] * weight) / patterns
    if alternative == "less":
        return less
    if alternative == "greater":
        return greater
    return min(min(less, greater) * 2, 1.0)


def _asymptotic_pvalue(ranks: _SignedRanks, r_plus: float, alternative: str,
                       correction: bool) -> float:
    """The normal approximation, with scipy's arithmetic (``_wilcoxon_statistic``): the mean
    and the tie-corrected standard error over the non-zero differences."""
    count = float(len(ranks.doubled))
    mean = count * (count + 1.0) * 0.25
    var = count * (count + 1.0) * (2.0 * count + 1.0)
    tie_correct = float(sum(t**3 - t for t in ranks.ties))
    se = math.sqrt((var - tie_correct / 2) / 24)
    if se == 0.0:
        return math.nan
    z = (r_plus - mean) / se
    import scipy.special  # here, not at the top: a command that runs no test never imports scipy

    if correction:
        sign = {"greater": 1.0, "less": -1.0}.get(alternative, float(np.sign(z)))
        z = z - sign * 0.5 / se
    if alternative == "less":
        return float(scipy.special.ndtr(z))
    if alternative == "greater":
        return float(scipy.special.ndtr(-z))
    return float(2 * scipy.special.ndtr(-abs(z)))


def signed_rank_test(diffs: Sequence[float], alternative: str = "two-sided",
                     correction: bool = False) -> SignedRankResult:
    """Wilcoxon signed-rank test of the differences ``diffs``, without scipy's per-call cost.

    The statistic and the p-value are bit for bit those of ``scipy.stats.wilcoxon(diffs,
    alternative=alternative, correction=correction)`` with its defaults ``zero_method="wilcox"``
    and ``method="auto"`` (scipy 1.17; ``tests/test_significance.py`` checks it), as ``auto``
    chooses, by ``n``, the number of differences, zeros included:

    * no zero and no tie, ``n <= 50``: the exact distribution of the rank sum, a table per ``n``
      computed once with scipy's own arithmetic;
    * zeros or ties, ``n <= 13``: what scipy's permutation test over the ``2^n`` sign patterns
      returns (a permutation test, slow), ``count / 2^n``, with the count read from the null
      distribution of the rank sum, computed once per tie pattern: the ranks are kept
      doubled, so the sums are integers and the counts exact;
    * otherwise the normal approximation, with the tie correction (and the continuity
      correction if asked).

    Zero differences are dropped before ranking (``zero_method="wilcox"``), but count in ``n``.

    Parameters
    ----------
    diffs : sequence of float
        The paired differences (``NaN`` makes the result ``NaN``, as scipy's default
        ``nan_policy="propagate"``).
    alternative : {"two-sided", "less", "greater"}
        As scipy's: "greater" tests whether the differences lie above zero.
    correction : bool
        The continuity correction of the normal approximation (scipy's ``correction``).

    Returns
    -------
    SignedRankResult

    Examples
    --------
    Ranks 1.5, 1.5, 3, 4 (two tied differences), positive sum 8.5, negative 1.5: scipy runs a
    permutation test. Of the 16 sign patterns, 3 have a positive sum of at most 1.5 (none
    positive, or either tied one alone) and, by symmetry, 3 one of at least 8.5, so the
    two-sided p-value is ``2 * 3 / 16``, the one-sided one ``3 / 16``:

    >>> res = signed_rank_test([0.5, -0.5, 1.0, 2.0])
    >>> res.statistic, res.p_value, res.method
    (1.5, 0.375, 'permutation')
    >>> signed_rank_test([0.5, -0.5, 1.0, 2.0], alternative="greater").p_value
    0.1875

    A zero counts in the patterns (each twice: its sign does not matter) but not in the ranks:
    2 of the 16 patterns give the other three a positive sum of 6, so ``p = 2 * 2 / 16``.

    >>> signed_rank_test([0.0, 1.0, 2.0, 3.0]).p_value
    0.25

    Twenty untied differences: the exact table.

    >>> res = signed_rank_test([(-1) ** (i % 3 == 0) * (i + 1) for i in range(20)])
    >>> res.r_plus, res.r_minus, res.p_value, res.method
    (140.0, 70.0, 0.20244979858398438, 'exact')
    """
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    values = [float(d) for d in diffs]
    if not values or any(math.isnan(d) for d in values):
        return SignedRankResult(math.nan, math.nan, math.nan, math.nan, "asymptotic")
    ranks = _signed_ranks(values)
    r2_plus, r2_minus = ranks.doubled_sums()
    r_plus, r_minus = r2_plus / 2, r2_minus / 2
    n = len(values)
    if n <= _EXACT_MAX and not ranks.ties and not ranks.zeros:
        method = "exact"
        p_value = _exact_pvalues(n, alternative)[r2_plus // 2]
    elif n <= _PERMUTATION_MAX and n > 0 and (ranks.ties or ranks.zeros):
        method = "permutation"
        p_value = _permutation_pvalue(ranks, r2_plus, alternative)
    else:
        method = "asymptotic"
        p_value = _asymptotic_pvalue(ranks, r_plus, alternative, correction)
    statistic = min(r_plus, r_minus) if alternative == "two-sided" else r_plus
    return SignedRankResult(statistic, p_value, r_plus, r_minus, method)


def wilcoxon(a: Sequence[Value], b: Sequence[Value], alpha: float) -> dict:
    """Wilcoxon signed-rank test over the paired per-fold values of learners A and B.

    The statistic and p-value are bit for bit those of ``scipy.stats.wilcoxon(a, b)`` with
    scipy's defaults (docs/method.md §6), computed by :func:`signed_rank_test` at the cost of
    a table look-up: zero differences are dropped from the ranks; without ties or zeros the
    p-value is exact (up to 50 folds); with them it is the exact permutation distribution over
    the 2^k sign assignments up to 13 folds (zeros included) and the normal approximation
    beyond; the statistic is the smaller of the two rank sums. Folds where either value is
    undefined are dropped first.

    Parameters
    ----------
    a, b : sequence of float or None
        The per-fold values of learners A and B (same fold order, same length).
    alpha : float
        Significance level in (0, 1).

    Returns
    -------
    dict
        ``{"statistic", "p_value", "reject"}``, with ``reject = p_value <= alpha``. When no
        fold is defined for both learners, or every difference is zero, the test is undefined:
        statistic and p-value are ``None`` and ``reject`` is ``False``.

    Examples
    --------
    Table 1 of Bifet et al. (docs/method.md §6): rank sums 52 and 3 (ten ranks sum to 55;
    a figure of 53 sometimes quoted cannot be right), statistic 3.

    >>> A = [77.98, 72.26, 76.95, 77.94, 72.23, 76.90, 77.93, 72.37, 76.93, 77.97]
    >>> B = [77.91, 72.27, 76.97, 76.57, 71.63, 75.48, 75.75, 71.33, 74.54, 77.94]
    >>> wilcoxon(A, B, 0.05)
    {'statistic': 3.0, 'p_value': 0.009765625, 'reject': True}
    >>> wilcoxon([1.0, 2.0], [1.0, 2.0], 0.05)
    {'statistic': None, 'p_value': None, 'reject': False}
    """
    alpha = check_level(alpha)
    xs, ys = _pairs(a, b)
    if not xs or all(x - y == 0 for x, y in zip(xs, ys)):
        return {"statistic": None, "p_value": None, "reject": False}
    res = signed_rank_test([x - y for x, y in zip(xs, ys)])
    statistic = _float_or_none(res.statistic)
    p_value = _float_or_none(res.p_value)
    return {
        "statistic": statistic,
        "p_value": p_value,
        "reject": bool(p_value is not None and p_value <= alpha),
    }


def signed_rank_sums(a: Sequence[Value], b: Sequence[Value]) -> tuple[float, float] | None:
    """The two rank sums of the Wilcoxon signed-rank test: which way its statistic points.

    As in :func:`wilcoxon`: folds where either value is undefined are dropped, then zero
    differences; the absolute differences ``a - b`` are ranked (ties share their average rank).
    :func:`wilcoxon` reports the smaller sum as its statistic; the larger one names the learner
    the test favours.

    Parameters
    ----------
    a, b : sequence of float or None
        The per-fold values of learners A and B (same fold order, same length).

    Returns
    -------
    tuple of (float, float) or None
        ``(R+, R-)``: the ranks of the folds where A is higher, and where B is higher; ``None``
        when no fold differs.

    Examples
    --------
    Table 1 of Bifet et al. (docs/method.md §6): 52 for A, 3 for B.

    >>> A = [77.98, 72.26, 76.95, 77.94, 72.23, 76.90, 77.93, 72.37, 76.93, 77.97]
    >>> B = [77.91, 72.27, 76.97, 76.57, 71.63, 75.48, 75.75, 71.33, 74.54, 77.94]
    >>> signed_rank_sums(A, B)
    (52.0, 3.0)
    >>> signed_rank_sums([1.0, None], [1.0, 2.0]) is None
    True
    """
    xs, ys = _pairs(a, b)
    ranks = _signed_ranks([x - y for x, y in zip(xs, ys)])
    if not ranks.doubled:
        return None
    r2_plus, r2_minus = ranks.doubled_sums()
    return r2_plus / 2, r2_minus / 2


@functools.lru_cache(maxsize=4096)
def _sign_pvalue(wins: int, n: int) -> float:
    """``scipy.stats.binomtest(wins, n, 0.5).pvalue``, computed once per ``(wins, n)``."""
    import scipy.stats

    return float(scipy.stats.binomtest(wins, n, 0.5).pvalue)


def sign_test(a: Sequence[Value], b: Sequence[Value], alpha: float) -> dict:
    """Sign test over the paired per-fold values of learners A and B.

    On every fold the higher value wins; ties are counted but dropped from the test. The
    p-value is the exact two-sided binomial one, ``scipy.stats.binomtest(wins_a, wins_a +
    wins_b, 0.5)``. Folds where either value is undefined are dropped.

    Parameters
    ----------
    a, b : sequence of float or None
        The per-fold values of learners A and B (same fold order, same length).
    alpha : float
        Significance level in (0, 1).

    Returns
    -------
    dict
        ``{"wins_a", "wins_b", "ties", "p_value", "reject"}``; ``reject = p_value <= alpha``.
        Without a single non-tied fold the p-value is ``None`` and ``reject`` is ``False``.

    Examples
    --------
    Table 1 of Bifet et al.: A wins 8 of 10 folds, which the exact test does *not* find
    significant at 0.05 (the paper's critical value 8 is not what the exact test gives).

    >>> A = [77.98, 72.26, 76.95, 77.94, 72.23, 76.90, 77.93, 72.37, 76.93, 77.97]
    >>> B = [77.91, 72.27, 76.97, 76.57, 71.63, 75.48, 75.75, 71.33, 74.54, 77.94]
    >>> sign_test(A, B, 0.05)
    {'wins_a': 8, 'wins_b': 2, 'ties': 0, 'p_value': 0.109375, 'reject': False}
    >>> sign_test([1.0, None, 3.0], [1.0, 5.0, 3.0], 0.05)
    {'wins_a': 0, 'wins_b': 0, 'ties': 2, 'p_value': None, 'reject': False}
    """
    alpha = check_level(alpha)
    xs, ys = _pairs(a, b)
    wins_a = sum(1 for x, y in zip(xs, ys) if x > y)
    wins_b = sum(1 for x, y in zip(xs, ys) if x < y)
    ties = len(xs) - wins_a - wins_b
    p_value: float | None = None
    if wins_a + wins_b > 0:
        p_value = _sign_pvalue(wins_a, wins_a + wins_b)
    return {
        "wins_a": wins_a,
        "wins_b": wins_b,
        "ties": ties,
        "p_value": p_value,
        "reject": bool(p_value is not None and p_value <= alpha),
    }


# ----------------------------------------------------------------------------------------------
# three or more learners: Friedman and Nemenyi
# ----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=128)
def _nemenyi_q_cached(n_learners: int, alpha: float) -> float:
    import scipy.stats

    q = scipy.stats.studentized_range.ppf(1.0 - alpha, n_learners, np.inf)
    return float(q) / math.sqrt(2.0)


def nemenyi_q(n_learners: int, alpha: float) -> float:
    """The Nemenyi critical value ``q_alpha`` for ``n_learners`` learners (Demšar 2006).

    It is the ``1 - alpha`` quantile of the studentized range for ``n_learners`` groups and
    infinitely many degrees of freedom, divided by ``sqrt(2)``. The quantile is slow to
    compute, so values are cached per ``(n_learners, alpha)``.

    Parameters
    ----------
    n_learners : int
        Number of learners compared, at least 2.
    alpha : float
        Significance level in (0, 1).

    Returns
    -------
    float

    Examples
    --------
    Demšar (2006), Table 5(a), ``alpha = 0.05``, lists 1.960, 2.343, 2.569, 2.728 (his 2.343
    is 2.3437 cut short, not rounded):

    >>> [round(nemenyi_q(L, 0.05), 4) for L in (2, 3, 4, 5)]
    [1.96, 2.3437, 2.569, 2.7278]
    """
    n_learners = int(n_learners)
    if n_learners < 2:
        raise ValueError(f"the Nemenyi critical value needs at least 2 learners, got {n_learners}")
    return _nemenyi_q_cached(n_learners, check_level(alpha))


def friedman_nemenyi(
    values: Sequence[Sequence[Value]], learners: Sequence[str], alpha: float
) -> dict:
    """Average ranks, Friedman test and Nemenyi critical difference over folds.

    On every fold the learners are ranked by their value, rank 1 for the highest value (the
    best, for the measures compared here), tied values sharing the average of their ranks; the
    ranks are averaged over the folds. A fold where any learner's value is undefined is
    dropped for all learners; ``k`` below is the number of folds left ("usable folds").

    Parameters
    ----------
    values : sequence of sequences of float or None
        ``values[i][j]`` is the value of ``learners[i]`` on fold ``j`` (one row per learner,
        every row with the same number of folds).
    learners : sequence of str
        The learners' names, in the order of ``values``.
    alpha : float
        Significance level in (0, 1) of the critical difference.

    Returns
    -------
    dict
        ``learners``
            The names, as a list.
        ``average_ranks``
            The average rank of each learner (same order); each is ``None`` when no fold is
            usable.
        ``friedman``
            ``{"statistic", "p_value"}`` from ``scipy.stats.friedmanchisquare`` over the usable
            folds. Both are ``None`` with fewer than three learners, fewer than two usable
            folds, or when the test is undefined (all values equal within every fold).
        ``critical_difference``
            ``q_alpha * sqrt(L(L+1)/(6k))`` (see :func:`nemenyi_q`): two learners whose
            average ranks differ by more than this differ significantly. ``None`` with fewer
            than three learners or no usable fold.

    Examples
    --------
    >>> res = friedman_nemenyi(
    ...     [[0.9, 0.8, 0.7, None], [0.8, 0.8, 0.6, 0.5], [0.7, 0.6, 0.8, 0.9]],
    ...     ["a", "b", "c"], 0.05)
    >>> res["learners"], res["average_ranks"]
    (['a', 'b', 'c'], [1.5, 2.1666666666666665, 2.3333333333333335])
    >>> round(res["friedman"]["statistic"], 6), round(res["friedman"]["p_value"], 6)
    (1.272727, 0.529213)
    >>> round(res["critical_difference"], 6)
    1.913624
    """
    alpha = check_level(alpha)
    names = [str(n) for n in learners]
    n_learners = len(names)
    if len(values) != n_learners:
        raise ValueError(f"{len(values)} rows of values for {n_learners} learners")
    n_folds = len(values[0]) if n_learners else 0
    if any(len(row) != n_folds for row in values):
        raise ValueError("every learner needs the same number of folds")

    usable = [
        j for j in range(n_folds) if all(_defined(values[i][j]) for i in range(n_learners))
    ]
    k = len(usable)
    result: dict = {
        "learners": names,
        "average_ranks": [None] * n_learners,
        "friedman": {"statistic": None, "p_value": None},
        "critical_difference": None,
    }
    if n_learners == 0 or k == 0:
        return result

    # table[j, i]: usable fold j, learner i
    table = np.array([[float(values[i][j]) for i in range(n_learners)] for j in usable])
    import scipy.stats

    ranks = scipy.stats.rankdata(-table, method="average", axis=1)
    result["average_ranks"] = [float(r) for r in ranks.mean(axis=0)]

    if n_learners < 3:
        return result

    if k >= 2 and not np.all(table == table[:, :1]):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            fr = scipy.stats.friedmanchisquare(*table.T)
        statistic = _float_or_none(fr.statistic)
        p_value = _float_or_none(fr.pvalue)
        if statistic is not None and math.isfinite(statistic) and p_value is not None:
            result["friedman"] = {"statistic": statistic, "p_value": p_value}

    q = nemenyi_q(n_learners, alpha)
    result["critical_difference"] = q * math.sqrt(n_learners * (n_learners + 1) / (6.0 * k))
    return result


# ----------------------------------------------------------------------------------------------
# example-based: McNemar and the Q statistic (Gama et al. 2009)
# ----------------------------------------------------------------------------------------------


def mcnemar(folds_a: Sequence[Value], folds_b: Sequence[Value], alpha: float) -> dict:
    """McNemar's test over the examples both learners scored, summed over the folds.

    ``a`` counts the examples where learner A is wrong and B right, ``b`` the opposite; the
    counts may be weighted (fading window) and so need not be integers. With the sums
    ``a = sum(folds_a)`` and ``b = sum(folds_b)``, the statistic is
    ``M = sign(a - b) (a - b)^2 / (a + b)`` and the p-value is the chi-square (1 degree of
    freedom) survival function at ``|M|``. A fold whose count is ``None`` is left out of both
    sums (and listed as ``None``).

    The test is example-based: Bifet et al. show that it rejects a true null hypothesis most
    of the time on large streams, hence ``"example_based": True`` in the result.

    Parameters
    ----------
    folds_a : sequence of float
        Per fold, the (weighted) number of examples where A is wrong and B right.
    folds_b : sequence of float
        Per fold, the (weighted) number of examples where A is right and B wrong.
    alpha : float
        Significance level in (0, 1).

    Returns
    -------
    dict
        ``{"a", "b", "folds_a", "folds_b", "statistic", "p_value", "reject",
        "example_based"}``. When ``a + b == 0`` the statistic and p-value are ``None`` and
        ``reject`` is ``False``.

    Examples
    --------
    >>> res = mcnemar([10, 12], [3, 5], 0.05)
    >>> res["a"], res["b"], res["statistic"], round(res["p_value"], 6), res["reject"]
    (22, 8, 6.533333333333333, 0.010587, True)
    >>> mcnemar([0, 0], [0, 0], 0.05)["statistic"] is None
    True
    """
    alpha = check_level(alpha)
    if len(folds_a) != len(folds_b):
        raise ValueError(
            f"McNemar needs the same number of folds, got {len(folds_a)} and {len(folds_b)}"
        )
    list_a = [plain(x) if _defined(x) else None for x in folds_a]
    list_b = [plain(x) if _defined(x) else None for x in folds_b]
    a = sum(x for x, y in zip(list_a, list_b) if x is not None and y is not None)
    b = sum(y for x, y in zip(list_a, list_b) if x is not None and y is not None)
    result = {
        "a": a,
        "b": b,
        "folds_a": list_a,
        "folds_b": list_b,
        "statistic": None,
        "p_value": None,
        "reject": False,
        "example_based": True,
    }
    if a + b <= 0:
        return result
    diff = float(a - b)
    statistic = math.copysign(diff * diff / float(a + b), diff) if diff else 0.0
    import scipy.stats

    p_value = float(scipy.stats.chi2.sf(abs(statistic), 1))
    result["statistic"] = statistic
    result["p_value"] = p_value
    result["reject"] = bool(p_value <= alpha)
    return result


def _log_ratio(x: float, y: float) -> float | None:
    """``log(x / y)``, or ``None`` when it is undefined (a zero or negative side)."""
    if not (x > 0 and y > 0) or not (math.isfinite(x) and math.isfinite(y)):
        return None
    return math.log(x / y)


def q_statistic(loss_a: Sequence[Value], loss_b: Sequence[Value]) -> dict:
    """The Q statistic of Gama et al. (2009): ``Q = log(S_A / S_B)``.

    ``S`` is the fading-factor accumulated 0/1 loss of a learner; the value uses the sums over
    the folds, and the per-fold values are listed too. ``Q < 0`` favours learner A (smaller
    loss). A log of ``0/0``, ``x/0`` or ``0/x`` is undefined and reported as ``None``; folds
    where either loss is ``None`` are left out of the sums.

    Parameters
    ----------
    loss_a, loss_b : sequence of float or None
        The per-fold accumulated losses of learners A and B.

    Returns
    -------
    dict
        ``{"value": float or None, "folds": [float or None, ...]}``

    Examples
    --------
    >>> res = q_statistic([2.0, 1.0, 0.0], [1.0, 1.0, 3.0])
    >>> res["value"], res["folds"][:2], res["folds"][2]
    (-0.5108256237659907, [0.6931471805599453, 0.0], None)
    """
    if len(loss_a) != len(loss_b):
        raise ValueError(
            f"the Q statistic needs the same number of folds, got {len(loss_a)} and {len(loss_b)}"
        )
    folds: list[float | None] = []
    sum_a = 0.0
    sum_b = 0.0
    for x, y in zip(loss_a, loss_b):
        if _defined(x) and _defined(y):
            fx, fy = float(x), float(y)  # type: ignore[arg-type]
            sum_a += fx
            sum_b += fy
            folds.append(_log_ratio(fx, fy))
        else:
            folds.append(None)
    return {"value": _log_ratio(sum_a, sum_b), "folds": folds}

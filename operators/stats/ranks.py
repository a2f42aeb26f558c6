"""Learners compared over many streams: average ranks, Friedman's test, the Iman-Davenport
correction, Nemenyi's critical difference and Holm's step-down against the best learner
(Demšar 2006; García and Herrera 2008).

:func:`~foldstream.operators.stats.significance.friedman_nemenyi` ranks learners over the folds
of one stream, as the aggregator reports them; this module ranks them over streams, one value
per (stream, learner): the table a benchmark publishes. Every function is pure and returns a named
result; rank 1 is the best learner (the highest value, unless ``higher_is_better=False``).

Demšar's worked example (2006, §3.2.2: four learners on fourteen data sets, average ranks
3.143, 2.000, 2.893 and 1.964) serves as the example throughout:

>>> r = AverageRanks(("C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"), (3.143, 2.000, 2.893, 1.964),
...                  14)
>>> f = friedman_from_ranks(r)
>>> round(f.statistic, 2), round(iman_davenport(f).statistic, 2)
(9.28, 3.69)
>>> round(nemenyi_cd(4, 14, 0.05).cd, 3), round(nemenyi_cd(4, 14, 0.10).cd, 3)
(1.254, 1.118)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from foldstream.operators.stats.significance import check_level, nemenyi_q

__all__ = [
    "AverageRanks",
    "FriedmanTest",
    "ImanDavenportTest",
    "CriticalDifference",
    "HolmRow",
    "HolmTest",
    "RankTests",
    "average_ranks",
    "friedman",
    "friedman_from_ranks",
    "iman_davenport",
    "nemenyi_cd",
    "holm",
    "rank_tests",
]


class AverageRanks(NamedTuple):
    """Each learner's rank averaged over the streams (rank 1: the best; ties share the mean of
    their ranks).

    Attributes
    ----------
    learners : tuple of str
    ranks : tuple of float
        The average rank of each learner, in the order of ``learners``.
    n_streams : int
        The streams ranked (those where every learner has a value).
    per_stream : tuple of tuple of float
        The ranks on each stream ranked (empty when built from average ranks alone).
    """

    learners: tuple[str, ...]
    ranks: tuple[float, ...]
    n_streams: int
    per_stream: tuple[tuple[float, ...], ...] = ()

    @property
    def best(self) -> str:
        """The learner of the lowest average rank (the first, on a tie).

        >>> AverageRanks(("a", "b"), (1.5, 1.5), 2).best
        'a'
        """
        return self.learners[int(np.argmin(self.ranks))]


class FriedmanTest(NamedTuple):
    """Friedman's test of "all learners are equally good" over ``n_streams`` streams:
    ``statistic`` is chi-square distributed with ``df = k - 1`` under the null."""

    statistic: float
    p_value: float
    df: int
    n_streams: int
    n_learners: int


class ImanDavenportTest(NamedTuple):
    """Iman and Davenport's correction of Friedman's statistic, F-distributed with ``df1 =
    k - 1`` and ``df2 = (k - 1)(N - 1)`` (Friedman's chi-square is too conservative)."""

    statistic: float
    p_value: float
    df1: int
    df2: int


class CriticalDifference(NamedTuple):
    """Nemenyi's test: two learners whose average ranks differ by at least ``cd`` differ at
    level ``alpha``; ``q_alpha`` is the studentized range's quantile over ``sqrt(2)``."""

    q_alpha: float
    cd: float
    alpha: float
    n_learners: int
    n_streams: int


class HolmRow(NamedTuple):
    """One learner against the best: ``z`` of their rank difference, its two-sided
    ``p_value``, the Holm ``adjusted_p`` and ``threshold`` (``alpha / (m - i + 1)``), and
    whether the step-down rejects "as good as the best"."""

    learner: str
    rank: float
    z: float
    p_value: float
    adjusted_p: float
    threshold: float
    reject: bool


class HolmTest(NamedTuple):
    """Holm's step-down procedure against the best learner (``control``); ``rows`` ordered
    from the smallest p-value."""

    control: str
    alpha: float
    rows: tuple[HolmRow, ...]


class RankTests(NamedTuple):
    """Everything a benchmark reports over its streams for one measure."""

    ranks: AverageRanks
    friedman: FriedmanTest | None
    iman_davenport: ImanDavenportTest | None
    nemenyi: CriticalDifference | None
    holm: HolmTest | None


def _defined(x: object) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def average_ranks(values: Sequence[Sequence[float | None]], learners: Sequence[str],
                  higher_is_better: bool = True) -> AverageRanks:
    """Rank the learners on each stream and average the ranks.

    Parameters
    ----------
    values : sequence of sequences
        ``values[i][j]``: learner ``j`` on stream ``i`` (one row per stream). A stream where a
        learner's value is ``None`` or NaN is left out for every learner.
    learners : sequence of str
        The names, in the order of the columns.
    higher_is_better : bool
        Rank 1 for the highest value (accuracy, kappa) or for the lowest (an error).

    Examples
    --------
    >>> r = average_ranks([[0.9, 0.8, 0.8], [0.7, 0.9, 0.6], [0.5, None, 0.4]], ["a", "b", "c"])
    >>> r.ranks, r.n_streams, r.per_stream
    ((1.5, 1.75, 2.75), 2, ((1.0, 2.5, 2.5), (2.0, 1.0, 3.0)))
    """
    import scipy.stats

    names = tuple(str(n) for n in learners)
    if any(len(row) != len(names) for row in values):
        raise ValueError(f"every stream needs a value for each of the {len(names)} learners")
    rows = [row for row in values if all(_defined(v) for v in row)]
    if not rows:
        return AverageRanks(names, tuple(math.nan for _ in names), 0)
    table = np.array(rows, dtype=float)
    ranked = scipy.stats.rankdata(-table if higher_is_better else table, method="average",
                                  axis=1)
    return AverageRanks(names, tuple(float(r) for r in ranked.mean(axis=0)), len(rows),
                        tuple(tuple(float(r) for r in row) for row in ranked))


def friedman_from_ranks(ranks: AverageRanks) -> FriedmanTest:
    """Friedman's statistic from average ranks (Demšar 2006, eq. 3):
    ``12N / (k(k+1)) * (sum R_j^2 - k(k+1)^2 / 4)``, corrected for ties within a stream when
    the per-stream ranks are known (divided by ``1 - sum(t^3 - t) / (N k (k^2 - 1))``, as
    :func:`scipy.stats.friedmanchisquare` does).

    >>> f = friedman_from_ranks(AverageRanks(("a", "b", "c"), (1.0, 2.0, 3.0), 5))
    >>> f.statistic, round(f.p_value, 6), f.df
    (10.0, 0.006738, 2)
    """
    import scipy.stats

    k, n = len(ranks.learners), ranks.n_streams
    if k < 2 or n < 1:
        raise ValueError(f"Friedman's test needs 2 learners and a stream, got {k} and {n}")
    r = np.asarray(ranks.ranks, dtype=float)
    statistic = 12.0 * n / (k * (k + 1)) * (float(np.sum(r ** 2)) - k * (k + 1) ** 2 / 4.0)
    ties = 0.0
    for row in ranks.per_stream:
        _, counts = np.unique(np.asarray(row), return_counts=True)
        ties += float(np.sum(counts ** 3 - counts))
    correction = 1.0 - ties / (n * k * (k * k - 1))
    statistic = statistic / correction if correction > 0 else math.nan
    p_value = float(scipy.stats.chi2.sf(statistic, k - 1)) if math.isfinite(statistic) \
        else math.nan
    return FriedmanTest(statistic, p_value, k - 1, n, k)


def friedman(values: Sequence[Sequence[float | None]], learners: Sequence[str],
             higher_is_better: bool = True) -> FriedmanTest:
    """Friedman's test over streams: :func:`friedman_from_ranks` of :func:`average_ranks`.

    >>> f = friedman([[0.9, 0.8, 0.7], [0.8, 0.7, 0.6], [0.7, 0.8, 0.6]], ["a", "b", "c"])
    >>> round(f.statistic, 6), round(f.p_value, 6)
    (4.666667, 0.096972)
    """
    return friedman_from_ranks(average_ranks(values, learners, higher_is_better))


def iman_davenport(test: FriedmanTest) -> ImanDavenportTest:
    """``F = (N - 1) chi2 / (N (k - 1) - chi2)`` (Iman and Davenport 1980; Demšar eq. 4);
    where every stream ranks the learners alike, ``chi2 = N (k - 1)``: ``F`` is infinite and
    ``p`` is 0.

    >>> d = iman_davenport(FriedmanTest(10.0, 0.0067, 2, 5, 3))
    >>> d.statistic, d.p_value, d.df1, d.df2
    (inf, 0.0, 2, 8)
    """
    import scipy.stats

    k, n = test.n_learners, test.n_streams
    df1, df2 = k - 1, (k - 1) * (n - 1)
    denominator = n * (k - 1) - test.statistic
    if not math.isfinite(test.statistic) or df2 == 0:
        return ImanDavenportTest(math.nan, math.nan, df1, df2)
    if denominator <= 1e-12 * max(1.0, n * (k - 1)):
        return ImanDavenportTest(math.inf, 0.0, df1, df2)
    statistic = (n - 1) * test.statistic / denominator
    return ImanDavenportTest(statistic, float(scipy.stats.f.sf(statistic, df1, df2)), df1, df2)


def nemenyi_cd(n_learners: int, n_streams: int, alpha: float = 0.05) -> CriticalDifference:
    """Nemenyi's critical difference ``q_alpha * sqrt(k (k + 1) / (6 N))`` (Demšar eq. 5), its
    ``q_alpha`` from :func:`~foldstream.operators.stats.significance.nemenyi_q`.

    >>> c = nemenyi_cd(5, 10, 0.05)
    >>> round(c.q_alpha, 3), round(c.cd, 4)
    (2.728, 1.9288)
    """
    if n_streams < 1:
        raise ValueError(f"the critical difference needs a stream, got {n_streams}")
    q = nemenyi_q(n_learners, check_level(alpha))
    cd = q * math.sqrt(n_learners * (n_learners + 1) / (6.0 * n_streams))
    return CriticalDifference(q, cd, float(alpha), int(n_learners), int(n_streams))


def holm(ranks: AverageRanks, alpha: float = 0.05) -> HolmTest:
    """Holm's step-down procedure, every learner against the best (García and Herrera 2008).

    Learner ``j``'s ``z = (R_j - R_best) / sqrt(k (k + 1) / (6 N))`` gives a two-sided normal
    p-value; with the ``m = k - 1`` p-values ordered ``p_1 <= ... <= p_m``, the ``i``-th is
    rejected when it and every smaller one lie below ``alpha / (m - i + 1)``; its adjusted
    p-value is ``min(1, max_{j <= i} (m - j + 1) p_j)`` (rejected exactly when it is below
    ``alpha``).

    >>> h = holm(AverageRanks(("a", "b", "c"), (1.2, 2.0, 2.8), 10))
    >>> [(row.learner, round(row.adjusted_p, 4), row.reject) for row in h.rows]
    [('c', 0.0007, True), ('b', 0.0736, False)]
    """
    import scipy.stats

    alpha = check_level(alpha)
    k, n = len(ranks.learners), ranks.n_streams
    if k < 2 or n < 1:
        raise ValueError(f"Holm's procedure needs 2 learners and a stream, got {k} and {n}")
    best = int(np.argmin(ranks.ranks))
    se = math.sqrt(k * (k + 1) / (6.0 * n))
    others = []
    for j, (name, rank) in enumerate(zip(ranks.learners, ranks.ranks)):
        if j == best:
            continue
        z = (rank - ranks.ranks[best]) / se
        others.append((name, rank, z, float(2.0 * scipy.stats.norm.sf(abs(z)))))
    others.sort(key=lambda row: row[3])  # stable: a tie keeps the learners' order
    m = len(others)
    rows, adjusted, stepping = [], 0.0, True
    for i, (name, rank, z, p) in enumerate(others, 1):
        adjusted = min(1.0, max(adjusted, (m - i + 1) * p))
        threshold = alpha / (m - i + 1)
        stepping = stepping and p < threshold
        rows.append(HolmRow(name, rank, z, p, adjusted, threshold, stepping))
    return HolmTest(ranks.learners[best], alpha, tuple(rows))


def rank_tests(values: Sequence[Sequence[float | None]], learners: Sequence[str],
               alpha: float = 0.05, higher_is_better: bool = True) -> RankTests:
    """Average ranks, and with two learners and two streams at least, Friedman,
    Iman-Davenport, Nemenyi and Holm: what a benchmark reports for one measure.

    >>> t = rank_tests([[0.9, 0.8, 0.7], [0.8, 0.7, 0.6], [0.7, 0.8, 0.6]], ["a", "b", "c"])
    >>> t.ranks.ranks, t.ranks.best, round(t.nemenyi.cd, 3), t.holm.rows[0].learner
    ((1.3333333333333333, 1.6666666666666667, 3.0), 'a', 1.914, 'c')
    """
    ranks = average_ranks(values, learners, higher_is_better)
    if len(ranks.learners) < 2 or ranks.n_streams < 2:
        return RankTests(ranks, None, None, None, None)
    test = friedman_from_ranks(ranks)
    return RankTests(ranks, test, iman_davenport(test),
                     nemenyi_cd(len(ranks.learners), ranks.n_streams, alpha),
                     holm(ranks, alpha))

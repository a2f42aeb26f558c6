"""The tests over streams of a benchmark (operators/stats/ranks.py) against their references:
scipy's Friedman test, Demšar's (2006) Table 5a and a hand-worked Holm procedure."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from foldstream.operators.stats.ranks import AverageRanks, average_ranks, friedman, holm, \
    iman_davenport, nemenyi_cd, rank_tests

#: Demšar (2006), Table 5(a): the Nemenyi test's q_alpha for 2..10 learners.
DEMSAR_5A = {
    0.05: [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164],
    0.10: [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920],
}


@pytest.mark.parametrize("seed", range(20))
def test_friedman_equals_scipy(seed):
    rng = np.random.default_rng(seed)
    streams, learners = int(rng.integers(2, 30)), int(rng.integers(3, 11))
    values = rng.random((streams, learners))
    if seed % 2:  # ties within streams: scipy's tie correction
        values = np.round(values * 4) / 4
    names = [f"l{j}" for j in range(learners)]
    ours = friedman(values.tolist(), names)
    theirs = scipy.stats.friedmanchisquare(*values.T)
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-12, abs=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-12, abs=1e-12)
    assert (ours.df, ours.n_streams, ours.n_learners) == (learners - 1, streams, learners)


@pytest.mark.parametrize("alpha", sorted(DEMSAR_5A))
def test_nemenyi_critical_differences_equal_demsar_table_5a(alpha):
    for k, q_table in zip(range(2, 11), DEMSAR_5A[alpha]):
        for n in (5, 14, 30):
            cd = nemenyi_cd(k, n, alpha)
            scale = math.sqrt(k * (k + 1) / (6 * n))
            # the table gives three decimals (some cut short, not rounded)
            assert abs(cd.q_alpha - q_table) < 1e-3, (k, alpha)
            assert abs(cd.cd - q_table * scale) < 1e-3 * scale, (k, n, alpha)


def test_demsar_worked_example():
    """Demšar (2006) §3.2.2: chi2_F = 9.28, F_F = 3.69, CD = 1.25 (0.05) and 1.12 (0.10)."""
    ranks = AverageRanks(("C4.5", "m", "cf", "m+cf"), (3.143, 2.000, 2.893, 1.964), 14)
    from foldstream.operators.stats.ranks import friedman_from_ranks

    test = friedman_from_ranks(ranks)
    assert round(test.statistic, 2) == 9.28
    assert round(iman_davenport(test).statistic, 2) == 3.69
    assert round(nemenyi_cd(4, 14, 0.05).cd, 2) == 1.25
    assert round(nemenyi_cd(4, 14, 0.10).cd, 2) == 1.12


def test_holm_hand_worked():
    """Four learners on ten streams, average ranks a 1.5 (the best), b 2.0, c 3.0, d 3.5.

    The standard error is sqrt(k (k + 1) / (6 N)) = sqrt(20 / 60) = 0.57735; so
    z_b = 0.5 / 0.57735 = 0.86603, z_c = 1.5 / 0.57735 = 2.59808, z_d = 3.46410, and the
    two-sided normal p-values are p_b = 0.386476, p_c = 0.009375, p_d = 0.000532.
    Ordered d, c, b (m = 3): thresholds 0.05/3 = 0.016667, 0.05/2 = 0.025, 0.05/1 = 0.05;
    d rejects (0.000532 < 0.016667), c rejects (0.009375 < 0.025), b does not (0.386 > 0.05).
    Adjusted: 3 p_d = 0.001596, max(0.001596, 2 p_c = 0.018750) = 0.018750,
    max(0.018750, 1 p_b) = 0.386476.
    """
    result = holm(AverageRanks(("a", "b", "c", "d"), (1.5, 2.0, 3.0, 3.5), 10), 0.05)
    assert result.control == "a"
    assert [r.learner for r in result.rows] == ["d", "c", "b"]
    expected = [  # learner, z, p, adjusted p, threshold, reject
        ("d", 3.464102, 0.000532, 0.001596, 0.016667, True),
        ("c", 2.598076, 0.009375, 0.018750, 0.025, True),
        ("b", 0.866025, 0.386476, 0.386476, 0.05, False),
    ]
    for row, (name, z, p, adjusted, threshold, reject) in zip(result.rows, expected):
        assert row.learner == name
        assert row.z == pytest.approx(z, abs=1e-6)
        assert row.p_value == pytest.approx(p, abs=1e-6)
        assert row.adjusted_p == pytest.approx(adjusted, abs=1e-6)
        assert row.threshold == pytest.approx(threshold, abs=1e-6)
        assert row.reject is reject


def test_holm_stops_at_the_first_acceptance():
    """Ranks a 1.0, b 2.19, c 2.25, d 3.0 on ten streams (standard error 0.57735): p_d = 0.0005,
    p_c = 0.0304 (z 2.165), p_b = 0.0393 (z 2.061). c is kept (0.0304 > 0.05/2), so b is kept
    too, although its p lies below its own threshold 0.05/1."""
    rows = holm(AverageRanks(("a", "b", "c", "d"), (1.0, 2.19, 2.25, 3.0), 10), 0.05).rows
    assert [r.learner for r in rows] == ["d", "c", "b"]
    assert rows[2].p_value < rows[2].threshold
    assert [r.reject for r in rows] == [True, False, False]
    assert [r.adjusted_p for r in rows] == sorted(r.adjusted_p for r in rows)
    assert rows[2].adjusted_p == pytest.approx(rows[1].adjusted_p)  # max(2 p_c, p_b) = 2 p_c


def test_average_ranks_ties_and_lower_is_better():
    ranks = average_ranks([[0.1, 0.2, 0.2], [0.3, 0.1, 0.2]], ["a", "b", "c"],
                          higher_is_better=False)
    assert ranks.ranks == (2.0, 1.75, 2.25)
    assert ranks.per_stream == ((1.0, 2.5, 2.5), (3.0, 1.0, 2.0))


def test_rank_tests_need_two_streams():
    tests = rank_tests([[0.9, 0.8]], ["a", "b"])
    assert tests.friedman is None and tests.nemenyi is None and tests.ranks.n_streams == 1

"""The live-verdict confidence sequence (operators/stats/sequential.py, docs/method.md §12).

Worked values of the boundary, the accumulator against a recomputation from the definition
(exact rationals) under arbitrary cuts of the stream, and validity and power by simulation with
a look at every step.
"""

from __future__ import annotations

import json
import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldstream.operators.stats.sequential import (
    A_BETTER, B_BETTER, UNDECIDED, V_MIN, PairSequence, SequentialResult, boundary,
    boundary_array, fold_differences, interval, result, verdict_of
)

ALPHA = 0.05
EPS = 2.0**-52

# ----------------------------------------------------------------------------------------------
# the boundary
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "variance, digits, expected",
    [
        (0, 7, "45.2449172"),
        (100, 7, "45.2449172"),
        (1_000, 7, "136.7323272"),
        (10_000, 7, "416.4930746"),
        (10**6, 6, "4216.966410"),
    ],
)
def test_worked_values(variance, digits, expected):
    assert f"{boundary(variance, ALPHA, v_min=100.0):.{digits}f}" == expected
    assert f"{boundary(variance, ALPHA):.{digits}f}" == expected  # the default m is 100
    assert f"{boundary_array([variance], ALPHA)[0]:.{digits}f}" == expected


def test_default_v_min_and_flat_below_it():
    assert V_MIN == 100
    assert boundary(0.0, ALPHA) == boundary(37.5, ALPHA) == boundary(100.0, ALPHA)
    assert boundary(100.0001, ALPHA) > boundary(100.0, ALPHA)
    # a larger m raises the floor and lowers the boundary well above it
    assert boundary(0.0, ALPHA, v_min=1_000.0) > boundary(0.0, ALPHA)
    assert boundary(10**7, ALPHA, v_min=1_000.0) < boundary(10**7, ALPHA)
    # a smaller alpha is wider
    assert boundary(1_000.0, 0.01) > boundary(1_000.0, ALPHA) > boundary(1_000.0, 0.2)


def test_vectorised_boundary_agrees_with_scalar():
    variances = np.array([0.0, 1.0, 50.0, 99.999, 100.0, 100.5, 1e3, 12345.678, 1e6, 3.3e9])
    for alpha in (0.001, 0.05, 0.5):
        for v_min in (1.0, 100.0, 2_500.0):
            vec = boundary_array(variances, alpha, v_min)
            assert vec.shape == variances.shape
            for v, u in zip(variances.tolist(), vec.tolist()):
                assert abs(u - boundary(v, alpha, v_min)) <= 1e-12 * boundary(v, alpha, v_min)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_boundary_rejects_bad_variance(bad):
    with pytest.raises(ValueError):
        boundary(bad, ALPHA)
    with pytest.raises(ValueError):
        boundary_array([1.0, bad], ALPHA)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5])
def test_boundary_rejects_bad_alpha(alpha):
    with pytest.raises(ValueError):
        boundary(10.0, alpha)
    with pytest.raises(ValueError):
        interval(10, 1.0, 10.0, alpha)


def test_boundary_rejects_bad_v_min():
    for v_min in (0.0, -5.0, math.inf):
        with pytest.raises(ValueError):
            boundary(10.0, ALPHA, v_min)


# ----------------------------------------------------------------------------------------------
# interval, verdict, result
# ----------------------------------------------------------------------------------------------


def test_interval_empty_and_clipped():
    assert interval(0, 0.0, 0.0, ALPHA) == (-1.0, 1.0)
    assert interval(5, 5.0, 0.0, ALPHA) == (-1.0, 1.0)  # u = 45 > n: the whole range
    n, total, variance = 20_000, 400.0, 4_000.0
    u = boundary(variance, ALPHA)
    assert interval(n, total, variance, ALPHA) == ((total - u) / n, (total + u) / n)
    lower, upper = interval(200, 200.0, 0.0, ALPHA)  # B better on every example
    assert upper == 1.0 and lower == (200.0 - boundary(0.0, ALPHA)) / 200


def test_verdicts():
    assert (A_BETTER, B_BETTER, UNDECIDED) == ("a_better", "b_better", "undecided")
    assert verdict_of(0.001, 0.2) == B_BETTER
    assert verdict_of(-0.2, -0.001) == A_BETTER
    assert verdict_of(0.0, 0.2) == UNDECIDED
    assert verdict_of(-0.2, 0.0) == UNDECIDED
    assert verdict_of(-1.0, 1.0) == UNDECIDED
    assert result(20_000, 400.0, 4_000.0, ALPHA).verdict == B_BETTER
    assert result(20_000, -400.0, 4_000.0, ALPHA).verdict == A_BETTER
    assert result(20_000, 10.0, 4_000.0, ALPHA).verdict == UNDECIDED
    assert result(0, 0.0, 0.0, ALPHA).verdict == UNDECIDED


def test_result_record_is_plain_json():
    r = result(np.int64(20_000), np.float64(400.0), np.float32(4_000.0), np.float64(ALPHA))
    assert isinstance(r, SequentialResult)
    rec = r.as_record()
    assert list(rec) == ["n", "sum", "variance", "lower", "upper", "alpha", "verdict"]
    assert [type(v) for v in rec.values()] == [int, float, float, float, float, float, str]
    assert json.loads(json.dumps(rec)) == rec
    assert rec["n"] == 20_000 and rec["sum"] == 400.0 and rec["verdict"] == B_BETTER
    assert (rec["lower"], rec["upper"]) == interval(20_000, 400.0, 4_000.0, ALPHA)
    with pytest.raises(AttributeError):  # frozen
        r.n = 3  # type: ignore[misc]


# ----------------------------------------------------------------------------------------------
# the accumulator against the definition
# ----------------------------------------------------------------------------------------------


def reference(numerators: list[int], k: int) -> tuple[int, Fraction, Fraction]:
    """n, S_n and V_n from the definition, in exact rationals, by a plain loop."""
    total = Fraction(0)
    variance = Fraction(0)
    for t, numerator in enumerate(numerators):  # t examples seen before this one
        d = Fraction(numerator, k)
        m = total / t if t else Fraction(0)  # the predictable mean m_{t-1}
        variance += (d - m) ** 2
        total += d
    return len(numerators), total, variance


def float_reference(values: list[float]) -> tuple[float, float]:
    """S_n and V_n from the definition in plain floats."""
    total = 0.0
    variance = 0.0
    for t, d in enumerate(values):
        m = total / t if t else 0.0
        variance += (d - m) ** 2
        total += d
    return total, variance


METHODS = ["update_numerator", "numerators_list", "numerators_array", "update", "floats", "array"]


@st.composite
def cut_streams(draw):
    k = draw(st.integers(1, 10))
    # a bias towards one side now and then, so that intervals leave [-1, 1]
    low = draw(st.sampled_from([-k, 0, k // 2, k]))
    length = draw(st.integers(0, 400))
    values = st.integers(low, k) if low < k else st.just(k)
    numerators = draw(st.lists(values, min_size=length, max_size=length))
    cuts = sorted(draw(st.lists(st.integers(0, len(numerators)), max_size=8)))
    bounds = [0, *cuts, len(numerators)]
    pieces = [numerators[a:b] for a, b in zip(bounds, bounds[1:])]
    methods = [draw(st.sampled_from(METHODS)) for _ in pieces]
    return k, numerators, pieces, methods


def feed(seq: PairSequence, piece: list[int], method: str) -> None:
    k = seq.k
    if method == "update_numerator":
        for x in piece:
            seq.update_numerator(x)
    elif method == "numerators_list":
        seq.extend_numerators(piece)
    elif method == "numerators_array":
        seq.extend_numerators(np.asarray(piece, dtype=np.int8))
    elif method == "update":
        for x in piece:
            seq.update(x / k)
    elif method == "floats":
        seq.extend(iter([x / k for x in piece]))
    else:
        seq.extend(np.asarray(piece, dtype=np.float64) / k)


@pytest.mark.slow  # 200 random streams
@settings(max_examples=200, deadline=None)
@given(cut_streams(), st.sampled_from([0.01, 0.05, 0.3]), st.sampled_from([1.0, 100.0]))
def test_accumulator_matches_definition_under_any_cuts(stream, alpha, v_min):
    k, numerators, pieces, methods = stream

    one_by_one = PairSequence(k=k)
    for x in numerators:
        one_by_one.update_numerator(x)
    cut = PairSequence(k=k)
    for piece, method in zip(pieces, methods):
        feed(cut, piece, method)

    # bit-for-bit the same state however the stream is cut (== on floats, not approx)
    assert cut == one_by_one
    assert (cut.n, cut.int_total, cut.variance) == (
        one_by_one.n,
        one_by_one.int_total,
        one_by_one.variance,
    )

    n, total, variance = reference(numerators, k)
    assert cut.n == n
    assert Fraction(cut.int_total, k) == total
    assert cut.sum == float(total)  # both correctly rounded
    # each term is correctly rounded and the n additions each round once
    assert abs(Fraction(cut.variance) - variance) <= (n + 1) * EPS * variance
    f_total, f_variance = float_reference([x / k for x in numerators])
    assert cut.sum == pytest.approx(f_total, rel=1e-9, abs=1e-9)
    assert cut.variance == pytest.approx(f_variance, rel=1e-9, abs=1e-12)

    # lower and upper follow from (n, sum, variance)
    r = cut.result(alpha, v_min)
    assert (r.n, r.sum, r.variance, r.alpha) == (n, cut.sum, cut.variance, alpha)
    assert (r.lower, r.upper) == cut.interval(alpha, v_min)
    if n == 0:
        assert (r.lower, r.upper) == (-1.0, 1.0)
    else:
        u = boundary(float(variance), alpha, v_min)
        expected_lower = min(max((float(total) - u) / n, -1.0), 1.0)
        expected_upper = min(max((float(total) + u) / n, -1.0), 1.0)
        assert r.lower == pytest.approx(expected_lower, abs=1e-12)
        assert r.upper == pytest.approx(expected_upper, abs=1e-12)
        assert r.lower < r.upper
    assert r.verdict == verdict_of(r.lower, r.upper)


def test_first_terms_by_hand():
    seq = PairSequence(k=2)
    seq.extend([0.5, 1.0, 0.0, -0.5, 0.5])
    # m = 0, .5, .75, .5, .25 -> terms .25, .25, .5625, 1, .0625
    assert (seq.n, seq.int_total, seq.sum, seq.variance) == (5, 3, 1.5, 2.125)


def test_pickle_mid_stream():
    rng = np.random.default_rng(7)
    numerators = rng.integers(-3, 4, 5_000)
    whole = PairSequence(k=3)
    whole.extend_numerators(numerators)
    half = PairSequence(k=3)
    half.extend_numerators(numerators[:2_345])
    restored = pickle.loads(pickle.dumps(half))
    assert restored == half
    restored.extend_numerators(numerators[2_345:])
    assert restored == whole
    assert len(pickle.dumps(whole)) < 200  # O(1) state


def test_state_is_constant_size():
    seq = PairSequence(k=4)
    assert set(seq.__slots__) == {"k", "n", "int_total", "variance"}
    seq.extend_numerators(np.full(10_000, 4))
    assert not hasattr(seq, "__dict__")
    assert seq.int_total == 40_000 and seq.variance == 1.0  # only the first term is nonzero


def test_invalid_input_is_rejected_and_leaves_the_state():
    seq = PairSequence(k=2)
    seq.extend([0.5, -1.0])
    before = PairSequence(k=2, n=seq.n, int_total=seq.int_total, variance=seq.variance)
    bad_calls = [
        lambda: seq.update(0.3),  # not a multiple of 1/2
        lambda: seq.update(1.5),  # out of range
        lambda: seq.update(math.nan),
        lambda: seq.update_numerator(3),
        lambda: seq.update_numerator(1.0),
        lambda: seq.extend([0.5, 0.5, 0.25]),  # atomic: nothing of the call is applied
        lambda: seq.extend(np.array([[0.5]])),
        lambda: seq.extend_numerators([1, 2, -3]),
        lambda: seq.extend_numerators(np.array([0.5, 1.0])),
    ]
    for call in bad_calls:
        with pytest.raises(ValueError):
            call()
        assert seq == before
    seq.extend([])
    seq.extend_numerators([])
    seq.extend_numerators(np.array([], dtype=np.int64))
    assert seq == before
    for k in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            PairSequence(k=k)


# ----------------------------------------------------------------------------------------------
# fold_differences
# ----------------------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 10), st.integers(0, 60), st.integers(0, 2**32 - 1))
def test_fold_differences_brute_force(k, length, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, (k, length)).astype(np.int8)
    b = rng.integers(0, 2, (k, length)).astype(np.int8)
    scored = rng.random((k, length)) < rng.random()
    a[~scored] = 7  # unscored entries are ignored, whatever they hold
    numerators, mask = fold_differences(a, b, scored, k)
    assert numerators.shape == mask.shape == (length,)
    for t in range(length):
        expected = sum(int(a[f, t]) - int(b[f, t]) for f in range(k) if scored[f, t])
        assert numerators[t] == expected
        assert mask[t] == any(scored[f, t] for f in range(k))
    assert np.all(np.abs(numerators) <= k)
    seq = PairSequence(k=k)
    seq.extend_numerators(numerators[mask])
    assert seq.n == int(mask.sum())


def test_fold_differences_sign_convention():
    k, length = 5, 300
    a = np.ones((k, length), dtype=np.int8)  # A always wrong
    b = np.zeros((k, length), dtype=np.int8)  # B always right
    numerators, mask = fold_differences(a, b, np.ones((k, length), dtype=bool), k)
    seq = PairSequence(k=k)
    seq.extend_numerators(numerators[mask])
    assert seq.sum == float(length)
    assert seq.result(ALPHA).verdict == B_BETTER
    numerators, mask = fold_differences(b, a, np.ones((k, length), dtype=bool), k)
    seq = PairSequence(k=k)
    seq.extend_numerators(numerators[mask])
    assert seq.result(ALPHA).verdict == A_BETTER


def test_fold_differences_rejects_bad_input():
    a = np.zeros((3, 4), dtype=np.int8)
    ok = np.ones((3, 4), dtype=bool)
    with pytest.raises(ValueError):
        fold_differences(a, a, ok, 2)  # k does not match
    with pytest.raises(ValueError):
        fold_differences(a, a[:, :3], ok, 3)
    with pytest.raises(ValueError):
        fold_differences(a, a, ok.astype(np.int8), 3)  # scored must be bool
    with pytest.raises(ValueError):
        fold_differences(a + 2, a, ok, 3)  # scored losses must be 0/1


# ----------------------------------------------------------------------------------------------
# validity and power by simulation (a look at every step)
# ----------------------------------------------------------------------------------------------

N_SEQUENCES = 2_000
STEPS = 20_000
CHUNK = 250
TOLERANCE = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / N_SEQUENCES)


def draw_symmetric(rng, shape):  # k = 1: P(1) = P(-1) = 0.1, mean 0
    u = rng.random(shape)
    return (u < 0.1).astype(np.int64) - (u >= 0.9)


def draw_skewed(rng, shape):  # k = 10: d = 0.9 w.p. 0.1, d = -0.1 w.p. 0.9, mean 0
    return np.where(rng.random(shape) < 0.1, 9, -1).astype(np.int64)


def draw_shifted(rng, shape):  # k = 1: P(1) = 0.11, P(-1) = 0.09, mean 0.02
    u = rng.random(shape)
    return (u < 0.11).astype(np.int64) - (u >= 0.91)


def simulate(draw, k, seed):
    """Fractions of sequences where, at some step, lower > 0 ("low"), upper < 0 ("up"), either
    ("ever"); where lower > 0 at the last step ("final"); and where a fixed-n 95% normal
    interval, S_n -+ 1.96 sqrt(V_n), ever excluded 0 from step 30 on ("naive")."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, STEPS + 1, dtype=np.int64)
    before = np.maximum(t - 1, 1)
    out = {key: np.zeros(N_SEQUENCES, bool) for key in ("low", "up", "ever", "final", "naive")}
    for start in range(0, N_SEQUENCES, CHUNK):
        rows = slice(start, min(start + CHUNK, N_SEQUENCES))
        numerators = draw(rng, (rows.stop - rows.start, STEPS))
        int_total = np.cumsum(numerators, axis=1)
        e = numerators * before - (int_total - numerators)  # k n (d - m_{n-1}), exact
        variance = np.cumsum((e * e) / (k * k * before * before).astype(np.float64), axis=1)
        total = int_total / k
        u = boundary_array(variance, ALPHA)
        lower = np.clip((total - u) / t, -1.0, 1.0)
        upper = np.clip((total + u) / t, -1.0, 1.0)
        out["low"][rows] = (lower > 0).any(axis=1)
        out["up"][rows] = (upper < 0).any(axis=1)
        out["ever"][rows] = ((lower > 0) | (upper < 0)).any(axis=1)
        out["final"][rows] = lower[:, -1] > 0
        out["naive"][rows] = (np.abs(total) > 1.96 * np.sqrt(variance))[:, 29:].any(axis=1)
        if start == 0:  # the vectorised recomputation is the accumulator's arithmetic
            seq = PairSequence(k=k)
            seq.extend_numerators(numerators[0])
            assert seq.int_total == int_total[0, -1]
            assert seq.variance == variance[0, -1]
            assert seq.interval(ALPHA) == (lower[0, -1], upper[0, -1])
    return {key: float(value.mean()) for key, value in out.items()}


@pytest.mark.slow  # thousands of simulated streams
@pytest.mark.parametrize(
    "draw, k, seed",
    [(draw_symmetric, 1, 20_231), (draw_skewed, 10, 20_232)],
    ids=["symmetric", "skewed"],
)
def test_validity_under_continuous_monitoring(draw, k, seed):
    frac = simulate(draw, k, seed)
    assert frac["ever"] <= TOLERANCE, frac
    # the harness sees a boundary that ignores the looks: a fixed-n interval fails badly
    assert frac["naive"] > 2 * TOLERANCE, frac


@pytest.mark.slow  # simulated streams
def test_power():
    frac = simulate(draw_shifted, 1, 20_233)
    assert frac["final"] >= 0.90, frac  # lower > 0 at step 20,000
    assert frac["low"] >= frac["final"]
    assert frac["up"] <= TOLERANCE, frac  # the wrong verdict stays rare

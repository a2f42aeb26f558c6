"""Tests of foldstream.operators.stats.normalization (docs/method.md §5 binary measures, §8)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from foldstream.operators.stats import normalization as nz
from foldstream.operators.stats.normalization import NORMALIZABLE, binary_measure, normalize


# ----------------------------------------------------------------------------------------------
# a straightforward scalar reference, from the definitions of docs/method.md §5
# ----------------------------------------------------------------------------------------------


def _ratio(num: float, den: float) -> float:
    return num / den if den != 0 else math.nan


def reference(name: str, tp: float, fn: float, fp: float, tn: float) -> float:
    """The measure from the 2x2 matrix M (rows = true class: +, -), computed the long way."""
    M = [[tp, fn], [fp, tn]]
    n = tp + fn + fp + tn
    if n == 0:
        return math.nan
    rows = [sum(M[c]) for c in range(2)]
    cols = [M[0][c] + M[1][c] for c in range(2)]
    p0 = (M[0][0] + M[1][1]) / n
    recalls = [_ratio(M[c][c], rows[c]) for c in range(2)]
    if name == "accuracy":
        return p0
    if name == "precision":
        return _ratio(tp, tp + fp)
    if name == "recall":
        return recalls[0]
    if name == "f1":
        prec, rec = _ratio(tp, tp + fp), recalls[0]
        if tp == 0:  # 2tp/(2tp+fp+fn): 0 when fp + fn > 0, undefined on the empty matrix
            return 0.0 if fp + fn > 0 else math.nan
        return 2 * prec * rec / (prec + rec)
    if name == "kappa":
        # in exact rationals: in floats p0 - pc cancels when pc is near 1 (weighted counts such
        # as 1023, 1/16, 1/16, 0 lose eight digits)
        q = [[Fraction(v) for v in row] for row in M]
        qn, qrows, qcols = sum(map(sum, q)), [sum(r) for r in q], [q[0][c] + q[1][c] for c in range(2)]
        pc = sum(qrows[c] * qcols[c] for c in range(2)) / (qn * qn)
        return float(((q[0][0] + q[1][1]) / qn - pc) / (1 - pc)) if pc != 1 else math.nan
    if name == "mcc":
        den = math.sqrt(rows[0] * rows[1] * cols[0] * cols[1])
        return _ratio(tp * tn - fp * fn, den)
    if name == "geometric_mean":
        return math.sqrt(recalls[0] * recalls[1])
    if name == "balanced_accuracy":
        return (recalls[0] + recalls[1]) / 2
    raise AssertionError(name)


def _same(x: float, y: float) -> bool:
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


count = st.integers(0, 60)
weighted = st.one_of(st.just(0.0), st.floats(1e-3, 1e4))  # weighted (fading) counts


# ----------------------------------------------------------------------------------------------
# binary_measure
# ----------------------------------------------------------------------------------------------


def test_normalizable_names():
    assert NORMALIZABLE == ("accuracy", "precision", "recall", "f1", "kappa", "mcc",
                            "geometric_mean", "balanced_accuracy")
    assert "kappa_m" not in NORMALIZABLE


def test_table5_of_bifet():
    # true +: 40 predicted +, 30 predicted -; true -: 5 predicted +, 25 predicted -
    tp, fn, fp, tn = 40, 30, 5, 25
    assert round(binary_measure("accuracy", tp, fn, fp, tn), 6) == 0.65
    assert round(binary_measure("kappa", tp, fn, fp, tn), 6) == 0.326923
    assert round(binary_measure("mcc", tp, fn, fp, tn), 6) == 0.372839
    assert round(binary_measure("geometric_mean", tp, fn, fp, tn), 6) == 0.690066
    assert round(binary_measure("balanced_accuracy", tp, fn, fp, tn), 6) == 0.702381
    assert round(binary_measure("recall", tp, fn, fp, tn), 6) == 0.571429
    for name in NORMALIZABLE:
        assert type(binary_measure(name, tp, fn, fp, tn)) is float
        assert _same(binary_measure(name, tp, fn, fp, tn), reference(name, tp, fn, fp, tn))


def test_table5_kappa_via_pc():
    # pc = 0.48 in docs/method.md §5
    kappa = binary_measure("kappa", 40, 30, 5, 25)
    assert kappa == pytest.approx((0.65 - 0.48) / (1 - 0.48), abs=1e-15)


@pytest.mark.parametrize("name", NORMALIZABLE)
def test_empty_matrix_is_undefined(name):
    assert math.isnan(binary_measure(name, 0, 0, 0, 0))


def test_undefined_cases():
    assert math.isnan(binary_measure("precision", 0, 3, 0, 4))
    assert math.isnan(binary_measure("recall", 0, 0, 2, 4))
    assert math.isnan(binary_measure("kappa", 5, 0, 0, 0))  # pc = 1
    assert math.isnan(binary_measure("mcc", 5, 3, 0, 0))  # no true negatives
    assert math.isnan(binary_measure("geometric_mean", 5, 3, 0, 0))
    assert binary_measure("f1", 0, 3, 2, 4) == 0.0


def test_unknown_measure():
    with pytest.raises(ValueError):
        binary_measure("kappa_m", 1, 2, 3, 4)


def test_no_warnings_on_undefined():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in NORMALIZABLE:
            binary_measure(name, np.zeros(3), np.zeros(3), np.zeros(3), np.arange(3))


@settings(max_examples=200, deadline=None)
@given(tp=count, fn=count, fp=count, tn=count, positive=st.sampled_from([0, 1]))
def test_binary_measure_is_the_measure_of_the_records(tp, fn, fp, tn, positive):
    """binary_measure and measures.compute share their formulas (f1, the recall means) or, for
    kappa and MCC, give the closed form of the same definition: the same value (bit for bit
    where they share the code) on every 2x2 matrix whose rows and columns are not empty."""
    from foldstream.operators.stats.measures import binary_counts, compute
    from foldstream.operators.stats.windows import Counts

    neg = 1 - positive  # the window's codes: the positive class need not be the first
    cm = {(positive, positive): tp, (positive, neg): fn, (neg, positive): fp, (neg, neg): tn}
    cm = {k: float(v) for k, v in cm.items() if v}
    counts = Counts(float(tp + fn + fp + tn), cm, {positive: float(tp + fn), neg: float(fp + tn)},
                    0.0, 0.0)
    assert binary_counts(counts, positive, 2) == (tp, fn, fp, tn)
    values = compute(counts, ["x", "y"], positive)
    assume(min(tp + fn, fp + tn, tp + fp, fn + tn) > 0)
    for name in NORMALIZABLE:
        mine = binary_measure(name, tp, fn, fp, tn)
        if name in ("f1", "balanced_accuracy", "precision", "recall", "accuracy"):
            assert mine == values[name], name
        elif name == "geometric_mean":  # one formula, but numpy's ** 0.5 is sqrt and a Python
            # float's is pow: now and then one ulp apart (tp=1, fn=1, fp=43, tn=56, positive=0)
            assert mine == pytest.approx(values[name], rel=4e-16, abs=0), name
        else:
            assert _same(mine, values[name]), name


@pytest.mark.parametrize("name", NORMALIZABLE)
@settings(max_examples=150, deadline=None)
@given(tp=count, fn=count, fp=count, tn=count)
def test_binary_measure_matches_reference(name, tp, fn, fp, tn):
    assert _same(binary_measure(name, tp, fn, fp, tn), reference(name, tp, fn, fp, tn))


@pytest.mark.parametrize("name", NORMALIZABLE)
@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(weighted, weighted, weighted, weighted), min_size=1, max_size=20))
def test_binary_measure_vectorised(name, matrices):
    tp, fn, fp, tn = (np.array(c) for c in zip(*matrices))
    out = binary_measure(name, tp, fn, fp, tn)
    assert isinstance(out, np.ndarray) and out.shape == (len(matrices),)
    for value, m in zip(out, matrices):
        assert _same(float(value), reference(name, *m))
        if not math.isnan(value) and name != "kappa" and name != "mcc":
            assert -1e-12 <= value <= 1 + 1e-12
        if not math.isnan(value):
            assert -1 - 1e-12 <= value <= 1 + 1e-12


def test_binary_measure_broadcasts():
    out = binary_measure("precision", np.arange(3)[:, None], 0, np.arange(2)[None, :], 5)
    assert out.shape == (3, 2)
    assert math.isnan(out[0, 0]) and out[0, 1] == 0.0 and out[2, 1] == pytest.approx(2 / 3)


# ----------------------------------------------------------------------------------------------
# normalize
# ----------------------------------------------------------------------------------------------


def test_worked_example_brzezinski():
    x, info = normalize("precision", 150, 10, 0.9, max_matrices=10**6)
    assert x == 506 / 1661
    assert type(x) is float
    assert info == {"positives": 150, "negatives": 10, "scaled": False}
    y, info = normalize("precision", 10, 150, 0.9, max_matrices=10**6)
    assert y == 1650 / 1661
    assert info == {"positives": 10, "negatives": 150, "scaled": False}


def test_worked_example_with_default_limit():
    assert normalize("precision", 150, 10, 0.9)[0] == 506 / 1661
    assert normalize("precision", 10, 150, 0.9)[0] == 1650 / 1661


def _brute_force(name: str, P: int, N: int, value: float) -> float:
    hits = 0
    for tp in range(P + 1):
        for fp in range(N + 1):
            v = reference(name, tp, P - tp, fp, N - fp)
            if math.isnan(v) or v <= value + 1e-12:
                hits += 1
    return hits / ((P + 1) * (N + 1))


@pytest.mark.parametrize("name", NORMALIZABLE)
@settings(max_examples=60, deadline=None)
@given(P=st.integers(0, 25), N=st.integers(0, 25), data=st.data())
def test_normalize_matches_brute_force(name, P, N, data):
    # a value read off a real matrix (so it hits grid values exactly) or an arbitrary one
    tp = data.draw(st.integers(0, P))
    fp = data.draw(st.integers(0, N))
    value = data.draw(st.one_of(
        st.just(binary_measure(name, tp, P - tp, fp, N - fp)),
        st.floats(-1.5, 1.5),
    ))
    x, info = normalize(name, P, N, value)
    if math.isnan(value):
        assert x is None
    else:
        assert x == _brute_force(name, P, N, value)
        assert 0.0 <= x <= 1.0
    assert info == {"positives": P, "negatives": N, "scaled": False}


def test_undefined_counts_as_lowest():
    # P = 2, N = 2: only tp = fp = 0 leaves precision undefined; every defined value is >= 0
    assert normalize("precision", 2, 2, -1.0)[0] == 1 / 9
    assert normalize("precision", 2, 2, -math.inf)[0] == 1 / 9
    assert normalize("precision", 2, 2, 1.0)[0] == 1.0
    # no positives: precision is 0 or undefined on every matrix
    assert normalize("precision", 0, 5, 0.0)[0] == 1.0


def test_value_none_or_nan():
    assert normalize("f1", 3, 4, None) == (None, {"positives": 3, "negatives": 4, "scaled": False})
    assert normalize("f1", 3, 4, float("nan"))[0] is None


def test_normalize_accepts_numpy_value():
    x, _ = normalize("precision", 150, 10, np.float64(0.9))
    assert type(x) is float and x == 506 / 1661


@pytest.mark.parametrize("name", NORMALIZABLE)
def test_normalize_is_monotone(name):
    grid = np.linspace(-1.2, 1.2, 97)
    xs = [normalize(name, 30, 7, v)[0] for v in grid]
    assert all(a <= b for a, b in zip(xs, xs[1:]))
    assert xs[-1] == 1.0


def test_normalize_rejects_unknown_measure():
    with pytest.raises(ValueError):
        normalize("kappa_m", 10, 10, 0.5)


def test_recall_is_nearly_uniform():
    # Brzezinski et al.: the pmf of recall resembles a uniform distribution
    assert normalize("recall", 99, 20, 0.5)[0] == pytest.approx(0.5, abs=0.01)


def test_the_grid_of_a_window_is_enumerated_once(monkeypatch):
    calls = []

    def counting(*args):
        calls.append(args[0])
        return binary_measure(*args)

    monkeypatch.setattr(nz, "binary_measure", counting)
    # 977 positives, 39 negatives: a window no other test normalises, so not enumerated yet
    low, high = normalize("mcc", 977, 39, 0.3), normalize("mcc", 977, 39, 0.7)
    assert low[0] < high[0]
    assert normalize("mcc", 977, 39, 0.3) == low
    assert calls == ["mcc"]
    normalize("mcc", 978, 39, 0.3)
    assert calls == ["mcc", "mcc"]


# ----------------------------------------------------------------------------------------------
# scaling
# ----------------------------------------------------------------------------------------------


def test_scaled_output():
    x, info = normalize("kappa", 5000, 400, 0.5)
    assert info["scaled"] is True
    p, n = info["positives"], info["negatives"]
    assert (p + 1) * (n + 1) <= 40_000
    assert p / n == pytest.approx(5000 / 400, rel=0.02)
    assert x == normalize("kappa", p, n, 0.5)[0]


def test_scale_counts_examples():
    assert nz.scale_counts(150, 10, 40_000) == (150, 10, False)
    assert nz.scale_counts(1000, 100, 40_000) == (620, 62, True)
    assert nz.scale_counts(0, 10**6, 40_000) == (0, 39_999, True)
    assert nz.scale_counts(10**6, 0, 40_000) == (39_999, 0, True)
    assert nz.scale_counts(10**6, 1, 40_000) == (19_999, 1, True)  # N stays at least 1
    assert nz.scale_counts(5, 5, 4) == (1, 1, True)


@pytest.mark.parametrize("args", [(-1, 5, 100), (5, -1, 100), (5, 5, 3)])
def test_scale_counts_rejects(args):
    with pytest.raises(ValueError):
        nz.scale_counts(*args)


@settings(max_examples=300, deadline=None)
@given(P=st.integers(0, 10**6), N=st.integers(0, 10**6), limit=st.integers(4, 100_000))
def test_scale_counts_properties(P, N, limit):
    p, n, scaled = nz.scale_counts(P, N, limit)
    assert type(p) is int and type(n) is int and type(scaled) is bool
    assert (p + 1) * (n + 1) <= limit
    assert scaled == ((P + 1) * (N + 1) > limit)
    if not scaled:
        assert (p, n) == (P, N)
        return
    assert p <= P and n <= N
    assert (p == 0) == (P == 0) and (n == 0) == (N == 0)
    if P and N and min(p, n) >= 10:
        # both sides keep enough resolution: the ratio is kept to within a few percent
        assert p / n == pytest.approx(P / N, rel=0.15)


def test_scale_counts_keeps_ratio_closely():
    for P, N in [(1000, 100), (5000, 400), (12345, 6789), (40_000, 40_000), (300, 7000)]:
        p, n, scaled = nz.scale_counts(P, N, 40_000)
        assert scaled
        assert p / n == pytest.approx(P / N, rel=0.02)
        assert (p + 1) * (n + 1) > 0.9 * 40_000  # and uses most of the budget

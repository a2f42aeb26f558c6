"""The per-fold evaluator against a brute-force recomputation from the raw per-example records.

For random streams (multi-class, classes appearing late, predictions of None, holdout masks from
weights 0..5, random batch cuts and reporting intervals) every report of a FoldEvaluator must
equal what this file computes from scratch: which examples each window holds (ADWIN's width
taken from a separate river ADWIN fed the same losses), the majority baseline recomputed from
the window as it was before each example, and every measure from numpy formulas written here,
not from project code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from river.drift import ADWIN

from foldstream.operators.stages.evaluator import EvalPlan, FoldEvaluator
from foldstream.operators.records.base import PredictionBatch
from foldstream.operators.stats.windows import WindowSpec

WINDOWS = [
    (("kind", "cumulative"),),
    (("kind", "sliding"), ("size", 7)),
    (("kind", "sliding"), ("size", 40)),
    (("kind", "fading"), ("alpha", 0.9)),
    (("kind", "adwin"), ("delta", 0.002)),
    (("kind", "adwin"), ("delta", 0.5)),
]


# ------------------------------------------------------------------ brute force, from scratch
def window_weights(kind: dict, losses: list[float]) -> list[np.ndarray]:
    """For each time T, the weight of every scored example 0..T in the window after T."""
    out = []
    n = len(losses)
    adwin = ADWIN(delta=kind["delta"]) if kind["kind"] == "adwin" else None
    for T in range(n):
        idx = np.arange(T + 1)
        if kind["kind"] == "cumulative":
            w = np.ones(T + 1)
        elif kind["kind"] == "sliding":
            w = (idx > T - kind["size"]).astype(float)
        elif kind["kind"] == "fading":
            w = kind["alpha"] ** (T - idx).astype(float)
        else:
            adwin.update(losses[T])
            w = (idx > T - adwin.width).astype(float)
        out.append(w)
    return out


def majority_before(ts: list[int], weights: list[np.ndarray], i: int) -> int:
    if i == 0:
        return -1
    w = weights[i - 1]
    totals: dict[int, float] = {}
    for j in range(i):
        if w[j] > 0:
            totals[ts[j]] = totals.get(ts[j], 0.0) + w[j]
    if not totals:
        return -1
    best = max(totals.values())
    return min(c for c, v in totals.items() if math.isclose(v, best, rel_tol=1e-12) or v == best)


def brute_measures(ts, ps, maj_ok, per_ok, w, n_classes, positive=0) -> dict:
    M = np.zeros((n_classes, n_classes))
    none = np.zeros(n_classes)
    for t, p, wi in zip(ts, ps, w):
        if p < 0:
            none[t] += wi
        else:
            M[t, p] += wi
    n = w.sum()
    rows = M.sum(axis=1) + none
    cols = M.sum(axis=0)
    diag = np.diag(M)

    def div(a, b):
        return a / b if b else None

    def kappa_vs(p0, base):
        return None if p0 is None or base is None or 1 - base <= 1e-12 else (p0 - base) / (1 - base)

    p0 = div(diag.sum(), n)
    pc = div((rows * cols).sum(), n * n)
    pm = div(float(np.dot(w, maj_ok)), n)
    pper = div(float(np.dot(w, per_ok)), n)
    kappa, kappa_per = kappa_vs(p0, pc), kappa_vs(p0, pper)
    recalls = [diag[c] / rows[c] if rows[c] > 0 else None for c in range(n_classes)]
    present = np.array([r for r in recalls if r is not None])
    out = {
        "accuracy": p0,
        "kappa": kappa,
        "kappa_m": kappa_vs(p0, pm),
        "kappa_per": kappa_per,
        "kappa_plus": None if kappa is None or kappa_per is None
        else math.sqrt(max(kappa, 0) * max(kappa_per, 0)),
        "arithmetic_mean": present.mean() if len(present) else None,
        "geometric_mean": float(np.prod(present)) ** (1 / len(present)) if len(present) else None,
        "harmonic_mean": (0.0 if present.min() == 0 else len(present) / (1 / present).sum())
        if len(present) else None,
    }
    out["balanced_accuracy"] = out["arithmetic_mean"]
    if n_classes <= 2:
        tp = M[positive, positive]
        out["precision"] = div(tp, cols[positive])
        out["recall"] = div(tp, rows[positive])
        out["f1"] = div(2 * tp, cols[positive] + rows[positive])
    else:
        precisions = [diag[c] / cols[c] for c in range(n_classes) if cols[c] > 0]
        f1s = [2 * diag[c] / (cols[c] + rows[c]) for c in range(n_classes) if cols[c] + rows[c] > 0]
        out["precision"] = float(np.mean(precisions)) if precisions else None
        out["recall"] = out["arithmetic_mean"]
        out["f1"] = float(np.mean(f1s)) if f1s else None
    a = n * n - (cols ** 2).sum()
    b = n * n - (rows ** 2).sum()
    out["mcc"] = (n * diag.sum() - (rows * cols).sum()) / math.sqrt(a * b) if a > 1e-12 * n * n and b > 1e-12 * n * n else None
    for c in range(n_classes):
        out[f"recall[L{c}]"] = recalls[c]
    # The chance, majority and persistent accuracies behind the kappas, for the comparison below.
    baselines = {"kappa": pc, "kappa_m": pm, "kappa_per": pper}
    return out, baselines


def close_kappa(got, want, base) -> bool:
    """Kappas divide by 1 - baseline: when the baseline is nearly perfect (a faded window of one
    class), the rounding of two summation orders (about 1e-15 on the baseline) is magnified by
    1 / (1 - baseline), so the tolerance grows with that factor. The error is absolute (a kappa
    near 0 has it too: 0.0 against -2.4e-9 on a holdout fading window whose majority baseline
    is right but for 1e-4), so both tolerances grow."""
    if got is None or want is None:
        return got is None and want is None
    tolerance = max(1e-9, 1e-12 / max(1 - base, 1e-300))
    return math.isclose(got, want, rel_tol=tolerance, abs_tol=tolerance)


def close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


# -------------------------------------------------------------------------------- the stream
@st.composite
def streams(draw):
    n = draw(st.integers(1, 260))
    n_labels = draw(st.integers(1, 4))
    late = draw(st.integers(0, n))  # the last label is only drawn from here on
    raw = [draw(st.integers(0, n_labels - 1 if i >= late or n_labels == 1 else n_labels - 2))
           for i in range(n)]
    codes: dict[int, int] = {}
    ts = [codes.setdefault(r, len(codes)) for r in raw]
    seen = [max(ts[: i + 1]) + 1 for i in range(n)]
    # Predictions: usually right, sometimes another seen class, sometimes None (-1).
    noise = draw(st.floats(0.0, 0.8))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    preds = []
    for learner in range(2):
        p = []
        for i, t in enumerate(ts):
            u = rng.random()
            p.append(t if u > noise else (-1 if u < noise * 0.1 else int(rng.integers(0, seen[i]))))
        preds.append(p)
    weights = [draw(st.integers(0, 5)) for _ in range(n)]
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=6))))
    return ts, preds, weights, cuts


@pytest.mark.slow  # 60 random streams against a brute force
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.sampled_from(WINDOWS), st.booleans(), st.integers(1, 50))
def test_fold_evaluator_equals_brute_force(stream, window, prequential, every):
    ts, preds, weights, cuts = stream
    n = len(ts)
    labels = [f"L{c}" for c in range(max(ts) + 1)]
    prev = [-1] + ts[:-1]
    scored = [True] * n if prequential else [w == 0 for w in weights]
    plan = EvalPlan(("a", "b"), window=WindowSpec(**dict(window)), report_every=every, page_hinkley=None,
                    adwin_alarms=False)
    evaluator = FoldEvaluator("s", 0, plan)
    reports = []
    bounds = [0, *[c for c in cuts if c < n], n]
    for seq, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        classes = labels[: max(ts[:hi]) + 1]
        for learner, p in zip(("b", "a"), (preds[1], preds[0])):  # any order across learners
            reports += evaluator.add(PredictionBatch(
                "s", 0, learner, seq, lo, ts[lo:hi], prev[lo:hi], p[lo:hi], scored[lo:hi],
                classes, final=hi == n))
    expected_positions = sorted({*range(every, n + 1, every), n})
    assert [r.position for r in reports] == expected_positions
    assert reports[-1].final and not any(r.final for r in reports[:-1])

    kind = dict(window)
    # Only scored examples enter a window.
    idx = [i for i in range(n) if scored[i]]
    st_ts = [ts[i] for i in idx]
    per_learner = {}
    for name, p in (("a", preds[0]), ("b", preds[1])):
        st_ps = [p[i] for i in idx]
        losses = [float(t != q) for t, q in zip(st_ts, st_ps)]
        weights_t = window_weights(kind, losses)
        maj = [majority_before(st_ts, weights_t, i) for i in range(len(idx))]
        per_learner[name] = (st_ps, losses, weights_t, maj)

    for report in reports:
        m = sum(1 for i in idx if i < report.position)  # scored examples so far
        n_classes = max(ts[: report.position]) + 1
        sizes = {}
        for name, (st_ps, losses, weights_t, maj) in per_learner.items():
            got = report.learners[name]["values"]
            if m == 0:
                assert got["accuracy"] is None
                continue
            w = weights_t[m - 1]
            maj_ok = np.array([maj[i] == st_ts[i] for i in range(m)], dtype=float)
            per_ok = np.array([prev[idx[i]] == st_ts[i] for i in range(m)], dtype=float)
            want, baselines = brute_measures(st_ts[:m], st_ps[:m], maj_ok, per_ok, w, n_classes)
            for key, value in want.items():
                if key in baselines:
                    ok = close_kappa(got[key], value, baselines[key])
                elif key == "kappa_plus":  # sqrt(kappa * kappa_per): its square is conditioned
                    # like its factors (a rounding of 1e-16 in the product is 1e-8 in the root)
                    square = (lambda v: None if v is None else v * v)
                    ok = close_kappa(square(got[key]), square(value),
                                     max(baselines["kappa"], baselines["kappa_per"]))
                else:
                    ok = close(got[key], value)
                assert ok, (name, key, report.position, got[key], value)
            size = report.learners[name]["window_size"]
            assert math.isclose(size, w.sum(), rel_tol=1e-9)
            sizes[name] = w
        if m == 0:
            continue
        # McNemar counts over the examples both windows hold.
        wa, wb = sizes["a"], sizes["b"]
        shared = np.minimum(wa, wb) if kind["kind"] != "fading" else wa
        pa, pb = per_learner["a"][0], per_learner["b"][0]
        a = sum(shared[i] for i in range(m) if pa[i] != st_ts[i] and pb[i] == st_ts[i])
        b = sum(shared[i] for i in range(m) if pb[i] != st_ts[i] and pa[i] == st_ts[i])
        pair = report.pairs["a|b"]
        assert math.isclose(pair["a"], a, abs_tol=1e-9) and math.isclose(pair["b"], b, abs_tol=1e-9)


def test_adwin_window_mirror_stays_in_step_over_drifts():
    """Long drifting stream: the mirrored histogram equals ADWIN's width after every update and
    holds O(log W) summaries."""
    from foldstream.operators.stats.windows import AdwinWindow

    rng = np.random.default_rng(7)
    window = AdwinWindow(delta=0.002)
    reference = ADWIN(delta=0.002)
    resets = 0
    for i in range(60_000):
        error = 0.05 if (i // 7_000) % 2 == 0 else 0.5
        t = int(rng.integers(0, 3))
        p = t if rng.random() > error else (t + 1) % 3
        window.update(t, p, t)
        reference.update(float(t != p))
        resets += reference.drift_detected
        assert window.size == reference.width
        assert window.counts().n == reference.width
    assert resets >= 4
    assert window.buckets <= 5 * (math.log2(window.size) + 2)

"""Regime verdicts (docs/method.md §15) and consensus drift (§16).

The regime sequence against a direct recomputation, its independence of how the stream is cut,
and its validity and power by simulation: a look at every step, the one ADWIN of the project
cutting the segments, the segments' sums recomputed with numpy. The full simulation (2,000
sequences of 20,000 steps, the numbers in docs/method.md §15) is marked slow; print it with

    python tests/test_regime.py
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from foldstream.operators.stats.consensus import Consensus, consensus_folds
from foldstream.operators.stats.sequential import (
    A_BETTER, B_BETTER, UNDECIDED, PairSequence, RegimeSequence, boundary_array, segment_alpha
)

ALPHA = 0.05


# ----------------------------------------------------------------------------------------------
# the regime sequence
# ----------------------------------------------------------------------------------------------


def test_segments_restart_fresh_sequences_and_cuts_do_not_matter():
    rng = np.random.default_rng(7)
    numerators = np.concatenate([rng.choice([-1, 0, 1, 2], 4_000, p=[0.1, 0.4, 0.3, 0.2]),
                                 rng.choice([-2, -1, 0, 1], 4_000, p=[0.3, 0.3, 0.3, 0.1])])
    positions = np.arange(1, 8_001) * 2  # any increasing positions
    whole = RegimeSequence(k=2)
    whole.extend_numerators(numerators, positions)
    cut = RegimeSequence(k=2)
    for lo, hi in [(0, 1), (1, 999), (999, 4_000), (4_000, 4_033), (4_033, 8_000)]:
        cut.extend_numerators(numerators[lo:hi], positions[lo:hi])
    assert whole.result(ALPHA) == cut.result(ALPHA)
    cuts = RegimeSequence(k=2).detect(numerators.tolist())
    assert whole.segment == len(cuts) + 1 >= 2
    # the current segment is a fresh §12 sequence over the examples after the last cut
    fresh = PairSequence(k=2)
    fresh.extend_numerators(numerators[cuts[-1] + 1:])
    r = whole.result(ALPHA)
    assert r.since == positions[cuts[-1] + 1]
    assert r.result == fresh.result(segment_alpha(ALPHA, whole.segment))
    assert r.verdict == A_BETTER


def test_a_change_at_the_last_example_leaves_since_open():
    regime = RegimeSequence(k=1)
    regime.extend_numerators([1] * 2_000, range(1, 2_001))
    cuts = RegimeSequence(k=1).detect([1] * 2_000 + [-1] * 2_000)
    end = cuts[0] + 1  # feed exactly up to the first cut
    regime = RegimeSequence(k=1)
    values = [1] * 2_000 + [-1] * 2_000
    regime.extend_numerators(values[:end], range(1, end + 1))
    assert regime.segment == 2 and regime.since is None and regime.current.n == 0
    regime.extend_numerators(values[end:end + 1], [end + 1])
    assert regime.since == end + 1 and regime.current.n == 1


def test_bad_input_is_rejected():
    with pytest.raises(ValueError):
        RegimeSequence(k=2).extend_numerators([3], [1])
    with pytest.raises(ValueError):
        RegimeSequence(k=2).extend_numerators([1, 1], [1])
    with pytest.raises(ValueError):
        RegimeSequence(k=2, delta=1.5)
    with pytest.raises(ValueError):
        segment_alpha(0.05, 0)


# ----------------------------------------------------------------------------------------------
# consensus drift
# ----------------------------------------------------------------------------------------------


def test_consensus_in_single_mode_one_fold_suffices_but_one_drift_per_window():
    c = Consensus(k=1, window=100, folds=consensus_folds(1, "single"))
    drifts = [c.alarm(p, "x", 0, "ph") for p in (50, 120, 151, 260)]
    assert [d.position if d else None for d in drifts] == [50, None, 151, 260]


def test_consensus_rejects_bad_settings():
    with pytest.raises(ValueError):
        Consensus(k=10, folds=11)
    with pytest.raises(ValueError):
        Consensus(k=10, window=0)


# ----------------------------------------------------------------------------------------------
# validity and power by simulation (a look at every step)
# ----------------------------------------------------------------------------------------------


def null_schedule(steps):
    """Both learners' error rate ``p_t`` and the chance ``rho_t`` that B makes A's very loss,
    changing every 2,500 steps, so that the level and the variance of ``d_t`` drift while
    ``E[d_t] = 0`` throughout."""
    levels = np.array([0.10, 0.40, 0.20, 0.50, 0.05, 0.30, 0.15, 0.45])
    rhos = np.array([0.0, 0.8, 0.3, 0.9, 0.0, 0.5, 0.7, 0.2])
    block = np.arange(steps) // 2_500 % len(levels)
    return levels[block], rhos[block]


def draw_null(rng, n, steps):
    p, rho = null_schedule(steps)
    a = rng.random((n, steps)) < p
    b = np.where(rng.random((n, steps)) < rho, a, rng.random((n, steps)) < p)
    return a.astype(np.int64) - b  # k = 1, mean 0


def draw_flip(rng, n, steps):
    """Mean +0.1 for the first half (B better), then -0.1 (A better)."""
    sign = np.where(np.arange(steps) < steps // 2, 1.0, -1.0)
    a = rng.random((n, steps)) < 0.3 + 0.05 * sign
    b = rng.random((n, steps)) < 0.3 - 0.05 * sign
    return a.astype(np.int64) - b


def segment_bounds(numerators, k=1, alpha=ALPHA, delta=0.002):
    """One sequence's per-step regime interval ends times n (``S - u``, ``S + u``), the
    segment ids, by numpy from the detector's cuts (``RegimeSequence.detect``)."""
    steps = numerators.shape[0]
    cuts = RegimeSequence(k, delta).detect(numerators.tolist())
    starts = np.zeros(steps, bool)
    starts[0] = True
    starts[[c + 1 for c in cuts if c + 1 < steps]] = True
    segment = np.cumsum(starts)
    index = np.arange(steps)
    first = np.maximum.accumulate(np.where(starts, index, 0))
    n = index - first + 1
    total = np.cumsum(numerators)
    base = np.where(first > 0, total[first - 1], 0)
    seg_total = total - base
    before = np.maximum(n - 1, 1)
    e = numerators * before - (seg_total - numerators)
    terms = (e * e) / (k * k * before * before).astype(np.float64)
    cum = np.cumsum(terms)
    variance = cum - np.where(first > 0, cum[first - 1], 0.0)
    u = np.empty(steps)
    for j in np.unique(segment):
        rows = segment == j
        u[rows] = boundary_array(np.maximum(variance[rows], 0.0), segment_alpha(alpha, int(j)))
    s = seg_total / k
    return s - u, s + u, segment, n


def simulate_null(n_sequences, steps, seed):
    """The fraction of sequences where some segment's interval ever excluded 0 (its target),
    and the mean number of segments."""
    rng = np.random.default_rng(seed)
    wrong, segments = 0, 0
    for start in range(0, n_sequences, 100):
        block = draw_null(rng, min(100, n_sequences - start), steps)
        for row in block:
            low, high, segment, _ = segment_bounds(row)
            wrong += bool(((low > 0) | (high < 0)).any())
            segments += int(segment[-1])
    return wrong / n_sequences, segments / n_sequences


def simulate_flip(n_sequences, steps, seed):
    """After the flip (B better, then A better): the fraction whose regime verdict is A at the
    end, the quartiles of the delay to the first A verdict, the fraction ever wrong after the
    flip's detection window (B at some step after ``flip + 2,000``), and the fraction whose
    whole-stream verdict is decided at the end."""
    rng = np.random.default_rng(seed)
    flip = steps // 2
    turned, delays, stream_decided = 0, [], 0
    for start in range(0, n_sequences, 100):
        block = draw_flip(rng, min(100, n_sequences - start), steps)
        for row in block:
            low, high, _, n = segment_bounds(row)
            a_better = high < 0
            turned += bool(a_better[-1])
            after = np.flatnonzero(a_better[flip:])
            delays.append(after[0] if after.size else np.inf)
            seq = PairSequence(k=1)
            seq.extend_numerators(row)
            stream_decided += seq.result(ALPHA).verdict in (A_BETTER, B_BETTER)
    q = np.quantile(np.array(delays), [0.25, 0.5, 0.75])
    return turned / n_sequences, q, stream_decided / n_sequences


def test_vectorised_recomputation_is_the_accumulator():
    rng = np.random.default_rng(3)
    row = draw_flip(rng, 1, 6_000)[0]
    low, high, segment, n = segment_bounds(row)
    regime = RegimeSequence(k=1)
    regime.extend_numerators(row, np.arange(1, row.size + 1))
    r = regime.result(ALPHA)
    assert r.segment == segment[-1] and r.result.n == n[-1]
    assert math.isclose(r.result.lower, max(low[-1] / n[-1], -1.0), abs_tol=1e-9)
    assert math.isclose(r.result.upper, min(high[-1] / n[-1], 1.0), abs_tol=1e-9)


def test_validity_and_power_quick():
    wrong, _ = simulate_null(40, 5_000, 11)
    assert wrong <= 0.1  # 40 sequences: the exact check is the slow test below
    turned, (q1, median, q3), decided = simulate_flip(20, 8_000, 12)
    assert turned >= 0.8 and median < 4_000


@pytest.mark.slow  # 2,000 sequences of 20,000 steps through ADWIN: minutes
def test_validity_under_drift_and_power_after_a_flip():
    wrong, _ = simulate_null(2_000, 20_000, 2_015)
    assert wrong <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / 2_000)
    turned, (q1, median, q3), decided = simulate_flip(500, 20_000, 2_016)
    assert turned >= 0.95 and median < 3_000
    assert decided <= 0.2  # the whole stream's mean is 0: the stream verdict mostly stays open


# ----------------------------------------------------------------------------------------------
# end to end (docs/experiments/regime.py): the regime verdict turns, the stream verdict stays;
# two equal learners on a drifting stream get no verdict of either scope
# ----------------------------------------------------------------------------------------------


def _experiment():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "experiments" / "regime.py"
    spec = importlib.util.spec_from_file_location("regime_experiment", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_end_to_end_the_regime_verdict_turns_and_equal_learners_get_none(tmp_path):
    experiment = _experiment()
    stream = tmp_path / "runs.csv"
    change = experiment.write_stream(stream, runs=6_000, iid=9_000)
    records = experiment.run(stream, experiment.CHANGE, tmp_path / "change.jsonl")
    live = experiment.last_live(records)
    assert live["verdict"] == A_BETTER  # nochange, over the whole stream: its early lead stays
    assert live["regime"]["verdict"] == B_BETTER and live["regime"]["since"] > change
    turned = [(p, v) for p, scope, v in experiment.verdicts(records) if scope == "regime"]
    assert turned[-1][1] == B_BETTER and turned[-1][0] > change
    assert all(v != B_BETTER for p, scope, v in experiment.verdicts(records) if scope == "stream")
    # the records say what each verdict covers
    regime_records = [r for r in records if r["type"] == "verdict" and r["scope"] == "regime"]
    assert all(r["since"] is not None and r["segment"] >= 1 for r in regime_records)
    comparison = [r for r in records if r["type"] == "comparison"][-1]
    assert comparison["scope"]["window"]["kind"] == "adwin"
    assert len(comparison["scope"]["window_size"]["a"]) == 5
    equal = experiment.run(stream, experiment.EQUAL, tmp_path / "equal.jsonl")
    assert experiment.verdicts(equal) == []
    assert experiment.last_live(equal)["regime"]["verdict"] == UNDECIDED


# ----------------------------------------------------------------------------------------------
# regime off and no consensus: the records of before, but for the scope fields
# ----------------------------------------------------------------------------------------------

SCOPE_FIELDS = {"comparison": ("scope",), "verdict": ("scope", "since")}
"""The fields every run gained (what the fold tests and the live verdicts cover)."""


def without_new(record: dict, scope: bool = True) -> dict | None:
    """``record`` as a run with ``evaluation.verdicts.regime: false`` and no consensus writes it
    (``None``: such a run writes no such record); with ``scope``, also without the scope fields,
    as before them."""
    kind = record.get("type")
    if kind == "drift" or (kind == "verdict" and record.get("scope") == "regime"):
        return None
    record = dict(record)
    if kind == "comparison" and "sequential" in record:
        record["sequential"] = {k: v for k, v in record["sequential"].items() if k != "regime"}
    if scope:
        for key in SCOPE_FIELDS.get(kind, ()):
            record.pop(key, None)
    return record


def test_regime_off_and_no_consensus_change_nothing_else(tmp_path):
    from foldstream.job.config import load_config
    from foldstream.job.engines.inprocess import evaluate_to_list
    from foldstream.job.plans import make_plans, open_source
    from foldstream.operators.records.base import dumps

    def run(*overrides):
        config = load_config(None, ["source.limit=3000", "evaluation.folds=4", *overrides])
        records, _ = evaluate_to_list(make_plans(config), open_source(config))
        return [r for r in records if r["type"] != "summary"]

    full = run()
    off = run("evaluation.verdicts.regime=false", "evaluation.alarms.consensus=null")
    assert any(r["type"] == "drift" for r in full)
    assert any("regime" in r.get("sequential", {}) for r in full)
    assert not any(r["type"] == "drift" or r.get("scope") == "regime" for r in off)
    stripped = [dumps(r) for r in map(lambda r: without_new(r, scope=False), full) if r]
    assert stripped == [dumps(r) for r in off]
    per_fold_off = run("evaluation.alarms.per_fold=false")
    assert not any(r["type"] == "alarm" for r in per_fold_off)
    assert [r for r in per_fold_off if r["type"] == "drift"] == \
        [r for r in full if r["type"] == "drift"]


@pytest.mark.parametrize("override, key", [
    ("evaluation.alarms.consensus.folds=11", "alarms.consensus.folds"),
    ("evaluation.alarms.consensus.window=0", "evaluation.alarms.consensus.window"),
    ("evaluation.verdicts.regime_delta=2", "evaluation.verdicts.regime_delta"),
])
def test_bad_settings_fail_at_start_naming_the_key(override, key):
    from foldstream.job.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(None, [override])


def compare_golden(old: str, new: str) -> int:
    """Compare an older golden file with a new one without the new records and fields; print
    the counts and return the number of records that differ."""
    import gzip
    import json

    def load(path):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return [json.loads(line) for line in handle]

    before, after = load(old), load(new)
    kept = [r for r in (without_new(r) for r in after) if r is not None]
    dump = lambda r: json.dumps(r, separators=(",", ":"), ensure_ascii=False)  # noqa: E731
    differ = sum(dump(a) != dump(b) for a, b in zip(before, kept)) + abs(len(before) - len(kept))
    print(f"old {len(before)} records, new {len(after)} ({len(after) - len(kept)} new records "
          f"left out), {differ} differ once the new fields are left out")
    return differ


if __name__ == "__main__" and sys.argv[1:2] == ["--compare-golden"]:
    sys.exit(1 if compare_golden(sys.argv[2], sys.argv[3]) else 0)

if __name__ == "__main__":
    null = simulate_null(2_000, 20_000, 2_015)
    print(f"null: excluded ever {null[0]:.4f}, mean segments {null[1]:.2f}")
    turned, quartiles, decided = simulate_flip(500, 20_000, 2_016)
    print(f"flip: A at the end {turned:.3f}, delay quartiles {quartiles}, stream decided {decided:.3f}")
    sys.exit(0)

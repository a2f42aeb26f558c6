"""A checkpoint written before the sliding and fading windows and the pair counts were arrays
resumes: the fold evaluators it holds read into the new layout (state format 2
still) and report, from there on, what the version that wrote it reported.

``tests/data/windows-checkpoint-v2.pickle.gz`` holds, for a sliding, a fading and an ADWIN
window, a :class:`FoldEvaluator` pickled halfway through a stream by that version (commit
e79b5af) and the reports that version gave for the rest of the stream. It was written once
by that version of the code, with this file's ``--write``:

    PYTHONPATH=<an export of e79b5af, as foldstream> python tests/test_windows_checkpoint.py --write
"""

from __future__ import annotations

import dataclasses
import gzip
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

from foldstream.operators.stages.evaluator import EvalPlan, FoldEvaluator
from foldstream.operators.records.base import PredictionBatch
from foldstream.operators.stats.windows import WindowSpec

STORED = Path(__file__).resolve().parent / "data" / "windows-checkpoint-v2.pickle.gz"
LEARNERS = ("a", "b", "c")
WINDOWS = {"sliding": WindowSpec("sliding", size=60), "fading": WindowSpec("fading", alpha=0.95),
           "adwin": WindowSpec("adwin")}
HALF = 3_000


def batches(seed: int = 4, n: int = 6_000, size: int = 250) -> list[dict[str, PredictionBatch]]:
    """Three learners' predictions over a stream with a change, in batches."""
    rng = np.random.default_rng(seed)
    y = rng.choice(3, size=n, p=[0.6, 0.3, 0.1])
    y[n // 2:] = (y[n // 2:] + 1) % 3
    prev = np.r_[-1, y[:-1]]
    scored = rng.random(n) < 0.7
    preds = {name: np.where(rng.random(n) < q, y, rng.integers(-1, 3, size=n))
             for name, q in zip(LEARNERS, (0.9, 0.7, 0.5))}
    out = []
    for seq, start in enumerate(range(0, n, size)):
        stop = min(n, start + size)
        out.append({name: PredictionBatch(
            "s", 0, name, seq, start, y[start:stop].tolist(), prev[start:stop].tolist(),
            preds[name][start:stop].tolist(), scored[start:stop].tolist(), ["x", "y", "z"],
            final=stop == n) for name in LEARNERS})
    return out


def plan(kind: str) -> EvalPlan:
    return EvalPlan(LEARNERS, window=WINDOWS[kind], report_every=200, losses=True)


def feed(evaluator: FoldEvaluator, part: list[dict[str, PredictionBatch]]) -> list:
    reports = []
    for batch in part:
        for name in LEARNERS:
            reports += evaluator.add(batch[name])
    return reports


def comparable(report) -> dict:
    """A report as the stored ones were written: without what reports carry since (the
    learners' costs at the end, each learner's whole-stream values, the kept predictions)."""
    fields = dataclasses.asdict(report)
    fields["alarms"] = sorted(fields["alarms"])
    fields.pop("costs", None)
    fields.pop("predictions", None)
    for learner in fields["learners"].values():
        learner.pop("whole", None)
    return fields


@pytest.mark.parametrize("kind", list(WINDOWS))
def test_an_old_checkpoint_resumes_and_reports_as_before(kind):
    with gzip.open(STORED, "rb") as handle:
        stored = pickle.load(handle)
    checkpoint, expected = stored[kind]
    all_batches = batches()
    half = HALF // 250
    evaluator = pickle.loads(checkpoint)
    reports = [comparable(r) for r in feed(evaluator, all_batches[half:])]
    assert len(reports) == len(expected) > 10
    assert reports == expected
    # and the new layout, pickled again, goes on alike
    fresh = FoldEvaluator("s", 0, plan(kind))
    feed(fresh, all_batches[:half])
    again = pickle.loads(pickle.dumps(fresh))
    assert [comparable(r) for r in feed(again, all_batches[half:])] == expected


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    stored = {}
    all_batches = batches()
    for kind in WINDOWS:
        evaluator = FoldEvaluator("s", 0, plan(kind))
        feed(evaluator, all_batches[:HALF // 250])
        checkpoint = pickle.dumps(evaluator)
        stored[kind] = (checkpoint, [comparable(r) for r in feed(evaluator, all_batches[HALF // 250:])])
    with gzip.GzipFile(STORED, "wb", mtime=0) as handle:
        pickle.dump(stored, handle)
    print(f"wrote {STORED}")

"""Delayed labels (docs/method.md §13) on the Flink job: the records of the in-process engine.

The in-process engine is the reference (tests/test_delayed.py checks it against an independent
loop): for the same configuration the Flink job at parallelism 2 must write the same records and
the same dead letters, byte for byte, with examples expiring and labels rejected on the way, and
after a failure mid-run it must resume from its checkpoint with the pending examples intact.
"""

from __future__ import annotations

import csv
import gzip
import json

import pytest

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.stages.delay import LabelOnly
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.records.base import dumps

pytestmark = pytest.mark.flink

TWO_LEARNERS = ("learners=[{name: ht, model: river.tree.HoeffdingTreeClassifier}, "
                "{name: nb, model: river.naive_bayes.GaussianNB}]")
TIMING = SummaryRecord.TIMING_FIELDS  # the one list of the fields that vary from run to run


def comparable(records) -> list[str]:
    """Every record as exact bytes (the summary without its timing), sorted."""
    return sorted(dumps({k: v for k, v in r.items() if k not in TIMING}) for r in records)


def elec_with_delays(elec_path, path, limit: int) -> str:
    """Electricity's first ``limit`` rows as JSON Lines, each with its label's delay ``d`` (0 to
    499 arrivals, scattered), so that with few pending places some examples expire."""
    with gzip.open(elec_path, "rt", newline="") as f, open(path, "w") as out:
        for i, row in enumerate(csv.DictReader(f)):
            if i == limit:
                break
            row = {k: (v if k == "target" else float(v)) for k, v in row.items()}
            out.write(json.dumps({**row, "d": (i * 37) % 500}) + "\n")
    return str(path)


def label_rows(path) -> str:
    """Arrivals without labels and label rows joined by id: the label of example ``i`` after
    arrival ``i + 20``, but every fifth example's at the end, newest first (the oldest of them
    expired by then: 50 pending places); one label twice; a labelled row of a new key (an
    example and its label at once); the last examples never labelled."""
    rows, late = [], []
    for i in range(1, 301):
        rows.append({"id": f"e{i}", "a": float(i % 7), "b": float(i % 3)})
        j = i - 20
        if j >= 1 and j % 5:
            rows.append({"id": f"e{j}", "target": f"c{(j * 7) % 3}"})
        elif j >= 1:
            late.append({"id": f"e{j}", "target": f"c{j % 2}"})
        if i == 100:
            rows += [{"id": "e79", "target": "c1"}, {"id": "new", "a": 1.0, "target": "c0"}]
    rows += late[::-1]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


@pytest.mark.parametrize("case,keying", [("field", "fold"), ("label-rows", "learner_fold")])
def test_a_delayed_run_on_flink_writes_the_records_of_the_in_process_engine(
        elec_path, tmp_path, case, keying):
    if case == "field":
        source = [f"source.path={elec_with_delays(elec_path, tmp_path / 'elec.jsonl', 3000)}",
                  "evaluation.delay={field: d, max_pending: 250}"]
    else:
        source = [f"source={{kind: file, path: '{label_rows(tmp_path / 'rows.jsonl')}', id_field: id}}",
                  "evaluation.delay={max_pending: 50}"]
    cfg = load_config(None, [
        *source, TWO_LEARNERS, "evaluation.folds=4", "evaluation.report_every=100",
        "engine.kind=flink", "engine.parallelism=2", "engine.batch_size=50",
        f"engine.keying={keying}",
    ])
    items = list(open_source(cfg))
    if case == "label-rows":  # and a label-only event (a labels topic's) for a key never seen
        items.insert(100, LabelOnly(items[0].stream, "nobody", "c0", "labels@7"))
    reference, reference_rejected = evaluate_to_list(make_plans(cfg), items)
    records, rejected = [], []
    from foldstream.job.engines.flink import run as flink_run

    flink_run.run(cfg, records.append, rejected.append, source=items)
    assert comparable(records) == comparable(reference)
    assert comparable(rejected) == comparable(reference_rejected)
    # the case is what it claims: examples expired and labels were rejected for their reasons
    last = [r for r in reference if r["type"] == "measures"][-1]
    assert last["expired"] > 0 and last["labelled"] > 0
    reasons = {r["reason"].split(": ", 1)[1] for r in reference_rejected}
    assert "expired (dropped unscored beyond evaluation.delay.max_pending)" in reasons
    if case == "label-rows":
        assert {"already labelled", "unknown (no pending example has this key)"} <= reasons
        assert last["pending"] > 0


def test_a_failure_mid_delayed_run_restarts_with_the_pending_examples(elec_path, tmp_path,
                                                                     flink_runs):
    """A learner raises once after 1,000 training calls (training comes at the labels, 200
    arrivals late) and a completed checkpoint; Flink restarts from the last checkpoint, whose
    keyed state holds the examples waiting for their labels, and the records equal those of a
    run that never failed, the summary included."""
    marker, checkpoints = tmp_path / "failed-once", tmp_path / "checkpoints"
    failing = ("learners=[{name: ht, model: foldstream.job.engines.flink.faults.FailOnce, params: {model: "
               "{model: river.tree.HoeffdingTreeClassifier}, after: 1000, "
               f"marker: '{marker}', checkpoints: '{checkpoints}'}}}}, "
               "{name: nb, model: river.naive_bayes.GaussianNB}]")
    cfg = load_config(None, [
        f"source.path={elec_path}", "source.limit=4000", failing, "evaluation.folds=4",
        "evaluation.report_every=250", "evaluation.delay={examples: 200}", "engine.kind=flink",
        "engine.parallelism=2", "engine.batch_size=100", "engine.checkpoint_interval_ms=300",
        "engine.restart_attempts=2", f"engine.checkpoint_dir={checkpoints}",
    ])
    records, reference = flink_runs.fail_once_and_compare(cfg, marker, summaries=True)
    assert [r["position"] for r in records if r["type"] == "summary"] == [4000]
    assert [r["labelled"] for r in reference if r["type"] == "measures"][-1] == 4000

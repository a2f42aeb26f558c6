"""MOA's learners on the Flink engine: each Python worker starts its own JVM, the learners' state
(Java serialisation inside the pickled keyed state) moves between operators and checkpoints, and
the records at parallelism 2 are the in-process engine's, byte for byte (order may differ)."""

from __future__ import annotations

import pytest

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.records.base import dumps

pytestmark = pytest.mark.flink

LEARNERS = ("learners=[{name: ht, model: moa.classifiers.trees.HoeffdingTree, options: '-g 50'}, "
            "{name: nb, model: river.naive_bayes.GaussianNB}]")


def comparable(records) -> list[str]:
    """Every record but the summary, whose wall time differs, as exact bytes, sorted."""
    return sorted(dumps(r) for r in records if r["type"] != "summary")


def test_flink_at_parallelism_2_gives_the_in_process_records_with_a_moa_learner(elec_path):
    from foldstream.job.engines.flink import run as flink_run

    cfg = load_config(None, [
        f"source.path={elec_path}", "source.limit=3000", LEARNERS, "evaluation.mode=bootstrap",
        "evaluation.folds=4", "evaluation.report_every=500", "engine.kind=flink",
        "engine.parallelism=2", "engine.batch_size=200",
    ])
    reference, _ = evaluate_to_list(make_plans(cfg), open_source(cfg))
    records, rejected = [], []
    flink_run.run(cfg, records.append, rejected.append)
    assert comparable(records) == comparable(reference)
    assert any(r["type"] == "measures" and r.get("learner") == "ht" for r in records)
    assert not rejected


def test_a_failure_restarts_with_the_moa_learners_state_and_identical_records(elec_path, tmp_path,
                                                                            flink_runs):
    """A river learner fails once mid-stream; Flink restarts from its last checkpoint, which
    holds the MOA learner's Java-serialised state, and delivers the records of a run that never
    failed."""
    marker = tmp_path / "failed-once"
    learners = ("learners=[{name: nb, model: foldstream.job.engines.flink.faults.FailOnce, params: "
                "{model: {model: river.naive_bayes.GaussianNB}, after: 1500, "
                f"marker: '{marker}'}}}}, {{name: ht, model: moa.classifiers.trees.HoeffdingTree, "
                "options: '-g 50'}]")
    cfg = load_config(None, [
        f"source.path={elec_path}", "source.limit=4000", learners, "evaluation.folds=4",
        "evaluation.report_every=250", "engine.kind=flink", "engine.parallelism=2",
        "engine.batch_size=100", "engine.checkpoint_interval_ms=300", "engine.restart_attempts=2",
    ])
    flink_runs.fail_once_and_compare(cfg, marker)

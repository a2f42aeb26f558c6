"""Helpers of the Flink tests: records compared as bytes, and a run that fails once.

No pytest in here (loaded with ``conftest.load_helper``), so the three engines' failure tests
share one definition of "the records of a run that failed once equal those of a run that never
failed".
"""

from __future__ import annotations

from pathlib import Path

from foldstream.job.config import Config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.records.base import dumps

TIMING = SummaryRecord.TIMING_FIELDS  # the one list of the fields that vary from run to run


def comparable(records, summaries: bool = False) -> list[str]:
    """Every record as exact bytes, sorted: without the summaries (their wall time differs), or
    with them but for their timing fields."""
    return sorted(dumps({k: v for k, v in r.items() if k not in TIMING}) for r in records
                  if summaries or r["type"] != "summary")


def fail_once_and_compare(cfg: Config, marker: Path, summaries: bool = False) -> tuple[list, list]:
    """Run ``cfg`` in-process with ``marker`` present (its ``FailOnce`` learner takes the marker
    and never fails), then on Flink without it (the learner fails once, the job restarts from
    its last checkpoint); check that it failed, that the records are equal and that there is
    exactly one summary. Returns ``(flink records, in-process records)``."""
    from foldstream.job.engines.flink import run as flink_run

    marker.touch()  # the reference run: the marker is taken, nothing fails
    reference, _ = evaluate_to_list(make_plans(cfg), open_source(cfg))
    marker.unlink()
    records: list[dict] = []
    flink_run.run(cfg, records.append, lambda r: None)
    assert marker.exists()  # it did fail once
    assert comparable(records, summaries) == comparable(reference, summaries)
    assert sum(r["type"] == "summary" for r in records) == 1
    return records, reference

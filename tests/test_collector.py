"""Python's collector during an in-process run (job/engines/collector.py): the objects alive
once the first records are out are frozen out of its sweeps, and let back at the end."""

from __future__ import annotations

import gc

from foldstream.job.config import load_config
from foldstream.job.engines.collector import Collector
from foldstream.job.engines.inprocess import evaluate
from foldstream.job.plans import make_plans, open_source


def _frozen_while_emitting(elec_path, overrides=()) -> list[int]:
    cfg = load_config(None, [f"source.path={elec_path}", "source.limit=3000",
                             "learners=[{name: nc, model: river.dummy.NoChangeClassifier}]",
                             "evaluation.report_every=500", *overrides])
    seen: list[int] = []
    evaluate(make_plans(cfg), open_source(cfg), lambda record: seen.append(gc.get_freeze_count()),
             lambda record: None)
    return seen


def test_a_settled_run_is_left_out_of_the_collectors_sweeps(elec_path):
    assert gc.get_freeze_count() == 0
    seen = _frozen_while_emitting(elec_path)
    assert seen[0] == 0  # the first records: emitted before the run settles
    assert min(seen[len(seen) // 2:-1]) > 1000  # then the imports' objects are frozen
    assert gc.get_freeze_count() == 0  # and back in the collector's care at the end


def test_objects_frozen_by_others_are_left_as_they_are(elec_path):
    gc.freeze()
    try:
        before = gc.get_freeze_count()  # (frozen objects that die leave the count)
        assert max(_frozen_while_emitting(elec_path)) <= before  # nothing more frozen
        assert 0 < gc.get_freeze_count() <= before  # nor let back
    finally:
        gc.unfreeze()


def test_settle_once_release_once(monkeypatch):
    """Counted by the calls, not by ``gc.get_freeze_count()``: a frozen object that another
    thread frees (a Py4J thread an earlier test's Flink client left) leaves the count."""
    calls: list[str] = []
    freeze, unfreeze = gc.freeze, gc.unfreeze
    monkeypatch.setattr(gc, "freeze", lambda: (calls.append("freeze"), freeze())[1])
    monkeypatch.setattr(gc, "unfreeze", lambda: (calls.append("unfreeze"), unfreeze())[1])
    collector = Collector()
    collector.settle()
    assert gc.get_freeze_count() > 0
    collector.settle()
    collector.release()
    collector.release()
    assert calls == ["freeze", "unfreeze"]
    assert gc.get_freeze_count() == 0

"""The learner tasks' queue (operators/stages/learner.py ``FoldQueue``): MOA's folds learn on
Java's threads while the engine reads the next examples, and every record stays byte for byte
the sequential run's; river's no-change learner a batch at a time, as example by example."""

from __future__ import annotations

import random

import pytest

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import StreamStages, evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.records.base import ExampleBatch, dumps
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.stages.fanout import FanOut, FanOutPlan
from foldstream.operators.stages.learner import FoldQueue, LearnerSpec, LearnerTask

MOA_AND_RIVER = ("learners=[{name: ht, model: moa.classifiers.trees.HoeffdingTree, "
                 "options: '-g 50'}, {name: nc, model: river.dummy.NoChangeClassifier}, "
                 "{name: bag, model: moa.classifiers.meta.OzaBag, options: "
                 "'-l trees.HoeffdingTree -s 3', params: {seed: 5}, fold_seeds: true}, "
                 "{name: perceptron, model: moa.classifiers.functions.Perceptron}]")


def _config(elec_path, threads: int, batch_size: int, mode: str = "bootstrap"):
    return load_config(None, [f"source.path={elec_path}", "source.limit=1500", MOA_AND_RIVER,
                              f"evaluation.mode={mode}", "evaluation.folds=4",
                              "evaluation.report_every=250", f"engine.batch_size={batch_size}",
                              f"engine.threads={threads}"])


def _lines(records) -> list[str]:
    return [dumps({k: v for k, v in r.items() if k not in SummaryRecord.TIMING_FIELDS})
            for r in records]


def _sequential(elec_path, batch_size: int, mode: str = "bootstrap") -> list[str]:
    cfg = _config(elec_path, 1, batch_size, mode)
    return _lines(evaluate_to_list(make_plans(cfg), open_source(cfg))[0])


@pytest.mark.parametrize("batch_size, mode", [(1, "bootstrap"), (7, "cv"), (200, "bootstrap")])
def test_batches_held_in_java_give_the_sequential_records(elec_path, batch_size, mode):
    """The engine keeps each cut batch's MOA folds in Java while it reads the next examples
    (the queue holds them between two inputs), and the records, in their order, are those of
    one thread processing every batch in its turn: a tree, a randomised ensemble, a river
    learner between them and a learner quarantined mid-stream."""
    cfg = _config(elec_path, 2, batch_size, mode)
    plans = make_plans(cfg)
    stages = StreamStages(plans, "elec")
    records, held = [], 0
    for item in open_source(cfg):
        out, rejected = stages.take(item, hold=True)
        assert rejected is None
        records += out or []
        held = max(held, stages.queue.held)
    records += stages.finish()
    assert held > 0  # batches were left in Java between two inputs
    assert stages.queue.held == 0
    sequential = _sequential(elec_path, batch_size, mode)
    assert _lines(records) == sequential[:-1]  # all but the summary, which the engine writes
    whole = _lines(evaluate_to_list(plans, open_source(cfg))[0])
    assert whole == sequential


def test_a_stopped_run_writes_the_batches_held_in_java(elec_path):
    """Draining the queue after the last input gives the held batches' records, as a stop
    between two batches does (the in-process engine drains every stream before the
    summaries)."""
    cfg = _config(elec_path, 2, 100)
    stages, records = StreamStages(make_plans(cfg), "elec"), []
    for i, item in enumerate(open_source(cfg)):
        if i == 1000:
            break
        out, _ = stages.take(item, hold=True)
        records += out or []
    assert stages.queue.held > 0
    records += stages.drain()
    assert stages.queue.held == 0 and stages.drain() == []
    one = StreamStages(make_plans(_config(elec_path, 1, 100)), "elec")
    expected = []
    for i, item in enumerate(open_source(cfg)):
        if i == 1000:
            break
        expected += one.take(item)[0] or []
    assert _lines(records) == _lines(expected)


def _looped():
    """River's no-change learner under another class: the learner task runs it example by
    example (the batch path takes river's exact class only)."""
    from river.dummy import NoChangeClassifier

    return type("LoopedNoChange", (NoChangeClassifier,), {})()


@pytest.mark.parametrize("prequential", [True, False])
def test_river_no_change_a_batch_at_a_time_predicts_as_example_by_example(prequential):
    """Random labels, bootstrap weights (zeros among them), batches of random sizes, a new
    class mid-stream: every prediction and the model's state as predicting then learning each
    example in turn gives."""
    rng = random.Random(3)
    fanout = FanOut("s", FanOutPlan("bootstrap", folds=3, seed=2))
    spec = LearnerSpec("nc", "river.dummy.NoChangeClassifier")
    batched = [LearnerTask(spec, f, prequential) for f in range(3)]
    looped = [LearnerTask(spec, f, prequential) for f in range(3)]
    for task in looped:
        task.model = _looped()
    start, seq = 0, 0
    for _ in range(40):
        n = rng.choice([0, 1, 2, 5, 17])
        labels = ["a", "b"] if seq < 20 else ["a", "b", "c"]
        ys = [rng.choice(labels) for _ in range(n)]
        batches = fanout.process(ExampleBatch("s", seq, start, list(range(start + 1, start + n + 1)),
                                              [{}] * n, ys))
        for a, b, fold_batch in zip(batched, looped, batches):
            assert a.process(fold_batch).y_pred == b.process(fold_batch).y_pred
            assert a.model.last_class == b.model.last_class
            assert a.model.classes == b.model.classes
        start, seq = start + n, seq + 1
    assert type(batched[0].model).__name__ == "NoChangeClassifier"


def test_the_queue_yields_in_order_whatever_it_holds():
    """River's tasks are never held: their predictions come in the call that gave them."""
    fanout = FanOut("s", FanOutPlan("bootstrap", folds=2))
    spec = LearnerSpec("nc", "river.dummy.NoChangeClassifier")
    tasks = [LearnerTask(spec, f) for f in range(2)]
    queue = FoldQueue(2)
    batches = fanout.process(ExampleBatch("s", 0, 0, [1, 2], [{}, {}], ["a", "b"]))
    out = list(queue.run([(t, b) for t, b in zip(tasks, batches)], hold=True))
    assert [p.fold for p in out] == [0, 1] and queue.held == 0

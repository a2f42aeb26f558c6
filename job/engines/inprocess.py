"""The in-process engine: the stages of ``operators/`` wired in one Python process, batch by batch.

It is the reference the Flink job must match record for record, and the quick way to run an
evaluation on a laptop. For each stream it keeps a batcher, a fan-out, ``L x k`` learner tasks,
``k`` fold evaluators and an aggregator, exactly the keyed state the Flink job holds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from foldstream.job.plans import Plans
from foldstream.operators.records import (
    Example,
    ExampleBatch,
    Record,
    Rejected,
    rejected_record,
    summary_record,
)


@dataclass
class StreamStages:
    """Every stage of one stream."""

    plans: Plans
    stream: str
    read: int = 0
    rejected: int = 0

    def __post_init__(self) -> None:
        p, s = self.plans, self.stream
        self.batcher = p.batcher(s)
        self.fanout = p.fan_out(s)
        self.tasks = [[p.learner_task(l, f) for l in range(len(p.learners))] for f in range(p.folds)]
        self.evaluators = [p.fold_evaluator(s, f) for f in range(p.folds)]
        self.aggregator = p.aggregator(s)

    def process(self, batch: ExampleBatch) -> list[Record]:
        records: list[Record] = []
        for fold_batch in self.fanout.process(batch):
            evaluator = self.evaluators[fold_batch.fold]
            for task in self.tasks[fold_batch.fold]:
                for report in evaluator.add(task.process(fold_batch)):
                    records.extend(self.aggregator.add(report))
        return records


@dataclass
class RunResult:
    """What a run did, per stream; ``summaries`` are the ``summary`` records it emitted."""

    summaries: list[Record] = field(default_factory=list)
    wall_time_s: float = 0.0

    @property
    def examples(self) -> int:
        return sum(s["examples_read"] - s["examples_rejected"] for s in self.summaries)

    @property
    def rejected(self) -> int:
        return sum(s["examples_rejected"] for s in self.summaries)


def evaluate(
    plans: Plans,
    source: Iterable[Example | Rejected],
    emit: Callable[[Record], None],
    dead_letter: Callable[[Record], None],
    on_progress: Callable[[int], None] | None = None,
) -> RunResult:
    """Run a bounded source to its end; records go to ``emit``, rejected ones to ``dead_letter``.

    ``on_progress(n)`` is called after each batch with the number of source records read so far.
    """
    started = time.perf_counter()
    streams: dict[str, StreamStages] = {}
    read = 0

    def stages_of(stream: str) -> StreamStages:
        if stream not in streams:
            streams[stream] = StreamStages(plans, stream)
        return streams[stream]

    for item in source:
        read += 1
        if isinstance(item, Rejected):
            stages = stages_of(item.stream or "")
            stages.read += 1
            stages.rejected += 1
            item.position = stages.batcher.position
            dead_letter(rejected_record(item))
            continue
        stages = stages_of(item.stream)
        stages.read += 1
        batches = stages.batcher.add(item)
        if batches:
            for batch in batches:
                for record in stages.process(batch):
                    emit(record)
            if on_progress is not None:
                on_progress(read)
    for stages in streams.values():
        for batch in stages.batcher.flush(final=True):
            for record in stages.process(batch):
                emit(record)
    if on_progress is not None:
        on_progress(read)
    wall = time.perf_counter() - started
    result = RunResult(wall_time_s=wall)
    for stages in streams.values():
        summary = summary_record(stages.stream, stages.batcher.position, stages.read,
                                 stages.rejected, wall, stages.aggregator.final_measures())
        emit(summary)
        result.summaries.append(summary)
    return result


def evaluate_to_list(plans: Plans, source: Iterable[Example | Rejected]) -> tuple[list[Record], list[Record]]:
    """Run and keep everything in memory: ``(records, rejected records)``; for tests and notebooks."""
    records: list[Record] = []
    rejected: list[Record] = []
    evaluate(plans, source, records.append, rejected.append)
    return records, rejected


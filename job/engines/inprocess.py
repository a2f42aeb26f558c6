"""The in-process engine: the stages of ``operators/`` wired in one Python process, batch by batch.

It is the reference the Flink job must match record for record, and the quick way to run an
evaluation on a laptop. For each stream it keeps a batcher, a fan-out, ``L x k`` learner tasks,
``k`` fold evaluators and an aggregator, exactly the keyed state the Flink job holds. With
delayed labels (docs/method.md §13) a :class:`~foldstream.operators.delay.DelayFanOut` takes
the place of the batcher and the fan-out, and the other stages are the same objects.
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from foldstream.job.plans import Plans
from foldstream.operators.delay import BadLabel, DelayFanOut, LabelOnly
from foldstream.operators.fanout import LabelClash
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
        self.delay: DelayFanOut | None = p.delay_fan_out(s) if p.delayed else None
        self.batcher = p.batcher(s)
        self.fanout = p.fan_out(s)
        self.tasks = [[p.learner_task(l, f) for l in range(len(p.learners))] for f in range(p.folds)]
        self.evaluators = [p.fold_evaluator(s, f) for f in range(p.folds)]
        self.aggregator = p.aggregator(s)

    def process(self, batch: ExampleBatch) -> list[Record]:
        return self._folds(self.fanout.process(batch))

    def _folds(self, fold_batches: list) -> list[Record]:
        records: list[Record] = []
        for fold_batch in fold_batches:
            evaluator = self.evaluators[fold_batch.fold]
            for task in self.tasks[fold_batch.fold]:
                for report in evaluator.add(task.process(fold_batch)):
                    records.extend(self.aggregator.add(report))
        return records

    @property
    def position(self) -> int:
        """Examples (arrivals) accepted so far."""
        return self.batcher.position if self.delay is None else self.delay.position

    @property
    def evaluated(self) -> int:
        """Examples (arrivals) whose batch has been evaluated."""
        if self.delay is None:
            return self.batcher.position - self.batcher.pending
        return self.evaluators[0].position

    def add(self, item: Example | LabelOnly) -> list[Record] | None:
        """Take one input; the records of the batches it completed, ``None`` if none was cut.

        Raises :class:`LabelClash` or :class:`BadLabel` for an input to reject."""
        if self.delay is not None:
            fold_batches = self.delay.add(item)
            return self._folds(fold_batches) if fold_batches else None
        if isinstance(item, LabelOnly):
            raise BadLabel("a label-only row, but labels are not delayed (evaluation.delay)",
                           item)
        batches = self.batcher.add(item)
        if not batches:
            return None
        records: list[Record] = []
        for batch in batches:
            records.extend(self.process(batch))
        return records

    def finish(self) -> list[Record]:
        """The end of a bounded input: flush, and the final reports."""
        if self.delay is not None:
            return self._folds(self.delay.flush(final=True))
        records: list[Record] = []
        for batch in self.batcher.flush(final=True):
            records.extend(self.process(batch))
        return records


@dataclass
class RunResult:
    """What a run did, per stream; ``summaries`` are the ``summary`` records it emitted.

    ``interrupted`` is the signal number (``signal.SIGINT``, ``signal.SIGTERM``) that stopped
    the run before the end of its input, else ``None``.
    """

    summaries: list[Record] = field(default_factory=list)
    wall_time_s: float = 0.0
    interrupted: int | None = None

    @property
    def examples(self) -> int:
        return sum(s["examples_read"] - s["examples_rejected"] for s in self.summaries)

    @property
    def rejected(self) -> int:
        return sum(s["examples_rejected"] for s in self.summaries)


class _StopFlag:
    """Turns SIGINT and SIGTERM into a flag that the run checks between source records.

    A signal then never cuts a report in half: the batch being evaluated is finished and its
    records written, the run stops reading, and each stream's summary says ``interrupted``.
    Only in the main thread (where Python delivers signals); elsewhere it does nothing.
    """

    def __init__(self, enabled: bool):
        self.signum: int | None = None
        self._previous: dict[int, object] = {}
        self._enabled = enabled and threading.current_thread() is threading.main_thread()

    def _handle(self, signum: int, frame: object) -> None:
        self.signum = signum

    def __enter__(self) -> "_StopFlag":
        if self._enabled:
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


def evaluate(
    plans: Plans,
    source: Iterable[Example | Rejected],
    emit: Callable[[Record], None],
    dead_letter: Callable[[Record], None],
    on_progress: Callable[[int], None] | None = None,
    *,
    streams: Iterable[str] = (),
    stop_on_signals: bool = False,
) -> RunResult:
    """Run a bounded source to its end; records go to ``emit``, rejected ones to ``dead_letter``.

    ``on_progress(n)`` is called after each batch with the number of source records read so far.
    ``streams`` are the streams known in advance (a file's): each gets a ``summary`` record even
    when the input is empty. With ``stop_on_signals``, SIGINT (Ctrl-C) and SIGTERM stop the run
    between two batches: what was evaluated is written whole, then an ``interrupted`` summary
    per stream, and :attr:`RunResult.interrupted` holds the signal.
    """
    started = time.perf_counter()
    stages_by_stream: dict[str, StreamStages] = {}
    read = 0
    max_bytes = plans.dead_letter_max_bytes

    def stages_of(stream: str) -> StreamStages:
        if stream not in stages_by_stream:
            stages_by_stream[stream] = StreamStages(plans, stream)
        return stages_by_stream[stream]

    def reject(stages: StreamStages, item: Rejected) -> None:
        stages.rejected += 1
        item.position = stages.position
        dead_letter(rejected_record(item, max_bytes))

    for stream in streams:
        stages_of(stream)
    with _StopFlag(stop_on_signals) as stop:
        for item in source:
            simulated = isinstance(item, LabelOnly) and item.simulated  # not a record read
            read += not simulated
            if isinstance(item, Rejected):
                stages = stages_of(item.stream or "")
                stages.read += 1
                reject(stages, item)
            else:
                stages = stages_of(item.stream)
                stages.read += not simulated
                try:
                    records = stages.add(item)
                except (LabelClash, BadLabel) as bad:
                    reject(stages, bad.rejected())
                    records = None
                if records is not None:
                    for record in records:
                        emit(record)
                    if on_progress is not None:
                        on_progress(read)
            if stop.signum is not None:
                break
        if stop.signum is None:
            for stages in stages_by_stream.values():
                for record in stages.finish():
                    emit(record)
        if on_progress is not None:
            on_progress(read)
        wall = time.perf_counter() - started
        result = RunResult(wall_time_s=wall, interrupted=stop.signum)
        for stages in stages_by_stream.values():
            # Interrupted: the examples left in the batcher were not evaluated.
            summary = summary_record(stages.stream, stages.evaluated, stages.read,
                                     stages.rejected, wall, stages.aggregator.final_measures(),
                                     interrupted=stop.signum is not None,
                                     positive_class=plans.evaluation.positive,
                                     classes=(stages.delay or stages.fanout).classes)
            emit(summary)
            result.summaries.append(summary)
    return result


def evaluate_to_list(plans: Plans, source: Iterable[Example | Rejected]) -> tuple[list[Record], list[Record]]:
    """Run and keep everything in memory: ``(records, rejected records)``; for tests and notebooks."""
    records: list[Record] = []
    rejected: list[Record] = []
    evaluate(plans, source, records.append, rejected.append)
    return records, rejected


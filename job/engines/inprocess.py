"""The in-process engine: the stages of ``operators/`` wired in one Python process, batch by batch.

It is the reference the Flink job must match record for record, and the quick way to run an
evaluation on a laptop. For each stream it keeps a batcher, a fan-out, ``L x k`` learner tasks,
``k`` fold evaluators and an aggregator, exactly the keyed state the Flink job holds. With
delayed labels (docs/method.md §13) a :class:`~foldstream.operators.stages.delay.DelayFanOut` takes
the place of the batcher and the fan-out, and the other stages are the same objects.

Run by the command line (``stop_on_signals``), the stages work in a thread of their own and the
main thread waits on signals, so that a learner that never returns can be abandoned
(job/engines/stopping.py has the rule). That costs a lock per report and a thread switch now and
then: bench/README.md gives the measured throughput.
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from foldstream.job.engines.collector import Collector
from foldstream.job.engines.stopping import (
    STOP_GRACE_S,
    STOP_SIGNALS,
    Delivered,
    SignalWatch,
    handled,
    handlers,
    in_main_thread,
)
from foldstream.job.plans import Plans
from foldstream.operators.stages.delay import LabelOnly
from foldstream.operators.stages.head import StreamHead, TooManyClasses, counts_as_read
from foldstream.operators.stages.learner import FoldQueue
from foldstream.operators.records.outputs import RejectedRecord
from foldstream.operators.records.base import Example, Record, Rejected


@dataclass
class StreamStages:
    """Every stage of one stream: its head (:class:`~foldstream.operators.stages.head.StreamHead`,
    the Flink job's fan-out holds the same), the learner tasks and evaluators of its folds, and
    its aggregator."""

    plans: Plans
    stream: str

    def __post_init__(self) -> None:
        p, s = self.plans, self.stream
        self.head: StreamHead = p.stream_head(s)
        self.tasks = [[p.learner_task(l, f) for l in range(len(p.learners))] for f in range(p.folds)]
        self.evaluators = [p.fold_evaluator(s, f) for f in range(p.folds)]
        self.aggregator = p.aggregator(s)
        self.holdout = p.holdout_scorer(s)
        self.queue = FoldQueue(p.threads)  # the learner tasks' batches, answered in order

    def __getstate__(self) -> dict:
        """The stages' state without their queue, which must be empty (:meth:`drain`): a
        batch held in Java is no state to keep."""
        if self.queue.held:
            raise ValueError("the stages hold batches in Java: drain() them before pickling")
        return {k: v for k, v in self.__dict__.items() if k != "queue"}

    def __setstate__(self, state: dict) -> None:
        """Stages pickled (before they had a queue, too) get an empty queue."""
        self.__dict__.update(state)
        self.queue = FoldQueue(self.plans.threads)

    def through_folds(self, fold_batches: list, hold: bool = False) -> list[Record]:
        """The records of fold batches passed through the learner tasks, the evaluators and
        the aggregator, in order. With ``hold``, the batches that MOA's learners learn on
        Java's threads may stay there (:class:`~foldstream.operators.stages.learner.FoldQueue`):
        their records come with the next call, or with :meth:`drain`; the records and their
        order are the same."""
        records: list[Record] = []
        work: list = []  # (task, fold batch): run side by side where the learners let go
        for fold_batch in fold_batches:
            if getattr(fold_batch, "holdout", False):  # the held-out test set: scored apart,
                records.extend(self._learn(work))  # after the batches before it
                work = []
                for task in self.tasks[fold_batch.fold]:
                    records.extend(self.holdout.add(task.process(fold_batch)))
                continue
            work.extend((task, fold_batch) for task in self.tasks[fold_batch.fold])
        records.extend(self._learn(work, hold))
        return records

    def drain(self) -> list[Record]:
        """The records of the batches held in Java by :meth:`through_folds` (none: ``[]``)."""
        return self._learn([]) if self.queue.held else []

    def _learn(self, work: list, hold: bool = False) -> list[Record]:
        """The records of the learner tasks' batches ``work`` (task, fold batch), in order,
        after those of the batches held before."""
        records: list[Record] = []
        for predictions in self.queue.run(work, hold):
            for report in self.evaluators[predictions.fold].add(predictions):
                records.extend(self.aggregator.add(report))
        return records

    @property
    def evaluated(self) -> int:
        """Examples (arrivals) whose batch has been evaluated (or is held: :meth:`drain`)."""
        head = self.head
        if head.delay is None:
            return head.batcher.position - head.batcher.pending
        return self.evaluators[0].position

    def take(self, item: Example | LabelOnly | Rejected, hold: bool = False
             ) -> tuple[list[Record] | None, Rejected | None]:
        """Take one source item: the records of the batches it completed (``None`` if none
        was cut), and the item rejected, if it was (:meth:`StreamHead.take`); ``hold`` as
        :meth:`through_folds`."""
        fold_batches, rejected = self.head.take(item)
        return (self.through_folds(fold_batches, hold) if fold_batches else None), rejected

    def finish(self) -> list[Record]:
        """The end of a bounded input: flush, and the final reports."""
        return self.through_folds(self.head.flush(final=True))


@dataclass
class RunResult:
    """What a run did, per stream; ``summaries`` are the ``summary`` records it emitted.

    ``interrupted`` is the signal number (``signal.SIGINT``, ``signal.SIGTERM``) that stopped
    the run before the end of its input, else ``None``. ``forced``: the stop could not wait for
    the stages (a second signal, or SIGTERM's grace over): the summaries are built from the
    records delivered, and the worker thread running the stages was abandoned where it was.
    """

    summaries: list[Record] = field(default_factory=list)
    wall_time_s: float = 0.0
    interrupted: int | None = None
    forced: bool = False
    too_many_classes: TooManyClasses | None = None  # evaluation.max_classes ended the run

    @property
    def examples(self) -> int:
        return sum(s["examples_read"] - s["examples_rejected"] for s in self.summaries)

    @property
    def rejected(self) -> int:
        return sum(s["examples_rejected"] for s in self.summaries)


class _Outlet:
    """Where a run's records leave: ``emit`` and ``dead_letter``, each report's records together,
    noted in :attr:`delivered`. Once closed (:meth:`close`: a forced stop), whatever the abandoned
    stages still hand on is dropped, so that the interrupted summary stays the last record."""

    def __init__(self, emit: Callable[[Record], None], dead_letter: Callable[[Record], None]):
        self._emit, self._dead_letter = emit, dead_letter
        self.delivered = Delivered()
        self._lock = threading.Lock()
        self._closed = False

    def records(self, records: Iterable[Record]) -> None:
        with self._lock:
            if not self._closed:
                for record in records:
                    self.delivered.take(record)
                    self._emit(record)

    def rejected(self, record: Record) -> None:
        with self._lock:
            if not self._closed:
                self.delivered.take(record)
                self._dead_letter(record)

    def last(self, records: Iterable[Record]) -> None:
        """After :meth:`close`: the forced stop's own records (the interrupted summaries)."""
        for record in records:
            self._emit(record)

    def close(self, timeout_s: float) -> None:
        """No more records from the stages (waits up to ``timeout_s`` for a report being
        written)."""
        acquired = self._lock.acquire(timeout=timeout_s)
        self._closed = True
        if acquired:
            self._lock.release()


def evaluate(
    plans: Plans,
    source: Iterable[Example | Rejected],
    emit: Callable[[Record], None],
    dead_letter: Callable[[Record], None],
    on_progress: Callable[[int], None] | None = None,
    *,
    streams: Iterable[str] = (),
    stop_on_signals: bool = False,
    signals: tuple[int, ...] = STOP_SIGNALS,
) -> RunResult:
    """Run a bounded source to its end; records go to ``emit``, rejected ones to ``dead_letter``.

    ``on_progress(n)`` is called after each batch with the number of source records read so far.
    ``streams`` are the streams known in advance (a file's): each gets a ``summary`` record even
    when the input is empty.

    With ``stop_on_signals`` (in the main thread), ``signals`` (SIGINT (Ctrl-C) and SIGTERM; one
    that is ignored stays ignored) stop the run between two batches: what was evaluated is
    written whole, then an ``interrupted`` summary per stream, and :attr:`RunResult.interrupted`
    holds the signal. The stages then run in a worker thread, so that the stop can be forced
    (:mod:`foldstream.job.engines.stopping`) whatever a learner is doing: a second signal, or
    SIGTERM's grace over, ends the run at once with the records delivered and an interrupted
    summary per stream built from them (:attr:`RunResult.forced`).
    """
    outlet = _Outlet(emit, dead_letter)
    outlet.delivered.positive_class = plans.evaluation.positive
    stages: dict[str, StreamStages] = {}
    taken = handled(signals)
    if not (stop_on_signals and taken and in_main_thread()):
        return _evaluate(plans, source, outlet, on_progress, streams, stages, lambda: None)
    watch = SignalWatch()
    with handlers(taken, lambda signum, frame: watch.receive(signum)):
        return _abandonable(plans, source, outlet, on_progress, streams, stages, watch)


POLL_S = 0.1
"""How often the main thread looks whether a stop must be forced, while the stages run."""


def _abandonable(plans: Plans, source: Iterable[Example | Rejected], outlet: _Outlet,
                 on_progress: Callable[[int], None] | None, streams: Iterable[str],
                 stages: dict[str, StreamStages], watch: SignalWatch) -> RunResult:
    """The stages in a worker thread, the main thread waiting on signals (Python runs their
    handlers there): a forced stop returns without the worker, which is left where it is."""
    started = time.perf_counter()
    outcome: list = []
    aborted: list[int] = []  # something else raised in the main thread (another handler's error)

    def work() -> None:
        try:
            outcome.append(_evaluate(plans, source, outlet, on_progress, streams, stages,
                                     lambda: watch.signum or (aborted[0] if aborted else None)))
        except BaseException as error:  # noqa: BLE001 - raised again in the main thread
            outcome.append(error)

    worker = threading.Thread(target=work, name="foldstream-stages", daemon=True)
    worker.start()
    try:
        while worker.is_alive() and not watch.forced():
            worker.join(POLL_S)
    except BaseException:
        aborted.append(signal.SIGTERM)  # stop cleanly if it can, in the grace period
        worker.join(STOP_GRACE_S)
        raise
    if worker.is_alive():  # forced: write what was delivered, and leave the worker
        outlet.close(timeout_s=1.0)
        # the labels the heads had accepted (read from the abandoned worker's objects)
        outlet.delivered.classes = {s: list(st.head.classes) for s, st in list(stages.items())}
        summaries = outlet.delivered.interrupted_summaries(list(stages))
        outlet.last(summaries)
        return RunResult(summaries, time.perf_counter() - started, watch.signum, forced=True)
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def _evaluate(plans: Plans, source: Iterable[Example | Rejected], outlet: _Outlet,
              on_progress: Callable[[int], None] | None, streams: Iterable[str],
              stages_by_stream: dict[str, StreamStages],
              stopped: Callable[[], int | None]) -> RunResult:
    """The run itself; ``stopped()``, asked between source records, is the signal that stops
    it (``None`` until one came)."""
    started = time.perf_counter()
    read = 0
    max_bytes = plans.dead_letter_max_bytes

    def stages_of(stream: str) -> StreamStages:
        if stream not in stages_by_stream:
            stages_by_stream[stream] = StreamStages(plans, stream)
        return stages_by_stream[stream]

    for stream in streams:
        stages_of(stream)
    signum = None
    limit = None  # a stream passed evaluation.max_classes: the run ends as a stopped one does
    collector = Collector()
    try:
        for item in source:
            read += counts_as_read(item)
            stages = stages_of(item.stream or "")
            records, rejected = stages.take(item, hold=True)
            if rejected is not None:
                outlet.rejected(RejectedRecord.of(rejected, max_bytes).as_dict())
            if records is not None:
                outlet.records(records)
                if records:  # the first records are out: the run has settled
                    collector.settle()
                if on_progress is not None:
                    on_progress(read)
            signum = stopped()
            if signum is not None:
                break
        if signum is None:
            for stages in stages_by_stream.values():
                outlet.records(stages.finish())
    except TooManyClasses as error:
        limit = error
    finally:
        collector.release()
    for stages in stages_by_stream.values():  # stopped: the batches still in Java
        outlet.records(stages.drain())
    if on_progress is not None:
        on_progress(read)
    wall = time.perf_counter() - started
    result = RunResult(wall_time_s=wall, interrupted=signum, too_many_classes=limit)
    for stages in stages_by_stream.values():
        # Interrupted: the examples left in the batcher were not evaluated.
        head = stages.head
        summary = outlet.delivered.summary(stages.stream, stages.evaluated, head.read,
                                           head.rejected, stages.aggregator.final_measures(),
                                           interrupted=signum is not None or limit is not None,
                                           wall_time_s=wall, classes=head.classes,
                                           costs=stages.aggregator.final_costs())
        outlet.records([summary])
        result.summaries.append(summary)
    return result


def evaluate_to_list(plans: Plans, source: Iterable[Example | Rejected]) -> tuple[list[Record], list[Record]]:
    """Run and keep everything in memory: ``(records, rejected records)``; for tests and notebooks."""
    records: list[Record] = []
    rejected: list[Record] = []
    evaluate(plans, source, records.append, rejected.append)
    return records, rejected


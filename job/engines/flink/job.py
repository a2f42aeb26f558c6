"""The Flink job: the stages of ``operators/`` as keyed PyFlink operators (thin adapters).

::

    source: raw rows (stream, JSON text) read by the client, or Kafka rows
      --key by stream-->       FanOutFunction     parse, batcher + fan-out (delayed labels: the
                                                  delay fan-out); rejected -> dead letters
      --key by fold route-->   FoldFunction       the fold's learner tasks + its evaluator
                                                  (in task slots of their own: learner_slots)
      --key by stream-->       AggregatorFunction measures, comparison, ranking, alarm, summary
      --> sink (records collected into a file or stdout by the client, or Kafka topics)

Every operator keeps its stage objects in one keyed ``ValueState`` (pickled), so a checkpoint
holds the learners, windows and pending batches, and a restart resumes exactly. The fan-out of a
stream runs in one subtask (keyed by stream) so that every fold receives its batches in order.
The folds are keyed by a route chosen in :mod:`foldstream.job.engines.flink.routing` to spread them evenly.
Examples reach the fan-out as raw text and are parsed there, keyed by stream in Java: a Kafka
row crosses from Java into Python once before it is batched, a client item twice (the ``items``
map looks it up by its sequence number), never pickled.
A bounded input ends with Flink's final watermark, which fires an event-time timer registered at
the end of time in each stream's fan-out: it flushes the last batch, marked final. An unbounded
input flushes a partial batch every ``engine.flush_ms`` by a chain of processing-time timers,
which each worker starts again on a stream's first element: after a restore from a checkpoint
the restored timers do not fire (tests/test_resume.py found the last report missing).

Delayed labels (docs/method.md §13) change only the head: a stream's
:class:`~foldstream.operators.delay.DelayFanOut` (in the same keyed state, so a checkpoint holds
the pending examples) takes arrivals and labels, and its per-fold events travel the routes of
the fold batches to the same learner tasks and evaluators, which dispatch on their type.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import threading
import time
import contextlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from pyflink.common import Row, Types
from pyflink.datastream import KeyedProcessFunction, OutputTag, RuntimeContext, StreamExecutionEnvironment
from pyflink.datastream.state import ValueStateDescriptor

from foldstream.job.engines.flink import trace
from foldstream.job.engines.flink.beam_sampler import skip_state_sampler_thread
from foldstream.job.config import Config
from foldstream.job.plans import Plans, make_plans, open_source
from foldstream.job.engines.flink.routing import fold_routes
from foldstream.job.engines.stopping import Delivered, Interrupted
from foldstream.operators.aggregator import Aggregator
from foldstream.operators.delay import LabelOnly
from foldstream.operators.evaluator import FoldEvaluator
from foldstream.operators.head import StreamHead
from foldstream.operators.learners import LearnerTask
from foldstream.operators.records import (
    Example,
    FoldBatch,
    FoldReport,
    Rejected,
    dumps,
    rejected_record,
    summary_record,
)

PICKLED = Types.PICKLED_BYTE_ARRAY()
END_OF_INPUT = (1 << 63) - 2  # fired by the watermark a bounded source sends when it ends
MAX_PARALLELISM = 128  # fixed, so fold routes (job/engines/flink/routing.py) land where they were aimed
DEAD_LETTERS = OutputTag("dead-letters", Types.STRING())
STREAM_ENDS = OutputTag("stream-ends", PICKLED)


@dataclass
class StreamEnd:
    """What the fan-out knows at the end of a bounded stream and the summary needs.

    ``position``: the examples (arrivals) evaluated, when it is not ``read - rejected`` (delayed
    labels: label rows are read and are no examples)."""

    stream: str
    read: int
    rejected: int
    started: float
    position: int | None = None
    classes: list | None = None  # the stream's labels, for the summary's positive_class_not_seen


# ----------------------------------------------------------------------------- items in transit
#: A source item on its way to the fan-out: ``Row(stream, text)``, keyed in Java by ``stream``,
#: so that the fan-out receives the text alone. It decodes the text itself: an example crosses
#: from Java to Python as strings (Flink's own coders) and is never pickled on the way (PICKLED
#: records cost a cloudpickle per example).
RAW_ITEM_TYPE = Types.ROW([Types.STRING(), Types.STRING()])


def encode_item(item: Example | LabelOnly | Rejected) -> tuple[str, str]:
    """A source item as ``(stream, JSON text)`` (the client ships file and generator input this way).

    >>> decode_item(encode_item(LabelOnly("s", 7, "u", "f.jsonl:3", simulated=True))[1])
    LabelOnly(stream='s', key=7, y='u', location='f.jsonl:3', simulated=True, not_example=None)
    """
    if isinstance(item, Rejected):
        return item.stream or "", json.dumps(
            {"t": "r", "s": item.stream, "reason": item.reason, "raw": item.raw, "l": item.location},
            ensure_ascii=False)
    if isinstance(item, LabelOnly):
        return item.stream, json.dumps({"t": "l", "s": item.stream, "y": item.y, "k": item.key,
                                        "l": item.location, "sim": item.simulated,
                                        "u": item.not_example},
                                       ensure_ascii=False)
    return item.stream, json.dumps({"t": "e", "s": item.stream, "x": item.x, "y": item.y,
                                    "k": item.key, "l": item.location}, ensure_ascii=False)


def decode_item(text: str) -> Example | LabelOnly | Rejected:
    d = json.loads(text)
    if d["t"] == "r":
        return Rejected(d["s"], d["reason"], d["raw"], d["l"])
    if d["t"] == "l":
        return LabelOnly(d["s"], d["k"], d["y"], d["l"], d["sim"], d["u"])
    return Example(d["s"], d["x"], d["y"], d["k"], d["l"])


class DecodeItem:
    """The fan-out's decoder for client items: the item's text -> the item."""

    def __call__(self, text: str) -> list[Example | LabelOnly | Rejected]:
        return [decode_item(text)]


class DecodeMessage:
    """The fan-out's decoder for Kafka rows ``Row(key, value, topic, partition, offset)``:
    the message's examples and rejections (:class:`~foldstream.connectors.messages.MessageParser`)."""

    def __init__(self, parser):
        self.parser = parser

    def __call__(self, row) -> list[Example | Rejected]:
        return self.parser(row[0], row[1], f"{row[2]}/{row[3]}@{row[4]}")


# ------------------------------------------------------------------------------------ operators
@dataclass
class _StreamHead(StreamHead):
    """A stream's head as the fan-out keeps it in keyed state (state ``stream``): the engines'
    :class:`~foldstream.operators.head.StreamHead`, and what the Flink job adds to it. Its
    name, module and attributes are those of checkpoints taken before the head moved to
    ``operators/``, which restore into it."""

    targets: list[list[tuple[str, int | None]]] = field(default_factory=list)  # per fold:
    # (route, learner or None: all)
    started: float = field(default_factory=time.time)
    flush_due: int | None = None  # the flush timer of the current chain (unbounded input)


class _KeyedStateFunction(KeyedProcessFunction):
    """A keyed function whose stage objects live in one pickled ``ValueState`` per key, named
    :attr:`STATE` (the name a checkpoint stores it under). The descriptor is made in ``open()``,
    on the worker, as PyFlink wants it."""

    STATE = ""

    def open(self, runtime_context: RuntimeContext):
        skip_state_sampler_thread()
        self.state = runtime_context.get_state(ValueStateDescriptor(self.STATE, PICKLED))

    def _stored(self, create):
        """The current key's state, or ``create()`` for a key seen for the first time."""
        value = self.state.value()
        return create() if value is None else value


class FanOutFunction(_KeyedStateFunction):
    """Keyed by stream: positions, micro-batches and the k-fold fan-out of one stream."""

    STATE = "stream"

    def __init__(self, plans: Plans, parallelism: int, flush_ms: int | None, keying: str,
                 decode):
        self.plans = plans
        self.decode = decode  # a raw source row -> its examples and rejections
        self.parallelism = parallelism
        self.flush_ms = flush_ms  # None: bounded input, no timer flushes
        self.keying = keying

    def _start(self, ctx: KeyedProcessFunction.Context) -> _StreamHead:
        """A stream's first element: its batcher and fan-out (or delay fan-out)."""
        stream, p = ctx.get_current_key(), self.plans
        return p.stream_head(stream, _StreamHead, targets=learner_targets(
            stream, p, self.parallelism, self.keying))

    def open(self, runtime_context: RuntimeContext):
        super().open(runtime_context)
        self.armed: set[str] = set()  # the streams whose timers this worker has set

    def _arm(self, head: _StreamHead, ctx) -> None:
        """Set the current stream's timers, once per worker: the end-of-input timer and a chain
        of flush timers, on a stream's first element, and on its first element after a restore
        from a checkpoint, whose restored timers did not fire again (the issues: a resumed run
        never flushed its last partial batch, so its last report never came; a bounded run
        restarted after a failure never wrote its summary). Flink keeps one timer per key and
        time, so the end-of-input timer set again is still one. An older flush chain stops at
        its next timer (:meth:`on_timer` goes on only with the timer of
        :attr:`_StreamHead.flush_due`)."""
        if head.stream in self.armed:
            return
        self.armed.add(head.stream)
        ctx.timer_service().register_event_time_timer(END_OF_INPUT)
        if not self.flush_ms:
            return
        head.flush_due = ctx.timer_service().current_processing_time() + self.flush_ms
        ctx.timer_service().register_processing_time_timer(head.flush_due)

    def process_element(self, row, ctx: KeyedProcessFunction.Context):
        head: _StreamHead = self._stored(lambda: self._start(ctx))
        self._arm(head, ctx)
        for item in self.decode(row):
            fold_batches, rejected = head.take(item)
            if trace.TRACE_FILE and head.read % 100 == 0:
                trace.stage("fan-in", head.stream, head.read)
            yield from self._fan_out(head, fold_batches)
            if rejected is not None:
                yield DEAD_LETTERS, dumps(rejected_record(rejected,
                                                          self.plans.dead_letter_max_bytes))
        self.state.update(head)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext):
        head: _StreamHead | None = self.state.value()
        if head is None:
            return
        if timestamp == END_OF_INPUT:
            yield from self._fan_out(head, head.flush(final=True))
            if head.stream:  # "": the messages rejected for their key, no stream
                yield STREAM_ENDS, StreamEnd(head.stream, head.read, head.rejected, head.started,
                                             head.position if head.delay is not None else None,
                                             list(head.classes))
        else:  # a quiet unbounded stream still reports what it has
            yield from self._fan_out(head, head.flush(final=False))
            if timestamp == getattr(head, "flush_due", timestamp):  # the current chain
                head.flush_due = timestamp + self.flush_ms
                ctx.timer_service().register_processing_time_timer(head.flush_due)
        self.state.update(head)

    @staticmethod
    def _fan_out(head: _StreamHead, fold_batches: list) -> Iterator[tuple[str, int | None, FoldBatch]]:
        """Each fold batch to its fold's routes (a ``DelayFoldBatch`` as a ``FoldBatch``)."""
        for fold_batch in fold_batches:
            if trace.TRACE_FILE and fold_batch.fold == 0:
                trace.stage("fan-out", fold_batch.stream, _end(fold_batch, head.position))
            for route, learner in head.targets[fold_batch.fold]:
                yield route, learner, fold_batch


def _end(batch, position: int) -> int:
    """The position a batch reaches, for the trace (a delayed batch's events are not a range of
    positions: ``position``)."""
    return batch.start + len(batch) if isinstance(batch, FoldBatch) else position


def learner_targets(stream: str, plans: Plans, parallelism: int,
                    keying: str) -> list[list[tuple[str, int | None]]]:
    """Where each fold's batches go: one key per fold hosting every learner (``fold``), or one
    key per learner and fold (``learner_fold``), spread evenly over the subtasks."""
    k, n_learners = plans.folds, len(plans.learners)
    if keying == "fold":
        routes = fold_routes(stream, k, parallelism, MAX_PARALLELISM)
        return [[(routes[f], None)] for f in range(k)]
    routes = fold_routes(f"{stream}#learners", k * n_learners, parallelism, MAX_PARALLELISM)
    return [[(routes[f * n_learners + l], l) for l in range(n_learners)] for f in range(k)]


@dataclass
class _FoldState:
    tasks: dict[int, LearnerTask]
    evaluator: FoldEvaluator | None


class FoldFunction(_KeyedStateFunction):
    """Keyed by route: the learner tasks of one fold of one stream.

    With ``fold`` keying a key hosts every learner of the fold and the fold's evaluator, and
    emits fold reports; with ``learner_fold`` keying it hosts one learner and emits its
    predictions, routed to the fold's :class:`EvaluatorFunction`.
    """

    STATE = "fold"

    def __init__(self, plans: Plans, parallelism: int):
        self.plans = plans
        self.parallelism = parallelism

    def _start(self, learner: int | None, batch: FoldBatch) -> _FoldState:
        p = self.plans
        learners = range(len(p.learners)) if learner is None else [learner]
        return _FoldState({l: p.learner_task(l, batch.fold) for l in learners},
                          p.fold_evaluator(batch.stream, batch.fold) if learner is None else None)

    def process_element(self, routed, ctx):
        _, learner, batch = routed
        p = self.plans
        state: _FoldState = self._stored(lambda: self._start(learner, batch))
        if state.evaluator is not None:
            if trace.TRACE_FILE and batch.fold == 0:
                trace.stage("learners-in", batch.stream, _end(batch, state.evaluator.position))
            for task in state.tasks.values():
                yield from state.evaluator.add(task.process(batch))
            if trace.TRACE_FILE and batch.fold == 0:
                trace.stage("learners-out", batch.stream, _end(batch, state.evaluator.position))
        else:
            route = fold_routes(batch.stream, p.folds, self.parallelism, MAX_PARALLELISM)[batch.fold]
            yield route, state.tasks[learner].process(batch)
        self.state.update(state)


class EvaluatorFunction(_KeyedStateFunction):
    """Keyed by fold route (``learner_fold`` keying): joins the learners' predictions of a fold."""

    STATE = "evaluator"

    def __init__(self, plans: Plans):
        self.plans = plans

    def process_element(self, routed, ctx):
        _, predictions = routed
        evaluator: FoldEvaluator = self._stored(
            lambda: self.plans.fold_evaluator(predictions.stream, predictions.fold))
        yield from evaluator.add(predictions)
        self.state.update(evaluator)


@dataclass
class _AggregatorState:
    aggregator: Aggregator
    end: StreamEnd | None = None
    summarized: bool = False


class AggregatorFunction(_KeyedStateFunction):
    """Keyed by stream: the k fold reports of a position become the output records (JSON)."""

    STATE = "aggregator"

    def __init__(self, plans: Plans):
        self.plans = plans

    def process_element(self, message, ctx):
        state: _AggregatorState = self._stored(
            lambda: _AggregatorState(self.plans.aggregator(ctx.get_current_key())))
        if isinstance(message, FoldReport):
            for record in state.aggregator.add(message):
                if trace.TRACE_FILE and record["type"] == "measures":
                    trace.stage("aggregator", record["stream"], record["position"])
                yield dumps(record)
        else:
            state.end = message
        if state.aggregator.finished and state.end is not None and not state.summarized:
            end, agg = state.end, state.aggregator
            position = end.read - end.rejected if end.position is None else end.position
            yield dumps(summary_record(end.stream, position, end.read, end.rejected,
                                       time.time() - end.started, agg.final_measures(),
                                       positive_class=self.plans.evaluation.positive,
                                       classes=end.classes))
            state.summarized = True
        self.state.update(state)


# ----------------------------------------------------------------------------------- the job
def _stream_of(item) -> str:
    return item.stream or ""


def _route(routed) -> str:
    return routed[0]


def build(env: StreamExecutionEnvironment, config: Config,
          items: Iterable[tuple[str, str]] | None = None):
    """Wire the job into ``env``; returns ``(records, dead_letters)``, two streams of JSON text.

    ``items``: the source items of a file or generator source, read by the client and encoded
    by :func:`encode_item`; ``None`` for a Kafka source.
    """
    plans = make_plans(config)
    parallelism = config.engine.parallelism
    if config.source.kind == "kafka":
        keyed, decode = _kafka_rows(env, config)
        flush_ms = None if config.source.bounded else config.engine.flush_ms
    else:
        keyed, decode = _keyed_items(env, list(items or [])), DecodeItem()
        flush_ms = None
    keying = config.engine.keying
    fanned = (keyed.process(FanOutFunction(plans, parallelism, flush_ms, keying, decode),
                            output_type=PICKLED)
              .name("fan-out"))
    reports = (fanned.key_by(_route, key_type=Types.STRING())
               .process(FoldFunction(plans, parallelism), output_type=PICKLED)
               .name("learners+evaluator" if keying == "fold" else "learners"))
    if config.engine.learner_slots == "own":
        # PyFlink runs the Python operators of a task slot in one worker process; in slots of
        # their own the learners do not share a process (and its GIL) with the fan-out, the
        # aggregator and the per-example source traffic. bench/README.md measures it.
        reports = reports.slot_sharing_group("learners")
    if keying == "learner_fold":
        reports = (reports.key_by(_route, key_type=Types.STRING())
                   .process(EvaluatorFunction(plans), output_type=PICKLED).name("evaluator"))
    records = (reports.union(fanned.get_side_output(STREAM_ENDS))
               .key_by(_stream_of, key_type=Types.STRING())
               .process(AggregatorFunction(plans), output_type=Types.STRING())
               .name("aggregator"))
    return records, fanned.get_side_output(DEAD_LETTERS)


class _ItemAt:
    """Maps a sequence number to the source item it stands for, ``Row(stream, text)`` (the
    items are shipped with the function)."""

    def __init__(self, items: list[tuple[str, str]]):
        self.items = items

    def __call__(self, index: int):
        return Row(*self.items[index])


#: The most a file or generator input may weigh, pickled, on the Flink engine: py4j (PyFlink's
#: Python-to-Java bridge) base64-encodes the bytes of a Python function, and its Java decoder
#: computes the decoded length as ``characters * 6`` in a 32-bit int, which overflows past
#: 2**28 bytes (measured: 265 MB of items ship, 269 MB fail with NegativeArraySizeException).
MAX_SHIPPED_BYTES = 1 << 28


def shipped_bytes(items: list[tuple[str, str]]) -> int:
    """An upper bound of the size of ``items`` pickled into the job graph (see
    :data:`MAX_SHIPPED_BYTES`): their UTF-8 bytes and at most 16 bytes of pickle opcodes each.

    >>> import cloudpickle
    >>> items = [("elec", '{"x": %d, "y": "é"}' % i) for i in range(1000)]
    >>> len(cloudpickle.dumps(_ItemAt(items))) <= shipped_bytes(items) < 60_000
    True
    """
    return sum(len(stream.encode()) + len(text.encode()) + 16 for stream, text in items)


def _keyed_items(env, items: list[tuple[str, str]]):
    """The client's items as a checkpointable, ordered stream of their texts, keyed by stream
    (in Java, like the Kafka rows: one Java-Python round trip less per example than ``key_by``
    with a Python selector).

    The items travel inside the job graph: the client reads the whole file (or runs the
    generator) into memory, and the ``items`` map function carries the list, pickled with the
    function when the job is built. The source is a ``NumberSequenceSource`` of ``0 .. n-1``,
    and the map looks each number up in the list. So no TaskManager reads the file (the engine
    runs on the local mini-cluster, where client and TaskManagers share a machine; a job on a
    cluster reads Kafka), and the input must fit: at most :data:`MAX_SHIPPED_BYTES` (256 MiB,
    about 1.2 million examples of Electricity's size, 218 bytes each) pickled, checked by
    :func:`run` before Flink starts, and held several times over meanwhile (the client's list
    and pickle, the JVM's copies in the job graph, the Python worker's list).

    ``from_collection`` would be simpler, but after a failure it replays from the first element
    while keyed state resumes from the checkpoint; a ``NumberSequenceSource`` checkpoints its
    position, so a restart resumes exactly where the restored state stands.
    """
    from pyflink.common import WatermarkStrategy
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource

    from foldstream.job.engines.flink.env import key_by_first_field

    sequence = env.from_source(NumberSequenceSource(0, len(items) - 1),
                               WatermarkStrategy.no_watermarks(), "items").set_parallelism(1)
    rows = sequence.map(_ItemAt(items), output_type=RAW_ITEM_TYPE).set_parallelism(1).name("items")
    return key_by_first_field(rows, Types.STRING())


def _kafka_rows(env, config: Config):
    """The Kafka source's rows keyed by stream (in Java: see ``flink_env._keyed_in_java``), and
    the fan-out's decoder for them: messages are parsed in the fan-out, so an example crosses
    from Java into Python once before it is batched."""
    from foldstream.connectors.kafka import end_offsets
    from foldstream.connectors.messages import ByTopic, LabelParser, MessageParser
    from foldstream.job.engines.flink.env import kafka_source

    source = config.source
    # Delayed labels (docs/method.md §13) may come on a topic of their own: a second source,
    # unioned with the first and keyed by stream the same way; bounded, both stop at their ends.
    topics = [source.topic] + ([source.labels_topic] if source.labels_topic else [])
    stop = {t: end_offsets(source.bootstrap_servers, t, exact=True) for t in topics} \
        if source.bounded else None
    rows = kafka_source(env, source.bootstrap_servers, topics, group_id=source.group_id,
                        start=source.start, bounded=source.bounded, stop_offsets=stop,
                        value_bytes=True, key_sql=stream_key_sql(source.stream, source.streams),
                        properties=consumer_properties(config))
    parser = MessageParser(label=source.label, nominal=source.nominal, id_field=source.id_field,
                           stream=source.stream, streams=source.streams,
                           labels_later=config.delayed)
    if source.labels_topic:
        parser = ByTopic(parser, {source.labels_topic: LabelParser(
            label=source.label, id_field=source.id_field, stream=source.stream,
            streams=source.streams)})
    return rows, DecodeMessage(parser)


def consumer_properties(config: Config) -> dict[str, str]:
    """``source.properties``, with a short fetch wait for a live source unless it sets one: a
    broker may hold a fetch until ``fetch.max.wait.ms`` (Kafka's default 500 ms) even when
    records are there (Tansu does), which a live report would wait for."""
    from foldstream.job.engines.flink.env import properties_text

    source = config.source
    properties = properties_text(source.properties)
    if not source.bounded:
        properties.setdefault("fetch.max.wait.ms", "100")
    return properties


def stream_key_sql(stream: str | None, streams: list[str] | None) -> str:
    """SQL for the stream of a Kafka message by its key, as
    :class:`~foldstream.connectors.messages.MessageParser` assigns it (``stream`` for a message
    without a key), or ``''`` for one the parser rejects for its key (none and no default
    stream, or not in ``streams``): the fan-out's key, computed in Java.

    >>> stream_key_sql(None, None)
    "CASE WHEN `key` IS NULL OR `key` = '' THEN '' ELSE `key` END"
    >>> stream_key_sql("s", ["a", "b'c"])
    "CASE WHEN `key` IS NULL OR `key` = '' THEN 's' WHEN `key` IN ('a', 'b''c') THEN `key` ELSE '' END"
    """
    from foldstream.job.engines.flink.env import sql_literal

    default = sql_literal(stream or "")
    if streams is None:
        return f"CASE WHEN `key` IS NULL OR `key` = '' THEN {default} ELSE `key` END"
    known = f"`key` IN ({', '.join(map(sql_literal, streams))})" if streams else "FALSE"
    return f"CASE WHEN `key` IS NULL OR `key` = '' THEN {default} WHEN {known} THEN `key` ELSE '' END"


def make_environment(config: Config, restore: str | None = None,
                     checkpoint_dir: Path | None = None) -> StreamExecutionEnvironment:
    """The environment of a run: ``restore``, a retained checkpoint to resume from
    (:func:`resume_point`); ``checkpoint_dir``, where checkpoints are written and retained
    (``None``: Flink's configuration decides, as on a cluster)."""
    from foldstream.job.engines.flink.deps import DependencyError
    from foldstream.job.engines.flink.env import make_env

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise DependencyError("engine.kind: flink needs Java 17 (no `java` on PATH and no "
                                "JAVA_HOME); install it, or run with --set engine.kind=inprocess")

    jars: list[str] = []
    if config.source.kind == "kafka" or config.sink.kind == "kafka":
        if config.engine.jars is not None:
            jars = config.engine.jars
        else:
            from foldstream.job.engines.flink.deps import ensure_kafka_jars

            jars = [str(p) for p in ensure_kafka_jars()]
    settings = {"pipeline.max-parallelism": str(MAX_PARALLELISM)}
    # The local mini-cluster's slots (a cluster has its own).
    settings["taskmanager.numberOfTaskSlots"] = str(config.engine.task_slots)
    live = config.source.kind == "kafka" and not config.source.bounded
    bundle_ms = config.engine.bundle_time_ms or (50 if live else None)
    if bundle_ms:
        # Each Python operator passes its output on when its bundle closes, by default after
        # up to a second: four operators in a row would hold a live report for seconds.
        settings["python.fn-execution.bundle.time"] = str(bundle_ms)
    if live:
        # Flink flushes a network buffer that is not full every 100 ms by default; a report
        # crosses four such channels.
        settings["execution.buffer-timeout.interval"] = "10 ms"
    interval = config.checkpoint_interval_ms
    if interval:
        settings.update({
            "execution.checkpointing.interval": f"{interval} ms",
            # bench/README.md: aligned, a barrier waits behind every batch read ahead of the
            # learners (9 to 19 s on a backlog); unaligned, 1 to 4 s
            "execution.checkpointing.unaligned.enabled":
                "true" if config.engine.unaligned_checkpoints else "false",
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": str(config.engine.restart_attempts),
            "restart-strategy.fixed-delay.delay": "1 s",
        })
    if interval and checkpoint_dir is not None:
        settings.update({
            # kept after a crash or a cancel, for `foldstream run --resume` (Flink keeps the
            # latest completed one and deletes those it subsumes)
            "execution.checkpointing.dir": checkpoint_dir.as_uri(),
            "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
        })
    if restore:
        settings["execution.state-recovery.path"] = restore
    settings.update(config.engine.flink_config)  # make_env writes them as Flink reads them
    return make_env(config.engine.parallelism, jars, settings, config.engine.python_executable)


def latest_checkpoint(directory: Path) -> Path | None:
    """The newest completed checkpoint under ``directory`` (``<job id>/chk-N`` folders; a
    checkpoint is complete once its ``_metadata`` is written), or ``None``.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for job, n in (("a", 3), ("b", 7), ("b", 8)):
    ...     (root / job / f"chk-{n}").mkdir(parents=True)
    >>> _ = [(root / j / c / "_metadata").write_bytes(b"") for j, c in (("a", "chk-3"), ("b", "chk-7"))]
    >>> latest_checkpoint(root).relative_to(root).as_posix()  # b/chk-8 is not complete
    'b/chk-7'
    """
    done = [m.parent for m in Path(directory).glob("*/chk-*/_metadata")]
    return max(done, key=lambda c: (c.stat().st_mtime, int(c.name[4:])), default=None)


def resume_point(config: Config, resume: str) -> str:
    """The checkpoint a ``--resume`` restores: ``resume`` itself (a ``chk-N`` folder or its
    ``_metadata``), or for ``"latest"`` the newest retained checkpoint of this configuration
    (:attr:`~foldstream.job.config.Config.checkpoint_dir`); raise ``ConfigError`` if there is
    none."""
    from foldstream.job.config import ConfigError

    if resume != "latest":
        path = Path(resume).expanduser()
        if not path.exists():
            raise ConfigError(f"--resume {resume}: no such checkpoint")
        return str(path.resolve())
    directory = config.checkpoint_dir
    if directory is None:
        raise ConfigError("--resume: this run takes no checkpoints (a bounded or file source "
                          "without engine.checkpoint_interval_ms)")
    latest = latest_checkpoint(directory)
    if latest is None:
        raise ConfigError(f"--resume: no completed checkpoint of this configuration under "
                          f"{directory} (engine.checkpoint_dir); did the run reach one?")
    return str(latest)


def check_start(config: Config, restore: str | None) -> None:
    """Refuse ``source.start: committed`` without a checkpoint to restore: the learners would
    start afresh at position 0 while the offsets go on, so the records would repeat the
    identities (stream, position) of earlier ones with different values."""
    from foldstream.job.config import ConfigError

    if config.source.kind == "kafka" and config.source.start == "committed" and not restore:
        raise ConfigError("source.start: committed restarts the positions at 0 with fresh "
                          "learners (records would collide with the earlier run's); resume the "
                          "run with `foldstream run CONFIG --resume` instead, or start from "
                          "earliest")


#: How long the client waits for a Kafka broker to answer before it gives up (seconds).
PREFLIGHT_TIMEOUT_S = 5.0


def check_kafka(config: Config) -> None:
    """Raise :class:`~foldstream.connectors.kafka.KafkaUnavailable`, naming the bootstrap servers
    or the missing topic, unless the Kafka source's and sink's brokers answer and their topics
    exist. Both entry points call it before Flink starts (and before the end offsets of a
    bounded source are asked for), so a broker that is down fails in seconds, the same way.
    """
    from foldstream.connectors.kafka import check_bootstrap

    source, sink = config.source, config.sink
    if source.kind == "kafka":
        check_bootstrap(source.bootstrap_servers, PREFLIGHT_TIMEOUT_S,
                        topics=[source.topic] + ([source.labels_topic] if source.labels_topic
                                                 else []))
    if sink.kind == "kafka":
        check_bootstrap(sink.bootstrap_servers, PREFLIGHT_TIMEOUT_S,
                        topics=[sink.topic, sink.dead_letter_topic])


class Stop:
    """The signal an :func:`interruptible` block received, if any (truthy once one came), and
    :meth:`held`, a section that a signal does not cut: the signal waits for its end.

    >>> stop = Stop()
    >>> bool(stop), stop.signum
    (False, None)
    """

    def __init__(self):
        self.received: list[int] = []
        self.holding = False

    def __bool__(self) -> bool:
        return bool(self.received)

    @property
    def signum(self) -> int | None:
        return self.received[0] if self.received else None

    @contextmanager
    def held(self):
        """Run the block whole: a signal that comes inside it is raised at its end, so that a
        record is handed on and counted together or not at all."""
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
        if self.received:
            raise Interrupted(self.received[0])


@contextmanager
def interruptible():
    """Turn Ctrl-C and SIGTERM during a Flink run into one :class:`Interrupted`; yields the
    :class:`Stop` that says whether one came.

    A signal lands wherever the client waits, mostly inside a py4j call to the JVM; the broken
    call then raises py4j errors of its own (and logs them) while the job is being torn down,
    which reached the user as a py4j traceback. Here the first signal raises
    :class:`Interrupted` (at once, or at the end of a :meth:`Stop.held` section), py4j's logger
    is silenced, and whatever the teardown raises after it is replaced by that one exception,
    which the command line reports in one line. Outside the main thread (where Python cannot set
    handlers) it does nothing.
    """
    stop = Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum, frame):
        # The first signal stops at once (the job is cancelled: Flink cannot finish a report on
        # demand, and a learner stuck in a worker process does not hold the client); a second
        # one ends a teardown that waits (job/engines/stopping.py), except while the
        # interrupted summaries are written.
        stop.received.append(signum)
        logging.getLogger("py4j").setLevel(logging.CRITICAL + 1)
        if not stop.holding:
            raise Interrupted(stop.received[0])

    def quiet(record: logging.LogRecord) -> bool:
        # py4j logs "KeyboardInterrupt while sending command." with its traceback on the root
        # logger when the signal lands inside a call
        return not stop.received

    root = logging.getLogger()
    root.addFilter(quiet)
    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    except BaseException as error:
        if stop.received and not isinstance(error, Interrupted):
            raise Interrupted(stop.received[0]) from None
        raise
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        root.removeFilter(quiet)


def run(config: Config, emit, dead_letter, on_progress=None, source=None,
        resume: str | None = None) -> None:
    """Run the job on the local mini-cluster (file/stdout sinks: records come back here).

    ``source``: the examples (and rejected records) to evaluate instead of the configured
    source's: the Python API's sources given as objects, which YAML cannot express.

    ``emit(record)`` and ``dead_letter(record)`` receive the records as the client collects
    them; ``on_progress(n)``, when given, the number of source records evaluated so far
    (see :func:`deliver`), as the in-process engine reports it. With a Kafka sink nothing comes
    back, so neither is called. Stopped by a signal, it emits a summary marked ``interrupted``
    for each stream (:class:`Delivered`) and raises :class:`Interrupted`. ``resume``: ``"latest"`` or a checkpoint to resume from
    (:func:`resume_point`).
    """
    restore = resume_point(config, resume) if resume else None
    check_start(config, restore)
    check_kafka(config)
    if source is None and config.source.kind != "kafka":
        source = open_source(config)
    items = None if source is None else [encode_item(i) for i in source]
    if items == []:
        return  # an empty input: no stream, no record (as in the in-process engine)
    if items is not None and shipped_bytes(items) > MAX_SHIPPED_BYTES:
        from foldstream.job.config import ConfigError

        raise ConfigError(
            f"source: {len(items):,} examples ({shipped_bytes(items) / 2**20:,.0f} MiB) are more "
            f"than engine.kind: flink can ship inside its job graph ({MAX_SHIPPED_BYTES / 2**20:.0f}"
            " MiB); set source.limit, run with engine.kind: inprocess, or send the input into "
            "Kafka (foldstream produce) and read it with source.kind: kafka")
    with interruptible() as stopped:
        env = make_environment(config, restore, config.checkpoint_dir)
        records, dead_letters = build(env, config, items)
        if config.sink.kind == "kafka":
            to_kafka(env, config, records, dead_letters)
            env.execute("foldstream")
            return
        tagged = records.map(lambda r: "M" + r, Types.STRING()).union(
            dead_letters.map(lambda r: "D" + r, Types.STRING()))
        delivered = Delivered()
        try:
            with tagged.execute_and_collect("foldstream") as results:
                deliver(results, emit, dead_letter, on_progress, delivered, stopped.held)
        except BaseException:
            if stopped:  # a signal (whatever the teardown raised after it)
                stopped.holding = True  # a further signal does not cut the summaries
                streams = dict.fromkeys(stream for stream, _ in items or ())
                for summary in delivered.interrupted_summaries(streams):
                    emit(summary)
            raise


def deliver(tagged: Iterable[str], emit, dead_letter, on_progress=None,
            delivered: Delivered | None = None, held=contextlib.nullcontext) -> None:
    """Hand the collected texts (``"M"`` + a record, ``"D"`` + a rejected record) on, and report
    progress: per stream, the position of its latest ``measures`` record (the examples
    evaluated; with delayed labels several reports share a position, and progress moves once),
    then its summary's ``examples_read`` (rejected records included, as the progress bar's
    total counts them); ``on_progress`` gets the sum over the streams.
    ``held()`` wraps the handing on of each record and its note in ``delivered``
    (:meth:`Stop.held`: a signal does not come between them).

    >>> seen = []
    >>> deliver(['M{"type":"measures","stream":"a","position":500}', 'D{"type":"rejected"}',
    ...          'M{"type":"measures","stream":"b","position":200,"labelled":100}',
    ...          'M{"type":"measures","stream":"b","position":200,"labelled":150}',
    ...          'M{"type":"summary","stream":"a","position":900,"examples_read":901}'],
    ...         lambda r: None, lambda r: None, seen.append)
    >>> seen
    [500, 700, 1101]
    """
    positions: dict[str | None, int] = {}
    for text in tagged:
        record = json.loads(text[1:])
        with held():
            if delivered is not None:
                delivered.take(record)
            (emit if text[0] == "M" else dead_letter)(record)
        if text[0] != "M":
            continue
        kind = record.get("type")
        if on_progress is not None and kind in ("measures", "summary"):
            stream = record.get("stream")
            position = record["examples_read"] if kind == "summary" else record["position"]
            if position != positions.get(stream):
                positions[stream] = position
                on_progress(sum(positions.values()))


def to_kafka(env, config: Config, records, dead_letters) -> None:
    """Attach Kafka sinks: records to ``sink.topic``, rejected input to ``sink.dead_letter_topic``,
    each message keyed by its record's stream. A record larger than the topic's message limit
    (:func:`foldstream.connectors.kafka.message_limit`, found here at start) is written in
    ``part`` records that readers put together again (:mod:`foldstream.connectors.parts`):
    the producer would refuse it, and that failed the whole job."""
    from foldstream.connectors.kafka import message_limit
    from foldstream.connectors.parts import check_limit, kafka_messages
    from foldstream.job.config import KAFKA_MAX_REQUEST_BYTES, ConfigError
    from foldstream.job.engines.flink.env import KEYED_TYPE, kafka_sink

    sink = config.sink
    guarantee = sink.delivery_guarantee
    prefix = f"foldstream-{sink.topic}" if guarantee == "exactly-once" else None

    for stream, topic in ((records, sink.topic), (dead_letters, sink.dead_letter_topic)):
        limit = message_limit(sink.bootstrap_servers, topic, sink.properties,
                              KAFKA_MAX_REQUEST_BYTES, PREFLIGHT_TIMEOUT_S)
        try:
            check_limit(limit)
        except ValueError as error:
            raise ConfigError(f"sink.properties.max.request.size (topic {topic}): "
                              f"{error}") from None

        def messages(text: str, limit: int = limit) -> Iterator[Row]:
            for key, value in kafka_messages(text, limit):
                yield Row(key, value)

        kafka_sink(env, stream.flat_map(messages, output_type=KEYED_TYPE),
                   sink.bootstrap_servers, topic, delivery_guarantee=guarantee,
                   transactional_id_prefix=f"{prefix}-{topic}" if prefix else None,
                   properties=sink.properties)

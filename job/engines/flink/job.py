"""The Flink job: the stages of ``operators/`` as keyed PyFlink operators (thin adapters).

::

    source: raw rows (stream, JSON text) read by the client, or Kafka rows
      --key by stream-->       FanOutFunction     parse, batcher + fan-out; rejected -> dead letters
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
the end of time in each stream's fan-out: it flushes the last batch, marked final.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from pyflink.common import Row, Types
from pyflink.datastream import KeyedProcessFunction, OutputTag, RuntimeContext, StreamExecutionEnvironment
from pyflink.datastream.state import ValueStateDescriptor

from foldstream.job.engines.flink import trace
from foldstream.job.engines.flink.beam_sampler import skip_state_sampler_thread
from foldstream.job.config import Config
from foldstream.job.plans import Plans, make_plans, open_source
from foldstream.job.engines.flink.routing import fold_routes
from foldstream.operators.aggregator import Aggregator
from foldstream.operators.evaluator import FoldEvaluator
from foldstream.operators.fanout import Batcher, FanOut
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
    """What the fan-out knows at the end of a bounded stream and the summary needs."""

    stream: str
    read: int
    rejected: int
    started: float


# ----------------------------------------------------------------------------- items in transit
#: A source item on its way to the fan-out: ``Row(stream, text)``, keyed in Java by ``stream``,
#: so that the fan-out receives the text alone. It decodes the text itself: an example crosses
#: from Java to Python as strings (Flink's own coders) and is never pickled on the way (PICKLED
#: records cost a cloudpickle per example).
RAW_ITEM_TYPE = Types.ROW([Types.STRING(), Types.STRING()])


def encode_item(item: Example | Rejected) -> tuple[str, str]:
    """A source item as ``(stream, JSON text)`` (the client ships file and generator input this way)."""
    if isinstance(item, Rejected):
        return item.stream or "", json.dumps(
            {"t": "r", "s": item.stream, "reason": item.reason, "raw": item.raw, "l": item.location},
            ensure_ascii=False)
    return item.stream, json.dumps({"t": "e", "s": item.stream, "x": item.x, "y": item.y,
                                    "k": item.key, "l": item.location}, ensure_ascii=False)


def decode_item(text: str) -> Example | Rejected:
    d = json.loads(text)
    if d["t"] == "r":
        return Rejected(d["s"], d["reason"], d["raw"], d["l"])
    return Example(d["s"], d["x"], d["y"], d["k"], d["l"])


class DecodeItem:
    """The fan-out's decoder for client items: the item's text -> the item."""

    def __call__(self, text: str) -> list[Example | Rejected]:
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
class _StreamHead:
    batcher: Batcher
    fanout: FanOut
    targets: list[list[tuple[str, int | None]]]  # per fold: (route, learner or None: all)
    read: int = 0
    rejected: int = 0
    started: float = field(default_factory=time.time)


class FanOutFunction(KeyedProcessFunction):
    """Keyed by stream: positions, micro-batches and the k-fold fan-out of one stream."""

    def __init__(self, plans: Plans, parallelism: int, flush_ms: int | None, keying: str,
                 decode):
        self.plans = plans
        self.decode = decode  # a raw source row -> its examples and rejections
        self.parallelism = parallelism
        self.flush_ms = flush_ms  # None: bounded input, no timer flushes
        self.keying = keying

    def open(self, runtime_context: RuntimeContext):
        skip_state_sampler_thread()
        self.state = runtime_context.get_state(ValueStateDescriptor("stream", PICKLED))

    def process_element(self, row, ctx: KeyedProcessFunction.Context):
        head: _StreamHead | None = self.state.value()
        stream = ctx.get_current_key()
        if head is None:
            p = self.plans
            head = _StreamHead(p.batcher(stream), p.fan_out(stream),
                               learner_targets(stream, p, self.parallelism, self.keying))
            ctx.timer_service().register_event_time_timer(END_OF_INPUT)
            if self.flush_ms:
                ctx.timer_service().register_processing_time_timer(
                    ctx.timer_service().current_processing_time() + self.flush_ms)
        for item in self.decode(row):
            head.read += 1
            if trace.TRACE_FILE and head.read % 100 == 0:
                trace.stage("fan-in", head.batcher.stream, head.read)
            if isinstance(item, Rejected):
                head.rejected += 1
                item.position = head.batcher.position
                yield DEAD_LETTERS, dumps(rejected_record(item))
            else:
                for batch in head.batcher.add(item):
                    yield from self._fan_out(head, batch)
        self.state.update(head)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext):
        head: _StreamHead | None = self.state.value()
        if head is None:
            return
        if timestamp == END_OF_INPUT:
            for batch in head.batcher.flush(final=True):
                yield from self._fan_out(head, batch)
            yield STREAM_ENDS, StreamEnd(head.batcher.stream, head.read, head.rejected, head.started)
        else:  # a quiet unbounded stream still reports what it has
            for batch in head.batcher.flush(final=False):
                yield from self._fan_out(head, batch)
            ctx.timer_service().register_processing_time_timer(timestamp + self.flush_ms)
        self.state.update(head)

    @staticmethod
    def _fan_out(head: _StreamHead, batch) -> Iterator[tuple[str, int | None, FoldBatch]]:
        for fold_batch in head.fanout.process(batch):
            if trace.TRACE_FILE and fold_batch.fold == 0:
                trace.stage("fan-out", fold_batch.stream, fold_batch.start + len(fold_batch))
            for route, learner in head.targets[fold_batch.fold]:
                yield route, learner, fold_batch


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


class FoldFunction(KeyedProcessFunction):
    """Keyed by route: the learner tasks of one fold of one stream.

    With ``fold`` keying a key hosts every learner of the fold and the fold's evaluator, and
    emits fold reports; with ``learner_fold`` keying it hosts one learner and emits its
    predictions, routed to the fold's :class:`EvaluatorFunction`.
    """

    def __init__(self, plans: Plans, parallelism: int):
        self.plans = plans
        self.parallelism = parallelism

    def open(self, runtime_context: RuntimeContext):
        skip_state_sampler_thread()
        self.state = runtime_context.get_state(ValueStateDescriptor("fold", PICKLED))

    def process_element(self, routed, ctx):
        _, learner, batch = routed
        p = self.plans
        state: _FoldState | None = self.state.value()
        if state is None:
            learners = range(len(p.learners)) if learner is None else [learner]
            state = _FoldState({l: p.learner_task(l, batch.fold) for l in learners},
                               p.fold_evaluator(batch.stream, batch.fold) if learner is None else None)
        if state.evaluator is not None:
            if trace.TRACE_FILE and batch.fold == 0:
                trace.stage("learners-in", batch.stream, batch.start + len(batch))
            for task in state.tasks.values():
                yield from state.evaluator.add(task.process(batch))
            if trace.TRACE_FILE and batch.fold == 0:
                trace.stage("learners-out", batch.stream, batch.start + len(batch))
        else:
            route = fold_routes(batch.stream, p.folds, self.parallelism, MAX_PARALLELISM)[batch.fold]
            yield route, state.tasks[learner].process(batch)
        self.state.update(state)


class EvaluatorFunction(KeyedProcessFunction):
    """Keyed by fold route (``learner_fold`` keying): joins the learners' predictions of a fold."""

    def __init__(self, plans: Plans):
        self.plans = plans

    def open(self, runtime_context: RuntimeContext):
        skip_state_sampler_thread()
        self.state = runtime_context.get_state(ValueStateDescriptor("evaluator", PICKLED))

    def process_element(self, routed, ctx):
        _, predictions = routed
        evaluator: FoldEvaluator | None = self.state.value()
        if evaluator is None:
            evaluator = self.plans.fold_evaluator(predictions.stream, predictions.fold)
        yield from evaluator.add(predictions)
        self.state.update(evaluator)


@dataclass
class _AggregatorState:
    aggregator: Aggregator
    end: StreamEnd | None = None
    summarized: bool = False


class AggregatorFunction(KeyedProcessFunction):
    """Keyed by stream: the k fold reports of a position become the output records (JSON)."""

    def __init__(self, plans: Plans):
        self.plans = plans

    def open(self, runtime_context: RuntimeContext):
        skip_state_sampler_thread()
        self.state = runtime_context.get_state(ValueStateDescriptor("aggregator", PICKLED))

    def process_element(self, message, ctx):
        state: _AggregatorState | None = self.state.value()
        if state is None:
            state = _AggregatorState(self.plans.aggregator(ctx.get_current_key()))
        if isinstance(message, FoldReport):
            for record in state.aggregator.add(message):
                if trace.TRACE_FILE and record["type"] == "measures":
                    trace.stage("aggregator", record["stream"], record["position"])
                yield dumps(record)
        else:
            state.end = message
        if state.aggregator.finished and state.end is not None and not state.summarized:
            end, agg = state.end, state.aggregator
            position = end.read - end.rejected
            yield dumps(summary_record(end.stream, position, end.read, end.rejected,
                                       time.time() - end.started, agg.final_measures()))
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


def _keyed_items(env, items: list[tuple[str, str]]):
    """The client's items as a checkpointable, ordered stream of their texts, keyed by stream
    (in Java, like the Kafka rows: one Java-Python round trip less per example than ``key_by``
    with a Python selector).

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
    from foldstream.connectors.messages import MessageParser
    from foldstream.job.engines.flink.env import kafka_source

    source = config.source
    stop = end_offsets(source.bootstrap_servers, source.topic, exact=True) if source.bounded else None
    rows = kafka_source(env, source.bootstrap_servers, source.topic, group_id=source.group_id,
                        start=source.start, bounded=source.bounded, stop_offsets=stop,
                        value_bytes=True, key_sql=stream_key_sql(source.stream, source.streams),
                        properties=consumer_properties(config))
    parser = MessageParser(label=source.label, nominal=source.nominal, id_field=source.id_field,
                           stream=source.stream, streams=source.streams)
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


def make_environment(config: Config) -> StreamExecutionEnvironment:
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
    settings.update(config.engine.flink_config)  # make_env writes them as Flink reads them
    return make_env(config.engine.parallelism, jars, settings, config.engine.python_executable)


def run(config: Config, emit, dead_letter, on_progress=None) -> None:
    """Run the job on the local mini-cluster (file/stdout sinks: records come back here)."""
    items = None if config.source.kind == "kafka" else [encode_item(i) for i in open_source(config)]
    if items == []:
        return  # an empty input: no stream, no record (as in the in-process engine)
    env = make_environment(config)
    records, dead_letters = build(env, config, items)
    if config.sink.kind == "kafka":
        to_kafka(env, config, records, dead_letters)
        env.execute("foldstream")
        return
    tagged = records.map(lambda r: "M" + r, Types.STRING()).union(
        dead_letters.map(lambda r: "D" + r, Types.STRING()))
    with tagged.execute_and_collect("foldstream") as results:
        for text in results:
            record = json.loads(text[1:])
            (emit if text[0] == "M" else dead_letter)(record)


def to_kafka(env, config: Config, records, dead_letters) -> None:
    """Attach Kafka sinks: records to ``sink.topic``, rejected input to ``sink.dead_letter_topic``,
    each message keyed by its record's stream."""
    from foldstream.job.engines.flink.env import KEYED_TYPE, kafka_sink

    sink = config.sink
    guarantee = sink.delivery_guarantee
    prefix = f"foldstream-{sink.topic}" if guarantee == "exactly-once" else None

    def keyed(text: str) -> Row:
        record = json.loads(text)
        return Row(record.get("stream") or "", text)

    for stream, topic in ((records, sink.topic), (dead_letters, sink.dead_letter_topic)):
        kafka_sink(env, stream.map(keyed, output_type=KEYED_TYPE), sink.bootstrap_servers, topic,
                   delivery_guarantee=guarantee,
                   transactional_id_prefix=f"{prefix}-{topic}" if prefix else None,
                   properties=sink.properties)

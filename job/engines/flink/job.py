"""The Flink job: the stages of ``operators/`` as keyed PyFlink operators (thin adapters).

::

    source: a file's lines or a generator's ticks (read in the job), or Kafka rows
      --key by stream-->       FanOutFunction     parse, batcher + fan-out (delayed labels: the
                                                  delay fan-out); rejected -> dead letters
      --key by subtask route--> FoldFunction      its folds' learner tasks + evaluators
                                                  (in task slots of their own: learner_slots)
      --key by stream-->       AggregatorFunction measures, comparison, ranking, alarm, summary
      --> sink (records collected into a file or stdout by the client, or Kafka topics)

Every operator keeps its stage objects in one keyed ``ValueState`` (pickled), so a checkpoint
holds the learners, windows and pending batches, and a restart resumes exactly. The fan-out of a
stream runs in one subtask (keyed by stream) so that every fold receives its batches in order.
The learner tasks are keyed by a route per subtask, chosen in
:mod:`foldstream.job.engines.flink.routing` so that each lands on a subtask of its own, and the
folds are dealt round robin over them (:func:`learner_targets`); an example batch's fold batches
bound for one subtask travel as one record (:class:`RoutedBatches`), so their shared examples are
pickled once per subtask rather than once per fold; keyed in Java (:data:`ROUTED_TYPE`): no
Python operator between fan-out and learners.
Examples reach the fan-out as raw text and are parsed there, keyed by stream in Java: a Kafka
row crosses from Java into Python once before it is batched, a file's line twice (a map at
parallelism 1 tags it with its stream), never pickled; the fan-out's decoder keeps how far it
has read in the stream's keyed state (:mod:`~foldstream.job.engines.flink.files`).
A bounded input ends with Flink's final watermark, which fires an event-time timer registered at
the end of time in each stream's fan-out: it flushes the last batch, marked final. An unbounded
input flushes a partial batch every ``engine.flush_ms`` by a chain of processing-time timers,
which each worker starts again on a stream's first element: after a restore from a checkpoint
the restored timers do not fire (tests/test_resume.py found the last report missing).

Delayed labels (docs/method.md §13) change only the head: a stream's
:class:`~foldstream.operators.stages.delay.DelayFanOut` (in the same keyed state, so a checkpoint holds
the pending examples) takes arrivals and labels, and its per-fold events travel the routes of
the fold batches to the same learner tasks and evaluators, which dispatch on their type.

This module holds the graph (:func:`build`) and its functions; how a file or generator source
is read inside it is :mod:`~foldstream.job.engines.flink.files`'s, where the job runs
:mod:`~foldstream.job.engines.flink.env`'s, its Kafka ends :mod:`~foldstream.job.engines.flink.kafka`'s,
the checks before a run, the run and the delivery of its records
:mod:`~foldstream.job.engines.flink.run`'s.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple

from pyflink.common import Row, Types
from pyflink.datastream import KeyedProcessFunction, OutputTag, RuntimeContext, StreamExecutionEnvironment
from pyflink.datastream.state import ValueStateDescriptor

from foldstream.job.config import Config
from foldstream.job.engines.collector import Collector
from foldstream.job.engines.flink import trace
from foldstream.job.engines.flink.beam_sampler import skip_state_sampler_thread
from foldstream.job.engines.flink.keying import key_by_first_field
from foldstream.job.engines.flink.kafka import kafka_rows
from foldstream.job.engines.flink.files import FileInput
from foldstream.job.engines.flink.routing import MAX_PARALLELISM, fold_routes
from foldstream.job.plans import Plans, make_plans
from foldstream.operators.stages.aggregator import Aggregator
from foldstream.operators.stages.evaluator import FoldEvaluator
from foldstream.operators.stages.head import StreamHead
from foldstream.operators.stages.learner import LearnerTask, process_all
from foldstream.operators.records.outputs import RejectedRecord, SummaryRecord
from foldstream.operators.records.features import FeatureRows, float_rows
from foldstream.operators.records.base import (
    Example, FoldBatch, FoldReport, PredictionBatch, Rejected, dumps
)
from foldstream.operators.stages.delay import DelayFoldBatch, DelayPredictionBatch

PICKLED = Types.PICKLED_BYTE_ARRAY()
END_OF_INPUT = (1 << 63) - 2  # fired by the watermark a bounded source sends when it ends
DEAD_LETTERS = OutputTag("dead-letters", Types.STRING())
#: What the aggregators take, ``Row(stream, item)`` (a fold report, or the fan-out's
#: :class:`StreamEnd`), keyed by stream in Java as :data:`ROUTED_TYPE` is by route.
BY_STREAM_TYPE = Types.ROW([Types.STRING(), PICKLED])
STREAM_ENDS = OutputTag("stream-ends", BY_STREAM_TYPE)


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
#: The fan-out's fold batches on their way to the learners: ``Row(route, RoutedBatches)``,
#: keyed by ``route`` in Java (:func:`~foldstream.job.engines.flink.keying.key_by_first_field`),
#: as the source items are. With ``key_by`` and a Python selector each fold batch went through
#: one more Python operator (unpickled, keyed, pickled again) whose bundle held it up to a bundle
#: time; bench/README.md measures the difference.
ROUTED_TYPE = Types.ROW([Types.STRING(), PICKLED])


class Target(NamedTuple):
    """Where a fold's batches go: the key of a learner-task operator (``route``, one per
    subtask) and the learner it hosts there (``None``: every learner of the fold, ``fold``
    keying). A stream's head keeps one list of them per fold (:attr:`_StreamHead.targets`)."""

    route: str
    learner: int | None


class RoutedBatches(NamedTuple):
    """The fold batches of the fan-out's output bound for one learner-task key: the record of
    ``Row(route, RoutedBatches)`` (:data:`ROUTED_TYPE`). ``items``: ``(learner, batch)`` in the
    fan-out's order (``learner`` ``None``: every learner of the batch's fold). The fold batches
    of an example batch share its feature dicts, which one pickle writes once: one record per
    subtask carries them once, where one record per fold carried them ``folds`` times. A
    checkpoint taken with unaligned barriers may hold it in flight, so the operators read it by
    unpacking."""

    route: str
    items: list[tuple[int | None, FoldBatch | DelayFoldBatch]]


class RoutedPredictions(NamedTuple):
    """A learner's predictions on their way to its fold's evaluator (``learner_fold``
    keying), keyed by the evaluator's ``route``; read by unpacking, as :class:`RoutedBatches`."""

    route: str
    predictions: PredictionBatch | DelayPredictionBatch


class DecodeMessage:
    """The fan-out's decoder for Kafka rows ``Row(key, value, topic, partition, offset)``:
    the message's examples and rejections (:class:`~foldstream.connectors.messages.MessageParser`)."""

    def __init__(self, parser):
        self.parser = parser

    def __call__(self, row, head) -> list[Example | Rejected]:
        return self.parser(row[0], row[1], f"{row[2]}/{row[3]}@{row[4]}")


# ------------------------------------------------------------------------------------ operators
@dataclass
class _StreamHead(StreamHead):
    """A stream's head as the fan-out keeps it in keyed state (state ``stream``): the engines'
    :class:`~foldstream.operators.stages.head.StreamHead`, and what the Flink job adds to it. Its
    name, module and attributes are those of checkpoints taken before the head moved to
    ``operators/``, which restore into it."""

    targets: list[list[Target]] = field(default_factory=list)  # per fold (a checkpoint of an
    # older job holds plain (route, learner) tuples: read by unpacking)
    started: float = field(default_factory=time.time)
    flush_due: int | None = None  # the flush timer of the current chain (unbounded input)
    reader: object = None  # how far the decoder has read a file or generator source
    # (files.SourceRead), so that a restart parses and generates on from there


_WORKER_COLLECTOR = Collector()
"""The Python worker's collector (job/engines/collector.py): its objects frozen out of the
sweeps once its learners have taken a record; the worker ends with the job."""


class _KeyedStateFunction(KeyedProcessFunction):
    """A keyed function whose stage objects live in one pickled ``ValueState`` per key, named
    :attr:`STATE` (the name a checkpoint stores it under). The descriptor is made in ``open()``,
    on the worker, as PyFlink wants it.

    :attr:`snapshots` ``False`` (a job that takes no checkpoint or savepoint: a local run
    without checkpoints): the objects stay in the worker's memory instead, one per key. PyFlink
    pickles a state written in a bundle when the bundle ends, and on Python 3.11 and 3.12
    pickling an object gives it a dictionary of its own, which every later read of its
    attributes goes through: the learners' own work took 6 to 10% more CPU for the rest of the
    run (bench/README.md). Pickled for nothing when no snapshot can read it.
    """

    STATE = ""
    snapshots = True  # build() says

    def open(self, runtime_context: RuntimeContext):
        skip_state_sampler_thread()
        self.state = runtime_context.get_state(ValueStateDescriptor(self.STATE, PICKLED))
        self.kept: dict = {}  # without snapshots: the objects of each key

    def _stored(self, ctx, create):
        """The current key's state, or ``create()`` for a key seen for the first time."""
        value = self.state.value() if self.snapshots else self.kept.get(ctx.get_current_key())
        return create() if value is None else value

    def _keep(self, ctx, value) -> None:
        """``value``, the current key's state from now on."""
        if self.snapshots:
            self.state.update(value)
        else:
            self.kept[ctx.get_current_key()] = value


class FanOutFunction(_KeyedStateFunction):
    """Keyed by stream: positions, micro-batches and the k-fold fan-out of one stream."""

    STATE = "stream"

    def __init__(self, plans: Plans, parallelism: int, flush_ms: int | None, keying: str,
                 decode):
        self.plans = plans
        self.decode = decode  # (a raw source row, the head) -> its examples and rejections
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
        from a checkpoint, whose restored timers do not fire again (without them a resumed run
        would never flush its last partial batch, so its last report would never come, and a
        bounded run restarted after a failure would never write its summary). Flink keeps one
        timer per key and time, so the end-of-input timer set again is still one. An older flush
        chain stops at its next timer (:meth:`on_timer` goes on only with the timer of
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
        head: _StreamHead = self._stored(ctx, lambda: self._start(ctx))
        self._arm(head, ctx)
        for item in self.decode(row, head):
            fold_batches, rejected = head.take(item)
            if trace.TRACE_FILE and head.read % 100 == 0:
                trace.stage("fan-in", head.stream, head.read)
            yield from self._fan_out(head, fold_batches)
            if rejected is not None:
                yield DEAD_LETTERS, dumps(RejectedRecord.of(
                    rejected, self.plans.dead_letter_max_bytes).as_dict())
        self._keep(ctx, head)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext):
        head: _StreamHead | None = self._stored(ctx, lambda: None)
        if head is None:
            return
        if timestamp == END_OF_INPUT:
            yield from self._fan_out(head, head.flush(final=True))
            if head.stream:  # "": the messages rejected for their key, no stream
                yield STREAM_ENDS, Row(head.stream, StreamEnd(
                    stream=head.stream, read=head.read, rejected=head.rejected,
                    started=head.started,
                    position=head.position if head.delay is not None else None,
                    classes=list(head.classes)))
        else:  # a quiet unbounded stream still reports what it has
            yield from self._fan_out(head, head.flush(final=False))
            if timestamp == getattr(head, "flush_due", timestamp):  # the current chain
                head.flush_due = timestamp + self.flush_ms
                ctx.timer_service().register_processing_time_timer(head.flush_due)
        self._keep(ctx, head)

    @staticmethod
    def _fan_out(head: _StreamHead, fold_batches: list) -> Iterator[Row]:
        """Each fold batch to its fold's routes (a ``DelayFoldBatch`` as a ``FoldBatch``), one
        ``Row(route, RoutedBatches)`` (:data:`ROUTED_TYPE`) per route, keyed by route in Java;
        each route's batches in their order. A batch's feature dicts of floats cross as one
        array (:func:`~foldstream.operators.records.features.float_rows`), made once for the
        folds that share them."""
        routed: dict[str, list] = {}
        rows: dict[int, Any] = {}  # id of a batch's xs -> what its fold batches carry
        for fold_batch in fold_batches:
            xs = getattr(fold_batch, "xs", None)
            if type(xs) is list:
                if id(xs) not in rows:
                    rows[id(xs)] = float_rows(xs)
                fold_batch.xs = rows[id(xs)]
            if trace.TRACE_FILE and fold_batch.fold == 0:
                trace.stage("fan-out", fold_batch.stream, _end(fold_batch, head.position))
            for route, learner in head.targets[fold_batch.fold]:
                routed.setdefault(route, []).append((learner, fold_batch))
        for route, items in routed.items():
            yield Row(route, RoutedBatches(route, items))


def _end(batch, position: int) -> int:
    """The position a batch reaches, for the trace (a delayed batch's events are not a range of
    positions: ``position``)."""
    return batch.start + len(batch) if isinstance(batch, FoldBatch) else position


def learner_targets(stream: str, plans: Plans, parallelism: int,
                    keying: str) -> list[list[Target]]:
    """Where each fold's batches go: one key per subtask, each hosting its share of the
    folds with every learner (``fold``) or of the (fold, learner) pairs (``learner_fold``),
    dealt round robin so that the subtasks' counts differ by one at most.

    >>> from foldstream.job.config import load_config
    >>> plans = make_plans(load_config(None, []))  # 10 folds, 3 learners
    >>> targets = learner_targets("elec", plans, 2, "fold")
    >>> [len({t.route for fold in targets for t in fold})] + [t.learner for t in targets[0]]
    [2, None]
    >>> sorted({t.route for fold in learner_targets("elec", plans, 2, "learner_fold")
    ...         for t in fold}) == sorted({t.route for fold in targets for t in fold})
    True
    """
    k, n_learners = plans.folds, len(plans.learners)
    routes = fold_routes(f"{stream}#tasks", parallelism, parallelism, MAX_PARALLELISM)
    if keying == "fold":
        return [[Target(routes[f % parallelism], None)] for f in range(k)]
    return [[Target(routes[(f * n_learners + l) % parallelism], l) for l in range(n_learners)]
            for f in range(k)]


class FeatureNames:
    """One string object per feature name in a Python worker, for the examples it unpickles.

    In-process, every example's feature dict holds the name objects of the parser's header,
    the same ones the learners keep in their own dicts, so their lookups find a name by
    identity. A record that crosses from the fan-out's worker to a learner worker is
    unpickled into new name strings each time: equal, not identical, so every lookup compares
    the characters too: river's three default learners took about 2% more CPU per example
    (softmax regression 6-7%; bench/bench_feature_names.py). :meth:`share_all` gives the
    examples of a batch this worker's names back; the records are the same. A stream whose
    messages bring new names without end stops being shared past :attr:`LIMIT` names.

    >>> import pickle
    >>> xs = [{"price": 1.0, "demand": 2.0}]
    >>> a = pickle.loads(pickle.dumps(xs)); b = pickle.loads(pickle.dumps(xs))
    >>> names = FeatureNames()
    >>> names.share_all([a]); names.share_all([b])
    >>> [x is y for x, y in zip(a[0], b[0])], a == b == xs
    ([True, True], True)
    """

    LIMIT = 100_000

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def share_all(self, example_lists) -> None:
        """Each list of feature dicts in ``example_lists`` (each list once) with its dicts
        rebuilt around this worker's name objects, in place. A block's rows
        (:class:`~foldstream.operators.records.features.FeatureRows`, unpickled without their
        dicts) get the names their dicts will be made from, and stay arrays until read.

        >>> import numpy as np
        >>> names = FeatureNames()
        >>> names.share_all([[{"price": 1.0}]])
        >>> rows = FeatureRows(np.array([[2.0]]), ("".join(["pr", "ice"]),))
        >>> names.share_all([rows])
        >>> rows._dicts is None, list(rows[0])[0] is next(iter(names.names))
        (True, True)
        """
        names, seen = self.names, set()
        for xs in example_lists:
            if not xs or id(xs) in seen:
                continue
            seen.add(id(xs))
            if len(names) > self.LIMIT:
                return
            if isinstance(xs, FeatureRows):
                xs.names = tuple(names.setdefault(name, name) for name in xs.names)
            elif isinstance(xs[0], dict):
                for i, x in enumerate(xs):
                    xs[i] = {names.setdefault(name, name): value for name, value in x.items()}


_WORKER_NAMES = FeatureNames()
"""The Python worker's feature names (:class:`FeatureNames`); the worker ends with the job."""


@dataclass
class _FoldState:
    tasks: dict[int, LearnerTask]
    evaluator: FoldEvaluator | None


class FoldFunction(_KeyedStateFunction):
    """Keyed by route, one per subtask: the learner tasks of its share of a stream's folds,
    in state as ``{(fold, learner): _FoldState}`` (``learner`` ``None``: every learner).

    With ``fold`` keying an entry hosts every learner of its fold and the fold's evaluator,
    and emits fold reports; with ``learner_fold`` keying it hosts one learner and emits its
    predictions, routed to the fold's :class:`EvaluatorFunction`. The batches of a record are
    processed together (:func:`~foldstream.operators.stages.learner.process_all`: MOA's
    learners of several folds on Java's threads side by side), their predictions taken in the
    record's order.
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

    def _states(self, ctx) -> dict:
        states = self._stored(ctx, dict)
        if not isinstance(states, dict):  # one fold per key: a job of an older version
            raise RuntimeError("this checkpoint holds the learner tasks one fold per key, as "
                               "an older foldstream kept them; resume it with that version")
        return states

    def process_element(self, routed: RoutedBatches, ctx):
        _, items = routed
        p = self.plans
        states = self._states(ctx)
        _WORKER_NAMES.share_all(getattr(batch, "xs", None) for _, batch in items)
        work, evaluators = [], []
        for learner, batch in items:
            state = states.get((batch.fold, learner))
            if state is None:
                state = states[(batch.fold, learner)] = self._start(learner, batch)
            if trace.TRACE_FILE and batch.fold == 0 and state.evaluator is not None:
                trace.stage("learners-in", batch.stream, _end(batch, state.evaluator.position))
            for task in state.tasks.values():
                work.append((task, batch))
                evaluators.append(state.evaluator)
        for (_, batch), evaluator, predictions in zip(work, evaluators,
                                                      process_all(work, p.threads)):
            if evaluator is not None:
                yield from _by_stream(evaluator.add(predictions))
            else:
                route = fold_routes(batch.stream, p.folds, self.parallelism,
                                    MAX_PARALLELISM)[batch.fold]
                yield RoutedPredictions(route, predictions)
        if trace.TRACE_FILE:
            for (_, batch), evaluator in zip(work, evaluators):
                if batch.fold == 0 and evaluator is not None:
                    trace.stage("learners-out", batch.stream, _end(batch, evaluator.position))
                    break
        self._keep(ctx, states)
        _WORKER_COLLECTOR.settle()  # a record learnt: the worker's modules are all imported


class EvaluatorFunction(_KeyedStateFunction):
    """Keyed by fold route (``learner_fold`` keying): joins the learners' predictions of a fold."""

    STATE = "evaluator"

    def __init__(self, plans: Plans):
        self.plans = plans

    def process_element(self, routed: RoutedPredictions, ctx):
        _, predictions = routed
        evaluator: FoldEvaluator = self._stored(
            ctx, lambda: self.plans.fold_evaluator(predictions.stream, predictions.fold))
        yield from _by_stream(evaluator.add(predictions))
        self._keep(ctx, evaluator)


@dataclass
class _AggregatorState:
    aggregator: Aggregator
    end: StreamEnd | None = None
    summarized: bool = False


class AggregatorFunction(_KeyedStateFunction):
    """Keyed by stream: the k fold reports of a position become the output records (JSON).

    ``joined``: the records of one input as few texts, a line each (:func:`joined_records`),
    for a client that collects them: each text the client collects is two calls from Python
    into the JVM, each waking a thread on either side, on the cores the learners use. Kafka
    takes one message per record, so its job emits them one by one.
    """

    STATE = "aggregator"

    def __init__(self, plans: Plans, joined: bool = False):
        self.plans = plans
        self.joined = joined

    def process_element(self, message, ctx):
        texts = self._records(message, ctx)
        if self.joined:
            texts = joined_records(texts, key=ctx.get_current_key())
        yield from texts

    def _records(self, message, ctx) -> list[str]:
        state: _AggregatorState = self._stored(
            ctx, lambda: _AggregatorState(self.plans.aggregator(ctx.get_current_key())))
        texts = []
        if isinstance(message, FoldReport):
            for record in state.aggregator.add(message):
                if trace.TRACE_FILE and record["type"] == "measures":
                    trace.stage("aggregator", record["stream"], record["position"])
                texts.append(dumps(record))
        else:
            state.end = message
        if state.aggregator.finished and state.end is not None and not state.summarized:
            end, agg = state.end, state.aggregator
            position = end.read - end.rejected if end.position is None else end.position
            texts.append(dumps(SummaryRecord.at_end(
                stream=end.stream, position=position, read=end.read, rejected=end.rejected,
                wall_time_s=time.time() - end.started, measures=agg.final_measures(),
                positive_class=self.plans.evaluation.positive,
                classes=end.classes, costs=agg.final_costs()).as_dict()))
            state.summarized = True
        self._keep(ctx, state)
        return texts


#: The most characters :func:`joined_records` puts in one text. The client reads a text of up
#: to 8,192 characters from the JVM in under a millisecond and a longer one in 44 ms or more,
#: whatever its length (:func:`~foldstream.job.engines.flink.run._texts`): the records of a
#: burst, joined whole, reached the client a text every 0.1 s, a second at the end of a run;
#: records of 8.7 KB each, one a text, 25 s for all of Covertype's. The margin is for the
#: escapes Py4J adds (a line break is two characters there).
JOINED_MAX_CHARS = 6144
#: The first character of a text that holds a piece of a record (:func:`joined_records`): more
#: pieces follow, or this is the last. No JSON text starts with either (a control character in
#: a JSON string is escaped).
PIECE, LAST_PIECE = "\x1e", "\x1d"


def joined_records(texts: list[str], limit: int = JOINED_MAX_CHARS, key: str = "") -> list[str]:
    r"""``texts``, JSON records, in order as texts of at most ``limit`` characters: records
    joined a line each (JSON text holds no line break of its own: one in a string is written
    ``\n``, so splitting the lines gives them back), and a record longer than ``limit`` cut
    into pieces (:data:`PIECE`), each marked with ``key`` (the stream: the client may get the
    pieces of several aggregators' records interleaved). :class:`Rejoined` gives the records
    back.

    >>> joined_records(['{"a": "x\\ny"}', '{"b": 2}'])
    ['{"a": "x\\ny"}\n{"b": 2}']
    >>> joined_records(['{"a": 1}', '{"b": 2}', '{"c": 333}'], limit=17)
    ['{"a": 1}\n{"b": 2}', '{"c": 333}']
    >>> joined_records(['{"a": 1}', '{"long": 12345}', '{"b": 2}'], limit=12, key="s")
    ['{"a": 1}', '\x1e"s"\t{"long"', '\x1e"s"\t: 12345', '\x1d"s"\t}', '{"b": 2}']
    >>> joined_records([])
    []
    """
    joined: list[str] = []
    lines: list[str] = []
    size = -1  # the characters of "\n".join(lines)
    for text in texts:
        if lines and size + 1 + len(text) > limit:  # a text of its own or its pieces too
            joined.append("\n".join(lines))
            lines, size = [], -1
        if len(text) > limit:
            head = json.dumps(key) + "\t"  # a tab in a JSON string is escaped
            step = max(1, limit - 1 - len(head))
            starts = range(0, len(text), step)
            joined.extend((PIECE if start + step < len(text) else LAST_PIECE) + head
                          + text[start:start + step] for start in starts)
            continue
        lines.append(text)
        size += 1 + len(text)
    if lines:
        joined.append("\n".join(lines))
    return joined


class Rejoined:
    """The client's reader of :func:`joined_records`' texts: called with each text in the
    order collected, it returns the records complete in it (none for a piece that more
    follow).

    >>> rejoined = Rejoined()
    >>> texts = joined_records(['{"a": 1}', '{"long": 12345}'], limit=12, key="s")
    >>> [rejoined(text) for text in texts]
    [['{"a": 1}'], [], [], ['{"long": 12345}']]
    """

    def __init__(self):
        self.partial: dict[str, list[str]] = {}  # key -> the pieces of its record so far

    def __call__(self, text: str) -> list[str]:
        mark = text[:1]
        if mark != PIECE and mark != LAST_PIECE:
            return text.split("\n")
        key, _, piece = text[1:].partition("\t")
        pieces = self.partial.setdefault(key, [])
        pieces.append(piece)
        if mark == PIECE:
            return []
        del self.partial[key]
        return ["".join(pieces)]


# ----------------------------------------------------------------------------------- the job
def _by_stream(reports) -> Iterator[Row]:
    """Fold reports as the aggregators take them (:data:`BY_STREAM_TYPE`)."""
    for report in reports:
        yield Row(report.stream or "", report)


def _route(routed: RoutedPredictions) -> str:
    route, _ = routed
    return route


def head_parallelism(parallelism: int, streams: list[str] | None) -> int:
    """The parallelism of the operators keyed by stream (the fan-out and the aggregator): at
    most one subtask per stream when the streams are known before the run (a file or generator
    source), since a subtask without a stream would only start a Python worker that has nothing
    to do; ``parallelism`` otherwise (Kafka: the streams come with the messages).

    >>> head_parallelism(2, ["elec"]), head_parallelism(4, ["a", "b"]), head_parallelism(2, None)
    (1, 2, 2)
    """
    return parallelism if streams is None else max(1, min(parallelism, len(streams)))


def build(env: StreamExecutionEnvironment, config: Config, items: FileInput | None = None,
          joined: bool = False, snapshots: bool = True):
    """Wire the job into ``env``; returns ``(records, dead_letters)``, two streams of JSON text.

    ``items``: a file or generator source, read inside the job
    (:mod:`~foldstream.job.engines.flink.files`); ``None`` for a Kafka source. ``joined``: the
    records an aggregator emits at once as one text, a line each (for the client's collection;
    :class:`AggregatorFunction`). ``snapshots``: ``False`` when the job takes no checkpoint or
    savepoint, its stage objects then kept out of Flink's state
    (:attr:`_KeyedStateFunction.snapshots`).
    """

    def keyed(function: _KeyedStateFunction) -> _KeyedStateFunction:
        function.snapshots = snapshots
        return function

    plans = make_plans(config)
    parallelism = config.engine.parallelism
    if items is None:
        rows, parser = kafka_rows(env, config)
        decode = DecodeMessage(parser)
        flush_ms = None if config.source.bounded else config.engine.flush_ms
    else:
        rows, decode, flush_ms = items.keyed, items.decode, None
    keying = config.engine.keying
    heads = head_parallelism(parallelism, None if items is None else items.streams)
    fanned = (rows.process(keyed(FanOutFunction(plans, parallelism, flush_ms, keying, decode)),
                           output_type=ROUTED_TYPE)
              .name("fan-out").set_parallelism(heads))
    reports = (key_by_first_field(fanned, PICKLED)
               .process(keyed(FoldFunction(plans, parallelism)),
                        output_type=BY_STREAM_TYPE if keying == "fold" else PICKLED)
               .name("learners+evaluator" if keying == "fold" else "learners"))
    if config.engine.learner_slots == "own":
        # PyFlink runs the Python operators of a task slot in one worker process; in slots of
        # their own the learners do not share a process (and its GIL) with the fan-out, the
        # aggregator and the per-example source traffic. bench/README.md measures it.
        reports = reports.slot_sharing_group("learners")
    if keying == "learner_fold":
        reports = (reports.key_by(_route, key_type=Types.STRING())
                   .process(keyed(EvaluatorFunction(plans)), output_type=BY_STREAM_TYPE)
                   .name("evaluator"))
    # PyFlink reads a side output through a Python map of its own, at the job's parallelism
    # unless told: a subtask of it would start a Python worker with nothing to do.
    ends = fanned.get_side_output(STREAM_ENDS).set_parallelism(heads)
    records = (key_by_first_field(reports.union(ends), PICKLED)
               .process(keyed(AggregatorFunction(plans, joined)), output_type=Types.STRING())
               .name("aggregator").set_parallelism(heads))
    return records, fanned.get_side_output(DEAD_LETTERS).set_parallelism(heads)

"""What the dashboard shows, folded from output records one at a time, in bounded memory.

The dashboard is meant to stay up for days on a topic that never ends, so nothing here grows
with the stream. Every curve is a :class:`BoundedSeries`: at most ``history`` points, thinned
by keeping every other point each time it fills (the stride between kept reports doubles), plus
the latest report, which is always shown. Alarms and verdict changes are kept in deques of the
latest ``events``; tests, rankings and live verdicts only as their latest record.

A page subscribes to one stream and one measure at a time. :meth:`DashboardState.stream_message`
answers with what that page has not seen yet (a :class:`Cursor` remembers what it has): per
curve, the points from the first one it lacks; the whole curve after the curve was thinned. A
page therefore holds exactly what the server holds, and never more than ``history`` points a
curve.

Records are checked as they are folded: one that does not follow the record contract of
docs/method.md §10 (a missing field, a field of the wrong type, an unknown ``type``) is skipped
and counted per source, never raised. The check is structural and cheap (a dashboard reads
hundreds of records a second), :func:`foldstream.operators.records.reading.parse_record`, the one every
reader makes, into the record's class; what a page shows is derived from the typed record. Records
of types and fields added later (``verdict``, ``comparison.sequential``, docs/method.md §12) are
shown when present.

This module knows nothing of HTTP; :mod:`foldstream.job.tools.dashboard.app` serves it.
"""

from __future__ import annotations

import math
import threading
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from foldstream.job.tools.records import describe_record, describe_window
from foldstream.job.tools.watch import RateMeter
from foldstream.operators.records.outputs import (
    AlarmRecord, ComparisonRecord, DriftRecord, Live, MeasuresRecord, RankingRecord, RecordError,
    SummaryRecord, VerdictRecord
)
from foldstream.operators.records.reading import as_typed
from foldstream.operators.stats.sequential import UNDECIDED
from foldstream.job.verdicts import (
    fold_verdict, live_scope_text, scope_disagreement, sequential_head, sequential_text
)


DEFAULT_HISTORY = 2000  # points per curve; a page of ~1,500 px shows no more
MIN_HISTORY = 4
DEFAULT_EVENTS = 500  # alarms and verdict changes kept per stream
DEFAULT_MEASURE = "kappa_m"  # shown first when the stream reports it
SKIPPED_KEPT = 20  # the latest messages about skipped lines, per source


# ------------------------------------------------------------------------ bounded curves
class BoundedSeries:
    """The points of one curve: positions ``x`` and named columns, at most ``history`` of them.

    Points are offered in stream order. A point is kept for good (*permanent*) when its
    index among the offered points is a multiple of ``stride``; when more than
    ``history - 1`` are kept, every other one is dropped, ``stride`` doubles and ``epoch``
    grows by one (a page must then fetch the curve again). The latest point is kept in any
    case (*provisional*) until the next one replaces it, so a curve always ends at the latest
    report. The points kept stay evenly spaced in offer order: indices ``0, stride,
    2 * stride, ...`` and the latest.

    Parameters
    ----------
    columns : sequence of str
        The names of the values of a point.
    history : int
        The most points held (at least :data:`MIN_HISTORY`).

    Examples
    --------
    >>> series = BoundedSeries(["y"], history=4)
    >>> for x in range(10):
    ...     series.append(x, (x * 10.0,))
    >>> list(series.xs), series.stride, series.epoch
    ([0.0, 4.0, 8.0, 9.0], 4, 2)
    >>> series.column("y")
    [0.0, 40.0, 80.0, 90.0]
    """

    __slots__ = ("columns", "limit", "stride", "count", "epoch", "rev", "xs", "ys", "provisional")

    def __init__(self, columns: Iterable[str], history: int = DEFAULT_HISTORY):
        self.columns = tuple(columns)
        self.limit = max(int(history), MIN_HISTORY) - 1  # permanent points; +1 provisional
        self.stride = 1
        self.count = 0  # points offered
        self.epoch = 0  # thinnings (and rewrites) so far
        self.rev = 0  # changes so far
        self.xs = array("d")
        self.ys = tuple(array("d") for _ in self.columns)
        self.provisional = False

    def __len__(self) -> int:
        return len(self.xs)

    @property
    def permanent(self) -> int:
        """How many points are kept for good (the provisional latest one excluded)."""
        return len(self.xs) - self.provisional

    def _push(self, x: float, values: tuple[float, ...]) -> None:
        self.xs.append(x)
        for column, value in zip(self.ys, values):
            column.append(value)

    def _pop(self) -> None:
        self.xs.pop()
        for column in self.ys:
            column.pop()

    def append(self, x: float, values: Iterable[float | None]) -> None:
        """Offer the next point; ``None`` values are stored as NaN (a gap)."""
        values = tuple(math.nan if v is None else float(v) for v in values)
        self.rev += 1
        if self.xs and self.xs[-1] == x:  # the same position again: the new values win
            if not self.provisional:
                self.epoch += 1  # a page holds the old values of a permanent point
            for column, value in zip(self.ys, values):
                column[-1] = value
            return
        if self.provisional:
            self._pop()
            self.provisional = False
        index = self.count
        self.count += 1
        self._push(x, values)
        if index % self.stride:
            self.provisional = True
            return
        if len(self.xs) > self.limit:
            last_dropped = (len(self.xs) - 1) % 2 == 1
            self.xs = self.xs[::2]
            self.ys = tuple(column[::2] for column in self.ys)
            self.stride *= 2
            self.epoch += 1
            if last_dropped:
                self._push(x, values)
                self.provisional = True

    def column(self, name: str, start: int = 0) -> list[float | None]:
        """A column from ``start`` as JSON-ready numbers (NaN becomes ``None``)."""
        values = self.ys[self.columns.index(name)][start:]
        return [None if v != v else v for v in values]

    def delta(self, start: int) -> dict[str, Any]:
        """The points from index ``start``: ``{"from", "x", "c": {column: values}}``."""
        return {"from": start, "x": [int(x) if x.is_integer() else x for x in self.xs[start:]],
                "c": {name: self.column(name, start) for name in self.columns}}


@dataclass(frozen=True)
class LiveVerdict:
    """A pair's live verdict as a page shows it (docs/method.md §12, §15): from a
    ``comparison`` record's ``sequential`` object (or its ``regime``), or a ``verdict``
    record."""

    a: str
    b: str
    position: int
    verdict: str
    lower: float | None
    upper: float | None
    n: int | None
    alpha: float | None
    estimate: float | None = None  # S_n / n, the mean loss difference of a minus b
    previous: str | None = None  # of a verdict record: the verdict before the change
    scope: str = "stream"  # "stream" (§12) or "regime" (§15)
    since: int | None = None  # the first position the verdict covers, when known
    segment: int | None = None  # scope "regime": the segment's number

    @classmethod
    def of_sequence(cls, record: ComparisonRecord, live: Live) -> "LiveVerdict":
        regime = live.segment is not None
        return cls(record.a, record.b, record.position, live.verdict, live.lower, live.upper,
                   live.n, live.alpha, live.estimate, scope=live.scope,
                   since=live.since if regime else None, segment=live.segment)

    @classmethod
    def of_change(cls, record: VerdictRecord) -> "LiveVerdict":
        return cls(record.a, record.b, record.position, record.verdict, record.lower,
                   record.upper, record.n, record.alpha, previous=record.previous,
                   scope=record.scope, since=record.since, segment=record.segment)


@dataclass
class FoldTests:
    """The latest fold tests of a pair on a measure (docs/method.md §6), and what they say.

    The verdict is worded when a page asks for it, not for every record: it ranks the fold
    values (:func:`~foldstream.job.verdicts.fold_verdict`), which costs more than folding
    the record in. ``learners`` holds the two learners' ``measures`` records that were the
    latest when the comparison came.
    """

    measure: str
    a: str
    b: str
    position: int
    wilcoxon: float | None
    sign: float | None
    wins: tuple[int, int]
    record: Mapping[str, Any]
    learners: dict[str, Mapping[str, Any]]
    _verdict: str | None = None

    @property
    def verdict(self) -> str:
        if self._verdict is None:
            try:  # the one rule of what the fold tests say (job/verdicts.py)
                self._verdict = fold_verdict(self.record, self.learners).text
            except (KeyError, TypeError, ValueError) as error:  # odd fold values
                self._verdict = f"no verdict: {error}"
        return self._verdict


# ------------------------------------------------------------------------------ a stream
@dataclass
class StreamHistory:
    """Everything shown of one stream, bounded."""

    key: str
    name: str
    source: str
    history: int
    events: int
    generation: int = 0  # grows when a new run replaces the stream (positions went back)
    position: int = 0
    records: int = 0
    rev: int = 0
    setup: tuple[str, int, bool, str] | None = None
    learners: list[str] = field(default_factory=list)
    measures: list[str] = field(default_factory=list)
    curves: dict[tuple[str, str], BoundedSeries] = field(default_factory=dict)  # (learner, m)
    windows: dict[str, BoundedSeries] = field(default_factory=dict)
    last_position: dict[str, int] = field(default_factory=dict)  # per learner
    pvalues: dict[tuple[str, str, str], BoundedSeries] = field(default_factory=dict)
    sequential: dict[tuple[str, str], BoundedSeries] = field(default_factory=dict)
    tests: dict[tuple[str, str, str], FoldTests] = field(default_factory=dict)
    alpha: float | None = None
    live: dict[tuple[str, str, str], LiveVerdict] = field(default_factory=dict)  # (a, b, scope)
    changes: deque = field(default_factory=deque)
    rankings: dict[str, dict[str, Any]] = field(default_factory=dict)
    alarms: deque = field(default_factory=deque)  # (position, learner, fold, detector)
    alarm_count: int = 0
    drifts: deque = field(default_factory=deque)  # (position, learner, detector, folds, first)
    drift_count: int = 0
    rejected: int = 0
    summary: dict[str, Any] | None = None
    latest: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # for fold_verdict
    meter: RateMeter = field(default_factory=RateMeter)
    last_arrival: float | None = None

    def __post_init__(self) -> None:
        self.changes = deque(maxlen=self.events)
        self.alarms = deque(maxlen=self.events)
        self.drifts = deque(maxlen=self.events)

    @property
    def compared(self) -> list[str]:
        return list(dict.fromkeys(key[0] for key in self.pvalues))

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return list(dict.fromkeys(key[1:] for key in self.pvalues))


class Cursor:
    """What one page has received of one stream: the stream's generation, the measure, and
    per curve ``(epoch, permanent points)``."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.generation = -1
        self.measure: str | None = None
        self.rev = -1
        self.sent: dict[tuple, tuple[int, int, int]] = {}  # curve -> (epoch, permanent, rev)


@dataclass
class SourceStatus:
    """How reading one source goes."""

    source: str
    records: int = 0
    skipped: int = 0
    skipped_messages: deque = field(default_factory=lambda: deque(maxlen=SKIPPED_KEPT))
    error: str | None = None
    behind: int | None = None  # Kafka: messages not read yet, when known


# ------------------------------------------------------------------------------ the state
class DashboardState:
    """Every stream's bounded history, updated record by record; thread-safe.

    Parameters
    ----------
    history : int
        The most points a curve holds (:class:`BoundedSeries`).
    events : int
        The most alarms and verdict changes kept per stream.
    sources : sequence of str
        The sources read, for the status line; with more than one, a stream is named
        ``"<stream> · <source>"`` so that two runs of one stream in two files stay apart.
    clock : callable
        Seconds, monotonic; injectable for tests.

    Examples
    --------
    >>> state = DashboardState(history=100)
    >>> state.update({"schema": 1, "type": "alarm", "stream": "s", "position": 7, "learner": "ht",
    ...               "fold": 2, "detector": "adwin", "quantity": "loss"})
    True
    >>> state.update({"schema": 1, "type": "alarm", "stream": "s"})
    False
    >>> state.streams["s"].alarm_count, state.sources[""].skipped
    (1, 1)
    """

    def __init__(self, history: int = DEFAULT_HISTORY, events: int = DEFAULT_EVENTS,
                 sources: Iterable[str] = ("",), clock: Callable[[], float] = time.monotonic):
        self.history = max(int(history), MIN_HISTORY)
        self.events = events
        self.clock = clock
        self.sources = {str(s): SourceStatus(str(s)) for s in sources}
        self.streams: dict[str, StreamHistory] = {}
        self.lock = threading.Lock()
        self.rev = 0

    # -- reading
    def skip(self, message: str, source: str = "") -> None:
        """Count a line or message of ``source`` that is not a record."""
        with self.lock:
            status = self._source(source)
            status.skipped += 1
            status.skipped_messages.append(message)
            self.rev += 1

    def set_error(self, source: str, error: str | None) -> None:
        with self.lock:
            self._source(source).error = error
            self.rev += 1

    def set_behind(self, source: str, behind: int | None) -> None:
        with self.lock:
            self._source(source).behind = behind

    def _source(self, source: str) -> SourceStatus:
        if source not in self.sources:
            self.sources[source] = SourceStatus(source)
        return self.sources[source]

    def update_many(self, records: Iterable[Any], source: str = "") -> int:
        """:meth:`update` every record; returns how many were shown (not skipped)."""
        return sum(self.update(record, source) for record in records)

    def update(self, record: Any, source: str = "") -> bool:
        """Fold one output record (typed, or its JSON object) in. Returns ``False`` (and counts
        it as skipped) when it is not a record of the contract."""
        with self.lock:
            status = self._source(source)
            status.records += 1
            try:
                self._apply(record, source)
            except RecordError as error:
                status.skipped += 1
                status.skipped_messages.append(str(error))
                return False
            self.rev += 1
            return True

    def _stream(self, name: str, source: str) -> StreamHistory:
        key = name if len(self.sources) <= 1 else f"{name} · {source}"
        stream = self.streams.get(key)
        if stream is None:
            stream = self.streams[key] = StreamHistory(key, name, source, self.history, self.events)
        return stream

    def _apply(self, record: Any, source: str) -> None:
        record = as_typed(record)  # raises before anything changes
        if record.TYPE == "rejected":  # its stream and position may be null
            if isinstance(record.stream, str):
                self._stream(record.stream, source).rejected += 1
            return
        apply = _APPLY.get(record.TYPE)
        if apply is None:  # a part: put together by the reader, never shown
            raise RecordError(f"{describe_record(record.as_dict())}: not a record to show")
        stream = self._stream(record.stream, source)
        position = record.position
        apply(self, stream, record, position)
        stream.records += 1
        stream.rev += 1
        now = self.clock()
        stream.last_arrival = now
        if position > stream.position:
            stream.position = position
            stream.meter.add(now, position)
            stream.meter.rate(now)  # drops the samples older than its horizon: bounded

    # -- the record types
    def _measures(self, stream: StreamHistory, record: MeasuresRecord, position: int) -> None:
        learner = record.learner
        if position < stream.last_position.get(learner, -1):
            self._restart(stream)  # a new run in the same file or topic: start over
        stream.last_position[learner] = position
        stream.setup = (record.mode, record.folds, record.prequential,
                        describe_window(record.window))
        if learner not in stream.learners:
            stream.learners.append(learner)
        for measure in record.values:
            value = record.value(measure)
            curve = stream.curves.get((learner, measure))
            if curve is None:
                curve = stream.curves[(learner, measure)] = BoundedSeries(
                    ("mean", "std", "min", "max"), self.history)
                if measure not in stream.measures:
                    stream.measures.append(measure)
            curve.append(position, (value.mean, value.std, *value.spread))
        window = stream.windows.get(learner)
        if window is None:
            window = stream.windows[learner] = BoundedSeries(("mean", "min", "max"),
                                                             self.history)
        window.append(position, (record.window_mean, min(record.window_size),
                                 max(record.window_size)))
        stream.latest[learner] = record.as_dict()  # one per learner: its fold values

    def _restart(self, stream: StreamHistory) -> None:
        fresh = StreamHistory(stream.key, stream.name, stream.source, self.history, self.events,
                              generation=stream.generation + 1)
        fresh.meter = stream.meter
        stream.__dict__.update(fresh.__dict__)

    def _comparison(self, stream: StreamHistory, record: ComparisonRecord,
                    position: int) -> None:
        key = record.pair
        wilcoxon, sign = record.wilcoxon["p_value"], record.sign["p_value"]
        curve = stream.pvalues.get(key)
        if curve is None:
            curve = stream.pvalues[key] = BoundedSeries(("wilcoxon", "sign"), self.history)
        curve.append(position, (wilcoxon, sign))
        a, b = record.a, record.b
        learners = {n: stream.latest[n] for n in (a, b) if n in stream.latest}
        stream.tests[key] = FoldTests(record.measure, a, b, position, wilcoxon, sign,
                                      (record.sign["wins_a"], record.sign["wins_b"]),
                                      record.as_dict(), learners)
        stream.alpha = record.alpha
        if record.live is not None:
            live = LiveVerdict.of_sequence(record, record.live)
            curve = stream.sequential.get((a, b))
            if curve is None:
                curve = stream.sequential[(a, b)] = BoundedSeries(
                    ("estimate", "lower", "upper"), self.history)
            curve.append(position, (live.estimate, live.lower, live.upper))
            stream.live[(a, b, live.scope)] = live
        if record.regime is not None:
            stream.live[(a, b, "regime")] = LiveVerdict.of_sequence(record, record.regime)

    def _verdict(self, stream: StreamHistory, record: VerdictRecord, position: int) -> None:
        change = LiveVerdict.of_change(record)
        stream.changes.append(change)
        key = (change.a, change.b, change.scope)
        known = stream.live.get(key)
        if known is None or known.position <= change.position:
            stream.live[key] = change

    def _ranking(self, stream: StreamHistory, record: RankingRecord, position: int) -> None:
        ranks = sorted(([name, rank] for name, rank in zip(record.learners,
                                                            record.average_ranks)),
                       key=lambda item: math.inf if item[1] is None else item[1])
        stream.rankings[record.measure] = {
            "measure": record.measure, "position": position, "ranks": ranks,
            "friedman": record.friedman["p_value"], "cd": record.critical_difference}

    def _alarm(self, stream: StreamHistory, record: AlarmRecord, position: int) -> None:
        stream.alarms.append((position, record.learner, record.fold, record.detector))
        stream.alarm_count += 1

    def _drift(self, stream: StreamHistory, record: DriftRecord, position: int) -> None:
        stream.drifts.append((position, record.learner, record.detector, tuple(record.folds),
                              record.first))
        stream.drift_count += 1

    def _summary(self, stream: StreamHistory, record: SummaryRecord, position: int) -> None:
        stream.summary = {"position": position, "examples_read": record.examples_read,
                          "examples_rejected": record.examples_rejected,
                          "wall_time_s": record.wall_time_s,
                          "examples_per_second": record.examples_per_second}

    # -- what pages get
    def _ordered(self) -> list[StreamHistory]:
        """The streams by source, in the order the sources were given, then as first seen."""
        order = {source: i for i, source in enumerate(self.sources)}
        return sorted(self.streams.values(), key=lambda s: order.get(s.source, len(order)))

    def overview(self) -> dict[str, Any]:
        """The sources and every stream's headline, JSON-ready: sent to every page."""
        with self.lock:
            now = self.clock()
            streams = []
            for stream in self._ordered():
                rate = stream.meter.rate(now)
                streams.append({
                    "key": stream.key, "name": stream.name, "source": stream.source,
                    "position": stream.position, "records": stream.records,
                    "rate": None if rate is None else round(rate, 1),
                    "age": None if stream.last_arrival is None
                    else round(now - stream.last_arrival, 1),
                    "alarms": stream.alarm_count, "rejected": stream.rejected,
                    "finished": stream.summary is not None})
            sources = [{"source": s.source, "records": s.records, "skipped": s.skipped,
                        "skipped_messages": list(s.skipped_messages), "error": s.error,
                        "behind": s.behind} for s in self.sources.values()]
            return {"sources": sources, "streams": streams, "history": self.history}

    def stream_message(self, key: str | None, measure: str | None,
                       cursor: Cursor) -> dict[str, Any] | None:
        """What a page showing ``measure`` of stream ``key`` lacks, or ``None`` when it has it
        all. An unknown or missing ``key`` means the first stream; a measure the stream does
        not report means :data:`DEFAULT_MEASURE` (or its first). Updates ``cursor``.
        """
        with self.lock:
            stream = self.streams.get(key) if key else None
            if stream is None:
                if not self.streams:
                    return None
                stream = self._ordered()[0]
            if measure not in stream.measures:
                measure = (DEFAULT_MEASURE if DEFAULT_MEASURE in stream.measures
                           else stream.measures[0] if stream.measures else None)
            reset = (cursor.key != stream.key or cursor.generation != stream.generation
                     or cursor.measure != measure)
            if reset:
                cursor.key, cursor.generation = stream.key, stream.generation
                cursor.measure = measure
                cursor.sent.clear()
            elif cursor.rev == stream.rev:
                return None
            cursor.rev = stream.rev
            compared = stream.compared
            pmeasure = measure if measure in compared else (compared[0] if compared else None)
            curves = {
                "measure": {learner: stream.curves.get((learner, measure))
                            for learner in stream.learners},
                "window": dict(stream.windows),
                "pvalues": {f"{a}|{b}": stream.pvalues.get((pmeasure, a, b))
                            for a, b in stream.pairs},
                "sequential": {f"{a}|{b}": curve for (a, b), curve in stream.sequential.items()},
            }
            series = {group: {name: _delta(curve, (group, name), cursor)
                              for name, curve in members.items() if curve is not None}
                      for group, members in curves.items()}
            series = {group: {k: v for k, v in members.items() if v is not None}
                      for group, members in series.items()}
            return {"key": stream.key, "generation": stream.generation, "reset": reset,
                    "measure": measure, "meta": _meta(stream, pmeasure), "series": series}


def _delta(curve: BoundedSeries, name: tuple, cursor: Cursor) -> dict[str, Any] | None:
    epoch, permanent, rev = cursor.sent.get(name, (-1, 0, -1))
    if rev == curve.rev and epoch == curve.epoch:
        return None
    start = permanent if epoch == curve.epoch else 0
    cursor.sent[name] = (curve.epoch, curve.permanent, curve.rev)
    return curve.delta(start)


def _meta(stream: StreamHistory, pmeasure: str | None) -> dict[str, Any]:
    """The small things of a stream (tables, alarms, setup), sent whole at every change."""
    setup = None
    if stream.setup is not None:
        mode, folds, prequential, window = stream.setup
        setup = {"mode": mode, "folds": folds, "prequential": prequential, "window": window}
    index = {name: i for i, name in enumerate(stream.learners)}
    return {
        "name": stream.name, "source": stream.source, "position": stream.position,
        "setup": setup, "learners": list(stream.learners), "measures": list(stream.measures),
        "compared": stream.compared, "pmeasure": pmeasure, "alpha": stream.alpha,
        "pairs": [list(pair) for pair in stream.pairs],
        "tests": [{"measure": t.measure, "a": t.a, "b": t.b, "position": t.position,
                   "wilcoxon": t.wilcoxon, "sign": t.sign, "wins": list(t.wins),
                   "verdict": t.verdict} for t in stream.tests.values()],
        "live": [_live(v) for v in stream.live.values()],
        "changes": [_live(v) for v in reversed(stream.changes)],
        "rankings": list(stream.rankings.values()),
        "alarms": [[p, index.get(learner, -1), fold, detector]
                   for p, learner, fold, detector in stream.alarms],
        "alarm_count": stream.alarm_count, "rejected": stream.rejected,
        "drifts": [[p, index.get(learner, -1), detector, list(folds), first]
                   for p, learner, detector, folds, first in stream.drifts],
        "drift_count": stream.drift_count,
        "disagreements": _disagreements(stream),
        "summary": stream.summary,
    }


def _live(v: LiveVerdict) -> dict[str, Any]:
    scope = live_scope_text(v.n, v.since, v.segment, v.scope)
    head = sequential_head(v.verdict, v.a, v.b)
    return {"a": v.a, "b": v.b, "position": v.position, "verdict": v.verdict,
            "previous": v.previous, "lower": v.lower, "upper": v.upper, "n": v.n,
            "alpha": v.alpha, "estimate": v.estimate, "scope": v.scope,
            "decided": v.verdict != UNDECIDED,  # the page's colour; the words are verdicts.py's
            "head": head, "label": f"{head} {scope}" if scope else head,
            "previous_head": None if v.previous is None else sequential_head(v.previous, v.a, v.b),
            "text": sequential_text(v.verdict, v.a, v.b, v.lower, v.upper, scope)}


def _disagreements(stream: StreamHistory) -> list[str]:
    """One sentence per pair whose verdicts' scopes point different ways (verdicts.py's)."""
    out = []
    for t in stream.tests.values():
        try:
            text = scope_disagreement(t.record, t.learners)
        except (KeyError, TypeError, ValueError):  # odd fold values: no sentence
            continue
        if text:
            out.append(f"{t.a} vs {t.b} ({t.measure}): {text}")
    return out


_APPLY = {
    "measures": DashboardState._measures,
    "comparison": DashboardState._comparison,
    "verdict": DashboardState._verdict,
    "ranking": DashboardState._ranking,
    "alarm": DashboardState._alarm,
    "drift": DashboardState._drift,
    "summary": DashboardState._summary,
}


__all__ = ["BoundedSeries", "Cursor", "DEFAULT_HISTORY", "DashboardState", "SourceStatus",
           "StreamHistory"]

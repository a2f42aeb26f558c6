"""``foldstream watch SOURCE``: a live table of a run's records, from a file or a Kafka topic.

:class:`WatchState` holds what the table shows and knows nothing of terminals: ``update(record)``
folds one output record in, ``render()`` returns a rich renderable. :func:`main` feeds it from a
:class:`~foldstream.job.tools.records.RecordReader` inside a rich ``Live`` display, until the input ends
(``--no-follow``) or Ctrl-C.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from foldstream.job import exitcodes
from foldstream.job.terminal import inert
from foldstream.job.tools.records import RecordReader, describe_window
from foldstream.job.tools.tables import comparisons_table, disagreements, fmt, fmt_p, typed
from foldstream.operators.stages.aggregator import COMPARE
from foldstream.operators.records.outputs import (
    AlarmRecord, ComparisonRecord, DriftRecord, LearnerErrorRecord, MeasuresRecord, OutputRecord,
    PartRecord, RankingRecord, RecordError, RejectedRecord, SummaryRecord, VerdictRecord
)
from foldstream.operators.records.reading import as_typed
from foldstream.operators.records.base import Record
from foldstream.operators.stats.sequential import UNDECIDED
from foldstream.job.verdicts import live_verdict_text


DEFAULT_MEASURES = COMPARE
RATE_HORIZON_S = 10.0  # the input rate is measured over the last this many seconds
RATE_MIN_SPAN_S = 1.0  # and not at all before records have come in for this long


@dataclass
class RateMeter:
    """Stream positions per second of wall-clock time, over the last :data:`RATE_HORIZON_S`."""

    samples: deque = field(default_factory=deque)  # (time, position)

    def add(self, now: float, position: int) -> None:
        if not self.samples or position != self.samples[-1][1]:
            self.samples.append((now, position))

    def rate(self, now: float) -> float | None:
        """``None`` until records have come in for :data:`RATE_MIN_SPAN_S`; 0 once stalled
        for longer than the horizon."""
        while len(self.samples) > 1 and now - self.samples[0][0] > RATE_HORIZON_S:
            self.samples.popleft()
        if not self.samples:
            return None
        first_t, first_p = self.samples[0]
        if now - first_t < RATE_MIN_SPAN_S:
            return None
        return (self.samples[-1][1] - first_p) / (now - first_t)


@dataclass
class StreamView:
    """The latest of everything one stream reported."""

    name: str
    position: int = 0
    measures: dict[str, Record] = field(default_factory=dict)  # per learner
    comparisons: dict[tuple[str, str, str], Record] = field(default_factory=dict)
    rankings: dict[str, Record] = field(default_factory=dict)
    alarms: deque = field(default_factory=lambda: deque(maxlen=6))
    alarm_count: int = 0
    drifts: deque = field(default_factory=lambda: deque(maxlen=6))  # docs/method.md §16
    drift_count: int = 0
    # the latest change per pair and scope ("stream", "regime")
    verdicts: dict[tuple[str, str, str], Record] = field(default_factory=dict)
    rejected: int = 0
    learner_errors: list[Record] = field(default_factory=list)  # quarantined learner replicas
    summary: Record | None = None
    meter: RateMeter = field(default_factory=RateMeter)


class WatchState:
    """What ``foldstream watch`` shows, updated one record at a time.

    Parameters
    ----------
    measures : sequence of str
        The measures shown per learner.
    source : str
        Where the records come from, for the heading.
    alarms : int
        How many of the latest alarms to list per stream.
    clock : callable
        Seconds, monotonic; injectable so that rates can be tested.

    Examples
    --------
    >>> state = WatchState(["accuracy"])
    >>> state.update({"schema": 1, "type": "alarm", "stream": "s", "position": 7,
    ...               "learner": "ht", "fold": 2, "detector": "adwin", "quantity": "loss"})
    >>> state.update({"schema": 1, "type": "alarm", "stream": "s", "position": 10**30})
    >>> state.streams["s"].alarm_count, state.streams["s"].position, state.unknown
    (1, 7, 1)
    """

    def __init__(self, measures: Sequence[str] = DEFAULT_MEASURES, *, source: str = "",
                 alarms: int = 6, clock: Callable[[], float] = time.monotonic):
        self.measures = list(measures)
        self.source = source
        self.alarms_kept = alarms
        self.clock = clock
        self.streams: dict[str, StreamView] = {}
        self.records = 0
        self.unknown = 0
        self.status = "reading"

    def _stream(self, name: str) -> StreamView:
        if name not in self.streams:
            self.streams[name] = StreamView(name, alarms=deque(maxlen=self.alarms_kept),
                                            drifts=deque(maxlen=self.alarms_kept))
        return self.streams[name]

    def update(self, record: Record | OutputRecord) -> None:
        """Fold one output record (typed, or its JSON object) into the state; a record that
        is not of the contract is counted in :attr:`unknown` and left out."""
        self.records += 1
        try:
            typed_record = as_typed(record)
        except RecordError:
            self.unknown += 1
            return
        shown = typed_record.as_dict()  # what the tables print
        if isinstance(typed_record, RejectedRecord):
            self._stream(str(typed_record.stream)).rejected += 1
            return
        if isinstance(typed_record, PartRecord):  # put together by the reader, never shown
            self.unknown += 1
            return
        view = self._stream(typed_record.stream)
        position = typed_record.position
        if position >= view.position:
            view.position = position
            view.meter.add(self.clock(), position)
        if isinstance(typed_record, MeasuresRecord):
            view.measures[typed_record.learner] = shown
        elif isinstance(typed_record, ComparisonRecord):
            view.comparisons[typed_record.pair] = shown
        elif isinstance(typed_record, RankingRecord):
            view.rankings[typed_record.measure] = shown
        elif isinstance(typed_record, AlarmRecord):
            view.alarms.append(shown)
            view.alarm_count += 1
        elif isinstance(typed_record, DriftRecord):
            view.drifts.append(shown)
            view.drift_count += 1
        elif isinstance(typed_record, LearnerErrorRecord):
            view.learner_errors.append(shown)
        elif isinstance(typed_record, VerdictRecord):
            view.verdicts[(typed_record.a, typed_record.b, typed_record.scope)] = shown
        elif isinstance(typed_record, SummaryRecord):
            view.summary = shown

    # ---------------------------------------------------------------------------- rendering
    def render(self) -> RenderableType:
        """The whole display: a heading, then per stream its tables."""
        parts: list[RenderableType] = [self._heading()]
        for view in self.streams.values():
            parts.extend(self._stream_parts(view))
        if not self.streams:
            parts.append(Text("waiting for records…", style="dim"))
        return Group(*parts)

    def _heading(self) -> Text:
        text = Text()
        text.append("foldstream watch ", style="bold")
        text.append(f"{inert(self.source)}  ")
        text.append(f"{self.records} records", style="cyan")
        if self.unknown:
            text.append(f", {self.unknown} of unknown type", style="yellow")
        text.append(f"  [{self.status}]", style="dim")
        return text

    def _stream_parts(self, view: StreamView) -> list[RenderableType]:
        parts: list[RenderableType] = [self._measures_table(view), self._setup(view)]
        if view.drifts:  # the changes the folds agree on lead (docs/method.md §16)
            parts.append(self._drifts_table(view))
        if view.comparisons:
            parts.append(self._comparisons_table(view))
            records = [record for _, record in sorted(view.comparisons.items(),
                                                      key=self._by_measure)]
            parts.extend(Text(inert(line), style="yellow")
                         for line in disagreements(records, view.measures))
        parts.extend(self._verdict_line(record) for record in view.verdicts.values())
        for ranking in view.rankings.values():
            parts.append(self._ranking_line(ranking))
        parts.append(self._alarms_table(view) if view.alarms else
                     Text("no alarms yet", style="dim"))
        for e in view.learner_errors:
            parts.append(Text(inert(f"learner {e['learner']} fold {e['fold']} failed at "
                                    f"{e['position']:,} ({e['phase']}): {e['error']}; its "
                                    f"predictions count as wrong from there"), style="red"))
        if view.summary is not None:
            s = view.summary
            parts.append(Text(inert(
                f"finished: {s['examples_read']} records read, {s['examples_rejected']} rejected, "
                f"{s['wall_time_s']:.1f} s ({fmt(s['examples_per_second'], 0)} examples/s)"),
                style="green"))
        return parts

    def _title(self, view: StreamView) -> str:
        rate = view.meter.rate(self.clock())
        rate_text = f"{rate:,.0f} examples/s" if rate is not None else "rate —"
        bits = [f"stream {typed(view.name)}", f"position {view.position:,}", rate_text]
        if view.rejected:
            bits.append(f"{view.rejected} rejected")
        return " · ".join(bits)

    @staticmethod
    def _setup(view: StreamView) -> Text:
        """The evaluation behind the numbers, on a line of its own (a caption would wrap)."""
        if not view.measures:
            return Text("")
        first = next(iter(view.measures.values()))
        how = "prequential" if first["prequential"] else "holdout"
        return Text(inert(f"{first['mode']}, {first['folds']} folds, {how}, window "
                          f"{describe_window(first['window'])}; mean ± std over folds at each "
                          f"learner's last report"), style="dim")

    def _measures_table(self, view: StreamView) -> Table:
        table = Table(title=self._title(view), title_justify="left")
        table.add_column("learner", style="bold")
        table.add_column("at", justify="right")
        for measure in self.measures:
            table.add_column(typed(measure), justify="right")  # recall[up] is no markup
        table.add_column("window (mean)", justify="right")
        for name, record in view.measures.items():
            cells = []
            for measure in self.measures:
                value = record["values"].get(measure)
                cells.append("n/a" if value is None else
                             f"{fmt(value['mean'])} ± {fmt(value['std'])}")
            sizes = record["window_size"]
            table.add_row(typed(name), f"{record['position']:,}", *cells,
                          f"{sum(sizes) / len(sizes):,.0f}")
        return table

    def _comparisons_table(self, view: StreamView) -> Table:
        records = [record for _, record in sorted(view.comparisons.items(), key=self._by_measure)]
        return comparisons_table(records, view.measures, "paired tests over folds")

    def _by_measure(self, item) -> tuple[int, str]:
        """Comparisons of the measures shown first, in their order; pairs in report order."""
        measure = item[0][0]
        return (self.measures.index(measure) if measure in self.measures else len(self.measures),
                measure)

    @staticmethod
    def _verdict_line(record: Record) -> Text:
        """The latest change of a pair's live verdict of one scope (a ``verdict`` record,
        docs/method.md §12, §15), in
        :func:`~foldstream.job.verdicts.live_verdict_text`'s words.

        >>> line = WatchState._verdict_line({"type": "verdict", "position": 700, "a": "ht",
        ...     "b": "nb", "measure": "accuracy", "verdict": "a_better", "previous": "undecided",
        ...     "lower": -0.05, "upper": -0.01, "n": 700, "alpha": 0.05}).plain
        >>> line.split(" (")[0], line.endswith("error(ht) - error(nb) in [-0.0500, -0.0100])")
        ('live verdict as of position 700: ht better over the whole stream', True)
        """
        text = live_verdict_text(record, record["a"], record["b"])
        return Text(inert(f"live verdict as of position {record['position']:,}: {text}"),
                    style="green" if record["verdict"] != UNDECIDED else "")

    @staticmethod
    def _drifts_table(view: StreamView) -> Table:
        table = Table(title=f"latest drifts, alarms the folds agree on ({view.drift_count} in "
                            f"all)", title_justify="left")
        for column in ("position", "learner", "detector", "folds", "first alarm"):
            table.add_column(column, justify="right" if column != "learner" else "left")
        for drift in reversed(view.drifts):
            table.add_row(f"{drift['position']:,}", typed(drift["learner"]),
                          typed(drift["detector"]), typed(", ".join(map(str, drift["folds"]))),
                          f"{drift['first']:,}")
        return table

    @staticmethod
    def _ranking_line(ranking: Record) -> Text:
        ranks = sorted((r, n) for n, r in zip(ranking["learners"], ranking["average_ranks"])
                       if r is not None)
        friedman = ranking["friedman"]["p_value"]
        cd = ranking["critical_difference"]
        return Text(inert(f"average ranks of {ranking['measure']} (1 = best): "
                          + ", ".join(f"{n} {r:.2f}" for r, n in ranks)
                          + f"; Nemenyi CD {fmt(cd, 2)}; Friedman p {fmt_p(friedman)}"))

    def _alarms_table(self, view: StreamView) -> Table:
        table = Table(title=f"latest alarms ({view.alarm_count} in all)", title_justify="left")
        for column in ("position", "learner", "fold", "detector"):
            table.add_column(column, justify="right" if column in ("position", "fold") else "left")
        for alarm in reversed(view.alarms):
            table.add_row(f"{alarm['position']:,}", typed(alarm["learner"]), typed(alarm["fold"]),
                          typed(alarm["detector"]))
        return table


def watch(source: str, measures: Sequence[str] = DEFAULT_MEASURES, *, follow: bool = True,
          interval: float = 0.5, console: Console | None = None) -> WatchState:
    """Show the live table of ``source`` until its end (``follow=False``) or Ctrl-C.

    Returns the final state. Raises what the reader raises on a missing file or an
    unreachable broker; Ctrl-C (or SIGTERM, run by the command: :func:`main`) ends the display
    cleanly, showing what was read, and is raised on after it.
    """
    if console is None:
        console = Console()
        if not console.is_terminal:  # a log or a pipe: room for the tables, not 80 columns
            console.width = max(console.width, 120)
    reader = RecordReader(source, follow=follow, poll_interval=interval)
    state = WatchState(measures, source=str(reader.source))
    state.status = "following (Ctrl-C to stop)" if follow else "reading"
    batches = reader.batches()
    stopped: KeyboardInterrupt | None = None
    try:
        # The first batch opens the file or reaches the broker: fail before the display is up.
        first = next(batches, [])
        with Live(state.render(), console=console, refresh_per_second=4) as live:
            try:
                for batch in itertools.chain([first], batches):
                    for record in batch:
                        state.update(record)
                    live.update(state.render())
                state.status = "end of input"
            except KeyboardInterrupt as stop:
                state.status, stopped = "stopped", stop
            if reader.skipped:
                state.status += f"; {reader.skipped} lines were not records"
            live.update(state.render())
        if not console.is_terminal:
            console.line()  # Live ends a terminal's display with a newline, not a file's
    finally:
        batches.close()
    if stopped is not None:
        raise stopped
    return state


def main(args) -> int:
    """``foldstream watch SOURCE [--measures a,b] [--follow/--no-follow] [--interval S]``."""
    from foldstream.connectors.kafka import KafkaUnavailable
    from foldstream.job.engines.stopping import exit_code, interruptible

    measures = [m.strip() for m in args.measures.split(",") if m.strip()]
    try:
        with interruptible():
            watch(args.source, measures, follow=args.follow, interval=args.interval)
    except (OSError, ValueError, KafkaUnavailable) as error:
        print(f"error: {inert(error, lines=True)}", file=sys.stderr)
        return exitcodes.UNUSABLE
    except KeyboardInterrupt as stop:  # the display, if it was up, shows what was read
        return exit_code(stop)
    return exitcodes.OK

"""Stopping a run by a signal, on both engines: the rule, in one place.

The first Ctrl-C (SIGINT) or SIGTERM asks a run to stop *cleanly*: the report in progress is
finished, its records written whole, and each stream ends with a ``summary`` marked
``interrupted``. A learner that never returns would make that wait forever, so the stop is
*forced* by a second signal, or, after SIGTERM alone (what ``kill``, ``docker stop`` and
Kubernetes send, once), when :data:`STOP_GRACE_S` seconds have passed: the run then ends at once
with the records delivered so far and an interrupted summary per stream built from them
(:class:`Delivered`), abandoning the learner where it is. The in-process engine runs its stages
in a worker thread for this (:mod:`foldstream.job.engines.inprocess`); the Flink engine runs
learners in worker processes of its own and cancels the job.

A ``KeyboardInterrupt`` or ``SystemExit`` raised *inside* learner code is that learner's error
(:class:`~foldstream.operators.stages.learner.LearnerTask` quarantines the replica): while learners
run, a real signal never raises in their thread, it reaches the :class:`SignalWatch`.

Every command that runs until it is stopped takes the signals here, so that Ctrl-C and SIGTERM
end each of them the same way, with the exit code of :mod:`foldstream.job.exitcodes` (130 or
143, :func:`exit_code`): the in-process engine (:func:`handled`, :class:`SignalWatch`), and the
Flink client (``run`` and the cluster entry point), ``produce``, ``watch``, ``dashboard`` and
the cluster commands (:func:`interruptible`, where the first signal raises :class:`Interrupted`
in the main thread, the ``KeyboardInterrupt`` they stop on).
A signal that is ignored when the command starts (``nohup``, a background job of a script)
stays ignored.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from foldstream.operators.records.outputs import SummaryRecord

STOP_GRACE_S = 5.0
"""Seconds a run stopped by SIGTERM alone has to finish its report before the stop is forced."""

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a command: Ctrl-C, and what ``kill``, ``docker stop`` and Kubernetes
send."""


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (SIGINT) or SIGTERM; :attr:`exit_code` is
    :data:`foldstream.job.exitcodes.INTERRUPTED` or :data:`~foldstream.job.exitcodes.TERMINATED`.

    >>> Interrupted(15).exit_code, str(Interrupted(2))
    (143, 'SIGINT')
    """

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        from foldstream.job import exitcodes

        return exitcodes.for_signal(self.signum)


def signal_of(stop: BaseException) -> int:
    """The signal that stopped a command: an :class:`Interrupted`'s, and SIGINT for a bare
    ``KeyboardInterrupt`` (Ctrl-C that reached Python's own handler)."""
    return stop.signum if isinstance(stop, Interrupted) else signal.SIGINT


def exit_code(stop: BaseException | int) -> int:
    """The exit code of a command stopped by ``stop`` (a ``KeyboardInterrupt`` or a signal
    number): :func:`foldstream.job.exitcodes.for_signal`.

    >>> exit_code(Interrupted(signal.SIGTERM)), exit_code(KeyboardInterrupt()), exit_code(2)
    (143, 130, 130)
    """
    from foldstream.job import exitcodes

    return exitcodes.for_signal(stop if isinstance(stop, int) else signal_of(stop))


def stop_text(stop: BaseException | int) -> str:
    """How a command names what stopped it (a ``KeyboardInterrupt`` or a signal number).

    >>> stop_text(Interrupted(signal.SIGINT)), stop_text(Interrupted(signal.SIGTERM))
    ('Ctrl-C', 'SIGTERM')
    >>> stop_text(KeyboardInterrupt())
    'Ctrl-C'
    """
    signum = stop if isinstance(stop, int) else signal_of(stop)
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name


class SignalWatch:
    """The signals a run received: the first asks for a clean stop (:attr:`signum`), and
    :meth:`forced` says when the stop may no longer wait (a second signal, or SIGTERM alone
    :data:`STOP_GRACE_S` seconds ago).

    >>> watch = SignalWatch(grace_s=5.0)
    >>> watch.signum, watch.forced(now=0.0)
    (None, False)
    >>> watch.receive(signal.SIGINT, now=1.0); watch.signum.name, watch.forced(now=100.0)
    ('SIGINT', False)
    >>> watch.receive(signal.SIGINT, now=101.0); watch.forced(now=101.0)
    True
    >>> term = SignalWatch(grace_s=5.0); term.receive(signal.SIGTERM, now=1.0)
    >>> term.forced(now=5.9), term.forced(now=6.0)
    (False, True)
    """

    def __init__(self, grace_s: float = STOP_GRACE_S):
        self.grace_s = grace_s
        self.received: list[tuple[int, float]] = []  # (signal, monotonic time)

    def receive(self, signum: int, now: float | None = None) -> None:
        self.received.append((signum, time.monotonic() if now is None else now))

    @property
    def signum(self) -> int | None:
        """The first signal, which names the stop (and its exit code)."""
        return self.received[0][0] if self.received else None

    def forced(self, now: float | None = None) -> bool:
        if len(self.received) > 1:
            return True
        if not self.received or self.received[0][0] != signal.SIGTERM:
            return False
        return (time.monotonic() if now is None else now) - self.received[0][1] >= self.grace_s

    def seconds_left(self) -> float | None:
        """Until a SIGTERM alone forces the stop; ``None`` when no timer runs."""
        if len(self.received) != 1 or self.received[0][0] != signal.SIGTERM:
            return None
        return max(0.0, self.grace_s - (time.monotonic() - self.received[0][1]))


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
def interruptible(signals: tuple[int, ...] = STOP_SIGNALS,
                  silence: tuple[str, ...] = ()) -> Iterator[Stop]:
    """Turn Ctrl-C and SIGTERM during the block into one :class:`Interrupted`, raised in the
    main thread; yields the :class:`Stop` that says whether one came. What a command does on
    ``KeyboardInterrupt`` (it stops where it is, and ends as it would at the end of its input)
    it then does for SIGTERM too, and :func:`exit_code` gives its exit code.

    The first signal raises :class:`Interrupted` at once, or at the end of a :meth:`Stop.held`
    section; a second one raises it again (a teardown that waits is cut short), except inside
    such a section. Whatever the block raises after a signal is replaced by that one exception:
    a teardown broken by the signal raises errors of its own (py4j's, for a Flink run, whose
    call to the JVM it cut), which would reach the user as a traceback; the command reports
    the stop in one line instead. Once a signal came, the loggers named in ``silence`` and
    records logged on the root logger are dropped (py4j logs "KeyboardInterrupt while sending
    command." with its traceback there). A signal ignored when the block starts stays ignored.
    Outside the main thread (where Python cannot set handlers) it does nothing.

    >>> with interruptible() as stop:
    ...     try:
    ...         signal.raise_signal(signal.SIGTERM)
    ...     except KeyboardInterrupt as stopped:
    ...         print(bool(stop), exit_code(stopped), stop_text(stopped))
    True 143 SIGTERM
    """
    stop = Stop()
    signals = handled(signals)
    if not (signals and in_main_thread()):
        yield stop
        return

    def handler(signum, frame):
        # The first signal stops at once (a Flink job is cancelled: Flink cannot finish a
        # report on demand, and a learner stuck in a worker process does not hold the client);
        # a second one ends a teardown that waits, except while a held section (the Flink
        # run's interrupted summaries) is written.
        stop.received.append(signum)
        for name in silence:
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        if not stop.holding:
            raise Interrupted(stop.received[0])

    def quiet(record: logging.LogRecord) -> bool:
        return not stop.received

    root = logging.getLogger()
    root.addFilter(quiet)
    try:
        with handlers(signals, handler):
            yield stop
    except BaseException as error:
        if stop.received and not isinstance(error, Interrupted):
            raise Interrupted(stop.received[0]) from None
        raise
    finally:
        root.removeFilter(quiet)


def handled(signals: tuple[int, ...]) -> tuple[int, ...]:
    """The ``signals`` a command takes: those not ignored when it starts (a process started by
    ``nohup``, or in the background by a script, ignores SIGINT, and keeps ignoring it)."""
    return tuple(s for s in signals if signal.getsignal(s) is not signal.SIG_IGN)


@contextmanager
def handlers(signals: tuple[int, ...], handler: Callable) -> Iterator[None]:
    """``handler`` for ``signals`` during the block, the previous handlers again after it."""
    previous = {s: signal.signal(s, handler) for s in signals}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


@dataclass
class Delivered:
    """What a run has handed on, per stream: enough for the summaries of a run whose stages can
    no longer write them (:meth:`interrupted_summaries`): a Flink run stopped by a signal, or an
    in-process run whose stop was forced. :meth:`summary` builds every summary of the
    in-process engine, these and the ones its stages write.

    ``positive_class`` (``evaluation.positive_class``) and ``classes`` (per stream, its labels
    as far as the run knows them when it stops) give those summaries the
    ``positive_class_not_seen`` field that a summary written by the stages has
    (:meth:`~foldstream.operators.records.outputs.SummaryRecord.at_end`); a stream whose labels are not
    known gets none."""

    started: float = field(default_factory=time.time)
    last: dict[str, dict[str, dict]] = field(default_factory=dict)  # stream: learner: measures
    rejected: dict[str, int] = field(default_factory=dict)
    summarized: set[str] = field(default_factory=set)
    positive_class: Any = None
    classes: dict[str, list] = field(default_factory=dict)

    def take(self, record: dict) -> None:
        stream, kind = record.get("stream"), record.get("type")
        if kind == "measures":
            self.last.setdefault(stream, {})[record["learner"]] = record
        elif kind == "rejected" and stream:
            self.rejected[stream] = self.rejected.get(stream, 0) + 1
        elif kind == "summary":
            self.summarized.add(stream)

    def interrupted_summaries(self, streams=()) -> list[dict]:
        """A summary marked ``interrupted`` for each stream that has none: its last report's
        position and measures, the rejected records seen (what was read after that report is
        not known here). ``streams``: the streams known to have started, which get a summary
        (at position 0) even before their first report.

        >>> d = Delivered(started=time.time() - 2)
        >>> d.take({"type": "measures", "stream": "s", "learner": "nb", "position": 100})
        >>> d.take({"type": "rejected", "stream": "s"})
        >>> [(r["stream"], r["position"], r["examples_read"], r["interrupted"])
        ...  for r in d.interrupted_summaries(["s", "t"])]
        [('s', 100, 101, True), ('t', 0, 0, True)]
        >>> d.positive_class, d.classes["s"] = "yes", ["no", "maybe"]
        >>> [r.get("positive_class_not_seen") for r in d.interrupted_summaries(["s", "t"])]
        ['yes', None]
        """
        out = []
        for stream in [*self.last, *(s for s in streams if s not in self.last)]:
            if stream in self.summarized:
                continue
            last = self.last.get(stream, {})
            # delayed labels: several reports share a position, told apart by ``labelled``
            at = max((_report_at(r) for r in last.values()), default=(0, 0))
            position, rejected = at[0], self.rejected.get(stream, 0)
            out.append(self.summary(stream, position, position + rejected, rejected,
                                    [r for r in last.values() if _report_at(r) == at],
                                    interrupted=True))
        return out

    def summary(self, stream: str, position: int, read: int, rejected: int,
                measures: list[dict], *, interrupted: bool, wall_time_s: float | None = None,
                classes: list | None = None, costs: Any = None) -> dict:
        """The ``summary`` record of ``stream``: examples evaluated up to ``position``,
        ``read`` and ``rejected`` source records, each learner's last ``measures`` record;
        ``wall_time_s`` (default: since :attr:`started`) and ``classes`` (default: the
        stream's in :attr:`classes`) as the caller knows them; ``costs``: the learners' costs
        (:meth:`~foldstream.operators.stages.aggregator.Aggregator.final_costs`)."""
        return SummaryRecord.at_end(
            stream=stream, position=position, read=read, rejected=rejected,
            wall_time_s=time.time() - self.started if wall_time_s is None else wall_time_s,
            measures=measures, interrupted=interrupted, positive_class=self.positive_class,
            classes=self.classes.get(stream) if classes is None else classes,
            costs=costs).as_dict()


def _report_at(record: dict) -> tuple[int, int]:
    """Where a ``measures`` record stands: its position, and its labelled examples (delayed
    labels, docs/method.md §13; 0 otherwise), in the order the reports come.

    >>> _report_at({"position": 900, "labelled": 700}) > _report_at({"position": 900, "labelled": 600})
    True
    """
    return record["position"], record.get("labelled", 0)


def in_main_thread() -> bool:
    """Python runs signal handlers in the main thread only: elsewhere none can be set."""
    return threading.current_thread() is threading.main_thread()

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
(:class:`~foldstream.operators.learners.LearnerTask` quarantines the replica): while learners
run, a real signal never raises in their thread, it reaches the :class:`SignalWatch`.
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass, field

from foldstream.operators.records import summary_record

STOP_GRACE_S = 5.0
"""Seconds a run stopped by SIGTERM alone has to finish its report before the stop is forced."""


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

        return exitcodes.INTERRUPTED if self.signum == signal.SIGINT else exitcodes.TERMINATED


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


@dataclass
class Delivered:
    """What a run has handed on, per stream: enough for the summaries of a run whose stages can
    no longer write them (:meth:`interrupted_summaries`): a Flink run stopped by a signal, or an
    in-process run whose stop was forced."""

    started: float = field(default_factory=time.time)
    last: dict[str, dict[str, dict]] = field(default_factory=dict)  # stream: learner: measures
    rejected: dict[str, int] = field(default_factory=dict)
    summarized: set[str] = field(default_factory=set)

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
        """
        out = []
        for stream in [*self.last, *(s for s in streams if s not in self.last)]:
            if stream in self.summarized:
                continue
            last = self.last.get(stream, {})
            # delayed labels: several reports share a position, told apart by ``labelled``
            at = max((_report_at(r) for r in last.values()), default=(0, 0))
            position, rejected = at[0], self.rejected.get(stream, 0)
            out.append(summary_record(stream, position, position + rejected, rejected,
                                      time.time() - self.started,
                                      [r for r in last.values() if _report_at(r) == at],
                                      interrupted=True))
        return out


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

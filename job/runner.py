"""One way to run a configuration: the engine it names, its source (or a Python object's
examples), its sinks, a progress bar, and what the command line's tables need.

``foldstream run`` (:mod:`foldstream.job.cli`), the Python API (:func:`foldstream.job.api.run`),
the experiment runner (:mod:`foldstream.job.tools.experiment`) and the benchmarks all run a
configuration through :func:`run_configuration`, because ways of their own drift apart: one
that did not tell the engine a file's stream would give an empty file a ``summary`` record
through ``foldstream run`` and none through ``foldstream.evaluate``. Here the rules are written
once:

* a file's stream is known before it is read (:func:`known_streams`): it gets its ``summary``
  even when the file holds no example;
* the sinks are checked, then opened (:func:`open_sinks`), before anything is read, and closed
  whatever happens;
* a signal stops the in-process engine cleanly (job/engines/stopping.py has the rule); the
  Flink engine handles its own and raises :class:`~foldstream.job.engines.stopping.Interrupted`.

What a caller does with the end of a run (print tables, exit with a code, raise) stays with it:
:class:`RunOutcome` says what happened.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from foldstream.connectors.files import default_stream
from foldstream.connectors.generators import iter_dataset
from foldstream.connectors.sinks import DeadLetterSink, JsonLinesSink, MemorySink, Sink, \
    SinkUnavailable, StdoutSink
from foldstream.job.config import Config, ConfigError, check_sinks
from foldstream.job.engines.inprocess import evaluate
from foldstream.job.engines.stopping import Interrupted
from foldstream.job.plans import expected_examples, make_plans, open_source, with_delay
from foldstream.job.results import Summary
from foldstream.job.tools import tables
from foldstream.operators.stages.head import TooManyClasses
from foldstream.operators.records.predictions import PREDICTIONS
from foldstream.operators.records.base import Record

#: The signals that stop a run of the command line: Ctrl-C, and what ``kill`` sends.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass
class RunOutcome:
    """What :func:`run_configuration` did.

    Attributes
    ----------
    summary : Summary
        The ``summary`` records and each stream's last comparisons: the command line's tables.
    records, rejected : list of dict
        With ``keep=True``, every record and every rejected record, as JSON holds them
        (:class:`~foldstream.connectors.sinks.MemorySink`); else empty.
    interrupted : int or None
        The signal that stopped an in-process run before the end of its input.
    forced : bool
        The stop could not wait for the stages; their worker thread was abandoned
        (:class:`~foldstream.job.engines.inprocess.RunResult`).
    too_many_classes : TooManyClasses or None
        A stream passed ``evaluation.max_classes``: the run stopped there (its records so far
        and an interrupted summary written).
    dead_letters_lost : int
        Rejected records the dead-letter file refused (counted, never fatal);
        :attr:`dead_letter_path` and :attr:`dead_letter_error` say where and why.
    """

    summary: Summary = field(default_factory=Summary)
    records: list[Record] = field(default_factory=list)
    rejected: list[Record] = field(default_factory=list)
    interrupted: int | None = None
    forced: bool = False
    too_many_classes: TooManyClasses | None = None
    dead_letters_lost: int = 0
    dead_letter_path: str | None = None
    dead_letter_error: str | None = None

    def raise_if_interrupted(self) -> None:
        """For a caller that returns records, not an exit code (the API, an experiment's
        replication): a run stopped by a signal raises
        :class:`~foldstream.job.engines.stopping.Interrupted`, a ``KeyboardInterrupt`` whose
        ``exit_code`` names the signal, after its records and interrupted summary were written;
        a run that ``evaluation.max_classes`` stopped raises its
        :class:`~foldstream.operators.stages.head.TooManyClasses` the same way.

        >>> RunOutcome().raise_if_interrupted()
        >>> try:  # doctest re-raises a KeyboardInterrupt rather than compare it
        ...     RunOutcome(interrupted=signal.SIGINT).raise_if_interrupted()
        ... except Interrupted as stop:
        ...     print(stop, stop.exit_code)
        SIGINT 130
        """
        if self.interrupted is not None:
            raise Interrupted(self.interrupted)
        if self.too_many_classes is not None:
            raise self.too_many_classes


def open_sinks(config: Config) -> tuple[Sink, Sink]:
    """Where a run writes its records and its rejected records, checked first
    (:func:`~foldstream.job.config.check_sinks`); a Kafka sink is written by the Flink job
    itself, so nothing comes back to write here.

    Raises
    ------
    ConfigError
        Naming ``sink.path`` or ``sink.dead_letter_path`` when a file cannot be opened (locked
        by another run, or refused by the system).
    """
    check_sinks(config)
    sink = config.sink
    if sink.kind == "kafka":
        return MemorySink(), MemorySink()
    key = "sink.path"
    try:
        records = JsonLinesSink(sink.path) if sink.kind == "file" else StdoutSink()
        key = "sink.dead_letter_path"
        try:
            return records, DeadLetterSink(sink.dead_letters())
        except BaseException:
            records.close()
            raise
    except SinkUnavailable as error:  # locked by another run, or refused by the system
        raise ConfigError(f"{key}: {error}") from None


def known_streams(config: Config) -> list[str]:
    """The streams a run has before it reads anything: a file's (its ``stream``, or the file's
    name), which gets a ``summary`` record even when empty; none for other sources."""
    source = config.source
    if source.kind != "file":
        return []
    return [source.stream or default_stream(source.resolved_path())]


def run_configuration(config: Config, source: Iterable | None = None, *, write: bool = True,
                      keep: bool = False, progress: bool = False,
                      console: Console | None = None, resume: str | None = None,
                      signals: tuple[int, ...] = STOP_SIGNALS,
                      on_record: Callable[[Record], None] | None = None,
                      on_progress: Callable[[int], None] | None = None) -> RunOutcome:
    """Run ``config`` on the engine it names, as ``foldstream run`` does.

    Parameters
    ----------
    config : Config
        A validated configuration.
    source : iterable, optional
        The examples of a source given as a Python object (the API's ``kind: python``), read
        by :func:`~foldstream.connectors.generators.iter_dataset` with the source's ``limit``
        and ``stream``; ``None``: the configured source.
    write : bool
        Write the records to the configured sink (:func:`open_sinks`).
    keep : bool
        Also keep them in :attr:`RunOutcome.records` and :attr:`RunOutcome.rejected`.
    progress : bool
        Draw a progress bar on ``console`` (default: standard error).
    resume : str, optional
        Flink: the checkpoint to resume from (``"latest"`` or a ``chk-N`` folder).
    signals : tuple of int
        The signals that stop an in-process run cleanly (in the main thread only).
    on_record, on_progress : callable, optional
        Also called with each record as it comes, and with the number of source records read
        so far (a benchmark's clock, its memory marks).

    Raises
    ------
    ConfigError
        A sink that cannot be opened, or a configuration the engine cannot run.
    Interrupted
        The Flink engine, stopped by a signal (after writing an interrupted summary).
    """
    if config.engine.kind == "flink":  # its JVM starts while the client plans the job
        from foldstream.job.engines.flink.jvm import start_early

        start_early()
    if source is not None:
        items = with_delay(config, iter_dataset(source, config.source.limit, config.source.stream))
        total = config.source.limit or getattr(source, "n_samples", None) or _length(source)
    else:
        items = None
    kept, kept_rejected = MemorySink(), MemorySink()
    sinks: list[Sink] = [kept] if keep else []
    dead_sinks: list[Sink] = [kept_rejected] if keep else []
    outcome = RunOutcome()
    with ExitStack() as opened:  # closed whatever happens, the rejected records' file first
        if write:
            written, written_rejected = open_sinks(config)
            opened.enter_context(written)
            opened.enter_context(written_rejected)
            sinks.append(written)
            dead_sinks.append(written_rejected)
        if source is None and progress:  # the total is the bar's alone: no bar, no count
            total = expected_examples(config)
        elif source is None:
            total = None

        predictions = _open_predictions(config) if write else None
        if predictions is not None:
            opened.enter_context(predictions)

        def emit(record: Record) -> None:
            if record["type"] == PREDICTIONS:  # sink.predictions' rows, not a record
                if predictions is not None:
                    predictions.write(record)
                return
            for sink in sinks:
                sink.write(record)
            outcome.summary.take(record)
            if on_record is not None:
                on_record(record)

        def dead_letter(record: Record) -> None:
            for sink in dead_sinks:
                sink.write(record)

        with tables.progress_bar(total, progress, console or Console(stderr=True)) as bar:
            update = bar if on_progress is None else lambda n: (bar(n), on_progress(n))
            if config.engine.kind == "flink":
                # imported here: PyFlink and its Java start-up are for the Flink engine only
                from foldstream.job.engines.flink.run import run as run_flink

                run_flink(config, emit, dead_letter, update, source=items, resume=resume)
            else:
                result = evaluate(make_plans(config),
                                  items if items is not None else open_source(config), emit,
                                  dead_letter, update, streams=known_streams(config),
                                  stop_on_signals=True, signals=signals)
                outcome.interrupted, outcome.forced = result.interrupted, result.forced
                outcome.too_many_classes = result.too_many_classes
    outcome.records, outcome.rejected = kept.records, kept_rejected.records
    if write:
        outcome.dead_letters_lost = getattr(written_rejected, "failed", 0)
        outcome.dead_letter_path = getattr(written_rejected, "path", None)
        outcome.dead_letter_error = getattr(written_rejected, "error", None)
    return outcome


def _open_predictions(config: Config):
    """The predictions sink of ``sink.predictions`` (connectors/predictions.py), or ``None``."""
    path = getattr(config.sink, "predictions", None)
    if not path:
        return None
    from foldstream.connectors.predictions import PredictionsSink

    return PredictionsSink(path, [learner.name for learner in config.learners],
                           bool(config.evaluation.scores))


def _length(source: Any) -> int | None:
    try:
        return len(source)
    except TypeError:
        return None

"""The ``foldstream`` command line: ``run`` and ``validate``, and the tools (``schema``, ``plot``,
``watch``, ``produce``, ``dashboard``, ``report``, ``experiment``, ``benchmark``). Exit codes:
:mod:`foldstream.job.exitcodes`."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING

from foldstream.job import exitcodes, logs
from foldstream.job.terminal import guard_warnings, inert

if TYPE_CHECKING:
    from foldstream.job.config import Config

# Each command imports what it uses when it runs (`foldstream --help` imports none of the
# engines, numpy, scipy, numba, the JVM or Flink; tests/test_startup.py checks it).

_log = logging.getLogger(__name__)


def _positive(text: str) -> float:
    """An option's positive, finite number (seconds, a rate): 0, negative, ``nan`` and ``inf``
    are refused at once rather than spinning, sleeping forever or being ignored later.

    >>> _positive("0.25")
    0.25
    >>> _positive("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'nan' is not a positive number
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose messages quote what was typed (an unknown argument, a value)
    through :func:`~foldstream.job.terminal.inert`; its subcommands' parsers are of this
    class too."""

    def error(self, message: str):
        super().error(inert(message, lines=True))


def _command(argv: list[str]) -> str | None:
    """The command ``argv`` names: its first word that is neither an option nor the value of
    ``--log-level`` (the one option before a command that takes a value); None if none.

    >>> _command(["--log-level", "debug", "report", "m.jsonl"]), _command(["--help"])
    ('report', None)
    """
    words = iter(argv)
    for word in words:
        if word.startswith("--l") and "=" not in word and "--log-level".startswith(word):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """``foldstream``'s parser. Given the ``argv`` it will parse, the arguments of the tools
    whose defaults live in their own modules (dashboard, report, experiment) are added only for
    the command ``argv`` names, so that no other command, ``--help`` included, imports them."""
    command = None if argv is None else _command(argv)

    def wanted(name: str) -> bool:
        return argv is None or command == name

    parser = _Parser(
        prog="foldstream",
        description="k-fold prequential evaluation of streaming classifiers with paired tests.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    compared = ""  # the compared measures: plot's and watch's default, read where they are named
    if wanted("plot") or wanted("watch"):
        from foldstream.operators.stages.aggregator import COMPARE

        compared = ",".join(COMPARE)

    run = commands.add_parser("run", help="run an evaluation (no CONFIG: the embedded default)")
    run.add_argument("config", nargs="?", help="a YAML configuration (docs/method.md §11)")
    run.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                     help="override a key, e.g. --set evaluation.folds=5 (repeatable)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--quiet", action="store_true", help="no progress bar and no summary tables")
    run.add_argument("--explain", action="store_true",
                     help="final tables in words (what each verdict covers) instead of the "
                          "compact summary")
    run.add_argument("--resume", nargs="?", const="latest", default=None, metavar="CHECKPOINT",
                     help="flink: resume a killed or stopped run from the latest retained "
                          "checkpoint of this configuration (engine.checkpoint_dir), or from "
                          "CHECKPOINT (a chk-N folder)")

    validate = commands.add_parser("validate", help="check a configuration without running it")
    validate.add_argument("config", nargs="?", help="a YAML configuration (none: the default)")
    validate.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")

    schema = commands.add_parser(
        "schema", help="print the JSON Schema of the output records, or check files against it")
    schema.add_argument("--check", nargs="+", metavar="FILE",
                        help="validate every record of these JSON Lines files instead")

    plot = commands.add_parser("plot", help="draw figures from a metrics JSON Lines file")
    plot.add_argument("metrics", help="a metrics JSON Lines file (or kafka://HOST:PORT/TOPIC)")
    plot.add_argument("--out", default="plots", help="folder of the figures (default: plots/)")
    plot.add_argument("--measures", default=compared,
                      help=f"comma-separated measures to draw (default: {compared})")
    plot.add_argument("--format", dest="formats", default="png",
                      help="comma-separated file formats, e.g. png,svg (default: png)")

    watch = commands.add_parser("watch", help="a live table of a metrics file or topic")
    watch.add_argument("source", help="a metrics JSON Lines file, or kafka://HOST:PORT/TOPIC")
    watch.add_argument("--measures", default=compared,
                       help=f"comma-separated measures to show (default: {compared})")
    watch.add_argument("--follow", action=argparse.BooleanOptionalAction, default=True,
                       help="keep reading as records arrive, until Ctrl-C (default); "
                            "--no-follow: read to the end and exit")
    watch.add_argument("--interval", type=_positive, default=0.5, metavar="SECONDS",
                       help="how often to look for new records when following (default: 0.5)")

    produce = commands.add_parser(
        "produce", help="send a file or generator source into a Kafka topic as JSON messages")
    produce.add_argument("config", nargs="?", help="a YAML configuration whose source is sent "
                                                   "(none: the embedded default)")
    produce.add_argument("--set", dest="overrides", action="append", default=[],
                         metavar="KEY=VALUE", help="override a key, e.g. --set source.limit=1000")
    produce.add_argument("--bootstrap-servers", default="localhost:9092", metavar="HOST:PORT",
                         help="Kafka bootstrap servers (default: localhost:9092)")
    produce.add_argument("--topic", default="examples", help="the topic (default: examples)")
    produce.add_argument("--rate", type=_positive, default=None, metavar="N",
                         help="examples per second (default: as fast as possible)")
    produce.add_argument("--limit", type=int, default=None, metavar="N",
                         help="send at most N examples (default: source.limit, or all)")
    produce.add_argument("--labels-topic", default=None, metavar="T",
                         help="delayed labels (evaluation.delay): send the label-only rows to "
                              "this topic (default: to --topic, after their examples)")
    produce.add_argument("--id-field", default=None, metavar="NAME",
                         help="delayed labels: the message field of each example's id "
                              "(default: source.id_field; without an id column, the positions)")
    produce.add_argument("--quiet", action="store_true", help="no progress bar")

    dashboard = commands.add_parser(
        "dashboard", help="a live web page of metrics files or topics (charts, tests, verdicts)")
    report = commands.add_parser(
        "report", help="one self-contained HTML file of a run's records (figures, tables)")
    experiment = commands.add_parser(
        "experiment", help="how often each test rejects: Type I and II errors over replications "
                           "(docs/method.md §14)")
    if wanted("dashboard"):
        _dashboard_arguments(dashboard)
    if wanted("report"):
        _report_arguments(report)
    benchmark = commands.add_parser(
        "benchmark", help="several learners on many streams: a comparison table, average "
                          "ranks, Friedman and a critical-difference diagram")
    if wanted("experiment"):
        from foldstream.job.tools.experiment import add_arguments

        add_arguments(experiment)
    if wanted("benchmark"):
        from foldstream.job.tools.benchmark import add_arguments as benchmark_arguments

        benchmark_arguments(benchmark)

    from foldstream.job.tools import cluster

    cluster.add_parsers(commands)  # cluster, submit, jobs, stop: the Flink cluster path
    _add_log_level(parser, commands.choices.values())
    return parser


def _dashboard_arguments(dashboard: argparse.ArgumentParser) -> None:
    from foldstream.job.tools import dashboard as dash
    from foldstream.job.tools.dashboard.state import DEFAULT_HISTORY

    dashboard.add_argument("sources", nargs="+", metavar="SOURCE",
                           help="a metrics JSON Lines file (may still be growing) or "
                                "kafka://HOST:PORT/TOPIC; several allowed")
    dashboard.add_argument("--host", default=dash.DEFAULT_HOST,
                           help=f"the address to listen on (default: {dash.DEFAULT_HOST}; "
                                f"0.0.0.0: every interface)")
    dashboard.add_argument("--port", type=int, default=dash.DEFAULT_PORT,
                           help=f"the port (default: {dash.DEFAULT_PORT})")
    dashboard.add_argument("--history", type=int, default=DEFAULT_HISTORY, metavar="N",
                           help=f"the most points kept per curve; older ones are thinned "
                                f"(default: {DEFAULT_HISTORY})")
    dashboard.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                           help="also answer requests for this host name (NAME or NAME:PORT; "
                                "repeatable): others are refused, against DNS rebinding")
    dashboard.add_argument("--interval", type=_positive, default=dash.DEFAULT_INTERVAL,
                           metavar="SECONDS", help=f"how often to look for new records "
                                                   f"(default: {dash.DEFAULT_INTERVAL})")


def _report_arguments(report: argparse.ArgumentParser) -> None:
    from foldstream.job.tools import report as rep

    report.add_argument("metrics", help="a metrics JSON Lines file (or kafka://HOST:PORT/TOPIC)")
    report.add_argument("-o", "--out", default=rep.DEFAULT_OUT,
                        help=f"the HTML file to write (default: {rep.DEFAULT_OUT})")
    report.add_argument("--measures", default=",".join(rep.DEFAULT_MEASURES),
                        help=f"comma-separated measures drawn along the stream "
                             f"(default: {','.join(rep.DEFAULT_MEASURES)})")
    report.add_argument("--figures", choices=rep.FIGURE_FORMATS, default=rep.FIGURE_FORMATS[0],
                        help=f"how figures are embedded (default: {rep.FIGURE_FORMATS[0]})")


def _add_log_level(parser: argparse.ArgumentParser, subcommands) -> None:
    """``--log-level`` before or after any command (``foldstream --log-level debug run``,
    ``foldstream run --log-level debug``): what :mod:`foldstream.job.logs` shows on stderr."""

    def level(text: str) -> str:
        try:
            return logs.level_name(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    text = (f"how much to log on stderr: {', '.join(logs.LEVELS)} (default: "
            f"{logs.DEFAULT_LEVEL}; DEBUG also shows what is retried or given up on purpose, "
            f"with tracebacks)")
    parser.add_argument("--log-level", type=level, default=logs.DEFAULT_LEVEL, metavar="LEVEL",
                        help=text)
    for sub in subcommands:  # given after the command: only then does it set the level
        sub.add_argument("--log-level", type=level, default=argparse.SUPPRESS, metavar="LEVEL",
                         help=text)


def run(config: Config, *, progress: bool = True, tables: bool = True,
        resume: str | None = None, explain: bool = False) -> int:
    """``foldstream run``: :func:`~foldstream.job.runner.run_configuration`, then the tables
    (the compact summary, or with ``explain`` the tables in words), the warnings and the exit
    code."""
    from rich.console import Console

    from foldstream.job.runner import run_configuration
    from foldstream.job.tools.tables import typed

    # Tables go to stdout unless the records do.
    tables_console = Console(stderr=config.sink.kind == "stdout")
    if not tables_console.is_terminal:  # a log or a pipe: room for the tables, not 80 columns
        tables_console.width = max(tables_console.width, 120)
    progress_console = Console(stderr=True)
    if config.engine.kind == "flink":  # this process ends after the run: keep the JVM's classes
        from foldstream.job.engines.flink import jvm

        jvm.prepare(archive=True)
    outcome = run_configuration(config, progress=progress and tables, console=progress_console,
                                resume=resume)
    interrupted, forced = outcome.interrupted, outcome.forced
    if tables:
        outcome.summary.explain = explain
        outcome.summary.print(tables_console)
        sink = config.sink
        where = {"file": f"records: {getattr(sink, 'path', '')}; rejected records: ",
                 "stdout": "records: stdout; rejected records: ",
                 "kafka": f"records: Kafka topic {getattr(sink, 'topic', '')}; rejected records: "}[sink.kind]
        dead = getattr(sink, "dead_letter_topic", None) or sink.dead_letters()
        tables_console.print(typed(f"{where}{dead}"))
    if config.engine.kind == "flink" and interrupted is None and jvm.writes_archive():
        if tables:
            progress_console.print("keeping the Flink JVM's classes for a quicker start of the "
                                   "next runs (once)...", highlight=False)
        jvm.keep_classes()
    lost = outcome.dead_letters_lost
    if lost:  # counted, never fatal: the measures are complete
        progress_console.print(typed(f"warning: {lost:,} rejected record{'s' * (lost > 1)} could "
                                     f"not be written to {outcome.dead_letter_path} "
                                     f"({outcome.dead_letter_error}); the summary's `rejected` "
                                     f"counts them"))
    if interrupted is not None:
        progress_console.print(f"stopped ({signal.Signals(interrupted).name}): the records up "
                               f"to the last complete report and an interrupted summary are written"
                               + ("; the stop was forced, the learners abandoned where they were"
                                  if forced else ""), highlight=False)
        if forced:  # the abandoned worker thread may never return: exit without waiting for it
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(exitcodes.for_signal(interrupted))
        return exitcodes.for_signal(interrupted)
    if outcome.too_many_classes is not None:
        progress_console.print(f"[red]error:[/] {typed(outcome.too_many_classes)}; the records up "
                               f"to the last complete report and an interrupted summary are "
                               f"written", highlight=False, soft_wrap=True)
        return exitcodes.TOO_MANY
    return exitcodes.OK


def _ends_cleanly(main):
    """The ends of a command that are not its normal end, each in one line and no traceback:

    * the reader of standard output went away (``foldstream ... | head``): standard output is
      pointed at ``os.devnull`` (Python's documented recipe, so that the final flush cannot
      fail again; rich's Console does the same itself, then exits with 1) and the command exits
      with :data:`exitcodes.BROKEN_PIPE`;
    * the system refused a write to a sink (a full disk, an I/O error): the message names the
      file and the reason, the file holds whole lines only (:class:`SinkWriteFailed`), and the
      command exits with :data:`exitcodes.WRITE_FAILED`;
    * anything else raised (a Flink job that failed after it started, a bug): its type and first
      line, the traceback written to a file named in the message, exit :data:`exitcodes.FAILED`.
    """
    import functools

    @functools.wraps(main)
    def command(argv: list[str] | None = None) -> int:
        try:
            code = main(argv)
            sys.stdout.flush()  # a pipe closed early fails here, not at the interpreter's exit
            return code
        except BrokenPipeError:
            _silence_stdout()
            return exitcodes.BROKEN_PIPE
        except SystemExit as stop:  # rich's Console ends the same case itself, with exit code 1
            if isinstance(stop.__context__, BrokenPipeError):
                return exitcodes.BROKEN_PIPE
            raise
        except _sink_write_failed() as error:
            from rich.console import Console

            from foldstream.job.tools.tables import typed

            if error.filename == "standard output":
                _silence_stdout()
            kept = "" if error.lines is None else \
                f"; it holds the first {error.lines:,} records, each line whole"
            Console(stderr=True).print(
                f"[red]error:[/] cannot write {typed(error.filename)}: "
                f"{typed(error.strerror or '')}; the run stopped{kept}", highlight=False,
                soft_wrap=True)
            return exitcodes.WRITE_FAILED
        except Exception as error:  # noqa: BLE001 - a failure no check foresaw: one line, no traceback
            if os.environ.get("FOLDSTREAM_TRACEBACK"):
                raise
            _log.debug("the command failed", exc_info=error)  # --log-level debug: the traceback
            from rich.console import Console

            Console(stderr=True).print(f"[red]error:[/] {_unforeseen(error)}", highlight=False,
                                       soft_wrap=True)
            return exitcodes.FAILED
    return command


def _sink_write_failed() -> type[Exception]:
    """:class:`~foldstream.connectors.sinks.SinkWriteFailed`, imported only when an error
    reaches its handler (an ``except`` clause is evaluated then), not at every start."""
    from foldstream.connectors.sinks import SinkWriteFailed

    return SinkWriteFailed


def _unforeseen(error: BaseException) -> str:
    """The one line shown for an error that no check of foldstream foresaw (a failed job, a bug):
    its type and message, and where its traceback went (a file in the temporary folder, for a
    bug report; ``FOLDSTREAM_TRACEBACK=1`` shows it instead)."""
    import tempfile
    import traceback

    from foldstream.job.tools.tables import typed

    text = "".join(traceback.format_exception(error))
    try:
        with tempfile.NamedTemporaryFile("w", prefix="foldstream-error-", suffix=".txt",
                                         delete=False, encoding="utf-8") as file:
            file.write(text)
        where = f"the traceback is in {file.name}"
    except OSError:
        where = "set FOLDSTREAM_TRACEBACK=1 to see the traceback"
    message = str(error).strip().splitlines()
    first = message[0] if message else ""
    return typed(f"{type(error).__name__}: {first} ({where})")


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no descriptor (a test's captured stream)
        pass


@_ends_cleanly
def main(argv: list[str] | None = None) -> int:
    guard_warnings()  # a library's warning may quote a name of the user's
    if argv is None:
        argv = sys.argv[1:]
    args = _parser(argv).parse_args(argv)
    logs.setup(args.log_level)
    from foldstream.job.tools import cluster

    if args.command in cluster.COMMANDS:
        return cluster.main(args)
    if args.command in ("schema", "plot", "watch", "produce", "dashboard", "report",
                        "experiment", "benchmark"):  # tools
        from importlib import import_module

        return import_module(f"foldstream.job.tools.{args.command}").main(args)
    from rich.console import Console

    from foldstream.job.config import ConfigError, check_sinks, load_config
    from foldstream.job.engines.stopping import exit_code, stop_text
    from foldstream.job.tools.tables import typed

    err = Console(stderr=True, soft_wrap=True)  # a long path stays whole, to copy
    try:
        # Learner specs checked before pass without importing their library: `validate`
        # never needs it, nor a Flink run's client (its workers build the learners); an
        # in-process run imports it as it builds them.
        config = load_config(args.config, args.overrides, remember_checks=True)
        if args.command == "validate":  # a run checks them as it opens them (open_sinks)
            check_sinks(config)
    except ConfigError as error:
        err.print(f"[red]error:[/] {typed(error, lines=True)}", highlight=False)
        return exitcodes.UNUSABLE
    if args.command == "validate":
        Console().print(f"{typed(args.config or 'the embedded default')}: valid "
                        f"({config.engine.kind} engine, {len(config.learners)} learners, "
                        f"{config.evaluation.mode} with {config.evaluation.folds} folds)")
        return exitcodes.OK
    from foldstream.connectors.kafka import KafkaUnavailable
    from foldstream.job.engines.flink.deps import DependencyError
    from foldstream.operators.stages.learner import LearnerBuildError

    try:
        if args.resume and config.engine.kind != "flink":
            raise ConfigError("--resume restores a Flink checkpoint: it needs engine.kind: flink")
        return run(config, progress=not args.no_progress, tables=not args.quiet,
                   explain=args.explain, resume=args.resume)
    except (ConfigError, KafkaUnavailable, DependencyError, LearnerBuildError) as error:
        # a configuration that cannot run, a broker down, no Java (or no javac), no jars
        err.print(f"[red]error:[/] {typed(error, lines=True)}", highlight=False)
        return exitcodes.UNUSABLE
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: the one rule of engines.stopping
        err.print(f"stopped ({stop_text(stop)})")
        return exit_code(stop)


def command() -> None:
    """The ``foldstream`` command (pyproject's script and ``python -m``): :func:`main` with the
    command line, then :func:`exit_now` with its exit code (an exit of its own, such as
    ``--help``'s, as it comes)."""
    exit_now(main())


def exit_now(code: int | None) -> None:
    """End the process with exit ``code`` (``None``: 0) without the interpreter's teardown.

    What the teardown would do that counts is done first, in its order: the threads that are
    not daemons are waited for, the functions registered with :mod:`atexit` run (logging's
    handlers flushed, temporary folders removed), standard output and error flushed. What is
    skipped is the freeing of every object and module one by one: after a run that took 0.45
    to 0.6 s (numba's and scipy's modules; a Flink client's thousands of Py4J proxies, each
    freed with a call into the JVM), a fifth of a short run's whole time (bench/README.md).
    :func:`main` stays a function that returns, for the Python API's callers and the tests.
    """
    import atexit
    import threading

    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone (main has said so) or a closed stream
            pass
    os._exit(0 if code is None else code)


if __name__ == "__main__":
    command()

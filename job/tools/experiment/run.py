"""Running an experiment: one replication through :func:`~foldstream.job.runner.run_configuration`,
the replications in a pool of processes, the resumable results file, the stop by a signal, and the
``foldstream experiment`` command.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import queue
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, \
    TimeElapsedColumn, TimeRemainingColumn

from foldstream.connectors.sinks import Named, SinkUnavailable, check_outputs
from foldstream.job import exitcodes
from foldstream.job.config import ConfigError
from foldstream.job.engines.stopping import Interrupted, in_main_thread
from foldstream.job.runner import run_configuration
from foldstream.job.tools.experiment.design import ExperimentConfig, ReplicationResult, Task, \
    final_accuracy, fingerprint, iter_tasks, load_experiment, outcomes_of, pairs, run_configs, \
    task_count
from foldstream.job.tools.experiment.rates import Rate, rate_table, rejection_rates, rich_table, \
    write_outputs
from foldstream.job.tools.tables import typed

#: the most ``--workers`` per core: a replication keeps a core busy, more only share it
MAX_WORKERS_PER_CORE = 8


def run_replication(experiment: ExperimentConfig, task: Task) -> ReplicationResult:
    """Evaluate one (dataset, mode, replication) through the stages of ``foldstream run``."""
    started, cpu = time.perf_counter(), time.process_time()
    records: list[dict[str, Any]] = []
    configs = run_configs(experiment, task)
    for config in configs:  # Ctrl-C (one worker, the main thread): the run stops, then raises
        outcome = run_configuration(config, write=False, keep=True, signals=(signal.SIGINT,))
        outcome.raise_if_interrupted()
        records += outcome.records
    outcomes, reports, last = outcomes_of(records, pairs(experiment))
    return ReplicationResult(
        experiment=fingerprint(experiment), dataset=task.dataset, mode=task.mode,
        replication=task.replication, seed=configs[0].evaluation.seed, examples=last,
        reports=reports, outcomes=outcomes, accuracy=final_accuracy(records),
        wall_time_s=round(time.perf_counter() - started, 3),
        cpu_time_s=round(time.process_time() - cpu, 3))


# ---------------------------------------------------------------------------- results file
class ResultsMismatch(ConfigError):
    """The results file holds lines of another experiment configuration."""


def read_results(path: str | Path, experiment: ExperimentConfig | None = None
                 ) -> tuple[list[ReplicationResult], int]:
    """The complete lines of a results file (none if it does not exist) and how many lines
    were not (a line cut by a kill).

    With ``experiment``, a line of another configuration is a :class:`ResultsMismatch`, and
    lines beyond its replications are left out (a smaller rerun of a larger experiment).
    """
    path = Path(path)
    if not path.exists():
        return [], 0
    if not path.is_file() and not path.samefile(os.devnull):  # /dev/zero: read for ever
        raise ConfigError(f"{path} is not a regular file, so not a results file; give another "
                          f"--results file or --out folder")
    kept: dict[tuple[str, str, int], ReplicationResult] = {}
    broken_at: int | None = None  # the line a kill cut (only the last can be)
    mine = fingerprint(experiment) if experiment is not None else None
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:  # not a line cut by a kill: another file
                raise ConfigError(f"{path}, line {number}: not text (bytes that are not UTF-8), "
                                  f"so not a results file; give another --results file or "
                                  f"--out folder") from None
            if not line.strip():
                continue
            if broken_at is not None:  # only the last line can be cut by a kill: damaged
                raise ConfigError(f"{path}, line {broken_at}: not a results line, and more "
                                  f"follow; repair or remove the file")
            try:
                result = ReplicationResult.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError):
                if raw.endswith(b"\n"):  # a kill cuts a line before its newline: another file
                    raise ConfigError(f"{path}, line {number}: not a results line (a whole "
                                      f"line, not one cut by a kill), so not a results file; "
                                      f"give another --results file or --out folder") from None
                broken_at = number
                continue
            if mine is not None and result.experiment != mine:
                raise ResultsMismatch(
                    f"{path}: written by another experiment configuration (fingerprint "
                    f"{result.experiment}, this one is {mine}); give another --results file or "
                    f"--out folder")
            if experiment is not None and result.replication >= experiment.replications:
                continue
            kept[result.key] = result
    return list(kept.values()), int(broken_at is not None)


def _repair(path: Path) -> None:
    """Rewrite a results file without its broken lines (so an append starts on a new line)."""
    good = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                ReplicationResult.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            good.append(line if line.endswith("\n") else line + "\n")
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text("".join(good), encoding="utf-8")
    os.replace(temporary, path)


def _quiet_worker() -> None:
    """A worker leaves Ctrl-C to the parent, which stops the pool (by SIGTERM)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


class ReplicationFailed(RuntimeError):
    """A replication raised: names it (the results so far are kept)."""


def _run_one(job: tuple[ExperimentConfig, Task]) -> ReplicationResult:
    experiment, task = job
    try:
        return run_replication(experiment, task)
    except Exception as error:  # noqa: BLE001 - named, with its task, for the command line
        raise ReplicationFailed(f"replication {task.replication} of {task.dataset} ({task.mode}) "
                                f"failed: {type(error).__name__}: {error}") from None


class _Runner:
    """Runs tasks in ``workers`` processes (1: in this one) and yields their results in the
    order they finish. The pool is made on entering, before any progress bar draws from a
    thread of its own, and ended (terminated, if need be) on leaving.

    The tasks are taken from ``todo`` (``count`` of them) as workers free up, at most two per
    worker waiting: a pool's ``imap`` would read the whole iterable at once, and an experiment
    of a billion replications would fill the memory with their tasks. ``work`` runs one
    ``(configuration, task)`` (default: a replication; a benchmark's cells too)."""

    def __init__(self, experiment: ExperimentConfig, todo: Iterable[Task], count: int,
                 workers: int, work: Callable[[tuple[Any, Any]], Any] | None = None):
        self.experiment, self.todo = experiment, iter(todo)
        self.work = work or _run_one  # a module's function: the pool's workers import it
        self.workers = max(1, min(workers, count))
        self.pool = None

    def __enter__(self) -> "_Runner":
        if self.workers > 1:
            from foldstream.operators.learners.moa import jvm_running

            # a JVM (a MOA learner's, started by the checks) does not survive a fork: spawn,
            # and each worker starts its own
            fork = hasattr(os, "fork") and not jvm_running()
            context = multiprocessing.get_context("fork" if fork else "spawn")
            self.pool = context.Pool(self.workers, initializer=_quiet_worker)
        return self

    def __iter__(self) -> Iterator[ReplicationResult]:
        if self.pool is None:
            for task in self.todo:
                yield self.work((self.experiment, task))
            return
        finished: queue.SimpleQueue = queue.SimpleQueue()
        waiting = 0

        def submit() -> None:
            nonlocal waiting
            task = next(self.todo, None)
            if task is not None:
                self.pool.apply_async(self.work, ((self.experiment, task),),
                                      callback=finished.put, error_callback=finished.put)
                waiting += 1

        for _ in range(2 * self.workers):
            submit()
        while waiting:
            try:
                outcome = finished.get(timeout=0.5)  # a signal's handler runs in between
            except queue.Empty:
                continue
            waiting -= 1
            if isinstance(outcome, BaseException):
                raise outcome
            submit()
            yield outcome

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()


@dataclass
class ExperimentRun:
    """What :func:`run_experiment` did."""

    results: list[ReplicationResult]
    rates: list[Rate]
    ran: int
    skipped: int
    wall_time_s: float
    interrupted: int | None = None  # the exit code of the signal that stopped it


def run_experiment(experiment: ExperimentConfig, results_path: str | Path, *, workers: int = 1,
                   progress: bool = False, console=None) -> ExperimentRun:
    """Run the replications missing from ``results_path`` (appending a line as each finishes),
    then compute the rates of every replication in the file.

    A Ctrl-C or SIGTERM stops it: the lines written stay, ``interrupted`` holds the exit code,
    and the rates cover the replications done.
    """
    started = time.perf_counter()
    path = Path(results_path)
    done, broken = read_results(path, experiment)
    if broken:
        _repair(path)
    finished = {r.key for r in done}
    todo = (t for t in iter_tasks(experiment) if t.key not in finished)
    count = task_count(experiment) - len(done)  # done holds tasks of this experiment only
    results = list(done)
    interrupted = None
    path.parent.mkdir(parents=True, exist_ok=True)
    main_thread = in_main_thread()

    def stop(signum, frame):  # SIGTERM where the experiment waits: the stop of a run's signal
        raise Interrupted(signum)

    with path.open("a", encoding="utf-8") as handle, \
            _Runner(experiment, todo, count, workers) as runner, \
            _progress(len(done) + count, len(done), progress, console) as advance:
        previous = signal.signal(signal.SIGTERM, stop) if main_thread else None
        try:
            for result in runner:
                handle.write(result.to_json() + "\n")
                handle.flush()
                results.append(result)
                advance(result)
        except KeyboardInterrupt as error:
            interrupted = getattr(error, "exit_code", exitcodes.INTERRUPTED)
        finally:
            if main_thread:
                signal.signal(signal.SIGTERM, previous)
    rates = rejection_rates(results, [d.name for d in experiment.datasets], experiment.modes,
                            experiment.conditions.names())
    return ExperimentRun(results, rates, len(results) - len(done), len(done),
                         time.perf_counter() - started, interrupted)


@contextmanager
def _progress(total: int, completed: int, enabled: bool, console, *, name: str = "experiment",
              unit: str = "replications", describe: Callable[[Any], str] | None = None
              ) -> Iterator[Callable[[Any], None]]:
    """Yield ``advance(result)``: a bar over the ``total`` tasks (``completed`` done before)
    in the style of ``foldstream run``'s bar; to a log or a pipe (no terminal), a line per
    finished task instead, ``describe(result)`` saying which (default: a replication)."""
    if not enabled:
        yield lambda result: None
        return
    if console is not None and not console.is_terminal:
        done = [completed]
        describe = describe or (lambda r: f"{typed(r.dataset)} {r.mode} #{r.replication}")

        def line(result: Any) -> None:
            done[0] += 1
            console.print(f"{done[0]}/{total} {unit}: {describe(result)} in "
                          f"{result.wall_time_s:.1f} s", soft_wrap=True, highlight=False)

        yield line
        return
    with Progress(SpinnerColumn(), TextColumn(f"[bold]{name}"), BarColumn(),
                  MofNCompleteColumn(), TextColumn(unit), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console, transient=False) as bar:
        task = bar.add_task(name, total=total, completed=completed)
        yield lambda result: bar.advance(task)


# ------------------------------------------------------------------------------ command line
def add_arguments(parser) -> None:
    """The ``experiment`` subcommand's arguments (``foldstream experiment --help``)."""
    parser.add_argument("config", help="an experiment YAML file (conf/experiments/)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="processes running replications (default: the number of cores)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="folder of rates.json, table.md, rates.png (default: "
                             "out/experiments/<config name>)")
    parser.add_argument("--results", default=None, metavar="FILE",
                        help="the resumable results file, one JSON line per replication "
                             "(default: DIR/results.jsonl)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="override a key, e.g. --set replications=5")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no table")


def check_experiment_outputs(config: str | Path, out: str | Path, results: str | Path) -> None:
    """Raise :class:`ConfigError` naming the option unless every file the experiment writes
    (the results file, and :data:`~.rates.OUTPUTS` in ``out``) can be written and is a file of
    its own, not the experiment's configuration: the results would be appended to, then
    overwritten by the rates (:func:`~foldstream.connectors.sinks.check_outputs`)."""
    from foldstream.job.tools.experiment.rates import OUTPUTS

    # --results last: the option a clash names is the one to change
    outputs = [Named("--out", Path(out) / name) for name in OUTPUTS] + [Named("--results", results)]
    try:
        check_outputs(outputs, [Named("the experiment's configuration", config)])
    except SinkUnavailable as error:
        raise ConfigError(str(error)) from None


def main(args) -> int:
    err = Console(stderr=True)
    try:
        experiment = load_experiment(args.config, args.overrides)
        workers = args.workers if args.workers is not None else (os.cpu_count() or 1)
        if workers < 1:
            raise ConfigError(f"--workers: expected at least 1, got {workers}")
        most = MAX_WORKERS_PER_CORE * (os.cpu_count() or 1)
        if workers > most:  # each is a process holding its learners: a fork bomb otherwise
            raise ConfigError(f"--workers: {workers:,} processes on {os.cpu_count()} cores; at "
                              f"most {most} ({MAX_WORKERS_PER_CORE} per core)")
        out = Path(args.out) if args.out else Path("out/experiments") / Path(args.config).stem
        results = Path(args.results) if args.results else out / "results.jsonl"
        check_experiment_outputs(args.config, out, results)
        done = run_experiment(experiment, results, workers=workers, progress=not args.quiet,
                              console=err)
    except ConfigError as error:
        err.print(f"[red]error:[/] {typed(error, lines=True)}", highlight=False)
        return exitcodes.UNUSABLE
    except ReplicationFailed as error:
        err.print(f"[red]error:[/] {typed(error, lines=True)}; the replications done are kept in "
                  f"{typed(results)}",
                  highlight=False, soft_wrap=True)
        return exitcodes.FAILED
    if done.results:
        write_outputs(done.rates, experiment, out)
    if not args.quiet and done.results:
        Console(width=max(Console().width, 160)).print(rich_table(rate_table(done.rates)))
    total = task_count(experiment)
    if done.interrupted is not None:
        err.print(f"stopped: {len(done.results)} of {total} replications are in {typed(results)}; "
                  f"the same command continues from there", highlight=False, soft_wrap=True)
        return done.interrupted
    if not args.quiet:
        err.print(f"{done.ran} replications run, {done.skipped} found in {typed(results)}; "
                  f"{time.strftime('%H:%M:%S', time.gmtime(done.wall_time_s))} wall; "
                  f"rates.json, table.md, rates.png in {typed(out)}", highlight=False, soft_wrap=True)
    return exitcodes.OK

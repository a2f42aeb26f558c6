"""Running a benchmark: one cell through :func:`~foldstream.job.runner.run_configuration`, the
cells in a pool of processes, the resumable results file, the stop by a signal, and the
``foldstream benchmark`` command.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from foldstream.connectors.sinks import Named, SinkUnavailable, check_outputs
from foldstream.job import exitcodes
from foldstream.job.config import ConfigError
from foldstream.job.engines.stopping import Interrupted, in_main_thread
from foldstream.job.runner import run_configuration
from foldstream.job.tools.benchmark.design import BenchmarkConfig, Cell, CellResult, \
    cell_config, cell_fingerprint, cells, iter_pending, load_benchmark
from foldstream.job.tools.experiment.run import MAX_WORKERS_PER_CORE, _Runner
from foldstream.job.tools.experiment.run import _progress as _experiment_progress
from foldstream.job.tools.records import of_type
from foldstream.job.tools.tables import typed


def run_cell(benchmark: BenchmarkConfig, cell: Cell, *, keep: bool = False
             ) -> tuple[CellResult, list[dict[str, Any]]]:
    """Run one cell; its result line, and with ``keep`` every record it wrote (else none)."""
    config = cell_config(benchmark, cell)
    started, cpu = time.perf_counter(), time.process_time()
    outcome = run_configuration(config, write=False, keep=True, signals=(signal.SIGINT,))
    outcome.raise_if_interrupted()
    cpu_time, wall = time.process_time() - cpu, time.perf_counter() - started
    measures = [r for r in of_type(outcome.records, "measures") if r["learner"] == cell.learner]
    summaries = list(of_type(outcome.records, "summary"))
    if not measures or not summaries:
        raise ValueError(f"{cell.stream}: no report (an empty stream?)")
    summary = {k: v for k, v in summaries[-1].items() if k != "measures"}
    result = CellResult(cell_fingerprint(benchmark, cell), cell.stream, cell.learner,
                        int(summary.get("examples_read", measures[-1]["position"])),
                        round(wall, 3), round(cpu_time, 3), measures[-1], summary)
    return result, (outcome.records if keep else [])


class CellFailed(RuntimeError):
    """A cell raised: names it (the results so far are kept)."""


def _run_one(job: tuple[BenchmarkConfig, Cell]) -> CellResult:
    benchmark, cell = job
    try:
        return run_cell(benchmark, cell)[0]
    except Exception as error:  # noqa: BLE001 - named, with its cell, for the command line
        raise CellFailed(f"{cell.learner} on {cell.stream} failed: {type(error).__name__}: "
                         f"{error}") from None


# ---------------------------------------------------------------------------- results file
def read_results(path: str | Path, benchmark: BenchmarkConfig | None = None
                 ) -> tuple[list[CellResult], bool]:
    """The finished cells of a results file (none if it does not exist), and whether its last
    line was cut by a kill.

    With ``benchmark``, a line of one of its cells measured under another configuration of
    that cell is a :class:`ConfigError`; lines of cells it does not hold are left out.
    """
    path = Path(path)
    if not path.exists():
        return [], False
    if not path.is_file():
        raise ConfigError(f"{path} is not a regular file, so not a results file; give another "
                          f"--results file or --out folder")
    kept: dict[tuple[str, str], CellResult] = {}
    cut = False
    wanted = {c.key: c for c in cells(benchmark)} if benchmark is not None else None
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if cut:
                raise ConfigError(f"{path}, line {number - 1}: not a results line, and more "
                                  f"follow; repair or remove the file")
            if not raw.strip():
                continue
            try:
                result = CellResult.from_json(json.loads(raw.decode("utf-8")))
            except (ValueError, KeyError, TypeError, AttributeError):
                if raw.endswith(b"\n"):
                    raise ConfigError(f"{path}, line {number}: not a benchmark's results line; "
                                      f"give another --results file or --out folder") from None
                cut = True
                continue
            if wanted is not None:
                cell = wanted.get(result.key)
                if cell is None:
                    continue
                if result.fingerprint != cell_fingerprint(benchmark, cell):
                    raise ConfigError(
                        f"{path}: {result.learner} on {result.stream} was measured under "
                        f"another configuration of that stream, learner or evaluation; give "
                        f"another --results file or --out folder")
            kept[result.key] = result
    return list(kept.values()), cut


def _drop_cut_line(path: Path) -> None:
    """Rewrite a results file without its last, cut line (so an append starts a line)."""
    data = path.read_bytes()
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data[:data.rfind(b"\n") + 1])
    os.replace(temporary, path)


@dataclass
class BenchmarkRun:
    """What :func:`run_benchmark` did: every finished cell of the benchmark, in the grid's
    order, how many it ran and found, and the signal's exit code if one stopped it."""

    results: list[CellResult]
    ran: int
    skipped: int
    wall_time_s: float
    cpu_time_s: float
    interrupted: int | None = None


def run_benchmark(benchmark: BenchmarkConfig, results_path: str | Path, *, workers: int = 1,
                  progress: bool = False, console: Console | None = None) -> BenchmarkRun:
    """Run the cells missing from ``results_path``, appending a line as each finishes.

    A Ctrl-C or SIGTERM stops it: the lines written stay, ``interrupted`` holds the exit code,
    and the same call later runs only the cells left. ``cpu_time_s`` sums the CPU seconds of
    every finished cell (those found in the file too).
    """
    started = time.perf_counter()
    path = Path(results_path)
    done, cut = read_results(path, benchmark)
    if cut:
        _drop_cut_line(path)
    found = {r.key: r for r in done}
    todo = list(iter_pending(benchmark, set(found)))
    interrupted = None
    path.parent.mkdir(parents=True, exist_ok=True)
    main_thread = in_main_thread()

    def stop(signum, frame):  # SIGTERM where the benchmark waits: the stop of a run's signal
        raise Interrupted(signum)

    ran: dict[tuple[str, str], CellResult] = {}
    with path.open("a", encoding="utf-8") as handle, \
            _Runner(benchmark, iter(todo), len(todo), workers, work=_run_one) as runner, \
            _progress(len(found) + len(todo), len(found), progress, console) as advance:
        previous = signal.signal(signal.SIGTERM, stop) if main_thread else None
        try:
            for result in runner:
                handle.write(result.to_json() + "\n")
                handle.flush()
                ran[result.key] = result
                advance(result)
        except KeyboardInterrupt as error:
            interrupted = getattr(error, "exit_code", exitcodes.INTERRUPTED)
        finally:
            if main_thread:
                signal.signal(signal.SIGTERM, previous)
    every = {**found, **ran}
    ordered = [every[c.key] for c in cells(benchmark) if c.key in every]
    return BenchmarkRun(ordered, len(ran), len(found), time.perf_counter() - started,
                        sum(r.cpu_time_s for r in ordered), interrupted)


def _progress(total: int, completed: int, enabled: bool, console: Console | None):
    """A bar over the grid's cells; to a log or a pipe, a line per finished cell instead."""
    return _experiment_progress(total, completed, enabled, console or Console(stderr=True),
                                name="benchmark", unit="cells",
                                describe=lambda r: f"{typed(r.learner)} on {typed(r.stream)}")


# ------------------------------------------------------------------------------ command line
def add_arguments(parser) -> None:
    """The ``benchmark`` subcommand's arguments (``foldstream benchmark --help``)."""
    parser.add_argument("config", help="a benchmark YAML file: `streams:` (source sections), "
                                       "`learners:`, `evaluation:` (docs/benchmark.md)")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="processes running cells (default: 1)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="folder of the tables, figures and page (default: "
                             "out/benchmarks/<config name>)")
    parser.add_argument("--results", default=None, metavar="FILE",
                        help="the resumable results file, one JSON line per (stream, learner) "
                             "cell (default: DIR/results.jsonl)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="override a key, e.g. --set limit=2000")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no table")


def command_line(args) -> str:
    """The command that reproduces the outputs, from its parsed arguments.

    >>> import argparse
    >>> command_line(argparse.Namespace(config="b.yaml", workers=2, out="o", results=None,
    ...                                 overrides=["limit=50"], quiet=False))
    'foldstream benchmark b.yaml --workers 2 --out o --set limit=50'
    """
    words = ["benchmark", str(args.config)]
    if args.workers != 1:
        words += ["--workers", str(args.workers)]
    for option in ("out", "results"):
        if getattr(args, option) is not None:
            words += [f"--{option}", str(getattr(args, option))]
    for override in args.overrides:
        words += ["--set", override]
    if args.quiet:
        words.append("--quiet")
    return "foldstream " + " ".join(shlex.quote(w) for w in words)


def main(args) -> int:
    from foldstream.job.tools.benchmark.outputs import OUTPUTS

    err = Console(stderr=True)
    try:
        benchmark = load_benchmark(args.config, args.overrides)
        if args.workers < 1:
            raise ConfigError(f"--workers: expected at least 1, got {args.workers}")
        most = MAX_WORKERS_PER_CORE * (os.cpu_count() or 1)
        if args.workers > most:
            raise ConfigError(f"--workers: {args.workers:,} processes on {os.cpu_count()} "
                              f"cores; at most {most} ({MAX_WORKERS_PER_CORE} per core)")
        out = Path(args.out) if args.out else Path("out/benchmarks") / Path(args.config).stem
        results = Path(args.results) if args.results else out / "results.jsonl"
        try:
            check_outputs([Named("--out", out / name) for name in OUTPUTS]
                          + [Named("--results", results)],
                          [Named("the benchmark's configuration", args.config)])
        except SinkUnavailable as error:
            raise ConfigError(str(error)) from None
        done = run_benchmark(benchmark, results, workers=args.workers, progress=not args.quiet,
                             console=err)
    except ConfigError as error:
        err.print(f"[red]error:[/] {typed(error, lines=True)}", highlight=False)
        return exitcodes.UNUSABLE
    except CellFailed as error:
        err.print(f"[red]error:[/] {typed(error, lines=True)}; the cells done are kept in "
                  f"{typed(results)}", highlight=False, soft_wrap=True)
        return exitcodes.FAILED
    total = len(cells(benchmark))
    if done.results:
        from foldstream.job.tools.benchmark.outputs import Provenance, results_of, \
            write_outputs

        provenance = Provenance.now(benchmark, command_line(args), done.results)
        shown = results_of(benchmark, done.results, provenance)
        write_outputs(shown, out)
        if not args.quiet:
            Console(width=max(Console().width, 120)).print(shown.markdown(False), soft_wrap=True,
                                                           highlight=False, markup=False)
    if done.interrupted is not None:
        err.print(f"stopped: {len(done.results)} of {total} cells are in {typed(results)}; the "
                  f"same command continues from there", highlight=False, soft_wrap=True)
        return done.interrupted
    if not args.quiet:
        err.print(f"{done.ran} cells run, {done.skipped} found in {typed(results)}; "
                  f"{done.wall_time_s:.0f} s wall; tables, figures and benchmark.html in "
                  f"{typed(out)}", highlight=False, soft_wrap=True)
    return exitcodes.OK

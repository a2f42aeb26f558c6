"""The ``foldstream`` command line: ``run`` and ``validate``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console

from foldstream.job.config import Config, ConfigError, load_config


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="foldstream",
        description="k-fold prequential evaluation of streaming classifiers with paired tests.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run an evaluation (no CONFIG: the embedded default)")
    run.add_argument("config", nargs="?", help="a YAML configuration (METHOD.md §11)")
    run.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                     help="override a key, e.g. --set evaluation.folds=5 (repeatable)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--quiet", action="store_true", help="no progress bar and no summary tables")

    validate = commands.add_parser("validate", help="check a configuration without running it")
    validate.add_argument("config", nargs="?", help="a YAML configuration (none: the default)")
    validate.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    return parser


def _open_sinks(config: Config):
    from foldstream.connectors.sinks import JsonLinesSink, StdoutSink

    sink = config.sink
    records = JsonLinesSink(sink.path) if sink.kind == "file" else StdoutSink()
    return records, JsonLinesSink(sink.dead_letters())


def run(config: Config, *, progress: bool = True, tables: bool = True) -> int:
    from foldstream.job.inprocess import evaluate
    from foldstream.job.plans import expected_examples, make_plans, open_source
    from foldstream.job.report import print_summary, progress_bar

    # Tables go to stdout unless the records do.
    tables_console = Console(stderr=config.sink.kind == "stdout")
    if not tables_console.is_terminal:  # a log or a pipe: room for the tables, not 80 columns
        tables_console.width = max(tables_console.width, 120)
    progress_console = Console(stderr=True)
    plans = make_plans(config)
    source = open_source(config)
    last_comparisons: dict[str, list[dict[str, Any]]] = {}
    records, dead_letters = _open_sinks(config)

    def emit(record: dict[str, Any]) -> None:
        records.write(record)
        if record["type"] == "comparison":
            kept = last_comparisons.setdefault(record["stream"], [])
            if kept and kept[0]["position"] != record["position"]:
                kept.clear()
            kept.append(record)

    with records, dead_letters, progress_bar(expected_examples(config), progress and tables,
                                             progress_console) as update:
        result = evaluate(plans, source, emit, dead_letters.write, update)
    if tables:
        print_summary(tables_console, result.summaries, last_comparisons)
        where = f"records: {config.sink.path}" if config.sink.kind == "file" else "records: stdout"
        tables_console.print(f"{where}; rejected records: {config.sink.dead_letters()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    err = Console(stderr=True)
    try:
        config = load_config(args.config, args.overrides)
    except ConfigError as error:
        err.print(f"[red]error:[/] {error}", highlight=False)
        return 2
    if args.command == "validate":
        Console().print(f"{args.config or 'the embedded default'}: valid "
                        f"({config.engine.kind} engine, {len(config.learners)} learners, "
                        f"{config.evaluation.mode} with {config.evaluation.folds} folds)")
        return 0
    return run(config, progress=not args.no_progress, tables=not args.quiet)


if __name__ == "__main__":
    sys.exit(main())

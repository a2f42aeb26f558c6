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
    run.add_argument("config", nargs="?", help="a YAML configuration (docs/method.md §11)")
    run.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                     help="override a key, e.g. --set evaluation.folds=5 (repeatable)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--quiet", action="store_true", help="no progress bar and no summary tables")

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
    plot.add_argument("--measures", default="accuracy,kappa_m",
                      help="comma-separated measures to draw (default: accuracy,kappa_m)")
    plot.add_argument("--format", dest="formats", default="png",
                      help="comma-separated file formats, e.g. png,svg (default: png)")

    watch = commands.add_parser("watch", help="a live table of a metrics file or topic")
    watch.add_argument("source", help="a metrics JSON Lines file, or kafka://HOST:PORT/TOPIC")
    watch.add_argument("--measures", default="accuracy,kappa_m",
                       help="comma-separated measures to show (default: accuracy,kappa_m)")
    watch.add_argument("--follow", action=argparse.BooleanOptionalAction, default=True,
                       help="keep reading as records arrive, until Ctrl-C (default); "
                            "--no-follow: read to the end and exit")
    watch.add_argument("--interval", type=float, default=0.5, metavar="SECONDS",
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
    produce.add_argument("--rate", type=float, default=None, metavar="N",
                         help="examples per second (default: as fast as possible)")
    produce.add_argument("--limit", type=int, default=None, metavar="N",
                         help="send at most N examples (default: source.limit, or all)")
    produce.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def _open_sinks(config: Config):
    """Where the client writes records; a Kafka sink is written by the job itself."""
    from foldstream.connectors.sinks import JsonLinesSink, MemorySink, StdoutSink

    sink = config.sink
    if sink.kind == "kafka":
        return MemorySink(), MemorySink()
    records = JsonLinesSink(sink.path) if sink.kind == "file" else StdoutSink()
    return records, JsonLinesSink(sink.dead_letters())


def run(config: Config, *, progress: bool = True, tables: bool = True) -> int:
    from foldstream.job.engines.inprocess import evaluate
    from foldstream.job.plans import expected_examples, make_plans, open_source
    from foldstream.job.tools.tables import print_summary, progress_bar

    # Tables go to stdout unless the records do.
    tables_console = Console(stderr=config.sink.kind == "stdout")
    if not tables_console.is_terminal:  # a log or a pipe: room for the tables, not 80 columns
        tables_console.width = max(tables_console.width, 120)
    progress_console = Console(stderr=True)
    flink = config.engine.kind == "flink"
    last_comparisons: dict[str, list[dict[str, Any]]] = {}
    summaries: list[dict[str, Any]] = []
    records, dead_letters = _open_sinks(config)
    total = expected_examples(config)

    with records, dead_letters, progress_bar(total, progress and tables, progress_console) as update:

        def emit(record: dict[str, Any]) -> None:
            records.write(record)
            kind = record["type"]
            if kind == "comparison":
                kept = last_comparisons.setdefault(record["stream"], [])
                if kept and kept[0]["position"] != record["position"]:
                    kept.clear()
                kept.append(record)
            elif kind == "summary":
                summaries.append(record)
            elif kind == "measures" and flink:  # the job reports positions, not reads
                update(record["position"])

        if flink:
            from foldstream.job.engines.flink import job as flink_job

            flink_job.run(config, emit, dead_letters.write)
        else:
            evaluate(make_plans(config), open_source(config), emit, dead_letters.write, update)
    if tables:
        print_summary(tables_console, summaries, last_comparisons)
        sink = config.sink
        where = {"file": f"records: {getattr(sink, 'path', '')}; rejected records: ",
                 "stdout": "records: stdout; rejected records: ",
                 "kafka": f"records: Kafka topic {getattr(sink, 'topic', '')}; rejected records: "}[sink.kind]
        dead = getattr(sink, "dead_letter_topic", None) or sink.dead_letters()
        tables_console.print(f"{where}{dead}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command in ("schema", "plot", "watch", "produce"):  # tools: no run configuration
        from importlib import import_module

        return import_module(f"foldstream.job.tools.{args.command}").main(args)
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
    from foldstream.connectors.kafka import KafkaUnavailable
    from foldstream.job.engines.flink.deps import DependencyError

    try:
        return run(config, progress=not args.no_progress, tables=not args.quiet)
    except (KafkaUnavailable, DependencyError) as error:  # a broker down, no Java, no jars
        err.print(f"[red]error:[/] {error}", highlight=False)
        return 2
    except KeyboardInterrupt:
        err.print("stopped (Ctrl-C)")
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""The entry point a Flink cluster runs: Kafka in, Kafka out, nothing collected by a client.

On a cluster (session mode; the client only builds the job graph and submits it),
``foldstream submit CONFIG.yaml`` (:mod:`foldstream.job.engines.flink.submit`: it checks slots,
topics and checkpoints first, and follows the job until it runs) runs this module with the
wheel's ``flink`` client. By hand, from a clone or from a pip install::

    flink run --detached -m JOBMANAGER:8081 --python job/engines/flink/main.py -- CONFIG.yaml [--set k=v ...]
    flink run --detached -m JOBMANAGER:8081 -pym foldstream.job.engines.flink.main -- CONFIG.yaml

On the local mini-cluster (blocks until the job ends, i.e. forever for an unbounded source)::

    python -m foldstream.job.engines.flink.main CONFIG.yaml [--set k=v ...]

The configuration must read from Kafka and write to Kafka (``source.kind: kafka`` and
``sink.kind: kafka``): a job on a cluster has no client that could read a file or collect the
records into one. Everything else is the engine's (:mod:`foldstream.job.engines.flink.job`, the
graph; :mod:`~foldstream.job.engines.flink.env`, the environment;
:mod:`~foldstream.job.engines.flink.kafka`, the Kafka ends;
:mod:`~foldstream.job.engines.flink.run`, the checks): this file only loads the configuration,
wires the job and starts it. It defines no function that runs on the
cluster (the TaskManagers import ``foldstream`` from their own Python environment).

It exits as ``foldstream run`` does (:mod:`foldstream.job.exitcodes`): 0 when submitted (or, on
the mini-cluster, when a bounded job has ended), 2 for a bad configuration or a dependency that
is not there (no broker answers, a topic is missing, no Java or jars), 130 on Ctrl-C, 143 on
SIGTERM.
"""

from __future__ import annotations

import argparse
import sys

from foldstream.job import exitcodes
from foldstream.job.config import Config, ConfigError, check_sinks, load_config

JOB_NAME = "foldstream"
#: The delay between restarts of a job on a cluster (``engine.flink_config`` may set another).
CLUSTER_RESTART_DELAY = "10 s"


def check_cluster_config(config: Config) -> None:
    """Raise :class:`ConfigError` unless both ends are Kafka topics, naming the keys that differ."""
    wrong = [f"{section}.kind is {getattr(config, section).kind!r}"
             for section in ("source", "sink") if getattr(config, section).kind != "kafka"]
    if wrong:
        raise ConfigError(
            "a job on a Flink cluster reads from and writes to Kafka: it needs "
            "source.kind: kafka and sink.kind: kafka, but " + " and ".join(wrong)
            + " (run files with `foldstream run`; conf/compose.yaml and conf/cluster.yaml "
              "are examples)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="job/engines/flink/main.py",
        description="Submit the foldstream job (source.kind and sink.kind: kafka) to Flink.")
    parser.add_argument("config", help="a YAML configuration (docs/method.md §11)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="override a key (repeatable)")
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments after ``--``; a ``--`` that reaches the program is dropped.

    >>> vars(parse_args(["--", "c.yaml", "--set", "engine.parallelism=4"]))
    {'config': 'c.yaml', 'overrides': ['engine.parallelism=4']}
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--"]:
        args = args[1:]
    return _parser().parse_args(args)


def submit(config: Config):
    """Build the job into a fresh environment and execute it (returns on a detached submit)."""
    from foldstream.job.engines.flink import env as flink_env, kafka as flink_kafka
    from foldstream.job.engines.flink.job import build
    from foldstream.job.engines.flink.run import check_kafka

    check_kafka(config)  # a broker down fails here, in seconds, before Flink starts
    # a cluster keeps checkpoints where its configuration says, unless engine.checkpoint_dir
    # names a folder (which every TaskManager must reach); it resumes with `flink run -s`.
    # Either way they are retained when the job is cancelled (Flink's default deletes them).
    if config.checkpoint_interval_ms:
        config.engine.flink_config.setdefault(
            "execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
        # engine.restart_attempts restarts, CLUSTER_RESTART_DELAY apart: time for a TaskManager
        # that died to be noticed and replaced (1 s apart, as on the mini-cluster, they are
        # spent before a new one registers, and the job fails for want of slots)
        config.engine.flink_config.setdefault("restart-strategy.fixed-delay.delay",
                                              CLUSTER_RESTART_DELAY)
    env = flink_env.make_environment(
        config, checkpoint_dir=config.checkpoint_dir if config.engine.checkpoint_dir else None)
    records, dead_letters = build(env, config)
    flink_kafka.to_kafka(env, config, records, dead_letters)
    return env.execute(JOB_NAME)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config = load_config(args.config, args.overrides)
        check_cluster_config(config)
        check_sinks(config)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return exitcodes.UNUSABLE
    from foldstream.connectors.kafka import KafkaUnavailable
    from foldstream.job.engines.flink.deps import DependencyError
    from foldstream.job.engines.flink.run import CLIENT_LOGGERS
    from foldstream.job.engines.stopping import exit_code, interruptible, stop_text

    try:
        with interruptible(silence=CLIENT_LOGGERS):
            submit(config)
    except (KafkaUnavailable, DependencyError, FileNotFoundError) as error:
        # no broker or topic; no Java or jars (engine.jars naming a file that is not there)
        print(f"error: {error}", file=sys.stderr)
        return exitcodes.UNUSABLE
    except KeyboardInterrupt as stop:
        print(f"stopped ({stop_text(stop)})", file=sys.stderr)
        return exit_code(stop)
    return exitcodes.OK


if __name__ == "__main__":
    sys.exit(main())

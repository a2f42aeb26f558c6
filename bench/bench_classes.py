"""Memory and time against the number of classes: they must grow with the classes, not their
square (docs/memory.md).

    .venv/bin/python bench/bench_classes.py [--classes 1000 2000 5000 10000] [--per-class 5]
        [--folds 3] [--window adwin] [--distinct]

For each class count C, writes a CSV of ``C * per-class`` examples whose label is drawn uniformly
from C classes (``--distinct``: C examples, each its own class, the worst case for the confusion
cells: every example a new cell) and runs it in a fresh process through ``run_configuration``
(the path of ``foldstream run``): a no-change learner, ``--folds``-fold bootstrap, the window
given (ADWIN by default, the one that kept a summary per bucket), records counted and dropped.
Prints, per C, the peak resident memory of that process (``ru_maxrss``), the wall time, the
number of records and the bytes of the last ``measures`` record (each carries a recall per
class), and the memory a class costs beyond the smallest run.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_stream(path: Path, classes: int, examples: int, distinct: bool, seed: int = 1) -> None:
    """``examples`` rows ``x,y``: a random feature and a label among ``classes``."""
    rng = random.Random(seed)
    with path.open("w") as out:
        out.write("x,y\n")
        for i in range(examples):
            label = i if distinct else rng.randrange(classes)
            out.write(f"{rng.random():.4f},c{label}\n")


def one(path: str, folds: int, window: str, max_classes: int) -> None:
    """Run one stream in this process; print what it cost, as JSON."""
    from foldstream.job.config import load_config
    from foldstream.job.runner import run_configuration

    config = load_config(None, [
        f"source={{kind: file, path: {path}, label: y, stream: s}}",
        "learners=[{name: nochange, model: river.dummy.NoChangeClassifier}]",
        f"evaluation.window={{kind: {window}}}", f"evaluation.folds={folds}",
        f"evaluation.max_classes={max_classes}",
    ])
    count, last = [0], [0]

    def take(record: dict) -> None:
        count[0] += 1
        if record.get("type") == "measures":
            last[0] = len(json.dumps(record))

    started = time.perf_counter()
    run_configuration(config, write=False, on_record=take)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "records": count[0],
                      "measures_bytes": last[0]}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classes", type=int, nargs="+", default=[1_000, 2_000, 5_000, 10_000])
    parser.add_argument("--per-class", type=int, default=5, help="examples per class")
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--window", default="adwin")
    parser.add_argument("--distinct", action="store_true", help="each example its own class")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child: run this CSV
    args = parser.parse_args()
    ceiling = max(args.classes) + 1
    if args.one:
        one(args.one, args.folds, args.window, ceiling)
        return 0
    print(f"no-change learner, {args.folds}-fold bootstrap, {args.window} window, "
          + ("each example its own class" if args.distinct
             else f"{args.per_class} examples per class (labels uniform)"))
    print(f"{'classes':>8} {'examples':>9} {'peak RSS':>10} {'time':>8} {'records':>8} "
          f"{'last measures record':>21}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="foldstream-classes-") as tmp:
        for classes in args.classes:
            examples = classes if args.distinct else classes * args.per_class
            path = Path(tmp) / f"c{classes}.csv"
            write_stream(path, classes, examples, args.distinct)
            done = subprocess.run(
                [sys.executable, __file__, "--one", str(path), "--folds", str(args.folds),
                 "--window", args.window, "--classes", str(ceiling)],
                capture_output=True, text=True, check=False)
            if done.returncode:
                print(done.stderr, file=sys.stderr)
                return 1
            cost = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append((classes, cost))
            print(f"{classes:>8,} {examples:>9,} {cost['peak_mb']:>7.0f} MB {cost['seconds']:>6.1f} s "
                  f"{cost['records']:>8,} {cost['measures_bytes'] / 1024:>17.0f} KiB", flush=True)
    if len(rows) > 1:
        (c0, first), (c1, last) = rows[0], rows[-1]
        print(f"memory per class beyond {c0:,} classes: "
              f"{(last['peak_mb'] - first['peak_mb']) * 1024 / (c1 - c0):.1f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

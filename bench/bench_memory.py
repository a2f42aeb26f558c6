"""Memory of a long run: RSS at 100k and at 1M generated examples must stay flat.

    .venv/bin/python bench/bench_memory.py [--limit 1000000] [--set KEY=VALUE ...]

SEA examples, 10-fold bootstrap, ADWIN windows, two learners that hold no growing state
(no-change and prior), so what grows, if anything, is the evaluation: windows, baselines,
paired counts, alarms, pending batches.
"""

from __future__ import annotations

import argparse
import os
import time

from foldstream.job.config import load_config
from foldstream.job.runner import run_configuration


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=1_000_000)
    parser.add_argument("--generator", default="river.datasets.synth.SEA")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="more overrides, after these (e.g. another window, a delay)")
    args = parser.parse_args()
    config = load_config(None, [
        f"source={{kind: generator, model: {args.generator}, limit: {args.limit}, seed: 1}}",
        "learners=[{name: nochange, model: river.dummy.NoChangeClassifier}, "
        "{name: prior, model: river.dummy.PriorClassifier}]",
        "evaluation.window={kind: adwin, delta: 0.002}", "evaluation.folds=10", *args.set,
    ])
    marks = {100_000: None, args.limit // 2: None, args.limit: None}
    started = time.perf_counter()

    def progress(n: int) -> None:
        for mark in marks:
            if marks[mark] is None and n >= mark:
                marks[mark] = rss_mb()
                print(f"{n:>9} examples: RSS {marks[mark]:.1f} MB ({time.perf_counter() - started:.0f} s)",
                      flush=True)

    count = [0]
    run_configuration(config, write=False, on_record=lambda r: count.__setitem__(0, count[0] + 1),
                      on_progress=progress)
    print(f"records: {count[0]}; RSS growth from 100k to {args.limit}: "
          f"{marks[args.limit] - marks[100_000]:+.1f} MB")


if __name__ == "__main__":
    main()

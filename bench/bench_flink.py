"""The Flink job against the in-process engine, and parallelism 2 against 1, in one run.

    .venv/bin/python bench/bench_flink.py [--limit N] [--batch-size 500]

Electricity, 10-fold bootstrap, GaussianNB + HoeffdingTree. Start-up is excluded by timing from
the first record (the report at position ``report_every``) to the end of the run, and counting
the examples in between: the same clock for every engine.
"""

from __future__ import annotations

import argparse
import time

from foldstream.job import flink_job
from foldstream.job.config import load_config
from foldstream.job.inprocess import evaluate
from foldstream.job.plans import make_plans, open_source

LEARNERS = ("learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
            "{name: ht, model: river.tree.HoeffdingTreeClassifier}]")


class Clock:
    """Examples per second between the first report and the end."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.first: tuple[float, int] | None = None
        self.last: tuple[float, int] | None = None

    def __call__(self, record: dict) -> None:
        if record["type"] in ("measures", "summary"):
            mark = (time.perf_counter(), record["position"])
            if self.first is None:
                self.first = mark
            self.last = mark

    def rate(self) -> float:
        (t0, p0), (t1, p1) = self.first, self.last
        return (p1 - p0) / (t1 - t0)

    def startup(self) -> float:
        return self.first[0] - self.started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=500)
    args = parser.parse_args()
    base = [LEARNERS, "evaluation.folds=10", f"engine.batch_size={args.batch_size}"]
    if args.limit:
        base.append(f"source.limit={args.limit}")
    results = {}
    for name, overrides in (("inprocess", []),
                            ("flink P=1", ["engine.kind=flink", "engine.parallelism=1"]),
                            ("flink P=2", ["engine.kind=flink", "engine.parallelism=2"])):
        config = load_config(None, base + overrides)
        clock = Clock()
        if config.engine.kind == "flink":
            flink_job.run(config, clock, lambda r: None)
        else:
            evaluate(make_plans(config), open_source(config), clock, lambda r: None)
        results[name] = clock.rate()
        print(f"{name:10} {clock.rate():7.1f} examples/s after the first report "
              f"(first report after {clock.startup():.1f} s)", flush=True)
    print(f"flink P=1 / in-process: {results['flink P=1'] / results['inprocess']:.3f}")
    print(f"flink P=2 / flink P=1:  {results['flink P=2'] / results['flink P=1']:.3f}")


if __name__ == "__main__":
    main()

"""The Flink job against the in-process engine, and parallelism 2 against 1, in one run.

    .venv/bin/python bench/bench_flink.py [--limit N] [--batch-size 500]

Electricity, 10-fold bootstrap, GaussianNB + HoeffdingTree. Start-up is excluded: each engine's
``summary`` record times its run from the first example it received to the end.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from foldstream.job import flink_job
from foldstream.job.config import load_config
from foldstream.job.inprocess import evaluate
from foldstream.job.plans import make_plans, open_source

LEARNERS = ("learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
            "{name: ht, model: river.tree.HoeffdingTreeClassifier}]")


class Clock:
    """The job's own examples per second, from the summary record: its wall time runs from the
    first example the fan-out receives to the end, so start-up is excluded. (Timing records as
    they reach the client would not do: the collect sink hands them over in bursts.)"""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.summary: dict | None = None
        self.ended = 0.0

    def __call__(self, record: dict) -> None:
        if record["type"] == "summary":
            self.summary = record
            self.ended = time.perf_counter()

    def rate(self) -> float:
        return self.summary["position"] / self.summary["wall_time_s"]

    def startup(self) -> float:
        return (self.ended - self.started) - self.summary["wall_time_s"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--checkpoints", action="store_true",
                        help="P=2 without and with checkpoints every 10 s instead; report the "
                             "size of the last checkpoint")
    parser.add_argument("--keying", action="store_true",
                        help="compare the two keyings of the learner tasks at P=2 instead")
    args = parser.parse_args()
    base = [LEARNERS, "evaluation.folds=10", f"engine.batch_size={args.batch_size}"]
    if args.limit:
        base.append(f"source.limit={args.limit}")
    results = {}
    runs = (("inprocess", []),
            ("flink P=1", ["engine.kind=flink", "engine.parallelism=1"]),
            ("flink P=2", ["engine.kind=flink", "engine.parallelism=2"]))
    checkpoint_dir = Path(tempfile.mkdtemp(prefix="foldstream-checkpoints-"))
    if args.checkpoints:
        runs = (("P=2 no checkpoints", ["engine.kind=flink", "engine.parallelism=2"]),
                ("P=2 checkpoints 10 s", ["engine.kind=flink", "engine.parallelism=2",
                                          "engine.checkpoint_interval_ms=10000"]))
        os.environ["FOLDSTREAM_CHECKPOINT_DIR"] = checkpoint_dir.as_uri()
    if args.keying:
        runs = tuple((f"P=2 {k}", ["engine.kind=flink", "engine.parallelism=2", f"engine.keying={k}"])
                     for k in ("fold", "learner_fold"))
    for name, overrides in runs:
        config = load_config(None, base + overrides)
        clock = Clock()
        if config.engine.kind == "flink":
            flink_job.run(config, clock, lambda r: None)
        else:
            evaluate(make_plans(config), open_source(config), clock, lambda r: None)
        results[name] = clock.rate()
        print(f"{name:10} {clock.rate():7.1f} examples/s from the first example to the end "
              f"(+ {clock.startup():.1f} s before the first example and after the end)", flush=True)
    if args.checkpoints:
        print(f"with / without checkpoints: "
              f"{results['P=2 checkpoints 10 s'] / results['P=2 no checkpoints']:.3f}")
        sizes = {c: sum(f.stat().st_size for f in c.rglob('*') if f.is_file())
                 for c in checkpoint_dir.rglob("chk-*")}
        for c, size in sorted(sizes.items()):
            print(f"retained checkpoint {c.name}: {size / 2**20:.1f} MB")
        return
    if args.keying:
        print(f"learner_fold / fold: {results['P=2 learner_fold'] / results['P=2 fold']:.3f}")
        return
    print(f"flink P=1 / in-process: {results['flink P=1'] / results['inprocess']:.3f}")
    print(f"flink P=2 / flink P=1:  {results['flink P=2'] / results['flink P=1']:.3f}")


if __name__ == "__main__":
    main()

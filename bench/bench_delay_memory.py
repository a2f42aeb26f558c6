"""Delayed labels whose labels never come: ``evaluation.delay.max_pending`` must bound memory.

    .venv/bin/python bench/bench_delay_memory.py [--examples 200000] [--max-pending 10000]
        [--sample-every 20000]

Writes a JSON Lines file of arrivals only (an id and three features, no label field: each
example waits for a label that never comes, docs/method.md §13), and runs it in process with
``evaluation.delay: {max_pending: N}``, 10-fold bootstrap and two learners that hold no growing
state (no-change and prior), so that what could grow is the pending state: the features,
weights and lags held once per stream by the delay fan-out, and the predictions held per fold
by the evaluators. Beyond ``max_pending`` the oldest pending example expires, so the RSS must be
flat once ``max_pending`` examples wait, and the final report must count exactly
``examples - max_pending`` expired examples and ``max_pending`` pending ones.

Prints the RSS every ``--sample-every`` examples (and at ``max_pending``), the final counts and
the time; exits with status 1 if the counts are not exact.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from foldstream.job.config import load_config
from foldstream.job.runner import run_configuration


def rss_mb() -> float:
    """This process's resident memory, in MiB."""
    with open(f"/proc/{os.getpid()}/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def write_arrivals(path: Path, examples: int, seed: int = 1) -> None:
    """``examples`` rows ``{"id": i, "a": .., "b": .., "c": ..}``, none with a label."""
    rng = random.Random(seed)
    with path.open("w") as out:
        for i in range(1, examples + 1):
            out.write(json.dumps({"id": i, "a": round(rng.random(), 6),
                                  "b": round(rng.random() * 10, 6),
                                  "c": round(rng.random() * 10, 6)}) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=200_000)
    parser.add_argument("--max-pending", type=int, default=10_000)
    parser.add_argument("--sample-every", type=int, default=20_000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="foldstream-delay-memory-") as tmp:
        path = Path(tmp) / "arrivals.jsonl"
        write_arrivals(path, args.examples)
        config = load_config(None, [
            f"source={{kind: file, path: '{path}', label: y, id_field: id, stream: s}}",
            f"evaluation.delay={{max_pending: {args.max_pending}}}",
            "learners=[{name: nochange, model: river.dummy.NoChangeClassifier}, "
            "{name: prior, model: river.dummy.PriorClassifier}]",
            "evaluation.folds=10",
        ])
        marks = sorted({args.max_pending, *range(args.sample_every, args.examples + 1,
                                                 args.sample_every)})
        samples: dict[int, float] = {}
        started = time.perf_counter()

        def progress(n: int) -> None:
            while len(samples) < len(marks) and n >= marks[len(samples)]:
                samples[marks[len(samples)]] = rss_mb()
                print(f"{n:>9,} examples: RSS {samples[marks[len(samples) - 1]]:7.1f} MB "
                      f"({time.perf_counter() - started:5.1f} s)", flush=True)

        records: list[dict] = []
        run_configuration(config, write=False, on_record=records.append, on_progress=progress)
        seconds = time.perf_counter() - started

    final = [r for r in records if r["type"] == "measures" and r["position"] == args.examples]
    counts = {(r["labelled"], r["pending"], r["expired"]) for r in final}
    want = (0, args.max_pending, args.examples - args.max_pending)
    after = [mb for n, mb in samples.items() if n >= 2 * args.max_pending]
    print(f"final report (labelled, pending, expired): {sorted(counts)}; expected {want}")
    if after:
        print(f"RSS from {2 * args.max_pending:,} to {args.examples:,} examples: "
              f"{min(after):.1f}-{max(after):.1f} MB (spread {max(after) - min(after):.1f} MB)")
    print(f"{args.examples:,} examples in {seconds:.1f} s")
    return 0 if final and counts == {want} else 1


if __name__ == "__main__":
    sys.exit(main())

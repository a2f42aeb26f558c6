"""How much two busy cores give on this machine: the ceiling for Flink P=2 over P=1.

    .venv/bin/python bench/bench_cores.py [--limit 3000] [--rounds 3]

Runs the learners' own work (bench_inprocess.plain_loop: Electricity, 10-fold bootstrap of
GaussianNB and HoeffdingTree, no evaluation, no Flink) in one process alone, then in two
processes at once, several rounds. Two processes on two free cores would finish together in the
time one takes alone (a speed-up of 2.0); a shared or oversubscribed host gives less, and no job
at parallelism 2 can beat what two independent processes get.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def one_loop(limit: int) -> None:
    sys.path.insert(0, str(HERE))
    from bench_flink import LEARNERS
    from bench_inprocess import plain_loop

    from foldstream.job.config import load_config
    from foldstream.job.plans import make_plans, open_source

    config = load_config(None, [LEARNERS, "evaluation.folds=10", f"source.limit={limit}"])
    examples = list(open_source(config))
    print(plain_loop(make_plans(config), examples))  # seconds of the loop itself


def timed(limit: int, copies: int) -> list[float]:
    """Each process's loop time with ``copies`` processes running at once."""
    procs = [subprocess.Popen([sys.executable, __file__, "--child", str(limit)], stdout=subprocess.PIPE,
                              text=True) for _ in range(copies)]
    return [float(p.communicate()[0].split()[-1]) for p in procs]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        one_loop(args.child)
        return
    speedups = []
    for r in range(1, args.rounds + 1):
        alone = timed(args.limit, 1)[0]
        pair = timed(args.limit, 2)
        speedup = sum(alone / t for t in pair)  # work done by the pair per unit of one's time
        speedups.append(speedup)
        print(f"round {r}: alone {alone:.2f} s; two at once {pair[0]:.2f} s and {pair[1]:.2f} s; "
              f"speed-up of two processes {speedup:.2f}", flush=True)
        time.sleep(1)
    print(f"two processes over one: {min(speedups):.2f} to {max(speedups):.2f} "
          f"(2.00 on two free cores)")


if __name__ == "__main__":
    main()

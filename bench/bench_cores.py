"""How much two busy cores give on this machine: the ceiling for Flink P=2 over P=1.

    .venv/bin/python bench/bench_cores.py [--limit 3000] [--rounds 3] [--busy]

Runs the learners' own work (bench_inprocess.plain_loop: Electricity, 10-fold bootstrap of
GaussianNB and HoeffdingTree, no evaluation, no Flink) in one process alone, then in two
processes at once, several rounds. Two processes on two free cores would finish together in the
time one takes alone (a speed-up of 2.0); a shared or oversubscribed host gives less, and no job
at parallelism 2 can beat what two independent processes get.

``--busy`` adds a third round to each: the two loops beside a process that works half a
millisecond and sleeps half a millisecond, over and over (a stand-in for what a Flink job runs
beside its learners: the JVM and the Python worker of the fan-out and the aggregator, whose
threads wake often). It prints each loop's CPU time (not its wall time, which the third
process's share lengthens as expected) against the loop's CPU alone: what the learners' own
work costs more when it shares the cores with such a neighbour.
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
    cpu = time.process_time()
    wall = plain_loop(make_plans(config), examples)  # seconds of the loop itself
    print(wall, time.process_time() - cpu)


def spin() -> None:
    """Half a millisecond of work, half a millisecond of sleep, until killed."""
    values = list(range(5000))
    while True:
        start = time.perf_counter()
        while time.perf_counter() - start < 0.0005:
            sorted(values)
        time.sleep(0.0005)


def timed(limit: int, copies: int, busy: bool = False) -> list[tuple[float, float]]:
    """Each process's loop (wall, CPU) seconds with ``copies`` processes running at once, beside
    :func:`spin` if ``busy``."""
    neighbour = subprocess.Popen([sys.executable, __file__, "--spin"]) if busy else None
    procs = [subprocess.Popen([sys.executable, __file__, "--child", str(limit)], stdout=subprocess.PIPE,
                              text=True) for _ in range(copies)]
    try:
        return [tuple(map(float, p.communicate()[0].split()[-2:])) for p in procs]
    finally:
        if neighbour is not None:
            neighbour.kill()
            neighbour.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--busy", action="store_true",
                        help="also the pair beside a process that wakes every millisecond")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--spin", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spin:
        spin()
    if args.child is not None:
        one_loop(args.child)
        return
    speedups, costs = [], []
    for r in range(1, args.rounds + 1):
        (alone, alone_cpu), = timed(args.limit, 1)
        pair = timed(args.limit, 2)
        speedup = sum(alone / wall for wall, _ in pair)  # the pair's work per unit of one's time
        speedups.append(speedup)
        line = (f"round {r}: alone {alone:.2f} s; two at once {pair[0][0]:.2f} s and "
                f"{pair[1][0]:.2f} s; speed-up of two processes {speedup:.2f}")
        if args.busy:
            crowded = timed(args.limit, 2, busy=True)
            cost = sum(cpu for _, cpu in crowded) / (2 * alone_cpu)
            costs.append(cost)
            line += (f"; beside a busy neighbour: CPU {crowded[0][1]:.2f} s and "
                     f"{crowded[1][1]:.2f} s against {alone_cpu:.2f} s alone ({cost:.2f}x)")
        print(line, flush=True)
        time.sleep(1)
    print(f"two processes over one: {min(speedups):.2f} to {max(speedups):.2f} "
          f"(2.00 on two free cores)")
    if costs:
        print(f"the learners' CPU beside a busy neighbour: {min(costs):.2f}x to {max(costs):.2f}x "
              f"their CPU alone (1.00 if sharing the cores cost nothing)")


if __name__ == "__main__":
    main()

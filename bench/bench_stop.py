"""The cost of a run that can be stopped whatever its learners do (issue 18, kind 6).

    .venv/bin/python bench/bench_stop.py [--limit N] [--repeat R] [--set dotted.key=value ...]

``foldstream run`` evaluates in a worker thread while the main thread waits on signals
(job/engines/stopping.py), so that a learner that never returns can be abandoned. This times
the in-process engine both ways in one process, alternating (the best wall and CPU time of
``--repeat`` runs each): ``inline`` (the stages in the calling thread, as the tests and benches
run them) and ``stoppable`` (the worker thread, as the command line runs them). The cheapest
learners by default, so that the engine's own overhead is what is measured.
"""

from __future__ import annotations

import argparse
import signal
import time

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.records.base import Example, dumps

CHEAP = ("learners=[{name: nochange, model: river.dummy.NoChangeClassifier}, "
         "{name: prior, model: river.dummy.PriorClassifier}]")


def times(plans, examples: list[Example], stoppable: bool) -> tuple[float, float]:
    """Wall and CPU (this process) seconds of one engine run."""
    out: list[str] = []
    started, cpu = time.perf_counter(), time.process_time()
    result = evaluate(plans, iter(examples), lambda r: out.append(dumps(r)), lambda r: None,
                      stop_on_signals=stoppable)
    assert result.interrupted is None
    return time.perf_counter() - started, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=20000, help="examples of Electricity")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="a configuration override (repeatable)")
    args = parser.parse_args()
    config = load_config(None, [CHEAP, "evaluation.folds=10", f"source.limit={args.limit}",
                                *args.overrides])
    plans = make_plans(config)
    examples = [e for e in open_source(config) if isinstance(e, Example)]
    runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(args.repeat):
        for stoppable in (False, True):
            runs[stoppable].append(times(plans, examples, stoppable))
    n = len(examples)
    print(f"examples: {n}, folds: {plans.folds}, learners: "
          f"{' + '.join(s.name for s in plans.learners)}, batch {plans.batch_size}, "
          f"{args.repeat} alternating runs each; handlers for {signal.SIGINT.name}, "
          f"{signal.SIGTERM.name}")
    best = {}
    for stoppable, label in ((False, "inline   "), (True, "stoppable")):
        wall, cpu = min(t for t, _ in runs[stoppable]), min(c for _, c in runs[stoppable])
        best[stoppable] = (wall, cpu)
        print(f"{label}: wall {wall:.2f} s ({n / wall:.0f} examples/s), cpu {cpu:.2f} s; runs "
              + ", ".join(f"{t:.2f}/{c:.2f}" for t, c in runs[stoppable]))
    print(f"worker thread cost: wall {100 * (best[True][0] / best[False][0] - 1):+.1f}%, "
          f"cpu {100 * (best[True][1] / best[False][1] - 1):+.1f}%")


if __name__ == "__main__":
    main()

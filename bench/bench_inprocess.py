"""In-process engine speed against a plain loop doing the same learner work, in one run.

    .venv/bin/python bench/bench_inprocess.py [--limit N] [--profile] [--verdicts on|off|compare]
                                              [--set dotted.key=value ...]

The plain loop does only what the learners must do: for every example and fold, predict, then
learn with the fold's weight (the same Poisson(1) weights, drawn beforehand and not timed).
The engine does that plus everything else: fan-out, windows, baselines, alarms, paired counts,
reports, tests and JSON records (written to memory). Ratio = loop time / engine time.

``--verdicts on`` switches the live verdicts of docs/method.md §12 on (``off``: off; default:
the configuration's own setting). ``--verdicts compare`` times only the engine, alternating runs
with verdicts off and on in one process (wall and CPU time, best of ``--repeat``), which on a
busy machine measures their cost far better than two separate runs. ``--set`` passes any other
configuration override on, after the benchmark's own.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.learners.fitting import takes_weight
from foldstream.operators.records.base import Example, dumps
from foldstream.operators.stats.weights import fold_weights

LEARNERS = ("learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
            "{name: ht, model: river.tree.HoeffdingTreeClassifier}]")


def plain_loop(plans, examples: list[Example]) -> float:
    keys = list(range(1, len(examples) + 1))
    weights = fold_weights("bootstrap", plans.folds, plans.fanout.seed, examples[0].stream, keys)
    models = [[spec.build() for spec in plans.learners] for _ in range(plans.folds)]
    weighted = [[takes_weight(m) for m in fold] for fold in models]
    started = time.perf_counter()
    for i, ex in enumerate(examples):
        x, y = ex.x, ex.y
        for fold in range(plans.folds):
            w = int(weights[i, fold])
            for model, has_w in zip(models[fold], weighted[fold]):
                model.predict_one(x)
                if w:
                    if has_w:
                        model.learn_one(x, y, w=w)
                    else:
                        for _ in range(w):
                            model.learn_one(x, y)
    return time.perf_counter() - started


def engine(plans, examples: list[Example]) -> float:
    return engine_times(plans, examples)[0]


def engine_times(plans, examples: list[Example]) -> tuple[float, float]:
    """Wall and CPU (this process) seconds of one engine run."""
    out: list[str] = []
    started, cpu = time.perf_counter(), time.process_time()
    evaluate(plans, iter(examples), lambda r: out.append(dumps(r)), lambda r: None)
    return time.perf_counter() - started, time.process_time() - cpu


def compare_verdicts(overrides: list[str], repeat: int) -> None:
    """Engine runs with verdicts off and on, alternating; the best of each counts."""
    plans = {v: make_plans(load_config(None, [*overrides, f"evaluation.verdicts.enabled={v}"]))
             for v in ("false", "true")}
    config = load_config(None, overrides)
    examples = [e for e in open_source(config) if isinstance(e, Example)]
    runs: dict[str, list[tuple[float, float]]] = {"false": [], "true": []}
    for _ in range(repeat):
        for v in ("false", "true"):
            runs[v].append(engine_times(plans[v], examples))
    n = len(examples)
    learners = " + ".join(spec.name for spec in plans["true"].learners)
    print(f"examples: {n}, folds: {plans['true'].folds}, learners: {learners}, "
          f"batch {plans['true'].batch_size}, {repeat} alternating runs each")
    best = {}
    for v, label in (("false", "verdicts off"), ("true", "verdicts on ")):
        wall = min(t for t, _ in runs[v])
        cpu = min(c for _, c in runs[v])
        best[v] = (wall, cpu)
        print(f"{label}: wall {wall:.2f} s ({n / wall:.0f} examples/s), cpu {cpu:.2f} s; runs "
              + ", ".join(f"{t:.2f}/{c:.2f}" for t, c in runs[v]))
    print(f"verdicts cost: wall {100 * (best['true'][0] / best['false'][0] - 1):+.1f}%, "
          f"cpu {100 * (best['true'][1] / best['false'][1] - 1):+.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None, help="examples of Electricity (all)")
    parser.add_argument("--profile", action="store_true", help="profile the engine instead")
    parser.add_argument("--repeat", type=int, default=2,
                        help="alternate loop and engine this many times; the best of each counts")
    parser.add_argument("--verdicts", choices=["on", "off", "compare"], default=None,
                        help="live verdicts on or off (default: as configured); compare: time "
                             "the engine alone with verdicts off and on, alternating")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="a configuration override (repeatable)")
    args = parser.parse_args()
    overrides = [LEARNERS, "evaluation.mode=bootstrap", "evaluation.folds=10"]
    if args.limit:
        overrides.append(f"source.limit={args.limit}")
    if args.verdicts in ("on", "off"):
        overrides.append(f"evaluation.verdicts.enabled={str(args.verdicts == 'on').lower()}")
    overrides += args.overrides
    if args.verdicts == "compare":
        compare_verdicts(overrides, args.repeat)
        return
    config = load_config(None, overrides)
    plans = make_plans(config)
    examples = [e for e in open_source(config) if isinstance(e, Example)]
    if args.profile:
        cProfile.runctx("engine(plans, examples)", globals(), locals(), "/tmp/foldstream.prof")
        pstats.Stats("/tmp/foldstream.prof").sort_stats("tottime").print_stats(25)
        return
    loops, engines = [], []
    for _ in range(args.repeat):  # alternating, so a busy spell on the machine hits both
        loops.append(plain_loop(plans, examples))
        engines.append(engine(plans, examples))
    t_loop, t_engine = min(loops), min(engines)
    n = len(examples)
    print("runs (s): loop " + ", ".join(f"{t:.1f}" for t in loops)
          + "; engine " + ", ".join(f"{t:.1f}" for t in engines))
    learners = " + ".join(spec.name for spec in plans.learners)
    verdicts = "on" if config.evaluation.verdicts.enabled else "off"
    print(f"examples: {n}, folds: {plans.folds}, learners: {learners}, "
          f"batch {plans.batch_size}, verdicts {verdicts}")
    print(f"plain loop: {t_loop:.1f} s ({n / t_loop:.0f} examples/s)")
    print(f"engine:     {t_engine:.1f} s ({n / t_engine:.0f} examples/s)")
    print(f"ratio (loop time / engine time): {t_loop / t_engine:.3f}")


if __name__ == "__main__":
    main()

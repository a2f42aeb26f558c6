"""In-process engine speed against a plain loop doing the same learner work, in one run.

    .venv/bin/python bench/bench_inprocess.py [--limit N] [--profile]

The plain loop does only what the learners must do: for every example and fold, predict, then
learn with the fold's weight (the same Poisson(1) weights, drawn beforehand and not timed).
The engine does that plus everything else: fan-out, windows, baselines, alarms, paired counts,
reports, tests and JSON records (written to memory). Ratio = loop time / engine time.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.learners import takes_weight
from foldstream.operators.records import Example, dumps
from foldstream.operators.weights import fold_weights

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
    out: list[str] = []
    started = time.perf_counter()
    evaluate(plans, iter(examples), lambda r: out.append(dumps(r)), lambda r: None)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None, help="examples of Electricity (all)")
    parser.add_argument("--profile", action="store_true", help="profile the engine instead")
    parser.add_argument("--repeat", type=int, default=2,
                        help="alternate loop and engine this many times; the best of each counts")
    args = parser.parse_args()
    overrides = [LEARNERS, "evaluation.mode=bootstrap", "evaluation.folds=10"]
    if args.limit:
        overrides.append(f"source.limit={args.limit}")
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
    print(f"examples: {n}, folds: {plans.folds}, learners: GaussianNB + HoeffdingTree, batch 500")
    print(f"plain loop: {t_loop:.1f} s ({n / t_loop:.0f} examples/s)")
    print(f"engine:     {t_engine:.1f} s ({n / t_engine:.0f} examples/s)")
    print(f"ratio (loop time / engine time): {t_loop / t_engine:.3f}")


if __name__ == "__main__":
    main()

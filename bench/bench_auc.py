"""Prequential AUC (docs/method.md §18): its cost per example, and its memory over a long stream.

    .venv/bin/python bench/bench_auc.py --cost [--repeat 3] [--folds 1] [--limit N]
    .venv/bin/python bench/bench_auc.py --memory [--n 1000000]

``--cost``: all of Electricity through the in-process engine with river's ``NoChangeClassifier``
(a learner that costs almost nothing, so that what is timed is the evaluation), a sliding window
of 1000, runs with ``evaluation.scores: []`` and ``[auc]`` alternating in one process, the best
CPU time of each; the difference per example and fold is the AUC's cost (keeping the scores,
carrying them to the evaluator, the structures' updates and the reports).

``--memory``: the AUC structure of one learner
(:class:`~foldstream.operators.stats.auc.WindowAuc`) fed ``--n`` examples a batch of 500 at a time, two classes: NoChange's scores (0 and 1) and
random scores of a grid of 1,000 levels, over a sliding window of 1000 and over the whole
stream; the bytes of its arrays and the process's peak RSS every tenth of the stream.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.stats.auc import WindowAuc
from foldstream.operators.records.base import Example, dumps

ELEC = Path(__file__).resolve().parents[2] / "shared" / "data" / "elec.csv.gz"
if not ELEC.exists():  # a checkout without ../shared: the packaged copy
    ELEC = Path(__file__).resolve().parents[1] / "connectors" / "data" / "elec.csv.gz"


def engine_cpu(plans, examples: list[Example]) -> float:
    """CPU seconds (this process) of one engine run, records written to memory."""
    out: list[str] = []
    cpu = time.process_time()
    evaluate(plans, iter(examples), lambda r: out.append(dumps(r)), lambda r: None)
    return time.process_time() - cpu


def cost(repeat: int, folds: int, limit: int | None) -> None:
    mode = ["evaluation.mode=single"] if folds == 1 else \
        ["evaluation.mode=bootstrap", f"evaluation.folds={folds}"]
    base = [f"source.path={ELEC}", *([f"source.limit={limit}"] if limit else []),
            "learners=[{name: nochange, model: river.dummy.NoChangeClassifier}]",
            "evaluation.window={kind: sliding, size: 1000}", *mode]
    runs = {"without": base, "with auc": [*base, "evaluation.scores=[auc]"]}
    plans = {name: make_plans(load_config(None, o)) for name, o in runs.items()}
    examples = [e for e in open_source(load_config(None, base)) if isinstance(e, Example)]
    n = len(examples)
    engine_cpu(plans["with auc"], examples[:2000])  # the kernels loaded (numba's cache)
    best = {name: float("inf") for name in runs}
    for round_ in range(repeat):
        line = []
        for name in runs:
            t = engine_cpu(plans[name], examples)
            best[name] = min(best[name], t)
            line.append(f"{name} {t:.3f} s")
        print(f"round {round_ + 1}: " + ", ".join(line), flush=True)
    per = {name: 1e6 * t / (n * folds) for name, t in best.items()}
    print(f"{n} examples x {folds} fold(s), best of {repeat}: without {best['without']:.3f} s "
          f"({per['without']:.2f} us per example and fold), with auc {best['with auc']:.3f} s "
          f"({per['with auc']:.2f} us); the AUC costs {per['with auc'] - per['without']:+.2f} us "
          f"per example and fold")


def memory(n: int) -> None:
    rng = np.random.default_rng(1)
    batch = 500
    for label, windowed in (("sliding 1000", True), ("cumulative", False)):
        for scores_of in ("nochange", "random"):
            auc = WindowAuc(windowed)
            lines = []
            prev = 0
            t0 = time.process_time()
            for lo in range(0, n, batch):
                y = (rng.random(batch) < 0.4).astype(np.int64)
                if scores_of == "nochange":  # the previous label, scored 1
                    last = np.r_[prev, y[:-1]]
                    prev = int(y[-1])
                    s1 = last.astype(np.float64)
                else:
                    s1 = rng.integers(0, 1000, batch) / 999.0
                scores = np.column_stack([1.0 - s1, s1])
                sizes = np.minimum(np.arange(lo + 1, lo + batch + 1), 1000) if windowed else None
                auc.update(y, scores, sizes)
                done = lo + batch
                if done % (n // 10) == 0:
                    held = sum(s.nodes.nbytes + s.keys.nbytes + s.path.nbytes + s.ring_s.nbytes
                               + s.ring_p.nbytes for s in auc.classes)
                    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                    lines.append(f"{done:>9,}: {held / 1024:8.1f} KiB held, peak RSS {rss:.0f} MiB")
            took = time.process_time() - t0
            print(f"{label}, {scores_of} scores: {1e6 * took / n:.2f} us per example "
                  f"(two classes), AUC {auc.value(2, 1):.6f}")
            print("\n".join("    " + line for line in lines), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cost", action="store_true", help="the AUC's cost in the engine")
    parser.add_argument("--memory", action="store_true", help="the structure's memory")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--folds", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--n", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    if args.cost:
        cost(args.repeat, args.folds, args.limit)
    if args.memory:
        memory(args.n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The evaluation path per fold batch: learner tasks, fold evaluators, aggregator, timed apart.

    .venv/bin/python bench/bench_evalpath.py [--rows N] [--repeat R] [--arff PATH]
                                             [--set dotted.key=value ...]

The first ``--rows`` examples of Covertype (written as ARFF to ``--arff``, made once when
missing) are read and cut into fold batches by the stream's head, untimed; then, on fresh
stages, every fold batch goes through its learner tasks, every prediction batch through its
fold evaluator, every fold report through the aggregator, each stage timed apart (best of
``--repeat``). Printed: each stage's microseconds per fold batch, and a digest of the records,
which two versions of the code must share. The default configuration is the one of the
whole-Covertype comparison with MOA: the no-change learner, 10-fold bootstrap, cumulative
window, no detectors; ``--set`` overrides any key after these.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import StreamStages
from foldstream.job.plans import make_plans, open_source

SETTINGS = ["learners=[{name: nc, model: river.dummy.NoChangeClassifier}]",
            "evaluation.mode=bootstrap", "evaluation.window={kind: cumulative}",
            "evaluation.alarms.page_hinkley=null", "evaluation.alarms.adwin=false",
            "evaluation.folds=10"]


class StageTimes(NamedTuple):
    """Seconds in each stage over all fold batches."""

    learners: float
    evaluators: float
    aggregator: float


def replay(plans, fold_batches: list) -> tuple[StageTimes, list]:
    """The fold batches through fresh stages, a stage at a time: its times and records."""
    stages = StreamStages(plans, "")
    t0 = time.perf_counter()
    predictions = [task.process(batch) for batch in fold_batches
                   for task in stages.tasks[batch.fold]]
    t1 = time.perf_counter()
    reports = [report for p in predictions for report in stages.evaluators[p.fold].add(p)]
    t2 = time.perf_counter()
    records = [record for report in reports for record in stages.aggregator.add(report)]
    t3 = time.perf_counter()
    return StageTimes(t1 - t0, t2 - t1, t3 - t2), records


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--arff", type=Path,
                        default=Path(tempfile.gettempdir()) / "foldstream-covtype.arff")
    parser.add_argument("--set", action="append", default=[], dest="sets")
    args = parser.parse_args(argv)
    if not args.arff.exists():
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_vs_moa import write_covtype_arff

        write_covtype_arff(args.arff, None)
    source = f"source={{kind: file, path: {args.arff}, label: Cover_Type, limit: {args.rows}}}"
    config = load_config(None, [source] + SETTINGS + args.sets)
    plans = make_plans(config)
    head = StreamStages(plans, "").head
    fold_batches = []
    for item in open_source(config):
        cut, _ = head.take(item)
        fold_batches.extend(cut or [])
    fold_batches.extend(head.flush(final=True))
    replay(plans, fold_batches)  # compiled loops loaded, caches warm
    best = None
    for _ in range(args.repeat):
        times, records = replay(plans, fold_batches)
        best = times if best is None else StageTimes(*map(min, best, times))
    n = len(fold_batches)
    digest = hashlib.sha256(json.dumps(records).encode()).hexdigest()[:16]
    print(f"{n} fold batches of {args.rows} examples; us per fold batch, best of {args.repeat}: "
          f"learners {1e6 * best.learners / n:.1f}, evaluators {1e6 * best.evaluators / n:.1f}, "
          f"aggregator {1e6 * best.aggregator / n:.1f}; {len(records)} records, digest {digest}")


if __name__ == "__main__":
    main()

"""River's learners on unpickled feature dicts as a Flink learner worker receives them, with
and without :class:`~foldstream.job.engines.flink.job.FeatureNames` sharing their names,
interleaved in one process.

    .venv/bin/python bench/bench_feature_names.py [--examples 5000] [--rounds 16]

The embedded default's three learners are trained on the first ``--examples`` examples of
Electricity (the reader's dicts, whose names the learners keep), then each predicts and learns
on them again, ``--rounds`` times, alternating two pickled copies: one as unpickled (equal
names, other string objects), one whose names :meth:`FeatureNames.share_all` gave back the
reader's objects. Both copies are fresh dicts, so only the names' identity differs. The CPU
time of this thread is summed per learner and kind; interleaving spreads the machine's drift
over both kinds.
"""

from __future__ import annotations

import argparse
import pickle
import time

from foldstream.job.config import load_config
from foldstream.job.engines.flink.job import FeatureNames
from foldstream.job.plans import make_plans, open_source


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=16)
    args = parser.parse_args()
    config = load_config(None, [f"source.limit={args.examples}"])
    examples = [(e.x, e.y) for e in open_source(config) if hasattr(e, "x")]
    made, labels = [x for x, _ in examples], [y for _, y in examples]
    names = FeatureNames()
    names.share_all([made])  # the reader's names are the ones the learners keep
    unpickled = pickle.loads(pickle.dumps(made))
    shared = pickle.loads(pickle.dumps(made))
    names.share_all([shared])
    models = {spec.name: spec.build() for spec in make_plans(config).learners}
    for model in models.values():
        for x, y in zip(made, labels):
            model.learn_one(x, y)
    spent: dict[tuple[str, str], float] = {}
    for round_ in range(args.rounds):
        kinds = (("shared", shared), ("unpickled", unpickled))
        for kind, xs in kinds if round_ % 2 else kinds[::-1]:
            for name, model in models.items():
                started = time.thread_time()
                for x, y in zip(xs, labels):
                    model.predict_proba_one(x)
                    model.learn_one(x, y)
                spent[name, kind] = spent.get((name, kind), 0.0) + time.thread_time() - started
    print(f"{'learner':16} {'names shared':>13} {'unpickled':>10} {'unpickled/shared':>17}")
    for name in models:
        a, b = spent[name, "shared"], spent[name, "unpickled"]
        print(f"{name:16} {a:12.2f}s {b:9.2f}s {b / a:16.3f}x")
    a = sum(v for (_, k), v in spent.items() if k == "shared")
    b = sum(v for (_, k), v in spent.items() if k == "unpickled")
    print(f"{'all':16} {a:12.2f}s {b:9.2f}s {b / a:16.3f}x")


if __name__ == "__main__":
    main()

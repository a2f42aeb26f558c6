"""``sink.predictions``: what keeping every prediction costs, and Parquet against gzipped JSON Lines.

    .venv/bin/python bench/bench_predictions.py [--limit N] [--repeat 3]

All of Electricity (or ``--limit`` examples), 10-fold bootstrap, river's ``GaussianNB`` and
``HoeffdingTreeClassifier``, the AUC on (so the class scores are kept and written), through
``run_configuration`` as ``foldstream run`` does: runs without and with ``sink.predictions``
alternate, best CPU time of each. Then the rows of the last run are written again as gzipped
JSON Lines (one object a row), to compare the two formats' bytes and writing time.
"""

from __future__ import annotations

import argparse
import gzip
import json
import tempfile
import time
from pathlib import Path

from foldstream.job.config import load_config
from foldstream.job.runner import run_configuration

ELEC = Path(__file__).resolve().parents[2] / "shared" / "data" / "elec.csv.gz"
if not ELEC.exists():  # a checkout without ../shared: the packaged copy
    ELEC = Path(__file__).resolve().parents[1] / "connectors" / "data" / "elec.csv.gz"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = [f"source.path={ELEC}", *([f"source.limit={args.limit}"] if args.limit else []),
                "learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
                "{name: ht, model: river.tree.HoeffdingTreeClassifier}]",
                "evaluation.mode=bootstrap", "evaluation.folds=10", "evaluation.scores=[auc]",
                f"sink.path={tmp}/metrics.jsonl"]
        parquet = Path(tmp) / "predictions.parquet"
        runs = {"without": base, "with predictions": [*base, f"sink.predictions={parquet}"]}
        best = {name: float("inf") for name in runs}
        for round_ in range(args.repeat):
            line = []
            for name, overrides in runs.items():
                cpu = time.process_time()
                run_configuration(load_config(None, overrides))
                cpu = time.process_time() - cpu
                best[name] = min(best[name], cpu)
                line.append(f"{name} {cpu:.2f} s")
            print(f"round {round_ + 1}: " + ", ".join(line), flush=True)
        import pandas as pd

        table = pd.read_parquet(parquet)
        rows = len(table)
        extra = best["with predictions"] - best["without"]
        print(f"{rows:,} rows; CPU without {best['without']:.2f} s, with predictions "
              f"{best['with predictions']:.2f} s: {extra:+.2f} s, "
              f"{1e6 * extra / rows:+.2f} us per row (example and fold)")
        records = table.to_dict("records")
        for record in records:
            for key, value in record.items():
                if hasattr(value, "tolist"):
                    record[key] = value.tolist()
        jsonl = Path(tmp) / "predictions.jsonl.gz"
        cpu = time.process_time()
        with gzip.open(jsonl, "wt") as fh:
            for record in records:
                fh.write(json.dumps(record) + "\n")
        cpu = time.process_time() - cpu
        print(f"Parquet (zstd): {parquet.stat().st_size / 2**20:.2f} MiB; gzipped JSON Lines: "
              f"{jsonl.stat().st_size / 2**20:.2f} MiB, {1e6 * cpu / rows:.2f} us per row to "
              f"write (the rows already made)")
        cpu = time.process_time()
        pd.read_parquet(parquet)
        read_parquet = time.process_time() - cpu
        cpu = time.process_time()
        pd.read_json(jsonl, lines=True)
        read_jsonl = time.process_time() - cpu
        print(f"read back into pandas: Parquet {read_parquet:.2f} s, JSON Lines {read_jsonl:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

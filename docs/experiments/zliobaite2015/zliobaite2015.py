"""Žliobaitė, Bifet, Read, Pfahringer and Holmes (Machine Learning 2015), rerun with foldstream.

* **Table 2**: the accuracy of the majority class and of the persistent (no-change) classifier
  on Electricity and Covertype, from the labels alone (the whole files).
* **Original against shuffled** (§6.5): accuracy, kappa, kappa_per and kappa_plus of the
  persistent and majority classifiers, naive Bayes and the Hoeffding tree, and of the last two
  temporally augmented (``lags: 1``, docs/method.md §9), on each data set in its order and
  shuffled (one fixed permutation); single mode, a cumulative window (the whole stream).
* **Gains of temporal augmentation** (their Figures 3 and 5 in words): augmented minus plain.

``python zliobaite2015.py run`` writes ``results.json``; ``python zliobaite2015.py draw`` writes
``tables.md`` and ``gains.png`` from it.
"""

from __future__ import annotations

import csv
import gzip
import json
import random
import sys
import time
from pathlib import Path

import foldstream
from foldstream.connectors.datasets import dataset_path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"
ROOT = HERE.parent.parent.parent
DATA = {"electricity": ROOT / "connectors" / "data" / "elec.csv.gz", "covertype": None}
LIMIT = {"electricity": None, "covertype": 20_000}  # examples evaluated (Covertype: its first)
LEARNERS = {
    "persistent": {"model": "river.dummy.NoChangeClassifier"},
    "majority": {"model": "river.dummy.PriorClassifier"},
    "nb": {"model": "river.naive_bayes.GaussianNB"},
    "ht": {"model": "river.tree.HoeffdingTreeClassifier"},
    "nb_lag": {"model": "river.naive_bayes.GaussianNB", "lags": 1},
    "ht_lag": {"model": "river.tree.HoeffdingTreeClassifier", "lags": 1},
}
MEASURES = ("accuracy", "kappa", "kappa_per", "kappa_plus")
PAPER_TABLE2 = {"electricity": (0.58, 0.85), "covertype": (0.49, 0.95)}  # P(maj), P(per)
SHUFFLE_SEED = 1


def rows(name: str) -> list[tuple[dict, str]]:
    path = DATA[name] or dataset_path("dataset://covtype")
    with gzip.open(path, "rt") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        return [({k: float(v) for k, v in zip(header[:-1], r[:-1])}, r[-1]) for r in reader]


def label_only(labels: list[str]) -> tuple[float, float]:
    """P(majority) (the most frequent class over the whole file) and P(persistent) (the
    previous label equals this one; the first example has none and counts as wrong)."""
    counts: dict[str, int] = {}
    for y in labels:
        counts[y] = counts.get(y, 0) + 1
    same = sum(a == b for a, b in zip(labels, labels[1:]))
    return max(counts.values()) / len(labels), same / len(labels)


def run() -> dict:
    out: dict = {"limit": LIMIT, "shuffle_seed": SHUFFLE_SEED, "table2": {}, "runs": {},
                 "cpu_s": {}}
    for name in DATA:
        data = rows(name)
        out["table2"][name] = label_only([y for _, y in data])
        data = data[:LIMIT[name]] if LIMIT[name] else data
        shuffled = list(data)
        random.Random(SHUFFLE_SEED).shuffle(shuffled)
        for order, items in (("original", data), ("shuffled", shuffled)):
            started = time.process_time()
            results = foldstream.evaluate(items, LEARNERS, stream=name, mode="single",
                                          window="cumulative", report_every=10**9,
                                          alarms={"page_hinkley": None, "adwin": False},
                                          verdicts={"enabled": False}, compare=["accuracy"])
            last = {r["learner"]: {m: r["values"][m]["mean"] for m in MEASURES}
                    for r in results.records if r["type"] == "measures"}
            out["runs"][f"{name} {order}"] = {"examples": len(items), "measures": last}
            out["cpu_s"][f"{name} {order}"] = round(time.process_time() - started, 1)
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    return out


def _f(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def draw(out: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = ["# Žliobaitė et al. 2015 rerun with foldstream: the numbers", "",
             "Written by `zliobaite2015.py draw` from `results.json`.", "",
             "## Table 2: accuracy of the label-only classifiers (whole files)", "",
             "| data set | P(majority) ours | paper | P(persistent) ours | paper |",
             "|---|---|---|---|---|"]
    for name, (maj, per) in out["table2"].items():
        pm, pp = PAPER_TABLE2[name]
        lines.append(f"| {name} | {maj:.4f} | {pm:.2f} | {per:.4f} | {pp:.2f} |")
    lines += ["", "## Original order against shuffled (§6.5)", "",
              "Single mode, cumulative window: each value is over the whole run "
              "(Electricity: all 45,312 examples; Covertype: its first "
              f"{out['limit']['covertype']:,}).", ""]
    for run, data in out["runs"].items():
        lines += [f"### {run} ({data['examples']:,} examples)", "",
                  "| learner | " + " | ".join(MEASURES) + " |",
                  "|---|" + "---|" * len(MEASURES)]
        for learner, values in data["measures"].items():
            lines.append(f"| {learner} | " + " | ".join(_f(values[m]) for m in MEASURES) + " |")
        lines.append("")
    lines += ["## Gains of temporal augmentation (accuracy, augmented minus plain)", "",
              "| run | nb_lag - nb | ht_lag - ht |", "|---|---|---|"]
    gains = {}
    for run, data in out["runs"].items():
        m = data["measures"]
        gains[run] = (m["nb_lag"]["accuracy"] - m["nb"]["accuracy"],
                      m["ht_lag"]["accuracy"] - m["ht"]["accuracy"])
        lines.append(f"| {run} | {gains[run][0]:+.3f} | {gains[run][1]:+.3f} |")
    lines += ["", "## CPU time of each run (s)", "", "| run | CPU s |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in out["cpu_s"].items()]
    (HERE / "tables.md").write_text("\n".join(lines) + "\n")

    fig, ax = plt.subplots(figsize=(7, 3.8))
    names = list(gains)
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], [gains[n][0] for n in names], 0.4, label="naive Bayes")
    ax.bar([x + 0.2 for x in xs], [gains[n][1] for n in names], 0.4, label="Hoeffding tree")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(list(xs), names, fontsize=8)
    ax.set(ylabel="accuracy gain of lags: 1",
           title="Temporal augmentation (Žliobaitė et al. 2015, §5): gain per run")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "gains.png", dpi=90)
    plt.close("all")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "draw"
    draw(run() if what == "run" else json.loads(RESULTS.read_text()))

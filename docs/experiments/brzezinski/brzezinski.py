"""Brzezinski et al. (TNNLS 2020), rerun with foldstream: Tables III and IV, Figures 4-5.

* **Table III**: the prequential (cumulative) value at the end of the stream of the paper's
  eight measures for river's Hoeffding tree on river's Agrawal generator (function 0, MOA's
  default function 1; perturbation 0.05, MOA's default) at the paper's five class ratios
  positives:negatives 1:15, 1:4, 1:1, 4:1, 15:1 (``source.class_ratio``, docs/method.md §19),
  the positive class Agrawal's class 0 (MOA's first class, ``groupA``).
* **Table IV**: the same runs with Page-Hinkley (MOA's defaults, which are foldstream's,
  ``mode: down``: a measure falls when the learner gets worse) watching each measure over a
  sliding window of 100 examples (``evaluation.alarms.quantity``, docs/method.md §7). The
  ratio is constant and ``source.drifts: []``, so every alarm is false.
* **Figures 4-5**: a Hoeffding tree on SEA whose class ratio changes 1:15 / 1:4 / 1:1
  (Figure 4) and 15:1 / 4:1 / 1:1 (Figure 5); the measures over a sliding window.

Every run is the in-process engine, single mode (one model, as the paper's). ``python
brzezinski.py run [PART ...]`` writes ``results.json`` (PART: agrawal, sea; both by default); ``python brzezinski.py draw`` writes ``tables.md``
and the PNG figures from it.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import foldstream

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"

MEASURES = ("accuracy", "balanced_accuracy", "kappa", "geometric_mean", "f1", "precision",
            "recall", "mcc")
PAPER_NAMES = {"accuracy": "Accuracy", "balanced_accuracy": "Bal. acc.", "kappa": "Kappa",
               "geometric_mean": "G-mean", "f1": "F1-score", "precision": "Precision",
               "recall": "Recall", "mcc": "MCC"}
RATIOS = ((1, 15), (1, 4), (1, 1), (4, 1), (15, 1))  # positives : negatives
AGRAWAL_N = 10_000    # examples a run (the paper does not state its streams' length)
SEEDS_III = tuple(range(1, 13))     # Table III (the paper: 100)
SEEDS_IV = (1, 2, 3, 4)       # Table IV: one run per measure watched (the paper: 100)
SEA_N, SEA_CHANGES, SEA_WINDOW, SEA_EVERY = 50_000, (30_001, 40_001), 1_000, 250
QUIET = {"verdicts": {"enabled": False}, "compare": ["accuracy"]}

PAPER_III = {  # mean (std) over 100 seeds, columns as RATIOS
    "accuracy": ["0.93(.01)", "0.86(.03)", "0.87(.03)", "0.93(.02)", "0.97(.02)"],
    "balanced_accuracy": ["0.53(.08)", "0.77(.08)", "0.87(.03)", "0.83(.04)", "0.78(.10)"],
    "kappa": ["0.09(.18)", "0.53(.13)", "0.74(.06)", "0.73(.07)", "0.66(.18)"],
    "geometric_mean": ["0.14(.22)", "0.74(.13)", "0.87(.03)", "0.81(.05)", "0.73(.14)"],
    "f1": ["0.09(.19)", "0.62(.13)", "0.88(.03)", "0.96(.01)", "0.98(.01)"],
    "precision": ["0.28(.37)", "0.66(.09)", "0.83(.04)", "0.92(.02)", "0.97(.01)"],
    "recall": ["0.07(.16)", "0.63(.17)", "0.94(.04)", "0.99(.03)", "1.00(.01)"],
    "mcc": ["0.11(.19)", "0.54(.11)", "0.75(.06)", "0.75(.07)", "0.70(.15)"],
}
PAPER_IV = {  # ratio of false alarms within 100 runs
    "accuracy": [0.00, 0.12, 0.27, 0.03, 0.00],
    "balanced_accuracy": [0.09, 0.11, 0.26, 0.27, 0.25],
    "kappa": [0.68, 0.44, 0.50, 0.43, 0.49],
    "geometric_mean": [0.91, 0.59, 0.24, 0.33, 0.47],
    "f1": [0.82, 0.50, 0.24, 0.01, 0.00],
    "precision": [0.94, 0.80, 0.50, 0.11, 0.00],
    "recall": [0.70, 0.44, 0.27, 0.04, 0.01],
    "mcc": [0.76, 0.49, 0.48, 0.40, 0.50],
}


def _label(ratio) -> str:
    return f"{ratio[0]}:{ratio[1]}"


def _learners() -> dict:
    return {"ht": {"model": "river.tree.HoeffdingTreeClassifier"}}


def agrawal_run(ratio, seed: int, quantity: str) -> dict:
    """One Agrawal run at a constant class ratio; the final measures and the alarms of
    Page-Hinkley watching ``quantity`` over a sliding window of 100."""
    source = {"kind": "generator", "model": "river.datasets.synth.Agrawal", "seed": seed,
              "params": {"classification_function": 0, "perturbation": 0.05},
              "class_ratio": {"classes": [0, 1], "ratios": [list(ratio)]}, "drifts": []}
    started = time.process_time()
    results = foldstream.evaluate(source, _learners(), limit=AGRAWAL_N, mode="single",
                                  window="cumulative", report_every=AGRAWAL_N, positive_class=0,
                                  alarms={"page_hinkley": {"mode": "down"}, "adwin": False,
                                          "quantity": quantity, "window": 100}, **QUIET)
    _checked(results)
    last = [r for r in results.records if r["type"] == "measures"][-1]
    alarms = [r["position"] for r in results.records if r["type"] == "alarm"]
    return {"ratio": _label(ratio), "seed": seed, "quantity": quantity,
            "measures": {m: last["values"][m]["mean"] for m in MEASURES}, "alarms": alarms,
            "cpu_s": round(time.process_time() - started, 2)}


def sea_run(ratios) -> dict:
    """Figures 4-5: SEA (variant 0, 10% noise, MOA's default) whose class ratio changes."""
    source = {"kind": "generator", "model": "river.datasets.synth.SEA", "seed": 1,
              "params": {"variant": 0, "noise": 0.1},
              "class_ratio": {"classes": [True, False], "ratios": [list(r) for r in ratios],
                              "positions": list(SEA_CHANGES)}}
    started = time.process_time()
    results = foldstream.evaluate(source, _learners(), limit=SEA_N, mode="single",
                                  window={"kind": "sliding", "size": SEA_WINDOW},
                                  report_every=SEA_EVERY, positive_class=True,
                                  alarms={"page_hinkley": None, "adwin": False}, **QUIET)
    rows = [r for r in _checked(results).records if r["type"] == "measures"]
    return {"ratios": [_label(r) for r in ratios],
            "series": {m: [[r["position"], r["values"][m]["mean"]] for r in rows]
                       for m in MEASURES},
            "cpu_s": round(time.process_time() - started, 2)}


def _checked(results):
    """``results``, unless a learner failed or the source rejected something."""
    bad = [r for r in results.records if r["type"] in ("learner_error", "rejected")]
    if bad:
        raise SystemExit(f"a run failed: {bad[0]}")
    return results


PARTS = ("agrawal", "sea")


def run(parts=PARTS, workers: int = 2) -> dict:
    """The runs of ``parts``, two at a time; the other part's, and the Agrawal runs already in
    ``results.json`` at the same stream length, are kept from it."""
    out: dict = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"sizes": {}}
    jobs = [(ratio, seed, quantity) for seed in SEEDS_IV for ratio in RATIOS
            for quantity in MEASURES]
    jobs += [(ratio, seed, "loss") for seed in SEEDS_III if seed not in SEEDS_IV
             for ratio in RATIOS]
    with ProcessPoolExecutor(workers) as pool:
        if "agrawal" in parts:
            kept = [r for r in out.get("agrawal", [])
                    if out["sizes"].get("agrawal_examples") == AGRAWAL_N]
            done = {(r["ratio"], r["seed"], r["quantity"]) for r in kept}
            jobs = [j for j in jobs if (_label(j[0]), j[1], j[2]) not in done]
            out["agrawal"] = kept + list(pool.map(agrawal_run, *zip(*jobs))) if jobs else kept
            out["sizes"].update(agrawal_examples=AGRAWAL_N, seeds_table3=list(SEEDS_III),
                                seeds_table4=list(SEEDS_IV))
        if "sea" in parts:
            out["sea"] = list(pool.map(sea_run, [((1, 15), (1, 4), (1, 1)),
                                                 ((15, 1), (4, 1), (1, 1))]))
            out["sizes"].update(sea_examples=SEA_N, sea_changes=list(SEA_CHANGES),
                                sea_window=SEA_WINDOW)
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    return out


def table3(out: dict) -> dict:
    """Per measure and ratio: (mean, std) of the final value over the Table III seeds."""
    cells = {}
    for m in MEASURES:
        for ratio in RATIOS:
            seen = {}
            for r in out["agrawal"]:
                if r["ratio"] == _label(ratio) and r["seed"] in out["sizes"]["seeds_table3"]:
                    seen[r["seed"]] = r["measures"][m]
            values = [v for v in seen.values() if v is not None]
            cells[m, _label(ratio)] = (statistics.fmean(values) if values else None,
                                       statistics.stdev(values) if len(values) > 1 else None,
                                       len(seen) - len(values))
    return cells


def table4(out: dict) -> dict:
    """Per measure and ratio: (runs with a false alarm / runs, false alarms per run)."""
    cells = {}
    for m in MEASURES:
        for ratio in RATIOS:
            runs = [r for r in out["agrawal"] if r["ratio"] == _label(ratio) and r["quantity"] == m]
            cells[m, _label(ratio)] = (sum(bool(r["alarms"]) for r in runs) / len(runs),
                                       statistics.fmean(len(r["alarms"]) for r in runs))
    return cells


def draw(out: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for number, data in zip((4, 5), out["sea"]):
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for m in MEASURES:
            xs, ys = zip(*[(p, float("nan") if v is None else v) for p, v in data["series"][m]])
            ax.plot(xs, ys, label=PAPER_NAMES[m], lw=1.2)
        for c in out["sizes"]["sea_changes"]:
            ax.axvline(c, ls="--", color="grey", lw=0.8)
        ax.set(xlabel="examples", ylabel=f"measure (sliding window of {out['sizes']['sea_window']})",
               ylim=(-0.05, 1.05),
               title=f"Brzezinski et al., Figure {number}: Hoeffding tree on SEA, class ratio "
                     + " / ".join(data["ratios"]) + " (foldstream)")
        ax.title.set_fontsize(9)
        ax.legend(fontsize=7, ncol=4, loc="lower right")
        fig.tight_layout()
        fig.savefig(HERE / f"figure{number}.png", dpi=90)
    plt.close("all")

    sizes = out["sizes"]
    head = "| measure | " + " | ".join(_label(r) for r in RATIOS) + " |"
    rule = "|---|" + "---|" * len(RATIOS)
    lines = ["# Brzezinski et al. rerun with foldstream: the numbers", "",
             "Written by `brzezinski.py draw` from `results.json`.", "",
             "## Table III: mean measure value (std), ours / the paper's", "",
             f"Hoeffding tree on Agrawal, {sizes['agrawal_examples']:,} examples a run, "
             f"{len(sizes['seeds_table3'])} seeds (the paper: 100); the prequential value over "
             "the whole stream. Ratio: positives:negatives.", "", head, rule]
    t3 = table3(out)
    for m in MEASURES:
        cells = []
        for i, ratio in enumerate(RATIOS):
            mean, std, undefined = t3[m, _label(ratio)]
            ours = "undefined" if mean is None else f"{mean:.2f}" + (
                f"({std:.2f})" if std is not None else "")
            if undefined:
                ours += f" [{undefined} undefined]"
            cells.append(f"{ours} / {PAPER_III[m][i]}")
        lines.append(f"| {PAPER_NAMES[m]} | " + " | ".join(cells) + " |")
    lines += ["", "## Table IV: Page-Hinkley false alarms per measure", "",
              f"Page-Hinkley (MOA's defaults: delta 0.005, lambda 50, alpha 0.9999, 30 values "
              f"first; `mode: down`) on each measure over a sliding window of 100; "
              f"{len(sizes['seeds_table4'])} runs a cell (the paper: 100), constant ratio, "
              "`source.drifts: []`. Each cell: runs with at least one alarm / runs "
              "(alarms per run) / the paper's ratio.", "", head, rule]
    t4 = table4(out)
    for m in MEASURES:
        cells = [f"{t4[m, _label(r)][0]:.2f} ({t4[m, _label(r)][1]:.1f}) / {PAPER_IV[m][i]:.2f}"
                 for i, r in enumerate(RATIOS)]
        lines.append(f"| {PAPER_NAMES[m]} | " + " | ".join(cells) + " |")
    cpu_agrawal = sum(r["cpu_s"] for r in out["agrawal"])
    cpu_sea = sum(r["cpu_s"] for r in out["sea"])
    lines += ["", "## CPU time", "",
              f"{len(out['agrawal'])} Agrawal runs: {cpu_agrawal:.0f} CPU-s in all "
              f"({cpu_agrawal / len(out['agrawal']):.1f} a run); the two SEA runs: "
              f"{cpu_sea:.0f} CPU-s."]
    (HERE / "tables.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "draw"
    draw(run(sys.argv[2:] or PARTS) if what == "run" else json.loads(RESULTS.read_text()))

"""Žliobaitė, Bifet, Read, Pfahringer and Holmes (Machine Learning 2015), rerun with foldstream.

* **Table 2**: the accuracy of the majority class and of the persistent (no-change) classifier
  on Electricity and Covertype, from the labels alone (the whole files).
* **Original against shuffled** (§6.5): accuracy, kappa, kappa_per and kappa_plus of the
  persistent and majority classifiers, naive Bayes and the Hoeffding tree, and of the last two
  temporally augmented (``lags: 1``, docs/method.md §9), on each data set in its order and
  shuffled (one fixed permutation); single mode, a cumulative window (the whole stream).
* **Gains of temporal augmentation** (their Figures 3 and 5 in words): augmented minus plain.
* **The Temporal Correction classifier** (§3.1, their Figure 3): naive Bayes and the Hoeffding
  tree wrapped in ``foldstream.operators.learners.temporal.TemporalCorrectionClassifier``
  (``alpha`` of their §6.3), in the same runs' design (``run tc`` adds their rows).
* **Figure 7** (§6.9): naive Bayes that relearns at DDM's drift alarms, and at random alarms of
  probability ``p`` after DDM's warm-up of 30 (``RandomAlarms``), on the original data, on a
  copy keeping the label order with each class's observations permuted ("temporal") and on the
  shuffled copy (``run fig7``).

``python zliobaite2015.py run [all|tc|fig7]`` writes ``results.json``; ``python
zliobaite2015.py draw`` writes ``tables.md``, ``gains.png`` and ``figure7.png`` from it.
"""

from __future__ import annotations

import csv
import gzip
import itertools
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
TC = "foldstream.operators.learners.temporal.TemporalCorrectionClassifier"
ALPHA = {"electricity": 0.001, "covertype": 0.0001}  # their §6.3: the moving averages' rate
BASES = {"nb": "river.naive_bayes.GaussianNB", "ht": "river.tree.HoeffdingTreeClassifier"}


def tc_learners(name: str) -> dict:
    """The Temporal Correction classifier around naive Bayes and the tree; ``lags: 1`` gives
    it the stream's previous label (and the wrapper hides it from the wrapped model)."""
    return {f"{base}_tc": {"model": TC, "params": {"model": {"model": path},
                                                   "alpha": ALPHA[name]}, "lags": 1}
            for base, path in BASES.items()}


FIG7_P = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0)  # random alarms' probability
# Figure 7's rows and probabilities per data set: Covertype's naive Bayes (54 features) costs
# about three times Electricity's per example, so it runs on fewer rows and a coarser grid.
FIG7_LIMIT = {"electricity": None, "covertype": 10_000}
FIG7_GRID = {"electricity": FIG7_P, "covertype": (1e-4, 1e-3, 1e-2, 0.1, 1.0)}
FIG7_VERSIONS = ("original", "temporal", "shuffled")
WARM_START = 30  # DDM's warm-up, kept by the random detector (their §6.9)


def rows(name: str, limit: int | None = None) -> list[tuple[dict, str]]:
    """The file's rows as (features, label), its first ``limit`` only when given."""
    path = DATA[name] or dataset_path("dataset://covtype")
    with gzip.open(path, "rt") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        return [({k: float(v) for k, v in zip(header[:-1], r[:-1])}, r[-1])
                for r in itertools.islice(reader, limit)]


def label_only(labels: list[str]) -> tuple[float, float]:
    """P(majority) (the most frequent class over the whole file) and P(persistent) (the
    previous label equals this one; the first example has none and counts as wrong)."""
    counts: dict[str, int] = {}
    for y in labels:
        counts[y] = counts.get(y, 0) + 1
    same = sum(a == b for a, b in zip(labels, labels[1:]))
    return max(counts.values()) / len(labels), same / len(labels)


def _evaluate(items: list, learners: dict, name: str) -> dict:
    """Each learner's final accuracy, kappa, kappa_per and kappa_plus over the whole run."""
    results = foldstream.evaluate(items, learners, stream=name, mode="single",
                                  window="cumulative", report_every=10**9,
                                  alarms={"page_hinkley": None, "adwin": False},
                                  verdicts={"enabled": False}, compare=["accuracy"])
    return {r["learner"]: {m: r["values"][m]["mean"] for m in MEASURES}
            for r in results.records if r["type"] == "measures"}


def _orders(name: str, whole: bool = True) -> tuple[list, dict[str, list]]:
    """The whole file's rows (``whole``; else the evaluated ones), and the evaluated ones in the
    original order and shuffled."""
    data = rows(name, None if whole else LIMIT[name])
    head = data[:LIMIT[name]] if LIMIT[name] else data
    shuffled = list(head)
    random.Random(SHUFFLE_SEED).shuffle(shuffled)
    return data, {"original": head, "shuffled": shuffled}


def run(what: str = "all", only: str | None = None) -> dict:
    """``all``: every run anew; ``tc``: the Temporal Correction rows added to the runs of
    ``results.json`` (a learner's values do not depend on the others of its run); ``fig7``:
    Figure 7's runs of each data set (or of ``only``), each written to its own
    ``figure7-<data set>.json`` (so that the two can run at once)."""
    if what == "all":
        out: dict = {"limit": LIMIT, "shuffle_seed": SHUFFLE_SEED, "table2": {}, "runs": {},
                     "cpu_s": {}}
    else:
        out = json.loads(RESULTS.read_text())
    for name in DATA if only is None else (only,):
        data, orders = _orders(name, whole=what == "all")
        if what == "all":
            out["table2"][name] = label_only([y for _, y in data])
        if what in ("all", "tc"):
            for order, items in orders.items():
                run_name = f"{name} {order}"
                started = time.process_time()
                learners = {**LEARNERS, **tc_learners(name)} if what == "all" else tc_learners(name)
                measures = _evaluate(items, learners, name)
                if what == "all":
                    out["runs"][run_name] = {"examples": len(items), "measures": measures}
                    out["cpu_s"][run_name] = round(time.process_time() - started, 1)
                else:
                    out["runs"][run_name]["measures"].update(measures)
                    out.setdefault("cpu_s_tc", {})[run_name] = round(
                        time.process_time() - started, 1)
        if what in ("all", "fig7"):
            fig7 = figure7_runs(orders["original"][:FIG7_LIMIT[name]], FIG7_GRID[name])
            (HERE / f"figure7-{name}.json").write_text(json.dumps(fig7, indent=1) + "\n")
    if what != "fig7":
        RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    return out


def figure7_results() -> dict:
    """Figure 7's runs as written, by data set (those run so far)."""
    return {name: json.loads((HERE / f"figure7-{name}.json").read_text())
            for name in DATA if (HERE / f"figure7-{name}.json").exists()}


def temporal_copy(items: list, seed: int = SHUFFLE_SEED) -> list:
    """Their §6.9's second version: the labels in their order, each class's observations
    permuted among that class's positions (no drift of ``P(X | y)``, the same runs)."""
    by_class: dict = {}
    for i, (_, y) in enumerate(items):
        by_class.setdefault(y, []).append(i)
    out = list(items)
    rng = random.Random(seed)
    for positions in by_class.values():
        xs = [items[i][0] for i in positions]
        rng.shuffle(xs)
        for i, x in zip(positions, xs):
            out[i] = (x, items[i][1])
    return out


class _CountingDDM:
    """Builds river's DDM whose drift alarms are counted (the rate random alarms match)."""

    def __new__(cls):
        from river.drift.binary import DDM

        class Counting(DDM):
            alarms = 0

            def update(self, x):
                super().update(x)
                if self.drift_detected:
                    type(self).alarms += 1
        return Counting()


def _prequential(items: list, model) -> float:
    """Test-then-train accuracy over ``items`` (foldstream's single mode with a cumulative
    window; a ``None`` prediction counts as wrong)."""
    right = 0
    for x, y in items:
        right += model.predict_one(x) == y
        model.learn_one(x, y)
    return right / len(items)


def matched_p(alarms: int, n: int, warm_start: int = WARM_START) -> float | None:
    """The alarm probability whose random alarms come at ``alarms`` per ``n`` steps on average:
    the mean gap is ``warm_start - 1 + 1 / p``."""
    if not alarms:
        return None
    gap = n / alarms
    return 1.0 if gap <= warm_start else 1.0 / (gap - warm_start + 1)


def figure7_runs(original: list, grid: tuple[float, ...] = FIG7_P) -> dict:
    """Figure 7 on one data set: per version, the accuracy of naive Bayes, of naive Bayes with
    DDM (MOA's DDM classifier: a new model trained from the warning on, river's
    ``DriftRetrainingClassifier``), DDM's alarms, and naive Bayes reset at random alarms of each
    probability in ``grid`` and of the probability matching DDM's rate; the persistent
    classifier's accuracy."""
    from river import drift, dummy, naive_bayes

    from foldstream.operators.learners.temporal import RandomAlarms

    shuffled = list(original)
    random.Random(SHUFFLE_SEED).shuffle(shuffled)
    versions = {"original": original, "temporal": temporal_copy(original),
                "shuffled": shuffled}
    out = {}
    for version, items in versions.items():
        started = time.process_time()
        n = len(items)
        ddm = _CountingDDM()
        row = {"examples": n,
               "persistent": _prequential(items, dummy.NoChangeClassifier()),
               "nb": _prequential(items, naive_bayes.GaussianNB()),
               "ddm": _prequential(items, drift.DriftRetrainingClassifier(
                   naive_bayes.GaussianNB(), ddm)),
               "ddm_alarms": type(ddm).alarms, "random": {}}
        p_ddm = matched_p(row["ddm_alarms"], n)
        row["p_matched"] = p_ddm
        row["grid"] = list(grid)
        for p in grid + ((p_ddm,) if p_ddm else ()):
            model = drift.DriftRetrainingClassifier(
                naive_bayes.GaussianNB(), RandomAlarms(p=p, warm_start=WARM_START, seed=1),
                train_in_background=False)
            row["random"][repr(p)] = {"accuracy": _prequential(items, model),
                                      "alarms": model.drift_detector.alarms}
        row["cpu_s"] = round(time.process_time() - started, 1)
        out[version] = row
        print(version, {k: v for k, v in row.items() if k != "random"}, flush=True)
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
    lines += ["## Gains of the temporal classifiers (accuracy, wrapped minus plain)", "",
              "`_lag`: temporally augmented (`lags: 1`, §3.2); `_tc`: Temporal Correction "
              "(§3.1, `alpha` 0.001 on Electricity, 0.0001 on Covertype).", "",
              "| run | nb_lag - nb | ht_lag - ht | nb_tc - nb | ht_tc - ht |",
              "|---|---|---|---|---|"]
    gains = {}
    for run, data in out["runs"].items():
        m = data["measures"]
        gains[run] = tuple(m[f"{base}{kind}"]["accuracy"] - m[base]["accuracy"]
                           if f"{base}{kind}" in m else float("nan")
                           for kind in ("_lag", "_tc") for base in ("nb", "ht"))
        lines.append(f"| {run} | " + " | ".join(f"{g:+.3f}" for g in gains[run]) + " |")
    lines += ["", "## CPU time of each run (s)", "", "| run | CPU s |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in out["cpu_s"].items()]
    if "cpu_s_tc" in out:
        lines += ["", "The Temporal Correction rows, run apart (`run tc`; a learner's values do "
                  "not depend on the others of its run):", "", "| run | CPU s |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in out["cpu_s_tc"].items()]
    fig7 = figure7_results()
    if fig7:
        lines += figure7_table(fig7)
    (HERE / "tables.md").write_text("\n".join(lines) + "\n")

    fig, ax = plt.subplots(figsize=(8, 4))
    names = list(gains)
    xs = range(len(names))
    labels = ("naive Bayes, augmented", "Hoeffding tree, augmented",
              "naive Bayes, Temporal Correction", "Hoeffding tree, Temporal Correction")
    for j, label in enumerate(labels):
        ax.bar([x - 0.3 + 0.2 * j for x in xs], [gains[n][j] for n in names], 0.2, label=label)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(list(xs), names, fontsize=8)
    ax.set(ylabel="accuracy gain over the plain learner",
           title="Temporal classifiers (Žliobaitė et al. 2015, §3): gain per run")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(HERE / "gains.png", dpi=90)
    plt.close("all")
    if fig7:
        draw_figure7(fig7)


def figure7_table(fig7: dict) -> list[str]:
    """Figure 7's numbers: per data set and version, the accuracies and alarm counts."""
    lines = ["", "## Figure 7: resets at DDM's alarms against resets at random (§6.9)", "",
             "Naive Bayes (river's `GaussianNB`), test-then-train over the whole run "
             "(Electricity: all of it; Covertype: its first "
             f"{FIG7_LIMIT['covertype']:,} rows). `ddm`: river's `DriftRetrainingClassifier` with "
             "DDM (a new model trained from the warning on, as MOA's DDM classifier); "
             "`random p`: the model reset at each alarm of `RandomAlarms(p, warm_start=30)`; "
             "`matched`: the `p` whose mean rate of alarms equals DDM's here. Alarms in "
             "brackets.", ""]
    for name, versions in fig7.items():
        ps = [repr(p) for p in next(iter(versions.values())).get("grid", FIG7_P)]
        lines += [f"### {name} ({next(iter(versions.values()))['examples']:,} examples)", "",
                  "| version | persistent | nb | ddm | matched p | random at matched p | "
                  + " | ".join(f"random {p}" for p in ps) + " | CPU s |",
                  "|---|---|---|---|---|---|" + "---|" * len(ps) + "---|"]
        for version, row in versions.items():
            rnd = row["random"]
            matched = row["p_matched"]
            at = (f"{rnd[repr(matched)]['accuracy']:.3f} ({rnd[repr(matched)]['alarms']})"
                  if matched else "n/a")
            lines.append(
                f"| {version} | {row['persistent']:.3f} | {row['nb']:.3f} | {row['ddm']:.3f} "
                f"({row['ddm_alarms']}) | {'n/a' if matched is None else f'{matched:.2g}'} | "
                f"{at} | " + " | ".join(f"{rnd[p]['accuracy']:.3f} ({rnd[p]['alarms']})"
                                        for p in ps) + f" | {row['cpu_s']} |")
        lines.append("")
    return lines


def draw_figure7(fig7: dict) -> None:
    """figure7.png: accuracy against the probability of a random alarm (log scale), one panel
    per data set and version, with naive Bayes, DDM and the persistent classifier as lines and
    the random resets at DDM's rate marked."""
    import matplotlib.pyplot as plt

    names = list(fig7)
    fig, axes = plt.subplots(len(names), len(FIG7_VERSIONS), figsize=(11, 3.3 * len(names)),
                             squeeze=False)
    for i, name in enumerate(names):
        for j, version in enumerate(FIG7_VERSIONS):
            ax, row = axes[i][j], fig7[name][version]
            grid = row.get("grid", FIG7_P)
            ax.plot(grid, [row["random"][repr(p)]["accuracy"] for p in grid], "o-",
                    color="tab:red", label="NB, random resets")
            ax.axhline(row["nb"], color="tab:blue", label="NB")
            ax.axhline(row["ddm"], color="tab:green", ls="--", label="DDM (NB)")
            ax.axhline(row["persistent"], color="black", ls=":", label="persistent")
            if row["p_matched"]:
                ax.plot([row["p_matched"]], [row["random"][repr(row["p_matched"])]["accuracy"]],
                        "s", color="tab:green", mfc="white", ms=8,
                        label="random at DDM's rate")
            ax.set_xscale("log")
            ax.set_title(f"{name} {version} ({row['examples']:,} examples)", fontsize=9)
            if i == len(names) - 1:
                ax.set_xlabel("probability of a random alarm per step")
            if j == 0:
                ax.set_ylabel("accuracy")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Žliobaitė et al. 2015, Figure 7: false alarms and temporal dependence",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(HERE / "figure7.png", dpi=90)
    plt.close("all")

if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "draw"
    if what == "run":
        run(*sys.argv[2:4])
    draw(json.loads(RESULTS.read_text()))

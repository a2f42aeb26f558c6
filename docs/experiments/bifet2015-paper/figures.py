"""Bifet et al. (KDD 2015), Figures 2, 3 and 4, drawn from foldstream runs.

* **Figure 2**: accuracy, kappa, harmonic accuracy (``harmonic_mean``) and kappa_m of a
  Hoeffding tree (left) and of a majority class over its own sliding window of 1,000
  (:class:`~foldstream.operators.learners.baselines.MajorityWindowClassifier`, right) on Electricity,
  prequential over a sliding window of 1,000.
* **Figure 3**: the Hoeffding tree's accuracy on Electricity over sliding windows of 100,
  1,000 and 10,000 and over ADWIN's window.
* **Figure 4**: held-out evaluation (``evaluation.holdout``, docs/method.md §20) against
  prequential accuracy over ADWIN's window and sliding windows of 100 and 10,000, a Hoeffding
  tree on a generated stationary stream (river's RandomRBF; the paper's is a million examples
  of a stream it does not name; here HOLDOUT_TRAIN examples after a test set of HOLDOUT_TEST).

Single mode (one model, as the paper's figures), river's ``HoeffdingTreeClassifier`` with its
defaults. ``python figures.py run`` writes ``figures.json``; ``python figures.py draw`` the
PNGs from it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from river import tree
from river.datasets import synth

import foldstream
from foldstream.operators.learners.baselines import MajorityWindowClassifier

HERE = Path(__file__).resolve().parent
ELEC = HERE.parent.parent.parent / "connectors" / "data" / "elec.csv.gz"
RESULTS = HERE / "figures.json"
WINDOWS = {"sliding 100": {"kind": "sliding", "size": 100},
           "sliding 1000": {"kind": "sliding", "size": 1000},
           "sliding 10000": {"kind": "sliding", "size": 10000},
           "adwin": {"kind": "adwin"}}
FIG2 = ("accuracy", "kappa", "harmonic_mean", "kappa_m")
HOLDOUT_TRAIN, HOLDOUT_TEST, EVERY = 30_000, 2_000, 1_000
QUIET = {"verdicts": {"enabled": False}, "compare": ["accuracy"],
         "alarms": {"page_hinkley": None, "adwin": False}}


def _series(results, kind: str, learner: str, measure: str) -> list:
    return [[r["position"], r["values"][measure]["mean"]] for r in results.records
            if r["type"] == kind and r["learner"] == learner]


def run() -> dict:
    out: dict = {"electricity": {}, "figure4": {}, "cpu_s": {},
                 "sizes": {"holdout_train": HOLDOUT_TRAIN, "holdout_test": HOLDOUT_TEST,
                           "every": EVERY}}
    learners = {"ht": tree.HoeffdingTreeClassifier(),
                "majority": MajorityWindowClassifier(window_size=1000)}
    for name, window in WINDOWS.items():
        started = time.process_time()
        results = foldstream.evaluate(str(ELEC), learners, mode="single", window=window,
                                      report_every=200, **QUIET)
        out["electricity"][name] = {
            learner: {m: _series(results, "measures", learner, m) for m in FIG2}
            for learner in learners}
        out["cpu_s"][f"electricity {name}"] = round(time.process_time() - started, 1)
    for i, name in enumerate(("adwin", "sliding 100", "sliding 10000")):
        started = time.process_time()
        extra = {"holdout": {"size": HOLDOUT_TEST, "every": EVERY}} if i == 0 else {}
        results = foldstream.evaluate(synth.RandomRBF(seed_model=7, seed_sample=7),
                                      {"ht": tree.HoeffdingTreeClassifier()},
                                      limit=HOLDOUT_TRAIN + (HOLDOUT_TEST if i == 0 else 0),
                                      mode="single", window=WINDOWS[name], report_every=EVERY,
                                      **QUIET, **extra)
        out["figure4"][name] = _series(results, "measures", "ht", "accuracy")
        if i == 0:
            out["figure4"]["holdout"] = _series(results, "holdout", "ht", "accuracy")
        out["cpu_s"][f"randomrbf {name}"] = round(time.process_time() - started, 1)
    RESULTS.write_text(json.dumps(out) + "\n")
    return out


def draw(out: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, learner, title in zip(axes, ("ht", "majority"),
                                  ("Hoeffding tree", "majority class (sliding window 1000)")):
        for measure in FIG2:
            xs, ys = zip(*[(p, v) for p, v in out["electricity"]["sliding 1000"][learner][measure]
                           if v is not None])
            ax.plot(xs, ys, lw=0.8, label=measure)
        ax.set(title=title, xlabel="examples")
    axes[0].set(ylabel="over a sliding window of 1000", ylim=(-1, 1))
    axes[1].legend(loc="lower right")
    fig.suptitle("Bifet et al. 2015, Figure 2: Electricity (foldstream)")
    fig.tight_layout()
    fig.savefig(HERE / "figure2.png", dpi=80)

    fig, ax = plt.subplots(figsize=(9, 4))
    for name in WINDOWS:
        xs, ys = zip(*out["electricity"][name]["ht"]["accuracy"])
        ax.plot(xs, ys, lw=0.8, label=name)
    ax.set(title="Bifet et al. 2015, Figure 3: Hoeffding tree accuracy on Electricity "
                 "(foldstream)", xlabel="examples", ylabel="accuracy", ylim=(0.4, 1))
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "figure3.png", dpi=80)

    fig, ax = plt.subplots(figsize=(9, 4))
    for name, series in out["figure4"].items():
        xs, ys = zip(*series)
        ax.plot(xs, ys, lw=2 if name == "holdout" else 0.9, label=name,
                color="black" if name == "holdout" else None)
    ax.set(title="Bifet et al. 2015, Figure 4: held-out against prequential, RandomRBF "
                 "(foldstream)", xlabel="training examples", ylabel="accuracy")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "figure4.png", dpi=80)
    plt.close("all")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "draw"
    draw(run() if what == "run" else json.loads(RESULTS.read_text()))

"""Gama, Sebastião and Rodrigues (KDD 2009), rerun with foldstream: Figures 2-3, 6-7, Table 2.

* **Figures 2-3**: a Hoeffding tree (VFDT) on Waveform; the prequential error over the whole
  stream, over sliding windows and with fading factors, against the error on a held-out test
  set (``evaluation.holdout``, docs/method.md §20) measured every ``EVERY`` examples.
* **Figures 6-7**: naive Bayes against naive Bayes that relearns after DDM detects a drift
  (river's ``DriftRetrainingClassifier`` with DDM) on SEA concepts with three abrupt drifts; the signed
  McNemar statistic over a sliding window and with a fading factor (the ``mcnemar`` of the
  ``comparison`` records).
* **Table 2**: Page-Hinkley on naive Bayes's error rate (``page_hinkley.series: error_rate``,
  docs/method.md §7) with Gama's delta = 0.001 and lambda = 2.5, for fading factors from
  1 - 10^-4 to 1: the delay from each drift to its first alarm, and the false alarms.

Every run is the in-process engine, single mode (one model, as the paper's), with the sizes
below. ``python gama2009.py run [PART ...]`` writes ``results.json`` (PART: waveform, mcnemar,
page_hinkley; all by default) (the series each figure needs, taken
from the records); ``python gama2009.py draw`` writes ``tables.md`` and the PNG figures from it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from river import drift, naive_bayes, tree
from river.datasets import synth

import foldstream

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"

WAVEFORM_TRAIN, TEST, EVERY = 10_000, 1_000, 250
WINDOWS = {"prequential": "cumulative", "sliding 1000": {"kind": "sliding", "size": 1000},
           "fading 0.975": {"kind": "fading", "alpha": 0.975},
           "fading 0.999": {"kind": "fading", "alpha": 0.999}}
CONCEPT = 10_000  # SEA: examples per concept, three drifts (the paper's: 15,000)
DRIFTS = (CONCEPT, 2 * CONCEPT, 3 * CONCEPT)
FADINGS = (1 - 1e-4, 1 - 1e-5, 1 - 1e-6, 1 - 1e-7, 1 - 1e-8, 1.0)
PH = {"delta": 0.001, "threshold": 2.5, "series": "error_rate", "mode": "up"}
QUIET = {"verdicts": {"enabled": False}, "compare": ["accuracy"]}


def sea(seed: int = 1):
    """SEA's four concepts in turn, CONCEPT examples each, 10% label noise (abrupt drifts)."""
    for variant in range(4):
        yield from synth.SEA(variant=variant, noise=0.1, seed=seed + variant).take(CONCEPT)


def _series(results, kind: str, learner: str, measure: str = "accuracy"):
    rows = [r for r in results.records if r["type"] == kind and r["learner"] == learner]
    return [[r["position"], 1 - r["values"][measure]["mean"]] for r in rows]


def _checked(results):
    """``results``, unless a learner replica failed (its predictions would all score wrong)."""
    errors = [r for r in results.records if r["type"] == "learner_error"]
    if errors:
        raise SystemExit(f"a learner failed: {errors[0]}")
    return results


PARTS = ("waveform", "mcnemar", "page_hinkley")


def run(parts=PARTS) -> dict:
    """The runs of ``parts``; the other parts' series are kept from ``results.json``."""
    out: dict = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"cpu_s": {}}
    out["sizes"] = {"waveform_train": WAVEFORM_TRAIN, "test": TEST, "every": EVERY,
                    "sea_concept": CONCEPT}
    if "waveform" in parts:
        _waveform(out)
    if "mcnemar" in parts:
        _mcnemar(out)
    if "page_hinkley" in parts:
        _page_hinkley(out)
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    return out


def _waveform(out: dict) -> None:
    """Figures 2-3: one run per window; the first also scores the held-out test set. VFDT's
    leaves predict their majority class (``leaf_prediction="mc"``), as the paper's VFDT does."""
    out["waveform"] = {}
    for i, (name, window) in enumerate(WINDOWS.items()):
        started = time.process_time()
        extra = {"holdout": {"size": TEST, "every": EVERY}} if i == 0 else {}
        results = foldstream.evaluate(synth.Waveform(seed=1),
                                      {"vfdt": tree.HoeffdingTreeClassifier(leaf_prediction="mc")},
                                      limit=WAVEFORM_TRAIN + (TEST if i == 0 else 0),
                                      mode="single", window=window, report_every=EVERY,
                                      alarms={"page_hinkley": None, "adwin": False}, **QUIET, **extra)
        out["waveform"][name] = _series(_checked(results), "measures", "vfdt")
        if i == 0:
            out["waveform"]["holdout"] = _series(results, "holdout", "vfdt")
        out["cpu_s"][f"waveform {name}"] = round(time.process_time() - started, 1)


def _mcnemar(out: dict) -> None:
    """Figures 6-7: the signed McNemar statistic of nb against nb that relearns when DDM (Gama
    et al. 2004's drift detection method) detects a drift."""
    learners = {"nb": naive_bayes.GaussianNB(),
                "nb_relearn": drift.DriftRetrainingClassifier(naive_bayes.GaussianNB(),
                                                              drift.binary.DDM())}
    for name, window in (("sliding 1000", {"kind": "sliding", "size": 1000}),
                         ("fading 0.995", {"kind": "fading", "alpha": 0.995})):
        started = time.process_time()
        results = foldstream.evaluate(sea(), learners, stream="sea", mode="single",
                                      window=window, report_every=250,
                                      alarms={"page_hinkley": None, "adwin": False}, **QUIET)
        mcnemar = [[r["position"], r["mcnemar"]["a"], r["mcnemar"]["b"], r["mcnemar"]["statistic"]]
                   for r in _checked(results).records if r["type"] == "comparison"]
        out.setdefault("mcnemar", {})[name] = {
            "pairs": mcnemar, "error": {n: _series(results, "measures", n) for n in learners}}
        out["cpu_s"][f"sea mcnemar {name}"] = round(time.process_time() - started, 1)


def _page_hinkley(out: dict) -> None:
    """Table 2: Page-Hinkley on the error rate, one run per fading factor."""
    for alpha in FADINGS:
        started = time.process_time()
        results = foldstream.evaluate(sea(), {"nb": naive_bayes.GaussianNB()}, stream="sea",
                                      mode="single", window="cumulative", report_every=CONCEPT,
                                      alarms={"page_hinkley": {**PH, "alpha": alpha},
                                              "adwin": False}, **QUIET)
        alarms = [r["position"] for r in _checked(results).records if r["type"] == "alarm"]
        out.setdefault("page_hinkley", {})[repr(alpha)] = alarms
        out["cpu_s"][f"sea page-hinkley {alpha!r}"] = round(time.process_time() - started, 1)


def delays(alarms: list[int]) -> list[tuple[int | None, int]]:
    """Per drift: the delay to its first alarm (None: missed before the next drift or the end)
    and the false alarms since the previous drift (every alarm there but the previous drift's
    detection)."""
    bounds = (0, *DRIFTS, 4 * CONCEPT + 1)
    rows = []
    for i, d in enumerate(DRIFTS):
        before = [a for a in alarms if bounds[i] <= a < d]
        if i > 0 and rows[-1][0] is not None:
            before = before[1:]  # the previous drift's detection
        after = [a for a in alarms if d <= a < bounds[i + 2]]
        rows.append((after[0] - d if after else None, len(before)))
    return rows


PAPER_TABLE2 = {  # 1st to 3rd drift; columns 1 - alpha = 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 0
    "1st drift": ["1045 (1)", "1609", "2039", "2089", "2094", "2095"],
    "2nd drift": ["654 (0)", "2129", "2464", "2507", "2511", "2511"],
    "3rd drift": ["856 (1)", "1357", "1609", "1637", "2511", "1641"],
}


def draw(out: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, series in out["waveform"].items():
        xs, ys = zip(*series)
        ax.plot(xs, ys, label=name, lw=2.5 if name == "holdout" else 1.2,
                color="black" if name == "holdout" else None)
    ax.set(xlabel="training examples", ylabel="error", ylim=(0, 0.8),
           title="Gama et al. 2009, Figures 2-3: VFDT on Waveform (foldstream)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "figure2-3.png", dpi=90)

    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    first = out["mcnemar"]["sliding 1000"]
    for name, series in first["error"].items():
        xs, ys = zip(*series)
        axes[0].plot(xs, ys, label=f"{name} (sliding 1000)")
    axes[0].set(ylabel="error")
    axes[0].legend()
    for ax, (name, data) in zip(axes[1:], out["mcnemar"].items()):
        xs = [p for p, *_ in data["pairs"]]
        signed = [s if (a or 0) >= (b or 0) else -s for _, a, b, s in data["pairs"]]
        ax.plot(xs, signed)
        ax.axhline(3.84, ls=":", color="grey")
        ax.axhline(-3.84, ls=":", color="grey")
        ax.set(ylabel=f"signed McNemar\n({name})")
    for ax in axes:
        for d in DRIFTS:
            ax.axvline(d, ls="--", color="red", lw=0.8)
    axes[-1].set(xlabel="examples")
    axes[0].set(title="Gama et al. 2009, Figures 6-7: nb vs nb relearning on DDM's drift, SEA")
    fig.tight_layout()
    fig.savefig(HERE / "figure6-7.png", dpi=90)
    plt.close("all")

    lines = ["# Gama et al. 2009 rerun with foldstream: the numbers", "",
             "Written by `gama2009.py draw` from `results.json`.", "",
             "## Table 2: Page-Hinkley delay (false alarms) against the fading factor", "",
             "Page-Hinkley on naive Bayes's error rate, delta = 0.001, lambda = 2.5; SEA, three "
             f"abrupt drifts every {CONCEPT:,} examples. Each cell: ours / the paper's.", "",
             "| drift | " + " | ".join(f"1 - alpha = {1 - a:.0e}" if a < 1 else "no fading"
                                      for a in FADINGS) + " |",
             "|---|" + "---|" * len(FADINGS)]
    per_alpha = [delays(out["page_hinkley"][repr(a)]) for a in FADINGS]
    for i, name in enumerate(PAPER_TABLE2):
        cells = []
        for j, rows in enumerate(per_alpha):
            delay, false = rows[i]
            ours = "missed" if delay is None else f"{delay} ({false})" if false else f"{delay}"
            cells.append(f"{ours} / {PAPER_TABLE2[name][j]}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "## Figures 2-3: the last error of each estimate", "",
              "| estimate | error at the end |", "|---|---|"]
    for name, series in out["waveform"].items():
        lines.append(f"| {name} | {series[-1][1]:.4f} |")
    lines += ["", "## CPU time of each run (s)", "", "| run | CPU s |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in out["cpu_s"].items()]
    (HERE / "tables.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "draw"
    draw(run(sys.argv[2:] or PARTS) if what == "run" else json.loads(RESULTS.read_text()))

"""Consensus drift against per-fold alarms (docs/method.md §16), on a known abrupt drift.

river's ``ConceptDriftStream`` joins two SEA concepts (``variant`` 2 then 3, label noise 10%)
with a sudden drift (``width`` 100: river switches concepts within a few hundred examples) at
a known position. A Gaussian naive Bayes learner is
evaluated with the embedded default's validation (bootstrap, 10 folds, an ADWIN window, the
ADWIN and Page-Hinkley alarms), and consensus drift on (``w`` = 1000, ``q`` = 5). For each seed
and detector this counts, before the drift, the false alarms of each fold (per 10,000 examples,
averaged over the folds) and the false drift records (per 10,000 examples), and after the drift
the delay to each fold's first alarm (the median over the folds) and to the first drift record.

Run ``python docs/experiments/consensus.py`` (several minutes on two cores); it writes
``docs/experiments/consensus.md``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from regime import run_config  # noqa: E402  (the one way these experiments run foldstream)
SEEDS = (1, 2, 3, 4, 5)
LENGTH = 30_000
DRIFT = 15_000
WIDTH = 100  # river draws from the new concept with probability 1 / (1 + exp(-4 (t - p) / w)):
# a width of 1 overflows its exp far from p; 100 switches within a few hundred examples
FOLDS = 10


def run(seed: int, out: Path) -> list[dict]:
    """One end-to-end run (``foldstream run``, in-process engine); its records."""
    sea = "river.datasets.synth.SEA"
    config = {
        "source": {"kind": "generator", "model": "river.datasets.synth.ConceptDriftStream",
                   "params": {"stream": {"model": sea, "params": {"variant": 2, "noise": 0.1}},
                              "drift_stream": {"model": sea, "params": {"variant": 3,
                                                                        "noise": 0.1}},
                              "position": DRIFT, "width": WIDTH},
                   "seed": seed, "limit": LENGTH, "stream": "sea"},
        "evaluation": {"mode": "bootstrap", "folds": FOLDS, "seed": seed,
                       "window": {"kind": "adwin", "delta": 0.002}, "report_every": 1000,
                       "alarms": {"consensus": {"window": 1000}}},
        "learners": [{"name": "naive_bayes", "model": "river.naive_bayes.GaussianNB"}],
        "sink": {"kind": "file", "path": str(out)},
        "engine": {"kind": "inprocess"},
    }
    return run_config(config, out)


def measure(records: list[dict], detector: str) -> dict[str, float | None]:
    """False alarms and drifts per 10,000 examples before the drift; delays after it."""
    alarms = [r for r in records if r["type"] == "alarm" and r["detector"] == detector]
    drifts = [r for r in records if r["type"] == "drift" and r["detector"] == detector]
    per_10k = 10_000 / DRIFT
    before = [sum(1 for a in alarms if a["fold"] == f and a["position"] <= DRIFT)
              for f in range(FOLDS)]
    delays = []
    for f in range(FOLDS):
        after = [a["position"] for a in alarms if a["fold"] == f and a["position"] > DRIFT]
        if after:
            delays.append(min(after) - DRIFT)
    first_drift = [d["position"] for d in drifts if d["position"] > DRIFT]
    return {
        "records_per_10k": sum(before) * per_10k,
        "alarms_per_10k": statistics.mean(before) * per_10k,
        "drifts_per_10k": sum(1 for d in drifts if d["position"] <= DRIFT) * per_10k,
        "alarm_delay": statistics.median(delays) if delays else None,
        "first_alarm_delay": min(delays) if delays else None,
        "folds_alarmed": len(delays),
        "drift_delay": min(first_drift) - DRIFT if first_drift else None,
    }


def main(out: Path = HERE / "consensus.md") -> None:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in SEEDS:
            records = run(seed, Path(folder) / f"sea-{seed}.jsonl")
            for detector in ("adwin", "page_hinkley"):
                rows.append((seed, detector, measure(records, detector)))

    def fmt(value):
        return "—" if value is None else f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"

    lines = ["# Consensus drift against per-fold alarms (docs/method.md §16)", "",
             "Written by `python docs/experiments/consensus.py`; the design is its docstring. "
             f"SEA variant 2 then 3 (noise 0.1), sudden drift (width {WIDTH}) centred on position {DRIFT:,}, "
             f"{LENGTH:,} examples, Gaussian naive Bayes, bootstrap with {FOLDS} folds, ADWIN "
             "window, consensus w = 1000, q = 5. Before the drift: false alarms per fold and "
             "false drift records, per 10,000 examples (alarm records: all folds together, as a "
             "reader gets them). After it: the delay to the first alarm of any fold, the median "
             "over the folds of each fold's delay to its first alarm (and how many folds "
             "alarmed), and the delay to the first drift record.", "",
             "| seed | detector | alarm records /10k before | per fold | drift records /10k "
             "before | first alarm delay | median fold's delay | folds alarmed after | drift "
             "delay |",
             "|---|---|---|---|---|---|---|---|---|"]
    keys = ("records_per_10k", "alarms_per_10k", "drifts_per_10k", "first_alarm_delay",
            "alarm_delay")
    for seed, detector, m in rows:
        lines.append(f"| {seed} | {detector} | " + " | ".join(fmt(m[k]) for k in keys)
                     + f" | {m['folds_alarmed']} of {FOLDS} | {fmt(m['drift_delay'])} |")
    for detector in ("adwin", "page_hinkley"):
        ms = [m for _, d, m in rows if d == detector]
        mean = {key: statistics.mean([m[key] for m in ms if m[key] is not None] or [float("nan")])
                for key in (*keys, "drift_delay")}
        lines.append(f"| mean | {detector} | " + " | ".join(fmt(mean[k]) for k in keys)
                     + f" | | {fmt(mean['drift_delay'])} |")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(out.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "consensus.md")

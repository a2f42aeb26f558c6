"""Regime verdicts end to end (docs/method.md §15): the stream verdict stays, the regime turns.

A two-class stream whose labels first come in long runs (each label repeated ``run_length``
times, a fair coin choosing the next run's label) and then, after the change, independently
(label 1 with probability ``p_one``). Against it:

* **change**: ``nochange`` (river's ``NoChangeClassifier``, which predicts the previous label)
  against ``prior`` (``PriorClassifier``, the majority class so far). Before the change the
  persistent learner is almost always right and the prior is right half of the time; after it
  the prior is right ``p_one`` of the time and the persistent learner ``p_one^2 + (1 - p_one)^2``.
  The whole-stream verdict keeps ``nochange`` (its early lead outweighs the rest of the
  stream), while the regime verdict turns to ``prior`` after the change;
* **equal**: two noise filters with the same ``p_noise`` around the persistent learner,
  independent draws (the exact null of docs/method.md §14): the two are equally good at every
  example, while the stream drifts under them. Neither scope may give a verdict.

Run ``python docs/experiments/regime.py`` (a few minutes on two cores); it writes
``docs/experiments/regime.md``. ``tests/test_regime.py`` runs a shorter version.
"""

from __future__ import annotations

import csv
import json
import random
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHANGE = [{"name": "nochange", "model": "river.dummy.NoChangeClassifier"},
          {"name": "prior", "model": "river.dummy.PriorClassifier"}]
EQUAL = [{"name": f"noisy_{i}", "model": "foldstream.operators.learners.noise.NoiseFilter",
          "fold_seeds": True,
          "params": {"model": {"model": "river.dummy.NoChangeClassifier"}, "p_noise": 0.2,
                     "seed": i}} for i in (1, 2)]


def write_stream(path: Path, runs: int = 20_000, iid: int = 20_000, run_length: int = 50,
                 p_one: float = 0.7, seed: int = 1) -> int:
    """Write the CSV stream (a feature ``x`` that carries nothing, the label ``y``); return the
    position of the change (the last example in runs)."""
    rng = random.Random(seed)
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["x", "y"])
        label = 0
        for t in range(runs):
            if t % run_length == 0:
                label = rng.randrange(2)
            out.writerow([round(rng.random(), 6), label])
        for _ in range(iid):
            out.writerow([round(rng.random(), 6), int(rng.random() < p_one)])
    return runs


def run_config(config: dict, out: Path) -> list[dict]:
    """``foldstream run`` of ``config`` (its sink the file ``out``); the records."""
    from foldstream.job import cli

    path = out.with_suffix(".yaml")
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    code = cli.main(["run", str(path), "--quiet"])
    if code != 0:
        raise RuntimeError(f"foldstream run exited {code}")
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def run(stream: Path, learners: list[dict], out: Path, folds: int = 5) -> list[dict]:
    """``foldstream run`` (in-process engine) on ``stream`` with ``learners``; the records."""
    config = {
        "source": {"kind": "file", "path": str(stream), "label": "y", "stream": "runs"},
        "evaluation": {"mode": "bootstrap", "folds": folds, "seed": 1, "report_every": 1000,
                       "window": {"kind": "adwin", "delta": 0.002},
                       "alarms": {"consensus": {"window": 1000}}},
        "learners": learners,
        "sink": {"kind": "file", "path": str(out)},
        "engine": {"kind": "inprocess"},
    }
    return run_config(config, out)


def verdicts(records: list[dict]) -> list[tuple[int, str, str]]:
    """``(position, scope, verdict)`` of every ``verdict`` record, in order."""
    return [(r["position"], r.get("scope", "stream"), r["verdict"])
            for r in records if r["type"] == "verdict"]


def last_live(records: list[dict]) -> dict:
    """The last ``sequential`` object of the accuracy comparison (with ``regime`` inside)."""
    return [r for r in records if r["type"] == "comparison" and r["measure"] == "accuracy"][-1][
        "sequential"]


def main(out: Path = HERE / "regime.md") -> None:
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        stream = folder / "runs.csv"
        change = write_stream(stream)
        cases = {"change": run(stream, CHANGE, folder / "change.jsonl"),
                 "equal": run(stream, EQUAL, folder / "equal.jsonl")}
    lines = ["# Regime verdicts end to end (docs/method.md §15)", "",
             "Written by `python docs/experiments/regime.py`; the design is its docstring.",
             f"The stream: 20,000 labels in runs of 50, then 20,000 iid labels (P(1) = 0.7); "
             f"the change after position {change:,}. Bootstrap, 5 folds, reports every 1,000, "
             "alpha 0.05.", ""]
    for name, records in cases.items():
        live = last_live(records)
        regime = live["regime"]
        a, b = [r for r in records if r["type"] == "comparison"][-1]["a"], \
            [r for r in records if r["type"] == "comparison"][-1]["b"]
        lines += [f"## {name}: {a} vs {b}", "",
                  "| position | scope | verdict |", "|---|---|---|"]
        lines += [f"| {p:,} | {scope} | {v} |" for p, scope, v in verdicts(records)]
        lines += ["", f"At the end ({live['n']:,} examples): whole stream **{live['verdict']}**, "
                      f"interval [{live['lower']:.4f}, {live['upper']:.4f}]; regime **"
                      f"{regime['verdict']}** since position {regime['since']:,} (segment "
                      f"{regime['segment']}, {regime['n']:,} examples), interval "
                      f"[{regime['lower']:.4f}, {regime['upper']:.4f}].", ""]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(out.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "regime.md")

"""The in-process engine end to end: determinism, pairing, an independent reference, bad input."""

from __future__ import annotations

import csv
import gzip
import json
import math
from pathlib import Path

import pytest
from river import naive_bayes

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import StreamStages, evaluate, evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.records.base import dumps

ELEC = Path(__file__).resolve().parents[2] / "shared" / "data" / "elec.csv.gz"
if not ELEC.exists():  # a checkout without ../shared: use the packaged copy
    ELEC = Path(__file__).resolve().parents[1] / "connectors" / "data" / "elec.csv.gz"

TWO_LEARNERS = ("learners=[{name: ht, model: river.tree.HoeffdingTreeClassifier}, "
                "{name: nb, model: river.naive_bayes.GaussianNB}]")


def config(*overrides: str):
    return load_config(None, [f"source.path={ELEC}", TWO_LEARNERS, *overrides])


def run_bytes(cfg) -> list[str]:
    """Every record as its exact bytes; the summary's timings are the only fields allowed to vary."""
    records, _ = evaluate_to_list(make_plans(cfg), open_source(cfg))
    out = []
    for record in records:
        if record["type"] == "summary":
            record = {k: v for k, v in record.items() if k not in SummaryRecord.TIMING_FIELDS}
        out.append(dumps(record))
    return out


@pytest.mark.slow  # five runs each, batch sizes down to 1
@pytest.mark.parametrize("mode,window", [
    ("bootstrap", "{kind: adwin, delta: 0.002}"),
    ("cv", "{kind: sliding, size: 300}"),
    ("split", "{kind: fading, alpha: 0.99}"),
])
def test_byte_identical_across_runs_and_batch_sizes(mode, window):
    base = ["source.limit=1200", f"evaluation.mode={mode}", "evaluation.folds=4",
            f"evaluation.window={window}", "evaluation.report_every=250"]
    reference = run_bytes(config(*base, "engine.batch_size=500"))
    assert sum(r.startswith('{"schema":1,"type":"measures"') for r in reference) == 2 * 5  # 250..1000, 1200
    assert run_bytes(config(*base, "engine.batch_size=500")) == reference
    for batch_size in (1, 7):
        assert run_bytes(config(*base, f"engine.batch_size={batch_size}")) == reference, batch_size
    assert run_bytes(config(*base, "evaluation.seed=2")) != reference


@pytest.mark.parametrize("window", ["{kind: sliding, size: 300}", "{kind: adwin, delta: 0.002}",
                                    "{kind: cumulative}"])
def test_auc_is_byte_identical_across_batch_sizes_and_compared_across_folds(window):
    """The kept scores and the AUC windows cut at any batch boundary give the same records."""
    base = ["source.limit=900", "evaluation.mode=cv", "evaluation.folds=3",
            f"evaluation.window={window}", "evaluation.report_every=250",
            "evaluation.scores=[auc]", "evaluation.compare=[accuracy, auc]"]
    reference = run_bytes(config(*base, "engine.batch_size=500"))
    measures = [json.loads(r) for r in reference if r.startswith('{"schema":1,"type":"measures"')]
    assert measures and all(0.0 < m["values"]["auc"]["mean"] <= 1.0 for m in measures)
    assert any(r.startswith('{"schema":1,"type":"comparison"') and '"measure":"auc"' in r
               for r in reference)
    assert run_bytes(config(*base, "engine.batch_size=7")) == reference


class RecordingLearner:
    """Stands in for a river model and records the weight of every training call."""

    def __init__(self):
        self.weights: list[tuple[object, float]] = []

    def predict_one(self, x):
        return None

    def learn_one(self, x, y, w=1.0):
        self.weights.append((x["feat_1"], x["feat_2"], w))


def test_learners_on_a_fold_see_the_same_weights(stage_driver):
    cfg = config("source.limit=600", "evaluation.mode=bootstrap", "evaluation.folds=5")
    plans = make_plans(cfg)
    stages = StreamStages(plans, "elec")
    for fold_tasks in stages.tasks:
        for task in fold_tasks:
            task.model, task._weighted = RecordingLearner(), True
    for item in open_source(cfg):
        for batch in stages.head.batcher.add(item):
            stage_driver.process(stages, batch)
    for batch in stages.head.batcher.flush(final=True):
        stage_driver.process(stages, batch)
    per_fold = []
    for fold_tasks in stages.tasks:
        a, b = (task.model.weights for task in fold_tasks)
        assert a == b and a  # same examples, same weights, same order
        per_fold.append(a)
    assert len({tuple(w) for w in per_fold}) == 5  # but the folds differ
    total = sum(w for fold in per_fold for *_, w in fold)
    assert 0.9 < total / (5 * 600) < 1.1  # Poisson(1): one training per example and fold


def independent_single_gnb(path: Path) -> dict[str, float]:
    """Plain prequential GaussianNB over the file, with its own counting: no project code."""
    model = naive_bayes.GaussianNB()
    n = correct = maj_right = per_right = 0
    confusion: dict[tuple[str, object], int] = {}
    class_counts: dict[str, int] = {}
    first_seen: list[str] = []
    previous = None
    with gzip.open(path, "rt", newline="") as handle:
        for row in csv.DictReader(handle):
            y = row.pop("target")
            x = {k: float(v) for k, v in row.items()}
            y_pred = model.predict_one(x)
            if class_counts:
                top = max(class_counts.values())
                majority = next(c for c in first_seen if class_counts.get(c) == top)
            else:
                majority = None
            n += 1
            correct += y_pred == y
            maj_right += majority == y
            per_right += previous == y
            confusion[y, y_pred] = confusion.get((y, y_pred), 0) + 1
            if y not in class_counts:
                first_seen.append(y)
            class_counts[y] = class_counts.get(y, 0) + 1
            previous = y
            model.learn_one(x, y)
    p0 = correct / n
    pc = sum(
        (class_counts[c] / n) * (sum(v for (t, p), v in confusion.items() if p == c) / n)
        for c in class_counts
    )
    pm, pper = maj_right / n, per_right / n
    kappa = (p0 - pc) / (1 - pc)
    kappa_per = (p0 - pper) / (1 - pper)
    return {
        "accuracy": p0,
        "kappa": kappa,
        "kappa_m": (p0 - pm) / (1 - pm),
        "kappa_per": kappa_per,
        "kappa_plus": math.sqrt(max(0, kappa) * max(0, kappa_per)),
    }


@pytest.mark.slow  # the whole of Electricity, in the engine and in an independent loop
def test_single_mode_gaussian_nb_on_electricity_matches_an_independent_loop():
    cfg = load_config(None, [
        f"source.path={ELEC}", "evaluation.mode=single", "evaluation.window={kind: cumulative}",
        "learners=[{name: nb, model: river.naive_bayes.GaussianNB}]", "evaluation.report_every=100000",
    ])
    records, rejected = evaluate_to_list(make_plans(cfg), open_source(cfg))
    assert not rejected
    final = [r for r in records if r["type"] == "measures"][-1]
    assert final["position"] == 45_312 and final["window_size"] == [45_312]
    expected = independent_single_gnb(ELEC)
    for name, value in expected.items():
        assert final["values"][name]["folds"][0] == pytest.approx(value, abs=1e-9), name
        assert final["values"][name]["std"] is None  # one fold: no spread
    assert 0.5 < expected["accuracy"] < 0.95 and expected["kappa_per"] < 0  # a sane reference


BAD_ROWS = {
    "wrong number of columns": "0.1,0.2,0.3\n",
    "missing label": "0.1,0.2,0.3,0.4,0.5,0.6,\n",
    "non-numeric feature": "0.1,abc,0.3,0.4,0.5,0.6,1\n",
    "NaN feature": "0.1,nan,0.3,0.4,0.5,0.6,1\n",
    "infinite feature": "0.1,inf,0.3,0.4,0.5,0.6,1\n",
    "malformed line": '0.1,"0.2,0.3,0.4,0.5,0.6,1\n',
}


def test_bad_input_is_dead_lettered_counted_and_nothing_else_is_lost(tmp_path):
    good = ELEC.read_bytes()
    lines = gzip.decompress(good).decode().splitlines(keepends=True)[:401]  # header + 400 rows
    data = [lines[0]]
    for i, row in enumerate(lines[1:]):
        data.append(row)
        if i % 50 == 10:
            data.append(list(BAD_ROWS.values())[(i // 50) % len(BAD_ROWS)])
    path = tmp_path / "dirty.csv"
    path.write_bytes("".join(data).encode() + b"0.1,\xff\xfe,0.3,0.4,0.5,0.6,1\n" + lines[1].encode())
    cfg = load_config(None, [f"source.path={path}", TWO_LEARNERS, "evaluation.folds=3",
                             "evaluation.report_every=100"])
    records, rejected = evaluate_to_list(make_plans(cfg), open_source(cfg))
    n_bad = sum(1 for i in range(400) if i % 50 == 10) + 1
    assert len(rejected) == n_bad
    for record in rejected:
        assert record["type"] == "rejected" and record["reason"] and record["record"]
        assert record["location"].startswith("dirty.csv:")
    assert any("\\xff" in r["record"] for r in rejected)  # the invalid UTF-8 line, kept as text
    summary = records[-1]
    assert summary["type"] == "summary"
    assert summary["examples_rejected"] == n_bad
    assert summary["examples_read"] == 401 + n_bad
    assert summary["position"] == 401  # every good row is an example
    final = [r for r in records if r["type"] == "measures"][-1]
    assert final["position"] == 401


def test_a_class_first_seen_mid_stream_is_a_new_class(tmp_path):
    rows = ["a,target"] + [f"{i % 7},{'x' if i % 3 else 'y'}" for i in range(300)]
    rows += [f"{i % 7},z" for i in range(50)] + [f"{i % 7},{'x' if i % 2 else 'z'}" for i in range(150)]
    path = tmp_path / "late.csv"
    path.write_text("\n".join(rows) + "\n")
    cfg = load_config(None, [f"source.path={path}", TWO_LEARNERS, "evaluation.folds=3",
                             "evaluation.report_every=100", "evaluation.window={kind: sliding, size: 200}"])
    records, rejected = evaluate_to_list(make_plans(cfg), open_source(cfg))
    measures = [r for r in records if r["type"] == "measures" and r["learner"] == "ht"]
    assert "recall[z]" not in measures[2]["values"] and "recall[z]" in measures[3]["values"]
    last = measures[-1]["values"]
    assert last["recall[y]"]["mean"] is None  # no 'y' in the last 200 examples
    assert last["recall[z]"]["mean"] is not None and last["accuracy"]["mean"] is not None


def test_summary_counts_and_every_record_is_json(tmp_path):
    cfg = config("source.limit=500", "evaluation.folds=3", "evaluation.report_every=200")
    lines: list[str] = []
    result = evaluate(make_plans(cfg), open_source(cfg), lambda r: lines.append(dumps(r)),
                      lambda r: None)
    parsed = [json.loads(line) for line in lines]
    assert [r["position"] for r in parsed if r["type"] == "measures"] == [200, 200, 400, 400, 500, 500]
    assert result.examples == 500 and result.rejected == 0
    assert parsed[-1]["type"] == "summary" and len(parsed[-1]["measures"]) == 2


def test_bad_json_lines_are_dead_lettered_and_the_run_goes_on(tmp_path):
    good = [json.dumps({"a": i % 5, "b": (i * 7) % 3, "target": "x" if i % 3 else "y"}) for i in range(300)]
    bad = {
        "not json": "{a: 1,",
        "not an object": "[1, 2, 3]",
        "missing label": '{"a": 1, "b": 2}',
        "empty label": '{"a": 1, "b": 2, "target": ""}',
        "text feature": '{"a": "one", "b": 2, "target": "x"}',
        "NaN feature": '{"a": NaN, "b": 2, "target": "x"}',
        "infinite feature": '{"a": Infinity, "b": 2, "target": "x"}',
    }
    lines = good[:100] + list(bad.values()) + good[100:]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n")
    cfg = load_config(None, [f"source.path={path}", TWO_LEARNERS, "evaluation.folds=3",
                             "evaluation.report_every=100"])
    records, rejected = evaluate_to_list(make_plans(cfg), open_source(cfg))
    assert [r["record"] for r in rejected] == list(bad.values())
    assert all(r["reason"] and r["position"] == 100 for r in rejected)
    summary = records[-1]
    assert (summary["position"], summary["examples_rejected"], summary["examples_read"]) == (300, 7, 307)

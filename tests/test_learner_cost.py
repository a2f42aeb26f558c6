"""Whole-stream values beside the window's, and what each learner cost (river's and MOA's)."""

from __future__ import annotations

import pickle

import pytest
from river import naive_bayes, tree

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.stages.learner import model_size

LEARNERS = ("learners=[{name: ht, model: river.tree.HoeffdingTreeClassifier}, "
            "{name: nb, model: river.naive_bayes.GaussianNB}]")


def run(*overrides: str) -> list[dict]:
    cfg = load_config(None, ["source.limit=900", "evaluation.folds=3",
                             "evaluation.report_every=300", *overrides])
    records, _ = evaluate_to_list(make_plans(cfg), open_source(cfg))
    return records


def test_a_cumulative_window_is_its_own_whole_stream_value():
    records = run(LEARNERS, "evaluation.window={kind: cumulative}")
    measures = [r for r in records if r["type"] == "measures"]
    assert measures
    for record in measures:
        assert record["whole_stream"] == {m: record["values"][m] for m in record["whole_stream"]}


def test_the_whole_stream_differs_from_a_short_window_and_is_reported_throughout():
    records = run(LEARNERS, "evaluation.window={kind: sliding, size: 50}")
    measures = [r for r in records if r["type"] == "measures"]
    assert all("whole_stream" in r for r in measures)
    last = [r for r in measures if r["position"] == 900]
    assert any(r["whole_stream"]["accuracy"] != r["values"]["accuracy"] for r in last)
    summary = records[-1]
    assert [m["whole_stream"] for m in summary["measures"]] == [r["whole_stream"] for r in last]


def test_river_costs_are_in_the_summary_and_only_cpu_time_varies():
    first, second = run(LEARNERS), run(LEARNERS, "engine.batch_size=7")
    for summary in (first[-1], second[-1]):
        assert summary["type"] == "summary"
        assert set(summary["cpu_predict_s"]) == set(summary["cpu_learn_s"]) == {"ht", "nb"}
        assert all(v > 0 for v in summary["cpu_learn_s"].values())
        assert all(v > 1000 for v in summary["model_bytes"].values())
    strip = lambda r: {k: v for k, v in r.items() if k not in SummaryRecord.TIMING_FIELDS}
    assert strip(first[-1]) == strip(second[-1])
    assert "model_bytes" not in SummaryRecord.TIMING_FIELDS


@pytest.mark.parametrize("model", [tree.HoeffdingAdaptiveTreeClassifier(seed=1),
                                   naive_bayes.GaussianNB()])
def test_a_model_size_is_the_same_after_a_pickle_round_trip(model):
    from river import datasets

    for x, y in datasets.Phishing().take(300):
        model.learn_one(x, y)
    assert model_size(model) == model_size(pickle.loads(pickle.dumps(model))) > 1000


@pytest.mark.slow  # a JVM
def test_moa_costs_are_measured_in_java():
    records = run("learners=[{name: moa_nb, model: moa.classifiers.bayes.NaiveBayes}, "
                  "{name: moa_ht, model: moa.classifiers.trees.HoeffdingTree}]")
    summary = records[-1]
    assert set(summary["model_bytes"]) == {"moa_nb", "moa_ht"}
    assert all(v > 1000 for v in summary["model_bytes"].values()), summary["model_bytes"]
    # naive Bayes learns these 2,700 examples in a few milliseconds, which a JVM reading the
    # threads' CPU time from /proc (in ticks of 10 ms) may see as none; the tree takes longer
    assert all(v >= 0 for v in summary["cpu_learn_s"].values()), summary["cpu_learn_s"]
    assert summary["cpu_learn_s"]["moa_ht"] > 0, summary["cpu_learn_s"]
    again = run("learners=[{name: moa_nb, model: moa.classifiers.bayes.NaiveBayes}, "
                "{name: moa_ht, model: moa.classifiers.trees.HoeffdingTree}]",
                "engine.batch_size=7")[-1]
    assert again["model_bytes"] == summary["model_bytes"]

"""Class scores kept by the learner tasks, and the AUC they give in the measures records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from river import naive_bayes

from foldstream.job.config import ConfigError, load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.stages.fanout import FanOut, FanOutPlan
from foldstream.operators.stages.learner import LearnerSpec, LearnerTask
from foldstream.operators.records.base import ExampleBatch



def _oracle():
    """tests/test_auc.py's pair-by-pair AUC (tests/ is no package: loaded by path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("foldstream_tests_auc",
                                                  Path(__file__).with_name("test_auc.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.brute_force


brute_force = _oracle()

GENERATOR = ["source={kind: generator, model: river.datasets.synth.Agrawal, seed: 3, "
             "limit: 1500}"]
NB = "learners=[{name: nb, model: river.naive_bayes.GaussianNB}]"
OVO = ("learners=[{name: nb, model: river.naive_bayes.GaussianNB}, {name: ovo, model: "
       "river.multiclass.OneVsOneClassifier, params: {classifier: "
       "{model: river.linear_model.LogisticRegression}}}]")


def _fold_batch():
    xs = [{"a": float(i % 7), "b": float(i % 3)} for i in range(40)]
    ys = [i % 7 > 3 for i in range(40)]
    return FanOut("s", FanOutPlan("single")).process(
        ExampleBatch("s", 0, 0, list(range(40)), xs, [int(y) for y in ys]))[0]


def test_scores_are_kept_only_when_asked_and_are_predict_proba_one():
    batch = _fold_batch()
    plain = LearnerTask(LearnerSpec("nb", "river.naive_bayes.GaussianNB"), 0).process(batch)
    assert plain.scores is None
    kept = LearnerTask(LearnerSpec("nb", "river.naive_bayes.GaussianNB", scores=True),
                       0).process(batch)
    assert kept.y_pred == plain.y_pred  # the same labels, read off the same probabilities
    model = naive_bayes.GaussianNB()
    expected = []
    for x, y in zip(batch.xs, batch.y):
        p = model.predict_proba_one(x)
        expected += [p.get(label, 0.0) for label in batch.classes]
        model.learn_one(x, batch.classes[y])
    assert kept.scores == expected


def test_a_learner_without_probabilities_is_refused_naming_it():
    with pytest.raises(ConfigError, match=r"learners\.1: learner 'ovo' .*OneVsOneClassifier.*"
                                          r"no class scores"):
        load_config(None, [*GENERATOR, OVO, "evaluation.scores=[auc]"])
    load_config(None, [*GENERATOR, OVO])  # without a score-based measure it is welcome


@pytest.mark.parametrize("overrides,key", [
    (["evaluation.compare=[auc]"], "evaluation.compare"),
    (["evaluation.scores=[auc]", "evaluation.window={kind: fading}"], "evaluation.scores"),
    (["evaluation.scores=[auc]", "evaluation.delay={examples: 5}"], "evaluation.scores"),
    (["evaluation.scores=[roc]"], "evaluation.scores"),
])
def test_bad_score_settings_fail_at_start_naming_the_key(overrides, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(None, [*GENERATOR, NB, *overrides])


def test_validate_exits_2_for_a_learner_without_probabilities(tmp_path: Path):
    path = tmp_path / "c.yaml"
    path.write_text("source: {kind: generator, model: river.datasets.synth.Agrawal, limit: 10}\n"
                    "evaluation: {scores: [auc]}\n"
                    "learners:\n  - {name: ovo, model: river.multiclass.OneVsOneClassifier, "
                    "params: {classifier: {model: river.linear_model.LogisticRegression}}}\n")
    proc = subprocess.run([sys.executable, "-m", "foldstream.job.cli", "validate", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "learners.0: learner 'ovo'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("window,size", [("{kind: sliding, size: 400}", 400),
                                         ("{kind: cumulative}", None)])
def test_the_measures_record_carries_the_auc_of_the_window(window, size):
    """Single mode: the AUC of the last report is the definition's, on river's own scores."""
    cfg = load_config(None, [*GENERATOR, NB, "evaluation.mode=single",
                             f"evaluation.window={window}", "evaluation.scores=[auc]",
                             "evaluation.report_every=500", "evaluation.positive_class=1"])
    records, _ = evaluate_to_list(make_plans(cfg), open_source(cfg))
    last = [r for r in records if r["type"] == "measures"][-1]
    model, scores, positive = naive_bayes.GaussianNB(), [], []
    for item in open_source(cfg):
        scores.append(model.predict_proba_one(item.x).get(1, 0.0))
        positive.append(item.y == 1)
        model.learn_one(item.x, item.y)
    lo = 0 if size is None else len(scores) - size
    assert last["values"]["auc"]["folds"] == [brute_force(scores[lo:], positive[lo:])]
    default = load_config(None, [*GENERATOR, NB, "evaluation.mode=single"])
    plain, _ = evaluate_to_list(make_plans(default), open_source(default))
    assert "auc" not in [r for r in plain if r["type"] == "measures"][-1]["values"]

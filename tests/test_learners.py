"""The learner task: fresh clones, weights as sample weight or repetition, holdout, lags."""

from __future__ import annotations

import pytest

from foldstream.operators.stages.learner import LearnerSpec, LearnerTask
from foldstream.operators.learners.fitting import takes_weight
from foldstream.operators.records.base import FoldBatch


class Counting:
    """Records every call; ``weighted`` decides whether learn_one declares ``w``."""

    def __init__(self):
        self.calls: list[tuple] = []

    def predict_one(self, x):
        self.calls.append(("predict", dict(x)))
        return "b"


class CountingWeighted(Counting):
    def learn_one(self, x, y, w=1.0):
        self.calls.append(("learn", y, w))


class CountingPlain(Counting):
    def learn_one(self, x, y):
        self.calls.append(("learn", y, 1))


def batch(weights, lags=None):
    n = len(weights)
    return FoldBatch("s", 0, 0, 0, [{"f": float(i)} for i in range(n)], [0, 1, 0][:n], [-1, 0, 1][:n],
                     list(weights), ["a", "b"], lags)


def task(model, prequential=True, lags=0) -> LearnerTask:
    t = LearnerTask(LearnerSpec("l", "river.naive_bayes.GaussianNB", lags=lags), 0, prequential)
    t.model, t._weighted = model, takes_weight(model)
    return t


def test_weight_is_a_sample_weight_or_a_repetition():
    weighted, plain = CountingWeighted(), CountingPlain()
    task(weighted).process(batch([3, 0, 1]))
    task(plain).process(batch([3, 0, 1]))
    assert [c for c in weighted.calls if c[0] == "learn"] == [("learn", "a", 3), ("learn", "a", 1)]
    assert [c for c in plain.calls if c[0] == "learn"] == [("learn", "a", 1)] * 4
    # prequential: every example is predicted first, the zero-weight one too
    assert [c[0] for c in weighted.calls] == ["predict", "learn", "predict", "predict", "learn"]


def test_holdout_scores_only_what_it_does_not_train_on():
    out = task(CountingWeighted(), prequential=False).process(batch([2, 0, 1]))
    assert out.scored == [False, True, False]
    assert out.y_pred == [-1, 1, -1]  # "b" is code 1; unscored examples carry -1


def test_temporal_wrapper_adds_previous_labels_as_features():
    model = CountingWeighted()
    task(model, lags=1).process(batch([1, 1], lags=[(), ("a", "z")]))
    predicted = [c[1] for c in model.calls if c[0] == "predict"]
    assert predicted == [{"f": 0.0}, {"f": 1.0, "y_lag1=a": 1.0}]  # only as many lags as asked


def test_every_lag_indicator_seen_so_far_is_present_as_zero_or_one():
    model = CountingWeighted()
    task(model, lags=1).process(batch([1, 1, 1], lags=[("a",), ("b",), ("a",)]))
    predicted = [c[1] for c in model.calls if c[0] == "predict"]
    assert [{k: v for k, v in x.items() if k != "f"} for x in predicted] == [
        {"y_lag1=a": 1.0}, {"y_lag1=a": 0.0, "y_lag1=b": 1.0}, {"y_lag1=a": 1.0, "y_lag1=b": 0.0}]


def test_the_lag_encoder_does_not_depend_on_batch_boundaries():
    whole, split = CountingWeighted(), CountingWeighted()
    lags = [("a",), ("b",), ("a",)]
    task(whole, lags=1).process(batch([1, 1, 1], lags=lags))
    t = task(split, lags=1)
    for i in range(3):
        one = batch([1, 1, 1], lags=lags)
        one.xs, one.y, one.prev_y, one.weights, one.lags = (
            one.xs[i:i + 1], one.y[i:i + 1], one.prev_y[i:i + 1], [1], lags[i:i + 1])
        t.process(one)
    assert whole.calls == split.calls


def _elec_accuracy(model: str) -> dict[str, float]:
    import foldstream

    results = foldstream.evaluate(
        {"path": "package://elec.csv.gz", "label": "target"},
        {"plain": {"model": model}, "lag": {"model": model, "lags": 1}},
        mode="single", window="cumulative")
    rows = results.measures("accuracy")
    last = rows[rows.position == rows.position.max()]
    return dict(zip(last.learner, last["mean"]))


@pytest.mark.slow
def test_the_previous_label_makes_river_learners_better_on_electricity():
    """Electricity's labels persist (Žliobaitė et al. 2015: the persistent classifier is right
    85% of the time), so the previous label as a feature helps any learner that can read it."""
    for model in ("river.naive_bayes.GaussianNB", "river.tree.HoeffdingTreeClassifier"):
        accuracy = _elec_accuracy(model)
        assert accuracy["lag"] >= accuracy["plain"] + 0.05, (model, accuracy)


@pytest.mark.slow
def test_the_previous_label_makes_moa_learners_better_on_electricity():
    for model in ("moa.classifiers.bayes.NaiveBayes", "moa.classifiers.trees.HoeffdingTree"):
        accuracy = _elec_accuracy(model)
        assert accuracy["lag"] >= accuracy["plain"] + 0.05, (model, accuracy)


def test_every_task_gets_a_fresh_clone():
    spec = LearnerSpec("ht", "river.tree.HoeffdingTreeClassifier", {"grace_period": 50})
    a, b = LearnerTask(spec, 0), LearnerTask(spec, 1)
    assert a.model is not b.model and a.model.grace_period == 50
    a.model.learn_one({"x": 1.0}, "a")
    assert b.model.predict_one({"x": 1.0}) is None  # b learnt nothing from a


def test_the_window_majority_equals_a_count_over_the_last_labels():
    import random

    from foldstream.operators.learners.baselines import MajorityWindowClassifier

    rng = random.Random(3)
    labels = [rng.choice("abc") for _ in range(500)]
    model, seen = MajorityWindowClassifier(window_size=7), []
    for y in labels:
        window = seen[-7:]
        order = list(dict.fromkeys(seen))
        expected = max(order, key=lambda c: (window.count(c), -order.index(c))) if seen else None
        assert model.predict_one({}) == expected
        model.learn_one({}, y)
        seen.append(y)


def test_the_window_majority_runs_as_a_configured_learner():
    import foldstream

    results = foldstream.evaluate(
        {"path": "package://elec.csv.gz", "label": "target", "limit": 2000},
        {"maj": {"model": "foldstream.operators.learners.baselines.MajorityWindowClassifier",
                 "params": {"window_size": 100}}}, folds=2)
    assert set(results.measures("accuracy").learner) == {"maj"}

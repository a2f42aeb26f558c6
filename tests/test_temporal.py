"""The learners of Žliobaitė et al. (2015) in operators/learners/temporal.py: the Temporal
Correction classifier's math against a direct computation, its previous label from ``lags``,
its build from a configuration, and the random detector's alarm rate."""

from __future__ import annotations

import random

import pytest
from river import base, naive_bayes

import foldstream
from foldstream.operators.learners.models import SpecError, check
from foldstream.operators.learners.temporal import RandomAlarms, TemporalCorrectionClassifier

TC = "foldstream.operators.learners.temporal.TemporalCorrectionClassifier"


class _Posterior(base.Classifier):
    """A model whose posterior is ``x["p"]`` (a mapping), and that records what it learns."""

    def __init__(self):
        self.seen: list[dict] = []

    def learn_one(self, x, y):
        self.seen.append(x)

    def predict_proba_one(self, x):
        return dict(x["p"])


def _markov(n: int, stay: float, seed: int) -> list[str]:
    rng, labels, y = random.Random(seed), [], "a"
    for _ in range(n):
        if rng.random() > stay:
            y = rng.choice("abc")
        labels.append(y)
    return labels


@pytest.mark.parametrize("alpha,n", [(0.001, 400), (0.05, 400)])
def test_the_correction_is_posterior_times_transition_over_prior(alpha, n):
    """ŷ = argmax P(i | X) P(i | y_{t-1}) / P(i), the prior and the transitions by a moving
    average of rate alpha started as the mean: computed here directly from the labels (with
    n < 1/alpha: the plain frequencies; with alpha = 0.05: the recursion by hand)."""
    labels = _markov(n, stay=0.8, seed=3)
    tc = TemporalCorrectionClassifier(_Posterior(), alpha=alpha)
    prior: dict[str, float] = {}
    rows: dict[str, dict[str, float]] = {}
    counts = {"prior": 0}
    rng = random.Random(5)

    def ema(table: dict, key: str, y: str) -> None:
        counts[key] = counts.get(key, 0) + 1
        rate = max(alpha, 1 / counts[key])
        table.setdefault(y, 0.0)
        for c in table:
            table[c] += rate * ((c == y) - table[c])

    previous = None
    for t, y in enumerate(labels):
        raw = [rng.random() for _ in "abc"]
        posterior = {c: r / sum(raw) for c, r in zip("abc", raw)}
        x = {"p": posterior}
        got = tc.predict_proba_one(x)
        if previous is None or previous not in rows:
            assert got == posterior
        else:
            scores = {c: q * rows[previous].get(c, 0.0) / prior[c] if prior.get(c) else 0.0
                      for c, q in posterior.items()}
            total = sum(scores.values())
            assert got == pytest.approx({c: s / total for c, s in scores.items()}, rel=1e-12)
        tc.learn_one(x, y)
        ema(prior, "prior", y)
        if previous is not None:
            ema(rows.setdefault(previous, {}), previous, y)
        previous = y
    if alpha == 0.001:  # n < 1/alpha: the estimates are the plain frequencies
        assert prior == pytest.approx({c: labels.count(c) / n for c in prior}, rel=1e-12)


def test_the_previous_label_comes_from_the_lags_and_is_hidden_from_the_model():
    inner = _Posterior()
    tc = TemporalCorrectionClassifier(inner, alpha=0.5)
    for prev, y in [("a", "a"), ("a", "a"), ("b", "b"), ("b", "b"), ("a", "b")]:
        tc.learn_one({"p": {}, "y_lag1=a": float(prev == "a"), "y_lag1=b": float(prev == "b"),
                      "y_lag2=a": 1.0}, y)
    assert all(set(x) == {"p"} for x in inner.seen)
    flat = {"p": {"a": 0.5, "b": 0.5}}
    # after b: only b has followed b; after a: a, a, then b at the rate 0.5 of the third update
    assert tc.predict_one({**flat, "y_lag1=a": 0.0, "y_lag1=b": 1.0}) == "b"
    assert tc.predict_proba_one({**flat, "y_lag1=a": 0.0, "y_lag1=b": 1.0})["a"] == 0.0
    # without lags: the last label learnt (b)
    assert tc.predict_one(flat) == "b"


def test_built_from_a_configuration_and_its_alpha_checked():
    model = check(TC, {"model": {"model": "river.naive_bayes.GaussianNB"}, "alpha": 0.01}).build()
    assert isinstance(model.model, naive_bayes.GaussianNB) and model.alpha == 0.01
    with pytest.raises(SpecError, match="params.alpha"):
        check(TC, {"model": {"model": "river.naive_bayes.GaussianNB"}, "alpha": 0.0}).build()


def test_on_electricity_it_beats_naive_bayes_in_every_mode(elec_path):
    """In cv, whose folds do not learn every label, ``lags: 1`` gives it the stream's previous
    label: its gain over naive Bayes holds there, not only in single mode."""
    learners = {"nb": {"model": "river.naive_bayes.GaussianNB"},
                "nb_tc": {"model": TC, "lags": 1,
                          "params": {"model": {"model": "river.naive_bayes.GaussianNB"}}}}
    results = foldstream.evaluate(str(elec_path), learners, mode="cv", folds=3, limit=3000,
                                  window="cumulative", report_every=10**6,
                                  verdicts={"enabled": False})
    final = results.measures()
    accuracy = final[(final.position == final.position.max()) & (final.measure == "accuracy")]
    value = accuracy.set_index("learner")["mean"]
    assert value["nb_tc"] > value["nb"] + 0.03, value


def test_random_alarms_come_at_the_rate_of_their_probability():
    """Each gap between alarms is warm_start - 1 steps plus a geometric wait of mean 1/p."""
    detector = RandomAlarms(p=0.05, warm_start=30, seed=2)
    steps = 200_000
    for _ in range(steps):
        detector.update(0)
    assert steps / detector.alarms == pytest.approx(29 + 1 / 0.05, rel=0.03)
    assert not RandomAlarms(p=0.0).warning_detected
    with pytest.raises(ValueError, match="p must be"):
        RandomAlarms(p=1.5)

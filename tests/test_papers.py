"""One fast reproduction per paper behind foldstream (docs/experiments/README.md): each checks
a number or a trend its paper states, on the data or the design the paper uses.

The temporally augmented classifier's gain (Žliobaitė et al. 2015, §6) is in
tests/test_learners.py; the normalisation example (Brzezinski et al.) in
tests/test_normalization.py; the held-out evaluator against MOA (Gama et al. 2009, §3) in
tests/test_moa.py (slow: it runs MOA's own task).
"""

from __future__ import annotations

import numpy as np
from river import dummy

import foldstream
from foldstream.operators.detectors import PageHinkley


def test_the_persistent_classifier_on_electricity_zliobaite_2015(elec_path):
    """Žliobaitė et al. (2015, Table 2 and §6.5): on Electricity the persistent (no-change)
    classifier is right 85.3% of the time, far above the majority class (57.5%), and its
    kappa_per is 0 by definition; naive Bayes, with a good kappa, is worse than it."""
    results = foldstream.evaluate(str(elec_path), {"per": dummy.NoChangeClassifier(),
                                                   "maj": dummy.PriorClassifier()},
                                  mode="single", window="cumulative", report_every=100_000)
    final = results.measures()
    final = final[final.position == final.position.max()]
    value = final.set_index(["learner", "measure"])["mean"]
    assert round(value["per", "accuracy"], 3) == 0.853
    assert value["per", "kappa_per"] == 0.0
    assert round(value["maj", "accuracy"], 3) == 0.575  # P(majority) of their Table 2


def _first_alarm_after(losses: np.ndarray, change: int, alpha: float) -> int | None:
    alarms = np.flatnonzero(PageHinkley(delta=0.001, threshold=2.5, alpha=alpha,
                                        series="error_rate").update_many(losses))
    after = alarms[alarms >= change]
    return int(after[0]) - change if after.size else None


def test_stronger_fading_detects_sooner_gama_2009():
    """Gama et al. (2009, §5, Table 2): Page-Hinkley on the error rate with their delta = 0.001
    and lambda = 2.5; the smaller the fading factor alpha, the shorter the delay from a change
    (here the error rate of a learner going from 0.1 to 0.3 after 15,000 examples, 10 seeds)
    to its alarm, down from no fading (alpha = 1)."""
    alphas = (1 - 1e-3, 1 - 1e-4, 1 - 1e-5, 1.0)
    delays = {alpha: [] for alpha in alphas}
    for seed in range(10):
        rng = np.random.default_rng(seed)
        losses = np.r_[rng.random(15_000) < 0.1, rng.random(10_000) < 0.3].astype(float)
        for alpha in alphas:
            delays[alpha].append(_first_alarm_after(losses, 15_000, alpha))
    assert all(d is not None for ds in delays.values() for d in ds)  # never missed
    mean = [float(np.mean(delays[alpha])) for alpha in alphas]
    assert mean == sorted(mean) and mean[0] < 0.8 * mean[-1], mean

"""Learners of Žliobaitė et al. (Machine Learning 2015) for streams whose labels come in runs.

* :class:`TemporalCorrectionClassifier` (their §3.1): any probabilistic classifier whose
  posterior is corrected by the transition probabilities of the labels,

      y_t = argmax_i P(y_t = i | X_t) * P(y_t = i | y_{t-1}) / P(y_t = i).

  Their Figure 1(b) models the labels as a first-order Markov chain and each observation
  ``X_t`` as drawn from its own label ``y_t`` only. By Bayes' rule and that conditional
  independence, ``P(y_t = i | X_t, y_{t-1} = j) = P(X_t | y_t = i) P(y_t = i | y_{t-1} = j) /
  P(X_t | y_{t-1} = j)`` and ``P(X_t | y_t = i) = P(y_t = i | X_t) P(X_t) / P(y_t = i)``; the
  factors free of ``i`` do not change the argmax. The wrapped classifier (an ordinary one,
  which knows nothing of ``y_{t-1}``) gives ``P(y_t = i | X_t)``; the prior and the transition
  probabilities are estimated from the labels with an exponential moving average (their §6.3:
  ``alpha`` 0.001 on Electricity, 0.0001 on Covertype).
* :class:`RandomAlarms`: the "random change detector" of their §6.9 (DDM-random), which ignores
  its input and alarms at each step with probability ``p`` once ``warm_start`` steps have passed
  since its last alarm (DDM's warm-up of 30): around a classifier with river's
  ``DriftRetrainingClassifier(..., train_in_background=False)`` every alarm resets the model,
  as false alarms of a real detector would (their Figure 7).

Both are river objects, usable by dotted path in a configuration like river's own::

    learners:
      nb_tc:
        model: foldstream.operators.learners.temporal.TemporalCorrectionClassifier
        params: {model: {model: river.naive_bayes.GaussianNB}, alpha: 0.001}
        lags: 1
      nb_random_resets:
        model: river.drift.DriftRetrainingClassifier
        params:
          model: {model: river.naive_bayes.GaussianNB}
          drift_detector: {model: foldstream.operators.learners.temporal.RandomAlarms,
                           params: {p: 0.01, seed: 1}}
          train_in_background: false
"""

from __future__ import annotations

import random
from typing import Any

from river import base

from foldstream.operators.learners.fitting import learn, takes_weight
from foldstream.operators.learners.lags import PREFIX, lag_key

#: The name prefix of the previous label's indicators that a learner's ``lags`` adds
#: (:mod:`foldstream.operators.learners.lags`): ``y_lag1=<label>``.
LAG1 = lag_key(1, "")
_LAGS = PREFIX


class _Frequencies:
    """Class frequencies by an exponential moving average of rate ``alpha``, started as the
    plain mean: the ``n``-th unit of weight moves every estimate by ``max(alpha, 1 / n)`` towards
    its indicator, so the estimates are the counts' frequencies until ``n = 1 / alpha`` and
    forget at the rate ``alpha`` afterwards (the average then weighs the last ``1 / alpha``
    labels most)."""

    __slots__ = ("alpha", "n", "p")

    def __init__(self, alpha: float):
        self.alpha = alpha
        self.n = 0
        self.p: dict[Any, float] = {}

    def update(self, y: Any, weight: int) -> None:
        p = self.p
        p.setdefault(y, 0.0)
        for _ in range(weight):
            self.n += 1
            rate = max(self.alpha, 1.0 / self.n)
            for c in p:
                p[c] += rate * ((c == y) - p[c])


class TemporalCorrectionClassifier(base.Wrapper, base.Classifier):
    """``model``'s posterior times the labels' transition probability over their prior
    (Žliobaitė et al. 2015, §3.1; the module's docstring derives it).

    The previous label ``y_{t-1}`` is the stream's: read from the ``y_lag1=<label>`` indicators
    that a learner's ``lags: 1`` adds (in every validation mode, with delayed labels too), which
    the wrapper then hides from ``model`` (an ordinary classifier, as in the paper). Without those
    indicators it is the last label this learner learnt, which is the stream's previous one in
    single mode (every example trains it, in order), not in bootstrap, cv or split.

    The prior ``P(y_t = i)`` and each row ``P(y_t = . | y_{t-1} = j)`` are class frequencies
    with an exponential moving average of rate ``alpha`` (started as a plain mean; a label of
    weight ``w`` counts ``w`` times). Where nothing corrects (the first example, a previous
    label never followed by one yet) the prediction is ``model``'s; a class of zero estimated
    prior scores 0. When ``model`` knows no class yet its posterior is taken as the prior, so
    the prediction is the most probable successor of ``y_{t-1}``.

    Parameters
    ----------
    model
        The classifier to correct, with ``predict_proba_one`` (a river classifier), built from its
        spec in a configuration: ``params: {model: {model: river.naive_bayes.GaussianNB},
        alpha: 0.001}``.
    alpha
        The rate of the moving average of the prior and transition probabilities, in (0, 1]
        (the paper's 0.001 on Electricity, 0.0001 on Covertype; 1: the last label only).

    Examples
    --------
    After the labels ``a a a a b a a b b b`` the prior is ``a`` 0.6, ``b`` 0.4 and of the three
    labels that followed a ``b``, two were ``b``. A model whose posterior is ``a`` 0.7, ``b`` 0.3
    whatever ``x`` is corrected after a ``b`` to ``0.7 * (1/3) / 0.6 = 0.389`` against
    ``0.3 * (2/3) / 0.4 = 0.5``, that is 0.4375 against 0.5625 once normalised: ``b``.

    >>> from river import base
    >>> class Fixed(base.Classifier):
    ...     def learn_one(self, x, y):
    ...         pass
    ...     def predict_proba_one(self, x):
    ...         return {"a": 0.7, "b": 0.3}
    >>> tc = TemporalCorrectionClassifier(Fixed(), alpha=0.001)
    >>> for y in "aaaabaabbb":
    ...     tc.learn_one({}, y)
    >>> tc.predict_proba_one({})  # y_{t-1} = b, the last label learnt
    {'a': 0.4375..., 'b': 0.5625}
    >>> tc.predict_one({"y_lag1=a": 1.0, "y_lag1=b": 0.0})  # lags: 1 says y_{t-1} = a
    'a'

    Around the prior (river's ``PriorClassifier``, which knows nothing of ``x``) the correction
    leaves the transition probabilities of the previous label: a first-order Markov chain.

    >>> from river import dummy
    >>> tc = TemporalCorrectionClassifier(dummy.PriorClassifier())
    >>> for y in "aaaabaabbb":
    ...     tc.learn_one({}, y)
    >>> tc.predict_proba_one({})
    {'a': 0.333..., 'b': 0.666...}
    """

    def __init__(self, model: base.Classifier, alpha: float = 0.001):
        if isinstance(alpha, bool) or not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha must be in (0, 1], got {alpha!r}")
        self.model = model
        self.alpha = alpha
        self._weighted = takes_weight(model)
        self._prior = _Frequencies(alpha)
        self._rows: dict[str, _Frequencies] = {}  # by the previous label's text
        self._last: str | None = None  # the text of the last label learnt

    @property
    def _wrapped_model(self):
        return self.model

    @classmethod
    def _unit_test_params(cls):
        from river import naive_bayes

        yield {"model": naive_bayes.GaussianNB(), "alpha": 0.01}

    def _split(self, x: dict) -> tuple[dict, str | None]:
        """``x`` without the lag indicators, and the previous label's text (``None``: none)."""
        if not any(k.startswith(_LAGS) for k in x if isinstance(k, str)):
            return x, self._last
        previous = None
        features = {}
        for k, v in x.items():
            if isinstance(k, str) and k.startswith(_LAGS):
                if k.startswith(LAG1) and v:
                    previous = k[len(LAG1):]
            else:
                features[k] = v
        return features, previous

    def learn_one(self, x: dict, y: Any, w: int = 1) -> None:
        features, previous = self._split(x)
        weight = int(w)
        learn(self.model, features, y, weight, self._weighted)
        if weight <= 0:
            return
        self._prior.update(y, weight)
        if previous is not None:
            row = self._rows.get(previous)
            if row is None:
                row = self._rows[previous] = _Frequencies(self.alpha)
            row.update(y, weight)
        self._last = str(y)

    def predict_proba_one(self, x: dict, **kwargs) -> dict[Any, float]:
        features, previous = self._split(x)
        posterior = self.model.predict_proba_one(features, **kwargs)
        row = self._rows.get(previous) if previous is not None else None
        prior = self._prior.p
        if row is None or not prior:
            return posterior
        if not posterior:
            posterior = prior
        scores = {c: q * row.p.get(c, 0.0) / prior[c] if prior.get(c, 0.0) > 0.0 else 0.0
                  for c, q in posterior.items()}
        total = sum(scores.values())
        if total <= 0.0:  # the model gives its mass to classes never seen after y_{t-1}
            return posterior
        return {c: s / total for c, s in scores.items()}


class RandomAlarms(base.BinaryDriftAndWarningDetector):
    """A change detector that ignores its input (Žliobaitė et al. 2015, §6.9, DDM-random):
    ``warm_start`` updates after it starts or last alarmed, each update alarms with probability
    ``p``; it never warns. ``p = 1`` alarms every ``warm_start``-th update.

    Parameters
    ----------
    p
        The probability of an alarm at each update after the warm-up, in [0, 1].
    warm_start
        Updates without alarms after the start and after each alarm (DDM's 30).
    seed
        The seed of the draws.

    Examples
    --------
    >>> detector = RandomAlarms(p=1.0, warm_start=3)
    >>> alarms = []
    >>> for i in range(1, 10):
    ...     detector.update(0)
    ...     alarms.append(detector.drift_detected)
    >>> [i for i, a in enumerate(alarms, 1) if a], detector.alarms
    ([3, 6, 9], 3)
    """

    def __init__(self, p: float = 0.01, warm_start: int = 30, seed: int | None = None):
        if isinstance(p, bool) or not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be in [0, 1], got {p!r}")
        if isinstance(warm_start, bool) or not isinstance(warm_start, int) or warm_start < 1:
            raise ValueError(f"warm_start must be an integer >= 1, got {warm_start!r}")
        super().__init__()
        self.p = p
        self.warm_start = warm_start
        self.seed = seed
        self._rng = random.Random(seed)
        self._since = 0
        self.alarms = 0  # alarms so far

    def _reset(self):
        super()._reset()
        self._since = 0

    def update(self, x) -> None:
        if self.drift_detected:
            self._reset()
        self._since += 1
        if self._since >= self.warm_start and self._rng.random() < self.p:
            self._drift_detected = True
            self.alarms += 1


__all__ = ["LAG1", "RandomAlarms", "TemporalCorrectionClassifier"]

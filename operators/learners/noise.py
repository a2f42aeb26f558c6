"""A seeded noise filter around any classifier: the "change" of Bifet et al.'s experiments.

Bifet et al. (KDD 2015, Table 2) measure how often a test detects a real difference by
comparing a learner with a copy of it whose predictions are randomised: with probability
``p_noise`` a prediction is replaced by a class drawn uniformly from the classes seen so far
(docs/method.md §14). Two such filters with the same ``p_noise`` around two copies of one
deterministic learner, trained identically, are an *exact* null for the live verdicts of §12:
``E[d_t | past] = 0``, so any decided verdict is false.

The draws are deterministic (a replay, the other engine and a rerun draw the same) and differ
per seed and per fold: every draw is seeded by ``seed``, the weight the filter has learned so
far and the number of predictions it has made. Folds learn different weights (Poisson, or 0/1),
so their draws differ even with one ``seed``; with the learner spec's ``fold_seeds`` the seed
itself differs per fold too. The wrapped model trains exactly as it would unwrapped (``w`` is
passed on, or repeated for a model without a sample weight).

Around a model with a batch path (a MOA classifier, operators/moa.py: one crossing into Java
per batch), the filter has one too: the model predicts and trains on the whole batch, then the
draws' seeds are taken example by example in the same order, from the same state, as
``predict_one``/``learn_one`` would take them, and the batch's draws are made at once
(operators/stats/draws.py: ``random.Random``'s own draws, compiled), so either path gives the same
predictions.
"""

from __future__ import annotations

import random

from river import base

from foldstream.operators.stats.detectors import compiled
from foldstream.operators.learners.fitting import learn, takes_weight
from foldstream.operators.moa import MoaClassifier


class NoiseFilter(base.Classifier):
    """``model``, whose every prediction is replaced with probability ``p_noise`` by a class drawn
    uniformly from the classes seen so far.

    Parameters
    ----------
    model
        The classifier to wrap (built from its spec in a configuration:
        ``params: {model: {model: river.tree.HoeffdingTreeClassifier}, p_noise: 0.1, seed: 1}``),
        a river classifier or a MOA one (``{model: moa.classifiers.trees.HoeffdingTree,
        options: "-g 100"}``, operators/moa.py).
    p_noise
        The probability of replacing a prediction, in ``[0, 1]``.
    seed
        The seed of the draws.

    Examples
    --------
    >>> from river import dummy
    >>> f = NoiseFilter(dummy.NoChangeClassifier(), p_noise=1.0, seed=3)
    >>> for y in "abcab":
    ...     f.learn_one({}, y)
    >>> [f.predict_one({}) in "abc" for _ in range(5)]
    [True, True, True, True, True]
    >>> g = NoiseFilter(dummy.NoChangeClassifier(), p_noise=0.0)
    >>> g.learn_one({}, "a"); g.predict_one({})
    'a'
    """

    def __init__(self, model: base.Classifier | MoaClassifier, p_noise: float = 0.1,
                 seed: int | None = None):
        if not 0.0 <= p_noise <= 1.0:
            raise ValueError(f"p_noise must be in [0, 1], got {p_noise}")
        self.model = model
        self.p_noise = p_noise
        self.seed = seed
        self._weighted = takes_weight(model)
        self._learned = 0.0
        self._predicted = 0
        self._classes: list = []

    @classmethod
    def _unit_test_params(cls):
        from river import naive_bayes

        yield {"model": naive_bayes.GaussianNB(), "p_noise": 0.2, "seed": 1}

    def learn_one(self, x, y, w=1):
        if y not in self._classes:
            self._classes.append(y)
        self._learned += w
        learn(self.model, x, y, w if self._weighted else int(w), self._weighted)

    def predict_proba_one(self, x):
        return self.model.predict_proba_one(x)

    @property
    def run_batch(self):
        """The batch path of a learner task (``FoldBatch`` -> predictions, scored, error), when
        the wrapped model has one; otherwise absent (``AttributeError``), so the task calls
        ``predict_one``/``learn_one``."""
        if not hasattr(self.model, "run_batch"):
            raise AttributeError(f"{type(self.model).__name__} has no batch path")
        return self._run_batch

    def _run_batch(self, batch, prequential: bool, xs: list):
        pred, scored, error = self.model.run_batch(batch, prequential, xs)
        # the examples the model got to: all, or up to its error (whose prediction stands
        # when it failed learning)
        end = len(pred) if error is None else error[0] - batch.start - (error[1] == "predict")
        classes = self._classes
        texts: list[str] = []
        sizes: list[int] = []
        where: list[int] = []
        for i in range(end):
            if scored[i]:
                texts.append(self._next_draw())
                sizes.append(len(classes))
                where.append(i)
            w = batch.weights[i]
            if w > 0:
                label = batch.classes[batch.y[i]]
                if label not in classes:
                    classes.append(label)
                self._learned += w
        if texts:  # the draws of the whole batch at once (classes only grow: classes[c] stands)
            uniforms, choices = compiled("draws").draws(texts, sizes)
            for i, n, u, c in zip(where, sizes, uniforms.tolist(), choices.tolist()):
                if n and u < self.p_noise:
                    pred[i] = batch.classes.index(classes[c])
        return pred, scored, error

    def _next_draw(self) -> str:
        """The seed text of the next draw (docs/method.md §14): ``random.Random(text)`` draws
        the uniform, then the choice (operators/stats/draws.py makes the same draws in bulk)."""
        text = f"{self.seed}:{self._learned}:{self._predicted}"
        self._predicted += 1
        return text

    def predict_one(self, x, **kwargs):
        # One draw: the standard library's own generator, whose draws operators/stats/draws.py makes
        # in bulk (a compiled call for a single text costs about four times as much).
        prediction = self.model.predict_one(x)
        draw = random.Random(self._next_draw())
        if self._classes and draw.random() < self.p_noise:
            return draw.choice(self._classes)
        return prediction

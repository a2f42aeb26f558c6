"""The learner task: one river classifier on one fold, predict then train (docs/method.md §2, §9)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from foldstream.operators.imports import import_object
from foldstream.operators.records import FoldBatch, Label, PredictionBatch


def build_model(model: str, params: dict[str, Any] | None = None, args: list[Any] | None = None):
    """Instantiate a model from its dotted path; nested ``{"model": ...}`` values are built too.

    >>> pipeline = build_model("river.compose.Pipeline", args=[
    ...     {"model": "river.preprocessing.StandardScaler"},
    ...     {"model": "river.linear_model.LogisticRegression", "params": {"l2": 0.1}}])
    >>> [type(step).__name__ for step in pipeline.steps.values()], pipeline["LogisticRegression"].l2
    (['StandardScaler', 'LogisticRegression'], 0.1)
    """

    def build(value: Any) -> Any:
        if isinstance(value, dict) and "model" in value:
            return build_model(value["model"], value.get("params"), value.get("args"))
        if isinstance(value, list):
            return [build(v) for v in value]
        return value

    factory = import_object(model)
    built_args = [build(a) for a in args or []]
    built_params = {k: build(v) for k, v in (params or {}).items()}
    try:
        return factory(*built_args, **built_params)
    except TypeError as error:
        raise ValueError(f"cannot build {model} with these parameters: {error}") from None


def takes_weight(model: Any) -> bool:
    """Whether ``learn_one`` has an explicit sample-weight parameter ``w``."""
    try:
        return "w" in inspect.signature(model.learn_one).parameters
    except (TypeError, ValueError):
        return False


def lag_features(lags: tuple[Label, ...]) -> dict[str, float]:
    """The temporally augmented features (Žliobaitė et al. §3.2): previous labels, one-hot.

    One-hot keeps the wrapper usable by every learner, numeric-only ones included.

    >>> lag_features(("up", "down"))
    {'y_lag1=up': 1.0, 'y_lag2=down': 1.0}
    """
    return {f"y_lag{i}={label}": 1.0 for i, label in enumerate(lags, start=1)}


@dataclass
class LearnerSpec:
    """A learner under test, as configured (picklable)."""

    name: str
    model: str
    params: dict[str, Any] = field(default_factory=dict)
    args: list[Any] = field(default_factory=list)
    lags: int = 0  # previous labels added as features (docs/method.md §9); 0: no wrapper

    def build(self):
        # A fresh clone: never a shared or pre-trained instance.
        return build_model(self.model, self.params, self.args).clone()


class LearnerTask:
    """One (learner, fold) replica: predicts then trains on the fold's batches.

    >>> from foldstream.operators.fanout import FanOut, FanOutPlan
    >>> from foldstream.operators.records import ExampleBatch
    >>> fold_batch = FanOut("s", FanOutPlan("single")).process(
    ...     ExampleBatch("s", 0, 0, [1, 2, 3], [{"a": 1.0}, {"a": 2.0}, {"a": 3.0}], [0, 0, 0]))[0]
    >>> LearnerTask(LearnerSpec("nb", "river.naive_bayes.GaussianNB"), 0).process(fold_batch).y_pred
    [-1, 0, 0]
    """

    def __init__(self, spec: LearnerSpec, fold: int, prequential: bool = True):
        self.spec = spec
        self.fold = fold
        self.prequential = prequential
        self.model = spec.build()
        self._weighted = takes_weight(self.model)

    def process(self, batch: FoldBatch) -> PredictionBatch:
        model, prequential, weighted = self.model, self.prequential, self._weighted
        codes = {label: code for code, label in enumerate(batch.classes)}
        lags = batch.lags if self.spec.lags else None
        n_lags = self.spec.lags
        y_pred: list[int] = []
        scored: list[bool] = []
        for i, (x, w) in enumerate(zip(batch.xs, batch.weights)):
            if lags is not None:
                x = {**x, **lag_features(lags[i][:n_lags])}
            if prequential or w == 0:
                # A prediction of None (learner not ready) or of an unknown label scores as wrong.
                y_pred.append(codes.get(model.predict_one(x), -1))
                scored.append(True)
            else:
                y_pred.append(-1)
                scored.append(False)
            if w > 0:
                label = batch.classes[batch.y[i]]
                if weighted:
                    model.learn_one(x, label, w=w)
                else:
                    for _ in range(w):
                        model.learn_one(x, label)
        return PredictionBatch(batch.stream, batch.fold, self.spec.name, batch.seq, batch.start,
                               batch.y, batch.prev_y, y_pred, scored, batch.classes, batch.final)

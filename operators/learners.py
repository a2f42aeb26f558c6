"""The learner task: one river classifier on one fold, predict then train (docs/method.md §2, §9)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from foldstream.operators.models import CLASSIFIER, check
from foldstream.operators.moa import MoaClassifier, is_moa
from foldstream.operators.weights import derive_seed
from foldstream.operators.delay import ARRIVAL, LABEL, DelayFoldBatch, DelayPredictionBatch
from foldstream.operators.records import FoldBatch, Label, PredictionBatch, error_text

LEARNER_ERRORS = (Exception, SystemExit, KeyboardInterrupt)
"""What learner code may raise that quarantines its replica: any exception, and ``SystemExit``
and ``KeyboardInterrupt`` too (a learner's own, not a signal's: the engines run learners where a
signal does not raise, and a Ctrl-C stops the run instead, job/engines/stopping.py)."""


def build_model(model: str, params: dict[str, Any] | None = None, args: list[Any] | None = None):
    """Instantiate a model from its dotted path; nested ``{"model": ...}`` values are built too.

    Everything is checked first (:func:`foldstream.operators.models.check`: the classes are of
    the kind their key promises, the values of the types their parameters admit), then built;
    any error is a :class:`~foldstream.operators.models.SpecError` naming its key.

    >>> pipeline = build_model("river.compose.Pipeline", args=[
    ...     {"model": "river.preprocessing.StandardScaler"},
    ...     {"model": "river.linear_model.LogisticRegression", "params": {"l2": 0.1}}])
    >>> [type(step).__name__ for step in pipeline.steps.values()], pipeline["LogisticRegression"].l2
    (['StandardScaler', 'LogisticRegression'], 0.1)
    >>> build_model("river.tree.HoeffdingTreeClassifier", {"grace_period": "abc"})
    Traceback (most recent call last):
    foldstream.operators.models.SpecError: params.grace_period: expected a number, got a text: 'abc'
    """
    return check(model, params, args, CLASSIFIER).build()


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


def check_classifier(model: Any) -> None:
    """Raise ``ValueError`` unless ``model`` has what a learner task calls: ``predict_one``,
    ``learn_one`` and a ``clone`` that works (every fold trains a clone: one that fails, or
    returns the object itself or anything but an object of the model's own class, is refused
    at start, not at the first task).

    >>> check_classifier(object())
    Traceback (most recent call last):
    ValueError: object has no predict_one(): not a river classifier
    """
    for method in ("predict_one", "learn_one", "clone"):
        if not callable(getattr(model, method, None)):
            raise ValueError(f"{type(model).__name__} has no {method}(): not a river classifier")
    from river.compose import Pipeline
    from river.utils.inspect import isclassifier, isregressor

    if isregressor(model) and not isclassifier(model):
        raise ValueError(f"{type(model).__name__} is a regressor: it predicts numbers, and "
                         f"foldstream evaluates classifiers")
    if isinstance(model, Pipeline) and not isclassifier(model):
        raise ValueError("the pipeline does not end with a classifier")
    name = type(model).__name__
    try:
        clone = model.clone()
    except LEARNER_ERRORS as exc:  # any failure, named (SystemExit and Ctrl-C from clone() too)
        raise ValueError(f"{name}.clone() failed, and every fold trains a "
                         f"clone: {type(exc).__name__}: {exc}") from None
    if clone is model:
        raise ValueError(f"{name}.clone() returned the object itself: every fold would train "
                         f"that one object; clone() must return a new, untrained {name}")
    if type(clone) is not type(model):
        what = "None" if clone is None else f"a {type(clone).__name__}"
        raise ValueError(f"{name}.clone() returned {what}, not a {name}: every fold trains "
                         f"a clone, so it must be one of the same kind")


@dataclass
class LearnerSpec:
    """A learner under test, as configured (picklable).

    ``prototype`` is a model object given in Python (``foldstream.evaluate``), which YAML
    cannot express: every task then trains its own ``prototype.clone()`` and the object itself
    is never trained; ``model`` only names its class. It pickles with the spec (Flink state),
    so its class must be importable where the tasks run.

    >>> from river.naive_bayes import GaussianNB
    >>> prototype = GaussianNB()
    >>> spec = LearnerSpec("nb", "river.naive_bayes.GaussianNB", prototype=prototype)
    >>> model = spec.build()
    >>> model is prototype, type(model).__name__
    (False, 'GaussianNB')
    """

    name: str
    model: str
    params: dict[str, Any] = field(default_factory=dict)
    args: list[Any] = field(default_factory=list)
    lags: int = 0  # previous labels added as features (docs/method.md §9); 0: no wrapper
    prototype: Any = None  # a model object to clone instead of building ``model``
    fold_seeds: bool = False  # each fold's `seed` parameters derived from (seed, fold)
    options: str = ""  # a MOA learner's option string (``model`` starts with ``moa.``)
    jvm_options: tuple[str, ...] = ()  # a MOA learner's JVM options (engine.jvm_options)

    def build(self, fold: int | None = None):
        """A fresh model: never a shared or pre-trained instance.

        With ``fold_seeds`` and a ``fold``, every ``seed`` parameter (of the model and of the
        models nested in its parameters) becomes :func:`~foldstream.operators.weights.derive_seed`
        of its value and the fold, so the ``k`` folds are independent replicas of a randomised
        design (Bifet et al. 2015; docs/method.md §14). For a ``prototype`` object, only its own
        ``seed`` parameter is derived (river's ``clone`` takes top-level parameters).

        >>> spec = LearnerSpec("bag", "river.ensemble.BaggingClassifier", params={
        ...     "model": {"model": "river.naive_bayes.GaussianNB"}, "n_models": 2, "seed": 1},
        ...     fold_seeds=True)
        >>> spec.build(0).seed != spec.build(1).seed, spec.build(1).seed == spec.build(1).seed
        (True, True)
        """
        derive = self.fold_seeds and fold is not None
        if is_moa(self.model):  # MOA's classifiers (operators/moa.py)
            return MoaClassifier(self.model, self.options, fold if derive else None,
                                 self.jvm_options, self.params.get("seed"))
        if self.prototype is not None:
            if derive and "seed" in self.prototype._get_params():
                return self.prototype.clone({"seed": derive_seed(self.prototype.seed, fold)})
            return self.prototype.clone()
        params, args = self.params, self.args
        if derive:
            params, args = fold_seeded(params, fold), fold_seeded(args, fold)
        return build_model(self.model, params, args).clone()


def fold_seeded(value: Any, fold: int) -> Any:
    """``value`` (parameters, arguments, nested model specs) with every ``seed`` derived for
    ``fold``.

    >>> fold_seeded({"seed": 1, "model": {"model": "m", "params": {"seed": 1}}}, 0) == \\
    ...     {"seed": derive_seed(1, 0), "model": {"model": "m", "params": {"seed": derive_seed(1, 0)}}}
    True
    """
    if isinstance(value, dict):
        return {k: derive_seed(v, fold) if k == "seed" else fold_seeded(v, fold)
                for k, v in value.items()}
    if isinstance(value, list):
        return [fold_seeded(v, fold) for v in value]
    return value


class LearnerBuildError(ValueError):
    """A (learner, fold) replica could not be made: building or cloning its model raised
    (whatever it raised, ``SystemExit`` and ``KeyboardInterrupt`` included); the message names
    the learner as ``learners.<name>``."""


class LearnerTask:
    """One (learner, fold) replica: predicts then trains on the fold's batches.

    A replica whose ``predict_one`` or ``learn_one`` raises is quarantined, not fatal: the
    exception is kept in :attr:`failed` and carried once, on the batch where it happened, as
    :attr:`PredictionBatch.error <foldstream.operators.records.PredictionBatch>` (the aggregator
    writes it as a ``learner_error`` record with the report that covers its position). From that
    example on, the replica neither predicts nor learns: its predictions are none (-1), which
    score as wrong, like a learner that is not ready. Scoring and pairing stay as they were (the
    same examples are scored), so the comparisons with the other learners remain paired; the
    example where ``learn_one`` raised keeps the prediction already made.

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
        try:
            self.model = spec.build(fold)
        except LEARNER_ERRORS as exc:
            raise LearnerBuildError(f"learners.{spec.name}: its model for fold {fold} could not "
                                    f"be built or cloned: {error_text(exc)}") from None
        self._weighted = takes_weight(self.model)
        self.failed: tuple[int, str, str] | None = None  # (position, phase, error) once it raised

    def process(self, batch: FoldBatch | DelayFoldBatch) -> PredictionBatch | DelayPredictionBatch:
        if isinstance(batch, DelayFoldBatch):
            return self._process_delayed(batch)
        model, prequential, weighted = self.model, self.prequential, self._weighted
        if self.failed is None and hasattr(model, "run_batch"):  # MOA's: one call per batch
            y_pred, scored, error = model.run_batch(batch, prequential, self.spec.lags)
            self.failed = error
            return PredictionBatch(batch.stream, batch.fold, self.spec.name, batch.seq,
                                   batch.start, batch.y, batch.prev_y, y_pred, scored,
                                   batch.classes, batch.final, error)
        codes = {label: code for code, label in enumerate(batch.classes)}
        lags = batch.lags if self.spec.lags else None
        n_lags = self.spec.lags
        y_pred: list[int] = []
        scored: list[bool] = []
        error: tuple[int, str, str] | None = None
        healthy = self.failed is None
        done = 0
        if healthy and prequential and lags is None:
            done, error = self._prequential_run(batch, codes, y_pred)
            scored = [True] * done
            healthy = error is None
        for i, (x, w) in enumerate(zip(batch.xs[done:], batch.weights[done:]), start=done):
            if lags is not None and healthy:
                x = {**x, **lag_features(lags[i][:n_lags])}
            phase = "predict"
            try:
                if prequential or w == 0:
                    # A prediction of None (learner not ready) or of an unknown label scores as
                    # wrong; so does every prediction of a quarantined replica.
                    y_pred.append(codes.get(model.predict_one(x), -1) if healthy else -1)
                    scored.append(True)
                else:
                    y_pred.append(-1)
                    scored.append(False)
                if w > 0 and healthy:
                    phase = "learn"
                    label = batch.classes[batch.y[i]]
                    if weighted:
                        model.learn_one(x, label, w=w)
                    else:
                        for _ in range(w):
                            model.learn_one(x, label)
            except LEARNER_ERRORS as exc:  # any learner bug: quarantine the replica
                if phase == "predict":
                    y_pred.append(-1)
                    scored.append(True)
                error = self.failed = (batch.start + i + 1, phase, error_text(exc))
                healthy = False
        return PredictionBatch(batch.stream, batch.fold, self.spec.name, batch.seq, batch.start,
                               batch.y, batch.prev_y, y_pred, scored, batch.classes, batch.final,
                               error)

    def _prequential_run(self, batch: FoldBatch, codes: dict,
                         y_pred: list[int]) -> tuple[int, tuple[int, str, str] | None]:
        """The common case of :meth:`process` as one tight loop (a healthy replica, prequential,
        no lags): predict, then learn with the fold's weight, appending to ``y_pred``. Returns
        how many examples it completed and the error that quarantined the replica (then the
        general loop goes on with the rest, as a quarantined replica's)."""
        model, append, get = self.model, y_pred.append, codes.get
        predict, learn = model.predict_one, model.learn_one
        classes = batch.classes
        labels = [classes[code] for code in batch.y]
        weighted = self._weighted
        phase, p = "predict", -1
        try:
            for x, w, label in zip(batch.xs, batch.weights, labels):
                phase = "predict"
                p = get(predict(x), -1)
                phase = "learn"
                if w > 0:
                    if weighted:
                        learn(x, label, w=w)
                    elif w == 1:
                        learn(x, label)
                    else:
                        for _ in range(w):
                            learn(x, label)
                append(p)
        except LEARNER_ERRORS as exc:  # any learner bug: quarantine the replica
            done = len(y_pred)
            append(-1 if phase == "predict" else p)
            self.failed = (batch.start + done + 1, phase, error_text(exc))
            return done + 1, self.failed
        return len(y_pred), None

    def _process_delayed(self, batch: DelayFoldBatch) -> DelayPredictionBatch:
        """Delayed labels (docs/method.md §13): predict at each arrival, train at each label.

        The prediction is passed on, not held: the fold evaluator holds it until the label."""
        model, prequential, weighted = self.model, self.prequential, self._weighted
        classes = batch.classes
        codes = {label: code for code, label in enumerate(classes)}
        n_lags = self.spec.lags
        events: list[tuple] = []
        y_pred: list[int] = []
        scored: list[bool] = []
        error: tuple[int, str, str] | None = None
        for event in batch.events:
            kind = event[0]
            if kind == ARRIVAL:
                _, key, position, x, w, prev, lags = event
                events.append((ARRIVAL, key, position, prev))
                score = prequential or w == 0
                scored.append(score)
                pred = -1
                if score and self.failed is None:
                    if n_lags:
                        x = {**x, **lag_features(lags[:n_lags])}
                    try:
                        pred = codes.get(model.predict_one(x), -1)
                    except LEARNER_ERRORS as exc:  # quarantine, as in process()
                        error = self.failed = (position, "predict", error_text(exc))
                y_pred.append(pred)
            elif kind == LABEL:
                _, key, position, x, w, y, lags = event
                events.append((LABEL, key, position, y))
                if w > 0 and self.failed is None:
                    if n_lags:
                        x = {**x, **lag_features(lags[:n_lags])}
                    label = classes[y]
                    try:
                        if weighted:
                            model.learn_one(x, label, w=w)
                        else:
                            for _ in range(w):
                                model.learn_one(x, label)
                    except LEARNER_ERRORS as exc:
                        error = self.failed = (position, "learn", error_text(exc))
            else:
                events.append(event)
        return DelayPredictionBatch(batch.stream, batch.fold, self.spec.name, batch.seq, events,
                                    y_pred, scored, classes, batch.final, error)

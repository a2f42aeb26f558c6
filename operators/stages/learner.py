"""The learner task: one river classifier on one fold, predict then train (docs/method.md §2, §9)."""

from __future__ import annotations

import collections
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from foldstream.operators.learners.models import CLASSIFIER, check, is_pipeline
from foldstream.operators.learners.moa import MoaClassifier, is_moa
from foldstream.operators.stats.weights import derive_seed
from foldstream.operators.stages.delay import DelayFoldBatch, DelayPredictionBatch
from foldstream.operators.stages.messages import (
    Arrival, ArrivalSeen, LearnerError, Labelling, LabellingSeen
)
from foldstream.operators.records.base import (
    FoldBatch, Label, LearnerCost, PredictionBatch, error_text
)
from foldstream.operators.learners.baselines import no_change_batch
from foldstream.operators.learners.fitting import learn, scored_flags, scores, takes_weight
from foldstream.operators.learners.lags import lag_key

LEARNER_ERRORS = (Exception, SystemExit, KeyboardInterrupt)
"""What learner code may raise that quarantines its replica: any exception, and ``SystemExit``
and ``KeyboardInterrupt`` too (a learner's own, not a signal's: the engines run learners where a
signal does not raise, and a Ctrl-C stops the run instead, job/engines/stopping.py)."""


def build_model(model: str, params: dict[str, Any] | None = None, args: list[Any] | None = None):
    """Instantiate a model from its dotted path; nested ``{"model": ...}`` values are built too.

    Everything is checked first (:func:`foldstream.operators.learners.models.check`: the classes are of
    the kind their key promises, the values of the types their parameters admit), then built;
    any error is a :class:`~foldstream.operators.learners.models.SpecError` naming its key.

    >>> pipeline = build_model("river.compose.Pipeline", args=[
    ...     {"model": "river.preprocessing.StandardScaler"},
    ...     {"model": "river.linear_model.LogisticRegression", "params": {"l2": 0.1}}])
    >>> [type(step).__name__ for step in pipeline.steps.values()], pipeline["LogisticRegression"].l2
    (['StandardScaler', 'LogisticRegression'], 0.1)
    >>> build_model("river.tree.HoeffdingTreeClassifier", {"grace_period": "abc"})
    Traceback (most recent call last):
    foldstream.operators.learners.models.SpecError: params.grace_period: expected a number, got a text: 'abc'
    """
    return check(model, params, args, CLASSIFIER).build()


class LagEncoder:
    """The temporally augmented features (Žliobaitė et al. §3.2): the previous labels, one-hot.

    For each of the ``n`` lags, one indicator per label seen so far as a lag, every one of them
    present, 1.0 for the lag's label and 0.0 for the others (0.0 for all while the stream has
    fewer than ``n`` previous labels). Present zeros matter: river's and MOA's learners read an
    absent feature as missing, so indicators of the present label alone carry no information.
    The labels are kept in order of first appearance: the state of one learner task, the same
    whatever the batches' boundaries.

    >>> encoder = LagEncoder(1)
    >>> encoder.features(("up",))
    {'y_lag1=up': 1.0}
    >>> encoder.features(("down",))
    {'y_lag1=up': 0.0, 'y_lag1=down': 1.0}
    >>> LagEncoder(2).features(("up",))
    {'y_lag1=up': 1.0, 'y_lag2=up': 0.0}
    """

    __slots__ = ("n", "labels")

    def __init__(self, n: int):
        self.n = n
        self.labels: dict[Label, None] = {}  # labels seen as lags, in order of first appearance

    def __getstate__(self):
        return self.n, list(self.labels)

    def __setstate__(self, state):
        self.n, labels = state
        self.labels = dict.fromkeys(labels)

    def features(self, lags: tuple[Label, ...]) -> dict[str, float]:
        """The features of one example whose previous labels, most recent first, are ``lags``."""
        lags = lags[:self.n]
        for label in lags:
            if label not in self.labels:
                self.labels[label] = None
        out: dict[str, float] = {}
        for i in range(self.n):
            lag = lags[i] if i < len(lags) else _NO_LAG
            for label in self.labels:
                out[lag_key(i + 1, label)] = 1.0 if label == lag else 0.0
        return out

    def add_to(self, x: dict[str, Any], lags: tuple[Label, ...]) -> dict[str, Any]:
        """``x`` with the lag features of ``lags`` (a new mapping: ``x`` is the batch's)."""
        return {**x, **self.features(lags)}


_NO_LAG = object()  # the lag of an example with fewer previous labels: equal to no label


def lag_encoder(spec: "LearnerSpec") -> LagEncoder | None:
    """The lag encoder of a learner task of ``spec``; none without ``lags``."""
    return LagEncoder(spec.lags) if spec.lags else None


def _river_predict_one():
    from river.base import Classifier

    return Classifier.predict_one


_RIVER_PREDICT_ONE = _river_predict_one()


def _batch_methods() -> dict[type, Any]:
    from river.dummy import NoChangeClassifier

    return {NoChangeClassifier: no_change_batch}


_BATCH_METHODS = _batch_methods()
"""River's models that a learner task runs a batch at a time (their exact class: a subclass may
change what a call does), by a function with the predictions and the state of predicting then
learning each example in turn: ``(model, y, weights, scored, classes) -> predicted codes``."""


def gives_scores(model: Any) -> bool:
    """Whether ``model`` gives class scores: a MOA classifier (its votes), or a river
    classifier with its own ``predict_proba_one`` (river's base class raises
    ``NotImplementedError`` there); a pipeline, when its last step does.

    >>> from river import dummy, linear_model, multiclass, naive_bayes
    >>> gives_scores(naive_bayes.GaussianNB()), gives_scores(dummy.NoChangeClassifier())
    (True, True)
    >>> gives_scores(multiclass.OneVsOneClassifier(linear_model.LogisticRegression()))
    False
    """
    from river.base import Classifier

    if hasattr(model, "keep_scores"):  # MOA's
        return True
    if is_pipeline(model):
        return gives_scores(list(model.steps.values())[-1])
    proba = getattr(type(model), "predict_proba_one", None)
    return proba is not None and proba is not Classifier.predict_proba_one


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
    from river.utils.inspect import isclassifier, isregressor

    if isregressor(model) and not isclassifier(model):
        raise ValueError(f"{type(model).__name__} is a regressor: it predicts numbers, and "
                         f"foldstream evaluates classifiers")
    if is_pipeline(model) and not isclassifier(model):
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
    scores: bool = False  # keep each prediction's class scores (evaluation.scores)

    def build(self, fold: int | None = None):
        """A fresh model: never a shared or pre-trained instance.

        With ``fold_seeds`` and a ``fold``, every ``seed`` parameter (of the model and of the
        models nested in its parameters) becomes :func:`~foldstream.operators.stats.weights.derive_seed`
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
        if is_moa(self.model):  # MOA's classifiers (operators/learners/moa/)
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


_ATOMS = (int, float, complex, str, bytes, bool, type(None))
_SEQUENCES = (list, tuple, set, frozenset, collections.deque)
#: bytes of one entry of a dict (hash, key, value) and of a sequence (a pointer)
_DICT_ENTRY, _SLOT = 24, 8


def model_size(model: Any) -> int:
    """An estimate of a Python model's memory from its contents: every object it reaches (its
    attributes, the items of its dicts, lists, tuples, sets and deques, numpy arrays' data),
    each reached object counted once, values (numbers, strings) where they occur.

    Unlike ``sys.getsizeof`` summed (river's ``_raw_memory_usage``), it counts a container by
    its length, not by what its allocator reserved, and a value by itself, not by whether
    equal values happen to be one object: both differ between a model built example by example
    and the same model restored from a pickle, so this estimate is the same on every engine,
    for every batch size, from run to run. Objects of other kinds (a random generator, a
    compiled function) count their own ``sys.getsizeof`` only.

    >>> model_size([1.5, 1.5]) == model_size([1.5, float("1.5")])
    True
    >>> model_size({"a": [1, 2]}) > model_size({"a": [1]})
    True
    """
    import numpy as np

    seen: set[int] = set()
    stack = [model]
    size = 0
    while stack:
        obj = stack.pop()
        if isinstance(obj, _ATOMS):
            size += sys.getsizeof(obj)
            continue
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        kind = type(obj)
        if isinstance(obj, dict):
            size += sys.getsizeof({}) + _DICT_ENTRY * len(obj)
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, _SEQUENCES):
            size += sys.getsizeof(kind()) + _SLOT * len(obj)
            stack.extend(obj)
        elif isinstance(obj, np.ndarray):
            size += sys.getsizeof(np.empty(0)) + obj.nbytes
            if obj.dtype == object:
                stack.extend(obj.ravel().tolist())
        else:
            size += sys.getsizeof(obj)
            state = getattr(obj, "__dict__", None)
            if isinstance(state, dict):
                size += sys.getsizeof({}) + _DICT_ENTRY * len(state)
                stack.extend(state.values())
            for name in getattr(kind, "__slots__", ()):
                if isinstance(name, str) and hasattr(obj, name):
                    stack.append(getattr(obj, name))
    return size


class LearnerTask:
    """One (learner, fold) replica: predicts then trains on the fold's batches.

    A replica whose ``predict_one`` or ``learn_one`` raises is quarantined, not fatal: the
    exception is kept in :attr:`failed` and carried once, on the batch where it happened, as
    :attr:`PredictionBatch.error <foldstream.operators.records.base.PredictionBatch>` (the aggregator
    writes it as a ``learner_error`` record with the report that covers its position). From that
    example on, the replica neither predicts nor learns: its predictions are none (-1), which
    score as wrong, like a learner that is not ready. Scoring and pairing stay as they were (the
    same examples are scored), so the comparisons with the other learners remain paired; the
    example where ``learn_one`` raised keeps the prediction already made.

    >>> from foldstream.operators.stages.fanout import FanOut, FanOutPlan
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
        self.failed: LearnerError | None = None  # once it raised
        self.lag_encoder = lag_encoder(spec)
        if spec.scores and hasattr(self.model, "keep_scores"):
            self.model.keep_scores = True
        self.cpu_predict_s = 0.0  # CPU seconds of this thread in predict_one / learn_one
        self.cpu_learn_s = 0.0

    def __setstate__(self, state):
        """A task pickled before it kept a lag encoder gets a fresh one (and before it
        counted its CPU time, counts from there)."""
        self.__dict__.update(state)
        if "lag_encoder" not in state:
            self.lag_encoder = lag_encoder(self.spec)
        self.__dict__.setdefault("cpu_predict_s", 0.0)
        self.__dict__.setdefault("cpu_learn_s", 0.0)

    def cost(self, final: bool) -> LearnerCost | None:
        """What the replica has cost, on the final batch (else ``None``): its CPU seconds in
        predict and learn (MOA's: measured in Java, :meth:`MoaClassifier.cpu_seconds`), and
        the size of its model, the length of its pickle (MOA's ``measureByteSize`` needs a
        Java agent that ``engine.jvm_options`` refuses; a serialised size is also the same
        on every engine)."""
        if not final:
            return None
        timed = getattr(self.model, "cpu_seconds", None)
        predict, learn = timed() if timed is not None else (self.cpu_predict_s, self.cpu_learn_s)
        measured = getattr(self.model, "size_bytes", None)  # MOA's: its Java serialisation
        size = measured() if measured is not None else model_size(self.model)
        return LearnerCost(round(predict, 6), round(learn, 6), size)

    def process(self, batch: FoldBatch | DelayFoldBatch) -> PredictionBatch | DelayPredictionBatch:
        if isinstance(batch, DelayFoldBatch):
            return self._process_delayed(batch)
        prequential = self.prequential
        scored = scored_flags(prequential, batch.weights)
        encoder = self.lag_encoder
        xs = batch.xs if encoder is None or self.failed is not None else \
            [encoder.add_to(x, lags) for x, lags in zip(batch.xs, batch.lags)]
        keep = self.spec.scores
        if self.failed is not None:  # quarantined: no prediction, nothing learned
            y_pred, error = [-1] * len(scored), None
            kept = [0.0] * (len(batch.classes) * len(scored)) if keep else None
        elif hasattr(self.model, "run_batch"):  # MOA's: one call per batch
            return self.finish(batch, self.model.run_batch(batch, prequential, xs))
        elif not keep and type(self.model) in _BATCH_METHODS:
            y_pred, kept, error = self._run_batch(batch, scored), None, None
        else:
            y_pred, kept, error = self._predict_learn(batch, xs, scored, bool(keep))
        return self._predictions(batch, y_pred, scored, error, kept)

    def splits(self, batch: FoldBatch | DelayFoldBatch) -> bool:
        """Whether :meth:`start` may hand ``batch`` to another thread: a MOA learner's
        undelayed batch, the replica not quarantined."""
        return (self.failed is None and isinstance(batch, FoldBatch)
                and hasattr(self.model, "start_batch"))

    def start(self, batch: FoldBatch, threads: int) -> Any:
        """:meth:`process` of a batch that :meth:`splits`, up to the learner's answer, which
        Java's pool of ``threads`` threads works on meanwhile; :meth:`collect` takes it."""
        encoder = self.lag_encoder
        xs = batch.xs if encoder is None else \
            [encoder.add_to(x, lags) for x, lags in zip(batch.xs, batch.lags)]
        return self.model.start_batch(batch, self.prequential, xs, threads)

    def collect(self, batch: FoldBatch, started: Any) -> PredictionBatch:
        """The predictions of ``batch``, whose :meth:`start` gave ``started``."""
        return self.finish(batch, self.model.finish_batch(started))

    def finish(self, batch: FoldBatch, result: tuple) -> PredictionBatch:
        """The predictions of ``batch`` from the batch path's (y_pred, scored, error), with
        the MOA learner's kept scores when a score-based measure is configured."""
        y_pred, scored, error = result
        if error is not None:
            error = self.failed = LearnerError(*error)
        kept = None
        if self.spec.scores:
            k = len(batch.classes)
            kept = self.model.scores
            if kept is None or len(kept) != k * len(scored):  # Java failed before growing
                kept = [0.0] * (k * len(scored))
        return self._predictions(batch, y_pred, scored, error, kept)

    def _predictions(self, batch: FoldBatch, y_pred: list[int], scored: list[bool],
                     error: LearnerError | None, kept: list[float] | None) -> PredictionBatch:
        return PredictionBatch(
            stream=batch.stream, fold=batch.fold, learner=self.spec.name, seq=batch.seq,
            start=batch.start, y=batch.y, prev_y=batch.prev_y, y_pred=y_pred, scored=scored,
            classes=batch.classes, final=batch.final, error=error, scores=kept, keys=batch.keys,
            cost=self.cost(batch.final))

    def _predict_learn(self, batch: FoldBatch, xs: list[dict], scored: list[bool],
                       keep: bool = False
                       ) -> tuple[list[int], list[float] | None, LearnerError | None]:
        """Each example in turn: predict (where ``scored``), then learn with its weight; the CPU
        seconds of the batch added to :attr:`cpu_predict_s` and :attr:`cpu_learn_s`
        (:meth:`_spent`).

        A prediction of ``None`` (learner not ready) or of an unknown label scores as wrong
        (-1). With ``keep``, each prediction's class scores are kept too (:meth:`_scores`;
        ``None`` otherwise): one score per class of the batch, 0.0 for a class the learner gives
        none and for an example not predicted. Returns the predictions, the kept scores and the
        error that quarantined the replica, if one raised: the examples after it get none (-1);
        where ``learn_one`` raised, the prediction already made stands."""
        model, weighted = self.model, self._weighted
        classes = batch.classes
        get = {label: code for code, label in enumerate(classes)}.get
        predict = model.predict_one
        guess = self._scores(model, classes, get) if keep else None
        nothing = [0.0] * len(classes) if keep else None
        y_pred: list[int] = []
        append = y_pred.append
        kept: list[float] | None = [] if keep else None
        phase, p, row = "predict", -1, nothing
        clock = time.perf_counter  # splits the thread's CPU time, read twice (split_cpu)
        spent_predict = spent_learn = 0.0
        cpu = time.thread_time()
        then = clock()
        try:
            for x, w, code, score in zip(xs, batch.weights, batch.y, scored):
                phase = "predict"
                if not score:
                    p, row = -1, nothing
                elif guess is None:
                    p = get(predict(x), -1)
                else:
                    p, row = guess(x)
                now = clock()
                spent_predict += now - then
                phase = "learn"
                if w > 0:
                    learn(model, x, classes[code], w, weighted)
                then = clock()
                spent_learn += then - now
                append(p)
                if kept is not None:
                    kept += row
        except LEARNER_ERRORS as exc:  # any learner bug: quarantine the replica
            self._spent(time.thread_time() - cpu, spent_predict, spent_learn)
            done = len(y_pred)
            append(-1 if phase == "predict" else p)
            y_pred += [-1] * (len(scored) - done - 1)
            if kept is not None:
                kept += nothing if phase == "predict" else row
                kept += nothing * (len(scored) - done - 1)
            self.failed = LearnerError(batch.start + done + 1, phase, error_text(exc))
            return y_pred, kept, self.failed
        self._spent(time.thread_time() - cpu, spent_predict, spent_learn)
        return y_pred, kept, None

    def _spent(self, cpu: float, predict_wall: float, learn_wall: float) -> None:
        """Add ``cpu`` seconds of this thread to :attr:`cpu_predict_s` and
        :attr:`cpu_learn_s`, split as the wall time of the two phases is: the wall clock is
        read per example without a system call, the thread's CPU time only per batch."""
        wall = predict_wall + learn_wall
        predicted = cpu * (predict_wall / wall) if wall > 0 else cpu
        self.cpu_predict_s += predicted
        self.cpu_learn_s += cpu - predicted

    def _run_batch(self, batch: FoldBatch, scored: list[bool]) -> list[int]:
        """The predictions of a model of :data:`_BATCH_METHODS`, the batch at once (its CPU
        seconds counted as learning)."""
        then = time.thread_time()
        try:
            return _BATCH_METHODS[type(self.model)](self.model, batch.y, batch.weights, scored,
                                                    batch.classes)
        finally:
            self.cpu_learn_s += time.thread_time() - then

    @staticmethod
    def _scores(model: Any, classes: list, get) -> Any:
        """A function of ``x`` giving the predicted code and the class scores (river's
        ``predict_proba_one``, one per class of ``classes``). The label is the one
        ``predict_one`` gives: read off the same probabilities when the model keeps river's own
        ``predict_one``, asked of it otherwise."""
        proba = model.predict_proba_one
        own_predict = None if type(model).predict_one is _RIVER_PREDICT_ONE else model.predict_one

        def guess(x: dict) -> tuple[int, list[float]]:
            probabilities = proba(x)
            row = [probabilities.get(label, 0.0) for label in classes]
            if own_predict is not None:
                return get(own_predict(x), -1), row
            return (get(max(probabilities, key=probabilities.get), -1)
                    if probabilities else -1), row

        return guess

    def _process_delayed(self, batch: DelayFoldBatch) -> DelayPredictionBatch:
        """Delayed labels (docs/method.md §13): predict at each arrival, train at each label.

        The prediction is passed on, not held: the fold evaluator holds it until the label."""
        model, prequential, weighted = self.model, self.prequential, self._weighted
        classes = batch.classes
        codes = {label: code for code, label in enumerate(classes)}
        encoder = self.lag_encoder
        events: list = []
        y_pred: list[int] = []
        scored: list[bool] = []
        error: LearnerError | None = None
        for event in batch.events:
            kind = type(event)
            if kind is Arrival:
                events.append(ArrivalSeen(event.key, event.position, event.prev))
                score = scores(prequential, event.weight)
                scored.append(score)
                pred = -1
                if score and self.failed is None:
                    x = event.x
                    if encoder is not None:
                        x = encoder.add_to(x, event.lags)
                    try:
                        then = time.thread_time()
                        pred = codes.get(model.predict_one(x), -1)
                        self.cpu_predict_s += time.thread_time() - then
                    except LEARNER_ERRORS as exc:  # quarantine, as in process()
                        error = self.failed = LearnerError(event.position, "predict",
                                                           error_text(exc))
                y_pred.append(pred)
            elif kind is Labelling:
                events.append(LabellingSeen(event.key, event.position, event.y))
                if event.weight > 0 and self.failed is None:
                    x = event.x
                    if encoder is not None:
                        x = encoder.add_to(x, event.lags)
                    try:
                        then = time.thread_time()
                        learn(model, x, classes[event.y], event.weight, weighted)
                        self.cpu_learn_s += time.thread_time() - then
                    except LEARNER_ERRORS as exc:
                        error = self.failed = LearnerError(event.position, "learn",
                                                           error_text(exc))
            else:
                events.append(event)
        return DelayPredictionBatch(
            stream=batch.stream, fold=batch.fold, learner=self.spec.name, seq=batch.seq,
            events=events, y_pred=y_pred, scored=scored, classes=classes, final=batch.final,
            error=error, cost=self.cost(batch.final))


def process_all(work: Sequence[tuple[LearnerTask, FoldBatch | DelayFoldBatch]],
                threads: int = 1) -> Iterator[PredictionBatch | DelayPredictionBatch]:
    """Each ``(task, batch)`` of ``work`` processed, the predictions yielded in ``work``'s order
    (:meth:`LearnerTask.process` of each in turn gives the same, object for object).

    With ``threads`` above 1, the batches of MOA's learners (:meth:`LearnerTask.splits`) are
    handed to Java's pool of that many threads ahead of their turn, so the folds learn side by
    side while this thread takes the answers in order (:class:`FoldQueue`, which can also keep
    the last batches in Java while the caller reads the next).

    >>> from foldstream.operators.stages.fanout import FanOut, FanOutPlan
    >>> from foldstream.operators.records.base import ExampleBatch
    >>> batches = FanOut("s", FanOutPlan("bootstrap", folds=2)).process(
    ...     ExampleBatch("s", 0, 0, [1, 2], [{"a": 1.0}, {"a": 2.0}], [0, 1]))
    >>> spec = LearnerSpec("nb", "river.naive_bayes.GaussianNB")
    >>> [p.fold for p in process_all([(LearnerTask(spec, b.fold), b) for b in batches], 2)]
    [0, 1]
    """
    return FoldQueue(threads).run(work)


class _Queued:
    """A learner task's batch in a :class:`FoldQueue`: ``started`` its Java call once handed
    over; ``feed`` the :meth:`FoldQueue.run` call that brought it."""

    __slots__ = ("task", "batch", "started", "feed")

    def __init__(self, task: LearnerTask, batch: Any, feed: int):
        self.task, self.batch, self.started, self.feed = task, batch, None, feed


class FoldQueue:
    """The learner tasks' batches of one stream, their predictions taken in the order they came.

    With ``threads`` above 1, a batch of a MOA learner (:meth:`LearnerTask.splits`) is handed
    to Java's pool of that many threads (:meth:`LearnerTask.start`) as soon as its task has no
    earlier batch still in the queue, so the folds learn side by side while this thread takes
    the answers in order and hands each task its next batch before the answer it took is
    evaluated. One thread at a time per model, its batches in order: each task's batches are
    processed in the order they came, whichever thread runs them; the learners' randomness is
    their own (a fold's model draws from its own ``Random``), so which thread runs one and when
    change nothing, and the predictions are those of :meth:`LearnerTask.process` in turn.

    :meth:`run` with ``hold`` leaves the batches it was just given in Java, unanswered, so that
    Java learns them while the caller reads the next examples; the next :meth:`run` (or one
    without ``hold``: the end of the input, a stop) yields their predictions first. With
    ``threads`` 1 nothing is held: each batch is processed in its turn, in this thread.

    >>> from foldstream.operators.stages.fanout import FanOut, FanOutPlan
    >>> from foldstream.operators.records.base import ExampleBatch
    >>> batch = FanOut("s", FanOutPlan("single")).process(
    ...     ExampleBatch("s", 0, 0, [1, 2], [{"a": 1.0}, {"a": 2.0}], [0, 1]))[0]
    >>> task = LearnerTask(LearnerSpec("nb", "river.naive_bayes.GaussianNB"), 0)
    >>> [p.y_pred for p in FoldQueue(2).run([(task, batch)], hold=True)]  # river's: not held
    [[-1, 0]]
    """

    def __init__(self, threads: int = 1):
        self.threads = threads
        self._queue: collections.deque[_Queued] = collections.deque()
        self._ahead = 0  # index in the queue of the next batch to consider handing over
        self._busy: set[int] = set()  # id() of the tasks with a batch looked at ahead
        self._feed = 0

    @property
    def held(self) -> int:
        """Batches given and not yet answered."""
        return len(self._queue)

    def run(self, work: Sequence[tuple[LearnerTask, FoldBatch | DelayFoldBatch]],
            hold: bool = False) -> Iterator[PredictionBatch | DelayPredictionBatch]:
        """The predictions of the batches held from before, then of ``work``'s, in order;
        with ``hold``, up to the first of ``work``'s that is in Java (it and those after it
        are yielded by the next call). The iterator must be consumed to its end."""
        self._feed += 1
        feed = self._feed
        queue = self._queue
        queue.extend(_Queued(task, batch, feed) for task, batch in work)
        while queue:
            self._hand_over()
            head = queue[0]
            if hold and head.feed == feed and head.started is not None:
                return
            queue.popleft()
            self._ahead = max(self._ahead - 1, 0)  # the queue's indices moved by one
            self._busy.discard(id(head.task))
            if head.started is not None:
                predictions = head.task.collect(head.batch, head.started)
                self._hand_over()  # the task's next batch to Java before this one is evaluated
            else:
                predictions = head.task.process(head.batch)
            yield predictions

    def _hand_over(self) -> None:
        """Hand to Java, in order, the batches whose task has none before them in the queue;
        stop at the first whose task has (its earlier batch first)."""
        if self.threads <= 1:
            return
        queue, busy = self._queue, self._busy
        while self._ahead < len(queue):
            item = queue[self._ahead]
            key = id(item.task)
            if key in busy:
                break
            busy.add(key)
            if item.task.splits(item.batch):
                item.started = item.task.start(item.batch, self.threads)
            self._ahead += 1

"""A MOA classifier as a foldstream learner, a batch at a time (docs/method.md §17).

MOA (Bifet et al., https://moa.cms.waikato.ac.nz) is the field's reference catalogue of stream
classifiers, and its learners run an order of magnitude faster than river's. foldstream runs
them in the Python process through JPype: one JVM per process, started on first use.

* **The jar.** MOA 24.07's ``moa.jar`` travels inside the ``capymoa`` wheel on PyPI (capymoa
  itself needs numpy 2.2, which Flink's numpy pin forbids, so it is not installed): the wheel is
  downloaded and the jar copied out into ``$FOLDSTREAM_CACHE`` by :mod:`~foldstream.operators.downloads`,
  checked against :data:`MOA_SHA256`. MOA is GPL-3.0: it is fetched at run time, never shipped.
* **The boundary.** Crossing from Python to Java costs microseconds per call, more than MOA's
  Hoeffding tree spends on an example; so a fold's whole batch crosses at once: the features as
  one ``double[]`` (JPype copies a numpy buffer), the class codes and weights as ``int[]``. The
  Java side (``operators/java/foldstream/moa/FoldLearner.java``, compiled with the JDK's
  ``javac`` on first use and cached beside the jar) predicts then trains each example and hands
  the predictions back as one ``int[]``.
* **The header.** MOA learners read instances against a header: it is built from the stream's
  features as they appear. A feature whose first value is a number is numeric; one whose first
  value is text is nominal, its values in order of appearance (a MOA nominal attribute, so a
  tree splits on it as MOA's would). A missing feature (absent, or ``None``) is MOA's missing
  value. The class attribute's values are foldstream's classes in order of first appearance,
  so MOA's class index is foldstream's class code: a class that appears late is added to the
  header before the batch that carries it (MOA's learners grow their class counts as they see
  classes; a learner that sizes itself from the header at its first instance, such as
  ``functions.Perceptron``, meets later classes as an error, quarantined as below).
* **Semantics.** A fold's weight is the training instance's weight (MOA's
  ``EvaluatePrequentialCV`` does the same). A learner not trained yet, or with no votes, is not
  ready: a ``None`` prediction, scored wrong, as for river; otherwise the prediction is MOA's
  ``Utils.maxIndex`` of the votes (all-zero votes give the first class), as MOA's evaluators
  take it. A learner's random seed is MOA's ``setRandomSeed`` (MOA 24.07 keeps it off the
  command line): ``params: {seed: 7}`` sets it, the one parameter a MOA learner takes (a
  randomised design, ``meta.OzaBag``; a classifier that is not randomizable refuses it), and
  ``fold_seeds`` sets each fold's to :func:`~foldstream.operators.stats.weights.derive_seed` of that
  seed (MOA's default 1 without one) and the fold, as for river's ``seed``. A Java exception
  quarantines the replica as a Python one does (a ``learner_error`` record naming the Java
  class and message).
* **Threads.** The folds of a batch are independent replicas: with ``engine.threads`` above 1
  the engines hand each fold's batch to a pool of that many Java threads
  (:meth:`MoaClassifier.start_batch`, ``FoldLearner.submit``; the order and the one-thread-
  per-model rule are :func:`~foldstream.operators.stages.learner.process_all`'s). A learner's
  randomness is its own ``Random``, seeded per fold, so the thread that runs it changes no
  record.
* **Nested.** A MOA classifier may also be the model of a parameter whose annotation names
  :class:`MoaClassifier`: the ``model`` of :class:`~foldstream.operators.learners.noise.NoiseFilter`
  (``{model: moa.classifiers.trees.HoeffdingTree, options: "-g 100", params: {seed: 3}}``,
  built by :func:`nested`), which keeps the batch path, one crossing per batch. River's own
  ensembles do not take one: they would cross per example and expect river's whole interface.
* **Processes.** JPype's JVM does not survive ``fork``: a process that forks workers after its
  JVM started must spawn them instead (:func:`jvm_running` tells; ``foldstream experiment``
  does so), and each worker starts its own JVM on first use.
* **State.** :class:`MoaClassifier` pickles by Java serialisation of its learner (MOA's
  classifiers are ``Serializable``): the in-process engine's snapshots and Flink's keyed state
  hold those bytes.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, NamedTuple, Sequence

import numpy as np

from foldstream.operators.learners.fitting import scored_flags
from foldstream.operators.learners.moa.jvm import DEFAULT_JVM_OPTIONS, start_jvm
from foldstream.operators.learners.moa.options import _as_error, check_config, cli_string, java_error
from foldstream.operators.records.base import error_text
from foldstream.operators.records.features import FeatureRows
from foldstream.operators.stats.weights import derive_seed

MOA_SEED = 1  # MOA's default random seed, which fold_seeds derives each fold's from
_last_rows: tuple | None = None  # (xs, feature names, rows) of the last batch encoded
_last_java: tuple | None = None  # (rows, the same as a Java double[]) of the last batch sent
_last_arrays: dict[str, tuple] = {}  # role -> (values, length, Java array) of the last batch


def _java_rows(rows: np.ndarray) -> Any:
    """``rows`` as one Java ``double[]`` (a copy of their buffer), made once for the folds of
    a batch, which share its rows (Java only reads it)."""
    global _last_java
    if _last_java is None or _last_java[0] is not rows:
        import jpype

        _last_java = (rows, jpype.JArray.of(np.ascontiguousarray(rows, dtype=np.float64).ravel()))
    return _last_java[1]


def _java_array(role: str, values: Sequence, n: int, dtype: type) -> Any:
    """The first ``n`` of ``values`` as a Java array of ``dtype`` (``np.int32``: ``int[]``,
    ``bool``: ``boolean[]``), made once for the folds of a batch that share the one list
    ``values`` (the class codes; the all-scored flags of :func:`_all_scored`): the last one
    made for each ``role`` is kept, with its list (Java only reads the arrays)."""
    last = _last_arrays.get(role)
    if last is not None and last[0] is values and last[1] == n:
        return last[2]
    import jpype

    array = jpype.JArray.of(np.asarray(values[:n], dtype=dtype))
    _last_arrays[role] = (values, n, array)
    return array


_scored_all: list[bool] = []


def _all_scored(n: int) -> list[bool]:
    """One list of ``n`` ``True`` (never changed), the same object while ``n`` is, so that
    :func:`_java_array` makes its Java array once."""
    global _scored_all
    if len(_scored_all) != n:
        _scored_all = [True] * n
    return _scored_all


class JavaCall(NamedTuple):
    """A learner's batch handed to Java (:meth:`MoaClassifier.send`): ``size`` examples of
    which the first ``rows`` went; ``answer`` Java's predictions, or its ``Future`` of them
    when ``pending``; ``bad``/``reason`` the example whose value the header could not take;
    ``error`` the Java exception raised while handing it over."""

    size: int
    rows: int
    answer: Any
    bad: int | None = None
    reason: str | None = None
    pending: bool = False
    error: Any = None


class BatchCall(NamedTuple):
    """A learner task's batch begun by :meth:`MoaClassifier.start_batch`: its first position,
    which examples are scored, and the Java call."""

    start: int
    scored: list[bool]
    call: JavaCall


class MoaClassifier:
    """A MOA classifier with river's learner interface, plus a batch path.

    ``predict_one``/``learn_one`` serve the delayed-label path; the learner task drives
    :meth:`run_batch` otherwise: one crossing into Java per batch.
    """

    seed: int | None = None  # (a class default: states pickled before it existed lack it)
    #: Whether :meth:`run` keeps each predicted example's scores (its votes divided by their
    #: sum, as MOA's AUC evaluators take them) in :attr:`scores`: set by a learner task when
    #: a score-based measure is configured.
    keep_scores: bool = False
    scores: list[float] | None = None  # the last run's: its examples' rows, one flat list

    def __init__(self, model: str, options: str = "", seed_fold: int | None = None,
                 jvm_options: Sequence[str] = (), seed: int | None = None):
        self.model = model
        self.options = options
        self.seed_fold = seed_fold  # the fold whose seed is derived (fold_seeds), or None
        self.jvm_options = tuple(jvm_options)  # () : DEFAULT_JVM_OPTIONS
        self.seed = seed  # MOA's random seed (None: MOA's own, unless seed_fold derives one)
        self.classes: list[Any] = []
        self.features: dict[str, int] = {}
        self.nominal: dict[int, dict[str, int]] = {}  # feature index -> value -> code
        self._learner: Any = None

    # -- construction ------------------------------------------------------------------------
    def _java(self) -> Any:
        if self._learner is None:
            FoldLearner = start_jvm(self.jvm_options or DEFAULT_JVM_OPTIONS)
            cli = cli_string(self.model, self.options)
            seed = self.random_seed()
            import jpype

            self._learner = FoldLearner.create(cli, None if seed is None else jpype.JInt(seed))
        return self._learner

    def random_seed(self) -> int | None:
        """The seed MOA's ``setRandomSeed`` gets: ``seed`` (MOA's default 1 without one)
        derived for ``seed_fold`` when there is one, else ``seed`` itself (None: not set).

        >>> MoaClassifier("m").random_seed(), MoaClassifier("m", seed=7).random_seed()
        (None, 7)
        >>> MoaClassifier("m", seed_fold=2).random_seed() == derive_seed(MOA_SEED, 2)
        True
        """
        if self.seed_fold is None:
            return self.seed
        return derive_seed(MOA_SEED if self.seed is None else self.seed, self.seed_fold)

    def clone(self) -> "MoaClassifier":
        return MoaClassifier(self.model, self.options, self.seed_fold, self.jvm_options,
                             self.seed)

    def __repr__(self) -> str:
        return f"MoaClassifier({cli_string(self.model, self.options)!r})"

    # -- the header --------------------------------------------------------------------------
    def _add_classes(self, classes: Sequence[Any]) -> None:
        learner = self._java()
        for label in classes[len(self.classes):]:
            self.classes.append(label)
            learner.addClass(str(label))

    def _encode(self, xs: Sequence[dict]) -> tuple[np.ndarray, int | None, str | None]:
        """The rows of ``xs`` as MOA values (NaN: missing); the header grows first.

        Returns the rows and, for a value MOA's header cannot take, the index of its example
        and the reason (the rows stop there)."""
        rows = self._numeric_rows(xs)
        if rows is not None:
            return rows, None, None
        learner = self._java()
        nominal = self.nominal
        if xs and not nominal and all(v is not None and not isinstance(v, str)
                                      for v in xs[0].values()):
            # the first example's new features, all numbers, as the loop below would add
            # them; then the fast path again (a batch's first rows give every feature)
            for name, value in xs[0].items():
                self._feature(name, value)
            rows = self._numeric_rows(xs)
            if rows is not None:
                return rows, None, None
        for i, x in enumerate(xs):
            for name, value in x.items():
                if value is None:
                    continue
                index = self._feature(name, value)
                codes = nominal.get(index)
                if codes is not None:
                    if not isinstance(value, str):
                        return self._rows(xs[:i]), i, (f"feature {name!r}: {value!r} is not text, "
                                                       f"but its first value was (a nominal attribute)")
                    if value not in codes:
                        codes[value] = len(codes)
                        learner.addNominalValue(index, value)
                elif isinstance(value, str):
                    return self._rows(xs[:i]), i, (f"feature {name!r}: {value!r} is text, but its "
                                                   f"first value was a number (a numeric attribute)")
        return self._rows(xs), None, None

    def _feature(self, name: Any, value: Any) -> int:
        """The header's index of feature ``name``, added on its first (non-missing) value:
        nominal when that value is text, numeric otherwise."""
        index = self.features.get(name)
        if index is None:
            index = self.features[name] = len(self.features)
            if isinstance(value, str):
                self.nominal[index] = {}
                self._java().addNominal(str(name))
            else:
                self._java().addNumeric(str(name))
        return index

    def _numeric_rows(self, xs: Sequence[dict]) -> np.ndarray | None:
        """The common case fast: every example has exactly the known features, all numeric
        (else None: the general path). The rows of the last batch are kept, so the folds of one
        batch, which share its ``xs``, encode it once."""
        global _last_rows
        features = self.features
        if not features or self.nominal:
            return None
        keys = tuple(features)
        if _last_rows is not None and _last_rows[0] is xs and _last_rows[1] == keys:
            return _last_rows[2]
        if isinstance(xs, FeatureRows) and xs.names == keys:  # the rows as one array already
            return xs.array
        d = len(keys)
        if not all(len(x) == d for x in xs):
            return None
        getter = itemgetter(*keys) if d > 1 else (lambda x: (x[keys[0]],))
        try:
            rows = np.array(list(map(getter, xs)))
        except KeyError:
            return None
        if rows.dtype.kind not in "fiub" or rows.shape != (len(xs), d):  # text, None: general
            return None
        rows = rows.astype(np.float64)
        _last_rows = (xs, keys, rows)
        return rows

    def _rows(self, xs: Sequence[dict]) -> np.ndarray:
        features, nominal = self.features, self.nominal
        rows = np.full((len(xs), len(features)), np.nan)
        for row, x in zip(rows, xs):
            for name, value in x.items():
                if value is not None:
                    index = features[name]
                    codes = nominal.get(index)
                    row[index] = value if codes is None else codes[value]
        return rows

    # -- the batch path ----------------------------------------------------------------------
    def run(self, xs: Sequence[dict], y: Sequence[int], weights: Sequence[int],
            predict: Sequence[bool], classes: Sequence[Any]
            ) -> tuple[list[int], tuple[int, str, str] | None]:
        """Predict (where ``predict``) then train (weight > 0) on each example, in Java.

        Returns the predicted codes (-1: none) and, on an error, (index of its example, phase,
        ``"Type: message"``); the examples after it are neither predicted nor trained on."""
        return self.receive(self.send(xs, y, weights, predict, classes, threads=1))

    def send(self, xs: Sequence[dict], y: Sequence[int], weights: Sequence[int],
             predict: Sequence[bool], classes: Sequence[Any], threads: int) -> "JavaCall":
        """:meth:`run` up to its answer: the header grown and the rows encoded here, then
        Java's work done at once (``threads`` 1) or handed to the pool of ``threads`` Java
        threads (``FoldLearner.submit``), whose answer :meth:`receive` waits for. Until then
        this learner must not be used again."""
        import jpype

        try:
            if len(classes) > len(self.classes):
                self._add_classes(classes)
            rows, bad, reason = self._encode(xs)
            n = len(rows)
            learner = self._learner
            arrays = (_java_rows(rows), _java_array("y", y, n, np.int32),
                      jpype.JArray.of(np.asarray(weights[:n], dtype=np.int32)),
                      _java_array("predict", predict, n, bool))
            keep = bool(self.keep_scores)
            answer = learner.process(*arrays, keep) if threads <= 1 else \
                learner.submit(learner, jpype.JInt(threads), *arrays, keep)
        except jpype.JException as error:  # made, grown or handed a batch: Java failed there
            return JavaCall(len(xs), 0, None, error=error)
        return JavaCall(len(xs), n, answer, bad, reason, threads > 1)

    def receive(self, call: "JavaCall") -> tuple[list[int], tuple[int, str, str] | None]:
        """The answer of :meth:`send`: the predicted codes and the error, as :meth:`run`."""
        import jpype

        error = call.error
        out = call.answer
        if error is None and call.pending:
            try:
                out = out.get()
            except jpype.JException as wrapped:  # ExecutionException: the learner's own error
                error = wrapped.getCause() or wrapped
        k = len(self.classes)
        if error is not None:
            text = java_error(error)
            if "OutOfMemoryError" in str(error.getClass().getName()):
                self._learner = None  # its heap back to the other replicas
                text += str(start_jvm().HEAP_HINT)
            if self.keep_scores:
                self.scores = [0.0] * (k * call.size)
            return [-1] * call.size, (0, "predict", error_text(_as_error(text)))
        learner = self._learner
        if self.keep_scores:
            self.scores = np.asarray(learner.scores).tolist() + [0.0] * (k * (call.size - call.rows))
        pred = np.asarray(out).tolist() + [-1] * (call.size - call.rows)
        if learner.errorIndex >= 0:
            text = error_text(_as_error(str(learner.errorText)))
            return pred, (int(learner.errorIndex), str(learner.errorPhase), text)
        if call.bad is not None:
            return pred, (call.bad, "predict", f"ValueError: {call.reason}")
        return pred, None

    def run_batch(self, batch: Any, prequential: bool, xs: list[dict]):
        """A learner task's batch (``FoldBatch``) whose features are ``xs`` (the batch's own, or
        with the learner task's lag features): (y_pred, scored, error or None)."""
        return self.finish_batch(self.start_batch(batch, prequential, xs, threads=1))

    def start_batch(self, batch: Any, prequential: bool, xs: list[dict],
                    threads: int) -> "BatchCall":
        """:meth:`run_batch` up to Java's answer, on the pool of ``threads`` Java threads
        when there are more than one (:meth:`send`); :meth:`finish_batch` takes the answer."""
        weights = batch.weights
        scored = scored_flags(prequential, weights)
        predict = _all_scored(len(weights)) if prequential else scored
        call = self.send(xs, batch.y, weights, predict, batch.classes, threads)
        return BatchCall(batch.start, scored, call)

    def finish_batch(self, call: "BatchCall"):
        """(y_pred, scored, error or None) of a batch begun by :meth:`start_batch`."""
        pred, error = self.receive(call.call)
        if error is not None:
            error = (call.start + error[0] + 1, *error[1:])
        return pred, call.scored, error

    def cpu_seconds(self) -> tuple[float, float]:
        """CPU seconds of the calling threads in MOA's predict and learn so far, measured in
        Java around each call (``(0.0, 0.0)`` once the learner was released)."""
        learner = self._learner
        if learner is None:
            return 0.0, 0.0
        return int(learner.predictNanos) / 1e9, int(learner.learnNanos) / 1e9

    def size_bytes(self) -> int | None:
        """The size of the learner: the bytes of its Java serialisation (MOA's own
        ``measureByteSize`` needs a Java agent, which ``engine.jvm_options`` refuses), ``None``
        once it was released."""
        return None if self._learner is None else len(self._learner.toBytes())

    # -- river's interface (the delayed-label path) ------------------------------------------
    def predict_one(self, x: dict) -> Any:
        pred, error = self.run([x], [0], [0], [True], self.classes)
        if error is not None:
            raise _as_error(error[2])
        return None if pred[0] < 0 else self.classes[pred[0]]

    def learn_one(self, x: dict, y: Any, w: int = 1) -> None:
        if y not in self.classes:
            self._add_classes([*self.classes, y])
        _, error = self.run([x], [self.classes.index(y)], [int(w)], [False], self.classes)
        if error is not None:
            raise _as_error(error[2])

    # -- pickling: Java serialisation ---------------------------------------------------------
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("scores", None)  # the last batch's: not state
        state["_learner"] = None if self._learner is None else bytes(self._learner.toBytes())
        return state

    def __setstate__(self, state: dict) -> None:
        data = state.pop("_learner")
        self.__dict__.update(state)
        self._learner = None
        if data is not None:
            self._learner = start_jvm(self.jvm_options or DEFAULT_JVM_OPTIONS).fromBytes(data)


def nested(model: str, options: str = "", seed: int | None = None) -> MoaClassifier:
    """A MOA classifier as the ``{model: moa.classifiers..., options: ..., params: {seed: ...}}``
    of a noise filter's ``model`` (operators/learners/models.py resolves ``moa.`` to this): checked
    as a learner's is (:func:`check_config`), then made. Its ``seed`` is used as given (a
    learner's ``fold_seeds`` has already derived it for the fold).

    >>> nested("moa.classifiers.bayes.NaiveBayes", seed=True)
    Traceback (most recent call last):
    ValueError: params.seed: MOA's random seed is an integer, got True
    """
    check_config(model, options, {} if seed is None else {"seed": seed}, [])
    return MoaClassifier(model, options, seed=seed)

"""The first stages, one instance per stream: micro-batching and the k-fold fan-out.

Both keep explicit, picklable state for one stream, so that a Flink job can hold one of each in
keyed state (keyed by stream: docs/platform.md shows folds receiving batches out of order when the
fan-out of one stream ran in two subtasks) and the in-process engine a dict of them.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass

import numpy as np

from foldstream.operators.records.base import Example, ExampleBatch, FoldBatch, Label, Rejected
from foldstream.operators.records.features import BlockExample, as_dicts, batch_features
from foldstream.operators.stats.weights import fold_weights

FOLD_MODE, FOLDS, FOLD_SEED, FOLD_CHOICE = "bootstrap", 10, 1, "random"
"""The defaults of how the folds share the examples (docs/method.md §2): ``evaluation.mode``,
``.folds``, ``.seed`` and ``.fold_choice`` (job/config.py reads them here)."""

MAX_FOLDS = 1000
"""The most folds a run may have (``evaluation.folds``): every example is sent to each of them,
so their number multiplies the work and memory of a batch. Far above the designs in use
(Bifet et al. 2015: 10; leave-one-out designs on streams are not run), and low enough that a
mistyped count fails at start instead of exhausting memory at the first batch."""


class LabelClash(ValueError):
    """An example whose label is a value already seen in this stream as another type.

    ``1`` and ``"1"``, or ``True`` and ``1`` (equal in Python), would be one class to some
    stages and two to others; the type seen first in the stream decides, and an example with the
    other type is rejected (it gets no position). :meth:`rejected` is its dead-letter message.
    """

    def __init__(self, message: str, example: Example):
        super().__init__(message)
        self.example = example

    def rejected(self) -> Rejected:
        e = self.example
        raw = json.dumps({"x": e.x, "y": e.y}, ensure_ascii=False, default=str)
        return Rejected(e.stream, str(self), raw, e.location)


def check_label_type(label_types: dict, example: Example) -> None:
    """The rule of one type per label value in a stream, over its ``label_types`` (label and
    its text -> the first type seen and that label; updated here): raises
    :class:`LabelClash` for ``1`` after ``"1"`` and the like. Shared by :class:`Batcher` and the
    delayed fan-out (:mod:`foldstream.operators.stages.delay`)."""
    label, kind = example.y, type(example.y)
    keys = (label, str(label))
    for key in keys:
        first = label_types.get(key)
        if first is not None and first[0] is not kind:
            raise LabelClash(
                f"label {label!r} ({kind.__name__}) is the label {first[1]!r} "
                f"({first[0].__name__}) of an earlier example as another type; this "
                f"stream's labels keep the first type seen ({first[0].__name__})", example)
    for key in keys:
        label_types.setdefault(key, (kind, label))


class Batcher:
    """Gives each accepted example of a stream its position and groups them into batches.

    An example whose label clashes in type with one seen before raises :class:`LabelClash`
    and is not counted:

    >>> b = Batcher("s", batch_size=10)
    >>> _ = b.add(Example("s", {}, 1))
    >>> try:
    ...     b.add(Example("s", {}, True))
    ... except LabelClash as clash:
    ...     print(clash)
    label True (bool) is the label 1 (int) of an earlier example as another type; this stream's labels keep the first type seen (int)
    >>> b.position
    1

    >>> b = Batcher("s", batch_size=2)
    >>> [len(x) for x in b.add(Example("s", {}, 1))], [x.start for x in b.add(Example("s", {}, 0))]
    ([], [0])
    >>> b.position, [(x.start, len(x), x.final) for x in b.flush(final=True)]
    (2, [(2, 0, True)])
    """

    def __init__(self, stream: str, batch_size: int):
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.stream = stream
        self.batch_size = batch_size
        self.position = 0  # examples accepted so far
        self.seq = 0
        self._keys: list[int | str] = []
        self._xs: list[dict] = []
        self._ys: list[Label] = []
        # label, and its text, -> (type, label) of the first one seen: True == 1 as keys, and
        # 1 and "1" have one text, so either lookup finds a value seen as another type.
        self._label_types: dict[Label, tuple[type, Label]] = {}

    def __getstate__(self) -> dict:
        """The state, an example of a block held as its dict of features (the block stays)."""
        state = self.__dict__.copy()
        state["_xs"] = as_dicts(self._xs)
        return state

    def _check_label(self, example: Example) -> None:
        check_label_type(self._label_types, example)

    def add(self, example: Example) -> list[ExampleBatch]:
        first = self._label_types.get(example.y)
        if first is None or first[0] is not type(example.y):  # a new label, or a clash
            self._check_label(example)
        self.position += 1
        self._keys.append(self.position if example.key is None else example.key)
        # an example of a block keeps its row there until the batch is cut (batch_features)
        self._xs.append(example if type(example) is BlockExample else example.x)
        self._ys.append(example.y)
        if len(self._ys) >= self.batch_size:
            return [self._emit(final=False)]
        return []

    @property
    def pending(self) -> int:
        """Examples given a position but not yet emitted in a batch."""
        return len(self._ys)

    def flush(self, final: bool = False) -> list[ExampleBatch]:
        """Emit what is pending (a timer, or the end of a bounded input when ``final``)."""
        if self._ys or final:
            return [self._emit(final)]
        return []

    def _emit(self, final: bool) -> ExampleBatch:
        n = len(self._ys)
        batch = ExampleBatch(stream=self.stream, seq=self.seq, start=self.position - n,
                             keys=self._keys, xs=batch_features(self._xs), ys=self._ys,
                             final=final)
        self.seq += 1
        self._keys, self._xs, self._ys = [], [], []
        return batch


@dataclass(frozen=True, slots=True)
class FanOutPlan:
    """What the fan-out needs to know of the evaluation (a picklable subset of the config)."""

    mode: str = FOLD_MODE
    folds: int = FOLDS
    seed: int = FOLD_SEED
    fold_choice: str = FOLD_CHOICE
    lags: int = 0  # the most previous labels any learner's temporal wrapper asks for
    keys: bool = False  # the fold batches carry the examples' ids (sink.predictions)

    @property
    def k(self) -> int:
        return 1 if self.mode == "single" else self.folds


class FanOut:
    """Turns an example batch of one stream into one :class:`FoldBatch` per fold.

    It draws the weights (docs/method.md §2), encodes labels as class codes in order of first
    appearance in the stream, and attaches the stream's previous label of each example (the
    persistent baseline's prediction) and the previous ``plan.lags`` labels.

    >>> f = FanOut("s", FanOutPlan(mode="cv", folds=3))
    >>> out = f.process(ExampleBatch("s", 0, 0, [1, 2, 3], [{}, {}, {}], ["b", "a", "b"]))
    >>> len(out), out[0].y, out[0].prev_y, out[0].classes
    (3, [0, 1, 0], [-1, 0, 1], ['b', 'a'])
    >>> [sum(col) for col in zip(*(fb.weights for fb in out))]
    [2, 2, 2]
    """

    def __init__(self, stream: str, plan: FanOutPlan):
        self.stream = stream
        self.plan = plan
        self.classes: list[Label] = []
        self._codes: dict[Label, int] = {}
        self._recent: deque[Label] = deque(maxlen=max(1, plan.lags))  # most recent last

    def _code(self, label: Label) -> int:
        code = self._codes.get(label)
        if code is None:
            code = self._codes[label] = len(self.classes)
            self.classes.append(label)
        return code

    def _codes_of(self, ys: list[Label]
                  ) -> tuple[list[int], list[int], list[tuple[Label, ...]] | None]:
        """The class codes of a batch's labels, each example's previous code (-1 before the
        stream's first) and, with ``plan.lags``, its previous labels, most recent first."""
        if not self.plan.lags and ys:
            y = list(map(self._codes.get, ys))
            if None not in y:  # every label seen before: no code to give, in bulk
                recent = self._recent
                prev_y = [self._codes[recent[-1]] if recent else -1, *y[:-1]]
                recent.append(ys[-1])
                return y, prev_y, None
        y, prev_y = [], []
        lags: list[tuple[Label, ...]] | None = [] if self.plan.lags else None
        for label in ys:
            prev_y.append(self._codes[self._recent[-1]] if self._recent else -1)
            if lags is not None:
                lags.append(tuple(reversed(self._recent)))
            y.append(self._code(label))
            self._recent.append(label)
        return y, prev_y, lags

    def process(self, batch: ExampleBatch) -> list[FoldBatch]:
        plan = self.plan
        n = len(batch)
        positions = np.arange(batch.start + 1, batch.start + n + 1)
        weights = fold_weights(plan.mode, plan.k, plan.seed, self.stream, batch.keys, positions,
                               plan.fold_choice)
        y, prev_y, lags = self._codes_of(batch.ys)
        classes = list(self.classes)
        columns = weights.T.tolist()
        return [
            FoldBatch(stream=self.stream, fold=fold, seq=batch.seq, start=batch.start,
                      xs=batch.xs, y=y, prev_y=prev_y, weights=columns[fold], classes=classes,
                      lags=lags, final=batch.final, keys=batch.keys if plan.keys else None)
            for fold in range(plan.k)
        ]

"""The periodic held-out evaluation (docs/method.md §20): a fixed test set scored every f examples.

Gama et al. (KDD 2009, §3) take the error on an independent test set as the reference a
prequential estimate should converge to; MOA's ``EvaluatePeriodicHeldOutTest`` (with its
``-c`` flag) does it on one stream: its first ``n`` examples are the test set, the learner trains
on the rest, and after every ``f`` training examples it is scored on the whole test set, from a
fresh evaluator. :class:`Holdout` is that protocol for every fold of every learner, in two
parts: the stream's head keeps the test set and says when a test is due
(:meth:`Holdout.take`, :meth:`Holdout.due`), and :class:`HoldoutScorer` scores the predictions
of every (learner, fold) on it into ``holdout`` records.

The test examples never reach the folds' training, nor the prequential records: the stream's
positions (``position`` of every record) count the training examples only, as MOA's
"evaluation instances" do. A test is due at every multiple of ``f`` of them (MOA skips the one
where the training stream ends exactly there; foldstream scores it).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import NamedTuple

from foldstream.operators.stages.evaluator import EvalPlan, FoldEvaluator
from foldstream.operators.stages.fanout import FanOut
from foldstream.operators.records.outputs import HoldoutRecord
from foldstream.operators.records.base import Example, ExampleBatch, FoldBatch, PredictionBatch
from foldstream.operators.stats.windows import WindowSpec


class HoldoutPlan(NamedTuple):
    """``evaluation.holdout``: the test set's size ``n`` and the testing period ``f``."""

    size: int
    every: int


@dataclass
class Holdout:
    """One stream's test set and testing clock, held by its head (picklable, plain fields).

    >>> from foldstream.operators.stages.fanout import FanOutPlan
    >>> fanout = FanOut("s", FanOutPlan("single"))
    >>> h = Holdout(HoldoutPlan(size=2, every=3))
    >>> [h.take(Example("s", {"a": float(i)}, y), fanout) for i, y in enumerate("ab")]
    [True, True]
    >>> h.take(Example("s", {"a": 9.0}, "a"), fanout), fanout.classes
    (False, ['a', 'b'])
    >>> [h.due(p) for p in (1, 3, 6)]
    [False, True, True]
    >>> [(b.fold, b.y, b.weights, b.holdout) for b in h.batches(fanout, 3, 1)]
    [(0, [0, 1], [0, 0], True)]
    """

    plan: HoldoutPlan
    xs: list = field(default_factory=list)
    y: list[int] = field(default_factory=list)
    prev_y: list[int] = field(default_factory=list)
    lags: list | None = None
    _pending: list[Example] = field(default_factory=list)

    @property
    def full(self) -> bool:
        return len(self.y) >= self.plan.size

    def take(self, example: Example, fanout: FanOut) -> bool:
        """Keep ``example`` in the test set while it is not full (``True``); ``False``: it is a
        training example. The test set's labels get their class codes through ``fanout`` as
        they come, so codes stay in order of first appearance in the stream."""
        if self.full:
            return False
        self._pending.append(example)
        if len(self._pending) == self.plan.size:
            n = len(self._pending)
            batch = ExampleBatch(example.stream, -1, 0, list(range(1, n + 1)),
                                 [e.x for e in self._pending], [e.y for e in self._pending])
            first = fanout.process(batch)[0]
            self.xs, self.y, self.prev_y, self.lags = first.xs, first.y, first.prev_y, first.lags
            self._pending = []
        return True

    def due(self, trained: int) -> bool:
        """Whether a test comes after ``trained`` training examples."""
        return trained > 0 and trained % self.plan.every == 0

    def batches(self, fanout: FanOut, position: int, k: int) -> list[FoldBatch]:
        """The test set as one :class:`FoldBatch` per fold, at ``position``: weights 0 (scored,
        never learned), ``holdout`` set so that the engines route the predictions to a
        :class:`HoldoutScorer`, not to the fold evaluators."""
        n = len(self.y)
        return [FoldBatch(stream=fanout.stream, fold=fold, seq=-1, start=position, xs=self.xs,
                          y=self.y, prev_y=self.prev_y, weights=[0] * n,
                          classes=list(fanout.classes), lags=self.lags, holdout=True)
                for fold in range(k)]


class HoldoutScorer:
    """Turns every (learner, fold)'s predictions on the test set at one position into one
    ``holdout`` record per learner: each fold's measures over the whole test set, scored from
    scratch (a fresh cumulative evaluator, as MOA resets its evaluator before each test), and
    their mean and standard deviation over the folds.

    >>> from foldstream.operators.stages.evaluator import EvalPlan
    >>> scorer = HoldoutScorer("s", EvalPlan(("a",)), folds=1, mode="single", prequential=True)
    >>> batch = PredictionBatch(stream="s", fold=0, learner="a", seq=-1, start=5, y=[0, 1, 1],
    ...                         prev_y=[-1, 0, 1], y_pred=[0, 1, 0], scored=[True] * 3,
    ...                         classes=["x", "y"])
    >>> record = scorer.add(batch)[0]
    >>> record["type"], record["position"], record["values"]["accuracy"]["mean"]
    ('holdout', 5, 0.6666666666666666)
    """

    def __init__(self, stream: str, plan: EvalPlan, folds: int, mode: str, prequential: bool):
        self.stream = stream
        self.plan = dataclasses.replace(
            plan, window=WindowSpec("cumulative"), report_every=2**62, page_hinkley=None,
            adwin_alarms=False, normalize=(), losses=False)
        self.folds, self.mode, self.prequential = folds, mode, prequential
        self._values: dict[str, list] = {}
        self._seen = 0

    def add(self, batch: PredictionBatch) -> list[dict]:
        """Take one (learner, fold)'s predictions on the test set; the records once every
        learner of every fold has come for this test (learners in configuration order)."""
        evaluator = FoldEvaluator(self.stream, batch.fold, dataclasses.replace(
            self.plan, learners=(batch.learner,)))
        report = evaluator.add(dataclasses.replace(batch, seq=0, start=0, final=True))[-1]
        self._values.setdefault(batch.learner, [None] * self.folds)[batch.fold] = \
            report.learners[batch.learner]["values"]
        self._seen += 1
        if self._seen < self.folds * len(self.plan.learners):
            return []
        records = []
        for learner in self.plan.learners:
            per_fold = self._values[learner]
            fold_values = {m: [values[m] for values in per_fold] for m in per_fold[0]}
            records.append(HoldoutRecord.of_folds(
                stream=self.stream, position=batch.start, learner=learner, mode=self.mode,
                prequential=self.prequential, folds=self.folds, test_size=len(batch.y),
                fold_values=fold_values).as_dict())
        self._values, self._seen = {}, 0
        return records

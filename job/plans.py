"""From a validated :class:`~foldstream.job.config.Config` to the picklable plans of the stages.

Both engines build their stages from these, so they cannot read the configuration differently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from foldstream.job.config import Config
from foldstream.operators.stages.delay import MAX_PENDING, DelayFanOut, LabelOnly, simulate_delay
from foldstream.operators.stages.aggregator import AggregationPlan, Aggregator, VerdictPlan
from foldstream.operators.stats.consensus import consensus_folds
from foldstream.operators.stats.drifteval import DriftScoring
from foldstream.operators.stages.evaluator import EvalPlan, FoldEvaluator
from foldstream.operators.stages.fanout import Batcher, FanOut, FanOutPlan
from foldstream.operators.stages.head import MAX_CLASSES, StreamHead
from foldstream.operators.stages.holdout import Holdout, HoldoutPlan, HoldoutScorer
from foldstream.operators.stages.learner import LearnerSpec, LearnerTask
from foldstream.operators.records.base import DEAD_LETTER_MAX_BYTES, Example, Rejected


@dataclass(frozen=True)
class Plans:
    fanout: FanOutPlan
    learners: tuple[LearnerSpec, ...]
    evaluation: EvalPlan
    aggregation: AggregationPlan
    prequential: bool
    batch_size: int
    dead_letter_max_bytes: int = DEAD_LETTER_MAX_BYTES  # sink.dead_letter_max_bytes
    max_pending: int | None = None  # delayed labels (docs/method.md §13); None: undelayed
    max_classes: int = MAX_CLASSES  # evaluation.max_classes
    holdout: HoldoutPlan | None = None  # evaluation.holdout (operators/stages/holdout.py)

    @property
    def delayed(self) -> bool:
        return self.max_pending is not None

    @property
    def folds(self) -> int:
        return self.fanout.k

    def batcher(self, stream: str) -> Batcher:
        return Batcher(stream, self.batch_size)

    def fan_out(self, stream: str) -> FanOut:
        return FanOut(stream, self.fanout)

    def delay_fan_out(self, stream: str) -> DelayFanOut:
        """The per-stream stage of a delayed run: batcher and fan-out in one."""
        return DelayFanOut(stream, self.fanout, self.batch_size,
                           self.max_pending if self.max_pending is not None else MAX_PENDING)

    def stream_head(self, stream: str, head: type[StreamHead] = StreamHead, **more) -> StreamHead:
        """A stream's head (batcher and fan-out, or delay fan-out): ``head``, a
        :class:`~foldstream.operators.stages.head.StreamHead` or an engine's subclass, with ``more``
        of its fields."""
        if self.holdout is not None:
            more.setdefault("holdout", Holdout(self.holdout))
        made = head(self.batcher(stream), self.fan_out(stream),
                    self.delay_fan_out(stream) if self.delayed else None, **more)
        if self.max_classes != MAX_CLASSES:
            made.max_classes = self.max_classes
        return made

    def learner_task(self, learner: int, fold: int) -> LearnerTask:
        return LearnerTask(self.learners[learner], fold, self.prequential)

    def fold_evaluator(self, stream: str, fold: int) -> FoldEvaluator:
        return FoldEvaluator(stream, fold, self.evaluation)

    def aggregator(self, stream: str) -> Aggregator:
        return Aggregator(stream, self.aggregation)

    def holdout_scorer(self, stream: str) -> HoldoutScorer | None:
        """The stream's held-out scorer, ``None`` without ``evaluation.holdout``."""
        if self.holdout is None:
            return None
        return HoldoutScorer(stream, self.evaluation, self.folds, self.aggregation.mode,
                             self.prequential)


def make_plans(config: Config) -> Plans:
    ev = config.evaluation
    consensus = ev.alarms.consensus
    names = tuple(learner.name for learner in config.learners)
    window = ev.window.spec()
    ph = ev.alarms.page_hinkley
    predictions = bool(getattr(config.sink, "predictions", None))
    changes = config.known_changes()
    fanout = FanOutPlan(mode=ev.mode, folds=ev.folds, seed=ev.seed, fold_choice=ev.fold_choice,
                        lags=max(learner.lags for learner in config.learners),
                        keys=predictions)
    return Plans(
        fanout=fanout,
        learners=tuple(
            # The Python API's learners may carry a model object (foldstream.job.api.ObjectLearner)
            LearnerSpec(name=l.name, model=l.model, params=dict(l.params), args=list(l.args),
                        lags=l.lags, prototype=getattr(l, "prototype", None),
                        fold_seeds=l.fold_seeds, options=l.options,
                        jvm_options=tuple(config.engine.jvm_options),
                        scores=bool(ev.scores))
            for l in config.learners
        ),
        evaluation=EvalPlan(
            learners=names,
            window=window,
            report_every=ev.report_every,
            page_hinkley=tuple(ph.model_dump().items()) if ph is not None else None,
            adwin_alarms=ev.alarms.adwin,
            adwin_delta=ev.alarms.adwin_delta,
            q_fading=ev.q_fading,
            positive=ev.positive_class,
            normalize=tuple(ev.normalize),
            max_matrices=ev.max_matrices,
            losses=ev.verdicts.enabled,
            scores=tuple(ev.scores),
            predictions=predictions,
            alarm_quantity=ev.alarms.quantity,
            alarm_window=ev.alarms.window,
        ),
        aggregation=AggregationPlan(
            learners=names,
            folds=fanout.k,
            mode=ev.mode,
            prequential=ev.prequential,
            window=window.items(),
            compare=tuple(ev.compare),
            alpha=ev.alpha,
            alarm_quantity=ev.alarms.quantity,
            verdicts=VerdictPlan(correction=ev.verdicts.correction, v_min=ev.verdicts.v_min,
                                 regime_delta=ev.verdicts.regime_delta if ev.verdicts.regime
                                 else None)
            if ev.verdicts.enabled else None,
            per_fold_alarms=ev.alarms.per_fold,
            consensus=None if consensus is None else (
                consensus.window, consensus.folds or consensus_folds(fanout.k, ev.mode)),
            drift_scoring=None if changes is None else DriftScoring(
                tuple(changes), ev.alarms.scoring.window, ev.alarms.scoring.seed,
                tuple(d for d, on in (("adwin", ev.alarms.adwin),
                                      ("page_hinkley", ph is not None)) if on)),
        ),
        prequential=ev.prequential,
        batch_size=config.engine.batch_size,
        dead_letter_max_bytes=config.sink.dead_letter_max_bytes,
        max_pending=config.evaluation.delay.max_pending if config.delayed else None,
        max_classes=ev.max_classes,
        holdout=None if ev.holdout is None else HoldoutPlan(ev.holdout.size, ev.holdout.every),
    )


def open_source(config: Config) -> Iterator[Example | LabelOnly | Rejected]:
    """The configured file or generator source (Kafka sources belong to the Flink job).

    With delayed labels (docs/method.md §13) the labels are held back as
    ``evaluation.delay`` says (:func:`~foldstream.operators.stages.delay.simulate_delay`), and a JSON
    Lines row without its label is an arrival whose label comes in a later row with its id.
    """
    source = config.source
    if source.kind == "file":
        from foldstream.connectors.files import iter_file

        items = iter_file(source.resolved_path(), label=source.label, stream=source.stream,
                          nominal=source.nominal, id_field=source.id_field, limit=source.limit,
                          fmt=source.format, labels_later=config.delayed)
    elif source.kind == "generator":
        from foldstream.connectors.generators import iter_generator

        items = iter_generator(source.model, source.params, source.seed, source.limit,
                               source.stream, source.class_ratio and source.class_ratio.schedule())
    else:
        raise ValueError(f"source.kind {source.kind!r} is read by the Flink job, not here")
    return with_delay(config, items)


def with_delay(config: Config, items: Iterable[Example | Rejected]) -> Iterator[Any]:
    """``items`` with their labels held back as ``evaluation.delay`` says (docs/method.md §13);
    unchanged when labels are not delayed."""
    if not simulates_delay(config):
        return iter(items)  # label rows, if any, are joined by id at the delay fan-out
    delay = config.evaluation.delay
    return simulate_delay(items, examples=delay.examples, field=delay.field)


def simulates_delay(config: Config) -> bool:
    """Whether the source's labels are held back by :func:`with_delay` (rather than coming in
    label rows of their own, or not delayed at all)."""
    delay = config.evaluation.delay
    return config.delayed and not (delay.examples == 0 and delay.field is None)


def expected_examples(config: Config) -> int | None:
    """How many records the source will yield, if cheap to know (for a progress bar)."""
    source = config.source
    if source.kind == "generator":
        return source.limit
    if source.kind == "file":
        from foldstream.connectors.files import count_rows

        rows = count_rows(source.resolved_path(), source.format, at_most=source.limit)
        if rows is None:
            return source.limit
        return min(rows, source.limit) if source.limit else rows
    return None  # a Kafka topic: unknown, and unbounded by default

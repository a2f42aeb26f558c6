"""The aggregator: one per stream, it turns the k fold reports of a position into output records.

It waits until every fold has reported a position, then emits, in a fixed order that depends
on nothing but the reports: the alarms raised since the previous report (sorted), the
``learner_error`` records of the learner replicas quarantined since then (sorted), one
``measures`` record per learner, one ``comparison`` record per pair of learners and compared
measure, the ``verdict`` records of the pairs whose live verdict changed at this position (pair
order, as the comparisons; per pair the whole-stream one, then the regime one), and, for three
or more learners, one ``ranking`` record per compared measure (docs/method.md §6, §10, §12).
With consensus drift on (§16), the ``drift`` records completed by the report's alarms follow
those alarms; ``evaluation.alarms.per_fold: false`` leaves the alarms themselves out.

Scope
-----
Every test and verdict says which examples it covers: a ``comparison`` record carries
``scope: {window, window_size: {a, b}}``, the window kind of the fold tests and each fold's window
size of the two learners at that report; the whole-stream verdict covers the ``n`` examples
scored since the first (``since`` of its ``verdict`` records), the regime verdict (§15) the
``n`` examples of its segment since its ``since``.

Live verdicts (docs/method.md §12)
----------------------------------
The confidence sequence of a pair needs, for every scored example ``t`` in order, the
fold-averaged loss difference ``d_t = (1/k) sum_f (loss_A,f,t - loss_B,f,t)``. Its variance
process ``V_n = sum_t (d_t - m_{t-1})^2`` squares the *fold average*, so it is not additive
across folds: k per-fold running sums (of losses, of squared differences) cannot be combined
into ``V_n`` afterwards, and no per-fold summary short of the examples themselves gives it.
The evaluators therefore send, with each report, the per-example 0/1 losses since their
previous report (:class:`~foldstream.operators.records.base.FoldLosses`: one packed bit per example
and learner, plus the fold's scored flags, 125 bytes per 1,000 examples). Every fold reports at
the same positions, so the k blocks of one report cover the same examples ``previous + 1 ..
position`` and line up by index; the aggregator checks that they start where its previous
report ended. It aligns them into (k, T) arrays, forms the exact integer numerators
``D_t = k d_t`` (a fold that did not score ``t`` adds 0; an example no fold scored is left out),
and feeds them in position order to the pair's
:class:`~foldstream.operators.stats.sequential.PairSequence`, whose state is bit-for-bit independent
of how the sequence is cut. Memory: O(report_every) bits per fold while a report is in flight,
O(1) per pair and stream for good.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from foldstream.operators.stats import significance as stats
from foldstream.operators.stats.consensus import Consensus
from foldstream.operators.stats.drifteval import DriftScoring, periodic_alarms, random_alarms, score
from foldstream.operators.records.outputs import (
    AlarmRecord, ComparisonRecord, DriftEvaluationRecord, DriftRecord, LearnerErrorRecord,
    MeasuresRecord, RankingRecord, VerdictRecord
)
from foldstream.operators.stages.messages import Alarm, FoldError
from foldstream.operators.records.predictions import predictions_record
from foldstream.operators.records.base import FoldReport, pair_key, unpack_bits
from foldstream.operators.stats.sequential import (
    UNDECIDED, PairSequence, RegimeResult, RegimeSequence, SequentialResult, fold_differences
)

COMPARE = ("accuracy", "kappa_m")
"""The measures compared across folds by default (``evaluation.compare``, docs/method.md §6),
and the ones the views draw and show by default."""
ALPHA = 0.05
"""The default significance level of every test (``evaluation.alpha``)."""

VERDICT_MEASURE = "accuracy"
"""The measure whose loss the live verdicts compare (the 0/1 loss): its ``comparison`` records
carry the ``sequential`` object, and every ``verdict`` record names it."""


@dataclass(frozen=True)
class VerdictPlan:
    """Live verdicts are on (docs/method.md §12): how ``alpha`` is shared, and ``v_min``.

    ``correction`` is ``"bonferroni"`` (each of the ``P`` pairs gets ``alpha / P``, so the chance
    of any false verdict in the run stays below ``alpha``) or ``"none"`` (``alpha`` per pair).
    ``regime_delta``: the ``delta`` of the regime verdicts' ADWIN (§15); ``None``: no regime
    verdicts.

    >>> plans = VerdictPlan("bonferroni", 100.0), VerdictPlan("none", 100.0)
    >>> [plan.pair_alpha(0.05, 3) for plan in plans]
    [0.016666666666666666, 0.05]
    """

    correction: str
    v_min: float
    regime_delta: float | None = None

    def pair_alpha(self, alpha: float, pairs: int) -> float:
        """``alpha_v``, the level of each pair's confidence sequence."""
        if self.correction == "bonferroni":
            return alpha / max(pairs, 1)
        if self.correction == "none":
            return alpha
        raise ValueError(f"unknown correction {self.correction!r}; choose bonferroni or none")


@dataclass(frozen=True)
class AggregationPlan:
    """What the aggregator needs of the configuration (picklable)."""

    learners: tuple[str, ...]
    folds: int
    mode: str
    prequential: bool
    window: tuple[tuple[str, Any], ...]
    compare: tuple[str, ...] = COMPARE
    alpha: float = ALPHA
    alarm_quantity: str = "loss"
    verdicts: VerdictPlan | None = None  # None: no live verdicts
    per_fold_alarms: bool = True  # False: no `alarm` records (consensus drift still counts them)
    consensus: tuple[int, int] | None = None  # (w, q) of §16; None: no `drift` records
    # the known changes of the streams (§19); None: no `drift_evaluation` records
    drift_scoring: DriftScoring | None = None

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """Every pair (a, b) of learners, a before b in configuration order."""
        names = self.learners
        return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]


class Aggregator:
    """Collects fold reports of one stream and emits its records.

    ``add`` returns the records completed by a report; ``finished`` turns true once every fold
    has sent its final report (the end of a bounded input) and everything is reported.
    """

    def __init__(self, stream: str, plan: AggregationPlan):
        self.stream = stream
        self.plan = plan
        self._pending: dict[int, dict[int, FoldReport]] = {}
        self._ended: set[int] = set()  # folds that have seen the end of a bounded input
        self.finished = False
        self.last_measures: dict[str, dict[str, Any]] = {}
        # live verdicts: O(1) per pair, and the position the sequences have reached
        self._sequences = {pair: PairSequence(plan.folds) for pair in plan.pairs} \
            if plan.verdicts is not None else {}
        self._verdicts = {pair: UNDECIDED for pair in self._sequences}
        regime = plan.verdicts.regime_delta if plan.verdicts is not None else None
        self._regimes = {pair: RegimeSequence(plan.folds, regime) for pair in plan.pairs} \
            if regime is not None else {}
        self._regime_verdicts = {pair: UNDECIDED for pair in self._regimes}
        self._first: int | None = None  # the position of the first scored example
        self._position = 0
        self._consensus = Consensus(plan.folds, *plan.consensus) \
            if plan.consensus is not None else None
        # known changes (§19): every alarm and drift position, per (learner, detector)
        self._alarm_log: dict[tuple[str, str], list[list[int]]] = {}
        self._drift_log: dict[tuple[str, str], list[int]] = {}
        self._length = 0

    def final_measures(self) -> list[dict[str, Any]]:
        """The last ``measures`` record of each learner, in configuration order."""
        return [self.last_measures[n] for n in self.plan.learners if n in self.last_measures]

    def add(self, report: FoldReport) -> list[dict[str, Any]]:
        """Take one fold's report; return the records it completes (in a fixed order).

        A report with no learners is a fold's end marker after a position it already reported.
        Reports of different folds may arrive in any order, end markers included.
        """
        if report.final:
            self._ended.add(report.fold)
        records: list[dict[str, Any]] = []
        if report.learners:
            # Delayed labels: several reports may share a position (labels after the last
            # arrival), never a (position, labelled) pair.
            at = report.position if report.delay is None else (report.position, report.delay.labelled)
            reports = self._pending.setdefault(at, {})
            reports[report.fold] = report
            if len(reports) == self.plan.folds:
                del self._pending[at]
                folds = [reports[f] for f in range(self.plan.folds)]
                records = self._records(report.position, folds)
                kept = predictions_record(self.stream, report.position, folds, self.plan.learners)
                if kept is not None:  # sink.predictions: the examples' rows, first
                    records.insert(0, kept.as_dict())
        if len(self._ended) == self.plan.folds and not self._pending and not self.finished:
            self.finished = True
            if self.plan.drift_scoring is not None:
                records += self._drift_evaluation()
        return records

    # ---------------------------------------------------------------------------------------
    def _records(self, position: int, folds: list[FoldReport]) -> list[dict[str, Any]]:
        plan = self.plan
        order = {name: i for i, name in enumerate(plan.learners)}
        # by position, then learner (configuration order), fold and detector
        alarms = sorted(((r.fold, Alarm(*alarm)) for r in folds for alarm in r.alarms),
                        key=lambda found: (found[1].position, order[found[1].learner],
                                           found[0], found[1].detector))
        records = [
            AlarmRecord(stream=self.stream, position=a.position, learner=a.learner, fold=fold,
                        detector=a.detector, quantity=plan.alarm_quantity).as_dict()
            for fold, a in alarms
        ] if plan.per_fold_alarms else []
        scoring = plan.drift_scoring is not None
        if scoring:
            self._length = position
            for fold, a in alarms:
                self._alarm_log.setdefault((a.learner, a.detector),
                                           [[] for _ in range(plan.folds)])[fold].append(a.position)
        if self._consensus is not None:
            for fold, a in alarms:
                drift = self._consensus.alarm(a.position, a.learner, fold, a.detector)
                if drift is not None:
                    if scoring:
                        self._drift_log.setdefault((a.learner, a.detector), []).append(a.position)
                    records.append(DriftRecord(
                        stream=self.stream, position=a.position, learner=a.learner,
                        detector=a.detector, quantity=plan.alarm_quantity,
                        folds=list(drift.folds), first=drift.first).as_dict())
        # by position, then learner, fold, phase and message
        errors = sorted(((r.fold, FoldError(*error)) for r in folds for error in r.errors),
                        key=lambda found: (found[1].position, order[found[1].learner], found[0],
                                           found[1].phase, found[1].error))
        records += [LearnerErrorRecord(stream=self.stream, position=e.position,
                                       learner=e.learner, fold=fold, error=e.error,
                                       phase=e.phase).as_dict()
                    for fold, e in errors]
        per_fold = {
            name: {m: [r.learners[name]["values"][m] for r in folds]
                   for m in folds[0].learners[name]["values"]}
            for name in plan.learners
        }
        for name in plan.learners:
            record = MeasuresRecord.of_folds(
                stream=self.stream, position=position, learner=name, mode=plan.mode,
                prequential=plan.prequential, folds=plan.folds, window=dict(plan.window),
                window_size=[r.learners[name]["window_size"] for r in folds],
                fold_values=per_fold[name],
                normalization=[r.normalization[name] for r in folds]
                if folds[0].normalization else None,
                delay=folds[0].delay,  # delayed labels (docs/method.md §13): alike on every fold
            ).as_dict()
            records.append(record)
            self.last_measures[name] = record
        sequential, regimes = self._advance_sequences(position, folds) \
            if self._sequences else ({}, {})
        sizes = {name: [r.learners[name]["window_size"] for r in folds] for name in plan.learners}
        for a, b in plan.pairs:
            pair = [r.pairs[pair_key(a, b)] for r in folds]
            mcnemar = stats.mcnemar([p["a"] for p in pair], [p["b"] for p in pair], plan.alpha)
            q = stats.q_statistic([p["loss_a"] for p in pair], [p["loss_b"] for p in pair])
            for measure in plan.compare:
                va, vb = per_fold[a][measure], per_fold[b][measure]
                live = None
                if measure == VERDICT_MEASURE and sequential:
                    live = sequential[a, b].as_record()
                    if regimes:
                        live["regime"] = regimes[a, b].as_record()
                records.append(ComparisonRecord(
                    stream=self.stream, position=position, measure=measure, a=a, b=b,
                    alpha=plan.alpha, wilcoxon=stats.wilcoxon(va, vb, plan.alpha),
                    sign=stats.sign_test(va, vb, plan.alpha), mcnemar=mcnemar, q=q,
                    scope={"window": dict(plan.window),
                           "window_size": {"a": sizes[a], "b": sizes[b]}},
                    sequential=live,
                ).as_dict())
        for (a, b), result in sequential.items():
            previous = self._verdicts[a, b]
            if result.verdict != previous:
                self._verdicts[a, b] = result.verdict
                records.append(VerdictRecord(
                    stream=self.stream, position=position, a=a, b=b, measure=VERDICT_MEASURE,
                    verdict=result.verdict, previous=previous, lower=result.lower,
                    upper=result.upper, n=result.n, alpha=result.alpha, scope="stream",
                    since=self._first).as_dict())
            if (a, b) in regimes:
                regime, previous = regimes[a, b], self._regime_verdicts[a, b]
                if regime.verdict != previous:
                    self._regime_verdicts[a, b] = regime.verdict
                    r = regime.result
                    records.append(VerdictRecord(
                        stream=self.stream, position=position, a=a, b=b,
                        measure=VERDICT_MEASURE, verdict=r.verdict, previous=previous,
                        lower=r.lower, upper=r.upper, n=r.n, alpha=r.alpha, scope="regime",
                        since=regime.since, segment=regime.segment).as_dict())
        if len(plan.learners) >= 3:
            for measure in plan.compare:
                ranking = stats.friedman_nemenyi(
                    [per_fold[name][measure] for name in plan.learners], plan.learners, plan.alpha)
                records.append(RankingRecord(stream=self.stream, position=position,
                                             measure=measure, **ranking).as_dict())
        return records

    def _drift_evaluation(self) -> list[dict[str, Any]]:
        """The ``drift_evaluation`` records of the stream, at its end (docs/method.md §19): per
        learner and detector, the folds' alarms, then the consensus drifts (when on)."""
        plan, scoring, length = self.plan, self.plan.drift_scoring, self._length
        records: list[dict[str, Any]] = []
        if not length:  # nothing was scored
            return records
        for name in plan.learners:
            for detector in scoring.detectors:
                kinds = [("alarms", self._alarm_log.get((name, detector),
                                                        [[] for _ in range(plan.folds)]))]
                if self._consensus is not None:
                    kinds.append(("drifts", [self._drift_log.get((name, detector), [])]))
                for of, sequences in kinds:
                    periodic = [periodic_alarms(len(seq), length) for seq in sequences]
                    drawn = [random_alarms(len(seq), length, scoring.seed, fold, name, detector,
                                           of) for fold, seq in enumerate(sequences)]
                    scored = score(sequences, scoring.changes, length, scoring.window)
                    records.append(DriftEvaluationRecord(
                        stream=self.stream, position=length, learner=name, detector=detector,
                        quantity=plan.alarm_quantity, of=of, folds=len(sequences),
                        window=scoring.window, changes=[c.position for c in scored.per_change],
                        scores=scored.as_record(),
                        periodic=score(periodic, scoring.changes, length,
                                       scoring.window).as_record(),
                        random=score(drawn, scoring.changes, length, scoring.window).as_record(),
                    ).as_dict())
        return records

    def _advance_sequences(self, position: int, folds: list[FoldReport]
                           ) -> tuple[dict[tuple[str, str], SequentialResult],
                                      dict[tuple[str, str], RegimeResult]]:
        """Feed the examples since the previous report to every pair's sequence (see the module
        docstring); return each pair's whole-stream and regime state at this position, in pair
        order."""
        plan, k = self.plan, self.plan.folds
        if folds[0].delay is not None:  # delayed labels: the sequence runs in label order
            position = folds[0].delay.labelled
        count = position - self._position
        blocks = [r.losses for r in folds]
        for r, block in zip(folds, blocks):
            if block is None:
                raise ValueError(f"stream {self.stream!r}, position {position}: the report of fold "
                                 f"{r.fold} carries no losses, but live verdicts are on "
                                 "(the evaluators need EvalPlan(losses=True))")
            if block.start != self._position:
                raise ValueError(f"stream {self.stream!r}, position {position}: the losses of fold "
                                 f"{r.fold} start after position {block.start}, the previous "
                                 f"report was at {self._position}")
        scored = np.stack([unpack_bits(block.scored, count) for block in blocks])
        scored_per_fold = scored.sum(axis=1)
        losses: dict[str, np.ndarray] = {}
        for name in plan.learners:
            table = np.zeros((k, count), dtype=np.int8)
            for f, block in enumerate(blocks):
                table[f, scored[f]] = unpack_bits(block.losses[name], int(scored_per_fold[f]))
            losses[name] = table
        alpha = plan.verdicts.pair_alpha(plan.alpha, len(self._sequences))
        results, regimes = {}, {}
        for (a, b), sequence in self._sequences.items():
            numerators, mask = fold_differences(losses[a], losses[b], scored, k)
            sequence.extend_numerators(numerators[mask])
            results[a, b] = sequence.result(alpha, plan.verdicts.v_min)
            if (a, b) in self._regimes:
                regime = self._regimes[a, b]
                positions = self._position + 1 + np.flatnonzero(mask)
                regime.extend_numerators(numerators[mask], positions)
                regimes[a, b] = regime.result(alpha, plan.verdicts.v_min)
        if self._first is None and scored.any():
            self._first = self._position + 1 + int(np.flatnonzero(scored.any(axis=0))[0])
        self._position = position
        return results, regimes

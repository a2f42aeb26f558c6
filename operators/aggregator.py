"""The aggregator: one per stream, it turns the k fold reports of a position into output records.

It waits until every fold has reported a position, then emits, in a fixed order that depends
on nothing but the reports: the alarms raised since the previous report (sorted), one
``measures`` record per learner, one ``comparison`` record per pair of learners and compared
measure, and, for three or more learners, one ``ranking`` record per compared measure
(docs/method.md §6, §10).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from foldstream.operators import stats
from foldstream.operators.records import SCHEMA_VERSION, FoldReport, alarm_record, pair_key


@dataclass(frozen=True)
class AggregationPlan:
    """What the aggregator needs of the configuration (picklable)."""

    learners: tuple[str, ...]
    folds: int
    mode: str
    prequential: bool
    window: tuple[tuple[str, Any], ...]
    compare: tuple[str, ...] = ("accuracy", "kappa_m")
    alpha: float = 0.05
    alarm_quantity: str = "loss"


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
            reports = self._pending.setdefault(report.position, {})
            reports[report.fold] = report
            if len(reports) == self.plan.folds:
                del self._pending[report.position]
                records = self._records(report.position, [reports[f] for f in range(self.plan.folds)])
        if len(self._ended) == self.plan.folds and not self._pending:
            self.finished = True
        return records

    # ---------------------------------------------------------------------------------------
    def _records(self, position: int, folds: list[FoldReport]) -> list[dict[str, Any]]:
        plan = self.plan
        order = {name: i for i, name in enumerate(plan.learners)}
        alarms = sorted(
            (pos, order[learner], r.fold, detector, learner)
            for r in folds for pos, learner, detector in r.alarms
        )
        records = [
            alarm_record(self.stream, pos, learner, fold, detector, plan.alarm_quantity)
            for pos, _, fold, detector, learner in alarms
        ]
        head = {"schema": SCHEMA_VERSION, "stream": self.stream, "position": position}
        per_fold = {
            name: {m: [r.learners[name]["values"][m] for r in folds]
                   for m in folds[0].learners[name]["values"]}
            for name in plan.learners
        }
        for name in plan.learners:
            values = {}
            for measure, fold_values in per_fold[name].items():
                mean, std = stats.mean_std(fold_values)
                values[measure] = {"mean": mean, "std": std, "folds": fold_values}
            record = {
                **head,
                "type": "measures",
                "learner": name,
                "mode": plan.mode,
                "prequential": plan.prequential,
                "folds": plan.folds,
                "window": dict(plan.window),
                "window_size": [r.learners[name]["window_size"] for r in folds],
                "values": values,
            }
            if folds[0].normalization:
                record["normalization"] = {
                    key: [r.normalization[name][key] for r in folds]
                    for key in ("positives", "negatives", "scaled")
                }
            record = self._ordered(record)
            records.append(record)
            self.last_measures[name] = record
        for i, a in enumerate(plan.learners):
            for b in plan.learners[i + 1:]:
                pair = [r.pairs[pair_key(a, b)] for r in folds]
                mcnemar = stats.mcnemar([p["a"] for p in pair], [p["b"] for p in pair], plan.alpha)
                q = stats.q_statistic([p["loss_a"] for p in pair], [p["loss_b"] for p in pair])
                for measure in plan.compare:
                    va, vb = per_fold[a][measure], per_fold[b][measure]
                    records.append({
                        **head,
                        "type": "comparison",
                        "measure": measure,
                        "a": a,
                        "b": b,
                        "alpha": plan.alpha,
                        "wilcoxon": stats.wilcoxon(va, vb, plan.alpha),
                        "sign": stats.sign_test(va, vb, plan.alpha),
                        "mcnemar": mcnemar,
                        "q": q,
                    })
        if len(plan.learners) >= 3:
            for measure in plan.compare:
                ranking = stats.friedman_nemenyi(
                    [per_fold[name][measure] for name in plan.learners], plan.learners, plan.alpha)
                records.append({**head, "type": "ranking", "measure": measure, **ranking})
        return [self._ordered(r) for r in records]

    @staticmethod
    def _ordered(record: dict[str, Any]) -> dict[str, Any]:
        """schema, type, stream and position lead every record, the rest in construction order."""
        front = {k: record[k] for k in ("schema", "type", "stream", "position") if k in record}
        return {**front, **{k: v for k, v in record.items() if k not in front}}

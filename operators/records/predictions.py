"""The rows of ``sink.predictions``: every example's prediction per learner and fold.

The fold evaluators keep, between two reports, each example's position, id and true class and
every learner's predicted class (and class scores, when a score-based measure keeps them:
:class:`~foldstream.operators.records.base.FoldPredictions`). When the k reports of a position are
in, the aggregator turns them into one :class:`PredictionsRecord`: columns, one row per
(example, fold), in position then fold order, which the engines hand to the predictions sink
(connectors/predictions.py) instead of the records' sink. Labels are written as text (as a CSV
file has them; JSON and generator labels as ``str`` gives them), the id likewise; a learner
that made no prediction (not ready, quarantined, or an example its fold trains on in holdout
mode) has ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from foldstream.operators.records.base import FoldReport

#: The ``type`` of a predictions record: routed to the predictions sink, never to the records'.
PREDICTIONS = "predictions"


def prediction_column(learner: str) -> str:
    """The column of a learner's predicted labels.

    >>> prediction_column("nb"), score_column("nb")
    ('pred.nb', 'scores.nb')
    """
    return f"pred.{learner}"


def score_column(learner: str) -> str:
    """The column of a learner's class scores (a list per row, the stream's classes in order
    of first appearance)."""
    return f"scores.{learner}"


@dataclass(frozen=True)
class PredictionsRecord:
    """The predictions of one stream's examples between two reports, as columns."""

    stream: str
    position: int
    columns: dict[str, list[Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"type": PREDICTIONS, "stream": self.stream, "position": self.position,
                "columns": self.columns}


def columns_of(learners: Sequence[str], scores: bool) -> list[str]:
    """The columns of a predictions file, in order.

    >>> columns_of(["a", "b"], scores=True)
    ['stream', 'position', 'id', 'fold', 'label', 'pred.a', 'scores.a', 'pred.b', 'scores.b']
    """
    out = ["stream", "position", "id", "fold", "label"]
    for name in learners:
        out.append(prediction_column(name))
        if scores:
            out.append(score_column(name))
    return out


def predictions_record(stream: str, position: int, reports: Sequence[FoldReport],
                       learners: Sequence[str]) -> PredictionsRecord | None:
    """The rows of the k reports of one position (``None`` when they carry none)."""
    kept = [r.predictions for r in reports]
    if not kept or kept[0] is None:
        return None
    scores = kept[0].scores is not None
    cols: dict[str, list[Any]] = {name: [] for name in columns_of(learners, scores)}
    rows = sorted((pos, fold, i) for fold, p in enumerate(kept) for i, pos in enumerate(p.positions))
    starts = []  # per fold, where each example's scores begin in the flat lists
    for p in kept:
        offsets, at = [], 0
        for width in p.widths:
            offsets.append(at)
            at += width
        starts.append(offsets)
    for pos, fold, i in rows:
        p = kept[fold]
        classes = p.classes
        cols["stream"].append(stream)
        cols["position"].append(pos)
        cols["id"].append(str(p.keys[i]))
        cols["fold"].append(fold)
        cols["label"].append(str(classes[p.y[i]]))
        for name in learners:
            code = p.preds[name][i]
            cols[prediction_column(name)].append(None if code < 0 else str(classes[code]))
            if scores:
                at = starts[fold][i]
                cols[score_column(name)].append(p.scores[name][at:at + p.widths[i]])
    return PredictionsRecord(stream, position, cols)

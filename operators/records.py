"""The messages that flow between the stages, and the JSON output records of docs/method.md §10.

Every message is a small dataclass of plain Python values, so that it pickles cheaply between
Flink operators and compares equal in tests. Output records are plain ``dict`` objects built by
the functions at the bottom and written with :func:`dumps`, the one place that decides their
bytes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Hashable

import numpy as np

SCHEMA_VERSION = 1

Label = Hashable
Record = dict[str, Any]
"""An output record (docs/method.md §10): a JSON object built by the functions below."""


@dataclass(slots=True)
class Example:
    """One labelled example of a stream (docs/method.md §1), before it has a position."""

    stream: str
    x: dict[str, Any]
    y: Label
    key: int | str | None = None  # `source.id_field`; None means "use the position"
    location: str | None = None  # where it came from, for messages (file:line, topic@offset)


@dataclass(slots=True)
class Rejected:
    """A record that could not become an example, with the reason and its raw text."""

    stream: str | None
    reason: str
    raw: str
    location: str | None = None
    position: int | None = None  # examples of the stream accepted before it, when known


@dataclass(slots=True)
class ExampleBatch:
    """Consecutive examples of one stream: positions ``start + 1 .. start + len(ys)``."""

    stream: str
    seq: int  # 0, 1, 2, ... per stream
    start: int  # position of the example before the first one (0 for the first batch)
    keys: list[int | str]
    xs: list[dict[str, Any]]
    ys: list[Label]
    final: bool = False  # True on the last batch of a bounded stream (may be empty)

    def __len__(self) -> int:
        return len(self.ys)


@dataclass(slots=True)
class FoldBatch:
    """What one fold (of every learner) receives for an :class:`ExampleBatch`.

    ``y`` and ``prev_y`` are class codes: the index of the label in ``classes``, the stream's
    labels in order of first appearance (so the majority baseline breaks ties towards the class
    seen first). ``prev_y`` is the stream's previous label (-1 before the first example), which is
    what the persistent baseline predicts. ``lags[i]`` holds the previous labels of example ``i``,
    most recent first, for the temporally augmented wrapper (docs/method.md §9).
    """

    stream: str
    fold: int
    seq: int
    start: int
    xs: list[dict[str, Any]]
    y: list[int]
    prev_y: list[int]
    weights: list[int]
    classes: list[Label]
    lags: list[tuple[Label, ...]] | None = None
    final: bool = False

    def __len__(self) -> int:
        return len(self.y)


@dataclass(slots=True)
class PredictionBatch:
    """One learner's predictions on a :class:`FoldBatch`: class codes, -1 for none or unknown.

    ``scored[i]`` says whether the fold scores example ``i`` (always in prequential mode; only the
    examples it does not train on in holdout mode).
    """

    stream: str
    fold: int
    learner: str
    seq: int
    start: int
    y: list[int]
    prev_y: list[int]
    y_pred: list[int]
    scored: list[bool]
    classes: list[Label]
    final: bool = False

    def __len__(self) -> int:
        return len(self.y)


@dataclass(slots=True)
class FoldReport:
    """A fold's snapshot at a reporting position, for every learner and pair of learners.

    ``learners[name]`` holds ``{"values": {measure: float | None}, "window_size": int}``;
    ``pairs["a|b"]`` holds the McNemar counts and the fading-factor losses of the Q statistic;
    ``alarms`` the alarms raised since the previous report, as ``(position, learner, detector)``.
    """

    stream: str
    fold: int
    position: int
    final: bool
    learners: dict[str, dict[str, Any]]
    pairs: dict[str, dict[str, float]]
    alarms: list[tuple[int, str, str]] = field(default_factory=list)
    normalization: dict[str, dict[str, Any]] = field(default_factory=dict)


def pair_key(a: str, b: str) -> str:
    return f"{a}|{b}"


# --------------------------------------------------------------------------------------------
# JSON output


def clean(value: Any) -> Any:
    """Turn numpy scalars into Python ones and NaN or infinity into ``None`` (JSON ``null``)."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def dumps(record: Record) -> str:
    """The exact bytes of an output record: compact JSON, fields in construction order.

    >>> dumps({"schema": 1, "type": "x", "v": float("nan"), "w": np.float64(0.5)})
    '{"schema":1,"type":"x","v":null,"w":0.5}'
    """
    return json.dumps(clean(record), separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def rejected_record(rejected: Rejected) -> Record:
    return {
        "schema": SCHEMA_VERSION,
        "type": "rejected",
        "stream": rejected.stream,
        "position": rejected.position,
        "reason": rejected.reason,
        "location": rejected.location,
        "record": rejected.raw,
    }


def alarm_record(stream: str, position: int, learner: str, fold: int, detector: str,
                 quantity: str) -> Record:
    return {
        "schema": SCHEMA_VERSION,
        "type": "alarm",
        "stream": stream,
        "position": position,
        "learner": learner,
        "fold": fold,
        "detector": detector,
        "quantity": quantity,
    }


def summary_record(stream: str, position: int, read: int, rejected: int, wall_time_s: float,
                   measures: list[Record]) -> Record:
    """The last record of a bounded stream (docs/method.md §10); both engines build it here."""
    return {
        "schema": SCHEMA_VERSION,
        "type": "summary",
        "stream": stream or None,  # "" gathers the records that named no stream
        "position": position,
        "examples_read": read,
        "examples_rejected": rejected,
        "wall_time_s": round(wall_time_s, 3),
        "examples_per_second": round(position / wall_time_s, 1) if wall_time_s > 0 else None,
        "measures": measures,
    }

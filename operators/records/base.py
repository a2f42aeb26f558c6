"""The messages that flow between the stages, and the bytes of the JSON output records.

Every message is a small dataclass of plain Python values, so that it pickles cheaply between
Flink operators and compares equal in tests. The output records of docs/method.md §10 are one
class per type in :mod:`foldstream.operators.records.outputs`; what they write, JSON objects, is turned
into bytes by :func:`dumps` here, the one place that decides them.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Hashable

import numpy as np

SCHEMA_VERSION = 1

Label = Hashable
Record = dict[str, Any]
"""An output record (docs/method.md §10) as a JSON object: what
:meth:`~foldstream.operators.records.outputs.OutputRecord.as_dict` gives."""


@dataclass(slots=True)
class Example:
    """One example of a stream (docs/method.md §1), before it has a position.

    ``y`` is ``None`` for an arrival without its label (delayed labels, docs/method.md §13): a
    label is never ``None`` otherwise (the connectors reject such rows).
    """

    stream: str
    x: dict[str, Any]
    y: Label | None
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
    keys: list[int | str] | None = None  # the examples' ids, when predictions are kept
    holdout: bool = False  # the held-out test set (operators/stages/holdout.py): scored, not learned

    def __len__(self) -> int:
        return len(self.y)


@dataclass(slots=True)
class PredictionBatch:
    """One learner's predictions on a :class:`FoldBatch`: class codes, -1 for none or unknown.

    ``scored[i]`` says whether the fold scores example ``i`` (always in prequential mode; only the
    examples it does not train on in holdout mode). ``error`` is set on the one batch where the
    learner replica raised: ``(position, phase, "Type: message")`` (see
    :class:`~foldstream.operators.stages.learner.LearnerTask`). ``scores`` is kept only when a
    score-based measure is configured (``evaluation.scores``): per example, the learner's score
    for each class code (0.0 where it gave none, and for examples not predicted), example after
    example in one flat list (``len(classes)`` values each: one list converts to an array at
    a third of the cost of a list of rows).
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
    error: tuple[int, str, str] | None = None
    scores: list[float] | None = None
    keys: list[int | str] | None = None  # the examples' ids, when predictions are kept

    def __len__(self) -> int:
        return len(self.y)


@dataclass(slots=True)
class FoldLosses:
    """One fold's per-example 0/1 losses since its previous report, packed (docs/method.md §12).

    The examples are those at positions ``start + 1 .. position`` of the report that carries
    it, in position order: every fold of a stream reports at the same positions, so the k folds'
    blocks of one report cover the same examples and line up by index. ``scored`` has one bit
    per example (whether the fold scored it: always in prequential mode, the examples it did
    not train on in holdout mode); ``losses[learner]`` one bit per *scored* example, in order
    (1: the prediction was wrong). Bits are packed by :func:`pack_bits` into ``bytes``, so a
    report of 1,000 examples carries 125 bytes per learner, pickles cheaply between Flink
    operators, and the dataclass still compares equal in tests (numpy arrays would not).

    >>> block = FoldLosses(0, pack_bits([True, False, True]), {"a": pack_bits([True, False])})
    >>> unpack_bits(block.scored, 3).tolist(), unpack_bits(block.losses["a"], 2).tolist()
    ([True, False, True], [True, False])
    """

    start: int
    scored: bytes
    losses: dict[str, bytes]


def pack_bits(bits: Any) -> bytes:
    """A sequence of booleans as packed bytes (most significant bit first, zero-padded).

    >>> pack_bits([True] * 9)
    b'\\xff\\x80'
    """
    return np.packbits(np.asarray(bits, dtype=bool)).tobytes()


def unpack_bits(data: bytes, count: int) -> np.ndarray:
    """The first ``count`` bits of :func:`pack_bits` output, as a bool array.

    >>> unpack_bits(b"\\xff\\x80", 9).tolist() == [True] * 9
    True
    """
    bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), count=count)
    if bits.size != count:
        raise ValueError(f"{len(data)} packed bytes hold fewer than {count} bits")
    return bits.astype(bool)


@dataclass(slots=True)
class FoldReport:
    """A fold's snapshot at a reporting position, for every learner and pair of learners.

    ``learners[name]`` holds ``{"values": {measure: float | None}, "window_size": int}``;
    ``pairs["a|b"]`` holds the McNemar counts and the fading-factor losses of the Q statistic;
    ``alarms`` the alarms raised since the previous report, as ``(position, learner, detector)``;
    ``losses`` the per-example losses since the previous report when live verdicts are on
    (:class:`FoldLosses`), else ``None``; ``errors`` the learner replicas quarantined since the
    previous report, as ``(position, learner, phase, error)``.
    """

    stream: str
    fold: int
    position: int
    final: bool
    learners: dict[str, dict[str, Any]]
    pairs: dict[str, dict[str, float]]
    alarms: list[tuple[int, str, str]] = field(default_factory=list)
    normalization: dict[str, dict[str, Any]] = field(default_factory=dict)
    losses: FoldLosses | None = None
    errors: list[tuple[int, str, str, str]] = field(default_factory=list)
    delay: DelayCounts | None = None  # delayed labels only (docs/method.md §13)
    predictions: "FoldPredictions | None" = None  # sink.predictions: the examples since the last report


@dataclass(slots=True)
class FoldPredictions:
    """A fold's examples since its previous report, for ``sink.predictions``: each one's
    position, id and true class code, and every learner's predicted code (-1: none, or not
    predicted) and, when kept, class scores (one flat list, ``len(classes)`` values an example,
    the classes as they were at its batch: ``widths`` gives each example's)."""

    positions: list[int] = field(default_factory=list)
    keys: list[int | str] = field(default_factory=list)
    y: list[int] = field(default_factory=list)
    preds: dict[str, list[int]] = field(default_factory=dict)
    scores: dict[str, list[float]] | None = None
    widths: list[int] = field(default_factory=list)
    classes: list[Label] = field(default_factory=list)


@dataclass(slots=True)
class DelayCounts:
    """A fold's label counts at a report of a delayed stream (docs/method.md §13).

    ``labelled``: examples scored; ``pending``: arrived, not yet labelled; ``expired``: dropped
    unscored beyond ``max_pending``; ``delay_sum`` and ``delay_max``: the label delays, in
    examples (arrivals between an example's arrival and its label), of the labelled ones. Every
    fold of a stream sees the same events, so the k folds' counts are equal.

    >>> DelayCounts(4, 1, 0, 6, 3).delay_mean
    1.5
    """

    labelled: int
    pending: int
    expired: int
    delay_sum: int
    delay_max: int

    @property
    def delay_mean(self) -> float | None:
        return self.delay_sum / self.labelled if self.labelled else None


def pair_key(a: str, b: str) -> str:
    return f"{a}|{b}"


# --------------------------------------------------------------------------------------------
# JSON output


def plain(value: Any) -> Any:
    """A numpy scalar as the matching Python scalar; anything else unchanged (NaN stays NaN).

    Python scalars pickle smaller and faster and are JSON serialisable; unlike :func:`clean`
    this keeps every value, NaN and infinity included, and does not descend into containers.

    >>> plain(np.float64(0.5)), plain(np.str_("up")), plain(float("nan"))
    (0.5, 'up', nan)
    """
    return value.item() if isinstance(value, np.generic) else value


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

    Text is UTF-8 as typed, but for the characters JSON would let through raw that a terminal
    acts on (DEL and the C1 controls, ``U+009B`` is CSI) or that are no text (lone
    surrogates): they are ``\\u`` escapes, as the C0 controls always are, so a file or
    standard output of records shown on a terminal (``cat``, ``tail -f``) cannot act on it.
    The value read back is the same.

    >>> dumps({"schema": 1, "type": "x", "v": float("nan"), "w": np.float64(0.5)})
    '{"schema":1,"type":"x","v":null,"w":0.5}'
    >>> print(dumps({"stream": "é\x1b\x9b\x7f"}))
    {"stream":"é\\u001b\\u009b\\u007f"}
    """
    text = json.dumps(clean(record), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return _RAW_CONTROLS.sub(_json_escape, text)


#: what :func:`dumps` escapes beyond what ``json.dumps`` does
_RAW_CONTROLS = re.compile("[\x7f-\x9f\ud800-\udfff]")


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


DEAD_LETTER_MAX_BYTES = 4096
"""The most bytes (UTF-8) of a rejected input kept in its ``rejected`` record; the default of
``sink.dead_letter_max_bytes``. A stream may send a line of any size: the record keeps a bounded
prefix and the length and SHA-256 of the whole, so that a dead-letter file stays small and the
input can still be identified."""


def utf8_prefix(text: str, max_bytes: int) -> tuple[str, int, bool]:
    """The longest prefix of ``text`` of at most ``max_bytes`` UTF-8 bytes, cut between characters.

    Returns ``(prefix, bytes of the whole text, whether it was cut)``.

    >>> utf8_prefix("héllo", 2)
    ('h', 6, True)
    >>> utf8_prefix("abc", 10)
    ('abc', 3, False)
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text, len(data), False
    return data[:max_bytes].decode("utf-8", "ignore"), len(data), True


def error_text(error: BaseException, max_chars: int = 500) -> str:
    """``"Type: message"`` of an exception, at most ``max_chars`` characters (for records).

    >>> error_text(ValueError("x" * 10), max_chars=14)
    'ValueError: x…'
    """
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= max_chars else text[:max_chars - 1] + "…"

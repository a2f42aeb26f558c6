"""The messages that flow between the stages, and the JSON output records of docs/method.md §10.

Every message is a small dataclass of plain Python values, so that it pickles cheaply between
Flink operators and compares equal in tests. Output records are plain ``dict`` objects built by
the functions at the bottom and written with :func:`dumps`, the one place that decides their
bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from collections.abc import Mapping, Sequence
from typing import Any, Hashable

import numpy as np

SCHEMA_VERSION = 1

Label = Hashable
Record = dict[str, Any]
"""An output record (docs/method.md §10): a JSON object built by the functions below."""


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

    def __len__(self) -> int:
        return len(self.y)


@dataclass(slots=True)
class PredictionBatch:
    """One learner's predictions on a :class:`FoldBatch`: class codes, -1 for none or unknown.

    ``scored[i]`` says whether the fold scores example ``i`` (always in prequential mode; only the
    examples it does not train on in holdout mode). ``error`` is set on the one batch where the
    learner replica raised: ``(position, phase, "Type: message")`` (see
    :class:`~foldstream.operators.learners.LearnerTask`).
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


def new_record(kind: str, stream: str | None, position: int | None, **fields: Any) -> Record:
    """An output record of type ``kind``: the fields every record starts with, then ``fields``
    in their order (docs/method.md §10).

    >>> new_record("alarm", "elec", 3, learner="ht")
    {'schema': 1, 'type': 'alarm', 'stream': 'elec', 'position': 3, 'learner': 'ht'}
    """
    return {"schema": SCHEMA_VERSION, "type": kind, "stream": stream, "position": position,
            **fields}


def rejected_record(rejected: Rejected, max_bytes: int = DEAD_LETTER_MAX_BYTES) -> Record:
    """The dead-letter record of an input (docs/method.md §10): at most ``max_bytes`` of it.

    >>> r = rejected_record(Rejected("s", "bad", "é" * 3, "f:2", 0), max_bytes=3)
    >>> r["record"], r["record_bytes"], r["truncated"]
    ('é', 6, True)
    """
    raw = rejected.raw
    kept, size, truncated = utf8_prefix(raw, max_bytes)
    return new_record(
        "rejected", rejected.stream, rejected.position,
        reason=rejected.reason,
        location=rejected.location,
        record=kept,
        record_bytes=size,
        record_sha256=hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest(),
        truncated=truncated,
    )


def learner_error_record(stream: str, position: int, learner: str, fold: int, error: str,
                         phase: str) -> Record:
    """A learner replica raised and was quarantined (docs/method.md §10): reported once."""
    return new_record(
        "learner_error", stream, position,
        learner=learner,
        fold=fold,
        error=error,
        phase=phase,
    )


def alarm_record(stream: str, position: int, learner: str, fold: int, detector: str,
                 quantity: str) -> Record:
    return new_record(
        "alarm", stream, position,
        learner=learner,
        fold=fold,
        detector=detector,
        quantity=quantity,
    )


NORMALIZATION_FIELDS = ("positives", "negatives", "scaled")
"""The per-fold counts of a ``measures`` record's ``normalization`` object, in their order."""


def measures_record(stream: str, position: int, learner: str, mode: str, prequential: bool,
                    folds: int, window: Mapping[str, Any], window_size: Sequence[int],
                    fold_values: Mapping[str, Sequence[float | None]],
                    normalization: Sequence[Mapping[str, Any]] | None = None,
                    delay: DelayCounts | None = None) -> Record:
    """One learner's measures at a report, over its ``k`` folds (docs/method.md §10).

    Parameters
    ----------
    stream, position, learner : str, int, str
        Where the record belongs, and whose measures it holds.
    mode, prequential, folds, window : str, bool, int, mapping
        The evaluation's settings, copied into every ``measures`` record.
    window_size : sequence of int
        Each fold's window size at the report.
    fold_values : mapping of str to sequence of float or None
        Each measure's value on every fold, in fold order; the record holds their mean and
        standard deviation (:func:`~foldstream.operators.stats.mean_std`) beside them.
    normalization : sequence of mappings, optional
        Each fold's normalisation counts (:data:`NORMALIZATION_FIELDS`) of this learner; the
        field is written only when given.
    delay : DelayCounts, optional
        The label counts of a delayed stream (docs/method.md §13), the same on every fold; the
        fields are written only when given.

    Examples
    --------
    >>> record = measures_record("s", 4, "ht", "cv", True, 2, {"kind": "sliding", "size": 2},
    ...                          [2, 2], {"accuracy": [0.5, 1.0]})
    >>> record["values"]
    {'accuracy': {'mean': 0.75, 'std': 0.3535533905932738, 'folds': [0.5, 1.0]}}
    >>> "normalization" in record, "labelled" in record
    (False, False)
    """
    from foldstream.operators.stats import mean_std  # it imports this module

    values = {}
    for measure, per_fold in fold_values.items():
        mean, std = mean_std(per_fold)
        values[measure] = {"mean": mean, "std": std, "folds": per_fold}
    record = new_record(
        "measures", stream, position,
        learner=learner,
        mode=mode,
        prequential=prequential,
        folds=folds,
        window=dict(window),
        window_size=list(window_size),
        values=values,
    )
    if normalization:
        record["normalization"] = {key: [counts[key] for counts in normalization]
                                   for key in NORMALIZATION_FIELDS}
    if delay is not None:
        record.update(labelled=delay.labelled, pending=delay.pending, expired=delay.expired,
                      delay_mean=delay.delay_mean, delay_max=delay.delay_max)
    return record


def comparison_record(stream: str, position: int, measure: str, a: str, b: str, alpha: float,
                      wilcoxon: Mapping[str, Any], sign: Mapping[str, Any],
                      mcnemar: Mapping[str, Any], q: Mapping[str, Any],
                      sequential: Mapping[str, Any] | None = None,
                      scope: Mapping[str, Any] | None = None) -> Record:
    """The fold tests of a pair of learners on one measure at a report (docs/method.md §6, §10).

    ``wilcoxon``, ``sign``, ``mcnemar`` and ``q`` are the tests' objects
    (:mod:`~foldstream.operators.stats`); ``scope`` what the fold tests cover (``{window,
    window_size: {a, b}}``: the window and each fold's window size of A and B); ``sequential``
    the pair's confidence sequence
    (:meth:`~foldstream.operators.sequential.SequentialResult.as_record`, with the regime
    sequence inside as ``regime`` when on), written only when given (live verdicts on, the
    verdict measure).

    >>> record = comparison_record("s", 9, "accuracy", "ht", "nb", 0.05, {"reject": False},
    ...                            {"reject": False}, {"reject": False}, {"q": 0.1})
    >>> list(record)[4:], "sequential" in record
    (['measure', 'a', 'b', 'alpha', 'wilcoxon', 'sign', 'mcnemar', 'q'], False)
    """
    record = new_record(
        "comparison", stream, position,
        measure=measure,
        a=a,
        b=b,
        alpha=alpha,
        wilcoxon=wilcoxon,
        sign=sign,
        mcnemar=mcnemar,
        q=q,
    )
    if scope is not None:
        record["scope"] = scope
    if sequential is not None:
        record["sequential"] = sequential
    return record


def ranking_record(stream: str, position: int, measure: str,
                   ranking: Mapping[str, Any]) -> Record:
    """The Friedman test and Nemenyi ranks of three or more learners on one measure
    (docs/method.md §6, §10): ``ranking`` is
    :func:`~foldstream.operators.stats.friedman_nemenyi`'s object, its fields in its order.

    >>> ranking_record("s", 9, "accuracy", {"learners": ["a", "b", "c"], "p_value": 0.5})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'schema': 1, 'type': 'ranking', 'stream': 's', 'position': 9, 'measure': 'accuracy',
     'learners': ['a', 'b', 'c'], 'p_value': 0.5}
    """
    return new_record("ranking", stream, position, measure=measure, **ranking)


def verdict_record(stream: str, position: int, a: str, b: str, measure: str, verdict: str,
                   previous: str, lower: float, upper: float, n: int, alpha: float,
                   scope: str = "stream", since: int | None = None,
                   segment: int | None = None) -> Record:
    """A pair's live verdict of one scope changed at this report (docs/method.md §10, §12, §15).

    ``scope`` is ``"stream"`` (§12: every example since ``since``, the first scored one) or
    ``"regime"`` (§15: the examples of segment ``segment``, from ``since`` on).

    >>> r = verdict_record("s", 900, "ht", "nb", "accuracy", "a_better", "undecided", -0.09,
    ...                    -0.01, 900, 0.05, since=1)
    >>> r["verdict"], r["scope"], r["since"], "segment" in r
    ('a_better', 'stream', 1, False)
    """
    record = new_record(
        "verdict", stream, position,
        a=a,
        b=b,
        measure=measure,
        verdict=verdict,
        previous=previous,
        lower=lower,
        upper=upper,
        n=n,
        alpha=alpha,
        scope=scope,
        since=since,
    )
    if segment is not None:
        record["segment"] = segment
    return record


def drift_record(stream: str, position: int, learner: str, detector: str, quantity: str,
                 folds: list[int], first: int) -> Record:
    """Enough of a learner's folds alarmed within a window: a consensus drift (docs/method.md
    §16).

    >>> drift_record("s", 2900, "ht", "adwin", "loss", [1, 2, 3], 2100)["first"]
    2100
    """
    return new_record(
        "drift", stream, position,
        learner=learner,
        detector=detector,
        quantity=quantity,
        folds=list(folds),
        first=first,
    )


def summary_record(stream: str, position: int, read: int, rejected: int, wall_time_s: float,
                   measures: list[Record], interrupted: bool = False,
                   positive_class: Label | None = None, classes: list[Label] | None = None,
                   ) -> Record:
    """The last record of a bounded stream (docs/method.md §10); both engines build it here.

    ``interrupted``: the run was stopped (a signal) before the end of its input; the field is
    written only then, as ``"interrupted": true``. ``positive_class`` (the configuration's
    ``evaluation.positive_class``) and ``classes`` (the stream's labels): when a positive class
    is set and matches none of the labels
    (:func:`~foldstream.operators.evaluator.positive_code`), so that precision, recall and F1
    were undefined for the whole run, the field ``positive_class_not_seen`` holds it; it is
    written only then.

    >>> record = summary_record("s", 2, 2, 0, 1.0, [], positive_class="yes", classes=["0", "1"])
    >>> record["positive_class_not_seen"]
    'yes'
    >>> "positive_class_not_seen" in summary_record("s", 2, 2, 0, 1.0, [], positive_class=1,
    ...                                             classes=["0", "1"])
    False
    """
    from foldstream.operators.evaluator import positive_code  # it imports this module

    record = new_record(
        "summary", stream or None, position,  # "" gathers the records that named no stream
        examples_read=read,
        examples_rejected=rejected,
        wall_time_s=round(wall_time_s, 3),
        examples_per_second=round(position / wall_time_s, 1) if wall_time_s > 0 else None,
        measures=measures,
    )
    if interrupted:
        record["interrupted"] = True
    if positive_class is not None and classes is not None \
            and positive_code(list(classes), positive_class) < 0:
        record["positive_class_not_seen"] = positive_class
    return record

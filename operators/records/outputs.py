"""The output records of docs/method.md §10: one class per record type, its JSON and its schema.

Each record type is one dataclass, built by keyword. It holds the record's fields in the order
they are written; :meth:`OutputRecord.as_dict` gives the JSON object (the fields every record
starts with, ``schema`` and ``type``, then the class's fields in order, an optional field left
out while unset) and :func:`~foldstream.operators.records.base.dumps` its exact bytes.
:mod:`~foldstream.operators.records.reading` generates the JSON Schema from these classes
(each field carries its schema fragment, so a field's name, order, type and meaning have one
home) and reads a decoded JSON object back into its class, after checking it against that
schema.

Why one module: the record classes, the schema fragments they share
(:data:`SHARED_DEFS`) and :data:`RECORD_CLASSES` (their order is the schema's and the
documentation's) are one table of the wire format read top to bottom; split by record kind,
a shared fragment or the registry would sit away from the fields that use it.

Why dataclasses and not pydantic models: the writers run inside the stages (in Flink and in
process) once per learner and pair at every report, where a slotted dataclass costs a plain
object's construction and nothing else, and where the bytes must stay exactly the builders'
(field order, optional fields left out, the nested objects of :mod:`~foldstream.operators.stats.significance`
and :mod:`~foldstream.operators.stats.sequential` written as they come); the schema is the draft
2020-12 document consumers already use, generated from fragments written next to each field
rather than from annotations, which could not say "a probability", "a window of four kinds" or
"``recall[<label>]``"; and the readers' check walks that same schema, so a reader never
trusts a line further than the schema allows, without a second definition.

Examples
--------
>>> alarm = AlarmRecord(stream="s", position=3, learner="ht", fold=0, detector="adwin",
...                     quantity="loss")
>>> alarm.as_dict()  # doctest: +NORMALIZE_WHITESPACE
{'schema': 1, 'type': 'alarm', 'stream': 's', 'position': 3, 'learner': 'ht', 'fold': 0,
 'detector': 'adwin', 'quantity': 'loss'}
>>> AlarmRecord.build(alarm.as_dict()) == alarm
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

import numpy as np

from foldstream.operators.stats.auc import SCORE_MEASURES
from foldstream.operators.stats.measures import MEASURES, positive_code
from foldstream.operators.stats.normalization import NORMALIZABLE
from foldstream.operators.records.base import (
    DEAD_LETTER_MAX_BYTES, SCHEMA_VERSION, DelayCounts, Label, Record, Rejected, utf8_prefix
)
from foldstream.operators.stats.sequential import A_BETTER, B_BETTER, UNDECIDED
from foldstream.operators.stats.significance import mean_std


INT_MAX = 2**63 - 1
"""The largest integer a record may hold (a signed 64-bit integer): no position or count of a
stream comes near it, and a reader refuses a larger one rather than meet it in numpy."""

VERDICTS = (A_BETTER, B_BETTER, UNDECIDED)
DETECTORS = ("adwin", "page_hinkley")
MODES = ("bootstrap", "cv", "split", "single")


class RecordError(ValueError):
    """A record that does not follow the schema; the message names the record and the field."""


# ---------------------------------------------------------------------------- shared schema
def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _obj(properties: dict[str, Any], required: Sequence[str] | None = None,
         **more: Any) -> dict[str, Any]:
    """An object schema: these properties, all required unless said, no others."""
    return {"type": "object", **more,
            "required": list(properties if required is None else required),
            "additionalProperties": False, "properties": properties}


_INT0 = {"type": "integer", "minimum": 0}
_BOUND = _ref("bound")
_LIVE = {
    "n": _INT0,
    "sum": {"type": "number"},
    "variance": {"type": "number", "minimum": 0},
    "lower": _BOUND,
    "upper": _BOUND,
    "alpha": _ref("alpha"),
    "verdict": _ref("verdictValue"),
}
_MEASURE_VALUE = _ref("measureValue")

SHARED_DEFS: dict[str, Any] = {
    "schemaVersion": {"const": SCHEMA_VERSION, "description": "The record format version."},
    "stream": {"type": "string", "description": "The stream's name."},
    "position": {
        "type": "integer", "minimum": 0,
        "description": "Examples of the stream accepted so far (a rejected record does not "
                       "advance it)."},
    "name": {"type": "string", "minLength": 1},
    "number": {"type": ["number", "null"],
               "description": "A number, or null where it is undefined."},
    "probability": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
    "numbers": {"type": "array", "items": _ref("number")},
    "alpha": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "verdictValue": {
        "enum": list(VERDICTS),
        "description": "docs/method.md §12: b_better while the lower end of the confidence "
                       "sequence is above 0, a_better while its upper end is below 0, else "
                       "undecided."},
    "bound": {"type": "number", "minimum": -1, "maximum": 1},
    "sequential": _obj(
        {**_LIVE, "regime": _obj(
            {"segment": {"type": "integer", "minimum": 1},
             "since": {"type": ["integer", "null"], "minimum": 1}, **_LIVE},
            description="The regime verdict (docs/method.md §15), added within schema 1 "
                        "(absent when evaluation.verdicts.regime is false, and in older "
                        "files): the same sequence over the current segment only. ADWIN on "
                        "the pair's differences starts a new segment after each change it "
                        "detects; segment j runs at alpha_j = alpha_v 6 / (pi^2 j^2), so that "
                        "the chance that any segment's interval ever misses its target stays "
                        "at most alpha_v. since: the position of the segment's first example "
                        "(null while it has none).")},
        required=list(_LIVE),
        description="The pair's live-verdict confidence sequence at this report "
                    "(docs/method.md §12), on the comparisons of accuracy when "
                    "evaluation.verdicts.enabled: n scored examples since the start of the "
                    "stream, S_n = sum of the fold-averaged 0/1-loss differences d_t (loss of "
                    "a minus loss of b, so positive: b did better), the variance process V_n, "
                    "the bounds for the running mean difference (valid at every report at "
                    "once, with probability 1 - alpha), alpha_v (after any Bonferroni "
                    "correction) and the verdict. Caveat: the verdict is about these learners "
                    "as they ran on this stream (their realised models, averaged over the "
                    "folds), like McNemar's test; two learners of the same design with "
                    "different random seeds are different models and a long enough stream "
                    "tells them apart. Whether one algorithm is better is what the fold tests "
                    "(wilcoxon, sign) address."),
    "measureValue": _obj(
        {"mean": _ref("number"),
         "std": {"type": ["number", "null"], "minimum": 0},
         "folds": {"type": "array", "minItems": 1, "items": _ref("number")}},
        description="A measure over the folds: mean, sample standard deviation (n-1) and the "
                    "k per-fold values; a fold whose value is undefined is null and left out "
                    "of mean and std."),
    "values": {
        "type": "object",
        "description": "Every scalar measure of docs/method.md §5, then `recall[<label>]` for "
                       "every class of the stream, then every score-based measure of "
                       "`evaluation.scores` (`auc`, docs/method.md §18), then `norm_<measure>` "
                       "for every measure of `evaluation.normalize`.",
        "required": list(MEASURES),
        "properties": {m: _MEASURE_VALUE for m in MEASURES + SCORE_MEASURES},
        "patternProperties": {
            r"^recall\[.*\]$": _MEASURE_VALUE,
            f"^norm_({'|'.join(NORMALIZABLE)})$": _MEASURE_VALUE},
        "additionalProperties": False},
    "wholeValues": {
        "type": "object",
        "description": "Every scalar measure of docs/method.md §5 over the whole stream so far "
                       "(a cumulative window: every example each fold scored), whatever the "
                       "configured window.",
        "required": list(MEASURES),
        "properties": {m: _MEASURE_VALUE for m in MEASURES},
        "additionalProperties": False},
    "window": {
        "description": "The evaluator's window: its kind and its one parameter.",
        "oneOf": [
            _obj({"kind": {"const": "cumulative"}}),
            _obj({"kind": {"const": "sliding"}, "size": {"type": "integer", "minimum": 1}}),
            _obj({"kind": {"const": "fading"},
                  "alpha": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}}),
            _obj({"kind": {"const": "adwin"},
                  "delta": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}}),
        ]},
}


# ------------------------------------------------------------------------------- the classes
def spec(schema: dict[str, Any], *, optional: bool = False, default: Any = MISSING,
         description: str | None = None, omit: Any = None, written_with: str | None = None):
    """A record field: its JSON Schema fragment and whether it is written always.

    ``optional``: the field is left out of the JSON while it equals ``omit`` (``None``, or
    ``False`` for a flag written only when true), or, with ``written_with``, while that other
    field is left out; its default is ``omit``.
    """
    if description is not None:
        schema = {**schema, "description": description}
    if optional and default is MISSING:
        default = omit
    meta = {"schema": schema, "optional": optional, "omit": omit, "written_with": written_with}
    return field(default=default, metadata=meta)


def _stream(**more):
    return spec(_ref("stream"), **more)


def _position(**more):
    return spec(_ref("position"), **more)


@dataclass(slots=True, kw_only=True)
class OutputRecord:
    """What every output record class shares: its ``type``, its JSON, and reading it back."""

    TYPE: ClassVar[str] = ""

    @classmethod
    def layout(cls) -> tuple[tuple[str, bool, Any, str | None], ...]:
        """``(name, optional, omit, written_with)`` of every field, in writing order."""
        if "_layout_cache" not in cls.__dict__:
            cls._layout_cache = tuple(
                (f.name, f.metadata["optional"], f.metadata["omit"], f.metadata["written_with"])
                for f in fields(cls))
        return cls._layout_cache

    def as_dict(self) -> Record:
        """The JSON object of the record, fields in writing order (what a sink writes)."""
        out: Record = {"schema": SCHEMA_VERSION, "type": self.TYPE}
        for name, optional, omit, written_with in self.layout():
            value = getattr(self, name)
            if optional:
                if written_with is not None:
                    if getattr(self, written_with) is None:
                        continue
                elif value is omit:
                    continue
            out[name] = _json_value(value)
        return out

    @classmethod
    def build(cls, record: Mapping[str, Any]) -> "OutputRecord":
        """The record of a decoded JSON object of this type, as it is: checking it first is
        :func:`~foldstream.operators.records.reading.parse_record`'s."""
        return cls(**{name: record.get(name, omit) for name, _, omit, _ in cls.layout()})

    @classmethod
    def schema(cls) -> dict[str, Any]:
        """This type's JSON Schema (a ``$defs`` entry of
        :func:`~foldstream.operators.records.reading.record_schema`)."""
        properties = {"schema": _ref("schemaVersion"), "type": {"const": cls.TYPE}}
        required = ["schema", "type"]
        for f in fields(cls):
            properties[f.name] = f.metadata["schema"]
            if not f.metadata["optional"]:
                required.append(f.name)
        description = " ".join((cls.__doc__ or "").split("\n\n")[0].split())
        return {"type": "object", "description": description, "required": required,
                "additionalProperties": False, "properties": properties}


def _json_value(value: Any) -> Any:
    if isinstance(value, OutputRecord):
        return value.as_dict()
    if isinstance(value, list) and value and isinstance(value[0], OutputRecord):
        return [v.as_dict() for v in value]
    return value


def measure_values(fold_values: Mapping[str, Sequence[float | None]]) -> dict[str, dict]:
    """The ``values`` of a ``measures`` or ``holdout`` record: each measure's mean and standard
    deviation over the folds (:func:`~foldstream.operators.stats.significance.mean_std`) beside the fold
    values (kept as given).

    >>> measure_values({"accuracy": [0.5, 1.0]})["accuracy"]["mean"]
    0.75
    """
    stats = _mean_stds(list(fold_values.values()))
    return {measure: {"mean": mean, "std": std, "folds": per_fold}
            for (measure, per_fold), (mean, std) in zip(fold_values.items(), stats)}


def _mean_stds(rows: list[Sequence[float | None]]) -> list[tuple[float | None, float | None]]:
    """:func:`~foldstream.operators.stats.significance.mean_std` of each row.

    The rows of floats alone, all defined and as long as the first, go through numpy together
    (a measure's fold values: a call per row would cost most of a report's aggregation): each
    row of a C-ordered array is reduced as the row alone is, so every mean and deviation is the
    same float. The others go through ``mean_std`` itself.

    >>> _mean_stds([[1.0, 2.0, 3.0], [0.5, None, 0.5], [0.5, 0.5, float("nan")], [2.0, 4.0, 6.0]])
    [(2.0, 1.0), (0.5, 0.0), (0.5, 0.0), (4.0, 2.0)]
    """
    k = len(rows[0]) if rows else 0
    plain = [i for i, row in enumerate(rows) if len(row) == k and set(map(type, row)) == {float}]
    done: dict[int, tuple[float, float | None]] = {}
    if plain:
        block = np.array([rows[i] for i in plain], dtype=np.float64)
        defined = (~np.isnan(block).any(axis=1)).tolist()
        means = block.mean(axis=1).tolist()
        stds = block.std(axis=1, ddof=1).tolist() if k > 1 else [None] * len(plain)
        done = {i: (means[j], stds[j]) for j, i in enumerate(plain) if defined[j]}
    return [done[i] if i in done else mean_std(row) for i, row in enumerate(rows)]


@dataclass(slots=True, kw_only=True)
class MeasuresRecord(OutputRecord):
    """One per learner at every reporting position: the windowed measures over the folds."""

    TYPE: ClassVar[str] = "measures"
    stream: str = _stream()
    position: int = _position()
    learner: str = spec(_ref("name"))
    mode: str = spec({"enum": list(MODES)})
    prequential: bool = spec({"type": "boolean"})
    folds: int = spec({"type": "integer", "minimum": 1, "description": "k"})
    window: dict[str, Any] = spec(_ref("window"))
    window_size: list[float] = spec(
        {"type": "array", "minItems": 1, "items": {"type": "number", "minimum": 0}},
        description="Per fold, the examples the window holds (a fading window: their total "
                    "weight, not an integer).")
    values: dict[str, dict[str, Any]] = spec(_ref("values"))
    normalization: dict[str, list[Any]] | None = spec(
        _obj({"positives": {"type": "array", "items": {"type": ["integer", "null"],
                                                       "minimum": 0}},
              "negatives": {"type": "array", "items": {"type": ["integer", "null"],
                                                       "minimum": 0}},
              "scaled": {"type": "array", "items": {"type": "boolean"}}}),
        optional=True,
        description="With evaluation.normalize: per fold, the positives and negatives of the "
                    "window the normalisation enumerated, and whether they were scaled down "
                    "(docs/method.md §8); null where the window is not binary.")
    labelled: int | None = spec(
        _INT0, optional=True,
        description="Delayed labels only (evaluation.delay, docs/method.md §13): examples "
                    "scored so far (their labels have arrived); reports come each time it "
                    "reaches a multiple of report_every, and at the end.")
    pending: int | None = spec(
        _INT0, optional=True, written_with="labelled",
        description="Delayed labels only: examples arrived whose labels have not (they are "
                    "not scored yet); at most evaluation.delay.max_pending.")
    expired: int | None = spec(
        _INT0, optional=True, written_with="labelled",
        description="Delayed labels only: examples dropped unscored because more than "
                    "evaluation.delay.max_pending waited for labels; position = labelled + "
                    "pending + expired.")
    delay_mean: float | None = spec(
        {"type": ["number", "null"], "minimum": 0}, optional=True, written_with="labelled",
        description="Delayed labels only: the mean label delay of the labelled examples, in "
                    "examples (arrivals between an example's arrival and its label); null "
                    "before any label.")
    delay_max: int | None = spec(
        _INT0, optional=True, written_with="labelled",
        description="Delayed labels only: the largest label delay so far, in examples.")
    whole_stream: dict[str, dict[str, Any]] | None = spec(
        _ref("wholeValues"), optional=True,
        description="Added within schema 1: the scalar measures over the whole stream so far "
                    "(every example each fold scored, mean and sd over the folds), beside "
                    "`values`, those of the configured window; equal to them with a "
                    "cumulative window. Absent in older files and after resuming from a "
                    "checkpoint taken without it.")

    NORMALIZATION_FIELDS: ClassVar[tuple[str, ...]] = ("positives", "negatives", "scaled")

    @classmethod
    def of_folds(cls, *, stream: str, position: int, learner: str, mode: str,
                 prequential: bool, folds: int, window: Mapping[str, Any],
                 window_size: Sequence[float],
                 fold_values: Mapping[str, Sequence[float | None]],
                 normalization: Sequence[Mapping[str, Any]] | None = None,
                 delay: DelayCounts | None = None,
                 whole_values: Mapping[str, Sequence[float | None]] | None = None
                 ) -> "MeasuresRecord":
        """One learner's measures at a report from each measure's value on every fold.

        ``fold_values[measure]`` holds the values in fold order; the record holds their mean
        and standard deviation (:func:`~foldstream.operators.stats.significance.mean_std`) beside them.
        ``normalization``: each fold's normalisation counts of this learner; ``delay``: the
        label counts of a delayed stream (docs/method.md §13), the same on every fold;
        ``whole_values``: as ``fold_values``, the whole stream's (``whole_stream``).

        >>> record = MeasuresRecord.of_folds(stream="s", position=4, learner="ht", mode="cv",
        ...     prequential=True, folds=2, window={"kind": "sliding", "size": 2},
        ...     window_size=[2, 2], fold_values={"accuracy": [0.5, 1.0]})
        >>> record.values
        {'accuracy': {'mean': 0.75, 'std': 0.3535533905932738, 'folds': [0.5, 1.0]}}
        >>> "normalization" in record.as_dict(), "labelled" in record.as_dict()
        (False, False)
        """
        values = measure_values(fold_values)
        norm = ({key: [counts[key] for counts in normalization]
                 for key in cls.NORMALIZATION_FIELDS} if normalization else None)
        more = {} if delay is None else dict(
            labelled=delay.labelled, pending=delay.pending, expired=delay.expired,
            delay_mean=delay.delay_mean, delay_max=delay.delay_max)
        return cls(stream=stream, position=position, learner=learner, mode=mode,
                   prequential=prequential, folds=folds, window=dict(window),
                   window_size=list(window_size), values=values, normalization=norm,
                   whole_stream=None if whole_values is None else measure_values(whole_values),
                   **more)

    def value(self, measure: str) -> MeasureValue | None:
        """A measure's mean, standard deviation and fold values, ``None`` when not reported.

        >>> MeasuresRecord(stream="s", position=1, learner="a", mode="cv", prequential=True,
        ...     folds=1, window={"kind": "cumulative"}, window_size=[1],
        ...     values={"accuracy": {"mean": 1.0, "std": None, "folds": [1.0]}}
        ...     ).value("accuracy").mean
        1.0
        """
        value = self.values.get(measure)
        return None if value is None else MeasureValue(value["mean"], value["std"],
                                                        value["folds"])

    def whole_value(self, measure: str) -> MeasureValue | None:
        """A measure over the whole stream (``whole_stream``), ``None`` when not reported."""
        value = (self.whole_stream or {}).get(measure)
        return None if value is None else MeasureValue(value["mean"], value["std"],
                                                        value["folds"])

    @property
    def window_mean(self) -> float:
        """The mean window size over the folds."""
        return sum(self.window_size) / len(self.window_size)

    @property
    def report_at(self) -> tuple[int, int]:
        """Where the report stands: ``(position, labelled)`` (several reports of a delayed
        stream share a position)."""
        return self.position, self.labelled or 0


@dataclass(slots=True, kw_only=True)
class HoldoutRecord(OutputRecord):
    """One per learner at every test of the periodic held-out evaluation (evaluation.holdout,
    docs/method.md §20): each fold's measures over the whole held-out test set (the stream's
    first test_size examples, never trained on), scored from scratch after position training
    examples, with their mean and standard deviation over the folds.

    >>> HoldoutRecord.of_folds(stream="s", position=1000, learner="nb", mode="single",
    ...     prequential=True, folds=1, test_size=500,
    ...     fold_values={"accuracy": [0.75]}).as_dict()["values"]
    {'accuracy': {'mean': 0.75, 'std': None, 'folds': [0.75]}}
    """

    TYPE: ClassVar[str] = "holdout"
    stream: str = _stream()
    position: int = spec(
        _INT0, description="Training examples of the stream so far (the test set's are not "
                           "counted): the test comes after every evaluation.holdout.every "
                           "of them.")
    learner: str = spec(_ref("name"))
    mode: str = spec({"enum": list(MODES)})
    prequential: bool = spec({"type": "boolean"})
    folds: int = spec({"type": "integer", "minimum": 1, "description": "k"})
    test_size: int = spec({"type": "integer", "minimum": 1},
                          description="Examples in the held-out test set.")
    values: dict[str, dict[str, Any]] = spec(_ref("values"))

    @classmethod
    def of_folds(cls, *, stream: str, position: int, learner: str, mode: str,
                 prequential: bool, folds: int, test_size: int,
                 fold_values: Mapping[str, Sequence[float | None]]) -> "HoldoutRecord":
        """One learner's test from each measure's value on every fold (as
        :meth:`MeasuresRecord.of_folds`)."""
        return cls(stream=stream, position=position, learner=learner, mode=mode,
                   prequential=prequential, folds=folds, test_size=test_size,
                   values=measure_values(fold_values))

    def value(self, measure: str) -> MeasureValue | None:
        """A measure's mean, standard deviation and fold values (``None``: not reported)."""
        value = self.values.get(measure)
        return None if value is None else MeasureValue(value["mean"], value["std"],
                                                        value["folds"])


@dataclass(frozen=True, slots=True)
class MeasureValue:
    """A measure over the folds: mean and sample standard deviation of the defined fold
    values (``None`` where undefined), and the value of every fold."""

    mean: float | None
    std: float | None
    folds: list[float | None]

    @property
    def spread(self) -> tuple[float | None, float | None]:
        """Min and max of the defined fold values."""
        defined = [f for f in self.folds if f is not None]
        return (min(defined), max(defined)) if defined else (None, None)


_WINDOW_SIZES = {"type": "array", "minItems": 1, "items": {"type": "number", "minimum": 0}}


@dataclass(frozen=True, slots=True)
class Live:
    """A live verdict's sequence (docs/method.md §12): of a ``comparison`` record's
    ``sequential`` object, its ``regime`` (§15), or a ``verdict`` record."""

    verdict: str
    lower: float
    upper: float
    n: int
    alpha: float
    sum: float | None = None
    segment: int | None = None
    since: int | None = None

    @property
    def estimate(self) -> float | None:
        """``S_n / n``, the mean loss difference of a minus b (``None`` before any)."""
        return self.sum / self.n if self.sum is not None and self.n else None

    @property
    def scope(self) -> str:
        return "stream" if self.segment is None else "regime"

    @classmethod
    def of(cls, obj: Mapping[str, Any] | None) -> "Live | None":
        if obj is None:
            return None
        return cls(obj["verdict"], obj["lower"], obj["upper"], obj["n"], obj["alpha"],
                   obj.get("sum"), obj.get("segment"), obj.get("since"))


@dataclass(slots=True, kw_only=True)
class ComparisonRecord(OutputRecord):
    """One per pair of learners (a, b) and compared measure: paired tests over the folds, and
    the example-based McNemar and Q; with live verdicts on, the comparisons of accuracy also
    carry the pair's confidence sequence (sequential)."""

    TYPE: ClassVar[str] = "comparison"
    stream: str = _stream()
    position: int = _position()
    measure: str = spec(_ref("name"))
    a: str = spec(_ref("name"))
    b: str = spec(_ref("name"))
    alpha: float = spec(_ref("alpha"))
    wilcoxon: dict[str, Any] = spec(_obj({
        "statistic": {"type": ["number", "null"], "minimum": 0,
                      "description": "The smaller rank sum."},
        "p_value": _ref("probability"),
        "reject": {"type": "boolean"}}))
    sign: dict[str, Any] = spec(_obj({
        "wins_a": _INT0, "wins_b": _INT0, "ties": _INT0,
        "p_value": _ref("probability"), "reject": {"type": "boolean"}}))
    mcnemar: dict[str, Any] = spec(_obj({
        "a": {"type": "number", "minimum": 0},
        "b": {"type": "number", "minimum": 0},
        "folds_a": _ref("numbers"),
        "folds_b": _ref("numbers"),
        "statistic": _ref("number"),
        "p_value": _ref("probability"),
        "reject": {"type": "boolean"},
        "example_based": {"const": True}},
        description="Example-based: rejects true null hypotheses on large streams (Bifet et "
                    "al. 2015)."))
    q: dict[str, Any] = spec(_obj(
        {"value": _ref("number"), "folds": _ref("numbers")},
        description="Gama et al.'s Q = log(S_a/S_b) of the fading-factor losses, over the "
                    "folds and per fold."))
    scope: dict[str, Any] | None = spec(_obj(
        {"window": _ref("window"),
         "window_size": _obj({"a": _WINDOW_SIZES, "b": _WINDOW_SIZES})},
        description="What the fold tests cover, added within schema 1 (absent in older "
                    "files): each fold's last window (its kind and parameters) and the window "
                    "sizes of a and b per fold at this report."), optional=True)
    sequential: dict[str, Any] | None = spec(_ref("sequential"), optional=True)

    @property
    def pair(self) -> tuple[str, str, str]:
        """``(measure, a, b)``."""
        return self.measure, self.a, self.b

    @property
    def live(self) -> Live | None:
        """The pair's live verdict over the whole stream (§12), when the record carries it."""
        return Live.of(self.sequential)

    @property
    def regime(self) -> Live | None:
        """The regime verdict (§15), when the record carries it."""
        return Live.of((self.sequential or {}).get("regime"))


@dataclass(slots=True, kw_only=True)
class VerdictRecord(OutputRecord):
    """A pair's live verdict changed at this report (docs/method.md §12): emitted at the first
    report where it differs from the previous one (undecided before the first report), right
    after the comparison records of the position. Valid however often one looks: the chance
    that any verdict of the pair is ever wrong is at most alpha. Same caveat as the
    comparison's sequential object: it is about these learners as they ran on this stream,
    not about their algorithms.

    >>> r = VerdictRecord(stream="s", position=900, a="ht", b="nb", measure="accuracy",
    ...     verdict="a_better", previous="undecided", lower=-0.09, upper=-0.01, n=900,
    ...     alpha=0.05, since=1)
    >>> r.scope, "segment" in r.as_dict()
    ('stream', False)
    """

    TYPE: ClassVar[str] = "verdict"
    stream: str = _stream()
    position: int = _position()
    a: str = spec(_ref("name"))
    b: str = spec(_ref("name"))
    measure: str = spec({"const": "accuracy", "description": "The 0/1 loss."})
    verdict: str = spec(_ref("verdictValue"))
    previous: str = spec(_ref("verdictValue"))
    lower: float = spec(_BOUND)
    upper: float = spec(_BOUND)
    n: int = spec(_INT0, description="Examples the verdict covers: scored so far (scope "
                                     "stream), or of the current segment (scope regime).")
    alpha: float = spec(_ref("alpha"))
    scope: str = spec({"enum": ["stream", "regime"]}, optional=True, default="stream",
                      omit=MISSING,
                      description="Added within schema 1 (older files: stream). stream: every "
                                  "example since the start (docs/method.md §12); regime: the "
                                  "examples since the comparison last changed (§15).")
    since: int | None = spec({"type": ["integer", "null"], "minimum": 1}, optional=True,
                             default=None, omit=MISSING, description="The position of the first example "
                                                       "the verdict covers.")
    segment: int | None = spec({"type": "integer", "minimum": 1}, optional=True,
                               description="Scope regime: the number of the segment.")

    @classmethod
    def build(cls, record: Mapping[str, Any]) -> "VerdictRecord":
        return cls(**{name: record[name] for name, *_ in cls.layout() if name in record})

    @property
    def pair(self) -> tuple[str, str]:
        return self.a, self.b


@dataclass(slots=True, kw_only=True)
class RankingRecord(OutputRecord):
    """Three or more learners, one per compared measure: average ranks over folds (1 = best),
    Friedman test, Nemenyi critical difference."""

    TYPE: ClassVar[str] = "ranking"
    stream: str = _stream()
    position: int = _position()
    measure: str = spec(_ref("name"))
    learners: list[str] = spec({"type": "array", "minItems": 3, "items": _ref("name")})
    average_ranks: list[float | None] = spec(
        {"type": "array", "minItems": 3, "items": {"type": ["number", "null"], "minimum": 1}})
    friedman: dict[str, Any] = spec(_obj({"statistic": _ref("number"),
                                          "p_value": _ref("probability")}))
    critical_difference: float | None = spec({"type": ["number", "null"], "minimum": 0})

    @property
    def ranks(self) -> list[tuple[float, str]]:
        """``(average rank, learner)`` of the ranked learners, best first."""
        return sorted((r, n) for n, r in zip(self.learners, self.average_ranks)
                      if r is not None)


_DETECTOR = {"enum": list(DETECTORS)}
_QUANTITY = {"enum": ["loss", *MEASURES]}


@dataclass(slots=True, kw_only=True)
class AlarmRecord(OutputRecord):
    """A change detector fired on one fold's per-example quantity."""

    TYPE: ClassVar[str] = "alarm"
    stream: str = _stream()
    position: int = _position()
    learner: str = spec(_ref("name"))
    fold: int = spec(_INT0)
    detector: str = spec(_DETECTOR)
    quantity: str = spec(_QUANTITY)


@dataclass(slots=True, kw_only=True)
class DriftRecord(OutputRecord):
    """A change the folds agree on (docs/method.md §16), added within schema 1: at least q of
    the learner's k folds alarmed (same detector) within w examples; written with the report
    covering position, after its alarms.

    >>> DriftRecord(stream="s", position=2900, learner="ht", detector="adwin",
    ...             quantity="loss", folds=[1, 2, 3], first=2100).as_dict()["first"]
    2100
    """

    TYPE: ClassVar[str] = "drift"
    stream: str = _stream()
    position: int = _position()
    learner: str = spec(_ref("name"))
    detector: str = spec(_DETECTOR)
    quantity: str = spec(_QUANTITY)
    folds: list[int] = spec({"type": "array", "minItems": 1, "items": _INT0})
    first: int = spec(_ref("position"))


_DRIFT_SCORES = _obj({
    "alarms": _INT0, "detected": _INT0, "missed": _INT0, "false_alarms": _INT0,
    "false_alarms_per_10k": _ref("number"), "precision": _ref("probability"),
    "recall": _ref("probability"), "f1": _ref("probability"),
    "delay_mean": _ref("number"), "delay_median": _ref("number"),
    "per_change": {"type": "array", "items": _obj({
        "position": _ref("position"), "detections": _INT0, "detected": _INT0,
        "delay": _ref("number")})},
}, description="Scores of alarm sequences against the known changes (docs/method.md §19): "
               "detected changes / alarms (precision), / changes (recall), their F1, false "
               "alarms (every alarm but a change's first accepted one) per 10,000 examples, "
               "the delays of the detections, and per change its accepted alarms, the folds "
               "that detected it and their mean delay.")


@dataclass(slots=True, kw_only=True)
class DriftEvaluationRecord(OutputRecord):
    """A detector's alarms (of: alarms, every fold's, pooled) or consensus drifts (of: drifts)
    of one learner scored against the stream's known changes (docs/method.md §19), beside two
    baselines with the same number of alarms, periodic and random; written once, at the end
    of a stream that declares its changes.

    >>> from foldstream.operators.records.reading import parse_record
    >>> from foldstream.operators.stats.drifteval import score
    >>> s = score([[1100]], [1000], 2000, 500).as_record()
    >>> r = DriftEvaluationRecord(stream="s", position=2000, learner="ht", detector="adwin",
    ...                           quantity="loss", of="drifts", folds=1, window=500,
    ...                           changes=[1000], scores=s, periodic=s, random=s)
    >>> r.as_dict()["scores"]["f1"], parse_record(r.as_dict()).as_dict() == r.as_dict()
    (1.0, True)
    """

    TYPE: ClassVar[str] = "drift_evaluation"
    stream: str = _stream()
    position: int = _position(description="The stream's last position, its length.")
    learner: str = spec(_ref("name"))
    detector: str = spec(_DETECTOR)
    quantity: str = spec(_QUANTITY)
    of: str = spec({"enum": ["alarms", "drifts"]},
                   description="alarms: every fold's alarms, pooled; drifts: the consensus "
                               "drifts (§16).")
    folds: int = spec({"type": "integer", "minimum": 1},
                      description="The alarm sequences pooled: k for alarms, 1 for drifts.")
    window: int = spec({"type": "integer", "minimum": 1},
                       description="The acceptance window, in examples.")
    changes: list[int] = spec({"type": "array", "items": _ref("position")},
                              description="The known changes scored (those within the stream).")
    scores: dict[str, Any] = spec(_DRIFT_SCORES, description="The detector's.")
    periodic: dict[str, Any] = spec(_DRIFT_SCORES, description="A periodic detector's with the "
                                                               "same alarms per sequence.")
    random: dict[str, Any] = spec(_DRIFT_SCORES, description="A random detector's (seeded) "
                                                             "with the same alarms per sequence.")


@dataclass(slots=True, kw_only=True)
class LearnerErrorRecord(OutputRecord):
    """One (learner, fold) replica raised in predict_one or learn_one and is quarantined:
    reported once, at the first report at or after the batch where it raised; from then on
    its predictions are none (counted as wrong) and it learns nothing."""

    TYPE: ClassVar[str] = "learner_error"
    stream: str = _stream()
    position: int = _position()
    learner: str = spec(_ref("name"))
    fold: int = spec(_INT0)
    error: str = spec({"type": "string", "minLength": 1},
                      description="The exception's type and message, bounded.")
    phase: str = spec({"enum": ["predict", "learn"]})


_SHA256 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}


@dataclass(slots=True, kw_only=True)
class RejectedRecord(OutputRecord):
    """Dead-letter record: an input record that could not become an example.

    >>> r = RejectedRecord.of(Rejected("s", "bad", "é" * 3, "f:2", 0), max_bytes=3)
    >>> r.record, r.record_bytes, r.truncated
    ('é', 6, True)
    """

    TYPE: ClassVar[str] = "rejected"
    stream: str | None = spec(
        {"type": ["string", "null"]},
        description="null when the stream is unknown (e.g. a Kafka message without a key).")
    position: int | None = spec(
        {"type": ["integer", "null"], "minimum": 0},
        description="Examples of the stream accepted before it, when known.")
    reason: str = spec({"type": "string", "minLength": 1})
    location: str | None = spec({"type": ["string", "null"]},
                                description="file:line or topic@partition:offset")
    record: str = spec({"type": "string"},
                       description="The raw input as text, or its first "
                                   "sink.dead_letter_max_bytes bytes (UTF-8, cut between "
                                   "characters) when truncated.")
    record_bytes: int = spec(_INT0, description="The length of the whole raw input, in UTF-8 "
                                                "bytes.")
    record_sha256: str = spec(_SHA256, description="SHA-256 of the whole raw input (UTF-8), "
                                                   "hex.")
    truncated: bool = spec({"type": "boolean"},
                           description="Whether `record` is only a prefix of the input.")

    @classmethod
    def of(cls, rejected: Rejected, max_bytes: int = DEAD_LETTER_MAX_BYTES) -> "RejectedRecord":
        """The dead-letter record of an input: at most ``max_bytes`` of it, with the length
        and SHA-256 of the whole."""
        raw = rejected.raw
        kept, size, truncated = utf8_prefix(raw, max_bytes)
        return cls(stream=rejected.stream, position=rejected.position, reason=rejected.reason,
                   location=rejected.location, record=kept, record_bytes=size,
                   record_sha256=hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest(),
                   truncated=truncated)


_PER_LEARNER_SECONDS = {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}}


@dataclass(slots=True, kw_only=True)
class SummaryRecord(OutputRecord):
    """The last record of a stream at the end of a bounded input.

    >>> record = SummaryRecord.at_end(stream="s", position=2, read=2, rejected=0,
    ...     wall_time_s=1.0, measures=[], positive_class="yes", classes=["0", "1"])
    >>> record.positive_class_not_seen
    'yes'
    >>> SummaryRecord.at_end(stream="s", position=2, read=2, rejected=0, wall_time_s=1.0,
    ...     measures=[], positive_class=1, classes=["0", "1"]).positive_class_not_seen is None
    True
    """

    TYPE: ClassVar[str] = "summary"
    stream: str = _stream()
    position: int = _position()
    examples_read: int = spec(_INT0)
    examples_rejected: int = spec(_INT0)
    wall_time_s: float = spec({"type": "number", "minimum": 0})
    examples_per_second: float | None = spec({"type": ["number", "null"], "minimum": 0})
    measures: list[MeasuresRecord] = spec(
        {"type": "array", "items": _ref("measures"),
         "description": "The last measures record of each learner."})
    interrupted: bool = spec(
        {"type": "boolean"}, optional=True, omit=False,
        description="Present and true when the run was stopped (Ctrl-C, SIGTERM) before the "
                    "end of its input; the last complete report is before it.")
    positive_class_not_seen: Any = spec(
        {"type": ["string", "integer", "boolean"]}, optional=True,
        description="Present only when evaluation.positive_class is set and matches no label "
                    "of the stream: the configured value; precision, recall and F1 were "
                    "undefined for the whole run.")
    cpu_predict_s: dict[str, float] | None = spec(
        _PER_LEARNER_SECONDS, optional=True,
        description="Added within schema 1: per learner, the CPU seconds its replicas spent "
                    "in predict, summed over the folds (the thread's CPU time; MOA's measured "
                    "in Java). It varies from run to run: absent when the run was "
                    "interrupted.")
    cpu_learn_s: dict[str, float] | None = spec(
        _PER_LEARNER_SECONDS, optional=True,
        description="Added within schema 1: as cpu_predict_s, in learn.")
    model_bytes: dict[str, int | None] | None = spec(
        {"type": "object", "additionalProperties": {"type": ["integer", "null"], "minimum": 0}},
        optional=True,
        description="Added within schema 1: per learner, the size of its models at the end, "
                    "summed over the folds, in bytes: a MOA model's Java serialisation, "
                    "another an estimate of its memory from its contents (every object it "
                    "reaches once, containers by their length); null where a model had none "
                    "(released after an OutOfMemoryError). The same on every engine; absent "
                    "when the run was interrupted.")

    TIMING_FIELDS: ClassVar[tuple[str, ...]] = ("wall_time_s", "examples_per_second",
                                                "cpu_predict_s", "cpu_learn_s")
    """The fields that differ from run to run of the same input: every test of identical
    records (engines, batch sizes, API and command line, the golden file) leaves them out."""

    @classmethod
    def at_end(cls, *, stream: str, position: int, read: int, rejected: int,
               wall_time_s: float, measures: list[Any], interrupted: bool = False,
               positive_class: Label | None = None,
               classes: list[Label] | None = None, costs: Any = None) -> "SummaryRecord":
        """The summary of a stream at its end; both engines build it here.

        ``stream`` ``""`` gathers the records that named no stream (written as null);
        ``interrupted``: the run was stopped (a signal) before the end of its input;
        ``positive_class`` (``evaluation.positive_class``) is written as
        ``positive_class_not_seen`` when it matches none of the stream's ``classes``
        (:func:`~foldstream.operators.stats.measures.positive_code`), so that precision, recall and
        F1 were undefined for the whole run; ``costs``: what the learners cost
        (:class:`~foldstream.operators.stages.aggregator.LearnerCosts`), written unless interrupted.
        """
        unseen = positive_class if positive_class is not None and classes is not None \
            and positive_code(list(classes), positive_class) < 0 else None
        return cls(stream=stream or None, position=position, examples_read=read,
                   examples_rejected=rejected, wall_time_s=round(wall_time_s, 3),
                   examples_per_second=round(position / wall_time_s, 1)
                   if wall_time_s > 0 else None,
                   measures=measures, interrupted=interrupted,
                   positive_class_not_seen=unseen,
                   **({} if costs is None or interrupted else costs._asdict()))

    @classmethod
    def build(cls, record: Mapping[str, Any]) -> "SummaryRecord":
        summary = super(SummaryRecord, cls).build(record)
        summary.measures = [MeasuresRecord.build(m) for m in summary.measures]
        return summary


@dataclass(slots=True, kw_only=True)
class PartRecord(OutputRecord):
    """On Kafka only: one slice of a record too large for one message (the topic's
    max.message.bytes or the producer's max.request.size). The parts of a record come in
    order, with the same key, none of another record of the stream between them; the `data`
    of index 0 to count - 1, joined, are the record's exact JSON text, whose SHA-256 is
    `sha256`. Readers put them together (foldstream's do) and never show a part itself:
    docs/method.md §10."""

    TYPE: ClassVar[str] = "part"
    stream: str | None = spec({"type": ["string", "null"]},
                              description="The stream of the whole record.")
    of: str = spec({"enum": ["measures", "comparison", "verdict", "ranking", "alarm",
                             "learner_error", "rejected", "summary"]},
                   description="The type of the whole record.")
    position: int | None = spec({"type": ["integer", "null"], "minimum": 0},
                                description="The position of the whole record.")
    sha256: str = spec(_SHA256, description="SHA-256 of the whole record's UTF-8 bytes, hex: "
                                            "the same in all its parts.")
    bytes: int = spec(_INT0, description="The length of the whole record, in UTF-8 bytes.")
    index: int = spec(_INT0, description="This part's place, from 0.")
    count: int = spec({"type": "integer", "minimum": 2},
                      description="How many parts the record has.")
    data: str = spec({"type": "string"}, description="This part's slice of the record's "
                                                     "JSON text.")


RECORD_CLASSES: dict[str, type[OutputRecord]] = {cls.TYPE: cls for cls in (
    MeasuresRecord, ComparisonRecord, VerdictRecord, RankingRecord, AlarmRecord, DriftRecord,
    DriftEvaluationRecord, LearnerErrorRecord, RejectedRecord, SummaryRecord, PartRecord,
    HoldoutRecord)}
"""Every record type, by its ``type``, in the schema's order (``measures`` first)."""

RECORD_TYPES = tuple(RECORD_CLASSES)


__all__ = ["AlarmRecord", "ComparisonRecord", "DriftEvaluationRecord", "DriftRecord", "INT_MAX",
           "HoldoutRecord", "LearnerErrorRecord", "Live", "MeasureValue", "MeasuresRecord",
           "OutputRecord", "PartRecord", "RECORD_CLASSES", "RECORD_TYPES", "RankingRecord",
           "RecordError", "RejectedRecord", "SummaryRecord", "VerdictRecord"]

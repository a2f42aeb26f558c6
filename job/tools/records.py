"""Reading output records back: the one module every reader of records goes through.

A run's records (docs/method.md §10) are read by ``foldstream plot``, ``report``, ``watch``,
the dashboard, the Python API and the experiments. Each of them used to parse, check and sort
the records its own way, and a change to a record's shape had to be made in all of them. Here
is what they share:

* **reading**: :class:`RecordReader` reads a JSON Lines file (gzip-compressed too, by its
  first bytes) or a Kafka topic (``kafka://HOST:PORT[,HOST:PORT...]/TOPIC``), once to the end
  or following it as it grows; a record that a Kafka sink wrote in ``part`` records comes out
  whole, and one whose parts did not all come is skipped with a message, never silently;
* **checking**: :func:`check_version` (the one test of the ``schema`` field against
  :data:`~foldstream.operators.records.SCHEMA_VERSION`), :func:`check_shape` (a known type, no
  required field missing) and :func:`check_record` (the fields a reader uses, of their type,
  and what a reader takes from them: :class:`MeasuresPoint`, :class:`ComparisonPoint`,
  :class:`LiveVerdict`, ...); the full JSON Schema validation is
  :func:`foldstream.job.tools.schema.validate_record`;
* **describing**: :func:`describe_record` names a record in a message, :func:`describe_window`
  a window;
* **folding by type**: :func:`of_type` picks the records of some types, in order;
  :func:`group_by_stream` sorts them by stream and type (:class:`StreamRecords`).

The records are built by :mod:`foldstream.operators.records`; this module only reads them.
It is longer than the other tools (about 800 lines) for one reason: it holds one parser per
record type (measures, comparison, verdict, drift, alarm, ...), the mirror of the builders, and
splitting the parsers from the reader would give the record's shape two homes again.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foldstream.connectors.parts import Assembler
from foldstream.operators.records import SCHEMA_VERSION, Record
from foldstream.operators.verdicts import LIVE_VERDICTS

KAFKA_PREFIX = "kafka://"
GZIP_MAGIC = b"\x1f\x8b"


class RecordError(ValueError):
    """A record that does not follow the schema; the message names the record and the field."""


class BadRecord(RecordError):
    """A record that does not follow the record contract, found by :func:`check_record`; the
    message says what is wrong (the caller names the record, :func:`describe_record`)."""


# -------------------------------------------------------------------------------- describing
def describe_record(record: Any) -> str:
    """A record named in a message by its type, stream and position.

    >>> describe_record({"type": "alarm", "stream": "s", "position": 3})
    "alarm record (stream 's', position 3)"
    """
    if not isinstance(record, Mapping):
        return "record"
    kind = record.get("type")
    where = ", ".join(f"{k} {record[k]!r}" for k in ("stream", "position") if k in record)
    name = f"{kind} record" if isinstance(kind, str) else "record"
    return f"{name} ({where})" if where else name



def describe_window(window: Mapping[str, Any]) -> str:
    """``adwin (delta=0.002)``, ``sliding (size=1000)``, ``cumulative``.

    >>> describe_window({"kind": "fading", "alpha": 0.999})
    'fading (alpha=0.999)'
    """
    params = ", ".join(f"{k}={v}" for k, v in window.items() if k != "kind")
    return f"{window['kind']} ({params})" if params else window["kind"]


def of_type(records: Iterable[Any], *kinds: str) -> Iterator[Record]:
    """The records of the given types, in their order (JSON values that are no object are
    passed over).

    >>> [r["position"] for r in of_type([{"type": "alarm", "position": 1}, [],
    ...                                  {"type": "summary", "position": 2}], "summary")]
    [2]
    """
    wanted = frozenset(kinds)
    return (r for r in records if isinstance(r, Mapping) and r.get("type") in wanted)


@dataclass
class StreamRecords:
    """The records of one stream, sorted out for drawing (each list in stream order)."""

    stream: str
    measures: dict[str, list[Record]] = field(default_factory=dict)  # per learner
    comparisons: dict[tuple[str, str, str], list[Record]] = field(default_factory=dict)
    rankings: dict[str, Record] = field(default_factory=dict)  # the last one per measure
    alarms: list[Record] = field(default_factory=list)
    verdicts: list[Record] = field(default_factory=list)  # changes of live verdicts
    drifts: list[Record] = field(default_factory=list)  # changes the folds agree on (§16)

    @property
    def learners(self) -> list[str]:
        return list(self.measures)

    @property
    def first(self) -> Record:
        """A ``measures`` record, for what every one of them shares (window, mode, folds)."""
        return next(iter(self.measures.values()))[0]

    @property
    def alpha(self) -> float | None:
        for series in self.comparisons.values():
            return series[-1]["alpha"]
        return None


def group_by_stream(records: Iterable[Record]) -> dict[str, StreamRecords]:
    """Sort records by stream and type; summaries and rejected records are left out (the
    summary repeats the last ``measures`` records). What ``plot``, ``report`` and the Python
    API draw and tabulate; a stream without ``measures`` records is left out.

    >>> data = group_by_stream([
    ...     {"type": "measures", "stream": "s", "position": 5, "learner": "ht"},
    ...     {"type": "comparison", "stream": "s", "position": 5, "measure": "accuracy",
    ...      "a": "ht", "b": "nb", "alpha": 0.05},
    ...     {"type": "summary", "stream": "s", "position": 5}])["s"]
    >>> data.learners, list(data.comparisons), data.alpha
    (['ht'], [('accuracy', 'ht', 'nb')], 0.05)
    """
    streams: dict[str, StreamRecords] = {}
    for record in records:
        kind = record.get("type")
        if kind not in ("measures", "comparison", "ranking", "alarm", "verdict", "drift"):
            continue
        data = streams.setdefault(record["stream"], StreamRecords(record["stream"]))
        if kind == "measures":
            data.measures.setdefault(record["learner"], []).append(record)
        elif kind == "comparison":
            key = (record["measure"], record["a"], record["b"])
            data.comparisons.setdefault(key, []).append(record)
        elif kind == "ranking":
            data.rankings[record["measure"]] = record
        elif kind == "verdict":
            data.verdicts.append(record)
        elif kind == "drift":
            data.drifts.append(record)
        else:
            data.alarms.append(record)
    return {name: data for name, data in streams.items() if data.measures}


# ---------------------------------------------------------------------------------- checking
def version_problem(record: Mapping[str, Any]) -> str | None:
    """What is wrong with a record's ``schema`` field, or ``None`` when it is
    :data:`~foldstream.operators.records.SCHEMA_VERSION`, the version this foldstream reads.

    >>> version_problem({"schema": 1}) is None, version_problem({"schema": "1"})
    (True, "schema '1' is not 1, the version this foldstream reads")
    """
    version = record.get("schema")
    if version == SCHEMA_VERSION:
        return None
    return f"schema {version!r} is not {SCHEMA_VERSION}, the version this foldstream reads"


def check_version(record: Mapping[str, Any]) -> None:
    """Raise :class:`RecordError` unless the record's ``schema`` is
    :data:`~foldstream.operators.records.SCHEMA_VERSION`, the version this foldstream reads.

    >>> check_version({"schema": 1})
    >>> try:
    ...     check_version({"schema": 2, "type": "alarm"})
    ... except RecordError as error:
    ...     print(error)
    alarm record: schema 2 is not 1, the version this foldstream reads
    """
    problem = version_problem(record)
    if problem is not None:
        raise RecordError(f"{describe_record(record)}: {problem}")


@functools.lru_cache(maxsize=1)
def _required_fields() -> dict[str, frozenset[str]]:
    from foldstream.job.tools.schema import required_fields  # it imports this module

    return required_fields()


def check_shape(record: Any) -> None:
    """The cheap part of :func:`~foldstream.job.tools.schema.validate_record`: a known
    ``type``, this schema version, no required field missing. What a reader needs before it
    indexes a record's fields.

    >>> try:
    ...     check_shape({"schema": 1, "type": "alarm", "stream": "s"})
    ... except RecordError as error:
    ...     print(error)
    alarm record (stream 's'): missing fields detector, fold, learner, position, quantity
    """
    if not isinstance(record, dict):
        raise RecordError(f"a record must be a JSON object, got {type(record).__name__}")
    kind = record.get("type")
    known = _required_fields()
    required = known.get(kind) if isinstance(kind, str) else None
    if required is None:
        raise RecordError(f"{describe_record(record)}: unknown type {kind!r}; "
                          f"expected one of {', '.join(known)}")
    check_version(record)
    missing = required.difference(record)
    if missing:
        raise RecordError(f"{describe_record(record)}: missing fields {', '.join(sorted(missing))}")


def _text(record: Mapping[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value:
        raise BadRecord(f"{key!r} is {value!r}, not a non-empty string")
    return value


def _int(record: Mapping[str, Any], key: str) -> int:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRecord(f"{key!r} is {value!r}, not an integer >= 0")
    return value


def _num(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRecord(f"{what} is {value!r}, not a number or null")
    return float(value)


def _verdict(record: Mapping[str, Any], key: str) -> str:
    value = record.get(key)
    if value not in LIVE_VERDICTS:
        raise BadRecord(f"{key!r} is {value!r}, not one of {', '.join(LIVE_VERDICTS)}")
    return value


def _obj(record: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = record.get(key)
    if not isinstance(value, Mapping):
        raise BadRecord(f"{key!r} is {type(value).__name__}, not an object")
    return value


_NUMBERS = (int, float)  # exactly: a bool is no number here


def _spread(folds: Any, what: str) -> tuple[float | None, float | None]:
    """Min and max of the defined fold values (the hot path of a ``measures`` record)."""
    if not isinstance(folds, list):
        raise BadRecord(f"{what}.folds is not a list")
    defined = [f for f in folds if f is not None]
    for value in defined:
        if type(value) not in _NUMBERS:
            raise BadRecord(f"{what}.folds[] is {value!r}, not a number or null")
    return (float(min(defined)), float(max(defined))) if defined else (None, None)


@dataclass(frozen=True)
class MeasuresPoint:
    """What a ``measures`` record adds: per measure ``(mean, std, min, max)`` over the folds."""

    learner: str
    setup: tuple[str, int, bool, str]  # mode, folds, prequential, window
    values: dict[str, tuple[float | None, ...]]
    window: tuple[float | None, float | None, float | None]  # mean, min, max of window_size


def parse_measures(record: Mapping[str, Any]) -> MeasuresPoint:
    """The parts of a ``measures`` record the dashboard draws.

    >>> point = parse_measures({"learner": "ht", "mode": "cv", "folds": 2, "prequential": True,
    ...     "window": {"kind": "cumulative"}, "window_size": [10, 30],
    ...     "values": {"accuracy": {"mean": 0.5, "std": 0.1, "folds": [0.4, 0.6]}}})
    >>> point.values["accuracy"], point.window
    ((0.5, 0.1, 0.4, 0.6), (20.0, 10.0, 30.0))
    """
    learner = _text(record, "learner")
    window = _obj(record, "window")
    if not isinstance(window.get("kind"), str):
        raise BadRecord("'window' has no kind")
    prequential = record.get("prequential")
    if not isinstance(prequential, bool):
        raise BadRecord(f"'prequential' is {prequential!r}, not a boolean")
    setup = (_text(record, "mode"), _int(record, "folds"), prequential, describe_window(window))
    sizes = record.get("window_size")
    if not isinstance(sizes, list) or not sizes:
        raise BadRecord("'window_size' is not a non-empty list")
    sizes = [_num(s, "window_size[]") for s in sizes]
    defined = [s for s in sizes if s is not None]
    window_point = ((sum(defined) / len(defined), min(defined), max(defined)) if defined
                    else (None, None, None))
    values = {}
    for name, value in _obj(record, "values").items():
        if not isinstance(value, Mapping):
            raise BadRecord(f"values.{name} is not an object")
        low, high = _spread(value.get("folds"), f"values.{name}")
        values[str(name)] = (_num(value.get("mean"), f"values.{name}.mean"),
                             _num(value.get("std"), f"values.{name}.std"), low, high)
    return MeasuresPoint(learner, setup, values, window_point)


@dataclass(frozen=True)
class LiveVerdict:
    """A pair's live verdict (docs/method.md §12): from a ``comparison`` record's
    ``sequential`` field or from a ``verdict`` record."""

    a: str
    b: str
    position: int
    verdict: str
    lower: float | None
    upper: float | None
    n: int | None
    alpha: float | None
    estimate: float | None = None  # S_n / n, the mean loss difference of a minus b
    previous: str | None = None  # of a verdict record: the verdict before the change
    scope: str = "stream"  # "stream" (§12) or "regime" (§15); older records: "stream"
    since: int | None = None  # the first position the verdict covers, when known
    segment: int | None = None  # scope "regime": the segment's number


def parse_sequential(record: Mapping[str, Any], position: int) -> LiveVerdict | None:
    """The live verdict a ``comparison`` record carries, or ``None`` when it carries none.

    >>> parse_sequential({"a": "x", "b": "y", "sequential": {"n": 10, "sum": 2.0,
    ...     "variance": 1.0, "lower": -0.5, "upper": 0.9, "alpha": 0.05,
    ...     "verdict": "undecided"}}, 10).estimate
    0.2
    """
    return _live(record, position, record.get("sequential"), "sequential")


def parse_regime(record: Mapping[str, Any], position: int) -> LiveVerdict | None:
    """The regime verdict (docs/method.md §15) a ``comparison`` record carries inside its
    ``sequential`` object, or ``None`` (regime verdicts off, or an older file).

    >>> regime = parse_regime({"a": "x", "b": "y", "sequential": {"n": 10, "sum": 2.0,
    ...     "variance": 1.0, "lower": -0.5, "upper": 0.9, "alpha": 0.05, "verdict": "undecided",
    ...     "regime": {"segment": 2, "since": 7, "n": 4, "sum": 1.0, "variance": 1.0,
    ...                "lower": -1.0, "upper": 1.0, "alpha": 0.01, "verdict": "undecided"}}},
    ...     10)
    >>> regime.scope, regime.since, regime.segment
    ('regime', 7, 2)
    """
    sequential = record.get("sequential")
    if not isinstance(sequential, Mapping) or sequential.get("regime") is None:
        return None
    return _live(record, position, sequential["regime"], "sequential.regime")


def _live(record: Mapping[str, Any], position: int, obj: Any, where: str) -> LiveVerdict | None:
    if obj is None:
        return None
    if not isinstance(obj, Mapping):
        raise BadRecord(f"'{where}' is not an object")
    n = _int(obj, "n")
    total = _num(obj.get("sum"), f"{where}.sum")
    regime = "segment" in obj
    return LiveVerdict(
        a=_text(record, "a"), b=_text(record, "b"), position=position,
        verdict=_verdict(obj, "verdict"),
        lower=_num(obj.get("lower"), f"{where}.lower"),
        upper=_num(obj.get("upper"), f"{where}.upper"),
        n=n, alpha=_num(obj.get("alpha"), f"{where}.alpha"),
        estimate=total / n if total is not None and n else None,
        scope="regime" if regime else "stream",
        since=obj.get("since") if regime else None,
        segment=_int(obj, "segment") if regime else None)


def parse_verdict(record: Mapping[str, Any]) -> LiveVerdict:
    """A ``verdict`` record (a pair's live verdict changed)."""
    n = record.get("n")
    scope = record.get("scope", "stream")
    if scope not in ("stream", "regime"):
        raise BadRecord(f"'scope' is {scope!r}, not stream or regime")
    return LiveVerdict(
        a=_text(record, "a"), b=_text(record, "b"), position=_int(record, "position"),
        verdict=_verdict(record, "verdict"), previous=_verdict(record, "previous"),
        lower=_num(record.get("lower"), "lower"), upper=_num(record.get("upper"), "upper"),
        n=_int(record, "n") if n is not None else None, alpha=_num(record.get("alpha"), "alpha"),
        scope=scope, since=record.get("since"), segment=record.get("segment"))


@dataclass(frozen=True)
class ComparisonPoint:
    """What a ``comparison`` record adds: the fold tests' p-values and wins, and the live
    verdict when the record carries one."""

    measure: str
    a: str
    b: str
    wilcoxon: float | None
    sign: float | None
    wins: tuple[int, int]
    alpha: float
    live: LiveVerdict | None
    regime: LiveVerdict | None = None  # the regime verdict (§15), when the record carries it


def parse_comparison(record: Mapping[str, Any]) -> ComparisonPoint:
    """The parts of a ``comparison`` record the dashboard shows; the McNemar and Q objects are
    checked, not kept (the report shows them)."""
    wilcoxon, sign = _obj(record, "wilcoxon"), _obj(record, "sign")
    _int(sign, "ties")
    _num(_obj(record, "mcnemar").get("p_value"), "mcnemar.p_value")
    _num(_obj(record, "q").get("value"), "q.value")
    alpha = _num(record.get("alpha"), "alpha")
    if alpha is None:
        raise BadRecord("'alpha' is null")
    return ComparisonPoint(
        _text(record, "measure"), _text(record, "a"), _text(record, "b"),
        _num(wilcoxon.get("p_value"), "wilcoxon.p_value"),
        _num(sign.get("p_value"), "sign.p_value"),
        (_int(sign, "wins_a"), _int(sign, "wins_b")), alpha,
        parse_sequential(record, _int(record, "position")),
        parse_regime(record, _int(record, "position")))


def parse_ranking(record: Mapping[str, Any]) -> dict[str, Any]:
    """A ``ranking`` record as the page shows it: ranks sorted best first."""
    learners, ranks = record.get("learners"), record.get("average_ranks")
    if not isinstance(learners, list) or not isinstance(ranks, list) \
            or len(learners) != len(ranks):
        raise BadRecord("'learners' and 'average_ranks' are not lists of one length")
    friedman = _obj(record, "friedman")
    return {"measure": _text(record, "measure"), "position": _int(record, "position"),
            "ranks": sorted(([str(n), _num(r, "average_ranks[]")] for n, r in zip(learners, ranks)),
                            key=lambda item: math.inf if item[1] is None else item[1]),
            "friedman": _num(friedman.get("p_value"), "friedman.p_value"),
            "cd": _num(record.get("critical_difference"), "critical_difference")}


def parse_alarm(record: Mapping[str, Any]) -> tuple[int, str, int, str]:
    """``(position, learner, fold, detector)`` of an ``alarm`` record."""
    return (_int(record, "position"), _text(record, "learner"), _int(record, "fold"),
            _text(record, "detector"))


def parse_drift(record: Mapping[str, Any]) -> tuple[int, str, str, tuple[int, ...], int]:
    """``(position, learner, detector, folds, first)`` of a ``drift`` record (§16)."""
    folds = record.get("folds")
    if not isinstance(folds, list) or not folds \
            or not all(isinstance(f, int) and not isinstance(f, bool) for f in folds):
        raise BadRecord("'folds' is not a list of fold numbers")
    return (_int(record, "position"), _text(record, "learner"), _text(record, "detector"),
            tuple(folds), _int(record, "first"))


def parse_summary(record: Mapping[str, Any]) -> dict[str, Any]:
    """The counts and timing of a ``summary`` record."""
    wall = _num(record.get("wall_time_s"), "wall_time_s")
    if wall is None:
        raise BadRecord("'wall_time_s' is null")
    if not isinstance(record.get("measures"), list):
        raise BadRecord("'measures' is not a list")
    return {"position": _int(record, "position"),
            "examples_read": _int(record, "examples_read"),
            "examples_rejected": _int(record, "examples_rejected"),
            "wall_time_s": wall,
            "examples_per_second": _num(record.get("examples_per_second"),
                                        "examples_per_second")}


_PARSERS = {
    "measures": parse_measures,
    "comparison": parse_comparison,
    "verdict": parse_verdict,
    "ranking": parse_ranking,
    "alarm": parse_alarm,
    "drift": parse_drift,
    "summary": parse_summary,
}


def check_record(record: Any) -> tuple[str, Any]:
    """Check that ``record`` follows the record contract as far as a reader of it needs.

    Structural and cheap (microseconds, where the JSON Schema takes milliseconds): the fields a
    dashboard or a report reads are there and of their type. A ``rejected`` record needs only
    its type (its stream and position may be null).

    Returns
    -------
    tuple
        The record's type and what the dashboard takes from it (``None`` for ``rejected``).

    Raises
    ------
    BadRecord
        Naming what is wrong.

    Examples
    --------
    >>> check_record({"schema": 1, "type": "alarm", "stream": "s", "position": 3,
    ...               "learner": "ht", "fold": 0, "detector": "adwin", "quantity": "loss"})
    ('alarm', (3, 'ht', 0, 'adwin'))
    >>> check_record({"schema": 1, "type": "alarm", "stream": "s", "position": -1})
    Traceback (most recent call last):
    BadRecord: 'position' is -1, not an integer >= 0
    """
    if not isinstance(record, Mapping):
        raise BadRecord("not a JSON object")
    problem = version_problem(record)
    if problem is not None:
        raise BadRecord(problem)
    kind = record.get("type")
    if kind == "rejected":
        return kind, None
    parse = _PARSERS.get(kind)
    if parse is None:
        raise BadRecord(f"unknown type {kind!r}")
    _text(record, "stream")
    _int(record, "position")
    return kind, parse(record)



# ------------------------------------------------------------------------------------ reading
@dataclass(frozen=True)
class RecordSource:
    """Where records are read from: a JSON Lines ``path``, or a Kafka ``topic``.

    Examples
    --------
    >>> RecordSource.parse("kafka://localhost:9092/metrics")
    RecordSource(path=None, bootstrap='localhost:9092', topic='metrics')
    >>> str(RecordSource.parse("out/metrics.jsonl"))
    'out/metrics.jsonl'
    """

    path: Path | None = None
    bootstrap: str | None = None
    topic: str | None = None

    @classmethod
    def parse(cls, spec: str | os.PathLike[str]) -> RecordSource:
        """A path, or ``kafka://HOST:PORT[,HOST:PORT...]/TOPIC``."""
        text = os.fspath(spec)
        if not text.startswith(KAFKA_PREFIX):
            return cls(path=Path(text))
        servers, _, topic = text[len(KAFKA_PREFIX):].partition("/")
        if not servers or not topic or "/" in topic:
            raise ValueError(f"{text!r}: expected kafka://HOST:PORT/TOPIC")
        return cls(bootstrap=servers, topic=topic)

    @property
    def is_kafka(self) -> bool:
        return self.topic is not None

    def __str__(self) -> str:
        return f"{KAFKA_PREFIX}{self.bootstrap}/{self.topic}" if self.is_kafka else str(self.path)


class RecordReader:
    """Reads output records from a file or a topic, to its end or following it.

    Parameters
    ----------
    source : str, os.PathLike or RecordSource
        A JSON Lines file, gzip-compressed or not, or ``kafka://HOST:PORT/TOPIC`` (read from
        its beginning). A compressed file is read whole once: it is not followed as it grows
        (a new file in its place is read again).
    follow : bool
        ``False``: stop at the end (of a topic: the end offsets found at the start).
        ``True``: keep reading as the file grows or messages arrive, like ``tail -f``; a file
        that does not exist yet is waited for, and one that shrinks (a new run replaced it) is
        read again from its start.
    poll_interval : float
        Seconds between looks for more input when following.
    on_skip : callable, optional
        Called with a message for every line or message that is skipped; default: nothing.
        :attr:`skipped` counts them either way.
    check : bool
        ``True`` (default): skip, as well, every JSON object that is not a record of the
        contract in shape (:func:`check_shape`: no or an unknown ``type``, another ``schema``
        version, a required field missing), so that a reader never meets a ``KeyError`` on a
        foreign or damaged line; the full check is
        :func:`~foldstream.job.tools.schema.validate_record`, ~100 times slower.
        ``False``: every JSON object is yielded (``foldstream schema --check`` reports them).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "m.jsonl"
    ...     _ = path.write_text('{"type": "alarm"}\\nnot json\\n{"type": "summary"}')
    ...     reader = RecordReader(path, check=False)
    ...     [r["type"] for r in reader], reader.skipped, len(list(RecordReader(path)))
    (['alarm', 'summary'], 1, 0)

    A gzip-compressed file reads the same:

    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "m.jsonl.gz"
    ...     _ = path.write_bytes(gzip.compress(b'{"type": "alarm"}\\n'))
    ...     [r["type"] for r in RecordReader(path, check=False)]
    ['alarm']
    """

    def __init__(self, source: str | os.PathLike[str] | RecordSource, *, follow: bool = False,
                 poll_interval: float = 0.5, on_skip: Callable[[str], None] | None = None,
                 check: bool = True):
        self.source = source if isinstance(source, RecordSource) else RecordSource.parse(source)
        self.follow = follow
        self.poll_interval = poll_interval
        self.on_skip = on_skip
        self.check = check
        self.skipped = 0
        self._parts = Assembler()

    def __iter__(self) -> Iterator[Record]:
        for batch in self.batches():
            yield from batch

    def batches(self) -> Iterator[list[Record]]:
        """Yield lists of records as they come; when following, an empty list whenever there
        is nothing new, so that a display can refresh between records."""
        inner = self._kafka_batches() if self.source.is_kafka else self._file_batches()
        return self._then_incomplete(inner)

    def _then_incomplete(self, inner: Iterator[list[Record]]) -> Iterator[list[Record]]:
        yield from inner
        for message in self._parts.incomplete():  # the input ended before their last part
            self._skip(f"left out: {message}")

    # -- decoding
    def _decode(self, raw: bytes | str | None, where: str) -> Record | None:
        if raw is None or not raw.strip():
            return None  # a blank line or an empty message: nothing to skip loudly
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            return self._skip(f"{where}: not JSON ({error})")
        if not isinstance(record, dict):
            return self._skip(f"{where}: not a JSON object")
        if Assembler.is_part(record):  # a record too large for one Kafka message, in parts
            try:
                text = self._parts.take(record, where)
            except ValueError as error:
                return self._skip(f"{where}: {error}")
            finally:
                for message in self._parts.evicted():
                    self._skip(f"left out: {message}")
            return None if text is None else self._decode(text, where)
        if self.check:
            try:
                check_shape(record)
            except RecordError as error:
                return self._skip(f"{where}: {error}")
        return record

    def _skip(self, message: str) -> None:
        self.skipped += 1
        if self.on_skip is not None:
            self.on_skip(message)
        return None

    def _decode_all(self, items: list[tuple[bytes | str | None, str]]) -> list[Record]:
        records = (self._decode(raw, where) for raw, where in items)
        return [r for r in records if r is not None]

    # -- files
    def _file_batches(self) -> Iterator[list[Record]]:
        path = self.source.path
        raw = handle = None  # the file, and what reads it (a gzip reader of a .gz file)
        pending = b""  # the tail of the file after its last newline: a line still being written
        lineno = 0
        ended = False  # a compressed file is complete: read once, then only watched for a new one
        try:
            while True:
                if handle is None:
                    try:
                        raw, handle = _open_records(path)
                    except FileNotFoundError:
                        if not self.follow:
                            raise
                        yield []
                        time.sleep(self.poll_interval)
                        continue
                chunk = b""
                if not ended:
                    try:
                        chunk = handle.read1(1 << 20)  # a damaged .gz: its start still comes
                    except (EOFError, gzip.BadGzipFile, zlib.error) as error:
                        self._skip(f"{path}: the compressed data ends early or is damaged "
                                   f"({error}); the rest is left out")
                        ended = True
                if chunk:
                    lines = (pending + chunk).split(b"\n")
                    pending = lines.pop()
                    items = [(line, f"{path}:{lineno + i + 1}") for i, line in enumerate(lines)]
                    lineno += len(lines)
                    yield self._decode_all(items)
                    continue
                if not self.follow or (handle is not raw and not ended):
                    # A file may end without a newline: its last line is complete.
                    yield self._decode_all([(pending, f"{path}:{lineno + 1}")])
                    pending, ended = b"", handle is not raw
                    if not self.follow:
                        return
                if _replaced(path, raw):
                    handle.close()
                    raw.close()
                    raw = handle = None
                    pending, lineno, ended = b"", 0, False
                    continue
                yield []
                time.sleep(self.poll_interval)
        finally:
            if handle is not None:
                handle.close()
                raw.close()

    # -- Kafka
    def _kafka_batches(self) -> Iterator[list[Record]]:
        from foldstream.connectors.kafka import RECORDS_ISOLATION, check_bootstrap, read_topic

        bootstrap, topic = self.source.bootstrap, self.source.topic
        # A clear error naming the servers (and a missing topic, unless following), at once.
        check_bootstrap(bootstrap, topics=[] if self.follow else [topic])
        if not self.follow:
            messages = read_topic(bootstrap, topic, timeout_s=300, decode=False, with_offsets=True,
                                  isolation_level=RECORDS_ISOLATION)
            yield self._decode_all([(value, f"{topic}@{part}:{offset}")
                                    for part, offset, _key, value in messages])
            return
        yield from self._kafka_follow(bootstrap, topic)

    def _kafka_follow(self, bootstrap: str, topic: str) -> Iterator[list[Record]]:
        from kafka import KafkaConsumer, TopicPartition

        from foldstream.connectors.kafka import RECORDS_ISOLATION

        # assign, not subscribe: a reader of the whole topic needs no consumer group.
        consumer = KafkaConsumer(bootstrap_servers=bootstrap.split(","), group_id=None,
                                 enable_auto_commit=False, auto_offset_reset="earliest",
                                 client_id="foldstream-watch", isolation_level=RECORDS_ISOLATION)
        try:
            while topic not in consumer.topics():  # like a file: wait for it to be created
                yield []
                time.sleep(self.poll_interval)
            partitions = sorted(consumer.partitions_for_topic(topic) or ())
            tps = [TopicPartition(topic, p) for p in partitions]
            consumer.assign(tps)
            consumer.seek_to_beginning(*tps)
            while True:
                polled = consumer.poll(timeout_ms=int(self.poll_interval * 1000))
                yield self._decode_all([(r.value, f"{topic}@{r.partition}:{r.offset}")
                                        for tp in sorted(polled, key=lambda t: t.partition)
                                        for r in polled[tp]])
        finally:
            consumer.close(autocommit=False)


def _open_records(path: Path):
    """``(file, reader)`` of a records file: the reader decompresses a gzip file (found by its
    first bytes, whatever its name), else it is the file itself."""
    raw = open(path, "rb")
    if raw.read(2) != GZIP_MAGIC:
        raw.seek(0)
        return raw, raw
    raw.seek(0)
    return raw, gzip.GzipFile(fileobj=raw, mode="rb")


def _replaced(path: Path, handle) -> bool:
    """True when ``path`` is now shorter than what was read, or another file: a new run."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return False  # removed; keep the old one open until a new one appears
    return stat.st_size < handle.tell() or stat.st_ino != os.fstat(handle.fileno()).st_ino


def read_records(source: str | os.PathLike[str] | RecordSource,
                 on_skip: Callable[[str], None] | None = None, check: bool = True) -> list[Record]:
    """Every record of a file or topic, to its current end (see :class:`RecordReader`)."""
    return list(RecordReader(source, on_skip=on_skip, check=check))


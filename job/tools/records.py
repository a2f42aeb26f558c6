"""Reading output records back: the one module every reader of records goes through.

A run's records (docs/method.md §10) are read by ``foldstream plot``, ``report``, ``watch``,
the dashboard, the Python API and the experiments. What they share:

* **reading**: :class:`RecordReader` reads a JSON Lines file (gzip-compressed too, by its
  first bytes) or a Kafka topic (``kafka://HOST:PORT[,HOST:PORT...]/TOPIC``), once to the end
  or following it as it grows; a record that a Kafka sink wrote in ``part`` records comes out
  whole, and one whose parts did not all come is skipped with a message, never silently. Any
  line that is not a record of the contract (:func:`decode_line`, then
  :func:`~foldstream.operators.records.reading.parse_record`) is skipped and counted, and reading
  goes on;
* **checking**: :func:`check_version` (the one test of the ``schema`` field against
  :data:`~foldstream.operators.records.base.SCHEMA_VERSION`); a record's type, fields and ranges are
  checked by its class (:mod:`foldstream.operators.records.outputs`), and the full JSON Schema
  validation is :func:`foldstream.job.tools.schema.validate_record`;
* **describing**: :func:`describe_record` names a record in a message, :func:`describe_window`
  a window;
* **folding by type**: :func:`of_type` picks the records of some types, in order;
  :func:`group_by_stream` sorts typed records by stream and type (:class:`StreamRecords`).

The records are built by :mod:`foldstream.operators.records.outputs`; this module only reads them.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foldstream.connectors.parts import Assembler
from foldstream.operators.records.outputs import (
    AlarmRecord, ComparisonRecord, DriftRecord, MeasuresRecord, OutputRecord, RankingRecord,
    RecordError, VerdictRecord
)
from foldstream.operators.records.reading import parse_record, version_problem
from foldstream.operators.records.reading import describe as describe_record
from foldstream.operators.records.base import Record

KAFKA_PREFIX = "kafka://"
GZIP_MAGIC = b"\x1f\x8b"


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"a number out of range ({text[:20]})")
    return value


def _no_constant(text: str) -> float:
    raise ValueError(f"{text} is no JSON number")


_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_no_constant)


def decode_line(raw: bytes | str) -> Any:
    """One line of JSON as Python values, refusing what no record holds.

    Raises ``ValueError`` naming what is wrong: not JSON, nested deeper than Python's stack
    (a line of ``[[[[...``), an integer of more digits than Python converts (an integer of
    fewer is refused by the schema's bounds,
    :data:`~foldstream.operators.records.outputs.INT_MAX`), a number JSON cannot hold (``1e999``,
    ``NaN``).

    >>> decode_line('{"position": 3}')
    {'position': 3}
    >>> for line in ("[" * 100_000, '{"n": ' + "9" * 5000 + "}", '{"x": 1e999}', "NaN"):
    ...     try:
    ...         decode_line(line)
    ...     except ValueError as error:
    ...         print(error)
    nested too deeply
    an integer of more than 4300 digits
    a number out of range (1e999)
    NaN is no JSON number
    """
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        return _DECODER.decode(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error})") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8 ({error})") from None
    except ValueError as error:  # from the number hooks, or an integer too long to convert
        if "integer string conversion" in str(error):
            raise ValueError(f"an integer of more than {sys.get_int_max_str_digits()} "
                             f"digits") from None
        raise


# -------------------------------------------------------------------------------- describing
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
    """The typed records of one stream, sorted out for drawing (each list in stream order)."""

    stream: str
    measures: dict[str, list[MeasuresRecord]] = field(default_factory=dict)  # per learner
    comparisons: dict[tuple[str, str, str], list[ComparisonRecord]] = \
        field(default_factory=dict)  # per (measure, a, b)
    rankings: dict[str, RankingRecord] = field(default_factory=dict)  # the last per measure
    alarms: list[AlarmRecord] = field(default_factory=list)
    verdicts: list[VerdictRecord] = field(default_factory=list)  # changes of live verdicts
    drifts: list[DriftRecord] = field(default_factory=list)  # changes the folds agree on (§16)

    @property
    def learners(self) -> list[str]:
        return list(self.measures)

    @property
    def first(self) -> MeasuresRecord:
        """A ``measures`` record, for what every one of them shares (window, mode, folds)."""
        return next(iter(self.measures.values()))[0]

    @property
    def alpha(self) -> float | None:
        for series in self.comparisons.values():
            return series[-1].alpha
        return None


def group_by_stream(records: Iterable[OutputRecord | Mapping[str, Any]]
                    ) -> dict[str, StreamRecords]:
    """Sort records (typed, or JSON objects of the contract) by stream and type; summaries and
    rejected records are left out (the summary repeats the last ``measures`` records). What
    ``plot``, ``report`` and the Python API draw and tabulate; a stream without ``measures``
    records is left out.

    >>> from foldstream.operators.records.outputs import ComparisonRecord, MeasuresRecord
    >>> measures = MeasuresRecord.of_folds(stream="s", position=5, learner="ht", mode="cv",
    ...     prequential=True, folds=1, window={"kind": "cumulative"}, window_size=[5],
    ...     fold_values={"accuracy": [0.8]})
    >>> comparison = ComparisonRecord(stream="s", position=5, measure="accuracy", a="ht",
    ...     b="nb", alpha=0.05, wilcoxon={}, sign={}, mcnemar={}, q={})
    >>> data = group_by_stream([measures, comparison])["s"]
    >>> data.learners, list(data.comparisons), data.alpha
    (['ht'], [('accuracy', 'ht', 'nb')], 0.05)
    >>> group_by_stream([comparison])  # no measures: no stream to draw
    {}
    """
    streams: dict[str, StreamRecords] = {}
    for record in records:
        if isinstance(record, Mapping):
            if record.get("type") not in _GROUPED:
                continue
            record = parse_record(record)
        elif record.TYPE not in _GROUPED:
            continue
        data = streams.get(record.stream)
        if data is None:
            data = streams[record.stream] = StreamRecords(record.stream)
        if isinstance(record, MeasuresRecord):
            data.measures.setdefault(record.learner, []).append(record)
        elif isinstance(record, ComparisonRecord):
            data.comparisons.setdefault(record.pair, []).append(record)
        elif isinstance(record, RankingRecord):
            data.rankings[record.measure] = record
        elif isinstance(record, VerdictRecord):
            data.verdicts.append(record)
        elif isinstance(record, DriftRecord):
            data.drifts.append(record)
        else:
            data.alarms.append(record)
    return {name: data for name, data in streams.items() if data.measures}


_GROUPED = frozenset(("measures", "comparison", "ranking", "alarm", "verdict", "drift"))


# ---------------------------------------------------------------------------------- checking
def check_version(record: Mapping[str, Any]) -> None:
    """Raise :class:`RecordError` unless the record's ``schema`` is
    :data:`~foldstream.operators.records.base.SCHEMA_VERSION`, the version this foldstream reads.

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
        contract (:func:`~foldstream.operators.records.reading.parse_record`: no or an unknown
        ``type``, another ``schema`` version, a field missing, of the wrong type or out of
        range), so that a reader never meets a ``KeyError`` or a number it cannot hold on a
        foreign or damaged line.
        ``False``: every JSON object is yielded (``foldstream schema --check`` reports them).
    typed : bool
        ``True``: yield each record as its class (:mod:`foldstream.operators.records.outputs`), not as
        its JSON object (implies ``check``).

    Every line is decoded by :func:`decode_line`: a line nested too deep, holding an integer
    of thousands of digits or a number JSON cannot hold is skipped and counted like one that
    is not JSON, and reading goes on.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "m.jsonl"
    ...     _ = path.write_text('{"type": "alarm"}\\nnot json\\n{"type": "summary"}')
    ...     reader = RecordReader(path, check=False)
    ...     [r["type"] for r in reader], reader.skipped, len(list(RecordReader(path)))
    (['alarm', 'summary'], 1, 0)

    Typed:

    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "m.jsonl"
    ...     _ = path.write_text('{"schema":1,"type":"alarm","stream":"s","position":3,'
    ...                         '"learner":"ht","fold":0,"detector":"adwin","quantity":"loss"}')
    ...     [type(r).__name__ for r in RecordReader(path, typed=True)]
    ['AlarmRecord']

    A gzip-compressed file reads the same:

    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "m.jsonl.gz"
    ...     _ = path.write_bytes(gzip.compress(b'{"type": "alarm"}\\n'))
    ...     [r["type"] for r in RecordReader(path, check=False)]
    ['alarm']
    """

    def __init__(self, source: str | os.PathLike[str] | RecordSource, *, follow: bool = False,
                 poll_interval: float = 0.5, on_skip: Callable[[str], None] | None = None,
                 check: bool = True, typed: bool = False):
        self.source = source if isinstance(source, RecordSource) else RecordSource.parse(source)
        self.follow = follow
        self.poll_interval = poll_interval
        self.on_skip = on_skip
        self.check = check or typed
        self.typed = typed
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
    def _decode(self, raw: bytes | str | None, where: str) -> Record | OutputRecord | None:
        if raw is None or not raw.strip():
            return None  # a blank line or an empty message: nothing to skip loudly
        try:
            record = decode_line(raw)
        except ValueError as error:
            return self._skip(f"{where}: {error}")
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
                typed = parse_record(record)
            except RecordError as error:
                return self._skip(f"{where}: {error}")
            return typed if self.typed else record
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
                 on_skip: Callable[[str], None] | None = None, check: bool = True,
                 typed: bool = False) -> list[Record] | list[OutputRecord]:
    """Every record of a file or topic, to its current end (see :class:`RecordReader`)."""
    return list(RecordReader(source, on_skip=on_skip, check=check, typed=typed))


"""The output records as a consumer sees them: their JSON Schema, validation, and reading back.

``schema/records.schema.json`` (JSON Schema draft 2020-12) describes every record type of
docs/method.md §10 as the engine writes it, for dashboards and for tests that hold the engine to its
word. :func:`validate_record` checks one record against it with a message that names the record
and the offending field.

:class:`RecordReader` reads records back from a JSON Lines file or a Kafka topic, once to the
end or following it as it grows; ``foldstream plot`` and ``foldstream watch`` both read through
it. A source is written as a path or as ``kafka://HOST:PORT[,HOST:PORT...]/TOPIC``. A record
that a Kafka sink wrote in ``part`` records (larger than a message may be) comes out of it whole,
and one whose parts did not all come is skipped with a message, never silently.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from foldstream.connectors.parts import Assembler
from foldstream.job import exitcodes
from foldstream.operators.records import Record


SCHEMA_RESOURCE = "schema/records.schema.json"
KAFKA_PREFIX = "kafka://"


class RecordError(ValueError):
    """A record that does not follow the schema; the message names the record and the field."""


# ----------------------------------------------------------------------------------- schema
@functools.lru_cache(maxsize=1)
def _schema_text() -> str:
    return (resources.files("foldstream.job.tools") / SCHEMA_RESOURCE).read_text(encoding="utf-8")


def load_schema() -> dict[str, Any]:
    """The JSON Schema of the output records, as a fresh ``dict`` the caller may modify.

    Returns
    -------
    dict
        A draft 2020-12 schema: a ``oneOf`` over ``$defs/<type>`` for the record types
        ``measures``, ``comparison``, ``verdict``, ``ranking``, ``alarm``, ``drift``, ``learner_error``,
        ``rejected`` and ``summary``, and ``part``: on Kafka, a slice of a record too large
        for one message (:mod:`foldstream.connectors.parts`), which :class:`RecordReader`
        puts together again.

    Examples
    --------
    >>> schema = load_schema()
    >>> schema["$schema"]
    'https://json-schema.org/draft/2020-12/schema'
    >>> sorted(ref["$ref"].split("/")[-1] for ref in schema["oneOf"])
    ['alarm', 'comparison', 'drift', 'learner_error', 'measures', 'part', 'ranking', 'rejected', 'summary', 'verdict']
    """
    return json.loads(_schema_text())


@functools.lru_cache(maxsize=1)
def record_types() -> tuple[str, ...]:
    """The record types the schema knows, in its order (``measures`` first)."""
    return tuple(ref["$ref"].split("/")[-1] for ref in load_schema()["oneOf"])


def _jsonschema():
    # jsonschema is needed only to validate, not to run an evaluation: import it on demand.
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - depends on the environment
        raise RuntimeError("validating records needs the jsonschema package "
                           "(pip install 'jsonschema>=4.20')") from None
    return jsonschema


@functools.lru_cache(maxsize=None)
def _validator(record_type: str | None):
    """A validator of the whole schema (``None``) or of one record type's ``$defs`` entry.

    One type's own schema gives a precise message ("values.kappa.mean: 'x' is not of type...")
    where the top-level ``oneOf`` could only say that no alternative matched.
    """
    jsonschema = _jsonschema()
    schema = load_schema()
    if record_type is not None:
        schema = {"$schema": schema["$schema"], "$defs": schema["$defs"],
                  "$ref": f"#/$defs/{record_type}"}
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _describe(record: Any) -> str:
    if not isinstance(record, dict):
        return "record"
    where = ", ".join(f"{key} {record[key]!r}" for key in ("stream", "position") if key in record)
    kind = record.get("type")
    name = f"{kind} record" if isinstance(kind, str) else "record"
    return f"{name} ({where})" if where else name


def validate_record(record: Any) -> None:
    """Check one output record against the schema.

    Parameters
    ----------
    record : dict
        A decoded output record.

    Raises
    ------
    RecordError
        When it does not follow the schema: an unknown or missing ``type``, a ``schema``
        other than 1, a missing field, a field of the wrong type. The message names the
        record (type, stream, position) and the path of the offending field.

    Examples
    --------
    >>> validate_record({"schema": 1, "type": "alarm", "stream": "s", "position": 3,
    ...                  "learner": "ht", "fold": 0, "detector": "adwin", "quantity": "loss"})
    >>> try:
    ...     validate_record({"schema": 1, "type": "alarm", "stream": "s", "position": 3})
    ... except RecordError as error:
    ...     print(error)
    alarm record (stream 's', position 3): 'learner' is a required property
    """
    jsonschema = _jsonschema()
    if not isinstance(record, dict):
        raise RecordError(f"a record must be a JSON object, got {type(record).__name__}")
    kind = record.get("type")
    known = record_types()
    if kind not in known:
        raise RecordError(f"{_describe(record)}: unknown type {kind!r}; "
                          f"expected one of {', '.join(known)}")
    if record.get("schema") != 1:
        raise RecordError(f"{_describe(record)}: schema {record.get('schema')!r} is not 1, "
                          f"the version this foldstream reads")
    error = jsonschema.exceptions.best_match(_validator(kind).iter_errors(record))
    if error is None:
        # The type's own schema passed; the whole schema must agree (it is what dashboards use).
        error = jsonschema.exceptions.best_match(_validator(None).iter_errors(record))
    if error is not None:
        at = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        at = f"at {at.lstrip('.')}: " if at else ""
        raise RecordError(f"{_describe(record)}: {at}{error.message}")


@functools.lru_cache(maxsize=1)
def _required_fields() -> dict[str, frozenset[str]]:
    defs = load_schema()["$defs"]
    return {kind: frozenset(defs[kind]["required"]) for kind in record_types()}


def check_shape(record: Any) -> None:
    """The cheap part of :func:`validate_record`: a known ``type``, schema 1, no required field
    missing. What a reader needs before it indexes a record's fields.

    >>> check_shape({"schema": 1, "type": "alarm", "stream": "s"})
    Traceback (most recent call last):
    ...
    foldstream.job.tools.schema.RecordError: alarm record (stream 's'): missing fields detector, fold, learner, position, quantity
    """
    if not isinstance(record, dict):
        raise RecordError(f"a record must be a JSON object, got {type(record).__name__}")
    kind = record.get("type")
    required = _required_fields().get(kind) if isinstance(kind, str) else None
    if required is None:
        raise RecordError(f"{_describe(record)}: unknown type {kind!r}; "
                          f"expected one of {', '.join(record_types())}")
    if record.get("schema") != 1:
        raise RecordError(f"{_describe(record)}: schema {record.get('schema')!r} is not 1, "
                          f"the version this foldstream reads")
    missing = required.difference(record)
    if missing:
        raise RecordError(f"{_describe(record)}: missing fields {', '.join(sorted(missing))}")


# ----------------------------------------------------------------------------- reading back
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
        A JSON Lines file, or ``kafka://HOST:PORT/TOPIC`` (read from its beginning).
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
        foreign or damaged line; the full check is :func:`validate_record`, ~100 times slower.
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
        handle = None
        pending = b""  # the tail of the file after its last newline: a line still being written
        lineno = 0
        try:
            while True:
                if handle is None:
                    try:
                        handle = open(path, "rb")
                    except FileNotFoundError:
                        if not self.follow:
                            raise
                        yield []
                        time.sleep(self.poll_interval)
                        continue
                chunk = handle.read(1 << 20)
                if chunk:
                    lines = (pending + chunk).split(b"\n")
                    pending = lines.pop()
                    items = [(line, f"{path}:{lineno + i + 1}") for i, line in enumerate(lines)]
                    lineno += len(lines)
                    yield self._decode_all(items)
                    continue
                if not self.follow:
                    # A file may end without a newline: its last line is complete.
                    yield self._decode_all([(pending, f"{path}:{lineno + 1}")])
                    return
                if _replaced(path, handle):
                    handle.close()
                    handle, pending, lineno = None, b"", 0
                    continue
                yield []
                time.sleep(self.poll_interval)
        finally:
            if handle is not None:
                handle.close()

    # -- Kafka
    def _kafka_batches(self) -> Iterator[list[Record]]:
        from foldstream.connectors.kafka import check_bootstrap, read_topic

        bootstrap, topic = self.source.bootstrap, self.source.topic
        # A clear error naming the servers (and a missing topic, unless following), at once.
        check_bootstrap(bootstrap, topics=[] if self.follow else [topic])
        if not self.follow:
            messages = read_topic(bootstrap, topic, timeout_s=300, decode=False, with_offsets=True)
            yield self._decode_all([(value, f"{topic}@{part}:{offset}")
                                    for part, offset, _key, value in messages])
            return
        yield from self._kafka_follow(bootstrap, topic)

    def _kafka_follow(self, bootstrap: str, topic: str) -> Iterator[list[Record]]:
        from kafka import KafkaConsumer, TopicPartition

        # assign, not subscribe: no consumer group needed, and Tansu's group subscribe is broken.
        consumer = KafkaConsumer(bootstrap_servers=bootstrap.split(","), group_id=None,
                                 enable_auto_commit=False, auto_offset_reset="earliest",
                                 client_id="foldstream-watch")
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


def describe_window(window: dict[str, Any]) -> str:
    """``adwin (delta=0.002)``, ``sliding (size=1000)``, ``cumulative``.

    >>> describe_window({"kind": "fading", "alpha": 0.999})
    'fading (alpha=0.999)'
    """
    params = ", ".join(f"{k}={v}" for k, v in window.items() if k != "kind")
    return f"{window['kind']} ({params})" if params else window["kind"]


# ------------------------------------------------------------------------------ command line
def check_files(paths: list[str], out=None, limit: int = 10) -> int:
    """Validate every record of JSON Lines files; print the first ``limit`` problems.

    Returns the number of invalid records (lines that are not JSON objects included).
    """
    out = out or sys.stdout
    bad = 0

    def report(message: str) -> None:
        nonlocal bad
        bad += 1
        if bad <= limit:
            print(message, file=out)

    for path in paths:
        checked = 0
        for record in RecordReader(path, on_skip=report, check=False):
            checked += 1
            try:
                validate_record(record)
            except RecordError as error:
                report(f"{path}: {error}")
        print(f"{path}: {checked} records checked", file=out)
    if bad > limit:
        print(f"... and {bad - limit} more", file=out)
    return bad


def main(args) -> int:
    """``foldstream schema [--check FILE ...]``: print the schema, or validate files with it."""
    if args.check:
        from foldstream.connectors.kafka import KafkaUnavailable

        try:
            return exitcodes.FAILED if check_files(args.check) else exitcodes.OK
        except BrokenPipeError:  # the reader of the report went away: the command line's
            raise
        except OSError as error:  # missing, a folder, unreadable: nothing more to check
            print(f"error: cannot read {error.filename or ' '.join(args.check)}: "
                  f"{error.strerror or error}", file=sys.stderr)
            return exitcodes.UNUSABLE
        except KafkaUnavailable as error:
            print(f"error: {error}", file=sys.stderr)
            return exitcodes.UNUSABLE
    print(json.dumps(load_schema(), indent=2, ensure_ascii=False))
    return 0


__all__ = ["RecordError", "RecordReader", "RecordSource", "check_shape", "describe_window",
           "load_schema",
           "read_records",
           "record_types", "validate_record"]

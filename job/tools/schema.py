"""The output records as a consumer sees them: their JSON Schema, and validation by it.

``schema/records.schema.json`` (JSON Schema draft 2020-12) describes every record type of
docs/method.md §10 as the engine writes it, for dashboards and for tests that hold the engine to
its word. It is generated from the record classes
(:func:`foldstream.operators.records.reading.record_schema`, :func:`schema_text`): the committed file is
that output, written by ``python -m foldstream.job.tools.schema``, and a test compares them.
:func:`validate_record` checks one record against it with a message that names the record and
the offending field; ``foldstream schema --check`` checks files with it.

Reading records back (files, ``.gz`` files, Kafka topics), the cheap checks every reader makes
and folding them by type are :mod:`foldstream.job.tools.records`'s.
"""

from __future__ import annotations

import functools
import json
import sys
from importlib import resources
from typing import Any

from foldstream.job import exitcodes
from foldstream.job.terminal import inert
from foldstream.job.tools.records import RecordError, RecordReader, check_version, describe_record
from foldstream.operators.records.outputs import RECORD_TYPES
from foldstream.operators.records.reading import record_schema

SCHEMA_RESOURCE = "schema/records.schema.json"
MESSAGE_CHARS = 300  # the most characters of a validation message (it may quote the value)


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
    ['alarm', 'comparison', 'drift', 'drift_evaluation', 'holdout', 'learner_error', 'measures', 'part', 'ranking', 'rejected', 'summary', 'verdict']
    """
    return json.loads(_schema_text())


def schema_text() -> str:
    """The schema file's text as the record classes generate it (what the committed file
    holds).

    >>> json.loads(schema_text()) == load_schema()
    True
    """
    return json.dumps(record_schema(), indent=2, ensure_ascii=False) + "\n"


def write_schema() -> str:
    """Write :func:`schema_text` into the package's schema file; return its path."""
    path = resources.files("foldstream.job.tools") / SCHEMA_RESOURCE
    with resources.as_file(path) as target:
        target.write_text(schema_text(), encoding="utf-8")
        return str(target)


def record_types() -> tuple[str, ...]:
    """The record types the schema knows, in its order (``measures`` first)."""
    return RECORD_TYPES


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
        other than :data:`~foldstream.operators.records.base.SCHEMA_VERSION`, a missing field, a
        field of the wrong type. The message names the record (type, stream, position) and
        the path of the offending field.

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
        raise RecordError(f"{describe_record(record)}: unknown type {kind!r}; "
                          f"expected one of {', '.join(known)}")
    check_version(record)
    try:
        error = jsonschema.exceptions.best_match(_validator(kind).iter_errors(record))
        if error is None:
            # The type's own schema passed; the whole schema must agree (what dashboards use).
            error = jsonschema.exceptions.best_match(_validator(None).iter_errors(record))
        if error is not None:
            at = "".join(f"[{p}]" if isinstance(p, int) else f".{p}"
                         for p in error.absolute_path)
            at = f"at {at.lstrip('.')}: " if at else ""
            message = error.message
    except RecursionError:
        error, at, message = True, "", "nested too deeply"
    if error is not None:
        if len(message) > MESSAGE_CHARS:
            message = message[:MESSAGE_CHARS - 1] + "…"
        raise RecordError(f"{describe_record(record)}: {at}{message}")


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
            print(inert(message, lines=True), file=out)

    for path in paths:
        checked = 0
        for record in RecordReader(path, on_skip=report, check=False):
            checked += 1
            try:
                validate_record(record)
            except RecordError as error:
                report(f"{path}: {error}")
        print(inert(f"{path}: {checked} records checked"), file=out)
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
            print(inert(f"error: cannot read {error.filename or ' '.join(args.check)}: "
                        f"{error.strerror or error}", lines=True), file=sys.stderr)
            return exitcodes.UNUSABLE
        except KafkaUnavailable as error:
            print(f"error: {inert(error, lines=True)}", file=sys.stderr)
            return exitcodes.UNUSABLE
    print(json.dumps(load_schema(), indent=2, ensure_ascii=False))
    return exitcodes.OK


__all__ = ["check_files", "load_schema", "record_types", "schema_text", "validate_record",
           "write_schema"]


if __name__ == "__main__":  # python -m foldstream.job.tools.schema: regenerate the file
    print(write_schema())

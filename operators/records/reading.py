"""Reading output records back: the JSON Schema generated from the record classes, and the
check every reader makes against it before a line becomes a typed record.

Reading is meant to survive any line: :func:`check_json` walks the schema, never the data (a
value nested deeper than the schema allows is refused at the schema's depth), and every
integer is bounded by :data:`~foldstream.operators.records.outputs.INT_MAX`. The schema is
:func:`record_schema`, made from the classes of :mod:`~foldstream.operators.records.outputs`
(each field's fragment), so the readers' check has no second definition.

>>> from foldstream.operators.records.outputs import AlarmRecord
>>> alarm = AlarmRecord(stream="s", position=3, learner="ht", fold=0, detector="adwin",
...                     quantity="loss")
>>> parse_record(alarm.as_dict()) == alarm
True
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from foldstream.operators.records.base import SCHEMA_VERSION
from foldstream.operators.records.outputs import (
    INT_MAX, RECORD_CLASSES, RECORD_TYPES, SHARED_DEFS, OutputRecord, RecordError, _ref
)


# ---------------------------------------------------------------------------------- schema
def _bounded(schema: Any) -> Any:
    """The schema with every integer bounded by :data:`INT_MAX` (unless bounded already)."""
    if isinstance(schema, dict):
        out = {k: _bounded(v) for k, v in schema.items()}
        kinds = out.get("type")
        if (kinds == "integer" or isinstance(kinds, list) and "integer" in kinds) \
                and "maximum" not in out:
            out["maximum"] = INT_MAX
        return out
    if isinstance(schema, list):
        return [_bounded(v) for v in schema]
    return schema


def record_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of every output record, generated from the classes.

    >>> schema = record_schema()
    >>> [ref["$ref"].split("/")[-1] for ref in schema["oneOf"]][:3]
    ['measures', 'comparison', 'verdict']
    >>> schema["$defs"]["position"]["maximum"] == INT_MAX
    True
    """
    defs = {**SHARED_DEFS, **{kind: cls.schema() for kind, cls in RECORD_CLASSES.items()}}
    return _bounded({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://foldstream.invalid/schema/records/{SCHEMA_VERSION}",
        "title": f"foldstream output record, schema {SCHEMA_VERSION}",
        "description": "One JSON object per line of a metrics file (or one Kafka message keyed "
                       "by stream) written by `foldstream run`: docs/method.md §10. Dispatch "
                       "on `type`. Undefined numbers are null, never 0. A change of field "
                       "names bumps `schema`. Generated from foldstream.operators.records.outputs.",
        "oneOf": [_ref(kind) for kind in RECORD_CLASSES],
        "$defs": defs,
    })


_SCHEMA: dict[str, Any] | None = None


def _schema() -> dict[str, Any]:
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = record_schema()
    return _SCHEMA


# --------------------------------------------------------------------------------- checking
def describe(record: Any) -> str:
    """A record named in a message by its type, stream and position.

    >>> describe({"type": "alarm", "stream": "s", "position": 3})
    "alarm record (stream 's', position 3)"
    """
    if not isinstance(record, Mapping):
        return "record"
    kind = record.get("type")
    where = ", ".join(f"{k} {_short(record[k])}" for k in ("stream", "position") if k in record)
    name = f"{_short(kind, quote=False)} record" if isinstance(kind, str) else "record"
    return f"{name} ({where})" if where else name


def _short(value: Any, quote: bool = True, limit: int = 60) -> str:
    """A value for a message: its repr, cut to ``limit`` characters (never a huge number)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > INT_MAX:
        return "an integer beyond 2**63"
    if isinstance(value, (dict, list)):
        return f"a JSON {'object' if isinstance(value, dict) else 'array'}"
    text = repr(value) if quote else str(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


_JSON_TYPES = {"string": str, "boolean": bool, "object": dict, "array": list}


def _is(value: Any, kind: str) -> bool:
    if kind == "null":
        return value is None
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return kind == "number" or isinstance(value, int) or value.is_integer()
    return isinstance(value, _JSON_TYPES[kind])


_PATTERNS: dict[str, re.Pattern] = {}


def _problem(value: Any, schema: dict[str, Any], at: str, strict: bool) -> str | None:
    """What is wrong with ``value`` under ``schema`` (the subset of JSON Schema the record
    schema uses), or ``None``. The walk follows the schema, so its depth is the schema's; not
    ``strict``, a property the schema does not name is passed over (not descended into)."""
    where = f"at {at}: " if at else ""
    if "$ref" in schema:
        return _problem(value, _schema()["$defs"][schema["$ref"].split("/")[-1]], at, strict)
    if "oneOf" in schema:
        problems = [_problem(value, option, at, strict) for option in schema["oneOf"]]
        if sum(p is None for p in problems) == 1:
            return None
        return f"{where}{_short(value)} is not one of the allowed forms"
    if "const" in schema:
        const = schema["const"]
        if value != const or type(value) is not type(const):
            return f"{where}{_short(value)} is not {const!r}"
    if "enum" in schema and not any(value == e and type(value) is type(e)
                                    for e in schema["enum"]):
        return f"{where}{_short(value)} is not one of {', '.join(map(repr, schema['enum']))}"
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is(value, k) for k in kinds):
            return f"{where}{_short(value)} is not of type {' or '.join(kinds)}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"] \
                or "maximum" in schema and value > schema["maximum"] \
                or "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"] \
                or "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            return f"{where}{_short(value)} is out of range"
    elif isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return f"{where}{_short(value)} is too short"
        pattern = schema.get("pattern")
        if pattern is not None:
            compiled = _PATTERNS.get(pattern) or _PATTERNS.setdefault(pattern,
                                                                      re.compile(pattern))
            if not compiled.search(value):
                return f"{where}{_short(value)} does not match {pattern!r}"
    elif isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return f"{where}too few items"
        items = schema.get("items")
        if items is not None:
            for i, item in enumerate(value):
                problem = _problem(item, items, f"{at}[{i}]", strict)
                if problem is not None:
                    return problem
    elif isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                return f"{where}{key!r} is a required property"
        properties = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        for key, item in value.items():
            prefix = f"{at}." if at else ""
            sub = properties.get(key)
            if sub is None:
                sub = next((s for p, s in patterns.items()
                            if (_PATTERNS.get(p) or _PATTERNS.setdefault(p, re.compile(p)))
                            .search(key)), None)
            if sub is None:
                if strict and schema.get("additionalProperties", True) is False:
                    return f"{where}{_short(key)} was unexpected"
                continue
            problem = _problem(item, sub, f"{prefix}{key}", strict)
            if problem is not None:
                return problem
    return None


def check_json(value: Any, ref: str, name: str = "record", strict: bool = False) -> None:
    """Raise :class:`RecordError` naming ``name`` and the field unless ``value`` follows the
    schema entry ``ref`` (``#/$defs/<type>``); not ``strict``, properties the schema does not
    name are allowed (and passed over)."""
    problem = _problem(value, {"$ref": ref}, "", strict)
    if problem is not None:
        raise RecordError(f"{name}: {problem}")


def version_problem(record: Mapping[str, Any]) -> str | None:
    """What is wrong with a record's ``schema`` field, or ``None`` when it is
    :data:`~foldstream.operators.records.base.SCHEMA_VERSION`, the version this foldstream reads.

    >>> version_problem({"schema": 1}) is None, version_problem({"schema": "1"})
    (True, "schema '1' is not 1, the version this foldstream reads")
    """
    version = record.get("schema")
    if version == SCHEMA_VERSION and type(version) is int:
        return None
    return f"schema {_short(version)} is not {SCHEMA_VERSION}, the version this foldstream reads"


def parse_record(record: Any, strict: bool = False) -> OutputRecord:
    """The typed record of a decoded JSON object, checked against the schema.

    Every field the record's class has must be as the schema says; a field it does not have
    is ignored unless ``strict`` (a later foldstream may add fields within a schema version,
    as it did with ``scope``; ``foldstream schema --check`` is strict).

    Raises
    ------
    RecordError
        Naming the record (type, stream, position) and what is wrong: not an object, an
        unknown type, another schema version, a field missing, of the wrong type or out of
        range.

    Examples
    --------
    >>> parse_record({"schema": 1, "type": "alarm", "stream": "s", "position": 3,
    ...     "learner": "ht", "fold": 0, "detector": "adwin", "quantity": "loss"}).detector
    'adwin'
    >>> parse_record({"schema": 1, "type": "alarm", "stream": "s", "position": 10**30})
    Traceback (most recent call last):
    RecordError: alarm record (stream 's', position an integer beyond 2**63): at position: an integer beyond 2**63 is out of range
    """
    if not isinstance(record, dict):
        raise RecordError(f"a record must be a JSON object, got {type(record).__name__}")
    kind = record.get("type")
    cls = RECORD_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise RecordError(f"{describe(record)}: unknown type {_short(kind)}; "
                          f"expected one of {', '.join(RECORD_TYPES)}")
    problem = version_problem(record)
    if problem is not None:
        raise RecordError(f"{describe(record)}: {problem}")
    check_json(record, f"#/$defs/{kind}", describe(record), strict)
    return cls.build(record)


def as_typed(record: OutputRecord | Mapping[str, Any]) -> OutputRecord:
    """A record as its class: a typed record as it is, a JSON object parsed."""
    return record if isinstance(record, OutputRecord) else parse_record(record)


__all__ = ["as_typed", "check_json", "describe", "parse_record", "record_schema",
           "version_problem"]

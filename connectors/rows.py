"""From raw rows to examples: the checks every source shares (docs/method.md §1).

A row is ``{name: raw value}``: the fields of a CSV line, an ARFF data line or a JSON object
(a JSON Lines line, or a row of a Kafka message). :func:`to_example` turns it into an
:class:`~foldstream.operators.records.base.Example` or raises :class:`Reject` with the reason, which
the reader turns into a :class:`~foldstream.operators.records.base.Rejected` record. Files
(:mod:`.files`) and Kafka messages (:mod:`.messages`) both go through here, so a record is
rejected for the same reasons, in the same words, whichever way it arrives.

Rows are read in bulk: the checks go value by value only for a row that needs them.
A row of plain finite numbers is read at once (:func:`columns_example` for a CSV line's
fields, ``_quick_features`` for a row dict), and JSON by orjson, with json reading again any
text orjson refuses or might read otherwise; either way a row is accepted or rejected exactly as
the checks alone decide, in their words (tests/test_rows.py compares both ways).
"""

from __future__ import annotations

import functools
import json
import math
import operator
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

from foldstream.operators.stages.delay import LabelOnly
from foldstream.operators.records.base import Example

__all__ = ["NOUNS", "Reject", "RowSchema", "to_example", "to_item", "parse_json", "json_object",
           "json_type", "unexpected", "columns_example", "id_key", "label_and_key"]

#: What a format calls one of its named values, for messages.
NOUNS = {"csv": "column", "arff": "attribute", "jsonl": "field"}


class Reject(Exception):
    """Why one row cannot become an example; the reader turns it into a Rejected record."""


def unexpected(exc: Exception) -> str:
    """The reason of a rejected record for an error that no check of this module foresaw.

    Every reader (files, Kafka messages) catches ``Exception`` around its parsing of one record
    and rejects that record with this reason, so that no input, whatever Python raises on it,
    ends a run (``KeyboardInterrupt`` and ``SystemExit`` are no ``Exception`` and pass).

    >>> unexpected(RecursionError("maximum recursion depth exceeded"))
    'unreadable (RecursionError: maximum recursion depth exceeded)'
    """
    return f"unreadable ({type(exc).__name__}: {_shorten(str(exc), 200)})"


@dataclass(frozen=True)
class RowSchema:
    """What the checks need to know about a row: its format and names (a file's from its
    header; a Kafka message's rows are JSON objects, as in JSON Lines)."""

    fmt: str
    label: str
    id_field: str | None
    nominal: frozenset[str]  # features kept as text
    columns: tuple[str, ...] | None = None  # CSV and ARFF; JSON Lines rows name their fields
    categories: dict[str, frozenset[str]] = field(default_factory=dict)  # declared ARFF values
    first_data_line: int = 1
    labels_later: bool = False  # delayed labels: a JSON row without its label has y None

    @functools.cached_property
    def noun(self) -> str:
        return NOUNS[self.fmt]

    @functools.cached_property
    def text_values(self) -> bool:
        """Whether raw values are text (CSV, ARFF) rather than typed JSON values."""
        return self.fmt != "jsonl"

    @functools.cached_property
    def text_features(self) -> frozenset[str]:
        """Features read as categories: the ``nominal`` ones and ARFF's declared nominals."""
        return self.nominal | frozenset(self.categories)

    @functools.cached_property
    def numeric_columns(self) -> _Columns | None:
        """Where a text row's label, id and features are, when every feature is a number and
        labels come with their rows (:func:`columns_example`); else None."""
        if self.columns is None or self.labels_later:
            return None
        features = [i for i, name in enumerate(self.columns)
                    if name != self.label and name != self.id_field]
        if any(self.columns[i] in self.text_features for i in features):
            return None
        take = (operator.itemgetter(*features) if len(features) > 1
                else lambda values: tuple(values[i] for i in features))
        return _Columns(len(self.columns), self.columns.index(self.label),
                        None if self.id_field is None else self.columns.index(self.id_field),
                        tuple(self.columns[i] for i in features), take)


class _Columns(NamedTuple):
    width: int
    label: int
    id: int | None
    names: tuple[str, ...]  # the features, in column order
    take: Callable[[list[str]], tuple[str, ...]]  # their values, from a row's values


def columns_example(values: list[str], schema: RowSchema, stream: str,
                    location: str) -> Example | None:
    """The example of a text row (a CSV line's fields) whose features are all plain finite
    numbers, as :func:`to_example` reads it; None for any other row, which :func:`to_example`
    then reads (and rejects, saying why). So a stream's common rows cost one ``float`` per
    value, and every decision and reason stays :func:`to_example`'s.

    >>> schema = RowSchema("csv", "y", None, frozenset(), ("a", "y", "b"))
    >>> columns_example(["1", " u ", "2e3"], schema, "s", "f:2")
    Example(stream='s', x={'a': 1.0, 'b': 2000.0}, y='u', key=None, location='f:2')
    >>> [columns_example(v, schema, "s", "f:3") for v in (["1_0", "u", "2"], ["1", "", "2"])]
    [None, None]
    """
    layout = schema.numeric_columns
    if layout is None or len(values) != layout.width:
        return None
    label = values[layout.label].strip()
    allowed = schema.categories.get(schema.label)
    if not label or (allowed is not None and label not in allowed):
        return None
    key = None
    if layout.id is not None:
        try:
            key = id_key(values[layout.id], schema)
        except Reject:
            return None
    x = _text_numbers(layout.names, layout.take(values))
    return None if x is None else Example(stream, x, label, key, location)


def to_example(row: dict[str, Any], schema: RowSchema, stream: str, location: str) -> Example:
    """The example of one row ``{name: raw value}``, or :class:`Reject` saying why not.

    The label and the id (when ``schema.id_field``) are taken out; every other value is a
    feature: a category for ``schema.text_features``, else a finite number.

    >>> schema = RowSchema("jsonl", "y", None, frozenset({"c"}))
    >>> to_example({"a": 1, "c": "red", "y": 2.0}, schema, "s", "t@0")
    Example(stream='s', x={'a': 1.0, 'c': 'red'}, y=2, key=None, location='t@0')
    >>> later = RowSchema("jsonl", "y", "id", frozenset(), labels_later=True)
    >>> to_example({"id": 7, "a": 1}, later, "s", "t@2").y is None
    True
    >>> to_example({"a": "1", "y": "u"}, schema, "s", "t@1")
    Traceback (most recent call last):
    ...
    foldstream.connectors.rows.Reject: field 'a': expected a number, got '1' (list it in `nominal` to read it as a category)
    """
    if schema.labels_later and schema.id_field is not None and schema.fmt == "jsonl" \
            and row.get(schema.label) is None:
        label = None  # an arrival whose label comes later, in a row with its id (§13)
    else:
        label = _label(row, schema)
    key = None if schema.id_field is None else _key(row, schema)
    x = _quick_features(row, schema)
    if x is None:  # some value is not a plain finite number: the checks say which and why
        text_features = schema.text_features
        x = {name: _category(name, value, schema) if name in text_features
             else _number(name, value, schema)
             for name, value in row.items() if name != schema.label and name != schema.id_field}
    return Example(stream, x, label, key, location)


def _quick_features(row: dict[str, Any], schema: RowSchema) -> dict[str, Any] | None:
    """The features of a row whose numbers are all plain and finite, as the checks of
    :func:`_number` and :func:`_category` would read them; None for any other row, which the
    checks then read value by value, so that the first bad value (in row order) is the one
    named, as always.

    Most rows of a stream are such rows; this reads them without a call per value. A value that
    is no number here becomes NaN, so that the one finiteness test of the sum sees it.

    >>> _quick_features({"a": "1.5", "y": "u"}, RowSchema("csv", "y", None, frozenset()))
    {'a': 1.5}
    >>> _quick_features({"a": "1_0", "y": "u"}, RowSchema("csv", "y", None, frozenset())) is None
    True
    >>> _quick_features({"a": True, "y": "u"}, RowSchema("jsonl", "y", None, frozenset())) is None
    True
    """
    label, id_field, text_features = schema.label, schema.id_field, schema.text_features
    if not text_features:  # numbers only: read them all at once
        x = dict(row)
        x.pop(label, None)
        if id_field is not None:
            x.pop(id_field, None)
        if schema.text_values:
            return _text_numbers(tuple(x), tuple(x.values()))
        kinds = set(map(type, x.values()))
        if not kinds <= _FLOAT:
            if not kinds <= _INT_FLOAT:  # a string, a boolean, null...
                return None
            try:
                x = dict(zip(x, map(float, x.values())))
            except OverflowError:
                return None
        return x if math.isfinite(sum(x.values())) else None
    nan = math.nan
    try:
        if schema.text_values:  # text: float() of it, but never Python's "1_000"
            x = {name: (_category(name, value, schema) if name in text_features
                        else float(value) if "_" not in value else nan)
                 for name, value in row.items() if name != label and name != id_field}
        else:  # JSON: a number, never a string or a boolean
            x = {name: (_category(name, value, schema) if name in text_features
                        else value if (kind := type(value)) is float
                        else float(value) if kind is int else nan)
                 for name, value in row.items() if name != label and name != id_field}
        total = sum(v for k, v in x.items() if k not in text_features)
    except Exception:  # Reject, ValueError, OverflowError, TypeError: the checks tell
        return None
    return x if math.isfinite(total) else None  # inf or NaN if any value is (or a sum overflows)


_FLOAT, _INT_FLOAT = frozenset({float}), frozenset({float, int})


def _text_numbers(names: Sequence[str], texts: Sequence[str]) -> dict[str, float] | None:
    """``{name: float(text)}`` when every text is a finite number, as :func:`_number` reads
    it (never Python's ``1_000``); else None."""
    try:
        x = dict(zip(names, map(float, texts)))
        if "_" in "".join(texts):
            return None
    except (ValueError, TypeError):
        return None
    return x if math.isfinite(sum(x.values())) else None


def to_item(row: dict[str, Any], schema: RowSchema, stream: str,
            location: str) -> Example | LabelOnly:
    """:func:`to_example`, but with delayed labels (``schema.labels_later`` and an id) a row
    with the id and the label and no feature is a label row, a
    :class:`~foldstream.operators.stages.delay.LabelOnly` (docs/method.md §13); so is such a row whose
    other fields make no example (a note, a timestamp as text): they are ignored if its key is
    pending, and the delay fan-out rejects it, saying why, if not. A row with the label and
    valid features stays an example: the label of its key if pending, else an arrival with its
    label.

    >>> later = RowSchema("jsonl", "y", "id", frozenset(), labels_later=True)
    >>> to_item({"id": 7, "y": "u"}, later, "s", "t@3")
    LabelOnly(stream='s', key=7, y='u', location='t@3', simulated=False, not_example=None)
    >>> to_item({"id": 7, "y": "u", "note": "late"}, later, "s", "t@4").not_example
    "field 'note': expected a number, got 'late' (list it in `nominal` to read it as a category)"
    >>> to_item({"id": 7, "y": "u", "a": 1}, later, "s", "t@5").x
    {'a': 1.0}
    """
    if not (schema.labels_later and schema.id_field is not None) or row.get(schema.label) is None:
        return to_example(row, schema, stream, location)
    label_row = {name: row[name] for name in (schema.id_field, schema.label) if name in row}
    if len(label_row) == len(row):
        example = to_example(label_row, schema, stream, location)
        return LabelOnly(stream, example.key, example.y, location)
    try:
        return to_example(row, schema, stream, location)
    except Reject as exc:
        label = to_example(label_row, schema, stream, location)  # a bad id or label: rejected
        return LabelOnly(stream, label.key, label.y, location, not_example=str(exc))


def _label(row: dict[str, Any], schema: RowSchema) -> Any:
    value = row.get(schema.label)
    if isinstance(value, str):
        if schema.text_values:
            text = value.strip()
            if text:
                allowed = schema.categories.get(schema.label)
                if allowed is None or text in allowed:
                    return text
                raise Reject(f"{_label_where(schema)}: {text!r} is not one of the declared values")
        elif value.strip():
            return value
        raise Reject(f"{_label_where(schema)}: empty")
    if isinstance(value, (bool, int)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value is None:
        raise Reject(f"{_label_where(schema)}: missing")
    raise Reject(f"{_label_where(schema)}: expected a string, an integer or a boolean, "
                 f"got {_show(value)}")


def _label_where(schema: RowSchema) -> str:
    return f"label {schema.noun} {schema.label!r}"


def label_and_key(row: dict[str, Any], schema: RowSchema) -> tuple[Any, int | str | None]:
    """The label and the key (None without ``schema.id_field``) of a row whose label comes
    with it, as :func:`to_example` reads them, or :class:`Reject` saying why not.

    >>> label_and_key({"id": 7.0, "y": " u"}, RowSchema("jsonl", "y", "id", frozenset()))
    (' u', 7)
    """
    return _label(row, schema), None if schema.id_field is None else _key(row, schema)


def id_key(text: str, schema: RowSchema) -> int | str:
    """The key of a text row whose id field holds ``text``, as :func:`to_example` reads it, or
    :class:`Reject` saying why not.

    >>> schema = RowSchema("csv", "y", "id", frozenset(), ("id", "y"))
    >>> id_key(" 7 ", schema), id_key("007", schema)
    (7, '007')
    """
    return _key({schema.id_field: text}, schema)


def _key(row: dict[str, Any], schema: RowSchema) -> int | str:
    value = row.get(schema.id_field)
    if isinstance(value, str) and value.strip():
        text = value.strip()
        # an integer's own decimal text only: "007", "1_000", "+5" are ids of their own
        digits = text[1:] if text.startswith("-") else text
        limit = sys.get_int_max_str_digits() or len(digits)  # longer: Python refuses int()
        if digits.isascii() and digits.isdigit() and (digits == "0" or digits[0] != "0") \
                and len(digits) <= limit and text != "-0":
            return int(text)
        return text
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    where = f"id {schema.noun} {schema.id_field!r}"
    if value is None or value == "":
        raise Reject(f"{where}: missing")
    raise Reject(f"{where}: expected an integer or a string, got {_show(value)}")


def _number(name: str, value: Any, schema: RowSchema) -> float:
    number = _as_float(value, schema.text_values)
    if number is not None and math.isfinite(number):  # the common case: keep it cheap
        return number
    raise Reject(_not_a_number(name, value, number, schema))


def _as_float(value: Any, text_values: bool) -> float | None:
    """The value as a float, or None if it is no number in this format."""
    if isinstance(value, str):
        # Text formats only (JSON strings are never numbers); float() also takes "1_000",
        # a Python spelling that no data file means as a number.
        if not text_values or "_" in value:
            return None
        try:
            return float(value)
        except ValueError:
            return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # a JSON integer too large for a float
            return None
    return None


def _not_a_number(name: str, value: Any, number: float | None, schema: RowSchema) -> str:
    where = f"{schema.noun} {name!r}"
    if number is not None:
        return f"{where}: {_show(value)} is not a finite number"
    if value is None or (isinstance(value, str) and not value.strip()):
        return f"{where}: missing value"
    if isinstance(value, str) and schema.text_values:
        return f"{where}: {value.strip()!r} is not a number"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{where}: {_show(value)} is too large"
    hint = " (list it in `nominal` to read it as a category)" if isinstance(value, str) else ""
    return f"{where}: expected a number, got {_show(value)}{hint}"


def _category(name: str, value: Any, schema: RowSchema) -> str:
    where = f"{schema.noun} {name!r}"
    if isinstance(value, str):
        text = value.strip() if schema.text_values else value
    elif isinstance(value, int) and not isinstance(value, bool):
        text = str(value)  # JSON codes such as 2000 for a category
    elif value is None:
        raise Reject(f"{where}: missing value")
    else:
        raise Reject(f"{where}: expected a string (nominal), got {_show(value)}")
    if not text.strip():
        raise Reject(f"{where}: missing value")
    allowed = schema.categories.get(name)
    if allowed is not None and text not in allowed:
        raise Reject(f"{where}: {text!r} is not one of the declared values {sorted(allowed)}")
    return text


def _show(value: Any) -> str:
    """A value as the input wrote it, shortened for a message."""
    if isinstance(value, str):
        shown = repr(value)
    else:
        try:
            shown = json.dumps(value, allow_nan=True)
        except (TypeError, ValueError):
            shown = repr(value)
    return _shorten(shown, 60)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def json_type(value: Any) -> str:
    """The kind of a JSON value, for messages: ``an array``, ``a string``, ``null``, ...

    >>> json_type([]), json_type(None), json_type(True), json_type(1.5)
    ('an array', 'null', 'a boolean', 'a number')
    """
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "a boolean" if isinstance(value, bool) else "a number"


def parse_json(text: str) -> Any:
    r"""One JSON value, or :class:`Reject` for malformed JSON (what JSON Lines and Kafka
    messages say alike).

    >>> parse_json('[1, {"a": null}]')
    [1, {'a': None}]
    >>> parse_json('{"a": 1')
    Traceback (most recent call last):
    ...
    foldstream.connectors.rows.Reject: malformed JSON (Expecting ',' delimiter at column 8)
    >>> parse_json('{"a": ' + '7' * 5000 + '}')
    Traceback (most recent call last):
    ...
    foldstream.connectors.rows.Reject: unreadable JSON (a number of 5000 digits; at most 4300 are read)
    >>> parse_json('{"id": "\\ud800"}')
    Traceback (most recent call last):
    ...
    foldstream.connectors.rows.Reject: malformed JSON (a lone surrogate '\ud800' in a string: no Unicode text)
    >>> parse_json('"\\ud83d\\ude00"') == "\U0001F600"
    True
    """
    try:
        value = orjson.loads(text)
    except Exception:  # whatever orjson refuses, json reads or says why, in its words
        pass
    else:
        if not _json_may_differ(value):
            if "\\u" in text and _SURROGATE.search(text):  # a pair (orjson refuses lone ones)
                _check_text(value)
            return value
    try:
        value = json.loads(text)
        if _SURROGATE.search(text):
            _check_text(value)
        return value
    except json.JSONDecodeError as exc:
        raise Reject(f"malformed JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise Reject("malformed JSON (nested too deeply)") from None
    except ValueError as exc:  # an integer longer than Python converts (int_max_str_digits)
        digits = _DIGITS.search(str(exc))
        why = (f"a number of {digits[2]} digits; at most {digits[1]} are read" if digits
               else _shorten(str(exc), 200))
        raise Reject(f"unreadable JSON ({why})") from None


_WIDE = 2.0 ** 63  # orjson reads an integer beyond 64 bits as a float (json: as an int)
_DEEP = 200  # orjson reads 1,024 levels; json stops near the interpreter's recursion limit


def _json_may_differ(value: Any) -> bool:
    """Whether json might read the text of orjson's ``value`` otherwise, so that the text is
    read again with json: a float of magnitude 2**63 or more anywhere (it may be an integer too
    wide for 64 bits, which json reads as the int it is; a float that large, written as a
    float, is read the same by both), or nesting deeper than ``_DEEP`` levels (json's limit
    depends on the stack; no row is nested that deep).

    >>> _json_may_differ({"a": [1.5, {"b": -1e19}]}), _json_may_differ({"a": 9.2e18, "b": "1"})
    (True, False)
    >>> _json_may_differ([[[]]]), _json_may_differ(parse_json("[" * 300 + "]" * 300))
    (False, True)
    """
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        kind = type(item)
        if kind is dict or kind is list:
            if depth > _DEEP:
                return True
            for part in (item.values() if kind is dict else item):
                kind = type(part)
                if kind is float:
                    if not -_WIDE < part < _WIDE:  # orjson gives no NaN, no infinity
                        return True
                elif kind is dict or kind is list:
                    todo.append((part, depth + 1))
        elif kind is float and not -_WIDE < item < _WIDE:
            return True
    return False


_DIGITS = re.compile(r"limit \((\d+) digits\).*value has (\d+) digits")
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # the escape of a UTF-16 surrogate


def _check_text(value: Any) -> None:
    """:class:`Reject` if a string of ``value`` (keys too) holds a lone surrogate: JSON's
    ``"\\ud800"`` escape reads as a Python string that is no Unicode text, which no UTF-8 file
    or message can hold (a pair, an emoji's, reads as its one character)."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            todo.extend(item)
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise Reject(f"malformed JSON (a lone surrogate {item[exc.start]!r} in a string: "
                             f"no Unicode text)") from None


def json_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object (a row), else :class:`Reject`.

    >>> json_object([1])
    Traceback (most recent call last):
    ...
    foldstream.connectors.rows.Reject: expected a JSON object, got an array
    """
    if not isinstance(value, dict):
        raise Reject(f"expected a JSON object, got {json_type(value)}")
    return value

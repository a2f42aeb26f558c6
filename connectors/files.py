"""Labelled examples from CSV, ARFF and JSON Lines files, gzipped or not (docs/method.md §1, §11).

A file is read in binary, one physical line at a time, so that one bad line costs one
:class:`~foldstream.operators.records.Rejected` record and never the run. Each format has its
own small line parser that only splits a line into ``{name: raw value}``; turning raw values
into labels, keys and features, and every check on them, is shared (:func:`_to_example`).

What is rejected, always with the line number and the column or field in the reason:
a line that is not valid UTF-8; a malformed line (CSV quoting, JSON syntax, a JSON value that
is not an object); a wrong number of columns; a missing or empty label or id; a feature that is
missing (empty, ``?`` in ARFF, JSON ``null``), not a number where a number is expected, NaN or
infinite, or (ARFF) a nominal value outside the declared set. Blank lines are skipped.

Labels are text for CSV and ARFF (stripped of surrounding whitespace, so ``"1"`` and ``" 1"``
are one class) and the JSON value for JSON Lines: a string, an integer or a boolean, with a
float that is integral (``1.0``) taken as that integer, since JSON writers often cannot tell
the two apart; any other label is rejected.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import functools
import csv
import gzip
import json
import math
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from foldstream.operators.records import Example, Rejected

FORMATS = ("csv", "arff", "jsonl")
_SUFFIXES = {".csv": "csv", ".arff": "arff", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_NOUNS = {"csv": "column", "arff": "attribute", "jsonl": "field"}
_GZIP_MAGIC = b"\x1f\x8b"
_CHEAP_BYTES = 200 * 1024 * 1024  # count_rows gives up above this (uncompressed) size

PathLike = str | os.PathLike[str]


class _Reject(Exception):
    """Why one line cannot become an example; turned into a Rejected record by the reader."""


@dataclass(frozen=True)
class _Schema:
    """What the shared checks need to know about a file, read from its header."""

    fmt: str
    label: str
    id_field: str | None
    nominal: frozenset[str]  # features kept as text
    columns: tuple[str, ...] | None = None  # CSV and ARFF; JSON Lines rows name their fields
    categories: dict[str, frozenset[str]] = field(default_factory=dict)  # declared ARFF values
    first_data_line: int = 1

    @functools.cached_property
    def noun(self) -> str:
        return _NOUNS[self.fmt]

    @functools.cached_property
    def text_values(self) -> bool:
        """Whether raw values are text (CSV, ARFF) rather than typed JSON values."""
        return self.fmt != "jsonl"

    @functools.cached_property
    def text_features(self) -> frozenset[str]:
        """Features read as categories: the ``nominal`` ones and ARFF's declared nominals."""
        return self.nominal | frozenset(self.categories)


# --------------------------------------------------------------------------------------------
# Public functions


def iter_file(path: PathLike, *, label: str, stream: str | None = None,
              nominal: Sequence[str] = (), id_field: str | None = None, limit: int | None = None,
              fmt: str | None = None) -> Iterator[Example | Rejected]:
    """Read the examples of a CSV, ARFF or JSON Lines file, and a record for each bad line.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip is recognised by its content, whatever the name.
    label : str
        The label column (CSV), attribute (ARFF) or field (JSON Lines).
    stream : str, optional
        Stream name; default the file name without ``.gz`` and its format suffix
        (``elec.csv.gz`` gives ``elec``).
    nominal : sequence of str
        Features kept as text (categories) instead of being read as numbers. ARFF nominal and
        string attributes are text anyway.
    id_field : str, optional
        Column or field holding the example's key (``int`` when it reads as one, else ``str``);
        it is not a feature.
    limit : int, optional
        Stop after this many examples (rejected lines do not count).
    fmt : {'csv', 'arff', 'jsonl'}, optional
        The format, when the name does not end in ``.csv``, ``.arff``, ``.jsonl`` or
        ``.ndjson`` (each optionally followed by ``.gz``).

    Returns
    -------
    iterator of Example or Rejected
        In file order. Every record has ``location`` ``"<file name>:<line>"``; a Rejected
        record's ``position`` is the number of examples accepted before it.

    Raises
    ------
    ValueError
        At call time, before any example, when the format is unknown or the header is unusable:
        no header row, a label, id or nominal name that is not in the header, an unsupported
        ARFF attribute type.
    """
    path = Path(path)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"`limit` must be an integer >= 0 or None, got {limit!r}")
    if isinstance(nominal, str):  # nominal="color" would otherwise mean {"c", "o", "l", "r"}
        nominal = (nominal,)
    fmt = _detect_format(path, fmt)
    # The header is read (and the file closed) now, so that a bad header fails at the call;
    # the returned generator opens the file again.
    with contextlib.closing(_lines(path)) as lines:
        schema = _HEADER_READERS[fmt](lines, path, label, id_field, frozenset(nominal))
    return _read_examples(path, schema, stream or default_stream(path), limit)


def default_stream(path: PathLike) -> str:
    """The stream name of a file: its name without ``.gz`` and without its last suffix.

    >>> default_stream("data/elec.csv.gz")
    'elec'
    """
    name = Path(path).name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    return Path(name).stem


def count_rows(path: PathLike, fmt: str | None = None) -> int | None:
    """Count the data lines of a file cheaply, as a progress-bar total.

    Counts non-blank lines after the header (and, in ARFF, not comments), so rejected lines are
    included. Returns ``None`` when counting is not cheap: more than 200 MB, compressed or not
    (a gzip file's uncompressed size is read from its trailer).
    """
    path = Path(path)
    fmt = _detect_format(path, fmt)
    if _uncompressed_size(path) > _CHEAP_BYTES:
        return None
    count = 0
    in_data = fmt == "jsonl"
    for _, raw in _lines(path):
        line = raw.strip()
        if not line:
            continue
        if not in_data:
            # CSV: the header is the first non-blank line; ARFF: everything up to "@data".
            in_data = fmt == "csv" or line.lower().startswith(b"@data")
        elif not (fmt == "arff" and line.startswith(b"%")):
            count += 1
    return count


def packaged_elec_path() -> Path:
    """Path of the copy of Electricity (``elec.csv.gz``) shipped with the package.

    Label column ``target``; 45,312 examples, 6 numeric features ``feat_1`` .. ``feat_6``.
    """
    resource = resources.files(__package__).joinpath("data", "elec.csv.gz")
    if isinstance(resource, Path):
        return resource
    # Installed inside a zip: extract once, and keep the copy until the interpreter exits.
    return _RESOURCES.enter_context(resources.as_file(resource))


_RESOURCES = contextlib.ExitStack()
atexit.register(_RESOURCES.close)


# --------------------------------------------------------------------------------------------
# Reading lines


def _detect_format(path: Path, fmt: str | None) -> str:
    if fmt is not None:
        fmt = {"ndjson": "jsonl"}.get(fmt.lower(), fmt.lower())
        if fmt not in FORMATS:
            raise ValueError(f"unknown file format {fmt!r}; expected one of {', '.join(FORMATS)}")
        return fmt
    name = path.name.lower()
    suffix = Path(name[:-3] if name.endswith(".gz") else name).suffix
    if suffix not in _SUFFIXES:
        raise ValueError(f"cannot tell the format of {path.name!r} from its name; name it "
                         f"*.csv, *.arff, *.jsonl or *.ndjson (optionally .gz), or give fmt")
    return _SUFFIXES[suffix]


def _is_gzip(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(2) == _GZIP_MAGIC


def _uncompressed_size(path: Path) -> int:
    size = path.stat().st_size
    if not _is_gzip(path) or size > _CHEAP_BYTES:
        return size
    with path.open("rb") as file:
        file.seek(-4, os.SEEK_END)
        # ISIZE: the uncompressed size modulo 2**32, little-endian, in the last 4 bytes.
        return int.from_bytes(file.read(4), "little")


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line number, line without its end)`` in binary, from 1."""
    opener = gzip.open if _is_gzip(path) else open
    with opener(path, "rb") as file:
        for lineno, raw in enumerate(file, start=1):
            if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8):]
            yield lineno, raw.rstrip(b"\r\n")


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Reject(f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


def _read_examples(path: Path, schema: _Schema, stream: str,
                   limit: int | None) -> Iterator[Example | Rejected]:
    accepted = 0
    if limit == 0:
        return
    parse_line = _LINE_PARSERS[schema.fmt]
    for lineno, raw in _lines(path):
        if lineno < schema.first_data_line:
            continue
        location = f"{path.name}:{lineno}"
        try:
            row = parse_line(_decode(raw), schema)
            if row is None:  # blank line or comment
                continue
            example = _to_example(row, schema, stream, location)
        except _Reject as exc:
            reason = f"line {lineno}: {exc}"
            yield Rejected(stream, reason, raw.decode("utf-8", "backslashreplace"), location,
                           accepted)
            continue
        yield example
        accepted += 1
        if accepted == limit:
            return


# --------------------------------------------------------------------------------------------
# Headers: each returns the file's _Schema, and raises ValueError when it is unusable


def _csv_header(lines: Iterator[tuple[int, bytes]], path: Path, label: str,
                id_field: str | None, nominal: frozenset[str]) -> _Schema:
    for lineno, raw in lines:
        text = _header_text(raw, lineno, path)
        if not text.strip():
            continue
        try:
            columns = tuple(name.strip() for name in _split(text))
        except _Reject as exc:
            raise ValueError(f"{path.name}:{lineno}: unreadable header row: {exc}") from None
        _check_names(columns, path, "column", label, id_field, nominal)
        return _Schema("csv", label, id_field, nominal, columns, first_data_line=lineno + 1)
    raise ValueError(f"{path.name} is empty: a CSV file needs a header row naming its columns")


_ATTRIBUTE = re.compile(r"""@attribute\s+('[^']*'|"[^"]*"|\S+)\s+(.*\S)""", re.IGNORECASE)
_NUMERIC_TYPES = {"numeric", "real", "integer"}


def _arff_header(lines: Iterator[tuple[int, bytes]], path: Path, label: str,
                 id_field: str | None, nominal: frozenset[str]) -> _Schema:
    columns: list[str] = []
    categories: dict[str, frozenset[str]] = {}
    text_attributes: set[str] = set()
    for lineno, raw in lines:
        text = _header_text(raw, lineno, path).strip()
        lowered = text.lower()
        if not text or text.startswith("%") or lowered.startswith("@relation"):
            continue
        if lowered.startswith("@data"):
            _check_names(tuple(columns), path, "attribute", label, id_field, nominal)
            return _Schema("arff", label, id_field, nominal | text_attributes, tuple(columns),
                           categories, first_data_line=lineno + 1)
        match = _ATTRIBUTE.fullmatch(text)
        if not match:
            raise ValueError(f"{path.name}:{lineno}: expected @relation, @attribute or @data "
                             f"in the ARFF header, got {text!r}")
        name, kind = match.group(1).strip("'\""), match.group(2).strip()
        columns.append(name)
        if kind.startswith("{") and kind.endswith("}"):
            try:
                categories[name] = frozenset(_split_arff(kind[1:-1]))
            except _Reject as exc:
                raise ValueError(f"{path.name}:{lineno}: attribute {name!r}: {exc}") from None
        elif kind.lower() == "string":
            text_attributes.add(name)
        elif kind.lower() not in _NUMERIC_TYPES:
            raise ValueError(f"{path.name}:{lineno}: attribute {name!r} has type {kind!r}; "
                             f"supported: numeric, real, integer, string, {{nominal values}}")
    raise ValueError(f"{path.name}: no @data line, so this is not a complete ARFF file")


def _jsonl_header(lines: Iterator[tuple[int, bytes]], path: Path, label: str,
                  id_field: str | None, nominal: frozenset[str]) -> _Schema:
    # No header: each row names its fields, so names are checked line by line.
    _check_names(None, path, "field", label, id_field, nominal)
    return _Schema("jsonl", label, id_field, nominal)


def _header_text(raw: bytes, lineno: int, path: Path) -> str:
    try:
        return _decode(raw)
    except _Reject as exc:
        raise ValueError(f"{path.name}:{lineno}: header {exc}") from None


def _check_names(columns: tuple[str, ...] | None, path: Path, noun: str, label: str,
                 id_field: str | None, nominal: frozenset[str]) -> None:
    if id_field is not None and id_field == label:
        raise ValueError(f"the id {noun} and the label {noun} are both {label!r}")
    if columns is None:
        return
    duplicates = sorted({name for name in columns if columns.count(name) > 1})
    if duplicates or "" in columns:
        raise ValueError(f"{path.name}: {noun} names must be unique and non-empty, "
                         f"got {list(columns)}")
    wanted = [("label", label)] + ([("id", id_field)] if id_field is not None else [])
    wanted += [("nominal", name) for name in sorted(nominal)]
    for role, name in wanted:
        if name not in columns:
            raise ValueError(f"{role} {noun} {name!r} is not in the header of {path.name}: "
                             f"{list(columns)}")


# --------------------------------------------------------------------------------------------
# Line parsers: text -> {name: raw value}, or None for a line to skip


def _parse_csv_line(text: str, schema: _Schema) -> dict[str, Any] | None:
    if not text.strip():
        return None
    return _zip_columns(_split(text), schema)


def _parse_arff_line(text: str, schema: _Schema) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped or stripped.startswith("%"):
        return None
    if stripped.startswith("{"):
        raise _Reject("sparse ARFF rows ({index value, ...}) are not supported")
    row = _zip_columns(_split_arff(text), schema)
    for name, value in row.items():
        if value == "?":  # ARFF's missing value
            raise _Reject(f"attribute {name!r}: missing value '?'")
    return row


def _parse_jsonl_line(text: str, schema: _Schema) -> dict[str, Any] | None:
    if not text.strip():
        return None
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Reject(f"malformed JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise _Reject("malformed JSON (nested too deeply)") from None
    if not isinstance(row, dict):
        raise _Reject(f"expected a JSON object, got {_json_type(row)}")
    return row


def _split(text: str) -> list[str]:
    """Split one CSV line into fields with the csv module; a quoting error rejects the line."""
    try:
        (values,) = csv.reader([text], strict=True)
    except csv.Error as exc:
        raise _Reject(f"malformed line ({exc})") from None
    return values


_ARFF_VALUE = re.compile(r"""
    \s* (?: '((?:[^'\\]|\\.)*)'   # 'single-quoted', with backslash escapes
          | "((?:[^"\\]|\\.)*)"   # "double-quoted"
          | ([^,'"]*?) )          # bare (surrounding spaces excluded)
    \s* (,|$)                     # the separator, or the end of the line
""", re.VERBOSE)
_ARFF_ESCAPE = re.compile(r"\\(.)")


def _split_arff(text: str) -> list[str]:
    """Split one ARFF line into values; the csv module cannot take both quote characters."""
    values: list[str] = []
    position = 0
    while True:
        match = _ARFF_VALUE.match(text, position)
        if match is None:
            raise _Reject(f"malformed line (bad quoting at character {position + 1})")
        single, double, bare, separator = match.groups()
        quoted = single if single is not None else double
        values.append(bare if quoted is None else _ARFF_ESCAPE.sub(r"\1", quoted))
        if not separator:
            return values
        position = match.end()


def _zip_columns(values: list[str], schema: _Schema) -> dict[str, str]:
    assert schema.columns is not None
    if len(values) != len(schema.columns):
        raise _Reject(f"expected {len(schema.columns)} {schema.noun}s, got {len(values)}")
    return dict(zip(schema.columns, values))


_HEADER_READERS: dict[str, Callable[..., _Schema]] = {
    "csv": _csv_header, "arff": _arff_header, "jsonl": _jsonl_header}
_LINE_PARSERS: dict[str, Callable[[str, _Schema], dict[str, Any] | None]] = {
    "csv": _parse_csv_line, "arff": _parse_arff_line, "jsonl": _parse_jsonl_line}


# --------------------------------------------------------------------------------------------
# Shared checks: raw values -> label, key and features


def _to_example(row: dict[str, Any], schema: _Schema, stream: str, location: str) -> Example:
    label = _label(row, schema)
    key = None if schema.id_field is None else _key(row, schema)
    text_features = schema.text_features
    x = {name: _category(name, value, schema) if name in text_features
         else _number(name, value, schema)
         for name, value in row.items() if name != schema.label and name != schema.id_field}
    return Example(stream, x, label, key, location)


def _label(row: dict[str, Any], schema: _Schema) -> Any:
    where = f"label {schema.noun} {schema.label!r}"
    value = row.get(schema.label)
    if value is None:
        raise _Reject(f"{where}: missing")
    if isinstance(value, str):
        if not value.strip():
            raise _Reject(f"{where}: empty")
        if not schema.text_values:
            return value
        text = value.strip()
        allowed = schema.categories.get(schema.label)
        if allowed is not None and text not in allowed:
            raise _Reject(f"{where}: {text!r} is not one of the declared values")
        return text
    if isinstance(value, (bool, int)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise _Reject(f"{where}: expected a string, an integer or a boolean, got {_show(value)}")


def _key(row: dict[str, Any], schema: _Schema) -> int | str:
    where = f"id {schema.noun} {schema.id_field!r}"
    value = row.get(schema.id_field)
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            return text
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value is None or value == "":
        raise _Reject(f"{where}: missing")
    raise _Reject(f"{where}: expected an integer or a string, got {_show(value)}")


def _number(name: str, value: Any, schema: _Schema) -> float:
    number = _as_float(value, schema.text_values)
    if number is not None and math.isfinite(number):  # the common case: keep it cheap
        return number
    raise _Reject(_not_a_number(name, value, number, schema))


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


def _not_a_number(name: str, value: Any, number: float | None, schema: _Schema) -> str:
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


def _category(name: str, value: Any, schema: _Schema) -> str:
    where = f"{schema.noun} {name!r}"
    if isinstance(value, str):
        text = value.strip() if schema.text_values else value
    elif isinstance(value, int) and not isinstance(value, bool):
        text = str(value)  # JSON codes such as 2000 for a category
    elif value is None:
        raise _Reject(f"{where}: missing value")
    else:
        raise _Reject(f"{where}: expected a string (nominal), got {_show(value)}")
    if not text.strip():
        raise _Reject(f"{where}: missing value")
    allowed = schema.categories.get(name)
    if allowed is not None and text not in allowed:
        raise _Reject(f"{where}: {text!r} is not one of the declared values {sorted(allowed)}")
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
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "a boolean" if isinstance(value, bool) else "a number"

"""Labelled examples from CSV, ARFF and JSON Lines files, gzipped or not (docs/method.md §1, §11).

A file is read in binary, in batches of lines, each line parsed on its own, so that one bad
line costs one :class:`~foldstream.operators.records.base.Rejected` record and never the run. A CSV
record is read as RFC 4180 says: a quoted field may hold separators, doubled quotes and line
breaks, so a record may span lines (:func:`_csv_records`; it is numbered by its first line).
Each format has its own small line parser that only splits a line into ``{name: raw value}``;
turning raw values into labels, keys and features, and every check on them, is shared with
Kafka messages (:mod:`foldstream.connectors.rows`). A CSV or ARFF line of plain numbers takes a
quicker way to the same example (:func:`~foldstream.connectors.rows.columns_example`); in a
file of 10 MB or more of text, such lines, and JSON Lines rows of numbers, are read a block at
a time by a compiled reader (:mod:`foldstream.connectors.blocks`), again to the same examples.

What is rejected, always with the line number and the column or field in the reason:
a line that is not valid UTF-8; a malformed line (CSV quoting, JSON syntax, a JSON value that
is not an object); a wrong number of columns; a missing or empty label or id; a feature that is
missing (empty, ``?`` in ARFF, JSON ``null``), not a number where a number is expected, NaN or
infinite, or (ARFF) a nominal value outside the declared set; a JSON number longer than Python
reads (5,000 digits) or a string with a lone surrogate; and anything else Python raises on a
line (the reason names the error: :func:`~foldstream.connectors.rows.unexpected`), so that no
line ends the run. Blank lines are skipped.

A damaged file (a truncated or corrupt gzip stream, a read error) ends the source: one last
rejected record says where (the line, and the byte offset in the uncompressed text) and why,
and everything read before it is evaluated as usual.

Labels are text for CSV and ARFF (stripped of surrounding whitespace, so ``"1"`` and ``" 1"``
are one class) and the JSON value for JSON Lines: a string, an integer or a boolean, with a
float that is integral (``1.0``) taken as that integer, since JSON writers often cannot tell
the two apart; any other label is rejected.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import dataclasses
import csv
import gzip
import itertools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from foldstream.connectors.rows import (Reject, RowSchema, columns_example, json_object,
                                        parse_json, to_item, unexpected)
from foldstream.operators.stages.delay import LabelOnly
from foldstream.operators.records.base import Example, Rejected

FORMATS = ("csv", "arff", "jsonl")
_SUFFIXES = {".csv": "csv", ".arff": "arff", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_GZIP_MAGIC = b"\x1f\x8b"
_CHEAP_BYTES = 200 * 1024 * 1024  # count_rows gives up above this (uncompressed) size

PathLike = str | os.PathLike[str]


# --------------------------------------------------------------------------------------------
# Public functions


def iter_file(path: PathLike, *, label: str, stream: str | None = None,
              nominal: Sequence[str] = (), id_field: str | None = None, limit: int | None = None,
              fmt: str | None = None, labels_later: bool = False,
              ) -> Iterator[Example | LabelOnly | Rejected]:
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
    labels_later : bool
        Delayed labels (docs/method.md §13): a JSON Lines row without the label field (with an
        ``id_field``) is an example without its label (``y`` is ``None``), which a later row
        with the same id and the label completes (a
        :class:`~foldstream.operators.stages.delay.LabelOnly` when it has no valid features,
        :func:`~foldstream.connectors.rows.to_item`); otherwise such a row is rejected.

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
    with contextlib.closing(_records(path, fmt)) as lines:
        try:
            schema = _HEADER_READERS[fmt](lines, path, label, id_field, frozenset(nominal))
        except DamagedFile as exc:
            raise ValueError(f"{exc} (in its header)") from None
    if labels_later:
        schema = dataclasses.replace(schema, labels_later=True)
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


def count_rows(path: PathLike, fmt: str | None = None, at_most: int | None = None) -> int | None:
    """Count the data lines of a file cheaply, as a progress-bar total.

    Counts non-blank lines after the header (and, in ARFF, not comments), so rejected lines are
    included; with ``at_most`` (a run's ``limit``) it stops there, so that a short run of a long
    file does not read all of it. Returns ``None`` when counting is not cheap: more than 200 MB,
    compressed or not (a gzip file's uncompressed size is read from its trailer).

    >>> elec = packaged_elec_path()
    >>> count_rows(elec), count_rows(elec, at_most=2000), count_rows(elec, at_most=10 ** 6)
    (45312, 2000, 45312)
    """
    path = Path(path)
    fmt = _detect_format(path, fmt)
    if _uncompressed_size(path) > _CHEAP_BYTES:
        return None
    count = 0
    in_data = fmt == "jsonl"
    try:
        with contextlib.closing(_records(path, fmt)) as lines:
            for _, raw in lines:
                line = raw.strip()
                if not line:
                    continue
                if not in_data:
                    # CSV: the header is the first non-blank line; ARFF: everything up to "@data".
                    in_data = fmt == "csv" or line.lower().startswith(b"@data")
                elif not (fmt == "arff" and line.startswith(b"%")):
                    count += 1
                    if count == at_most:
                        break
    except DamagedFile:
        pass  # the lines up to the damage are what the source will yield
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
    """The size of the file's text; for gzip, at least its compressed size (the trailer holds
    the uncompressed size modulo 2**32 only, and a damaged one anything)."""
    size = path.stat().st_size
    if not _is_gzip(path) or size > _CHEAP_BYTES or size < 4:
        return size
    with path.open("rb") as file:
        file.seek(-4, os.SEEK_END)
        # ISIZE: the uncompressed size modulo 2**32, little-endian, in the last 4 bytes.
        return max(size, int.from_bytes(file.read(4), "little"))


class DamagedFile(ValueError):
    """The file cannot be read past a point: a truncated or corrupt gzip stream, a read error.

    ``lineno`` is the line that could not be read and ``offset`` the bytes of (uncompressed)
    text read before it.
    """

    def __init__(self, path: Path, lineno: int, offset: int, cause: BaseException):
        why = str(cause) or type(cause).__name__
        super().__init__(f"{path.name} is damaged at line {lineno} (byte {offset} of its "
                         f"text): {why}; the lines before it were read")
        self.lineno, self.offset = lineno, offset


def _records(path: Path, fmt: str) -> Iterator[tuple[int, bytes]]:
    """:func:`_lines`, but for CSV its records: a line whose quoted field goes on past its end
    joined with the lines that complete it (:func:`_csv_records`), numbered by its first line."""
    return _csv_records(_lines(path, ends=True)) if fmt == "csv" else _lines(path)


def _lines(path: Path, ends: bool = False) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line number, line without its end)`` in binary, from 1; with ``ends``,
    the line with its end.

    Raises :class:`DamagedFile` where the file stops being readable.
    """
    opener = gzip.open if _is_gzip(path) else open
    lineno, offset = 0, 0
    with opener(path, "rb") as file:
        lines = iter(file)
        while True:
            try:
                raw = next(lines)
            except StopIteration:
                return
            except Exception as exc:  # EOFError, OSError (gzip.BadGzipFile), zlib.error, ...
                raise DamagedFile(path, lineno + 1, offset, exc) from None
            lineno += 1
            offset += len(raw)
            if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8):]
            yield lineno, raw if ends else raw.rstrip(b"\r\n")


def _csv_records(lines: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    r"""CSV records from physical lines, as RFC 4180 reads them: a quoted field may hold line
    breaks, so a line that ends inside a quoted field is joined (its line end kept, as the
    field's text) with the lines up to the one that closes it. The record is numbered by its
    first line.

    A line joined so must make a well-formed row (one record, as the csv module reads it,
    valid UTF-8, as many fields as the header, the file's first record): if it does not, or if
    the lines to the end of the file (or to its damage), or more than
    ``csv.field_size_limit()`` bytes (the longest field the csv module reads), leave the quote
    open, the first line is a record by itself (rejected, as malformed, as before any joining)
    and the lines after it are read again as records of their own. So a stray quote costs its
    own line, and never the lines after it.

    >>> lines = [(1, b'a,b\n'), (2, b'x,"y\r\n'), (3, b'z"\n'), (4, b'"open\n'), (5, b"c,d")]
    >>> list(_csv_records(iter(lines)))
    [(1, b'a,b'), (2, b'x,"y\r\nz"'), (4, b'"open'), (5, b'c,d')]
    """
    limit = csv.field_size_limit()
    width: int | None = None  # the header's fields, once read
    damage: DamagedFile | None = None
    rest: Iterator[tuple[int, bytes]] = iter(lines)
    while True:
        again: list[tuple[int, bytes]] = []  # lines read again after a line alone
        try:
            for lineno, raw in rest:
                text = raw.rstrip(b"\r\n")
                if b'"' in text and _quote_open(text):
                    parts, size = [(lineno, raw)], len(raw)
                    while True:
                        try:
                            following = next(rest, None)
                        except DamagedFile as exc:
                            damage, following = exc, None
                        if following is None or size + len(following[1]) > limit:
                            if following is not None:
                                parts.append(following)
                            again = parts[1:]
                            break
                        parts.append(following)
                        size += len(following[1])
                        last = following[1].rstrip(b"\r\n")
                        if not _quote_open(last, inside=True):
                            record = b"".join(part[1] for part in parts[:-1]) + last
                            fields = _fields(record)
                            if fields is not None and (width is None or len(fields) == width):
                                text = record
                            else:
                                again = parts[1:]
                            break
                if width is None and text.strip():
                    fields = _fields(text)
                    width = -1 if fields is None else len(fields)
                yield lineno, text
                if again:
                    break
            else:
                break
        except DamagedFile as exc:
            damage = exc
            break
        rest = itertools.chain(again, rest)
    if damage is not None:
        raise damage


def _fields(record: bytes) -> list[str] | None:
    """The fields of one CSV record as the csv module reads it, or None if it is not valid
    UTF-8, is malformed, or reads as more than one record."""
    try:
        rows = list(csv.reader([record.decode("utf-8")], strict=True))
    except (UnicodeDecodeError, csv.Error):
        return None
    return rows[0] if len(rows) == 1 else None


def _quote_open(text: bytes, inside: bool = False) -> bool:
    """Whether a CSV record ends inside a quoted field, by the csv module's rules: a quote at
    the start of a field opens it, two quotes in it are one, a quote followed by anything else
    closes it (a quote inside an unquoted field is a character). ``inside``: ``text`` goes on
    a record whose quoted field was open at the end of its previous line.

    >>> [_quote_open(t) for t in (b'a,"b', b'"a""b",c', b'a"b,c', b'"a"x,"b', b'x,""')]
    [True, False, False, True, False]
    >>> _quote_open(b'b",c', inside=True), _quote_open(b'b"",c', inside=True)
    (False, True)
    """
    start = not inside
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if inside:
            if c == 0x22:  # '"'
                if i + 1 < n and text[i + 1] == 0x22:
                    i += 2
                    continue
                inside = False
        elif c == 0x22 and start:
            inside = True
        start = not inside and c == 0x2C  # ','
        i += 1
    return inside

def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Reject(f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


_BATCH = 512  # lines read, then parsed, at once
_BLOCK = 4096  # the same, for the block reader (connectors/blocks.py)
# Importing the block reader (pyarrow) costs more than it saves on a small file or a short
# run: those stay the row parser's (bench/README.md measures both).
_BLOCK_BYTES = 10 * 2 ** 20
_BLOCK_LIMIT = 50_000


def _read_examples(path: Path, schema: RowSchema, stream: str,
                   limit: int | None) -> Iterator[Example | LabelOnly | Rejected]:
    accepted = 0
    if limit == 0:
        return
    lines = _records(path, schema.fmt)
    blocks = _block_reader(schema) if _bulk(path, limit) else None
    size = _BATCH if blocks is None else _BLOCK
    while True:
        batch: list[tuple[int, bytes]] = []
        damaged = None
        try:
            for line in lines:
                batch.append(line)
                if len(batch) == size:
                    break
        except DamagedFile as exc:
            damaged = exc
        if blocks is None:
            items = _read_batch(batch, schema, stream, path.name)
        else:
            items = _read_block(blocks, batch, schema, stream, path.name)
        for item in items:
            if isinstance(item, Rejected):
                yield dataclasses.replace(item, position=accepted)
                continue
            yield item
            accepted += 1
            if accepted == limit:
                return
        if damaged is not None:
            yield Rejected(stream, str(damaged), "", f"{path.name}:{damaged.lineno}", accepted)
            return
        if len(batch) < size:
            return


def _bulk(path: Path, limit: int | None) -> bool:
    """Whether a read of ``path`` up to ``limit`` examples is long enough for the block
    reader."""
    return (limit is None or limit >= _BLOCK_LIMIT) and _uncompressed_size(path) >= _BLOCK_BYTES


def _block_reader(schema: RowSchema) -> Any:
    """The file's block reader (:mod:`foldstream.connectors.blocks`), or None when its lines
    are all the row parser's (a nominal feature, delayed labels)."""
    if schema.numeric_columns is None and schema.fmt != "jsonl":
        return None  # and pyarrow is not imported
    from foldstream.connectors.blocks import block_reader

    return block_reader(schema)


def _read_block(blocks: Any, batch: list[tuple[int, bytes]], schema: RowSchema, stream: str,
                name: str) -> Iterator[Example | LabelOnly | Rejected]:
    """:func:`_read_batch`, the lines of plain numbers read by the block reader."""
    first = schema.first_data_line
    if batch and batch[0][0] < first:
        batch = [line for line in batch if line[0] >= first]
    return blocks.read(batch, stream, name,
                       lambda lines: _read_batch(lines, schema, stream, name))


def _read_batch(batch: list[tuple[int, bytes]], schema: RowSchema, stream: str,
                name: str) -> list[Example | LabelOnly | Rejected]:
    """The items of a batch of lines, in order (blank lines and comments skipped); a Rejected
    record's position is the caller's to set."""
    read_line = _LINE_READERS[schema.fmt]
    first = schema.first_data_line
    out: list[Example | LabelOnly | Rejected] = []
    for lineno, raw in batch:
        if lineno < first:
            continue
        location = f"{name}:{lineno}"
        try:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = _decode(raw)  # rejects the line, saying where
            item = read_line(text, schema, stream, location)
        except Exception as exc:  # Reject, or anything else Python raises on this line
            why = exc if isinstance(exc, Reject) else unexpected(exc)
            out.append(Rejected(stream, f"line {lineno}: {why}",
                                raw.decode("utf-8", "backslashreplace"), location, 0))
            continue
        if item is not None:
            out.append(item)
    return out


# --------------------------------------------------------------------------------------------
# Headers: each returns the file's RowSchema, and raises ValueError when it is unusable


def _csv_header(lines: Iterator[tuple[int, bytes]], path: Path, label: str,
                id_field: str | None, nominal: frozenset[str]) -> RowSchema:
    for lineno, raw in lines:
        text = _header_text(raw, lineno, path)
        if not text.strip():
            continue
        try:
            columns = tuple(name.strip() for name in _split(text))
        except Reject as exc:
            raise ValueError(f"{path.name}:{lineno}: unreadable header row: {exc}") from None
        _check_names(columns, path, "column", label, id_field, nominal)
        return RowSchema("csv", label, id_field, nominal, columns,
                         first_data_line=lineno + 1 + raw.count(b"\n"))
    raise ValueError(f"{path.name} is empty: a CSV file needs a header row naming its columns")


_ATTRIBUTE = re.compile(r"""@attribute\s+('[^']*'|"[^"]*"|\S+)\s+(.*\S)""", re.IGNORECASE)
_NUMERIC_TYPES = {"numeric", "real", "integer"}


def _arff_header(lines: Iterator[tuple[int, bytes]], path: Path, label: str,
                 id_field: str | None, nominal: frozenset[str]) -> RowSchema:
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
            return RowSchema("arff", label, id_field, nominal | text_attributes, tuple(columns),
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
            except Reject as exc:
                raise ValueError(f"{path.name}:{lineno}: attribute {name!r}: {exc}") from None
        elif kind.lower() == "string":
            text_attributes.add(name)
        elif kind.lower() not in _NUMERIC_TYPES:
            raise ValueError(f"{path.name}:{lineno}: attribute {name!r} has type {kind!r}; "
                             f"supported: numeric, real, integer, string, {{nominal values}}")
    raise ValueError(f"{path.name}: no @data line, so this is not a complete ARFF file")


def _jsonl_header(lines: Iterator[tuple[int, bytes]], path: Path, label: str,
                  id_field: str | None, nominal: frozenset[str]) -> RowSchema:
    # No header: each row names its fields, so names are checked line by line.
    _check_names(None, path, "field", label, id_field, nominal)
    return RowSchema("jsonl", label, id_field, nominal)


def _header_text(raw: bytes, lineno: int, path: Path) -> str:
    try:
        return _decode(raw)
    except Reject as exc:
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
            raise MissingColumn(f"{role} {noun} {name!r} is not in the header of {path.name}: "
                                f"{list(columns)}", role)


class MissingColumn(ValueError):
    """A label, id or nominal name that the header does not have; ``role`` says which."""

    def __init__(self, message: str, role: str):
        super().__init__(message)
        self.role = role


def check_header(path: PathLike, *, label: str, nominal: Sequence[str] = (),
                 id_field: str | None = None, fmt: str | None = None) -> None:
    """Read a file's header and raise ``ValueError`` if :func:`iter_file` could not use it.

    For a check at start (``foldstream validate``), before anything runs: an empty file, a
    header without the label (:class:`MissingColumn`), duplicate or empty column names.
    """
    iter_file(path, label=label, nominal=nominal, id_field=id_field, fmt=fmt)


# --------------------------------------------------------------------------------------------
# Line readers: text -> an item, or None for a line to skip (line parsers: -> {name: raw value})


def _read_csv_line(text: str, schema: RowSchema, stream: str,
                   location: str) -> Example | LabelOnly | None:
    if not text.strip():
        return None
    values = _split(text)
    example = columns_example(values, schema, stream, location)  # most lines: numbers only
    if example is not None:
        return example
    return to_item(_zip_columns(values, schema), schema, stream, location)


def _read_arff_line(text: str, schema: RowSchema, stream: str,
                    location: str) -> Example | LabelOnly | None:
    if "?" not in text and "'" not in text and '"' not in text and "{" not in text \
            and "%" not in text:  # most lines: numbers and a declared label
        # split at the commas and not stripped: columns_example strips the label and the id,
        # and float() the spaces around a number, as the pattern does
        example = columns_example(text.split(","), schema, stream, location)
        if example is not None:
            return example
    row = _parse_arff_line(text, schema)
    return None if row is None else to_item(row, schema, stream, location)


def _read_jsonl_line(text: str, schema: RowSchema, stream: str,
                     location: str) -> Example | LabelOnly | None:
    if not text.strip():
        return None
    return to_item(json_object(parse_json(text)), schema, stream, location)


def _parse_arff_line(text: str, schema: RowSchema) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped or stripped.startswith("%"):
        return None
    if stripped.startswith("{"):
        raise Reject("sparse ARFF rows ({index value, ...}) are not supported")
    row = _zip_columns(_split_arff(text), schema)
    for name, value in row.items():
        if value == "?":  # ARFF's missing value
            raise Reject(f"attribute {name!r}: missing value '?'")
    return row


def _split(text: str) -> list[str]:
    """Split one CSV line into fields with the csv module; a quoting error rejects the line.

    A line without a quote or a line break, and shorter than the csv module's longest field,
    is split at its commas, which is what the csv module does with it, without the cost of a
    reader per line (tests/test_rows.py).

    >>> _split('1, 2,"a,b"')
    ['1', ' 2', 'a,b']
    >>> _split('1,"2')
    Traceback (most recent call last):
    ...
    foldstream.connectors.rows.Reject: malformed line (unexpected end of data)
    """
    if '"' not in text and "\r" not in text and "\n" not in text \
            and len(text) <= csv.field_size_limit():
        return text.split(",")
    try:
        (values,) = csv.reader([text], strict=True)
    except csv.Error as exc:
        raise Reject(f"malformed line ({exc})") from None
    return values


_ARFF_VALUE = re.compile(r"""
    \s* (?: '((?:[^'\\]|\\.)*)'   # 'single-quoted', with backslash escapes
          | "((?:[^"\\]|\\.)*)"   # "double-quoted"
          | ([^,'"]*?) )          # bare (surrounding spaces excluded)
    \s* (,|$)                     # the separator, or the end of the line
""", re.VERBOSE)
_ARFF_ESCAPE = re.compile(r"\\(.)")


def _split_arff(text: str) -> list[str]:
    """Split one ARFF line into values; the csv module cannot take both quote characters.

    A line without a quote is split at its commas, each value stripped, which is what the
    pattern reads in it (tests/test_rows.py).

    >>> _split_arff(" 1, 'a b',2 "), _split_arff("1 ,\t2,")
    (['1', 'a b', '2'], ['1', '2', ''])
    """
    if "'" not in text and '"' not in text:
        return [value.strip() for value in text.split(",")]
    return _split_arff_quoted(text)


def _split_arff_quoted(text: str) -> list[str]:
    """:func:`_split_arff` by its pattern, value after value (any line)."""
    values: list[str] = []
    position = 0
    while True:
        match = _ARFF_VALUE.match(text, position)
        if match is None:
            raise Reject(f"malformed line (bad quoting at character {position + 1})")
        single, double, bare, separator = match.groups()
        quoted = single if single is not None else double
        values.append(bare if quoted is None else _ARFF_ESCAPE.sub(r"\1", quoted))
        if not separator:
            return values
        position = match.end()


def _zip_columns(values: list[str], schema: RowSchema) -> dict[str, str]:
    assert schema.columns is not None
    if len(values) != len(schema.columns):
        raise Reject(f"expected {len(schema.columns)} {schema.noun}s, got {len(values)}")
    return dict(zip(schema.columns, values))


_HEADER_READERS: dict[str, Callable[..., RowSchema]] = {
    "csv": _csv_header, "arff": _arff_header, "jsonl": _jsonl_header}


_LINE_READERS: dict[str, Callable[[str, RowSchema, str, str], Example | LabelOnly | None]] = {
    "csv": _read_csv_line, "arff": _read_arff_line, "jsonl": _read_jsonl_line}


# --------------------------------------------------------------------------------------------
# Lines read by another reader: the Flink engine's file source reads a file in its
# TaskManagers and hands its lines here a block at a time, so that they are parsed as above.


@dataclasses.dataclass(frozen=True)
class LineReader:
    """What turns the lines of a file, read elsewhere, into the items :func:`iter_file` yields:
    the file's schema (from its header, read by :func:`line_reader`), its stream, its name (for
    locations) and the ``limit``, which the caller applies (rejected lines do not count);
    ``bulk``, whether :func:`iter_file` would read the file with its block reader."""

    schema: RowSchema
    stream: str
    name: str
    limit: int | None
    bulk: bool = False


def line_reader(path: PathLike, *, label: str, stream: str | None = None,
                nominal: Sequence[str] = (), id_field: str | None = None,
                limit: int | None = None, fmt: str | None = None,
                labels_later: bool = False) -> LineReader:
    """The :class:`LineReader` of a file: its header read now, raising as :func:`iter_file`
    does (whose parameters these are)."""
    path = Path(path)
    iter_file(path, label=label, stream=stream, nominal=nominal, id_field=id_field, limit=0,
              fmt=fmt)  # the checks of its arguments and of the header, at the call
    fmt = _detect_format(path, fmt)
    with contextlib.closing(_lines(path)) as lines:
        schema = _HEADER_READERS[fmt](lines, path, label, id_field,
                                     frozenset((nominal,) if isinstance(nominal, str) else nominal))
    if labels_later:
        schema = dataclasses.replace(schema, labels_later=True)
    return LineReader(schema, stream or default_stream(path), path.name, limit,
                      _bulk(path, limit))


def line_blocks(reader: LineReader) -> Any:
    """The block reader of ``reader``'s file, for :func:`read_lines`, when :func:`iter_file`
    would read the file with one (else None)."""
    return _block_reader(reader.schema) if reader.bulk else None


def read_lines(reader: LineReader, lines: Sequence[tuple[int, bytes]], blocks: Any = None,
               ) -> Iterable[Example | LabelOnly | Rejected]:
    """The items of some lines of ``reader``'s file, ``(line number from 1, the line's bytes
    without its end)``, as :func:`iter_file` reads them: the header's lines skipped, a byte
    order mark at the start of line 1 dropped; a Rejected record's position is the caller's.
    ``blocks``: the file's block reader (:func:`line_blocks`), or None for the row parser.

    >>> reader = line_reader(packaged_elec_path(), label="target")
    >>> [type(i).__name__ for i in read_lines(reader, [(1, b"feat_1,feat_2"), (2, b"oops")])]
    ['Rejected']
    """
    lines = [(n, raw[len(codecs.BOM_UTF8):] if n == 1 and raw.startswith(codecs.BOM_UTF8)
              else raw) for n, raw in lines]
    if blocks is not None:
        return _read_block(blocks, lines, reader.schema, reader.stream, reader.name)
    return _read_batch(lines, reader.schema, reader.stream, reader.name)

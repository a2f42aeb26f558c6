"""Data lines read a block at a time by a compiled reader: pyarrow's CSV reader, orjson.

A file's lines of plain numbers, the bulk of most streams, are handed to pyarrow's CSV reader
many at once: it splits them at their commas and reads every feature as a float in compiled
code, and each example is a :class:`~foldstream.operators.records.features.BlockExample`, a
reference to its row of the block's array (its dict of features is made only if a stage reads
it; the batcher joins a batch's rows into one array). Every other line goes to the row parser
of :mod:`.files`, which reads it (and rejects it, saying why) as always, so each line keeps the
fate the row parser gives it: the same values, or the same reason.

The block reader takes a line only where it reads it exactly as the row parser does:

- the block is handed to pyarrow only if it holds no byte the row parser reads otherwise than
  as a plain separated value: no quote, no carriage return, and in ARFF none of ``?``, ``{``,
  ``%`` and ``'``; no byte order mark at its start (pyarrow would drop it); no line longer than
  ``csv.field_size_limit()`` (the row parser hands such a line to the csv module);
- pyarrow must read all of the block: a line of the wrong width, a blank line, a value that is
  no number to it, text that is not UTF-8 make it fail. Then the line it names (or the first
  line holding an avoided byte) goes to the row parser, and the lines before and after it are
  tried again as blocks of their own (the two halves, when no line is named); a piece of fewer
  than ``_FEW`` lines goes to the row parser;
- of the lines it reads, one goes to the row parser if a feature is not finite, or its label
  or id is one the row parser would reject; the others are examples. A number pyarrow reads is
  the float Python reads in its text (both round correctly), and any text Python does not read
  as a number pyarrow does not either, or reads as no finite float (``nan(1)``).

JSON Lines are read a block at a time too, by orjson, the parser the row parser uses
(:func:`~foldstream.connectors.rows.parse_json`): a JSON row names its own fields, in its own
order, with types of its own, so the block reader parses each line on its own, then takes the
rows of a block at once (:class:`JsonBlockReader`), again only where it reads them exactly as
the row parser does:

- a line is parsed by orjson only if it is ASCII and holds no backslash (no escape, no byte
  order mark, no text whose decoding is in doubt), so it gives the value
  :func:`~foldstream.connectors.rows.parse_json` gives; a line orjson refuses goes to the row
  parser;
- the row must be an object whose keys are those of most of the block's objects, in their order
  (one key twice reads as one key in both readers, the same parser), the label and the id
  among them and at least one feature besides;
- its label and id are read by the row parser's own functions (a float label or id must be
  below 2**53, where orjson and json read the same integer), and every feature must be a JSON
  number (never a boolean, a string, null, an array or an object), finite, and below 2**53 in
  magnitude, where a float reads the same whether the number was written as an integer
  (``-0`` is the integer 0, as for the row parser) or not.

tests/test_blocks.py compares the two readers on random and hostile files, line by line.
"""

from __future__ import annotations

import collections
import csv
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from foldstream.connectors.rows import Reject, RowSchema, id_key, label_and_key
from foldstream.operators.records.base import Example, Rejected
from foldstream.operators.records.features import BlockExample, FeatureRows
from foldstream.operators.stages.delay import LabelOnly

__all__ = ["BlockReader", "JsonBlockReader", "block_reader"]

Item = Example | LabelOnly | Rejected
Lines = Sequence[tuple[int, bytes]]
#: Bytes that keep a block from pyarrow, per format: what the row parser reads otherwise.
_AVOID = {"csv": (b'"', b"\r"), "arff": (b'"', b"\r", b"'", b"?", b"{", b"%")}
_BOM = b"\xef\xbb\xbf"
_FEW = 8  # a piece of a block this short that pyarrow cannot read goes to the row parser
_ROW = re.compile(r"Row #(\d+)")


class BlockReader:
    """Reads blocks of one file's data lines (see the module docstring); built by
    :func:`block_reader`.

    >>> schema = RowSchema("csv", "y", None, frozenset(), ("a", "y", "b"))
    >>> reader = block_reader(schema)
    >>> slow = lambda lines: [Rejected("s", "by the row parser", l.decode(), f"f:{n}")
    ...                       for n, l in lines]
    >>> lines = [(n, b"3, v ,4e0") for n in range(2, 40)]
    >>> lines[20:22] = [(22, b"x,u,2"), (23, b"1,,2")]
    >>> items = list(reader.read(lines, "s", "f", slow))
    >>> [i.location for i in items if isinstance(i, Rejected)]
    ['f:22', 'f:23']
    >>> items[0]
    Example(stream='s', x={'a': 3.0, 'b': 4.0}, y='v', key=None, location='f:2')
    """

    def __init__(self, schema: RowSchema):
        import pyarrow as pa
        import pyarrow.csv as pacsv

        layout = schema.numeric_columns
        assert layout is not None and schema.fmt in _AVOID
        self._pacsv = pacsv
        self.schema = schema
        self.names = layout.names
        self.avoid = _AVOID[schema.fmt]
        self.limit = csv.field_size_limit()
        columns = [f"c{i}" for i in range(layout.width)]
        self.label = columns[layout.label]
        self.id = None if layout.id is None else columns[layout.id]
        self.features = [c for c in columns if c != self.label and c != self.id]
        types = {c: pa.float64() for c in self.features}
        types[self.label] = pa.dictionary(pa.int32(), pa.string())  # few labels, many rows
        if self.id is not None:
            types[self.id] = pa.string()
        self.read_options = pacsv.ReadOptions(column_names=columns, use_threads=False,
                                              block_size=1 << 26)
        self.parse_options = pacsv.ParseOptions(
            delimiter=",", quote_char=False, double_quote=False, escape_char=False,
            newlines_in_values=False, ignore_empty_lines=False)
        self.convert_options = pacsv.ConvertOptions(
            column_types=types, include_columns=columns, null_values=[], true_values=[],
            false_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False)

    def read(self, lines: Lines, stream: str, name: str,
             slow: Callable[[Lines], list[Item]]) -> Iterator[Item]:
        """The items of ``lines`` (``(line number, bytes without the line end)``, data lines
        only), in order, as ``slow`` (the row parser) gives them; ``slow`` reads the lines that
        this reader does not. A Rejected record's position is the caller's to set.

        Each example is made when it is asked for, so that, as with the row parser, a consumer
        that drops it leaves nothing for the garbage collector to go over (a block's examples
        made at once and kept a while cost it more than reading them)."""
        todo = [lines]
        while todo:
            piece = todo.pop()
            if len(piece) < _FEW:
                yield from slow(piece)
                continue
            table, bad = self._table(piece)
            if table is not None:
                yield from self._items(piece, table, stream, name, slow)
                continue
            # read the lines before the bad one (or the first half), then the rest
            cut = len(piece) // 2 if bad is None else bad
            rest = piece[cut + 1:] if bad is not None else piece[cut:]
            todo.append(rest)
            if bad is not None:
                todo.append(piece[cut:cut + 1])
            todo.append(piece[:cut])

    def _table(self, lines: Lines) -> tuple[Any, int | None]:
        """pyarrow's table of ``lines``, or (None, the index of a line it names as bad)."""
        raws = [raw for _, raw in lines]
        lengths = list(map(len, raws))
        if max(lengths) > self.limit:
            return None, next(i for i, size in enumerate(lengths) if size > self.limit)
        block = b"\n".join(raws)
        if block.startswith(_BOM):
            return None, 0
        found = [at for at in map(block.find, self.avoid) if at >= 0]
        if found:  # the first line that holds one
            return None, block.count(b"\n", 0, min(found))
        try:
            table = self._pacsv.read_csv(self._pa_buffer(block), self.read_options,
                                         self.parse_options, self.convert_options)
        except Exception as exc:  # ArrowInvalid: a line it cannot read; it says which, mostly
            found = _ROW.search(str(exc))
            row = int(found[1]) - 1 if found else -1
            return None, (row if 0 <= row < len(lines) else None)
        if table.num_rows != len(lines):
            return None, None
        return table, None

    @functools.cached_property
    def _pa_buffer(self) -> Callable[[bytes], Any]:
        import pyarrow as pa

        return pa.py_buffer

    def _items(self, lines: Lines, table: Any, stream: str, name: str,
               slow: Callable[[Lines], list[Item]]) -> Iterator[Item]:
        matrix = np.empty((len(lines), len(self.features)))
        for j, column in enumerate(self.features):
            matrix[:, j] = table.column(column).to_numpy()
        good = np.isfinite(matrix).all(axis=1)
        labels = self._labels(table.column(self.label), good)
        keys: Iterable[Any] = itertools.repeat(None)
        if self.id is not None:
            keys = self._keys(table.column(self.id).to_pylist(), good)
        block, prefix = FeatureRows(matrix, self.names), f"{name}:"
        for index, (line, ok, label, key) in enumerate(zip(lines, good.tolist(), labels, keys)):
            if ok:
                yield BlockExample(stream, block, index, label, key, prefix + str(line[0]))
            else:
                yield from slow([line])

    def _labels(self, column: Any, good: np.ndarray) -> list[str | None]:
        """The labels of a dictionary-encoded column as the row parser takes them (stripped,
        declared); ``good`` turns False where it would not take one."""
        allowed = self.schema.categories.get(self.schema.label)
        labels: list[str | None] = []
        done = 0
        for chunk in column.chunks:
            taken = []
            for text in chunk.dictionary.to_pylist():
                label = text.strip()
                taken.append(label if label and (allowed is None or label in allowed) else None)
            codes = chunk.indices.to_numpy()
            labels += np.array(taken, dtype=object)[codes].tolist()
            if None in taken:
                good[done:done + len(codes)] &= np.array([t is not None for t in taken])[codes]
            done += len(codes)
        return labels

    def _keys(self, raw: list[str], good: np.ndarray) -> list[int | str | None]:
        keys: list[int | str | None] = []
        for i, text in enumerate(raw):
            try:
                keys.append(id_key(text, self.schema))
            except Reject:
                keys.append(None)
                good[i] = False
        return keys


_WIDE = 2.0 ** 53  # below it, a number reads as the same float written as an integer or not
_INT_FLOAT = frozenset({int, float})


class JsonBlockReader:
    """Reads blocks of a JSON Lines file's lines (see the module docstring); built by
    :func:`block_reader`. Its :meth:`read` is :meth:`BlockReader.read`'s.

    >>> reader = block_reader(RowSchema("jsonl", "y", None, frozenset()))
    >>> slow = lambda lines: [Rejected("s", "by the row parser", l.decode(), f"f:{n}")
    ...                       for n, l in lines]
    >>> lines = [(1, b'{"a": 1, "y": "u", "b": -0.5}'), (2, b'{"b": 1, "y": "u", "a": 2}'),
    ...          (3, b'{"a": true, "y": "u", "b": 2}'), (4, b'{"a": 3, "y": 2.0, "b": -0}')]
    >>> items = list(reader.read(lines, "s", "f", slow))
    >>> [type(i).__name__ for i in items]
    ['BlockExample', 'Rejected', 'Rejected', 'BlockExample']
    >>> items[3]
    Example(stream='s', x={'a': 3.0, 'b': 0.0}, y=2, key=None, location='f:4')
    """

    def __init__(self, schema: RowSchema):
        import orjson

        assert schema.fmt == "jsonl" and not schema.text_features and not schema.labels_later
        self._loads = orjson.loads
        self.schema = schema

    def read(self, lines: Lines, stream: str, name: str,
             slow: Callable[[Lines], list[Item]]) -> Iterator[Item]:
        """The items of ``lines``, in order, as ``slow`` (the row parser) gives them; ``slow``
        reads the lines that this reader does not (see :meth:`BlockReader.read`)."""
        rows, names, good = self._rows(lines)
        if names is None:
            yield from slow(lines)
            return
        count = len(rows)
        matrix = np.fromiter(itertools.chain.from_iterable(map(dict.values, rows)),
                             np.float64, count * len(names)).reshape(count, len(names))
        fine = (np.isfinite(matrix) & (np.abs(matrix) < _WIDE)).all(axis=1).tolist()
        block, prefix = FeatureRows(matrix, names), f"{name}:"
        index = 0
        for line, taken in zip(lines, good):
            if taken is None or not fine[index]:
                yield from slow([line])
            else:
                yield BlockExample(stream, block, index, taken[0], taken[1],
                                   prefix + str(line[0]))
            if taken is not None:
                index += 1

    def _rows(self, lines: Lines) -> tuple[list[dict[str, Any]], tuple[str, ...] | None,
                                           list[tuple[Any, Any] | None]]:
        """The feature dicts of the lines this reader may take (label and id taken out), their
        features' names (None: no line is taken), and per line its (label, key), or None
        where the line is the row parser's."""
        schema, loads = self.schema, self._loads
        raws = [raw for _, raw in lines]
        joined = b"\n".join(raws)
        if joined.isascii() and b"\\" not in joined:
            try:
                values: list[Any] = list(map(loads, raws))
            except Exception:  # a line orjson refuses: parse them one by one
                values = [self._load(raw) for raw in raws]
        else:
            values = [self._load(raw) if raw.isascii() and b"\\" not in raw else None
                      for raw in raws]
        keys = [tuple(v) if type(v) is dict else None for v in values]
        counts = collections.Counter(keys)
        counts.pop(None, None)
        layout = max(counts, key=counts.__getitem__) if counts else None  # the first, in a tie
        label, id_field = schema.label, schema.id_field
        if layout is None or label not in layout or (id_field is not None
                                                     and id_field not in layout):
            return [], None, []
        names = tuple(k for k in layout if k != label and k != id_field)
        if not names:
            return [], None, []
        rows: list[dict[str, Any]] = []
        good: list[tuple[Any, Any] | None] = []
        for value, key in zip(values, keys):
            if key != layout:
                good.append(None)
                continue
            taken = self._label_key(value)
            if taken is not None:
                del value[label]
                if id_field is not None:
                    del value[id_field]
                rows.append(value)
            good.append(taken)
        kinds = set(map(type, itertools.chain.from_iterable(map(dict.values, rows))))
        if not kinds <= _INT_FLOAT:  # a boolean, a string, null...: those lines are the row parser's
            numbers = [set(map(type, row.values())) <= _INT_FLOAT for row in rows]
            at = 0
            for i, taken in enumerate(good):
                if taken is not None:
                    if not numbers[at]:
                        good[i] = None
                    at += 1
            rows = [row for row, ok in zip(rows, numbers) if ok]
        return rows, names, good

    def _load(self, raw: bytes) -> Any:
        try:
            return self._loads(raw)
        except Exception:
            return None

    def _label_key(self, row: dict[str, Any]) -> tuple[Any, Any] | None:
        """The row's label and key as the row parser reads them, or None if it would reject
        them or if orjson might read them otherwise than json (a float of 2**53 or more)."""
        schema = self.schema
        for name in (schema.label, schema.id_field):
            value = row.get(name) if name is not None else None
            if type(value) is float and not -_WIDE < value < _WIDE:
                return None
        try:
            return label_and_key(row, schema)
        except Reject:
            return None


def block_reader(schema: RowSchema) -> BlockReader | JsonBlockReader | None:
    """The :class:`BlockReader` of a CSV or ARFF file whose features are all numbers (and whose
    labels come with their rows), the :class:`JsonBlockReader` of a JSON Lines file without
    nominal features or delayed labels; None for any other file, whose lines the row parser
    reads.

    >>> block_reader(RowSchema("csv", "y", None, frozenset({"c"}), ("c", "y"))) is None
    True
    >>> type(block_reader(RowSchema("jsonl", "y", None, frozenset()))).__name__
    'JsonBlockReader'
    """
    if schema.fmt == "jsonl":
        if schema.text_features or schema.labels_later:
            return None
        return JsonBlockReader(schema)
    layout = schema.numeric_columns
    if layout is None or schema.fmt not in _AVOID or not layout.names:
        return None
    return BlockReader(schema)

"""CSV and ARFF data lines read a block at a time by a compiled reader (pyarrow's CSV reader).

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

tests/test_blocks.py compares the two readers on random and hostile files, line by line.
JSON Lines is not read here: a JSON row names its own fields, in its own order, with types of
its own (an integer label, a float id), which a table of columns does not keep.
"""

from __future__ import annotations

import csv
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from foldstream.connectors.rows import Reject, RowSchema, id_key
from foldstream.operators.records.base import Example, Rejected
from foldstream.operators.records.features import BlockExample, FeatureRows
from foldstream.operators.stages.delay import LabelOnly

__all__ = ["BlockReader", "block_reader"]

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


def block_reader(schema: RowSchema) -> BlockReader | None:
    """The :class:`BlockReader` of a CSV or ARFF file whose features are all numbers (and whose
    labels come with their rows); None for any other file, whose lines the row parser reads.

    >>> block_reader(RowSchema("csv", "y", None, frozenset({"c"}), ("c", "y"))) is None
    True
    """
    layout = schema.numeric_columns
    if layout is None or schema.fmt not in _AVOID or not layout.names:
        return None
    return BlockReader(schema)

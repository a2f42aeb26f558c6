"""Numeric features held as rows of one float array, made into dicts only when read.

A file read a block at a time (``connectors/blocks.py``) has its features in a float64 array
already. Making each example's ``dict`` of features costs more than reading the row did, and
the evaluation path needs none of them when the learners take arrays (MOA's bridge) or read no
features at all (the no-change learner). So a block's examples keep a reference to their row
(:class:`BlockExample`), the batcher joins the rows of a batch into one array
(:func:`batch_features`), and the batch's ``xs`` is a :class:`FeatureRows`: a sequence of dicts
equal to the one the row parser's examples would give, made on first read and shared by every
fold of the batch. Nothing of an output record depends on which of the two a batch holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from foldstream.operators.records.base import Example, Label


class FeatureRows(Sequence):
    """Rows of numeric features: ``array`` (n x d, float64) and the features' ``names``; read
    as a sequence of ``dict`` (name -> float), made once, on first read.

    >>> rows = FeatureRows(np.array([[1.0, 2.0], [3.0, 4.5]]), ("a", "b"))
    >>> len(rows), rows[1], rows[:1]
    (2, {'a': 3.0, 'b': 4.5}, [{'a': 1.0, 'b': 2.0}])
    >>> rows == [{"a": 1.0, "b": 2.0}, {"a": 3.0, "b": 4.5}]
    True

    It pickles as its array (the dicts are made again where it is read).
    """

    __slots__ = ("array", "names", "_dicts")

    def __init__(self, array: np.ndarray, names: tuple[str, ...]):
        self.array = array
        self.names = names
        self._dicts: list[dict[str, float]] | None = None

    def row(self, index: int) -> dict[str, float]:
        """Row ``index`` as a dict, made now (:attr:`dicts` makes them all at once)."""
        return dict(zip(self.names, self.array[index].tolist()))

    @property
    def dicts(self) -> list[dict[str, float]]:
        """The rows as dicts (made on the first call, then kept)."""
        if self._dicts is None:
            names = self.names
            self._dicts = [dict(zip(names, row)) for row in self.array.tolist()]
        return self._dicts

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, index: Any) -> Any:
        return self.dicts[index]

    def __iter__(self):
        return iter(self.dicts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (FeatureRows, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # a sequence compared by its rows, as a list is

    def __repr__(self) -> str:
        return repr(self.dicts)

    def __reduce__(self) -> tuple:
        return FeatureRows, (self.array, self.names)


class BlockExample(Example):
    """An :class:`~foldstream.operators.records.base.Example` whose features are row ``index``
    of ``block`` (a :class:`FeatureRows` of a file's block); ``x`` makes their dict when read.

    It compares, prints and pickles as the plain example it stands for:

    >>> block = FeatureRows(np.array([[1.0, 2.0], [3.0, 4.0]]), ("a", "b"))
    >>> e = BlockExample("s", block, 1, "u", None, "f:3")
    >>> e
    Example(stream='s', x={'a': 3.0, 'b': 4.0}, y='u', key=None, location='f:3')
    >>> e == Example("s", {"a": 3.0, "b": 4.0}, "u", None, "f:3")
    True
    """

    __slots__ = ("block", "index")

    def __init__(self, stream: str, block: FeatureRows, index: int, y: Label,
                 key: int | str | None, location: str | None):
        self.stream = stream
        self.block = block
        self.index = index
        self.y = y
        self.key = key
        self.location = location

    @property
    def x(self) -> dict[str, float]:  # type: ignore[override]
        return self.block.row(self.index)

    def plain(self) -> Example:
        """The plain example: the same values, its features as a dict."""
        return Example(self.stream, self.x, self.y, self.key, self.location)

    def __repr__(self) -> str:
        return repr(self.plain())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Example):
            return self.plain() == (other.plain() if isinstance(other, BlockExample) else other)
        return NotImplemented

    __hash__ = None

    def __reduce__(self) -> tuple:
        return Example, (self.stream, self.x, self.y, self.key, self.location)


def as_dicts(xs: list) -> list[dict]:
    """What the batcher gathered (:func:`batch_features`), each entry as its dict of features.

    >>> block = FeatureRows(np.array([[1.0]]), ("a",))
    >>> as_dicts([BlockExample("s", block, 0, 0, None, None), {"a": 9.0}])
    [{'a': 1.0}, {'a': 9.0}]
    """
    return [x.x if type(x) is BlockExample else x for x in xs]


def batch_features(xs: list) -> list[dict] | FeatureRows:
    """A batch's features from what the batcher gathered for it: each example's ``x``, or for
    an example of a block (:class:`BlockExample`) the example itself. All of blocks with the
    same features: their rows joined into one :class:`FeatureRows`; else a list of dicts.

    >>> block = FeatureRows(np.array([[1.0], [2.0], [3.0]]), ("a",))
    >>> rows = batch_features([BlockExample("s", block, i, 0, None, None) for i in (1, 2)])
    >>> type(rows).__name__, rows.array.tolist()
    ('FeatureRows', [[2.0], [3.0]])
    >>> batch_features([BlockExample("s", block, 0, 0, None, None), {"a": 9.0}])
    [{'a': 1.0}, {'a': 9.0}]
    """
    if not xs or type(xs[0]) is not BlockExample:
        return as_dicts(xs)
    names = xs[0].block.names
    pieces: list[np.ndarray] = []
    block, first, last = None, 0, 0
    for x in xs:
        if type(x) is not BlockExample:
            return as_dicts(xs)
        if x.block is block and x.index == last:
            last += 1
            continue
        if x.block.names != names:
            return as_dicts(xs)
        if block is not None:
            pieces.append(block.array[first:last])
        block, first, last = x.block, x.index, x.index + 1
    pieces.append(block.array[first:last])
    return FeatureRows(pieces[0].copy() if len(pieces) == 1 else np.concatenate(pieces), names)


def float_rows(xs: list) -> list | FeatureRows:
    """``xs``, a batch's feature dicts, as one :class:`FeatureRows` when that loses nothing:
    every dict with the same names in the same order and every value a ``float`` (no ``int``,
    no subclass), so that the dicts made from the array again equal them, value for value and
    name for name in order. Else ``xs`` as it is.

    For a batch that crosses between processes: an array pickles in a fraction of the space and
    time of its dicts, and MOA's bridge takes it as it is.

    >>> rows = float_rows([{"a": 1.0, "b": -0.0}, {"a": 2.5, "b": 3.0}])
    >>> type(rows).__name__, rows.array.tolist(), rows == [{"a": 1.0, "b": -0.0},
    ...                                                    {"a": 2.5, "b": 3.0}]
    ('FeatureRows', [[1.0, -0.0], [2.5, 3.0]], True)
    >>> [type(float_rows(xs)).__name__ for xs in ([{"a": 1.0}, {"a": 1}],
    ...                                           [{"a": 1.0, "b": 2.0}, {"b": 2.0, "a": 1.0}],
    ...                                           [{"a": 1.0}, {"a": 1.0, "b": 2.0}], [])]
    ['list', 'list', 'list', 'list']
    """
    if not xs or type(xs[0]) is not dict:
        return xs
    names = tuple(xs[0])
    values, types = [], set()
    for x in xs:
        if type(x) is not dict or tuple(x) != names:
            return xs
        row = list(x.values())
        types.update(map(type, row))
        values.append(row)
    if types - {float}:
        return xs
    return FeatureRows(np.array(values, dtype=np.float64).reshape(len(xs), len(names)), names)

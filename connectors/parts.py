"""Records larger than a Kafka message: written in ``part`` records, put together again by readers.

A Kafka producer refuses a message over its ``max.request.size`` (and a broker one over the
topic's ``max.message.bytes``), and a Flink job whose sink is refused fails as a whole: the
last reports and the summary of a run with many classes times folds were lost that way. So every
message a run writes to Kafka goes through :func:`kafka_messages`:

* a record that fits (its UTF-8 bytes, its key's and :data:`MESSAGE_OVERHEAD` within the limit)
  is one message, its value the record's bytes unchanged;
* a larger one becomes consecutive ``part`` records (docs/method.md §10), each a message with
  the same key (so the same partition, in order)::

      {"schema":1,"type":"part","stream":"s","of":"measures","position":1000,
       "sha256":"<of the whole record>","bytes":123456,"index":0,"count":3,"data":"{\\"schema\\":1,..."}

  ``data`` holds a slice of the record's JSON text; the slices of ``index`` 0 to ``count - 1``,
  joined, are the record's exact bytes, whose SHA-256 is ``sha256``.

Parts rather than a short record saying what was dropped: a dashboard or ``foldstream watch``
wants every number of every report, and a record put together from its parts is byte for byte
what a file sink holds. :class:`Assembler` is the one reader of parts, used by every reader of
records (:class:`foldstream.job.tools.records.RecordReader`); a part whose record never completes
is reported, not dropped silently (:meth:`Assembler.incomplete`).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from foldstream.operators.records.base import SCHEMA_VERSION, dumps

#: Bytes a Kafka message needs besides its key and value, counted generously: the producer
#: checks ``max.request.size`` against the record batch that would carry it alone (61 bytes of
#: batch header, at most 21 of record header, no headers are sent).
MESSAGE_OVERHEAD = 256

#: The smallest limit that still leaves room for the data of a part (checked at start).
MIN_LIMIT = MESSAGE_OVERHEAD + 1024

#: How many records at most are waiting for their other parts in a reader; an older one is
#: reported incomplete when a new one would exceed it (a following reader never ends).
MAX_PENDING = 64

_PART = "part"


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def fits(key: str, value: str, limit: int) -> bool:
    """Whether a message of this key and value is within ``limit`` bytes.

    >>> fits("s", "x" * 100, 400), fits("s", "x" * 200, 400)
    (True, False)
    """
    return utf8_len(key) + utf8_len(value) + MESSAGE_OVERHEAD <= limit


def check_limit(limit: int) -> int:
    """``limit`` when a part fits in it, else ``ValueError`` naming the smallest."""
    if limit < MIN_LIMIT:
        raise ValueError(f"a Kafka message limit of {limit} bytes leaves no room for a record; "
                         f"at least {MIN_LIMIT}")
    return limit


def _escaped_len(text: str) -> int:
    """UTF-8 bytes of ``text`` inside a JSON string (without the quotes)."""
    return utf8_len(json.dumps(text, ensure_ascii=False)) - 2


def _slices(text: str, budget: int) -> list[str]:
    """``text`` cut between characters into slices of at most ``budget`` escaped bytes each."""
    out, start = [], 0
    while start < len(text):
        size = min(budget, len(text) - start)
        while True:
            piece = text[start:start + size]
            cost = _escaped_len(piece)
            if cost <= budget:
                break
            size = max(1, min(size - 1, size * budget // cost))
        out.append(piece)
        start += size
    return out


def split(text: str, record: dict[str, Any], key: str, limit: int) -> list[str]:
    """The ``part`` records (as JSON text) of the record ``text`` (decoded: ``record``), each a
    message within ``limit`` bytes with ``key``; ``[text]`` when it fits as it is.

    >>> text = '{"schema":1,"type":"summary","stream":"s","position":9,"note":"' + "a" * 3000 + '"}'
    >>> parts = split(text, json.loads(text), "s", 1400)
    >>> len(parts), all(fits("s", p, 1400) for p in parts)
    (4, True)
    >>> "".join(json.loads(p)["data"] for p in parts) == text
    True
    >>> split('{"type":"alarm"}', {}, "s", 1400)
    ['{"type":"alarm"}']
    """
    if fits(key, text, limit):
        return [text]
    whole = text.encode("utf-8")
    head = {"schema": SCHEMA_VERSION, "type": _PART, "stream": record.get("stream"),
            "of": record.get("type"), "position": record.get("position"),
            "sha256": hashlib.sha256(whole).hexdigest(), "bytes": len(whole)}
    # The skeleton with the largest index and count a part could need, and empty data.
    skeleton = dumps({**head, "index": len(whole), "count": len(whole), "data": ""})
    budget = limit - MESSAGE_OVERHEAD - utf8_len(key) - utf8_len(skeleton)
    if budget < 1:
        raise ValueError(f"a Kafka message limit of {limit} bytes leaves no room for the data "
                         f"of a part (key {key!r})")
    slices = _slices(text, budget)
    return [dumps({**head, "index": i, "count": len(slices), "data": piece})
            for i, piece in enumerate(slices)]


def kafka_messages(text: str, limit: int) -> list[tuple[str, str]]:
    """The ``(key, value)`` messages that carry the record ``text``: the key is its stream
    (empty when it has none), the value the record itself or, over ``limit``, its parts.

    >>> kafka_messages('{"schema":1,"type":"alarm","stream":"s"}', 2000)
    [('s', '{"schema":1,"type":"alarm","stream":"s"}')]
    """
    record = json.loads(text)
    key = record.get("stream") or ""
    return [(key, value) for value in split(text, record, key, limit)]


@dataclass
class _Pending:
    head: dict[str, Any]
    count: int
    data: dict[int, str] = field(default_factory=dict)
    where: str = ""

    def describe(self) -> str:
        h = self.head
        return (f"{h.get('of')} record (stream {h.get('stream')!r}, position "
                f"{h.get('position')!r}, sha256 {str(h.get('sha256'))[:12]}...) in {self.count} "
                f"parts: {len(self.data)} arrived, from {self.where}")


class Assembler:
    """Puts records written in parts together again, whatever else comes between them.

    :meth:`take` gets every ``part`` record read, and returns the whole record's JSON text once
    its last part has come. A part seen twice (an at-least-once replay) counts once.

    Examples
    --------
    >>> text = '{"schema":1,"type":"measures","stream":"s","position":1,"v":"' + "é" * 2000 + '"}'
    >>> parts = [json.loads(p) for p in split(text, json.loads(text), "s", 1500)]
    >>> assembler = Assembler()
    >>> [assembler.take(p, f"t@0:{i}") for i, p in enumerate(parts[:-1] + parts[:1])]
    [None, None, None, None]
    >>> assembler.take(parts[-1], "t@0:9") == text, assembler.incomplete()
    (True, [])
    >>> assembler.take(parts[0], "t@0:10"); assembler.incomplete()  # doctest: +ELLIPSIS
    ["measures record (stream 's', position 1, sha256 ...) in 4 parts: 1 arrived, from t@0:10"]
    """

    def __init__(self, max_pending: int = MAX_PENDING) -> None:
        self.max_pending = max_pending
        self._pending: OrderedDict[tuple, _Pending] = OrderedDict()
        self._dropped: list[str] = []

    @staticmethod
    def is_part(record: Any) -> bool:
        return isinstance(record, dict) and record.get("type") == _PART

    def take(self, part: dict[str, Any], where: str) -> str | None:
        """Add one part (read at ``where``); the whole record's text when it is complete.

        Raises ``ValueError`` for a part that is not well formed, or whose record, put
        together, does not have its ``sha256``.
        """
        try:
            index, count, data = part["index"], part["count"], part["data"]
            ident = (part["stream"], part["sha256"], part["bytes"], count)
        except (KeyError, TypeError):
            raise ValueError("a part record without stream, sha256, bytes, index, count "
                             "and data") from None
        if not (isinstance(index, int) and isinstance(count, int) and isinstance(data, str)
                and 0 <= index < count):
            raise ValueError(f"a part record with index {index!r} of count {count!r}")
        pending = self._pending.get(ident)
        if pending is None:
            head = {k: part.get(k) for k in ("stream", "of", "position", "sha256")}
            pending = self._pending[ident] = _Pending(head, count, where=where)
            while len(self._pending) > self.max_pending:
                self._dropped.append(self._pending.popitem(last=False)[1].describe())
        pending.data.setdefault(index, data)
        if len(pending.data) < count:
            return None
        del self._pending[ident]
        text = "".join(pending.data[i] for i in range(count))
        if hashlib.sha256(text.encode("utf-8")).hexdigest() != part["sha256"]:
            raise ValueError(f"{pending.describe()}: put together, it does not have its sha256")
        return text

    def incomplete(self) -> list[str]:
        """Descriptions of the records whose parts did not all come (forgotten since, or still
        waiting): a reader that stops reports them."""
        out = self._dropped + [p.describe() for p in self._pending.values()]
        self._dropped, self._pending = [], OrderedDict()
        return out

    def evicted(self) -> list[str]:
        """Records given up while reading (more than ``max_pending`` waiting), once each."""
        out, self._dropped = self._dropped, []
        return out

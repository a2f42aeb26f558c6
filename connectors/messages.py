"""Kafka messages to examples (docs/method.md §1): the key names the stream, the value holds rows.

A value is one flat JSON object (a row: features plus the label field) or a JSON array of them.
Each row goes through the same checks as a JSON Lines file, so a record is rejected for the same
reasons, with the same words, whichever way it arrives.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

from foldstream.connectors.rows import Reject, RowSchema, json_object, json_type, parse_json, to_example
from foldstream.operators.records import Example, Rejected


class MessageParser:
    """Turns ``(key, value)`` messages into examples and rejections.

    Parameters
    ----------
    label, nominal, id_field
        As for JSON Lines files.
    stream
        The stream of messages without a key; ``None``: such a message is rejected.
    streams
        If given, the only stream names accepted; a message keyed otherwise is rejected.
    labels_later
        Delayed labels (docs/method.md §13; needs ``id_field``): a row without the label field
        is an example without its label (``y`` is ``None``); a later row with its id and the
        label is its label (the delay fan-out joins them).

    Examples
    --------
    >>> parse = MessageParser(label="y")
    >>> [type(r).__name__ for r in parse(b"s1", b'[{"a": 1, "y": "u"}, {"a": 2}]', "t@0")]
    ['Example', 'Rejected']
    >>> parse(None, b'{"a": 1, "y": "u"}', "t@1")[0].reason
    'message t@1 has no key: the key names the stream'
    """

    def __init__(self, *, label: str, nominal: Sequence[str] = (), id_field: str | None = None,
                 stream: str | None = None, streams: Collection[str] | None = None,
                 labels_later: bool = False):
        self._schema = RowSchema("jsonl", label, id_field, frozenset(nominal),
                                 labels_later=labels_later)
        self._stream = stream
        self._streams = frozenset(streams) if streams is not None else None

    def __call__(self, key: bytes | str | None, value: bytes | str | None,
                 location: str) -> list[Example | Rejected]:
        raw = value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else (value or "")
        try:
            stream = self._stream_of(key, location)
        except Reject as error:
            return [Rejected(None, str(error), raw, location)]
        try:
            rows = self._rows(value, location)
        except Reject as error:
            return [Rejected(stream, str(error), raw, location)]
        out: list[Example | Rejected] = []
        for i, row in enumerate(rows):
            where = location if len(rows) == 1 else f"{location}[{i}]"
            try:
                out.append(to_example(json_object(row), self._schema, stream, where))
            except Reject as error:
                text = json.dumps(row, ensure_ascii=False) if len(rows) > 1 else raw
                out.append(Rejected(stream, f"message {where}: {error}", text, where))
        return out

    def _stream_of(self, key: bytes | str | None, location: str) -> str:
        if isinstance(key, bytes):
            try:
                key = key.decode("utf-8")
            except UnicodeDecodeError:
                raise Reject(f"message {location}: the key is not valid UTF-8") from None
        if not key:
            if self._stream is None:
                raise Reject(f"message {location} has no key: the key names the stream")
            return self._stream
        if self._streams is not None and key not in self._streams:
            raise Reject(f"message {location}: unknown stream {key!r} "
                          f"(source.streams: {', '.join(sorted(self._streams))})")
        return key

    @staticmethod
    def _rows(value: bytes | str | None, location: str) -> list:
        if value is None:
            raise Reject(f"message {location} has no value")
        try:
            text = value.decode("utf-8") if isinstance(value, bytes) else value
        except UnicodeDecodeError:
            raise Reject(f"message {location}: not valid UTF-8") from None
        try:
            data = parse_json(text)
        except Reject as error:
            raise Reject(f"message {location}: {error}") from None
        if isinstance(data, list):
            if not data:
                raise Reject(f"message {location}: an empty array holds no example")
            return data
        if isinstance(data, dict):
            return [data]
        raise Reject(f"message {location}: expected a JSON object or an array of objects, "
                      f"got {json_type(data)}")

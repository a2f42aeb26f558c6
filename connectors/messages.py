"""Kafka messages to examples (docs/method.md §1): the key names the stream, the value holds rows.

A value is one flat JSON object (a row: features plus the label field) or a JSON array of them.
Each row goes through the same checks as a JSON Lines file, so a record is rejected for the same
reasons, with the same words, whichever way it arrives. A parser never raises for what a message
holds: whatever Python raises on a message or a row (a 5,000-digit number, deep nesting, an
error no check foresaw) makes a rejected record, so one message never ends a job (and would not
end it again after a restart).

Delayed labels (docs/method.md §13) add label rows: on the input topic a row with the id and the
label joins the example with that id (:class:`MessageParser` with ``labels_later``); on
``source.labels_topic`` every row is a label (:class:`LabelParser`, a
:class:`~foldstream.operators.stages.delay.LabelOnly`), and :class:`ByTopic` sends each message to the
parser of its topic.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

from foldstream.connectors.rows import (Reject, RowSchema, json_object, json_type, parse_json,
                                       to_example, to_item, unexpected)
from foldstream.operators.stages.delay import LabelOnly
from foldstream.operators.records.base import Example, Rejected


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

    def _item(self, row: dict, stream: str, where: str) -> Example | LabelOnly:
        """One row's item, or :class:`~foldstream.connectors.rows.Reject`."""
        return to_item(row, self._schema, stream, where)

    def __call__(self, key: bytes | str | None, value: bytes | str | None,
                 location: str) -> list[Example | LabelOnly | Rejected]:
        """The message's items and rejections; it never raises for what a message holds
        (a record rejected for an error no check foresaw says so:
        :func:`~foldstream.connectors.rows.unexpected`)."""
        try:
            stream = self._stream_of(key, location)
        except Exception as error:  # Reject, or anything else
            return [Rejected(None, _why(error, location), _raw(value), location)]
        try:
            rows = self._rows(value, location)
        except Exception as error:
            return [Rejected(stream, _why(error, location), _raw(value), location)]
        out: list[Example | LabelOnly | Rejected] = []
        for i, row in enumerate(rows):
            where = location if len(rows) == 1 else f"{location}[{i}]"
            try:
                out.append(self._item(json_object(row), stream, where))
            except Exception as error:
                out.append(Rejected(stream, f"message {where}: {_reason(error)}",
                                    _row_text(row) if len(rows) > 1 else _raw(value), where))
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


def _raw(value: bytes | str | None) -> str:
    """A message's value as text for its dead letter (only a rejected message needs it)."""
    return value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) \
        else value if isinstance(value, str) else ""


def _reason(error: Exception) -> str:
    return str(error) if isinstance(error, Reject) else unexpected(error)


def _why(error: Exception, location: str) -> str:
    """A message-level reason: a :class:`Reject` names the message itself."""
    return str(error) if isinstance(error, Reject) else f"message {location}: {unexpected(error)}"


def _row_text(row) -> str:
    """One row of a message's array, as JSON text for its dead letter."""
    try:
        return json.dumps(row, ensure_ascii=False)
    except Exception:  # e.g. nested too deeply to write back
        return f"(a JSON {type(row).__name__} nested too deeply to write back)"


class LabelParser(MessageParser):
    """Turns the messages of ``source.labels_topic`` (docs/method.md §13) into label events:
    each row's id and label make a :class:`~foldstream.operators.stages.delay.LabelOnly` (its other
    fields are ignored); a row without either is rejected. Keys name streams as for
    :class:`MessageParser`.

    Examples
    --------
    >>> parse = LabelParser(label="y", id_field="id")
    >>> parse(b"s1", b'{"id": 7, "y": "u", "note": "ignored"}', "labels/0@3")
    [LabelOnly(stream='s1', key=7, y='u', location='labels/0@3', simulated=False, not_example=None)]
    >>> parse(b"s1", b'{"id": 8}', "labels/0@4")[0].reason
    "message labels/0@4: label field 'y': missing"
    >>> parse(b"s1", b'{"y": "u"}', "labels/0@5")[0].reason
    "message labels/0@5: id field 'id': missing"
    """

    def __init__(self, *, label: str, id_field: str, stream: str | None = None,
                 streams: Collection[str] | None = None):
        super().__init__(label=label, id_field=id_field, stream=stream, streams=streams)
        self._fields = (id_field, label)

    def _item(self, row: dict, stream: str, where: str) -> LabelOnly:
        example = to_example({k: row[k] for k in self._fields if k in row}, self._schema,
                             stream, where)
        return LabelOnly(stream, example.key, example.y, where)


class ByTopic:
    """Parses each message with the parser of its topic: ``parsers[topic]``, else ``default``.

    The topic is the ``location``'s prefix before ``/`` (the Flink job's locations read
    ``topic/partition@offset``; a Kafka topic name holds no ``/``).

    >>> parse = ByTopic(MessageParser(label="y", id_field="id", labels_later=True),
    ...                 {"labels": LabelParser(label="y", id_field="id")})
    >>> [type(item).__name__ for item in parse(b"s", b'{"id": 1, "a": 2}', "examples/0@0")
    ...  + parse(b"s", b'{"id": 1, "y": "u"}', "labels/0@0")]
    ['Example', 'LabelOnly']
    """

    def __init__(self, default: MessageParser, parsers: dict[str, MessageParser]):
        self.default = default
        self.parsers = dict(parsers)

    def __call__(self, key: bytes | str | None, value: bytes | str | None,
                 location: str) -> list[Example | LabelOnly | Rejected]:
        parser = self.parsers.get(location.split("/", 1)[0], self.default)
        return parser(key, value, location)

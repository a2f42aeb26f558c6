"""Where output records go: a JSON Lines file, standard output, or a list (docs/method.md §10).

Every sink takes the plain ``dict`` records of :mod:`foldstream.operators.records` and writes
``dumps(record)``, so the bytes are decided in one place whatever the sink.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from foldstream.operators.records import dumps


class Sink:
    """Base of the sinks: ``write(record)``, ``close()``, and use as a context manager."""

    closed: bool = False

    def write(self, record: dict[str, Any]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.closed = True

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError(f"write to a closed {type(self).__name__}")

    def __enter__(self) -> Sink:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class JsonLinesSink(Sink):
    """Append records to a JSON Lines file, one ``dumps(record)`` per line.

    Parameters
    ----------
    path : str or os.PathLike
        The file; missing parent directories are created. An existing file is replaced, or
        appended to with ``append``.
    """

    def __init__(self, path: str | os.PathLike[str], append: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # newline="\n": the same bytes on every platform.
        self._file = self.path.open("a" if append else "w", encoding="utf-8", newline="\n")

    def write(self, record: dict[str, Any]) -> None:
        self._check_open()
        self._file.write(dumps(record) + "\n")

    def flush(self) -> None:
        """Push buffered lines to the file, e.g. so that a reader tailing it sees them."""
        self._file.flush()

    def close(self) -> None:
        """Flush and close the file; closing twice is harmless."""
        if not self.closed:
            self._file.close()
        super().close()


class StdoutSink(Sink):
    """Write records to standard output, one ``dumps(record)`` per line; ``close`` only flushes."""

    def write(self, record: dict[str, Any]) -> None:
        self._check_open()
        # Looked up at each write, not at construction, so redirection (and pytest's capsys)
        # made after the sink was built still applies.
        self._stream().write(dumps(record) + "\n")

    def close(self) -> None:
        if not self.closed:
            self._stream().flush()
        super().close()

    @staticmethod
    def _stream() -> TextIO:
        return sys.stdout


class DeadLetterSink(Sink):
    """The dead-letter file: a rejected record that cannot be written is counted, never fatal.

    Each record is flushed as it comes (rejected records are rare, and a reader tailing the file
    sees them at once), so a failing disk shows at the record it fails on. :attr:`failed` counts
    the records lost that way and :attr:`error` keeps the first reason, for the run to report.

    >>> sink = DeadLetterSink("/dev/full")  # a device that refuses every write
    >>> sink.write({"type": "rejected", "reason": "no label"}); sink.close()
    >>> sink.failed, sink.error
    (1, 'No space left on device')
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.failed = 0
        self.error: str | None = None
        self._file = JsonLinesSink(path)

    def write(self, record: dict[str, Any]) -> None:
        self._check_open()
        try:
            self._file.write(record)
            self._file.flush()
        except OSError as error:
            self.failed += 1
            self.error = self.error or error.strerror or str(error)
            try:  # drop what the buffer still held (counted), and try the file afresh next time
                self._file.close()
            except OSError:
                pass
            self._file = JsonLinesSink(self.path, append=True)

    def close(self) -> None:
        if not self.closed:
            try:
                self._file.close()
            except OSError:
                pass  # every record was flushed (or counted) at its write
        super().close()


class MemorySink(Sink):
    """Keep the records in :attr:`records`, for tests.

    Each record is stored as ``json.loads(dumps(record))``: exactly what a file sink would hold
    (numpy scalars turned into Python numbers, NaN into ``None``), and a record that cannot be
    serialised fails here as it would in production.
    """

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def write(self, record: dict[str, Any]) -> None:
        self._check_open()
        self.records.append(json.loads(dumps(record)))

"""Where output records go: a JSON Lines file, standard output, or a list (docs/method.md §10).

Every sink takes the plain ``dict`` records of :mod:`foldstream.operators.records.base` and writes
``dumps(record)``, so the bytes are decided in one place whatever the sink.

A file sink must never hurt what it is pointed at, nor leave a file a reader cannot trust:

* :func:`check_outputs` refuses, before anything is opened, an output that is an input or
  another output of the same run, comparing the files themselves (symbolic and hard links
  included), not the spellings; and an output a run could not create or write, with the
  system's reason;
* :class:`JsonLinesSink` locks its file for as long as it is open (a POSIX record lock, which
  the system drops when the process ends, however it ends: a crash leaves no stale lock), so a
  second run writing the same file is refused, naming the process that holds it, before it
  truncates anything;
* a write the system refuses (a full disk, an I/O error, a file size limit) raises
  :class:`SinkWriteFailed` after cutting the file back to its last whole line: every line of
  the file is a complete record.
"""

from __future__ import annotations

import errno
import io
import json
import logging
import os
import stat
import struct
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple, TextIO

from foldstream.operators.records.base import dumps

log = logging.getLogger(__name__)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no POSIX locks, files are not locked
    fcntl = None  # type: ignore[assignment]

#: Bytes a :class:`JsonLinesSink` gathers before it writes them (whole lines only): Python's
#: own buffer size, so that a reader tailing the file sees records as soon as it did before.
BUFFER_BYTES = io.DEFAULT_BUFFER_SIZE


class SinkUnavailable(ValueError):
    """A sink that cannot be used at start: it is an input or another output of the run, its
    location cannot be written, or another process is writing it. ``key`` is the configuration
    key naming it, when known."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key


class SinkWriteFailed(OSError):
    """The system refused a write to a sink (``strerror`` says why, ``filename`` which file);
    a regular file was cut back to its last whole line, and holds ``lines`` records (``None``
    for a device or standard output)."""

    lines: int | None = None


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


# ------------------------------------------------------------------------ checks at start
class Named(NamedTuple):
    """A file of a run and the configuration key that names it."""

    key: str
    path: str | os.PathLike[str]


def _identity(path: str | os.PathLike[str]) -> tuple:
    """What tells files apart: the device and inode of an existing file (whatever links lead
    to it), else the existing parent directory's and the name, else the normalised absolute
    path.

    >>> _identity("/") == _identity("/tmp/..")
    True
    >>> _identity("/tmp/new.jsonl") == _identity("/tmp/./x/../new.jsonl")
    True
    """
    target = Path(os.path.abspath(os.fspath(path)))
    try:
        found = target.stat()
        return found.st_dev, found.st_ino
    except OSError:
        pass
    target = target.resolve()  # links in the part that exists, and "..", resolved
    try:
        parent = target.parent.stat()
        return parent.st_dev, parent.st_ino, target.name
    except OSError:
        return (os.path.normcase(str(target)),)


def _is_device(path: str | os.PathLike[str]) -> bool:
    """A character device or a pipe (``/dev/null``, ``/dev/stdout``): several outputs may
    share one, nothing is stored there to be mixed."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def writable_reason(path: str | os.PathLike[str]) -> str | None:
    """Why a file could not be created or written at ``path``, in the system's words; ``None``
    when it could (nothing is created to find out).

    >>> writable_reason("/dev/null") is None
    True
    >>> writable_reason("/dev/null/x.jsonl")
    'Not a directory: /dev/null'
    """
    path = Path(path)
    if path.is_dir():
        return f"{os.strerror(errno.EISDIR)}; give a file name"
    if path.exists():
        where, mode = path, os.W_OK
    else:  # the nearest folder that exists must let us create the rest
        where = path.parent
        while not where.exists() and where != where.parent:
            where = where.parent
        if not where.is_dir():
            return f"{os.strerror(errno.ENOTDIR)}: {where}"
        mode = os.W_OK | os.X_OK
    if os.access(where, mode):
        return None
    read_only = getattr(os, "ST_RDONLY", 1)
    try:
        if os.statvfs(where).f_flag & read_only:
            return f"{os.strerror(errno.EROFS)}: {where}"
    except (OSError, AttributeError):
        pass
    return f"{os.strerror(errno.EACCES)}: {where}"


def check_outputs(outputs: Iterable[Named], inputs: Iterable[Named] = ()) -> None:
    """Raise :class:`SinkUnavailable` naming the key unless every output can be written and is
    neither an input nor another output (devices such as ``/dev/null`` may be shared).

    >>> source = [Named("source.path", "/tmp/./a.jsonl")]
    >>> try:
    ...     check_outputs([Named("sink.path", "/tmp/a.jsonl")], source)
    ... except SinkUnavailable as error:
    ...     print(error)
    sink.path: /tmp/a.jsonl is the file of source.path (/tmp/./a.jsonl): a run never ...
    >>> devices = [Named("sink.path", "/dev/null"), Named("sink.dead_letter_path", "/dev/null")]
    >>> check_outputs(devices)
    """
    inputs = [(named, _identity(named.path)) for named in inputs]
    seen: list[tuple[Named, tuple]] = []
    for named in outputs:
        identity = _identity(named.path)
        for source, other in inputs:
            if identity == other:
                raise SinkUnavailable(f"{named.path} is the file of {source.key} ({source.path}): "
                                      f"a run never writes over its input", named.key)
        if not _is_device(named.path):
            for earlier, other in seen:
                if identity == other:
                    raise SinkUnavailable(f"{named.path} is also {earlier.key} ({earlier.path}): "
                                          f"each output needs a file of its own", named.key)
        reason = writable_reason(named.path)
        if reason:
            raise SinkUnavailable(f"cannot write {named.path}: {reason}", named.key)
        seen.append((named, identity))


# ------------------------------------------------------------------------------ file locks
_FLOCK = "qqihh" if sys.platform == "darwin" else "hhqqi"  # struct flock's fields in order


def _holder(fd: int) -> int | None:
    """The process holding a POSIX lock on ``fd``'s file, as ``F_GETLK`` reports it."""
    try:
        probe = (0, 0, 0, fcntl.F_WRLCK, os.SEEK_SET) if sys.platform == "darwin" \
            else (fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        packed = struct.pack(_FLOCK, *probe)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, packed + bytes(32))
        fields = struct.unpack(_FLOCK, answer[:len(packed)])
    except (OSError, struct.error, AttributeError):
        return None
    kind, pid = (fields[3], fields[2]) if sys.platform == "darwin" else (fields[0], fields[4])
    return pid if kind != fcntl.F_UNLCK and pid > 0 else None


def _lock(fd: int, path: Path) -> None:
    """Lock a regular file for this process, or raise :class:`SinkUnavailable` naming the
    holder. The lock goes with the process: a crashed run leaves none behind."""
    if fcntl is None or not stat.S_ISREG(os.fstat(fd).st_mode):
        return
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno not in (errno.EACCES, errno.EAGAIN):
            return  # a file system without locks (some network mounts): write unlocked
        pid = _holder(fd)
        holder = f"process {pid}" if pid else "another process"
        raise SinkUnavailable(f"{path} is being written by {holder} (another foldstream run?); "
                              f"wait for it to end or choose another file") from None


# ------------------------------------------------------------------------------ the sinks
class JsonLinesSink(Sink):
    """Append records to a JSON Lines file, one ``dumps(record)`` per line.

    The file is locked while the sink is open, and a refused write leaves only whole lines
    (module docstring).

    Parameters
    ----------
    path : str or os.PathLike
        The file; missing parent directories are created. An existing file is replaced, or
        appended to with ``append``.

    Raises
    ------
    SinkUnavailable
        The file cannot be opened, or another process is writing it.
    """

    def __init__(self, path: str | os.PathLike[str], append: bool = False) -> None:
        self.path = Path(path)
        self.lines = 0  # whole lines written by this sink
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # O_APPEND: every write lands at the end, also after a cut (see _failed)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        except OSError as error:
            raise SinkUnavailable(f"cannot write {self.path}: {error.strerror}") from None
        try:
            _lock(self._fd, self.path)
            regular = stat.S_ISREG(os.fstat(self._fd).st_mode)
            if regular and not append:  # only once the lock is ours
                os.ftruncate(self._fd, 0)
            self._size = os.fstat(self._fd).st_size if regular else 0
        except BaseException:
            os.close(self._fd)
            raise

    def write(self, record: dict[str, Any]) -> None:
        self._check_open()
        line = (dumps(record) + "\n").encode("utf-8")
        self._pending.append(line)
        self._pending_bytes += len(line)
        if self._pending_bytes >= BUFFER_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the gathered lines, e.g. so that a reader tailing the file sees them.

        Raises :class:`SinkWriteFailed` when the system refuses the write, after cutting the
        file back to its last whole line."""
        if not self._pending or self.closed:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        self._pending_bytes = 0
        done = 0
        try:
            while done < len(data):
                wrote = os.write(self._fd, memoryview(data)[done:])
                if not wrote:  # a device that takes nothing more
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                done += wrote
        except OSError as error:
            self._failed(data, done, error)
        self._size += len(data)
        self.lines += data.count(b"\n")

    def _failed(self, data: bytes, done: int, error: OSError) -> None:
        """Keep the whole lines of ``data[:done]``, cut the rest off the file, and raise."""
        whole = data.rfind(b"\n", 0, done) + 1
        self._size += whole
        self.lines += data.count(b"\n", 0, whole)
        failed = SinkWriteFailed(error.errno, error.strerror or str(error), str(self.path))
        try:
            if stat.S_ISREG(os.fstat(self._fd).st_mode):
                os.ftruncate(self._fd, self._size)
                failed.lines = self.lines
        except OSError as cut:  # the message then says nothing of whole lines
            log.debug("%s: the partial line after the write failure could not be cut off: %s",
                      self.path, cut)
        raise failed from None

    def close(self) -> None:
        """Write what is gathered and close the file (its lock goes with it); closing twice
        is harmless. A refused write raises :class:`SinkWriteFailed` after the file is closed."""
        if self.closed:
            return
        try:
            self.flush()
        finally:
            os.close(self._fd)
            super().close()


class StdoutSink(Sink):
    """Write records to standard output, one ``dumps(record)`` per line; ``close`` only flushes.

    A closed pipe (``| head``) raises :class:`BrokenPipeError`, which the command line ends
    quietly on; any other refused write raises :class:`SinkWriteFailed`."""

    def write(self, record: dict[str, Any]) -> None:
        self._check_open()
        # Looked up at each write, not at construction, so redirection (and pytest's capsys)
        # made after the sink was built still applies.
        with _standard_output():
            self._stream().write(dumps(record) + "\n")

    def close(self) -> None:
        if not self.closed:
            with _standard_output():
                self._stream().flush()
        super().close()

    @staticmethod
    def _stream() -> TextIO:
        return sys.stdout


@contextmanager
def _standard_output() -> Iterator[None]:
    """Turn a refused write to standard output (not a closed pipe) into :class:`SinkWriteFailed`."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as error:
        raise SinkWriteFailed(error.errno, error.strerror or str(error),
                              "standard output") from None


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
        except OSError as error:  # the file is whole up to the record before: try the next
            self.failed += 1
            self.error = self.error or error.strerror or str(error)

    def close(self) -> None:
        if not self.closed:
            try:
                self._file.close()
            except OSError as error:  # every record was flushed (or counted) at its write
                log.debug("%s: closing failed: %s", self.path, error)
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

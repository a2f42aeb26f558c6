"""Where foldstream's log messages go and how many: the ``--log-level`` option of every command.

Why there are log messages at all: a few corners carry on after an error on purpose, because the
result does not depend on them (closing a Kafka client whose broker is gone, a broker that does
not describe a topic's settings so the producer's own limit stands, a dashboard source that is
read again after a failure). They are no errors to report, but someone setting up a cluster
wants to know they happened. Each module logs them through ``logging.getLogger(__name__)``
(every module is ``foldstream.*``, so they all fall under the one ``foldstream`` logger) at
DEBUG level, with the reason; this module is the one place that decides where they are shown.

A command line shows them on standard error, one line each, at the level the user chose with
``--log-level`` (:data:`DEFAULT_LEVEL`: only warnings and errors, so that by default nothing
more than before is printed). A traceback is shown only at ``DEBUG``: at any other level a
message logged with its exception is its line alone (the house rule: no traceback reaches a
user who did not ask for one).

>>> import io, logging
>>> out = io.StringIO()
>>> setup("info", stream=out)
>>> try:
...     1 / 0
... except ZeroDivisionError:
...     logging.getLogger("foldstream.example").info("gave up", exc_info=True)
>>> logging.getLogger("foldstream.example").debug("not shown at INFO")
>>> print(out.getvalue(), end="")
foldstream: INFO foldstream.example: gave up
>>> setup(DEFAULT_LEVEL)  # as a command leaves it
"""

from __future__ import annotations

import logging
import sys
from typing import IO

from foldstream.job.checks import check_choices
from foldstream.job.terminal import inert

#: the levels ``--log-level`` accepts (any case), quietest last
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DEFAULT_LEVEL = "WARNING"
#: the logger every module's ``logging.getLogger(__name__)`` falls under
ROOT = "foldstream"
FORMAT = "foldstream: %(levelname)s %(name)s: %(message)s"


class _Formatter(logging.Formatter):
    """One line per message; the exception's traceback too only when ``tracebacks``. A message
    may quote a path or a reason: it is shown through :func:`~foldstream.job.terminal.inert`."""

    def __init__(self, tracebacks: bool):
        super().__init__(FORMAT)
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        if self.tracebacks or not (record.exc_info or record.exc_text or record.stack_info):
            return inert(super().format(record), lines=True)
        bare = logging.makeLogRecord(record.__dict__)
        bare.exc_info = bare.exc_text = bare.stack_info = None
        return inert(super().format(bare), lines=True)


class _Handler(logging.StreamHandler):
    """The handler :func:`setup` installs (so that a second call replaces it, not adds one).

    Without a stream of its own it writes to whatever ``sys.stderr`` is when a message comes,
    not the one it was made with (a test's captured stream that is closed since)."""

    def __init__(self, stream: IO[str] | None = None):
        logging.Handler.__init__(self)
        self._stream = stream

    @property
    def stream(self) -> IO[str]:
        return sys.stderr if self._stream is None else self._stream

    @stream.setter
    def stream(self, value: IO[str]) -> None:  # StreamHandler.setStream
        self._stream = value


def level_name(text: str) -> str:
    """The level named by ``text`` in any case, for ``--log-level``.

    >>> level_name("debug")
    'DEBUG'
    >>> level_name("loud")
    Traceback (most recent call last):
    ...
    ValueError: unknown log level 'LOUD'; choose from DEBUG, INFO, WARNING, ERROR, CRITICAL
    """
    name = text.strip().upper()
    check_choices([name], LEVELS, "log level")
    return name


def setup(level: str = DEFAULT_LEVEL, stream: IO[str] | None = None) -> None:
    """Show the messages of the ``foldstream`` loggers at ``level`` and above on ``stream``
    (standard error by default), tracebacks only at ``DEBUG``. Calling it again replaces what
    an earlier call set up."""
    name = level_name(level)
    logger = logging.getLogger(ROOT)
    for handler in [h for h in logger.handlers if isinstance(h, _Handler)]:
        logger.removeHandler(handler)
    handler = _Handler(stream)
    handler.setFormatter(_Formatter(tracebacks=name == "DEBUG"))
    logger.addHandler(handler)
    logger.setLevel(name)

"""The exit codes of foldstream's commands, defined once.

``foldstream run`` and the cluster entry point (``job/engines/flink/main.py``) fail the same way
for the same cause, so that a script or an orchestrator (a Kubernetes job, ``docker compose``,
CI) can tell a mistake that no retry will fix from a run that failed on the way:

====  ============  ===========================================================================
code  name          meaning
====  ============  ===========================================================================
0     OK            done (a bounded input evaluated to its end; ``validate``: the file is valid)
1     FAILED        the command ran and failed: the job failed after it started (an error
                    inside it: one line names it, its traceback goes to a file the line
                    names), or ``schema --check`` found invalid records
2     UNUSABLE      nothing was run: a bad configuration or command line (the message names the
                    key), or a dependency that is not there (no Kafka broker answers at the
                    bootstrap servers, a topic is missing, no Java, no connector jars)
65    TOO_MANY      a stream passed ``evaluation.max_classes``: the run stopped there, its
                    records so far and an interrupted summary are written, the message names
                    the key (``EX_DATAERR`` of sysexits.h: the input is not what the
                    configuration allows)
74    WRITE_FAILED  the system refused a write to an output (a full disk, an I/O error, a file
                    size limit): the run stopped there, the message names the file and the
                    reason, and the file holds whole lines only (``EX_IOERR`` of sysexits.h)
130   INTERRUPTED   stopped by Ctrl-C (128 + SIGINT, as a shell reports it)
141   BROKEN_PIPE   the reader of standard output went away (``foldstream ... | head``):
                    stopped quietly (128 + SIGPIPE, what a shell reports for a command that
                    the closed pipe killed)
143   TERMINATED    stopped by SIGTERM (128 + SIGTERM: ``kill``, ``docker stop``, Kubernetes)
====  ============  ===========================================================================

An in-process run stopped by either signal ends the same way: the report in progress is
completed, a ``summary`` record with ``"interrupted": true`` is the last record, the files are
flushed; then it exits with 130 or 143.

>>> OK, FAILED, UNUSABLE, TOO_MANY, WRITE_FAILED, INTERRUPTED, BROKEN_PIPE, TERMINATED
(0, 1, 2, 65, 74, 130, 141, 143)
>>> for_signal(15)
143
"""

from __future__ import annotations

OK = 0
FAILED = 1
UNUSABLE = 2
TOO_MANY = 65
WRITE_FAILED = 74
INTERRUPTED = 130
BROKEN_PIPE = 141
TERMINATED = 143


def for_signal(signum: int) -> int:
    """The exit code of a run stopped by a signal: 128 + its number, as a shell reports it."""
    return 128 + int(signum)

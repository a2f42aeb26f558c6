"""PyFlink's JVM: its options, and its start beside the client's own start-up.

A local run waits about a second for PyFlink to start its JVM (the local mini-cluster's, or the
client's of a submission), and as long again for its own imports (PyFlink's DataStream API, the
job's modules) and the job's plans. The JVM starts in a process of its own, so
:func:`start_early` launches it from a thread as soon as a run knows it is a Flink run, and
the client imports and plans meanwhile; the first call of PyFlink's ``get_gateway()`` in the
client then finds it started (or waits for it on PyFlink's own lock). bench/README.md measures
the difference.

This module imports no PyFlink at import time: the thread does, so that the imports of the
thread and of the client overlap with the JVM's start rather than come before it.
"""

from __future__ import annotations

import os
import shutil
import threading

#: The options of the JVM that PyFlink starts here (the local mini-cluster, or the client of a
#: submission) when ``JVM_ARGS`` does not give them: Java's quick compiler only. The JVM of a
#: local job only moves the Python workers' bytes, and its optimising compiler spent more CPU
#: compiling that code than the code ever took: on 2 cores it took that time from the learners
#: (bench/README.md). A cluster's TaskManagers keep their own options.
LOCAL_JVM_ARGS = "-XX:TieredStopAtLevel=1"


def prepare() -> None:
    """Set what PyFlink reads from the environment when it starts its JVM and when a job
    starts: Python workers in separate processes (``_python_worker_execution_mode``; without
    it they run "loopback" inside the client and parallelism 2 uses one core), and
    :data:`LOCAL_JVM_ARGS` unless ``JVM_ARGS`` is set."""
    os.environ["_python_worker_execution_mode"] = "process"
    os.environ.setdefault("JVM_ARGS", LOCAL_JVM_ARGS)


def java_found() -> bool:
    """Whether there is a Java for PyFlink to start (``java`` on the PATH, or ``JAVA_HOME``)."""
    return shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME"))


def _start() -> None:
    try:
        from pyflink.java_gateway import get_gateway

        get_gateway()
    except BaseException:  # noqa: BLE001 - the client's own call raises it, with its context
        pass


def start_early() -> threading.Thread | None:
    """Start PyFlink's JVM in a daemon thread (after :func:`prepare`) and return the thread;
    ``None`` when there is no Java to start (the client's checks then say so, as before). A
    start that fails is left to the client's own ``get_gateway()``, which tries again and
    raises the error where the run reports it.
    """
    prepare()
    if not java_found():
        return None
    thread = threading.Thread(target=_start, name="foldstream-jvm-start", daemon=True)
    thread.start()
    return thread

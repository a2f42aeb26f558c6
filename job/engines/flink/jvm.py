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

**The JVM's classes, kept between runs.** The local JVM loads and verifies the classes of Flink,
Beam and their libraries before a job's first record, on every run. A ``foldstream run`` keeps
them in a class-data archive of Java's own (application class-data sharing, JDK 13 and later):
the first run's JVM writes the classes it loaded when it exits (:func:`prepare` with
``archive=True``; :func:`keep_classes` waits for it, checks the archive and keeps it in the
cache folder), and later runs map them (``-XX:SharedArchiveFile``). bench/README.md measures the
start with and without it. The archive's name carries a digest of what Java checks it against
(the ``java`` and the jars on PyFlink's class path), so a new Java or PyFlink writes a new one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

#: The options of the JVM that PyFlink starts here (the local mini-cluster, or the client of a
#: submission) when ``JVM_ARGS`` does not give them: Java's quick compiler only. The JVM of a
#: local job only moves the Python workers' bytes, and its optimising compiler spent more CPU
#: compiling that code than the code ever took: on 2 cores it took that time from the learners
#: (bench/README.md). A cluster's TaskManagers keep their own options.
LOCAL_JVM_ARGS = "-XX:TieredStopAtLevel=1"


#: Java's messages about its class-data archive (a line per class it leaves out when it writes
#: one, some 600) would reach the client's standard output, which may carry the records.
QUIET_ARCHIVE = "-Xlog:cds*=off"

_writing: Path | None = None  # the archive to keep that this process's JVM writes, into its part


def prepare(archive: bool = False) -> None:
    """Set what PyFlink reads from the environment when it starts its JVM and when a job
    starts: Python workers in separate processes (``_python_worker_execution_mode``; without
    it they run "loopback" inside the client and parallelism 2 uses one core), and
    :data:`LOCAL_JVM_ARGS` unless ``JVM_ARGS`` is set.

    ``archive``: also the JVM's class-data archive (:func:`archive_options`): for a process
    that calls :func:`keep_classes` after its run, before it exits (``foldstream run``).
    """
    os.environ["_python_worker_execution_mode"] = "process"
    if "JVM_ARGS" not in os.environ:
        os.environ["JVM_ARGS"] = " ".join([LOCAL_JVM_ARGS, *(archive_options() if archive else ())])


def _archive_key() -> str | None:
    """A digest of what Java checks a class-data archive against, or ``None`` without a Java
    or a PyFlink: the ``java`` that PyFlink starts and its JVM library, the jars of PyFlink's
    class path (path, size, time), the variables that change that path, and
    :data:`LOCAL_JVM_ARGS`. It finds them as PyFlink does, without PyFlink's own functions
    (:func:`_maps` uses those): they read Flink's YAML configuration three times, 70 ms of the
    run's start before the JVM's, and a ``env.java.home`` there only costs the archive."""
    import importlib.util

    spec = importlib.util.find_spec("pyflink")
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if spec is None or spec.origin is None or java is None or not os.path.isfile(java):
        return None
    java_file = Path(java).resolve()
    flink = Path(os.environ.get("FLINK_HOME") or Path(spec.origin).parent)
    files = [java_file, *java_file.parent.parent.glob("lib/server/libjvm.*"),
             *sorted(flink.glob("lib/*.jar")), *sorted(flink.glob("opt/flink-python*.jar"))]
    lines = [LOCAL_JVM_ARGS]
    for file in files:
        stat = file.stat()
        lines.append(f"{file} {stat.st_size} {stat.st_mtime_ns}")
    for name in ("FLINK_HOME", "FLINK_CONF_DIR", "FLINK_LIB_DIR", "FLINK_OPT_DIR",
                 "FLINK_ENV_JAVA_OPTS", "HADOOP_CLASSPATH", "HADOOP_CONF_DIR", "YARN_CONF_DIR",
                 "HBASE_CONF_DIR", "FLINK_TESTING"):
        lines.append(f"{name}={os.environ.get(name, '')}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def archive_path() -> Path | None:
    """Where the class-data archive of this Java and PyFlink is kept (in the cache folder,
    ``$FOLDSTREAM_CACHE`` or ``~/.cache/foldstream/jars``), or ``None`` when none can be: no
    Java, a JVM PyFlink does not start itself (``PYFLINK_GATEWAY_PORT``), not a POSIX system,
    or a folder whose name has a space (PyFlink splits ``JVM_ARGS`` at spaces)."""
    from foldstream.operators.downloads import default_cache_dir

    if os.name != "posix" or "PYFLINK_GATEWAY_PORT" in os.environ:
        return None
    try:
        key = _archive_key()
    except OSError:
        return None
    folder = default_cache_dir()
    if key is None or any(c.isspace() for c in str(folder)):
        return None
    return folder / f"flink-jvm-{key}.jsa"


def part_path(final: Path, pid: int | None = None) -> Path:
    """The file a JVM of process ``pid`` (this one by default) writes ``final`` into, renamed
    to ``final`` once checked (:func:`keep_classes`)."""
    return final.with_name(f"{final.name}.{os.getpid() if pid is None else pid}.part")


def archive_options() -> list[str]:
    """The JVM's options for its class-data archive: map it when it is kept, else write it when
    the JVM exits (into a file of this process's own, which :func:`keep_classes` checks and
    renames); none when there can be no archive (:func:`archive_path`)."""
    global _writing
    final = archive_path()
    if final is None:
        return []
    if final.is_file():
        return [f"-XX:SharedArchiveFile={final}", QUIET_ARCHIVE]
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        for stale in final.parent.glob("flink-jvm-*.part"):  # a JVM killed as it wrote
            if time.time() - stale.stat().st_mtime > 3600:
                stale.unlink(missing_ok=True)
    except OSError:
        return []
    _writing = final
    return [f"-XX:ArchiveClassesAtExit={part_path(final)}", QUIET_ARCHIVE]


def writes_archive() -> bool:
    """Whether this process's JVM writes the class-data archive when it exits."""
    return _writing is not None


def keep_classes(timeout_s: float = 120.0) -> Path | None:
    """After a run whose JVM writes the class-data archive (:func:`archive_options`): stop the
    JVM, wait for it to write the archive, check that Java maps it, and keep it for the next
    runs; return its path, or ``None`` (nothing written, or an archive Java refuses, which is
    deleted). PyFlink's JVM is gone afterwards: call it last, as the process ends."""
    import sys

    global _writing
    final, _writing = _writing, None
    gateway_module = sys.modules.get("pyflink.java_gateway")
    gateway = getattr(gateway_module, "_gateway", None)
    if final is None or gateway is None:
        return None
    part = part_path(final)
    try:
        pid = int(gateway.jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # noqa: BLE001 - a JVM gone already: its archive, if any, is not kept
        return None
    gateway.shutdown()  # the JVM's watch of the client fails and it exits, writing the archive
    deadline = time.monotonic() + timeout_s
    try:
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)
    except ChildProcessError:  # reaped already
        pass
    if not part.is_file():
        return None
    if not _maps(part):
        part.unlink(missing_ok=True)
        return None
    os.replace(part, final)
    for other in final.parent.glob("flink-jvm-*.jsa"):  # of an earlier Java or PyFlink
        if other != final:
            other.unlink(missing_ok=True)
    return final


def _maps(archive: Path) -> bool:
    """Whether Java starts with ``archive`` on PyFlink's class path, sharing required (an
    archive cut short would crash every later start: it is checked once, here)."""
    from pyflink.pyflink_gateway_server import (construct_flink_classpath,
                                                construct_hadoop_classpath,
                                                find_java_executable,
                                                prepare_environment_variables)

    env = dict(os.environ)
    prepare_environment_variables(env)
    classpath = os.pathsep.join([construct_flink_classpath(env), construct_hadoop_classpath(env)])
    command = [find_java_executable(), LOCAL_JVM_ARGS, "-Xshare:on",
               f"-XX:SharedArchiveFile={archive}", QUIET_ARCHIVE, f"-XX:ErrorFile={os.devnull}",
               "-cp", classpath, "-version"]
    try:
        return subprocess.run(command, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


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

"""This process's JVM for MOA's learners: the options it may start with, Java found, the Java
class of the batch path compiled, and the JVM started with MOA on its class path, once.

The JVM's options are data of a configuration (``engine.jvm_options``), and an option of the
JVM can run a command or load code: :data:`JVM_OPTION_RULES` is the allow-list
(docs/trust.md), and a JVM that could not start inside the process is tried in a child first
(:func:`check_jvm_starts`). JPype's JVM does not survive ``fork``: :func:`jvm_running` tells a
process that forks workers to spawn them instead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Sequence

from foldstream.operators.downloads import (
    JDK_INSTALL, MOA_SHA256, DependencyError, compiled_classes, ensure_moa_jar
)

DEFAULT_JVM_OPTIONS = ("-Xmx1g",)
FIXED_JVM_OPTIONS = ("-Xrs",)
"""What every JVM of foldstream starts with, whatever ``engine.jvm_options`` says: ``-Xrs``
leaves SIGINT and SIGTERM to Python (a JVM started in a process installs its own handlers,
which would end the process at once, past the run's stop: job/engines/stopping.py)."""
_SIZE = r"[1-9][0-9]{0,15}[kKmMgGtT]?"
#: What ``engine.jvm_options`` accepts: heap, stack and metaspace sizes, the garbage collector
#: and its threads (docs/trust.md). Nothing that names a file, a command, an agent or a class.
JVM_OPTION_RULES = (
    (rf"-X(mx|ms|mn|ss){_SIZE}", "-Xmx2g, -Xms, -Xmn, -Xss (sizes)"),
    (rf"-XX:(MaxHeapSize|InitialHeapSize|MinHeapSize|MaxNewSize|NewSize|ThreadStackSize|"
     rf"MaxMetaspaceSize|MetaspaceSize|ReservedCodeCacheSize|MaxDirectMemorySize|"
     rf"G1HeapRegionSize)={_SIZE}", "-XX:MaxHeapSize=... and the other -XX:...Size= sizes"),
    (r"-XX:(MaxRAMPercentage|InitialRAMPercentage|MinRAMPercentage)=[0-9]{1,3}(\.[0-9]{1,6})?",
     "-XX:MaxRAMPercentage=50 (and Initial, Min)"),
    (r"-XX:\+Use(G1|Parallel|Serial|Z|Shenandoah)GC", "-XX:+UseG1GC, Parallel, Serial, Z, "
                                                      "Shenandoah"),
    (r"-XX:(ParallelGCThreads|ConcGCThreads|ActiveProcessorCount|MaxGCPauseMillis|NewRatio|"
     r"SurvivorRatio)=[0-9]{1,9}", "-XX:ParallelGCThreads=2 (and ConcGCThreads, "
                                   "ActiveProcessorCount, MaxGCPauseMillis, NewRatio, "
                                   "SurvivorRatio)"),
)
JDK_HINT = f"MOA learners need {JDK_INSTALL}"
JAVA_SOURCE = (Path(__file__).parents[2] / "java" / "foldstream" / "moa"
               / "FoldLearner.java")
_lock = threading.Lock()
_java: Any = None  # the FoldLearner class once the JVM runs
_options: tuple[str, ...] | None = None  # set by configure_jvm before the JVM starts


def jvm_running() -> bool:
    """Whether this process has started its JVM (so a ``fork`` of it would inherit a JVM that
    cannot work there: spawn workers instead). Never imports JPype itself.

    >>> isinstance(jvm_running(), bool)
    True
    """
    jpype = sys.modules.get("jpype")
    return jpype is not None and bool(jpype.isJVMStarted())


class JvmOptionsError(ValueError):
    """``engine.jvm_options`` that foldstream refuses, or that the JVM cannot start with; the
    message starts with the key."""


def check_jvm_options(options: Sequence[str]) -> tuple[str, ...]:
    """``options`` if each is one :data:`JVM_OPTION_RULES` allows, else :class:`JvmOptionsError`
    naming the first that is not: an option of the JVM can run a command (``-XX:OnError=``),
    load code (``-javaagent:``, ``-agentpath:``) or read a file of more options
    (``-XX:Flags=``, ``@file``), and a configuration is data.

    >>> check_jvm_options(["-Xmx2g", "-Xss4m", "-XX:+UseParallelGC"])
    ('-Xmx2g', '-Xss4m', '-XX:+UseParallelGC')
    >>> check_jvm_options(["-Xmx2g", "-XX:OnOutOfMemoryError=touch x"])
    Traceback (most recent call last):
    foldstream.operators.learners.moa.jvm.JvmOptionsError: engine.jvm_options: '-XX:OnOutOfMemoryError=touch x' is not an option foldstream passes to the JVM (it takes only sizes and the garbage collector: -Xmx2g, -Xms, -Xmn, -Xss (sizes); -XX:MaxHeapSize=... and the other -XX:...Size= sizes; -XX:MaxRAMPercentage=50 (and Initial, Min); -XX:+UseG1GC, Parallel, Serial, Z, Shenandoah; -XX:ParallelGCThreads=2 (and ConcGCThreads, ActiveProcessorCount, MaxGCPauseMillis, NewRatio, SurvivorRatio); docs/trust.md)
    """
    for option in options:
        if not (isinstance(option, str)
                and any(re.fullmatch(rule, option) for rule, _ in JVM_OPTION_RULES)):
            allowed = "; ".join(words for _, words in JVM_OPTION_RULES)
            raise JvmOptionsError(f"engine.jvm_options: {option!r} is not an option foldstream "
                                  f"passes to the JVM (it takes only sizes and the garbage "
                                  f"collector: {allowed}; docs/trust.md)")
    return tuple(options)


_started_ok: dict[tuple[str, ...], str | None] = {}  # options: the JVM's reason it cannot start


def java_launcher() -> str | None:
    """The ``java`` beside the JVM library JPype loads (so a trial start tries that JVM), or
    None when there is no Java."""
    import jpype

    try:
        library = Path(jpype.getDefaultJVMPath())
    except jpype.JVMNotFoundException:
        return None
    for parent in library.parents:
        candidate = parent / "bin" / "java"
        if candidate.is_file():
            return str(candidate)
    return None


def check_jvm_starts(options: Sequence[str]) -> None:
    """Raise :class:`JvmOptionsError` with the JVM's reason unless a JVM starts with
    ``options`` (allowed ones, :func:`check_jvm_options`): tried once per process in a child
    ``java -version``, because a JVM that cannot start inside this process (a heap it cannot
    reserve, ``-Xmx1k``) ends the process from inside (its reason, on the child's standard
    output or error, becomes the message). No Java: nothing to try (the learners'
    check says what to install)."""
    options = FIXED_JVM_OPTIONS + check_jvm_options(options)
    if options not in _started_ok:
        java = java_launcher()
        if java is None:
            return
        env = {k: v for k, v in os.environ.items() if k != "JDK_JAVA_OPTIONS"}  # launcher only
        try:
            proc = subprocess.run([java, *options, "-version"], capture_output=True, text=True,
                                  env=env, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as error:
            _started_ok[options] = f"{java} -version: {error}"
        else:
            generic = ("Error occurred during initialization of VM",
                       "Error: Could not create the Java Virtual Machine.",
                       "Error: A fatal exception has occurred. Program will exit.")
            lines = [line.strip() for line in (proc.stdout + proc.stderr).splitlines()
                     if line.strip() and line.strip() not in generic]
            _started_ok[options] = None if proc.returncode == 0 else \
                ("; ".join(lines[-3:]) or f"exit status {proc.returncode}")
    reason = _started_ok[options]
    if reason is not None:
        raise JvmOptionsError(f"engine.jvm_options: the JVM cannot start with "
                              f"{' '.join(options[len(FIXED_JVM_OPTIONS):])}: {reason}")


def configure_jvm(options: Sequence[str]) -> None:
    """The options this process's JVM will start with, when a MOA learner first needs it
    (``engine.jvm_options``, set while the configuration is read, before its learners are
    checked); they win over a learner's own. Options foldstream refuses are a
    :class:`JvmOptionsError` (:func:`check_jvm_options`)."""
    global _options
    _options = check_jvm_options(options)


def ensure_classes(jar: Path, cache_dir: Path | None = None) -> Path:
    """Compile ``FoldLearner.java`` against ``jar`` once; return the folder of its classes."""
    return compiled_classes([JAVA_SOURCE], [jar], "foldstream-moa-classes", JDK_HINT,
                            key=MOA_SHA256, cache_dir=cache_dir)


def start_jvm(options: Sequence[str] = DEFAULT_JVM_OPTIONS) -> Any:
    """Start this process's JVM with MOA on its class path, once; return ``FoldLearner``.

    A later call with other ``options`` finds the JVM running and changes nothing (a JVM
    cannot be restarted in a process). Raises :class:`DependencyError` naming what to install
    when there is no Java, no JDK or no jar.
    """
    global _java
    with _lock:
        if _java is not None:
            return _java
        import jpype
        import jpype.imports  # noqa: F401 - Java packages as Python modules

        if not jpype.isJVMStarted():
            jar = ensure_moa_jar()
            classes = ensure_classes(jar)
            try:
                jvm = jpype.getDefaultJVMPath()
            except jpype.JVMNotFoundException:
                raise DependencyError(f"no Java found: {JDK_HINT}") from None
            chosen = _options if _options is not None else tuple(options)
            check_jvm_starts(chosen)  # refused options, or a JVM that would end this process
            jpype.startJVM(jvm, *FIXED_JVM_OPTIONS, *chosen,
                           classpath=[str(jar), str(classes)], convertStrings=True)
            # What MOA prints goes to stderr: stdout may be the sink of the records
            system = jpype.JClass("java.lang.System")
            system.setOut(system.err)
            if threading.current_thread() is not threading.main_thread():
                # The thread that starts the JVM is attached to it as a non-daemon thread, and
                # the JVM's shutdown at the interpreter's exit waits for those: started from a
                # thread of the caller's (a notebook's, a server's), the process would never
                # exit. Attached again as a daemon, it is not waited for.
                thread = jpype.JClass("java.lang.Thread")
                thread.detach()
                thread.attachAsDaemon()
        _java = jpype.JClass("foldstream.moa.FoldLearner")
        return _java

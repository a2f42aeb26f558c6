"""MOA's classifiers as foldstream learners, at Java speed (docs/method.md §17).

MOA (Bifet et al., https://moa.cms.waikato.ac.nz) is the field's reference catalogue of stream
classifiers, and its learners run an order of magnitude faster than river's. foldstream runs
them in the Python process through JPype: one JVM per process, started on first use.

* **The jar.** MOA 24.07's ``moa.jar`` travels inside the ``capymoa`` wheel on PyPI (capymoa
  itself needs numpy 2.2, which Flink's numpy pin forbids, so it is not installed): the wheel is
  downloaded and the jar copied out into ``$FOLDSTREAM_CACHE`` by :mod:`~foldstream.operators.downloads`,
  checked against :data:`MOA_SHA256`. MOA is GPL-3.0: it is fetched at run time, never shipped.
* **The boundary.** Crossing from Python to Java costs microseconds per call, more than MOA's
  Hoeffding tree spends on an example; so a fold's whole batch crosses at once: the features as
  one ``double[]`` (JPype copies a numpy buffer), the class codes and weights as ``int[]``. The
  Java side (``operators/java/foldstream/moa/FoldLearner.java``, compiled with the JDK's
  ``javac`` on first use and cached beside the jar) predicts then trains each example and hands
  the predictions back as one ``int[]``.
* **The header.** MOA learners read instances against a header: it is built from the stream's
  features as they appear. A feature whose first value is a number is numeric; one whose first
  value is text is nominal, its values in order of appearance (a MOA nominal attribute, so a
  tree splits on it as MOA's would). A missing feature (absent, or ``None``) is MOA's missing
  value. The class attribute's values are foldstream's classes in order of first appearance,
  so MOA's class index is foldstream's class code: a class that appears late is added to the
  header before the batch that carries it (MOA's learners grow their class counts as they see
  classes; a learner that sizes itself from the header at its first instance, such as
  ``functions.Perceptron``, meets later classes as an error, quarantined as below).
* **Semantics.** A fold's weight is the training instance's weight (MOA's
  ``EvaluatePrequentialCV`` does the same). A learner not trained yet, or with no votes, is not
  ready: a ``None`` prediction, scored wrong, as for river; otherwise the prediction is MOA's
  ``Utils.maxIndex`` of the votes (all-zero votes give the first class), as MOA's evaluators
  take it. A learner's random seed is MOA's ``setRandomSeed`` (MOA 24.07 keeps it off the
  command line): ``params: {seed: 7}`` sets it, the one parameter a MOA learner takes (a
  randomised design, ``meta.OzaBag``; a classifier that is not randomizable refuses it), and
  ``fold_seeds`` sets each fold's to :func:`~foldstream.operators.stats.weights.derive_seed` of that
  seed (MOA's default 1 without one) and the fold, as for river's ``seed``. A Java exception
  quarantines the replica as a Python one does (a ``learner_error`` record naming the Java
  class and message).
* **Nested.** A MOA classifier may also be the model of a parameter whose annotation names
  :class:`MoaClassifier`: the ``model`` of :class:`~foldstream.operators.learners.noise.NoiseFilter`
  (``{model: moa.classifiers.trees.HoeffdingTree, options: "-g 100", params: {seed: 3}}``,
  built by :func:`nested`), which keeps the batch path, one crossing per batch. River's own
  ensembles do not take one: they would cross per example and expect river's whole interface.
* **Processes.** JPype's JVM does not survive ``fork``: a process that forks workers after its
  JVM started must spawn them instead (:func:`jvm_running` tells; ``foldstream experiment``
  does so), and each worker starts its own JVM on first use.
* **State.** :class:`MoaClassifier` pickles by Java serialisation of its learner (MOA's
  classifiers are ``Serializable``): the in-process engine's snapshots and Flink's keyed state
  hold those bytes.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from operator import itemgetter
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from foldstream.operators.learners.fitting import scores
from foldstream.operators.records.base import error_text
from foldstream.operators.stats.weights import derive_seed
from foldstream.operators.downloads import (
    DependencyError, default_cache_dir, fetch, sha256, valid_jar
)

MOA_VERSION = "24.07"
MOA_WHEEL = "capymoa==0.15.1"
MOA_MEMBER = "capymoa/jar/moa.jar"
MOA_SHA256 = "e7d7c3d533a4800bf2581f820d2c1e9310d70ff40b52fc1a742793eceb89a660"
MOA_PACKAGE = "moa.classifiers."
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
MOA_SEED = 1  # MOA's default random seed, which fold_seeds derives each fold's from
JDK_HINT = ("MOA learners need a Java 17 JDK (java and javac): install it (Debian/Ubuntu: "
            "apt-get install openjdk-17-jdk-headless) or set JAVA_HOME")
JAVA_SOURCE = Path(__file__).parent / "java" / "foldstream" / "moa" / "FoldLearner.java"

_lock = threading.Lock()
_java: Any = None  # the FoldLearner class once the JVM runs
_options: tuple[str, ...] | None = None  # set by configure_jvm before the JVM starts
_last_rows: tuple | None = None  # (xs, feature names, rows) of the last batch encoded


def is_moa(model: str) -> bool:
    """Whether a learner's ``model`` names a MOA class (the one rule, for the configuration
    and the learner task).

    >>> is_moa("moa.classifiers.trees.HoeffdingTree"), is_moa("river.tree.HoeffdingTreeClassifier")
    (True, False)
    """
    return model.startswith("moa.")


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
    foldstream.operators.moa.JvmOptionsError: engine.jvm_options: '-XX:OnOutOfMemoryError=touch x' is not an option foldstream passes to the JVM (it takes only sizes and the garbage collector: -Xmx2g, -Xms, -Xmn, -Xss (sizes); -XX:MaxHeapSize=... and the other -XX:...Size= sizes; -XX:MaxRAMPercentage=50 (and Initial, Min); -XX:+UseG1GC, Parallel, Serial, Z, Shenandoah; -XX:ParallelGCThreads=2 (and ConcGCThreads, ActiveProcessorCount, MaxGCPauseMillis, NewRatio, SurvivorRatio); docs/trust.md)
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


def ensure_moa_jar(cache_dir: Path | None = None) -> Path:
    """Return the path of MOA's jar in the cache, downloading it on first use (sha256 checked)."""
    cache = default_cache_dir(cache_dir)
    target = cache / f"moa-{MOA_VERSION}.jar"
    if valid_jar(target) and sha256(target) == MOA_SHA256:
        return target
    fetch(MOA_WHEEL, {MOA_MEMBER: target})
    digest = sha256(target)
    if digest != MOA_SHA256:
        target.unlink(missing_ok=True)
        raise DependencyError(f"{MOA_MEMBER} of {MOA_WHEEL} has sha256 {digest}, expected "
                              f"{MOA_SHA256}; has the wheel changed?")
    return target


def _javac() -> str:
    home = os.environ.get("JAVA_HOME")
    candidates = [str(Path(home) / "bin" / "javac")] if home else []
    candidates.append(shutil.which("javac") or "")
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    raise DependencyError(f"no `javac` found: {JDK_HINT}")


def ensure_classes(jar: Path, cache_dir: Path | None = None) -> Path:
    """Compile ``FoldLearner.java`` against ``jar`` once; return the folder of its classes.

    The folder's name carries a hash of the source and the jar, so an edited source compiles
    again and nothing stale is loaded.
    """
    cache = default_cache_dir(cache_dir)
    source = JAVA_SOURCE.read_bytes()
    tag = hashlib.sha256(source + MOA_SHA256.encode()).hexdigest()[:16]
    target = cache / f"foldstream-moa-classes-{tag}"
    if (target / "foldstream" / "moa" / "FoldLearner.class").is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="foldstream-moa-classes-", dir=cache))
    cmd = [_javac(), "-nowarn", "-cp", str(jar), "-d", str(tmp), str(JAVA_SOURCE)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise DependencyError(f"javac failed on {JAVA_SOURCE.name}: {proc.stderr.strip()[-2000:]}")
    try:
        os.replace(tmp, target)
    except OSError:  # another process got there first
        shutil.rmtree(tmp, ignore_errors=True)
    return target


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


def cli_string(model: str, options: str = "") -> str:
    """MOA's command-line form of a learner: its class and its options.

    >>> cli_string("moa.classifiers.trees.HoeffdingTree", "-g 100")
    'moa.classifiers.trees.HoeffdingTree -g 100'
    """
    return f"{model} {options}".strip()


def split_learner(text: str) -> tuple[str, str]:
    """``"trees.HoeffdingTree -g 100"`` (MOA's own form) as (model, options) of foldstream.

    >>> split_learner("trees.HoeffdingTree -g 100")
    ('moa.classifiers.trees.HoeffdingTree', '-g 100')
    >>> split_learner("moa.classifiers.bayes.NaiveBayes")
    ('moa.classifiers.bayes.NaiveBayes', '')
    """
    name, _, options = text.strip().partition(" ")
    if not name.startswith(MOA_PACKAGE):
        name = MOA_PACKAGE + name
    return name, options.strip()


def java_error(error: Any) -> str:
    """A Java exception (through JPype) as ``"java.Class: first line of its message"``, and
    its root cause's the same way when it has one (MOA wraps an option's error so).

    >>> java_error(ValueError("no"))
    'ValueError: no'
    """
    if not hasattr(error, "getClass"):
        return f"{type(error).__name__}: {error}"

    def line(e: Any) -> str:
        message = e.getMessage()
        first = "" if message is None else str(message).strip().splitlines()[0]
        return f"{e.getClass().getName()}: {first}".rstrip(": ")

    root = error
    while root.getCause() is not None and root.getCause() is not root:
        root = root.getCause()
    return line(error) if root is error else f"{line(error)} ({line(root)})"


def check_config(model: str, options: str, params: dict, args: list) -> None:
    """A MOA learner of the configuration: MOA's class and options (see :func:`check_learner`);
    of river's ``params`` only ``seed`` (an integer: MOA's random seed), no ``args``; a missing
    Java or jar as a configuration error.

    >>> check_config("moa.classifiers.bayes.NaiveBayes", "", {"a": 1}, [])
    Traceback (most recent call last):
    ValueError: params.a: a MOA classifier takes MOA's options ("-g 100") and a `seed`, not params
    >>> check_config("moa.classifiers.meta.OzaBag", "", {"seed": "x"}, [])
    Traceback (most recent call last):
    ValueError: params.seed: MOA's random seed is an integer, got 'x'
    """
    unknown = [key for key in params if key != "seed"]
    if unknown or args:
        where = f"params.{unknown[0]}" if unknown else "args"
        raise ValueError(f"{where}: a MOA classifier takes MOA's options (\"-g 100\") and a "
                         f"`seed`, not {'params' if unknown else 'args'}")
    seed = params.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"params.seed: MOA's random seed is an integer, got {seed!r}")
    try:
        check_learner(model, options, seeded=seed is not None)
    except (DependencyError, ValueError) as error:
        raise ValueError(f"model {model}: {error}") from None


#: MOA's forms of an option value that name a stored object rather than a class: ``file:PATH``
#: (a file MOA deserialises when the learner is prepared) and ``inmem:NAME``.
OBJECT_REFERENCE = re.compile(r"(?:^|[\s(,'\"])((?:file|inmem):\S*)", re.IGNORECASE)


def check_learner(model: str, options: str = "", seeded: bool = False) -> None:
    """Raise ``ValueError`` with MOA's message unless ``model`` is a MOA classifier class and
    ``options`` parse with MOA's own option parser (``validate`` calls it; starts the JVM);
    ``seeded`` (a ``seed`` is given): unless the classifier is randomizable too.

    Refused as well, at any depth of the options (``-l (meta.OzaBag -l file:m.ser)``): a
    value that names a stored object (:data:`OBJECT_REFERENCE`: MOA would run Java's
    deserialiser on the file), an option that names a file, a MOA task, and a learner whose
    votes are not class scores (a regressor; ``FoldLearner.refusal`` in Java).

    >>> check_learner("moa.classifiers.meta.OzaBag", "-l (meta.OzaBag -l file:/tmp/m.ser)")
    Traceback (most recent call last):
    ValueError: options: 'file:/tmp/m.ser' names a stored Java object, which MOA would deserialise (code could run): foldstream refuses it; give the learner by its class and options (docs/trust.md)
    """
    if not model.startswith(MOA_PACKAGE):
        raise ValueError(f"a MOA classifier's class starts with {MOA_PACKAGE!r}: "
                         f"{MOA_PACKAGE}trees.HoeffdingTree, not {model!r}")
    found = OBJECT_REFERENCE.search(cli_string(model, options))
    if found:
        raise ValueError(f"options: {found.group(1).rstrip(')')!r} names a stored Java object, "
                         f"which MOA would deserialise (code could run): foldstream refuses "
                         f"it; give the learner by its class and options (docs/trust.md)")
    FoldLearner = start_jvm()
    import jpype

    try:
        classifier = jpype.JClass("java.lang.Class").forName(model)
    except jpype.JException:
        raise ValueError(f"no MOA class {model} (MOA {MOA_VERSION})") from None
    base = jpype.JClass("moa.classifiers.Classifier")
    if not base.class_.isAssignableFrom(classifier):
        raise ValueError(f"{model} is not a MOA classifier (moa.classifiers.Classifier)")
    try:
        parsed = FoldLearner.parse(cli_string(model, options))
    except jpype.JException as error:
        if str(error.getClass().getName()) == "java.lang.IllegalArgumentException" \
                and error.getCause() is None:  # FoldLearner.refusal's reason
            reason = str(error.getMessage())
            where = f"options {options!r}: " if reason.startswith("option ") else ""
            raise ValueError(f"{where}{reason}") from None
        raise ValueError(f"options {options!r}: MOA says {java_error(error)}") from None
    if seeded and not parsed.isRandomizable():
        raise ValueError(f"params.seed: {model} is not randomizable (MOA's isRandomizable() is "
                         f"false): a seed would change nothing; leave it out")


def _as_error(text: str) -> Exception:
    """``"Type: message"`` as an exception of that type's name, for ``error_text``.

    >>> from foldstream.operators.records.base import error_text
    >>> error_text(_as_error("java.lang.IllegalStateException: no"))
    'java.lang.IllegalStateException: no'
    """
    name, _, message = text.partition(": ")
    return type(name, (RuntimeError,), {})(message)


class MoaClassifier:
    """A MOA classifier with river's learner interface, plus a batch path.

    ``predict_one``/``learn_one`` serve the delayed-label path; the learner task drives
    :meth:`run_batch` otherwise: one crossing into Java per batch.
    """

    seed: int | None = None  # (a class default: states pickled before it existed lack it)
    #: Whether :meth:`run` keeps each predicted example's scores (its votes divided by their
    #: sum, as MOA's AUC evaluators take them) in :attr:`scores`: set by a learner task when
    #: a score-based measure is configured.
    keep_scores: bool = False
    scores: list[float] | None = None  # the last run's: its examples' rows, one flat list

    def __init__(self, model: str, options: str = "", seed_fold: int | None = None,
                 jvm_options: Sequence[str] = (), seed: int | None = None):
        self.model = model
        self.options = options
        self.seed_fold = seed_fold  # the fold whose seed is derived (fold_seeds), or None
        self.jvm_options = tuple(jvm_options)  # () : DEFAULT_JVM_OPTIONS
        self.seed = seed  # MOA's random seed (None: MOA's own, unless seed_fold derives one)
        self.classes: list[Any] = []
        self.features: dict[str, int] = {}
        self.nominal: dict[int, dict[str, int]] = {}  # feature index -> value -> code
        self._learner: Any = None

    # -- construction ------------------------------------------------------------------------
    def _java(self) -> Any:
        if self._learner is None:
            FoldLearner = start_jvm(self.jvm_options or DEFAULT_JVM_OPTIONS)
            cli = cli_string(self.model, self.options)
            seed = self.random_seed()
            import jpype

            self._learner = FoldLearner.create(cli, None if seed is None else jpype.JInt(seed))
        return self._learner

    def random_seed(self) -> int | None:
        """The seed MOA's ``setRandomSeed`` gets: ``seed`` (MOA's default 1 without one)
        derived for ``seed_fold`` when there is one, else ``seed`` itself (None: not set).

        >>> MoaClassifier("m").random_seed(), MoaClassifier("m", seed=7).random_seed()
        (None, 7)
        >>> MoaClassifier("m", seed_fold=2).random_seed() == derive_seed(MOA_SEED, 2)
        True
        """
        if self.seed_fold is None:
            return self.seed
        return derive_seed(MOA_SEED if self.seed is None else self.seed, self.seed_fold)

    def clone(self) -> "MoaClassifier":
        return MoaClassifier(self.model, self.options, self.seed_fold, self.jvm_options,
                             self.seed)

    def __repr__(self) -> str:
        return f"MoaClassifier({cli_string(self.model, self.options)!r})"

    # -- the header --------------------------------------------------------------------------
    def _add_classes(self, classes: Sequence[Any]) -> None:
        learner = self._java()
        for label in classes[len(self.classes):]:
            self.classes.append(label)
            learner.addClass(str(label))

    def _encode(self, xs: Sequence[dict]) -> tuple[np.ndarray, int | None, str | None]:
        """The rows of ``xs`` as MOA values (NaN: missing); the header grows first.

        Returns the rows and, for a value MOA's header cannot take, the index of its example
        and the reason (the rows stop there)."""
        rows = self._numeric_rows(xs)
        if rows is not None:
            return rows, None, None
        learner = self._java()
        nominal = self.nominal
        if xs and not nominal and all(v is not None and not isinstance(v, str)
                                      for v in xs[0].values()):
            # the first example's new features, all numbers, as the loop below would add
            # them; then the fast path again (a batch's first rows give every feature)
            for name, value in xs[0].items():
                self._feature(name, value)
            rows = self._numeric_rows(xs)
            if rows is not None:
                return rows, None, None
        for i, x in enumerate(xs):
            for name, value in x.items():
                if value is None:
                    continue
                index = self._feature(name, value)
                codes = nominal.get(index)
                if codes is not None:
                    if not isinstance(value, str):
                        return self._rows(xs[:i]), i, (f"feature {name!r}: {value!r} is not text, "
                                                       f"but its first value was (a nominal attribute)")
                    if value not in codes:
                        codes[value] = len(codes)
                        learner.addNominalValue(index, value)
                elif isinstance(value, str):
                    return self._rows(xs[:i]), i, (f"feature {name!r}: {value!r} is text, but its "
                                                   f"first value was a number (a numeric attribute)")
        return self._rows(xs), None, None

    def _feature(self, name: Any, value: Any) -> int:
        """The header's index of feature ``name``, added on its first (non-missing) value:
        nominal when that value is text, numeric otherwise."""
        index = self.features.get(name)
        if index is None:
            index = self.features[name] = len(self.features)
            if isinstance(value, str):
                self.nominal[index] = {}
                self._java().addNominal(str(name))
            else:
                self._java().addNumeric(str(name))
        return index

    def _numeric_rows(self, xs: Sequence[dict]) -> np.ndarray | None:
        """The common case fast: every example has exactly the known features, all numeric
        (else None: the general path). The rows of the last batch are kept, so the folds of one
        batch, which share its ``xs``, encode it once."""
        global _last_rows
        features = self.features
        if not features or self.nominal:
            return None
        keys = tuple(features)
        if _last_rows is not None and _last_rows[0] is xs and _last_rows[1] == keys:
            return _last_rows[2]
        d = len(keys)
        if not all(len(x) == d for x in xs):
            return None
        getter = itemgetter(*keys) if d > 1 else (lambda x: (x[keys[0]],))
        try:
            rows = np.array(list(map(getter, xs)))
        except KeyError:
            return None
        if rows.dtype.kind not in "fiub" or rows.shape != (len(xs), d):  # text, None: general
            return None
        rows = rows.astype(np.float64)
        _last_rows = (xs, keys, rows)
        return rows

    def _rows(self, xs: Sequence[dict]) -> np.ndarray:
        features, nominal = self.features, self.nominal
        rows = np.full((len(xs), len(features)), np.nan)
        for row, x in zip(rows, xs):
            for name, value in x.items():
                if value is not None:
                    index = features[name]
                    codes = nominal.get(index)
                    row[index] = value if codes is None else codes[value]
        return rows

    # -- the batch path ----------------------------------------------------------------------
    def run(self, xs: Sequence[dict], y: Sequence[int], weights: Sequence[int],
            predict: Sequence[bool], classes: Sequence[Any]
            ) -> tuple[list[int], tuple[int, str, str] | None]:
        """Predict (where ``predict``) then train (weight > 0) on each example, in Java.

        Returns the predicted codes (-1: none) and, on an error, (index of its example, phase,
        ``"Type: message"``); the examples after it are neither predicted nor trained on."""
        import jpype

        try:
            if len(classes) > len(self.classes):
                self._add_classes(classes)
            rows, bad, reason = self._encode(xs)
            n = len(rows)
            learner = self._learner
            out = learner.process(
                jpype.JArray(jpype.JDouble)(rows.ravel()),
                jpype.JArray(jpype.JInt)(np.asarray(y[:n], dtype=np.int32)),
                jpype.JArray(jpype.JInt)(np.asarray(weights[:n], dtype=np.int32)),
                jpype.JArray(jpype.JBoolean)(np.asarray(predict[:n], dtype=bool)),
                self.keep_scores)
            if self.keep_scores:
                k = len(self.classes)
                self.scores = np.asarray(learner.scores).tolist() + [0.0] * (k * (len(xs) - n))
        except jpype.JException as error:  # made, grown or handed a batch: Java failed there
            text = java_error(error)
            if "OutOfMemoryError" in str(error.getClass().getName()):
                self._learner = None  # its heap back to the other replicas
                text += str(start_jvm().HEAP_HINT)
            if self.keep_scores:
                self.scores = [0.0] * (len(self.classes) * len(xs))
            return [-1] * len(xs), (0, "predict", error_text(_as_error(text)))
        pred = np.asarray(out).tolist() + [-1] * (len(xs) - n)
        if learner.errorIndex >= 0:
            text = error_text(_as_error(str(learner.errorText)))
            return pred, (int(learner.errorIndex), str(learner.errorPhase), text)
        if bad is not None:
            return pred, (bad, "predict", f"ValueError: {reason}")
        return pred, None

    def run_batch(self, batch: Any, prequential: bool, xs: list[dict]):
        """A learner task's batch (``FoldBatch``) whose features are ``xs`` (the batch's own, or
        with the learner task's lag features): (y_pred, scored, error or None)."""
        weights = batch.weights
        scored = [scores(prequential, w) for w in weights]
        pred, error = self.run(xs, batch.y, weights, scored, batch.classes)
        if error is not None:
            error = (batch.start + error[0] + 1, *error[1:])
        return pred, scored, error

    # -- river's interface (the delayed-label path) ------------------------------------------
    def predict_one(self, x: dict) -> Any:
        pred, error = self.run([x], [0], [0], [True], self.classes)
        if error is not None:
            raise _as_error(error[2])
        return None if pred[0] < 0 else self.classes[pred[0]]

    def learn_one(self, x: dict, y: Any, w: int = 1) -> None:
        if y not in self.classes:
            self._add_classes([*self.classes, y])
        _, error = self.run([x], [self.classes.index(y)], [int(w)], [False], self.classes)
        if error is not None:
            raise _as_error(error[2])

    # -- pickling: Java serialisation ---------------------------------------------------------
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("scores", None)  # the last batch's: not state
        state["_learner"] = None if self._learner is None else bytes(self._learner.toBytes())
        return state

    def __setstate__(self, state: dict) -> None:
        data = state.pop("_learner")
        self.__dict__.update(state)
        self._learner = None
        if data is not None:
            self._learner = start_jvm(self.jvm_options or DEFAULT_JVM_OPTIONS).fromBytes(data)


def nested(model: str, options: str = "", seed: int | None = None) -> MoaClassifier:
    """A MOA classifier as the ``{model: moa.classifiers..., options: ..., params: {seed: ...}}``
    of a noise filter's ``model`` (operators/learners/models.py resolves ``moa.`` to this): checked
    as a learner's is (:func:`check_config`), then made. Its ``seed`` is used as given (a
    learner's ``fold_seeds`` has already derived it for the fold).

    >>> nested("moa.classifiers.bayes.NaiveBayes", seed=True)
    Traceback (most recent call last):
    ValueError: params.seed: MOA's random seed is an integer, got True
    """
    check_config(model, options, {} if seed is None else {"seed": seed}, [])
    return MoaClassifier(model, options, seed=seed)


def moa(learner: str) -> dict[str, str]:
    """A MOA classifier as a learner of ``foldstream.evaluate``, in MOA's own words.

    ``learner`` is what MOA's command line takes after ``-l``: a class of ``moa.classifiers``
    and its options. The value is the learner mapping of the configuration.

    >>> moa("trees.HoeffdingTree -g 100 -c 0.01")
    {'model': 'moa.classifiers.trees.HoeffdingTree', 'options': '-g 100 -c 0.01'}
    """
    model, options = split_learner(learner)
    return {"model": model, "options": options}

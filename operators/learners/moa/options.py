"""MOA's learners in MOA's words: a class of ``moa.classifiers`` and its option string, checked
by MOA's own option parser, and refused where an option would name a file, a stored object or
a task (docs/trust.md); Java's exceptions as foldstream's error texts.
"""

from __future__ import annotations

import re
from typing import Any

from foldstream.operators.downloads import MOA_VERSION, DependencyError
from foldstream.operators.learners.moa.jvm import start_jvm

MOA_PACKAGE = "moa.classifiers."


def is_moa(model: str) -> bool:
    """Whether a learner's ``model`` names a MOA class (the one rule, for the configuration
    and the learner task).

    >>> is_moa("moa.classifiers.trees.HoeffdingTree"), is_moa("river.tree.HoeffdingTreeClassifier")
    (True, False)
    """
    return model.startswith("moa.")


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


def moa(learner: str) -> dict[str, str]:
    """A MOA classifier as a learner of ``foldstream.evaluate``, in MOA's own words.

    ``learner`` is what MOA's command line takes after ``-l``: a class of ``moa.classifiers``
    and its options. The value is the learner mapping of the configuration.

    >>> moa("trees.HoeffdingTree -g 100 -c 0.01")
    {'model': 'moa.classifiers.trees.HoeffdingTree', 'options': '-g 100 -c 0.01'}
    """
    model, options = split_learner(learner)
    return {"model": model, "options": options}

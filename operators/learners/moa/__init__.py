"""MOA's classifiers as foldstream learners, at Java speed (docs/method.md §17, docs/moa.md).

:mod:`.classifier` is the learner (:class:`MoaClassifier`: the header, the batch path, its
threads, pickling), :mod:`.options` MOA's class and option string and their checks,
:mod:`.jvm` this process's JVM and its options; MOA's jar is fetched by
:func:`foldstream.operators.downloads.ensure_moa_jar`. The names below are the package's
surface (``foldstream.moa`` is :func:`moa`); a checkpoint that names the flat module
``foldstream.operators.learners.moa`` finds them here (:mod:`foldstream.operators.moved`).

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators.downloads, foldstream.operators.learners.fitting,
                    foldstream.operators.records.base, foldstream.operators.records.features,
                    foldstream.operators.stats
    never imports:  pyflink
"""

from foldstream.operators.downloads import (
    MOA_MEMBER, MOA_SHA256, MOA_VERSION, MOA_WHEEL, DependencyError, ensure_moa_jar
)
from foldstream.operators.learners.moa.classifier import (
    MOA_SEED, BatchCall, JavaCall, MoaClassifier, nested
)
from foldstream.operators.learners.moa.jvm import (
    DEFAULT_JVM_OPTIONS, FIXED_JVM_OPTIONS, JAVA_SOURCE, JDK_HINT, JVM_OPTION_RULES,
    JvmOptionsError, check_jvm_options, check_jvm_starts, configure_jvm, ensure_classes,
    java_launcher, jvm_running, start_jvm
)
from foldstream.operators.learners.moa.options import (
    MOA_PACKAGE, OBJECT_REFERENCE, check_config, check_learner, cli_string, is_moa, java_error,
    moa, split_learner
)

__all__ = [
    "BatchCall", "DEFAULT_JVM_OPTIONS", "DependencyError", "FIXED_JVM_OPTIONS", "JAVA_SOURCE",
    "JDK_HINT", "JVM_OPTION_RULES", "JavaCall", "JvmOptionsError", "MOA_MEMBER", "MOA_PACKAGE",
    "MOA_SEED", "MOA_SHA256", "MOA_VERSION", "MOA_WHEEL", "MoaClassifier", "OBJECT_REFERENCE",
    "check_config", "check_jvm_options", "check_jvm_starts", "check_learner", "cli_string",
    "configure_jvm", "ensure_classes", "ensure_moa_jar", "is_moa", "java_error",
    "java_launcher", "jvm_running", "moa", "nested", "split_learner", "start_jvm",
]

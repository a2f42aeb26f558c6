"""Where the modules of the flat layout went, so that a checkpoint written before still loads.

A pickle names each class (and each function it holds) by module and name, and Flink's keyed
state and a stage pickled in a test's stored checkpoint are pickles: they name the modules of
the flat ``foldstream.operators`` of before the rooms (``foldstream.operators.evaluator``,
``foldstream.operators.records``, ...). :data:`MOVED` maps each such module to its new home,
in one place, and serves every unpickler alike (Flink's own, which foldstream does not
control, included), in two ways:

* a module whose old name is free (``foldstream.operators.evaluator``) is an alias of its new
  module on the import system (:class:`FlatLayoutFinder`, installed by
  ``foldstream.operators``): importing the old name gives the new module itself, so its
  classes are the same objects, not copies;
* the three whose old name is now a package (``stats``, ``learners``, ``records``) answer, by
  the package's ``__getattr__`` (:func:`flat_attribute`), for the classes and functions the
  old module defined, and for no other name.

Nothing of the repository imports an old name (``tests/test_layers.py`` checks that every
import names a module that exists); the aliases are for stored bytes only. (The rewriting
script of the move leaves this module alone: move_imports: leave.)

>>> import pickle
>>> from foldstream.operators.records.base import FoldReport
>>> old = pickle.dumps(FoldReport, 0).replace(b"operators.records.base", b"operators.records")
>>> pickle.loads(old) is FoldReport
True
>>> import importlib
>>> importlib.import_module("foldstream.operators.evaluator").__name__
'foldstream.operators.stages.evaluator'
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

MOVED = {
    "foldstream.operators.aggregator": "foldstream.operators.stages.aggregator",
    "foldstream.operators.delay": "foldstream.operators.stages.delay",
    "foldstream.operators.evaluator": "foldstream.operators.stages.evaluator",
    "foldstream.operators.fanout": "foldstream.operators.stages.fanout",
    "foldstream.operators.head": "foldstream.operators.stages.head",
    "foldstream.operators.learners": "foldstream.operators.stages.learner",
    "foldstream.operators.messages": "foldstream.operators.stages.messages",
    "foldstream.operators.consensus": "foldstream.operators.stats.consensus",
    "foldstream.operators.detectors": "foldstream.operators.stats.detectors",
    "foldstream.operators.draws": "foldstream.operators.stats.draws",
    "foldstream.operators.kernels": "foldstream.operators.stats.kernels",
    "foldstream.operators.measures": "foldstream.operators.stats.measures",
    "foldstream.operators.normalization": "foldstream.operators.stats.normalization",
    "foldstream.operators.sequential": "foldstream.operators.stats.sequential",
    "foldstream.operators.stats": "foldstream.operators.stats.significance",
    "foldstream.operators.weights": "foldstream.operators.stats.weights",
    "foldstream.operators.windows": "foldstream.operators.stats.windows",
    "foldstream.operators.baselines": "foldstream.operators.learners.baselines",
    "foldstream.operators.imports": "foldstream.operators.learners.imports",
    "foldstream.operators.models": "foldstream.operators.learners.models",
    "foldstream.operators.noise": "foldstream.operators.learners.noise",
    "foldstream.operators.outputs": "foldstream.operators.records.outputs",
    "foldstream.operators.records": "foldstream.operators.records.base",
    "foldstream.operators.wheels": "foldstream.operators.downloads",
    "foldstream.operators.moa": "foldstream.operators.learners.moa",
}
"""Each module of the flat layout -> the module that holds its classes and functions now. The
flat ``foldstream.operators.verdicts`` (presentation wording, in no checkpoint) is
``foldstream.job.verdicts`` now and not aliased: the operators never import ``job/``."""

FLAT_NAMES = {
    "foldstream.operators.learners": frozenset({
        "LagEncoder", "LearnerBuildError", "LearnerSpec", "LearnerTask", "build_model",
        "check_classifier", "fold_seeded", "lag_encoder", "learn", "scores", "takes_weight"}),
    "foldstream.operators.records": frozenset({
        "DelayCounts", "Example", "ExampleBatch", "FoldBatch", "FoldLosses", "FoldReport",
        "PredictionBatch", "Rejected", "clean", "dumps", "error_text", "pack_bits", "pair_key",
        "plain", "unpack_bits", "utf8_prefix"}),
    "foldstream.operators.stats": frozenset({
        "SignedRankResult", "_SignedRanks", "check_level", "friedman_nemenyi", "mcnemar",
        "mean_std", "nemenyi_q", "q_statistic", "sign_test", "signed_rank_sums",
        "signed_rank_test", "wilcoxon"}),
}
"""For an old module whose name is now a package: the classes and functions it defined."""


class FlatLayoutFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module name of :data:`MOVED` (one that is not a package now) as its new
    module: the same module object, under both names in ``sys.modules``."""

    def find_spec(self, name: str, path: Any = None, target: Any = None):
        if name in MOVED and name not in FLAT_NAMES:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec: Any) -> ModuleType:
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """The new module has run already (:meth:`create_module`)."""


def install() -> None:
    """Put the :class:`FlatLayoutFinder` on the import system (once)."""
    if not any(isinstance(f, FlatLayoutFinder) for f in sys.meta_path):
        sys.meta_path.append(FlatLayoutFinder())


def flat_attribute(package: str, name: str) -> Any:
    """What ``package`` (an old module name that is a package now) gave as ``name`` in the flat
    layout: a package's ``__getattr__`` for a checkpoint's class. Any other name is an
    :class:`AttributeError`, as for a missing attribute.

    >>> flat_attribute("foldstream.operators.stats", "wilcoxon").__module__
    'foldstream.operators.stats.significance'
    >>> flat_attribute("foldstream.operators.stats", "nothing")
    Traceback (most recent call last):
    AttributeError: module 'foldstream.operators.stats' has no attribute 'nothing'
    """
    if name not in FLAT_NAMES.get(package, ()):
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return getattr(importlib.import_module(MOVED[package]), name)

"""The math of an evaluation: measures, windows, drift detectors, fold weights and the tests.

Pure functions and small state machines over numbers: the measures (:mod:`.measures`,
:mod:`.normalization`) over the windows (:mod:`.windows`, compiled in :mod:`.kernels`), the
drift detectors (:mod:`.detectors`), the folds' weights and draws (:mod:`.weights`,
:mod:`.draws`), the tests over folds (:mod:`.significance`) and over time
(:mod:`.sequential`), the folds' consensus on an alarm (:mod:`.consensus`), and the
ranks of learners over many streams with their tests (:mod:`.ranks`).

The rule: the math knows no stage, no model and no record type, so each function is checked
by itself (the brute-force oracles, the property tests). It takes one helper from the shared
values: :func:`~foldstream.operators.records.base.plain`.

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators.moved, foldstream.operators.records.base
    never imports:  pyflink
"""

from foldstream.operators.moved import flat_attribute as _flat_attribute


def __getattr__(name: str):
    """A class or function of the flat layout's module ``foldstream.operators.stats``, for a
    checkpoint that names it so (:mod:`foldstream.operators.moved`)."""
    return _flat_attribute(__name__, name)

"""Building the models a learner task trains, and how a model is trained.

A learner's configuration (a dotted model path and its parameters) becomes a checked model
(:mod:`.models`, with :mod:`.imports` for the dotted path), possibly a baseline
(:mod:`.baselines`) or wrapped in label noise (:mod:`.noise`); :mod:`.fitting` holds the one
rule every kind follows: which examples a fold scores and how an integer weight trains it.
MOA's learners are :mod:`foldstream.operators.moa`.

The rule: a model is built and trained without any stage, so the learner task
(:mod:`foldstream.operators.stages.learner`) imports from here and never the other way.

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators.moved, foldstream.operators.records.base, foldstream.operators.stats,
                    foldstream.operators.moa
    never imports:  pyflink
"""

from foldstream.operators.moved import flat_attribute as _flat_attribute


def __getattr__(name: str):
    """A class or function of the flat layout's module ``foldstream.operators.learners``, for a
    checkpoint that names it so (:mod:`foldstream.operators.moved`)."""
    return _flat_attribute(__name__, name)

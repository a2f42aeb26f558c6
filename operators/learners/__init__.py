"""Building the models a learner task trains, and how a model is trained.

A learner's configuration (a dotted model path and its parameters) becomes a checked model
(:mod:`.models`, with :mod:`.imports` for the dotted path), possibly a baseline
(:mod:`.baselines`), wrapped in label noise (:mod:`.noise`) or in the Temporal Correction
classifier (:mod:`.temporal`); :mod:`.fitting` holds the one rule every kind follows: which
examples a fold scores and how an integer weight trains it; :mod:`.lags` names the features a
learner's ``lags`` adds.
MOA's learners are :mod:`foldstream.operators.learners.moa`.

The rule: a model is built and trained without any stage, so the learner task
(:mod:`foldstream.operators.stages.learner`) imports from here and never the other way.

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators.moved, foldstream.operators.records.base, foldstream.operators.stats,
                    foldstream.operators.downloads
    never imports:  pyflink
"""

from foldstream.operators.moved import flat_attribute as _flat_attribute


def __getattr__(name: str):
    """A class or function of the flat layout's module ``foldstream.operators.learners``, for a
    checkpoint that names it so (:mod:`foldstream.operators.moved`)."""
    return _flat_attribute(__name__, name)

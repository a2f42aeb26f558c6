"""The values every room shares and the output records of an evaluation.

:mod:`.base` holds the small values that cross rooms (an example, a fold's batch and report,
the delayed counts) and the one function that turns a record into its JSON bytes;
:mod:`.features` holds a batch's numeric features as one array (read as dicts when a learner
asks); :mod:`.outputs` holds one class per output record type (docs/method.md §10), which writes
those bytes and reads them back.

The rule: a record says what was measured and how it is written, not how it was computed; it
reads the measures' names and the tests' codes from ``stats`` and nothing of a stage or a
model.

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators.moved, foldstream.operators.stats
    never imports:  pyflink
"""

from foldstream.operators.moved import flat_attribute as _flat_attribute


def __getattr__(name: str):
    """A class or function of the flat layout's module ``foldstream.operators.records``, for a
    checkpoint that names it so (:mod:`foldstream.operators.moved`)."""
    return _flat_attribute(__name__, name)

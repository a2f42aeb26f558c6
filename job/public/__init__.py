"""foldstream: k-fold evaluation of streaming classifiers while they learn.

This folder (``job/public/``) is installed as the top-level package ``foldstream``; it holds
nothing but the public surface of the Python API, defined in ``job/api.py``:

>>> import foldstream
>>> sorted(foldstream.__all__)
['ConfigError', 'LearnerSpec', 'Results', 'Summary', 'evaluate']
"""

from foldstream.job.api import Results, Summary, evaluate
from foldstream.job.config import ConfigError
from foldstream.operators.learners import LearnerSpec

__all__ = ["evaluate", "Results", "Summary", "ConfigError", "LearnerSpec"]

"""foldstream: k-fold evaluation of streaming classifiers while they learn.

This folder (``job/public/``) is installed as the top-level package ``foldstream``; it holds
nothing but the public surface of the Python API, defined in ``job/api.py``,
``job/results.py`` and ``job/tools/benchmark/outputs.py``:

>>> import foldstream
>>> sorted(foldstream.__all__)
['BenchmarkResults', 'ConfigError', 'LearnerSpec', 'Results', 'Summary', 'benchmark', 'evaluate', 'moa']

The names are imported when first used (PEP 562), not when the package is: every module of
the project is ``foldstream.*``, so an eager import here made the command line and each Flink
Python worker pay for the API's dependencies (pandas among them) before doing anything.

>>> foldstream.evaluate.__module__
'foldstream.job.api'
>>> foldstream.nothing
Traceback (most recent call last):
AttributeError: module 'foldstream' has no attribute 'nothing'

So it imports nothing of foldstream when it is imported: :data:`_HOMES` names the modules, which
``importlib`` loads on first use.

Imports (the rule tests/test_layers.py checks)::

    may import:     (none)
    never imports:  pyflink
"""

from importlib import import_module

_HOMES = {
    "evaluate": "foldstream.job.api",
    "benchmark": "foldstream.job.api",
    "BenchmarkResults": "foldstream.job.tools.benchmark.outputs",
    "Results": "foldstream.job.results",
    "Summary": "foldstream.job.results",
    "ConfigError": "foldstream.job.config",
    "LearnerSpec": "foldstream.operators.stages.learner",
    "moa": "foldstream.operators.moa",
}

__all__ = list(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'foldstream' has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

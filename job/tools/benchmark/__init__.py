"""``foldstream benchmark``: several learners on many streams, one evaluation, the table
researchers publish (docs/benchmark.md).

* **cells**: the grid of (stream, learner); each cell is an ordinary run of the stream with the
  one learner through :func:`foldstream.job.runner.run_configuration` (in-process engine), so
  its ``measures`` records are those of ``foldstream run`` on that stream, byte for byte
  (:mod:`.design`).
* **resumable**: each finished cell is one JSON line of the results file, written at once; a
  restart skips the cells it finds (measured under the same source, learner and evaluation:
  each line carries its cell's fingerprint), ``--workers N`` processes run the rest
  (:mod:`.run`).
* **tables**: per stream and learner the mean ± sd over folds of each chosen measure (the
  final window, and the whole stream when the records hold it), the best per stream, a mark
  where the Wilcoxon test over folds finds a learner worse than the stream's best; average
  ranks, Friedman, Iman-Davenport, Nemenyi's critical difference and Holm's step-down
  (:mod:`foldstream.operators.stats.ranks`); the cost of each learner; as Markdown, LaTeX,
  CSV and an HTML page, with a critical-difference diagram (:mod:`.outputs`).

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators, foldstream.connectors, foldstream.job.config,
                    foldstream.job.exitcodes, foldstream.job.checks, foldstream.job.tools,
                    foldstream.job.runner, foldstream.job.engines.stopping
    never imports:  pyflink
"""

from foldstream.job.tools.benchmark.design import TABLE_MEASURES, BenchmarkConfig, Cell, \
    CellResult, cell_config, cell_fingerprint, cells, load_benchmark, run_config, stream_name, \
    validate_benchmark
from foldstream.job.tools.benchmark.run import BenchmarkRun, CellFailed, add_arguments, main, \
    read_results, run_benchmark, run_cell

__all__ = [
    "TABLE_MEASURES", "BenchmarkConfig", "BenchmarkRun", "Cell", "CellFailed", "CellResult",
    "add_arguments", "cell_config", "cell_fingerprint", "cells", "load_benchmark", "main",
    "read_results", "run_benchmark", "run_cell", "run_config", "stream_name",
    "validate_benchmark",
]

"""``foldstream experiment``: how often each test is wrong, measured (docs/method.md §14).

foldstream calls its tests sound; Bifet et al. (KDD 2015, Table 2) earned that word for the
fold tests by measuring them, and this command lets anyone rerun that evidence. An experiment
repeats ordinary evaluations, each one a run of the same stages as ``foldstream run``
(:func:`foldstream.job.runner.run_configuration`, in-process engine), and counts how often each test rejects
"A and B are equally good":

* **one run per (dataset, mode, replication)** holds every condition at once: learners ``A``
  and ``B`` (the design under test, two seeds: no change), ``B_noise_<p>`` (``B`` inside a
  seeded :class:`~foldstream.operators.learners.noise.NoiseFilter`: a real change) and ``E1``/``E2``
  (two noise filters with independent draws around one deterministic learner: the exact null
  of the live verdict). The aggregator compares every pair; only the pairs of the conditions
  are read. The verdicts use ``correction: none``, so each pair is tested at ``alpha``
  (docs/method.md §12), like the fold tests.
* **tests**: McNemar (pooled over folds), the sign and Wilcoxon tests over folds (§6) on
  ``accuracy``, the §12 verdict and the §15 regime verdict (a decided verdict is a rejection;
  a results line written before the regime verdicts were read has none). Each is read at the
  final report and at every report ("any": what a reader who watches sees).
* **seeds**: replication ``r`` has the seed :func:`replication_seed` ``(seed, r)``: it seeds a
  generator's data, the evaluation (bootstrap weights, fold assignment: a file's only source of
  variation) and, through :func:`role_seed`, every learner. So a replication's result depends
  on nothing else, and the table does not depend on the number of worker processes.
* **resumable**: each finished replication is one JSON line of the results file, written at
  once; a restart skips the lines it finds (of the same configuration: a line carries the
  configuration's :func:`fingerprint`, which leaves out ``replications``, so more replications
  can be added later).
* **rates**: per (dataset, mode, condition, test, look) the fraction of replications that
  reject, with a 95% Wilson score interval (:func:`wilson`), and ``dataset: "all"`` pooling
  the datasets; a Markdown table in the layout of Bifet et al.'s Table 2 (rows tests, columns
  mode x condition), ``rates.json`` and a figure.

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators, foldstream.connectors, foldstream.job.config,
                    foldstream.job.exitcodes, foldstream.job.checks, foldstream.job.tools,
                    foldstream.job.runner, foldstream.job.engines.stopping
    never imports:  pyflink

It is the one tool that runs evaluations: through :mod:`foldstream.job.runner` (the same path
as ``foldstream run``), and it stops on a signal as a run does (:mod:`foldstream.job.engines.stopping`).
"""

from foldstream.job.tools.experiment.design import LOOKS, MEASURE, MODES, NOISE_FILTER, TESTS, \
    ConditionsConfig, DatasetConfig, ExactNullConfig, ExperimentConfig, Outcome, Pair, \
    ReplicationResult, Task, fingerprint, final_accuracy, has_seed, load_experiment, \
    noise_condition, outcomes_of, pairs, rejects, replication_seed, role_seed, run_configs, \
    tasks, with_seed
from foldstream.job.tools.experiment.rates import CONFIDENCE, Rate, RateTable, markdown_report, \
    markdown_table, rate_table, rates_figure, rejection_rates, rich_table, wilson, write_outputs
from foldstream.job.tools.experiment.run import ExperimentRun, ReplicationFailed, \
    ResultsMismatch, add_arguments, main, read_results, run_experiment, run_replication

__all__ = [
    "CONFIDENCE", "LOOKS", "MEASURE", "MODES", "NOISE_FILTER", "TESTS", "ConditionsConfig",
    "DatasetConfig", "ExactNullConfig", "ExperimentConfig", "ExperimentRun", "Outcome", "Pair",
    "Rate", "RateTable", "ReplicationFailed", "ReplicationResult", "ResultsMismatch",
    "Task", "add_arguments", "final_accuracy", "fingerprint", "has_seed", "load_experiment", "main",
    "markdown_report", "markdown_table", "noise_condition", "outcomes_of", "pairs",
    "rate_table", "rates_figure", "read_results", "rejection_rates", "rejects",
    "replication_seed", "rich_table", "role_seed", "run_configs", "run_experiment",
    "run_replication", "tasks", "wilson", "with_seed", "write_outputs",
]

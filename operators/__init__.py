"""The stages of an evaluation and their math, in plain Python (no Flink), in rooms by concern.

* :mod:`.stages`: the stages and the messages between them. Head (:mod:`.stages.head`) ->
  batcher and fan-out (:mod:`.stages.fanout`), or the delayed labels' fan-out
  (:mod:`.stages.delay`) -> learner tasks (:mod:`.stages.learner`) -> per-fold evaluators
  (:mod:`.stages.evaluator`) -> aggregator (:mod:`.stages.aggregator`).
* :mod:`.stats`: the math the stages call: measures, windows, detectors, fold weights and the
  tests over folds and over time.
* :mod:`.learners`: building the models a learner task trains (river's, a dotted import's, the
  baselines, label noise) and the one rule "predict, then learn with weight w".
* :mod:`.records`: the values every room shares (examples, batches, reports) and the output
  records of docs/method.md §10 with their JSON bytes.
* :mod:`.moa`: MOA's learners through a JVM (with :mod:`.java`'s adapter);
  :mod:`.downloads`: fetching a wheel or a jar into the cache, the one module that downloads.

The same classes run in the in-process engine and inside the Flink job. They are plain Python
so that both engines run them alike and a test runs them without a cluster: no module here
imports ``pyflink``, nor anything of ``job/`` (the engines, the configuration, the tools), nor
``connectors/`` (the stages see records, not files or topics). A stage's settings arrive as
plain values; ``job/config.py`` checks them, imports from here.

A checkpoint (Flink's keyed state, a pickled stage) names the classes it holds by module: the
modules of the flat layout before these rooms still resolve, through :mod:`.moved` (one map, which
every unpickler, Flink's included, finds through the import system).

Imports (the rule tests/test_layers.py checks)::

    may import:     (none)
    never imports:  pyflink
"""

from foldstream.operators import moved as _moved

_moved.install()

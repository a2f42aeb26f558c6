"""The stages of an evaluation and their math, in plain Python (no Flink).

fan-out (:mod:`.fanout`, :mod:`.weights`) -> learner tasks (:mod:`.learners`) -> per-fold
evaluators (:mod:`.evaluator` over :mod:`.windows` and :mod:`.measures`) -> aggregator
(:mod:`.aggregator` with :mod:`.stats` and :mod:`.normalization`). Messages and output records:
:mod:`.records`. Delayed labels (:mod:`.delay`): a per-stream delay fan-out takes the place of
the batcher and the fan-out, and the same learner tasks and evaluators take its events. The
same classes run in the in-process engine and inside the Flink job.

They are plain Python so that both engines run them alike and a test runs them without a
cluster: no module here imports ``pyflink``, nor anything of ``job/`` (the engines, the
configuration, the tools), nor ``connectors/`` (the stages see records, not files or topics).
A stage's settings arrive as plain values; ``job/config.py`` checks them, imports from here.

Imports (the rule tests/test_layers.py checks)::

    may import:     (none)
    never imports:  pyflink
"""

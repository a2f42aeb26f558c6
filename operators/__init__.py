"""The stages of an evaluation and their math, in plain Python (no Flink).

fan-out (:mod:`.fanout`, :mod:`.weights`) -> learner tasks (:mod:`.learners`) -> per-fold
evaluators (:mod:`.evaluator` over :mod:`.windows` and :mod:`.measures`) -> aggregator
(:mod:`.aggregator` with :mod:`.stats` and :mod:`.normalization`). Messages and output records:
:mod:`.records`. Delayed labels (:mod:`.delay`): a per-stream delay fan-out takes the place of
the batcher and the fan-out, and the same learner tasks and evaluators take its events. The
same classes run in the in-process engine and inside the Flink job.
"""

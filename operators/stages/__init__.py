"""The stages of an evaluation and the messages that pass between them.

Each stage is an object with explicit, picklable state (Flink's keyed state holds it) that the
in-process engine and the Flink job drive alike: the head (:mod:`.head`), the batcher and
fan-out (:mod:`.fanout`), the delayed labels' fan-out (:mod:`.delay`), the learner task
(:mod:`.learner`), the per-fold evaluator (:mod:`.evaluator`) and the aggregator
(:mod:`.aggregator`); :mod:`.messages` names what crosses from one stage to the next.

The rule: the stages compose the other rooms (the math of ``stats``, the models of
``learners``, the values and records of ``records``) and nothing below imports a stage, so a
measure, a test or a record type is used and tested without the plumbing.

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators.stats, foldstream.operators.learners,
                    foldstream.operators.records, foldstream.operators.moa
    never imports:  pyflink
"""

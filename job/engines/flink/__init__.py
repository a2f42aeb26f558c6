"""The Flink engine: the same stages as a PyFlink DataStream job.

``job.py`` builds the job graph (keyed fan-out, learners and evaluators keyed by subtask,
aggregator keyed by stream, state in keyed ``ValueState``); ``env.py`` makes the execution
environment of a run (settings, checkpoints, resume); ``kafka.py`` the job's Kafka ends;
``keying.py`` keys a stream in Java; ``run.py`` checks
a run before Flink starts, runs it on the local mini-cluster and delivers the records it
collects; ``routing.py`` aims keys at subtasks as Flink's
key-group hashing does; ``main.py`` is the entry point of ``flink run --python``;
``beam_sampler.py`` leaves out Beam's per-bundle sampler thread; ``trace.py`` times stages for
the latency benchmark; ``faults.py`` injects failures for the restart tests; ``deps.py`` fetches
the Kafka connector jars from PyPI on first use.

Only this package imports ``pyflink``. Besides it, the same as every engine (:mod:`..`), and
the shared stop helper of the engines (``job/engines/stopping.py``).

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators, foldstream.connectors, foldstream.job.config,
                    foldstream.job.plans, foldstream.job.exitcodes, foldstream.job.engines.stopping,
                    foldstream.job.engines.collector
"""

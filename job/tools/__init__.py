"""Tools that show a run's records to people: ``tables.py`` (the summary tables and progress
bar), ``watch.py`` (a live terminal table), ``plot.py`` (figures), ``report.py`` (one
self-contained HTML file of a run), ``dashboard/`` (a live web page on files and topics),
``produce.py`` (send a source into Kafka), ``schema.py`` (the JSON Schema of the records,
validation and reading records back from files and topics), ``config_reference.py`` (the
configuration reference of ``docs/configuration.md``, generated from ``job/config.py``).

A tool reads records (files, Kafka topics) and may import ``operators`` (record types, the
verdict rule), ``connectors``, ``job.config``, ``job.plans`` (``produce`` opens a
configuration's source), ``job.exitcodes``, ``job.checks``, ``job.terminal`` (every text it
prints, made inert) and ``job.engines.stopping`` (the one
rule for Ctrl-C and SIGTERM of every command that runs until stopped: it imports no engine); it
never imports an engine. Two
commands run things rather than read records, and so may import more: ``cluster.py`` (``foldstream cluster``, ``submit``,
``jobs``, ``stop``) drives a Flink cluster through :mod:`foldstream.job.engines.flink`;
``experiment`` and ``benchmark`` run many configurations through
:mod:`foldstream.job.runner`.

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators, foldstream.connectors, foldstream.job.config,
                    foldstream.job.plans, foldstream.job.exitcodes, foldstream.job.checks,
                    foldstream.job.terminal, foldstream.job.engines.stopping,
                    foldstream.job.verdicts
    never imports:  pyflink
    cluster may also import:     foldstream.job.engines.flink
    experiment may also import:  foldstream.job.runner
    benchmark may also import:   foldstream.job.runner
"""

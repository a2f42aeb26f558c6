"""Everything around the stages: configuration, plans, the engines, the command line, the tools.

The rooms, and what each may import:

- ``config.py`` (the YAML configuration, a pydantic model naming any bad key), ``plans.py`` (the
  one path from a configuration to the stages' plans and to its source), ``runner.py`` (the one
  function that runs a configuration: engine, streams, sinks, summary), ``results.py`` (a run's
  records and tables), ``cli.py`` (the ``foldstream`` command) and ``api.py`` (the Python API
  re-exported as ``foldstream``) sit at the top: they may import ``operators``, ``connectors``
  and the rooms below. ``cli.py`` and ``api.py`` both run configurations through
  ``runner.py``; neither imports the other.
- :mod:`.engines`: what runs the stages. ``engines/inprocess.py`` in one Python process;
  ``engines/flink/`` as a PyFlink job (job graph, environment, fold routing, the cluster entry
  point, the Beam sampler patch, stage tracing, fault injection, fetched jars).
- :mod:`.tools`: what reads records back for people (tables, watch, plot, produce, the JSON
  Schema and record reading). Tools never import an engine (two commands that run things
  excepted: see :mod:`.tools`; ``tools/experiment/`` runs evaluations through ``runner.py``).
- ``exitcodes.py`` (the exit codes of every command), ``checks.py`` (small checks of what a user
  wrote, such as a value among choices), ``terminal.py`` (text made inert before it reaches a
  terminal) and ``logs.py`` (where log messages go, ``--log-level``) import nothing of the
  stages; the tools may import the first three, the engines the first.

``operators/`` (the stages and their math) and ``connectors/`` never import anything from here;
only :mod:`.engines.flink` imports ``pyflink``, so that the command line, the configuration and
the tools start without Flink's Java gateway.

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators, foldstream.connectors
    never imports:  pyflink
"""

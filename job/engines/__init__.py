"""The engines that run the stages of ``operators/``: in-process (``inprocess.py``) and Flink
(``flink/``). For the same configuration and seed they emit the same records, byte for byte.

An engine may import ``operators``, ``connectors``, ``job.config``, ``job.plans`` and
``job.exitcodes``; it never imports ``job.tools``, ``job.cli`` or ``job.api`` (they call the
engines, not the other way round). Only :mod:`.flink` imports ``pyflink``.

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators, foldstream.connectors, foldstream.job.config,
                    foldstream.job.plans, foldstream.job.exitcodes
    never imports:  pyflink
"""

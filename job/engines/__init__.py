"""The engines that run the stages of ``operators/``: in-process (``inprocess.py``) and Flink
(``flink/``). For the same configuration and seed they emit the same records, byte for byte.

An engine may import ``operators``, ``connectors``, ``job.config`` and ``job.plans``; it never
imports ``job.tools`` or ``job.cli``.
"""

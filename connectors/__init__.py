"""Sources (files, river generators, Kafka) and sinks (JSON Lines files, stdout, Kafka).

They turn rows of files, generators and topics into the records of :mod:`foldstream.operators`
and records into lines and messages: they may import ``operators`` (the record types, the
delayed-label events), never ``job/`` (an engine or the configuration decides which connector to
open and passes plain values) nor ``pyflink`` (the Flink engine wraps them itself).

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators
    never imports:  pyflink
"""

"""Shipped configurations; ``default.yaml`` is the embedded default of ``foldstream run``.

Data only: it imports nothing of foldstream.

Imports (the rule tests/test_layers.py checks)::

    may import:     (none)
"""

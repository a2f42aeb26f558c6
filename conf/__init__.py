"""Shipped configurations; ``default.yaml`` is the embedded default of ``foldstream run``."""

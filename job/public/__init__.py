"""foldstream: k-fold evaluation of streaming classifiers while they learn.

This folder (``job/public/``) is installed as the top-level package ``foldstream``; it holds
nothing but the public surface of the Python API, defined in ``job/api.py``.
"""

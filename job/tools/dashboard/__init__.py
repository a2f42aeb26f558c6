"""``foldstream dashboard SOURCE [SOURCE ...]``: a live web page of runs' records.

A Starlette application served by uvicorn (:mod:`.app`) reads every source (JSON Lines files
that may still be growing, ``kafka://HOST:PORT/TOPIC``) in threads of its own into a bounded
:class:`~.state.DashboardState`, and pushes what changed to each open page as server-sent
events. The page (``static/``) draws with uPlot, vendored in ``static/vendor/`` so that it needs
no internet.

This module holds the command's defaults and entry point only, so that the command line can
name them without importing the web stack. The dashboard is a tool like its neighbours and reads
records with them (``schema``, ``watch``); it never imports an engine (it stops on a signal by
the one rule of :mod:`foldstream.job.engines.stopping`, which imports none).

Imports (the rule tests/test_layers.py checks)::

    may import:     foldstream.operators, foldstream.connectors, foldstream.job.exitcodes,
                    foldstream.job.checks, foldstream.job.terminal, foldstream.job.tools,
                    foldstream.job.engines.stopping, foldstream.job.verdicts
    never imports:  pyflink
"""

from __future__ import annotations

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8050
DEFAULT_INTERVAL = 0.25  # seconds between looks for new records; a report shows within ~0.5 s


def main(args) -> int:
    """Run the dashboard until Ctrl-C; see :func:`.app.serve`."""
    from foldstream.job.tools.dashboard.app import main as app_main

    return app_main(args)

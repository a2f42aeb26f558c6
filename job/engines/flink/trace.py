"""Stage timestamps for the latency benchmark (``bench/bench_latency.py --stages``).

When the environment variable ``FOLDSTREAM_TRACE`` names a file (the Flink job's Python workers
inherit it), the Flink operators append ``stage stream position unix_time`` lines to it at a few
points: an example entering the fan-out, a fold batch leaving it, a fold batch entering and leaving
the learners, a ``measures`` record leaving the aggregator. Unset (always, outside the benchmark),
:func:`stage` returns at once.
"""

from __future__ import annotations

import os
import time

TRACE_FILE = os.environ.get("FOLDSTREAM_TRACE")


def stage(name: str, stream: str, position: int) -> None:
    """Note that ``stream`` reached ``position`` at stage ``name`` (if tracing is on)."""
    if TRACE_FILE:
        with open(TRACE_FILE, "a", encoding="utf-8") as f:
            f.write(f"{name} {stream} {position} {time.time():.4f}\n")

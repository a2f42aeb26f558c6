"""Beam's state-sampler thread, which a PyFlink Python worker starts and joins at every bundle,
left out.

PyFlink's Python workers run Apache Beam's SDK harness. For every bundle, Beam starts a thread
that samples which step is running (for Beam's own progress counters, which Flink never reads),
and at the end of the bundle it *joins* that thread. The thread sleeps in steps that grow from 2
ms by a fifth at a time up to 200 ms, and the join waits out the current step: 3 ms after a 50
ms bundle, 138 ms after a 1 s bundle (measured on Beam's ``StateSampler``). All that time the
worker idles and the Flink task waiting for the bundle's results is blocked (py-spy on a learner
worker at 2,000 examples/s found 12% of its time in that join).
:func:`skip_state_sampler_thread` makes the sampler keep its bookkeeping without the thread.
bench/README.md measures the effect; the environment variable ``FOLDSTREAM_BEAM_SAMPLER=thread``
keeps Beam's behaviour (for that comparison).

The patch is process-wide and idempotent; each Flink operator's ``open()`` applies it in its
worker before the worker's first bundle starts. If Beam's sampler is not shaped as expected
(another Beam version), it changes nothing.
"""

from __future__ import annotations

import os
import threading

_APPLIED = False


def skip_state_sampler_thread() -> bool:
    """Make Beam's ``StateSampler`` start and stop without its sampling thread; True if applied.

    A sampler started before the patch keeps its thread until it stops (Beam's own ``stop``).
    """
    global _APPLIED
    if _APPLIED:
        return True
    if os.environ.get("FOLDSTREAM_BEAM_SAMPLER") == "thread":
        return False
    try:
        from apache_beam.runners.worker import statesampler
    except ImportError:
        return False
    sampler = getattr(statesampler, "StateSampler", None)
    set_tracker = getattr(statesampler, "set_current_tracker", None)
    if sampler is None or set_tracker is None or not hasattr(sampler, "stop_if_still_running"):
        return False
    beam_stop = sampler.stop

    def start(self) -> None:
        # Beam's start, less the thread: the sampler is the thread's current tracker, and
        # ``started`` / ``finished`` (Beam's public flags) say what stop_if_still_running reads.
        self.tracked_thread = threading.current_thread()
        set_tracker(self)
        self._threadless = True
        self.started = True

    def stop(self) -> None:
        if not self.__dict__.get("_threadless"):
            return beam_stop(self)  # started by Beam before the patch: join its thread once
        set_tracker(None)
        self.finished = True

    sampler.start, sampler.stop = start, stop
    _APPLIED = True
    return True

"""Python's cyclic garbage collector during a run: the objects of a settled run left out of it.

A run's process holds some 170,000 objects that live as long as it does: the modules it
imported (numpy, numba, river, JPype, pyarrow) with their functions, classes and tables. Python's
collector goes over all of them at each full collection, and a run with MOA's learners has many:
JPype runs a full collection of Python's objects after each collection of Java's young
generation, which the learners' allocations make frequent. So once a run has settled (its first
records out: every module it uses imported, its stages and learners built), the objects alive
are frozen out of the collector's sweeps (:func:`gc.freeze`) until the run ends. Reference
counting still frees every object that dies; only a cycle among the frozen ones waits for the
end of the run to be collected. A process that froze objects of its own is left as it is.
"""

from __future__ import annotations

import gc


class Collector:
    """Freezes a run's settled objects once (:meth:`settle`), lets them back at :meth:`release`.

    >>> collector = Collector()
    >>> collector.settle(); frozen = gc.get_freeze_count() > 0; collector.release()
    >>> frozen, gc.get_freeze_count()
    (True, 0)
    """

    def __init__(self) -> None:
        self._ours = gc.get_freeze_count() == 0  # nothing frozen by anyone else
        self._frozen = False

    def settle(self) -> None:
        """The run has settled: freeze what is alive now (once; later calls do nothing)."""
        if self._ours and not self._frozen:
            gc.freeze()
            self._frozen = True

    def release(self) -> None:
        """The run is over: its frozen objects back in the collector's care."""
        if self._frozen:
            gc.unfreeze()
            self._frozen = False

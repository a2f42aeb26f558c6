"""Consensus drift: the alarms the folds agree on (docs/method.md §16).

Each fold's change detectors (§7) alarm on their own, and on a real stream they alarm often: the
embedded default (Electricity, 3 learners, 10 folds) writes about 80 alarms per fold and learner,
more than anyone reads. The k folds are replicas that see the same stream, so a real change
moves most of them within a short span while a false alarm is usually one fold's. A *drift*
marks a change that at least ``q`` of the ``k`` folds signalled within ``w`` examples.

The rule, per (learner, detector) of a stream: keep each fold's most recent alarm position. At an
alarm of a fold at position ``p``, count the folds whose most recent alarm lies in ``(p - w,
p]``; when the count reaches ``q`` and no drift of this (learner, detector) lies in ``(p - w,
p]``, there is a drift at ``p``, naming the agreeing folds (sorted) and the earliest of their
alarm positions (``first``). Alarms must be given in position order (the aggregator sorts each
report's alarms, and reports come in position order); the state is O(k) per (learner,
detector).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["CONSENSUS_WINDOW", "Drift", "Consensus", "consensus_folds"]

CONSENSUS_WINDOW = 1000
"""Default ``w`` (``evaluation.alarms.consensus.window``): examples within which folds agree."""


def consensus_folds(k: int, mode: str = "bootstrap") -> int:
    """Default ``q`` (``evaluation.alarms.consensus.folds``): ``ceil(k / 2)``, 1 in single mode.

    >>> consensus_folds(10), consensus_folds(5), consensus_folds(1, "single")
    (5, 3, 1)
    """
    return 1 if mode == "single" else max(1, math.ceil(int(k) / 2))


@dataclass(frozen=True, slots=True)
class Drift:
    """A change the folds agree on: ``q`` or more folds alarmed within ``w`` examples.

    Attributes
    ----------
    position : int
        ``p``, the position of the alarm that completed the agreement.
    learner, detector : str
        Whose alarms, and which detector's.
    folds : tuple of int
        The agreeing folds, sorted.
    first : int
        The earliest of their most recent alarm positions.
    """

    position: int
    learner: str
    detector: str
    folds: tuple[int, ...]
    first: int


class Consensus:
    """The consensus-drift rule over one stream's alarms (the module docstring).

    Parameters
    ----------
    k : int
        The number of folds.
    window : int, default CONSENSUS_WINDOW
        ``w`` in examples (>= 1).
    folds : int or None, default None
        ``q`` in ``1 .. k``; ``None`` takes :func:`consensus_folds` of ``k``.

    Examples
    --------
    Ten folds, ``q = 5``, ``w = 1000``: a lone alarm is no drift; five folds within 1,000
    examples are; the sixth fold, soon after, adds none.

    >>> from foldstream.operators.stats.consensus import Consensus
    >>> c = Consensus(k=10)
    >>> c.alarm(500, "ht", 0, "adwin") is None
    True
    >>> [c.alarm(p, "ht", f, "adwin") for p, f in [(2_100, 1), (2_300, 2), (2_400, 3)]]
    [None, None, None]
    >>> c.alarm(2_600, "ht", 4, "adwin")     # fold 0's alarm at 500 is too old to count
    >>> c.alarm(2_900, "ht", 5, "adwin")
    Drift(position=2900, learner='ht', detector='adwin', folds=(1, 2, 3, 4, 5), first=2100)
    >>> c.alarm(3_000, "ht", 6, "adwin") is None      # a drift already lies in (2000, 3000]
    True
    >>> c.alarm(3_000, "nb", 6, "adwin") is None      # learners and detectors count apart
    True
    """

    def __init__(self, k: int, window: int = CONSENSUS_WINDOW, folds: int | None = None):
        self.k = int(k)
        if self.k < 1:
            raise ValueError(f"k must be a positive integer, got {k}")
        self.window = int(window)
        if self.window < 1:
            raise ValueError(f"window must be at least 1 example, got {window}")
        self.folds = consensus_folds(self.k) if folds is None else int(folds)
        if not 1 <= self.folds <= self.k:
            raise ValueError(f"folds must lie in 1 .. {self.k}, got {folds}")
        self._last: dict[tuple[str, str], list[int | None]] = {}
        self._drift: dict[tuple[str, str], int] = {}

    def alarm(self, position: int, learner: str, fold: int, detector: str) -> Drift | None:
        """Take one alarm (in position order); return the drift it completes, if any."""
        key = (learner, detector)
        last = self._last.setdefault(key, [None] * self.k)
        position = int(position)
        last[fold] = position
        low = position - self.window
        agreeing = [f for f, p in enumerate(last) if p is not None and low < p <= position]
        if len(agreeing) < self.folds:
            return None
        previous = self._drift.get(key)
        if previous is not None and low < previous <= position:
            return None
        self._drift[key] = position
        return Drift(position, learner, detector, tuple(agreeing),
                     min(last[f] for f in agreeing))  # type: ignore[type-var]

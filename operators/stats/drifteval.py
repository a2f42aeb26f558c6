"""Change detectors scored against a stream's known changes (docs/method.md §19).

A stream may declare where its concept truly changes (``source.drifts``, or the positions a
generator's ``ConceptDriftStream`` and ``class_ratio`` schedule put there). Then the alarms of
every fold and the consensus drifts (§16) of each (learner, detector) are scored against them,
and so are two baselines that raise the same number of alarms without looking at the data: a
periodic detector and a random one (seeded). A detector's F1 means something only beside
theirs: a detector that fires often scores a high recall whatever it watches.

The rule, for changes ``c_1 < ... < c_m`` (those at or before the stream's last position ``L``)
and an acceptance window ``w``: change ``c_i`` accepts the alarms at positions ``p`` with
``c_i <= p < min(c_i + w, c_{i+1})`` (``c_{m+1} = infinity``). A change is *detected* when it
accepts at least one alarm; its *delay* is its first accepted alarm's position minus ``c_i``.
Every alarm that is not the first accepted one of a change is a *false alarm* (also a second
alarm of the same change: it announces a change already announced). Then

* precision = detected changes / alarms, recall = detected changes / m, F1 their harmonic
  mean (``None`` where a denominator is 0; F1 is 0 when both are 0);
* false alarms per 10,000 examples = false alarms / L * 10,000.

The alarms of ``k`` folds are pooled: the counts are summed over the folds (``m`` changes per
fold, so recall is the share of (fold, change) pairs detected), the delays are those of every
fold that detected, and each change's entry gives the folds' accepted alarms, how many folds
detected it and their mean delay. Consensus drifts are one sequence (``folds`` 1).

The baselines, for a sequence of ``n`` alarms over ``L`` examples: *periodic* fires at
``floor((2j - 1) L / (2n))`` for ``j = 1 .. n`` (every ``L / n`` examples, the detector's own
rate, mid-period); *random*
fires at ``n`` distinct positions drawn uniformly from ``1 .. L`` by numpy's PCG64 seeded with
``(seed, fold, crc32(learner), crc32(detector), crc32(of))``, so both engines draw the same.
"""

from __future__ import annotations

import statistics
import zlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["ACCEPTANCE_WINDOW", "BASELINE_SEED", "ChangeScore", "DriftScores", "DriftScoring",
           "periodic_alarms", "random_alarms", "score"]

ACCEPTANCE_WINDOW = 1000
"""Default ``w`` (``evaluation.alarms.scoring.window``): examples after a change within which
an alarm detects it."""
BASELINE_SEED = 1
"""Default seed of the random baseline (``evaluation.alarms.scoring.seed``)."""


@dataclass(frozen=True)
class DriftScoring:
    """What the aggregator needs to score detectors: the changes (positions, increasing), the
    acceptance window, the random baseline's seed, and the detectors that are on."""

    changes: tuple[int, ...]
    window: int = ACCEPTANCE_WINDOW
    seed: int = BASELINE_SEED
    detectors: tuple[str, ...] = ("adwin", "page_hinkley")


@dataclass(frozen=True, slots=True)
class ChangeScore:
    """One true change: its position, the alarms it accepted (over the folds), how many folds
    detected it, and their mean delay (``None``: none did)."""

    position: int
    detections: int
    detected: int
    delay: float | None


@dataclass(frozen=True, slots=True)
class DriftScores:
    """The scores of alarm sequences against the changes (the module docstring)."""

    alarms: int
    detected: int
    missed: int
    false_alarms: int
    false_alarms_per_10k: float | None
    precision: float | None
    recall: float | None
    f1: float | None
    delay_mean: float | None
    delay_median: float | None
    per_change: tuple[ChangeScore, ...]

    def as_record(self) -> dict:
        """The JSON object of a ``drift_evaluation`` record's scores."""
        out = {name: getattr(self, name) for name in self.__slots__ if name != "per_change"}
        out["per_change"] = [{"position": c.position, "detections": c.detections,
                              "detected": c.detected, "delay": c.delay} for c in self.per_change]
        return out


def score(sequences: Sequence[Sequence[int]], changes: Sequence[int], length: int,
          window: int = ACCEPTANCE_WINDOW) -> DriftScores:
    """Score ``sequences`` of alarm positions (one per fold, each increasing) against the
    ``changes`` over a stream of ``length`` examples.

    Examples
    --------
    Changes at 1,000 and 2,000, window 500: the alarms at 1,100 and 1,300 detect the first
    (the second is a false alarm), 2,600 is too late for the second, and 400 comes before any.

    >>> s = score([[400, 1100, 1300, 2600]], [1000, 2000], length=3000, window=500)
    >>> s.detected, s.missed, s.false_alarms, s.precision, s.recall, s.delay_mean
    (1, 1, 3, 0.25, 0.5, 100.0)
    >>> [(c.position, c.detections, c.delay) for c in s.per_change]
    [(1000, 2, 100.0), (2000, 0, None)]
    """
    cuts = [c for c in changes if c <= length]
    ends = [min(c + window, cuts[i + 1]) if i + 1 < len(cuts) else c + window
            for i, c in enumerate(cuts)]
    k = len(sequences)
    detections = [0] * len(cuts)
    delays: list[list[int]] = [[] for _ in cuts]
    alarms = 0
    for sequence in sequences:
        positions = np.asarray(sequence, dtype=np.int64)
        alarms += len(positions)
        for i, (start, end) in enumerate(zip(cuts, ends)):
            lo, hi = np.searchsorted(positions, [start, end], side="left").tolist()
            detections[i] += hi - lo
            if hi > lo:
                delays[i].append(int(positions[lo]) - start)
    detected = sum(len(d) for d in delays)
    pooled = [d for per in delays for d in per]
    precision = detected / alarms if alarms else None
    recall = detected / (k * len(cuts)) if cuts and k else None
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    false_alarms = alarms - detected
    return DriftScores(
        alarms=alarms, detected=detected, missed=k * len(cuts) - detected,
        false_alarms=false_alarms,
        false_alarms_per_10k=false_alarms / (k * length) * 10_000 if length and k else None,
        precision=precision, recall=recall, f1=f1,
        delay_mean=statistics.fmean(pooled) if pooled else None,
        delay_median=float(statistics.median(pooled)) if pooled else None,
        per_change=tuple(ChangeScore(c, detections[i], len(delays[i]),
                                     statistics.fmean(delays[i]) if delays[i] else None)
                         for i, c in enumerate(cuts)))


def periodic_alarms(n: int, length: int) -> list[int]:
    """``n`` alarms every ``length / n`` examples, each in the middle of its period (so that
    they do not fall on changes placed at round fractions of the stream by construction).

    >>> periodic_alarms(4, 1000), periodic_alarms(0, 1000)
    ([125, 375, 625, 875], [])
    """
    return [(2 * j - 1) * length // (2 * n) for j in range(1, n + 1)]


def random_alarms(n: int, length: int, seed: int, *names: object) -> list[int]:
    """``n`` distinct alarm positions drawn uniformly from ``1 .. length``, sorted; the draw is
    seeded by ``seed`` and ``names`` (integers as they are, anything else by the CRC-32 of its
    text), the same in every process.

    >>> random_alarms(3, 1000, 1, 0, "ht", "adwin") == random_alarms(3, 1000, 1, 0, "ht", "adwin")
    True
    >>> len(set(random_alarms(50, 60, 1)))
    50
    """
    entropy = [int(seed) & 0xFFFFFFFF] + [
        name if isinstance(name, int) else zlib.crc32(str(name).encode("utf-8")) for name in names]
    rng = np.random.Generator(np.random.PCG64(entropy))
    n = min(int(n), int(length))
    return sorted((rng.choice(int(length), size=n, replace=False) + 1).tolist())

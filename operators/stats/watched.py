"""A measure over a sliding window, example by example: what the detectors watch when
``evaluation.alarms.quantity`` names a measure (docs/method.md §7).

The change detectors of a fold watch each learner's 0/1 loss by default. Brzezinski et al. run
Page-Hinkley on a windowed measure instead (kappa, G-mean, F1 over the last 100 examples), to
see which measures raise false alarms when only the class ratio changes. A :class:`MeasureWatch`
gives that series: after each scored example, the measure over the last ``size`` scored
examples of the learner on the fold, computed as every measure is (a sliding
:class:`~foldstream.operators.stats.windows.Window` and :func:`~foldstream.operators.stats.measures.compute`,
so the value is the one a ``measures`` record with ``window: {kind: sliding, size}`` would give
at that example). A value that is undefined there (``None``: a kappa whose chance agreement is 1,
an F1 before any positive) is ``NaN`` in the series; the detectors skip it (they see the
defined values only, in order).
"""

from __future__ import annotations

import math
from typing import Hashable, Sequence

import numpy as np

from foldstream.operators.stats import measures
from foldstream.operators.stats.windows import SlidingWindow

WATCH_WINDOW = 100
"""Default ``evaluation.alarms.window``: the examples the watched measure covers."""

LOSS = "loss"
"""The quantity the detectors watch by default: the per-example 0/1 loss."""


class MeasureWatch:
    """The series of one measure over a sliding window of ``size`` examples.

    Parameters
    ----------
    measure : str
        One of :data:`~foldstream.operators.stats.measures.MEASURES`.
    size : int
        The window, in scored examples.
    positive : hashable or None
        ``evaluation.positive_class`` (``None``: the class seen first).

    Examples
    --------
    Accuracy over the last 2 examples, after each of four:

    >>> watch = MeasureWatch("accuracy", 2)
    >>> y, p = np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0])
    >>> watch.update_many(y, p, np.array([-1, 0, 1, 1]), ["a", "b"]).tolist()
    [1.0, 1.0, 0.5, 0.5]
    """

    def __init__(self, measure: str, size: int = WATCH_WINDOW, positive: Hashable | None = None):
        if measure not in measures.MEASURES:
            raise ValueError(f"unknown measure {measure!r}; choose from "
                             f"{', '.join(measures.MEASURES)}")
        self.measure = measure
        self.size = int(size)
        self.positive = positive
        self._window = SlidingWindow(self.size)
        self._classes = 0  # classes seen so far

    def update_many(self, y: np.ndarray, y_pred: np.ndarray, prev: np.ndarray,
                    classes: Sequence[Hashable]) -> np.ndarray:
        """Add scored examples in order; the measure after each (``NaN``: undefined).

        ``classes``: the stream's labels by code (at least those of ``y``)."""
        y = np.asarray(y, dtype=np.int64)
        y_pred = np.asarray(y_pred, dtype=np.int64)
        prev = np.asarray(prev, dtype=np.int64)
        out = np.empty(len(y))
        window, name = self._window, self.measure
        seen = self._classes
        labels = list(classes[:seen])
        code = measures.positive_code(labels, self.positive)
        for i in range(len(y)):
            t = int(y[i])
            if t >= seen:
                seen = t + 1
                labels = list(classes[:seen])
                code = measures.positive_code(labels, self.positive)
            window.update(t, int(y_pred[i]), int(prev[i]))
            value = measures.compute(window.counts(), labels, code)[name]
            out[i] = math.nan if value is None else value
        self._classes = seen
        return out


def defined(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(at, values)``: the indices of the defined values of a series, and those values.

    >>> defined(np.array([np.nan, 0.5, np.nan, 1.0]))
    (array([1, 3]), array([0.5, 1. ]))
    """
    at = np.flatnonzero(~np.isnan(values))
    return at, values[at]

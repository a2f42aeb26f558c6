"""Detectors on a measure (docs/method.md §7): the watched series and the alarms it raises."""

from __future__ import annotations

import numpy as np
import pytest

from foldstream.operators.stats.detectors import PageHinkley
from foldstream.operators.stages.evaluator import EvalPlan, FoldEvaluator
from foldstream.operators.records.base import PredictionBatch
from foldstream.operators.stats.watched import MeasureWatch
from foldstream.operators.stats.windows import WindowSpec


def brute_kappa(y: np.ndarray, p: np.ndarray) -> float:
    """Cohen's kappa of one window of (true, predicted) binary labels, from scratch."""
    n = len(y)
    p0 = np.mean(y == p)
    pc = sum(np.mean(y == c) * np.mean(p == c) for c in (0, 1))
    return np.nan if 1 - pc <= 1e-12 else (p0 - pc) / (1 - pc)


def stream(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels whose predictions are right 90% of the time, then 60% after the middle."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    right = rng.random(n) < np.where(np.arange(n) < n // 2, 0.9, 0.6)
    return y, np.where(right, y, 1 - y)


@pytest.mark.parametrize("size", [1, 7, 100])
def test_the_watched_kappa_is_kappa_over_the_last_size_examples(size):
    y, p = stream(600, 3)
    prev = np.r_[-1, y[:-1]]
    watch = MeasureWatch("kappa", size)
    series = np.r_[watch.update_many(y[:250], p[:250], prev[:250], [0, 1]),
                   watch.update_many(y[250:], p[250:], prev[250:], [0, 1])]
    expected = np.array([brute_kappa(y[max(0, i - size + 1):i + 1], p[max(0, i - size + 1):i + 1])
                         for i in range(len(y))])
    np.testing.assert_allclose(series, expected, rtol=0, atol=1e-12, equal_nan=True)


def test_page_hinkley_on_kappa_alarms_where_it_does_on_the_series_itself():
    """A fold evaluator watching kappa over 100 examples alarms exactly where Page-Hinkley fed
    the brute-force series (undefined values skipped) does, and not where the loss would."""
    y, p = stream(4000, 5)
    ph = {"mode": "down", "threshold": 5.0}
    plan = EvalPlan(("a",), window=WindowSpec("cumulative"), report_every=1000,
                    page_hinkley=tuple(ph.items()), adwin_alarms=False,
                    alarm_quantity="kappa", alarm_window=100)
    ev = FoldEvaluator("s", 0, plan)
    alarms = []
    for start in range(0, 4000, 300):  # batches across the reports
        end = min(start + 300, 4000)
        batch = PredictionBatch(stream="s", fold=0, learner="a", seq=start // 300, start=start,
                                y=y[start:end].tolist(),
                                prev_y=np.r_[-1, y[:-1]][start:end].tolist(),
                                y_pred=p[start:end].tolist(), scored=[True] * (end - start),
                                classes=[0, 1], final=end == 4000)
        for report in ev.add(batch):
            alarms += [alarm.position for alarm in report.alarms]
    series = np.array([brute_kappa(y[max(0, i - 99):i + 1], p[max(0, i - 99):i + 1])
                       for i in range(4000)])
    at = np.flatnonzero(~np.isnan(series))
    expected = (at[np.flatnonzero(PageHinkley(**ph).update_many(series[at]))] + 1).tolist()
    assert alarms == expected
    assert any(2000 < a <= 2300 for a in alarms)  # the fall of kappa after the middle

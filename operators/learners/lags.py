"""The names of the features a learner's ``lags`` adds: one indicator per lag and class seen.

The learner task's ``LagEncoder`` (:mod:`foldstream.operators.stages.learner`) writes them and
the Temporal Correction classifier (:mod:`foldstream.operators.learners.temporal`) reads the
previous label back from them, so the one spelling lives here (docs/method.md §9).
"""

from __future__ import annotations

from typing import Any

PREFIX = "y_lag"
"""What every lag feature's name starts with."""


def lag_key(lag: int, label: Any) -> str:
    """The name of the indicator "the label ``lag`` examples back was ``label``".

    >>> lag_key(1, "up")
    'y_lag1=up'
    >>> lag_key(1, "up").startswith(lag_key(1, ""))  # the prefix of every first-lag feature
    True
    """
    return f"{PREFIX}{lag}={label}"

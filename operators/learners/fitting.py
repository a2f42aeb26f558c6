"""Predict, then learn with an integer weight: the one definition every learner kind follows.

The learner task (:mod:`foldstream.operators.stages.learner`), the label-noise wrapper
(:mod:`foldstream.operators.learners.noise`) and MOA's batch (:mod:`foldstream.operators.learners.moa`)
decide which examples a fold scores and how a weight trains a model here, so that all three
agree (docs/method.md §2).
"""

from __future__ import annotations

import inspect
from typing import Any

from foldstream.operators.records.base import Label


def takes_weight(model: Any) -> bool:
    """Whether ``learn_one`` has an explicit sample-weight parameter ``w``."""
    try:
        return "w" in inspect.signature(model.learn_one).parameters
    except (TypeError, ValueError):
        return False


def scores(prequential: bool, weight: int) -> bool:
    """Whether a fold predicts and scores an example of ``weight`` (docs/method.md §2): every
    example in prequential mode, only those it does not train on in holdout mode.

    >>> scores(True, 2), scores(False, 2), scores(False, 0)
    (True, False, True)
    """
    return prequential or weight == 0


def learn(model: Any, x: dict, label: Label, weight: int, weighted: bool) -> None:
    """Train ``model`` on one example with an integer ``weight`` (0: not at all): once with
    ``w=weight`` when its ``learn_one`` takes a weight (:func:`takes_weight`), else ``weight``
    times.

    >>> from river.naive_bayes import GaussianNB
    >>> model = GaussianNB()
    >>> learn(model, {"a": 1.0}, "u", 2, takes_weight(model)); model.class_counts["u"]
    2
    """
    if weighted:
        model.learn_one(x, label, w=weight)
    else:
        for _ in range(weight):
            model.learn_one(x, label)


def scored_flags(prequential: bool, weights: list[int]) -> list[bool]:
    """:func:`scores` of each weight of a fold's batch, as a list.

    >>> scored_flags(True, [0, 2]), scored_flags(False, [0, 2])
    ([True, True], [True, False])
    """
    if prequential:  # every example, without a call per example
        return [True] * len(weights)
    return [scores(False, w) for w in weights]

"""A benchmark's figures: the critical-difference diagram (Demšar 2006, Fig. 1) and the
measure per stream. matplotlib's object API on the Agg canvas, as every figure of the project
(:mod:`foldstream.job.tools.plot`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from foldstream.job.tools.plot import _new_figure, literal
from foldstream.operators.stats.ranks import RankTests


def cliques(names: Sequence[str], ranks: Sequence[float], cd: float) -> list[tuple[int, int]]:
    """The groups of learners no two of which differ by Nemenyi's test: the maximal runs
    ``(first, last)`` of the learners sorted by rank whose ranks lie less than ``cd`` apart.

    >>> cliques(["a", "b", "c", "d"], [1.0, 1.5, 2.9, 3.1], 1.0)
    [(0, 1), (2, 3)]
    >>> cliques(["a", "b", "c"], [1.0, 1.6, 2.2], 1.0)
    [(0, 1), (1, 2)]
    """
    order = sorted(range(len(ranks)), key=lambda i: ranks[i])
    runs = []
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and ranks[order[end + 1]] - ranks[order[start]] < cd:
            end += 1
        if end > start and not (runs and runs[-1][1] >= end):
            runs.append((start, end))
    return runs


def cd_diagram(tests: RankTests, title: str):
    """The critical-difference diagram of ``tests``: an axis of ranks 1 (left, the best) to
    ``k``; each learner's name joined to its average rank, the better half to the left, the
    other to the right; a thick bar under the axis joins each group of learners that do not
    differ (:func:`cliques`); the critical difference drawn above the axis."""
    names, ranks = list(tests.ranks.learners), list(tests.ranks.ranks)
    k = len(names)
    order = sorted(range(k), key=lambda i: ranks[i])
    half = (k + 1) // 2
    rows = max(half, k - half)
    figure = _new_figure(figsize=(8.0, 1.2 + 0.3 * rows))
    ax = figure.add_subplot()
    low, high = 1, max(k, 2)
    ax.set_xlim(low - 1.9, high + 1.9)
    ax.set_ylim(-(rows * 0.55 + 0.5), 1.5)
    ax.axis("off")
    ax.plot([low, high], [0, 0], color="black", linewidth=1)
    for tick in range(low, high + 1):
        ax.plot([tick, tick], [0, 0.12], color="black", linewidth=1)
        ax.text(tick, 0.22, str(tick), ha="center", va="bottom", fontsize=9)
    if tests.nemenyi is not None:
        cd = tests.nemenyi.cd
        ax.plot([low, low + cd], [0.95, 0.95], color="black", linewidth=1.5)
        for end in (low, low + cd):
            ax.plot([end, end], [0.85, 1.05], color="black", linewidth=1)
        ax.text(low + cd / 2, 1.1, f"CD = {cd:.2f} (α = {tests.nemenyi.alpha:g})",
                ha="center", va="bottom", fontsize=9)
        groups = cliques(names, ranks, cd)
        for level, (first, last) in enumerate(groups):
            y = -0.25 - 0.22 * level
            ax.plot([ranks[order[first]] - 0.03, ranks[order[last]] + 0.03], [y, y],
                    color="black", linewidth=3, solid_capstyle="round")
    for position, i in enumerate(order):
        left = position < half
        row = position if left else k - 1 - position
        y = -(row + 1) * 0.55 - 0.2 * (tests.nemenyi is not None)
        x_end = low - 0.25 if left else high + 0.25
        ax.plot([ranks[i], ranks[i], x_end], [0, y, y], color="#475467", linewidth=0.9)
        ax.text(x_end + (-0.05 if left else 0.05), y,
                f"{literal(names[i])} ({ranks[i]:.2f})", ha="right" if left else "left",
                va="center", fontsize=9)
    ax.set_title(literal(title), fontsize=10)
    return figure


def per_stream(streams: Sequence[str], points: Mapping[str, Sequence[Any]], title: str):
    """Each learner's mean ± sd over folds (``points[learner][i]``, a value with ``mean`` and
    ``sd`` or ``None``) on each stream, side by side."""
    from matplotlib import colormaps

    learners = list(points)
    palette = colormaps["tab20"].colors
    figure = _new_figure(figsize=(max(7.0, 0.75 * len(streams) + 3.0), 4.2))
    ax = figure.add_subplot()
    width = 0.8 / max(1, len(learners))
    for j, learner in enumerate(learners):
        xs, ys, errors = [], [], []
        for i, value in enumerate(points[learner]):
            if value is None or value.mean is None:
                continue
            xs.append(i - 0.4 + width * (j + 0.5))
            ys.append(value.mean)
            errors.append(value.sd or 0.0)
        ax.errorbar(xs, ys, yerr=errors, fmt="o", markersize=3.5, linewidth=0.8,
                    color=palette[j % len(palette)], label=literal(learner))
    ax.set_xticks(range(len(streams)), [literal(s) for s in streams], rotation=35, ha="right",
                  fontsize=8.5)
    ax.set_title(literal(title), fontsize=10)
    ax.grid(axis="y", color="#e4e7ec", linewidth=0.6)
    ax.legend(fontsize=7.5, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    return figure

"""Figures of a run: ``foldstream plot METRICS.jsonl`` and :func:`plot_records`.

From the output records of docs/method.md §10 it draws, per stream:

* per measure, the mean over folds of every learner along the stream with the band its folds
  span (min to max), and the drifts the folds agree on (docs/method.md §16; a file without
  them: every fold's alarms) as ticks in a strip below (``<stream>-<measure>``);
* the window size along the stream, mean over folds per learner, band min to max
  (``<stream>-window_size``);
* per compared measure, the Wilcoxon and sign-test p-values of every pair on a log scale, with
  the line of the significance level alpha (``<stream>-pvalues``);
* with live verdicts on (docs/method.md §12), per pair the confidence interval for
  error(a) - error(b) along the stream, the zero line and the first decided position
  (``<stream>-verdicts``);
* with three or more learners, a critical difference diagram (Demšar 2006) per compared measure
  from the last ``ranking`` record (``<stream>-cd-<measure>``).

Figures are built with matplotlib's object API and its Agg canvas, never pyplot: nothing
depends on a display or on a global backend, and a figure is freed as soon as it is dropped.
The functions ``*_figure`` return :class:`matplotlib.figure.Figure` objects for inspection.
"""

from __future__ import annotations

import math
import os
import re
import sys
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from foldstream.job import exitcodes
from foldstream.job.checks import check_choices
from foldstream.job.terminal import inert
from foldstream.job.tools.records import RecordReader, StreamRecords, describe_window, \
    group_by_stream
from foldstream.operators.stages.aggregator import COMPARE
from foldstream.operators.records.outputs import MeasuresRecord, OutputRecord, RankingRecord
from foldstream.operators.records.base import Record
from foldstream.operators.stats.sequential import UNDECIDED
from foldstream.job.verdicts import ANY_TIME, BETTER, live_verdict_text


DEFAULT_MEASURES = COMPARE
FORMATS = ("png", "svg", "pdf")
FIGSIZE = (10.0, 5.6)
TITLE_CHARACTERS = 80
"""The most characters of a line of a small axes title that fits the width of :data:`FIGSIZE`
beside its legend; a longer title is wrapped."""
DPI = 130
BAND_ALPHA = 0.18
MAX_LEARNERS = 200
"""The most learners of one stream that ``plot`` and ``report`` draw: a figure of more has no
readable legend or colour, and its cost grows with the learners times the pairs. A stream with
more is refused with a message naming the limit."""


def _too_many(stream: str, learners: str) -> ValueError:
    return ValueError(f"stream {stream!r} has {learners} learners: plot and report draw at "
                      f"most {MAX_LEARNERS} (MAX_LEARNERS); select the learners first "
                      f"(Results.records, or grep the metrics file)")


def check_learner_count(data: StreamRecords) -> None:
    """Refuse (``ValueError``, naming the limit) a stream of more than :data:`MAX_LEARNERS`
    learners, before anything is drawn."""
    if len(data.measures) > MAX_LEARNERS:
        raise _too_many(data.stream, f"{len(data.measures):,}")


def bounded_learners(records: Iterable[Any]) -> Iterator[Any]:
    """The records, in order, refusing (``ValueError``) as soon as a stream's ``measures``
    records name more than :data:`MAX_LEARNERS` learners: a file of many learners is refused
    after its first few hundred records, not after reading it all.

    >>> from foldstream.operators.records.outputs import AlarmRecord
    >>> len(list(bounded_learners([AlarmRecord(stream="s", position=1, learner="a", fold=0,
    ...     detector="adwin", quantity="loss")])))
    1
    """
    learners: dict[Any, set] = {}
    for record in records:
        if isinstance(record, MeasuresRecord):
            seen = learners.setdefault(record.stream, set())
            seen.add(record.learner)
            if len(seen) > MAX_LEARNERS:
                raise _too_many(record.stream, f"more than {MAX_LEARNERS}")
        yield record


# ------------------------------------------------------------------------------------- data
def _number(value: Any) -> float:
    """A value to draw: JSON ``null`` (undefined) becomes NaN, which leaves a gap."""
    return math.nan if value is None else float(value)


def _spread(values: Sequence[Any]) -> tuple[float, float]:
    """Min and max of the defined per-fold values (NaN, NaN when none is)."""
    defined = [float(v) for v in values if v is not None]
    return (min(defined), max(defined)) if defined else (math.nan, math.nan)


def _series(records: list[MeasuresRecord], pick
            ) -> tuple[list[int], list[float], list[float], list[float]]:
    """Positions, mean, min and max along the stream of ``pick(record) -> (mean, folds)``."""
    positions, means, lows, highs = [], [], [], []
    for record in records:
        mean, folds = pick(record)
        low, high = _spread(folds)
        positions.append(record.position)
        means.append(_number(mean))
        lows.append(low)
        highs.append(high)
    return positions, means, lows, highs


# ---------------------------------------------------------------------------------- helpers
def literal(text: str) -> str:
    """A text for a figure (title, label, legend entry, annotation) that matplotlib shows as
    typed: every ``$`` escaped, so that a stream or learner named ``a$b$c`` is not typeset as
    math. Every figure text with user text in it goes through it, in ``plot``, ``report`` and
    ``experiment``.

    >>> literal("a$b$c")
    'a\\\\$b\\\\$c'
    >>> from matplotlib.text import Text
    >>> Text(text=literal("a$b$c"))._preprocess_math(literal("a$b$c"))  # what is drawn
    ('a$b$c', False)
    """
    return str(text).replace("$", r"\$")


def _new_figure(figsize: tuple[float, float] = FIGSIZE, **kwargs):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=figsize, layout="constrained", **kwargs)
    FigureCanvasAgg(figure)  # the Agg canvas: savefig needs no display and no pyplot
    return figure


def _colors(learners: Sequence[str]) -> dict[str, Any]:
    """One colour per learner, the same in every figure of a run."""
    from matplotlib import colormaps

    palette = colormaps["tab10"].colors
    return {name: palette[i % len(palette)] for i, name in enumerate(learners)}


def _setup(record: MeasuresRecord) -> str:
    """The evaluation a ``measures`` record comes from, for titles."""
    folds = "1 fold" if record.folds == 1 else f"{record.folds} folds"
    how = "prequential" if record.prequential else "holdout"
    return f"{record.mode}, {folds}, {how}, window {describe_window(record.window)}"


def _finish_axes(ax, ylabel: str) -> None:
    ax.set_ylabel(literal(ylabel))
    ax.grid(True, alpha=0.35)
    ax.margins(x=0.01)


def _legend(ax, title: str | None = None) -> None:
    """The legend outside the axes on the right, where it hides no curve."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title=title,
              fontsize="small", title_fontsize="small")


# ---------------------------------------------------------------------------------- figures
def measure_figure(data: StreamRecords, measure: str):
    """Mean over folds of ``measure`` per learner, its min-max band, and the alarms.

    The top axes hold exactly one line per learner (the mean) and one band per learner; the
    strip below marks every alarm of a learner (any fold, any detector) at its position.

    Returns
    -------
    matplotlib.figure.Figure or None
        ``None`` when no ``measures`` record holds ``measure``.
    """
    # A class first seen mid-stream gets its recall[<label>] from then on only.
    learners = [name for name, recs in data.measures.items()
                if any(measure in r.values for r in recs)]
    if not learners:
        return None
    colors = _colors(data.learners)
    figure = _new_figure()
    ax, strip = figure.subplots(2, 1, sharex=True, height_ratios=(5, 1))
    drawn = []
    for name in learners:
        positions, means, lows, highs = _series(data.measures[name], _measure_picker(measure))
        ax.fill_between(positions, lows, highs, color=colors[name], alpha=BAND_ALPHA, lw=0)
        ax.plot(positions, means, color=colors[name], lw=1.6, label=literal(name))
        drawn.append((means, lows, highs))
    clipped = _robust_ylim(ax, drawn)
    k = data.first.folds
    ax.set_title(literal(f"{measure} on stream {data.stream}\n{_setup(data.first)}"),
                 fontsize="medium")
    _finish_axes(ax, measure)
    band = "band: min-max of folds" + (",\nclipped to the axes" if clipped else "")
    _legend(ax, title=f"mean over {k} folds;\n{band}" if k > 1 else None)
    _alarm_strip(strip, data, colors)
    return figure


def _measure_picker(measure: str):
    """``record -> (mean, folds)`` of ``measure``; undefined where a record lacks it."""
    def pick(record: MeasuresRecord) -> tuple[Any, list[Any]]:
        value = record.value(measure)
        return (None, []) if value is None else (value.mean, value.folds)
    return pick


def _robust_ylim(ax, drawn: list[tuple[list[float], list[float], list[float]]]) -> bool:
    """Fit the y axis to the mean curves and most of the bands, not to a single outlying fold.

    A fold whose window was just reset by ADWIN holds a handful of examples and can reach a
    kappa of -6 while the means stay near 0.7; scaling to it would flatten every curve. The
    axis spans the means and the 5th to 95th percentiles of the band edges. Returns whether a
    band is cut off.
    """
    import numpy as np

    means = np.array([v for m, _, _ in drawn for v in m], dtype=float)
    lows = np.array([v for _, lo, _ in drawn for v in lo], dtype=float)
    highs = np.array([v for _, _, hi in drawn for v in hi], dtype=float)
    if not np.isfinite(means).any() or not np.isfinite(lows).any():
        return False
    bottom = min(np.nanmin(means), np.nanpercentile(lows, 5))
    top = max(np.nanmax(means), np.nanpercentile(highs, 95))
    pad = 0.05 * (top - bottom) or 0.05
    bottom, top = bottom - pad, top + pad
    if np.nanmin(lows) >= bottom and np.nanmax(highs) <= top:
        return False  # the matplotlib default fits everything anyway
    ax.set_ylim(bottom, top)
    return True


def _alarm_strip(ax, data: StreamRecords, colors: dict[str, Any]) -> None:
    """Ticks at the alarms' positions, one row per learner; scatter, so the measure axes keep
    one line per learner."""
    rows = {name: i for i, name in enumerate(data.learners)}
    # drifts (the changes the folds agree on, docs/method.md §16) lead; a file without them
    # shows each fold's alarms
    events, what = (data.drifts, "drifts") if data.drifts else (data.alarms, "alarms")
    for name in data.learners:
        xs = [a.position for a in events if a.learner == name]
        if xs:
            ax.scatter(xs, [rows[name]] * len(xs), marker="|", s=60, color=colors[name],
                       linewidths=0.8)
    ax.set_yticks(range(len(rows)), [literal(name) for name in rows], fontsize="x-small")
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.invert_yaxis()
    ax.set_ylabel(f"{what}\n({len(events)})", fontsize="small")
    ax.set_xlabel(literal(f"position in stream {data.stream} (examples)"))
    ax.grid(True, axis="x", alpha=0.35)


def window_size_figure(data: StreamRecords):
    """The window size along the stream: mean over folds per learner, band min to max."""
    colors = _colors(data.learners)
    figure = _new_figure()
    ax = figure.subplots()
    for name, records in data.measures.items():
        positions, means, lows, highs = _series(
            records, lambda r: (r.window_mean, r.window_size))
        ax.fill_between(positions, lows, highs, color=colors[name], alpha=BAND_ALPHA, lw=0)
        ax.plot(positions, means, color=colors[name], lw=1.6, label=literal(name))
    ax.set_title(literal(f"window size on stream {data.stream}\n{_setup(data.first)}"),
                 fontsize="medium")
    ax.set_xlabel(literal(f"position in stream {data.stream} (examples)"))
    _finish_axes(ax, "examples in the window")
    _legend(ax, title="mean over folds;\nband: min-max of folds" if data.first.folds > 1 else None)
    return figure


def pvalues_figure(data: StreamRecords):
    """Wilcoxon (solid) and sign-test (dashed) p-values per pair, log scale, one axes per
    compared measure, with the alpha line. An undefined p-value leaves a gap.

    Returns
    -------
    matplotlib.figure.Figure or None
        ``None`` without ``comparison`` records (a single learner).
    """
    measures = list(dict.fromkeys(key[0] for key in data.comparisons))
    if not measures:
        return None
    pairs = list(dict.fromkeys(key[1:] for key in data.comparisons))
    colors = _colors([f"{a} vs {b}" for a, b in pairs])
    figure = _new_figure((FIGSIZE[0], 2.2 + 2.6 * len(measures)))
    axes = figure.subplots(len(measures), 1, sharex=True, squeeze=False)[:, 0]
    alpha = data.alpha
    for ax, measure in zip(axes, measures):
        for a, b in pairs:
            series = data.comparisons.get((measure, a, b), [])
            positions = [r.position for r in series]
            color = colors[f"{a} vs {b}"]
            ax.plot(positions, [_number(r.wilcoxon["p_value"]) for r in series], color=color,
                    lw=1.5, label=literal(f"{a} vs {b}: Wilcoxon"))
            ax.plot(positions, [_number(r.sign["p_value"]) for r in series], color=color,
                    lw=1.2, ls="--", label=literal(f"{a} vs {b}: sign"))
        if alpha is not None:
            ax.axhline(alpha, color="crimson", lw=1.0, ls=":", label=f"α = {alpha}")
        ax.set_yscale("log")
        ax.set_title(literal(measure), fontsize="medium", loc="left")
        _finish_axes(ax, "p-value (log)")
    _legend(axes[0])  # the same pairs and styles in every axes: one legend
    figure.suptitle(literal(
        f"paired tests over {data.first.folds} folds on stream {data.stream}: below α, "
        f"the pair differs significantly\n{_setup(data.first)}"), fontsize="medium")
    axes[-1].set_xlabel(literal(f"position in stream {data.stream} (examples)"))
    return figure


def first_decided(data: StreamRecords, measure: str, a: str, b: str) -> int | None:
    """The first position at which the live verdict of ``a`` vs ``b`` on ``measure`` was
    decided: from the ``verdict`` records, else from the comparisons' ``sequential`` objects;
    ``None`` while it never was.

    >>> from foldstream.operators.records.outputs import VerdictRecord
    >>> data = StreamRecords("s", verdicts=[VerdictRecord(stream="s", position=700, a="x",
    ...     b="y", measure="accuracy", verdict="b_better", previous="undecided", lower=0.01,
    ...     upper=0.2, n=700, alpha=0.05)])
    >>> first_decided(data, "accuracy", "x", "y"), first_decided(data, "kappa", "x", "y")
    (700, None)
    """
    for record in data.verdicts:
        if (record.measure, record.a, record.b) == (measure, a, b) \
                and record.verdict != UNDECIDED:
            return record.position
    for record in data.comparisons.get((measure, a, b), []):
        live = record.live
        if live is not None and live.verdict != UNDECIDED:
            return record.position
    return None


def verdicts_figure(data: StreamRecords):
    """The live verdicts (docs/method.md §12): per pair, the confidence interval for
    ``Delta_n = error(a) - error(b)`` along the stream (a band, valid at every position at
    once), the observed mean difference ``S_n / n``, the zero line, and a vertical mark at the
    first position where the verdict was decided (:func:`first_decided`). Above zero, B did
    better; below, A. Each axes is titled with the verdict at the last report, in
    :func:`~foldstream.job.verdicts.sequential_text`'s words.

    Returns
    -------
    matplotlib.figure.Figure or None
        ``None`` when no ``comparison`` record carries a ``sequential`` object (live verdicts
        off, or a single learner).
    """
    keys = [key for key, series in data.comparisons.items()
            if any(r.sequential for r in series)]
    if not keys:
        return None
    colors = _colors([f"{a} vs {b}" for _, a, b in keys])
    figure = _new_figure((FIGSIZE[0], 1.6 + 2.9 * len(keys)))
    axes = figure.subplots(len(keys), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (measure, a, b) in zip(axes, keys):
        series = [r for r in data.comparisons[measure, a, b] if r.sequential]
        seq = [r.live for r in series]
        positions = [r.position for r in series]
        color = colors[f"{a} vs {b}"]
        confidence = 1 - seq[-1].alpha
        ax.fill_between(positions, [_number(q.lower) for q in seq],
                        [_number(q.upper) for q in seq], color=color, alpha=0.3, lw=0,
                        label=f"interval: {confidence:.4g} confidence,\nat every position at once")
        ax.plot(positions, [_number(q.estimate) for q in seq],
                color=color, lw=1.5, label="observed mean difference")
        ax.axhline(0.0, color="black", lw=0.9, label="no difference")
        decided = first_decided(data, measure, a, b)
        if decided is not None:
            ax.axvline(decided, color="crimson", lw=1.2, ls="--",
                       label=f"first decided at position {decided:,}")
        for y, va, name in ((0.97, "top", b), (0.03, "bottom", a)):
            ax.text(0.99, y, literal(f"{'above' if name == b else 'below'} 0: "
                                     f"{BETTER.format(name=name)}"),
                    transform=ax.transAxes, va=va, ha="right", fontsize="small", color="dimgray")
        last = series[-1]
        words = [live_verdict_text(last.sequential, a, b)]  # the wording reads the JSON object
        if last.regime is not None:
            words.append(live_verdict_text(last.sequential["regime"], a, b))
            regime = [q for q in (r.regime for r in series) if q is not None]
            starts = sorted({q.since for q in regime if q.since and q.segment > 1})
            for x in starts:  # where the regime verdict restarted (docs/method.md §15)
                ax.axvline(x, color="gray", lw=0.6, ls=":")
        # wrapped to the axes' width: a long verdict is shown whole, not cut at the edge
        ax.set_title(literal("\n".join(textwrap.wrap(
            f"{measure}, {a} vs {b}, at position {last.position:,}: " + "; ".join(words),
            TITLE_CHARACTERS))), fontsize="small", loc="left")
        _finish_axes(ax, f"error({a}) − error({b})")
        _legend(ax)
    figure.suptitle(literal(f"live verdicts on stream {data.stream}: {ANY_TIME} "
                            f"(docs/method.md §12)\n{_setup(data.first)}"), fontsize="medium")
    axes[-1].set_xlabel(literal(f"position in stream {data.stream} (examples)"))
    return figure


def cliques(ranks: Sequence[float], cd: float) -> list[tuple[int, int]]:
    """Maximal runs ``(i, j)`` of the sorted ranks whose spread ``ranks[j] - ranks[i]`` is less
    than ``cd``: the groups a CD diagram joins with a bar (no significant difference inside).

    >>> cliques([1.0, 1.5, 2.9, 3.2], 1.0)
    [(0, 1), (2, 3)]
    >>> cliques([1.0, 2.0, 3.0], 0.5)
    []
    """
    found: list[tuple[int, int]] = []
    for i in range(len(ranks)):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] - ranks[i] < cd:
            j += 1
        if j > i and not any(a <= i and j <= b for a, b in found):
            found.append((i, j))
    return found


def cd_figure(ranking: RankingRecord, alpha: float | None = None):
    """A critical difference diagram (Demšar 2006) from a ``ranking`` record.

    The average ranks lie on an axis from 1 (best, left) to L; every learner is labelled, the
    better half on the left, the rest on the right; a bar above shows the length of the
    Nemenyi critical difference, and thick bars below join learners whose average ranks differ
    by less than it (no significant difference between them).

    Returns
    -------
    matplotlib.figure.Figure or None
        ``None`` with fewer than three learners, or when the ranks or the critical difference
        are undefined.
    """
    names, ranks, cd = ranking.learners, ranking.average_ranks, ranking.critical_difference
    if len(names) < 3 or cd is None or any(r is None for r in ranks):
        return None
    order = sorted(range(len(names)), key=lambda i: ranks[i])
    names = [names[i] for i in order]
    ranks = [float(ranks[i]) for i in order]
    n = len(names)
    half = (n + 1) // 2
    groups = cliques(ranks, cd)
    height = 1.6 + 0.32 * max(half, n - half) + 0.18 * len(groups)
    figure = _new_figure((8.0, height))
    ax = figure.subplots()
    ax.set_axis_off()
    low, high = 1, max(n, math.ceil(ranks[-1]))
    ax.set_xlim(low - 0.6 - 0.35 * n / 3, high + 0.6 + 0.35 * n / 3)
    label_rows = max(half, n - half)
    ax.set_ylim(-(label_rows + 0.4 + 0.35 * len(groups)), 2.1)

    # the rank axis, 1 (best) on the left
    ax.plot([low, high], [0, 0], color="black", lw=1.2)
    for r in range(low, high + 1):
        ax.plot([r, r], [0, 0.18], color="black", lw=1.0)
        ax.text(r, 0.3, str(r), ha="center", va="bottom", fontsize="small")
    # the CD bar
    ax.plot([low, low + cd], [1.35, 1.35], color="black", lw=2.0)
    for x in (low, low + cd):
        ax.plot([x, x], [1.2, 1.5], color="black", lw=1.0)
    ax.text(low + cd / 2, 1.6, f"CD = {cd:.3f}", ha="center", va="bottom", fontsize="small")
    # learners: an elbow from the rank down to the label
    for i, (name, rank) in enumerate(zip(names, ranks)):
        left = i < half
        row = i if left else n - 1 - i
        y = -(row + 1.0) - 0.35 * len(groups)
        x_end = ax.get_xlim()[0] + 0.15 if left else ax.get_xlim()[1] - 0.15
        ax.plot([rank, rank, x_end], [0, y, y], color="dimgray", lw=0.9)
        ax.text(x_end, y + 0.08, literal(f"{name} ({rank:.2f})"), ha="left" if left else "right",
                va="bottom", fontsize="small")
    # cliques: learners not significantly different
    for g, (i, j) in enumerate(groups):
        y = -0.3 - 0.35 * g
        ax.plot([ranks[i] - 0.04, ranks[j] + 0.04], [y, y], color="black", lw=3.5,
                solid_capstyle="round")
    level = f"Nemenyi, α = {alpha}" if alpha is not None else "Nemenyi"
    friedman = ranking.friedman["p_value"]
    friedman = f"; Friedman p = {friedman:.3g}" if friedman is not None else ""
    ax.set_title(literal(f"average ranks of {ranking.measure} over folds, stream "
                         f"{ranking.stream} at position {ranking.position}\n(1 = best; bars "
                         f"join learners not significantly different, {level}{friedman})"),
                 fontsize="medium")
    return figure


# ------------------------------------------------------------------------------------ files
def _safe(name: str) -> str:
    """A file-name part: ``recall[1]`` becomes ``recall_1_``."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)


def stream_figures(data: StreamRecords, measures: Sequence[str]) -> dict[str, Any]:
    """Every figure of one stream, by file stem (``<stream>-<what>``); a stream of more than
    :data:`MAX_LEARNERS` learners is refused (``ValueError``)."""
    check_learner_count(data)
    stem = _safe(data.stream)
    figures: dict[str, Any] = {}
    for measure in measures:
        figure = measure_figure(data, measure)
        if figure is None:
            print(inert(f"plot: stream {data.stream} has no measure {measure!r}; skipped"),
                  file=sys.stderr)
            continue
        figures[f"{stem}-{_safe(measure)}"] = figure
    figures[f"{stem}-window_size"] = window_size_figure(data)
    pvalues = pvalues_figure(data)
    if pvalues is not None:
        figures[f"{stem}-pvalues"] = pvalues
    verdicts = verdicts_figure(data)
    if verdicts is not None:
        figures[f"{stem}-verdicts"] = verdicts
    for measure, ranking in data.rankings.items():
        cd = cd_figure(ranking, data.alpha)
        if cd is not None:
            figures[f"{stem}-cd-{_safe(measure)}"] = cd
    return figures


def plot_records(records: Iterable[Record | OutputRecord], out_dir: str | os.PathLike[str] = "plots",
                 measures: Sequence[str] = DEFAULT_MEASURES,
                 formats: Sequence[str] = ("png",)) -> list[Path]:
    """Draw every figure of a run's records and write them to ``out_dir``.

    Parameters
    ----------
    records : iterable of dict or OutputRecord
        Output records (docs/method.md §10), typed or as JSON objects, e.g. from
        :func:`foldstream.job.tools.records.read_records`.
    out_dir : path
        The folder; created if missing.
    measures : sequence of str
        The measures that get a figure of their own.
    formats : sequence of str
        File formats among ``png``, ``svg``, ``pdf``.

    Returns
    -------
    list of Path
        The files written, in order.

    Raises
    ------
    ValueError
        On an unknown format, a measure that no stream's records hold, or when the records hold
        no ``measures`` record.
    """
    _check_formats(formats)
    streams = group_by_stream(records)
    if not streams:
        raise ValueError("no measures records to plot")
    for data in streams.values():
        check_learner_count(data)
    check_choices(measures, sorted({name for data in streams.values()  # in some stream at least
                                    for series in data.measures.values() for record in series
                                    for name in record.values}), "measure")
    written: list[Path] = []
    for data in streams.values():
        written += save_figures(stream_figures(data, measures), out_dir, formats)
    return written


def _check_formats(formats: Sequence[str]) -> None:
    check_choices(formats, FORMATS, "format")


def save_figures(figures: dict[str, Any], out_dir: str | os.PathLike[str],
                 formats: Sequence[str] = ("png",)) -> list[Path]:
    """Write figures by file stem (:func:`stream_figures`) as ``<out_dir>/<stem>.<format>``;
    the folder is created if missing. Returns the files written, in order."""
    _check_formats(formats)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for stem, figure in figures.items():
        for fmt in formats:
            path = out / f"{stem}.{fmt}"
            figure.savefig(path, dpi=DPI, format=fmt)
            written.append(path)
    return written


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(args) -> int:
    """``foldstream plot METRICS [--out DIR] [--measures a,b] [--format png,svg]``."""
    from foldstream.connectors.kafka import KafkaUnavailable

    try:
        records = list(bounded_learners(RecordReader(args.metrics, typed=True)))
        written = plot_records(records, args.out, _split(args.measures), _split(args.formats))
    except (OSError, ValueError, KafkaUnavailable) as error:
        print(f"error: {inert(error, lines=True)}", file=sys.stderr)
        return exitcodes.UNUSABLE
    for path in written:
        print(inert(path))
    return exitcodes.OK

"""What a person sees in the terminal: a progress bar while a run goes, tables when it ends.

The compact summary (:mod:`.compact`) is drawn here, and with ``--explain`` the tables in
words; the verdict's markup and the table of paired tests live here once;
``foldstream watch`` (:mod:`.watch`) shows its live tables with them. Every text a user typed
(a stream, a learner, a path, a reason) goes into rich markup through :func:`typed`, so that
``[bold]x[/bold]`` or ``[/]`` in a name is shown as typed, never read as markup, and a control
character in it is shown, never executed (:func:`foldstream.job.terminal.inert`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any, Callable, Iterator

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, \
    TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from foldstream.job.terminal import inert
from foldstream.job.tools.compact import Block, CompactSummary, compact_summary, fmt, fmt_p
from foldstream.operators.records.outputs import ComparisonRecord, RankingRecord, \
    SummaryRecord
from foldstream.operators.records.reading import as_typed
from foldstream.operators.records.base import Record
from foldstream.operators.stats.sequential import UNDECIDED
from foldstream.job.verdicts import (
    FoldVerdict, fold_verdict, live_verdict_text, scope_disagreement
)

SUMMARY_MEASURES = ("accuracy", "kappa", "kappa_m", "kappa_per", "kappa_plus")


@contextmanager
def progress_bar(total: int | None, enabled: bool, console: Console) -> Iterator[Callable[[int], None]]:
    """Yield ``update(n_read)``; draws a bar (or a counter when the total is unknown)."""
    if not enabled:
        yield lambda n: None
        return
    columns = [SpinnerColumn(), TextColumn("[bold]evaluating"), BarColumn(), MofNCompleteColumn(),
               TextColumn("examples"), TimeElapsedColumn()]
    if total:
        columns.append(TimeRemainingColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("run", total=total)
        yield lambda n: progress.update(task, completed=n)


def typed(value: Any, lines: bool = False) -> str:
    """A user's text (a name, a path, a reason, a value) as rich markup that shows it as typed.

    Control characters are made visible (:func:`~foldstream.job.terminal.inert`; newlines
    kept with ``lines``, for a message of several lines). Markup is escaped, and so are emoji
    codes: rich shows ``:smile:`` as an emoji and has no escape for it, so a colon that could
    open one is followed by an empty style (``[none]``), which splits the code without adding
    a character.

    >>> typed("[bold]x[/bold]"), typed("[/]"), typed(3)
    ('\\\\[bold]x\\\\[/bold]', '\\\\[/]', '3')
    >>> from rich.text import Text
    >>> Text.from_markup(typed("a [red]b[/] [/]")).plain
    'a [red]b[/] [/]'
    >>> Text.from_markup(typed("stream :smile: at :1:")).plain
    'stream :smile: at :1:'
    >>> typed("error: no such file")  # a colon that opens no code is left alone
    'error: no such file'
    >>> typed("s\\x1b]0;title\\x07"), typed("a\\nb"), typed("a\\nb", lines=True)
    ('s\\\\x1b]0;title\\\\x07', 'a\\\\nb', 'a\\nb')
    """
    return _EMOJI_OPENING.sub(":[none][/none]", escape(inert(value, lines)))


#: a colon that rich could read as the start of an emoji code (``:name:``, no space between)
_EMOJI_OPENING = re.compile(r":(?=[^\s:]+:)")


def verdict_markup(verdict: FoldVerdict) -> str:
    """A verdict's text as rich markup: green when it names the better learner.

    >>> from foldstream.job.verdicts import FoldVerdict
    >>> verdict_markup(FoldVerdict("nb", ("sign test",), "nb better (…)"))
    '[green]nb better (…)[/]'
    """
    text = typed(verdict.text)
    return f"[green]{text}[/]" if verdict.better is not None else text


def measures_table(summary: SummaryRecord) -> Table:
    """Per learner, mean ± std over folds of the headline measures at the end of the stream."""
    table = Table(title=f"stream {typed(summary.stream)}: {summary.position:,} examples, "
                        f"last window (mean ± std over folds)")
    table.add_column("learner", style="bold")
    for name in SUMMARY_MEASURES:
        table.add_column(name, justify="right")
    for record in summary.measures:
        cells = []
        for name in SUMMARY_MEASURES:
            value = record.value(name)
            cells.append(f"{fmt(None if value is None else value.mean)}±"
                         f"{fmt(None if value is None else value.std)}")
        table.add_row(typed(record.learner), *cells)
    return table


def sequential_markup(record: Record, regime: bool = False) -> str:
    """The live verdict of a ``comparison`` record (its ``sequential`` object, docs/method.md
    §12, or with ``regime`` the one inside it, §15) as rich markup, green when decided; empty
    when the record carries none.

    The words, with what the verdict covers, are
    :func:`~foldstream.job.verdicts.live_verdict_text`'s.

    >>> record = {"a": "ht", "b": "nb", "sequential": {"verdict": "b_better", "lower": 0.0067,
    ...           "upper": 0.0333, "n": 900, "sum": 18.0, "variance": 20.0, "alpha": 0.05}}
    >>> sequential_markup(record)  # doctest: +NORMALIZE_WHITESPACE
    '[green]nb better over the whole stream (900 examples) (models, any time: error(ht) -
     error(nb) in [0.0067, 0.0333])[/]'
    >>> sequential_markup({"a": "ht", "b": "nb"}), sequential_markup(record, regime=True)
    ('', '')
    """
    live = record.get("sequential")
    if live and regime:
        live = live.get("regime")
    if not live:
        return ""
    text = typed(live_verdict_text(live, record["a"], record["b"]))
    return text if live["verdict"] == UNDECIDED else f"[green]{text}[/]"


def comparisons_table(comparisons: Sequence[Record], measures: Mapping[str, Record] | None = None,
                      title: str = "paired tests over folds at the last report") -> Table:
    """The paired fold tests of ``comparison`` records, one row each, with their verdict.

    ``measures`` (the latest ``measures`` record per learner) gives a rejecting Wilcoxon test
    its direction (:func:`~foldstream.job.verdicts.fold_verdict`). When a record carries
    a live verdict (``sequential``, docs/method.md §12), a column shows it with its interval
    (:func:`sequential_markup`), and one more the regime verdict (§15) when the records carry
    it; each verdict names the question it answers and the examples it covers. Without live
    verdicts the columns are left out.
    """
    alpha = comparisons[0]["alpha"] if comparisons else 0.05
    live = any(record.get("sequential") for record in comparisons)
    regime = any((record.get("sequential") or {}).get("regime") for record in comparisons)
    table = Table(title=f"{title} (α = {typed(alpha)})", title_justify="left")
    columns = ["measure", "a vs b", "Wilcoxon p", "sign p", "wins", "verdict"]
    extra = (["live verdict, whole stream"] if live else []) + \
        (["live verdict, since the last change"] if regime else [])
    for column in columns + extra:
        table.add_column(column, justify="right" if column.endswith(("p", "wins")) else "left")
    for record in comparisons:
        w, s = record["wilcoxon"], record["sign"]
        cells = [typed(record["measure"]), typed(f"{record['a']} vs {record['b']}"),
                 fmt_p(w["p_value"]), fmt_p(s["p_value"]), typed(f"{s['wins_a']}:{s['wins_b']}"),
                 verdict_markup(fold_verdict(record, measures))]
        table.add_row(*cells, *([sequential_markup(record)] if live else []),
                      *([sequential_markup(record, regime=True)] if regime else []))
    return table


def disagreements(comparisons: Sequence[Record],
                  measures: Mapping[str, Record] | None = None) -> list[str]:
    """The sentences of the comparisons whose verdicts' scopes point different ways
    (:func:`~foldstream.job.verdicts.scope_disagreement`), as plain text."""
    found = (scope_disagreement(record, measures) for record in comparisons)
    return [f"{record['a']} vs {record['b']} ({record['measure']}): {text}"
            for record, text in zip(comparisons, found) if text]


DRIFT_EVALUATION_COLUMNS = ("learner", "detector", "of", "alarms", "found", "delay mean",
                            "delay median", "false per 10k", "precision", "recall", "F1",
                            "F1 periodic", "F1 random")
"""The columns of the compact table of ``drift_evaluation`` records (docs/method.md §19): the
detector's scores (changes found of those there were, over the folds; mean and median delay;
false alarms per 10,000 examples; precision, recall, F1), then the F1 of the two baselines with
its alarm count, beside it."""


def drift_evaluation_row(record: Record) -> tuple[str, ...]:
    """A ``drift_evaluation`` record's row of :data:`DRIFT_EVALUATION_COLUMNS`, as plain text
    (each renderer escapes it its own way); ``detected`` is of the (fold, change) pairs.

    >>> from foldstream.operators.stats.drifteval import score
    >>> s = score([[1100, 3000]], [1000], 4000, 500).as_record()
    >>> drift_evaluation_row({"learner": "nb", "detector": "adwin", "of": "drifts", "folds": 1,
    ...                       "changes": [1000], "scores": s, "periodic": s, "random": s})
    ('nb', 'adwin', 'drifts', '2', '1/1', '100', '100', '2.50', '0.500', '1.000', '0.667', '0.667', '0.667')
    """
    s = record["scores"]
    return (str(record["learner"]), str(record["detector"]), str(record["of"]),
            str(s["alarms"]), f"{s['detected']}/{record['folds'] * len(record['changes'])}",
            fmt(s["delay_mean"], 0), fmt(s["delay_median"], 0), fmt(s["false_alarms_per_10k"], 2),
            fmt(s["precision"]), fmt(s["recall"]), fmt(s["f1"]),
            fmt(record["periodic"]["f1"]), fmt(record["random"]["f1"]))


def drift_evaluation_table(records: Sequence[Record]) -> Table:
    """The detectors scored against the known changes of a stream (``drift_evaluation``
    records, their JSON objects), one row each (:func:`drift_evaluation_row`)."""
    first = records[0]
    table = Table(title=f"detectors against the known changes {typed(first['changes'])}, "
                        f"window {first['window']}", title_justify="left", box=box.SIMPLE_HEAD,
                  collapse_padding=True, pad_edge=False,
                  caption="baselines: as many alarms as the detector, periodic or random",
                  caption_justify="left")
    for column in DRIFT_EVALUATION_COLUMNS:  # the numbers' headings on two lines: narrow
        table.add_column(column.replace(" ", "\n", 1), justify="left" if column in (
            "learner", "detector", "of") else "right")
    for record in records:
        table.add_row(*map(typed, drift_evaluation_row(record)))
    return table


def block_table(block: Block, width: int) -> Table:
    """A compact table (:class:`~foldstream.job.tools.compact.Block`) in ``width`` columns:
    the least important columns are left out until the rest fit, and no cell wraps."""
    table = Table(box=None, padding=(0, 1), pad_edge=False, show_edge=False,
                  header_style="bold")
    kept = block.fitting(width)
    for column in kept:
        table.add_column(typed(column.header, lines=True),
                         justify="right" if column.numeric else "left", no_wrap=True,
                         min_width=column.width)
    for row in zip(*(column.cells for column in kept)):
        table.add_row(*map(typed, row))
    return table


def print_compact(console: Console, compact: CompactSummary) -> None:
    """The compact summary of a stream on ``console``, fitted to its width."""
    width = console.width
    show = partial(console.print, highlight=False)  # a name's digits stay as typed
    show(f"[bold]{typed(compact.head)}[/]")
    show(block_table(compact.learners, width))
    if compact.learners.legend:
        show(f"[dim]{typed(compact.learners.legend)}[/]")
    for block in compact.pairs:
        show(block_table(block, width))
    for line in compact.same:
        show(typed(line))
    for block in compact.pairs:
        if block.legend:
            show(f"[dim]{typed(block.legend)}[/]")
    for line in compact.notes:
        show(typed(line))
    show(typed(compact.tail))


def print_summary(console: Console, summaries: Sequence[SummaryRecord | Record],
                  last_comparisons: Mapping[str, Sequence[ComparisonRecord | Record]],
                  last_rankings: Mapping[str, Sequence[RankingRecord | Record]] | None = None,
                  drift_evaluations: Mapping[str, Sequence[Record]] | None = None,
                  explain: bool = False) -> None:
    """The final tables of the ``summary`` records and each stream's last ``comparison`` and
    ``ranking`` records (typed, or their JSON objects): the compact summary, or with
    ``explain`` the tables whose cells say in words what each verdict covers; then the
    stream's ``drift_evaluation`` records (JSON), if any."""
    for summary in map(as_typed, summaries):
        comparisons = [as_typed(c).as_dict() for c in last_comparisons.get(summary.stream, [])]
        if not explain:
            rankings = [as_typed(r).as_dict()
                        for r in (last_rankings or {}).get(summary.stream, [])]
            print_compact(console, compact_summary(summary, comparisons, rankings))
        else:
            console.print(measures_table(summary))
            if comparisons:  # the verdicts' wording reads the records' JSON objects
                measures = {record.learner: record.as_dict() for record in summary.measures}
                console.print(comparisons_table(comparisons, measures))
                for sentence in disagreements(comparisons, measures):
                    console.print(typed(sentence))
            console.print(typed(
                f"{summary.examples_read:,} records read, {summary.examples_rejected:,} rejected, "
                f"{summary.wall_time_s:.1f} s ({summary.examples_per_second or 0:,.0f} examples/s)"
            ))
        scored = (drift_evaluations or {}).get(summary.stream)
        if scored:
            console.print(drift_evaluation_table(scored))
        warning = positive_class_warning(summary.as_dict())
        if warning:
            console.print(f"[yellow]warning:[/] {typed(warning)}")


def positive_class_warning(summary: Record) -> str | None:
    """The warning of a summary whose ``evaluation.positive_class`` matched no label of the
    stream (its ``positive_class_not_seen`` field), else ``None``.

    >>> positive_class_warning({"stream": "elec", "positive_class_not_seen": "up"})
    "evaluation.positive_class 'up' matches no label of stream elec: precision, recall and F1 are undefined (—) for the whole run"
    >>> positive_class_warning({"stream": "elec"}) is None
    True
    """
    if "positive_class_not_seen" not in summary:
        return None
    return (f"evaluation.positive_class {summary['positive_class_not_seen']!r} matches no label "
            f"of stream {summary['stream']}: precision, recall and F1 are undefined (—) for "
            f"the whole run")

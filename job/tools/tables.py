"""What a person sees in the terminal: a progress bar while a run goes, tables when it ends."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, \
    TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

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


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def measures_table(summary: dict[str, Any]) -> Table:
    """Per learner, mean ± std over folds of the headline measures at the end of the stream."""
    table = Table(title=f"stream {summary['stream']}: {summary['position']} examples, "
                        f"last window (mean ± std over folds)")
    table.add_column("learner", style="bold")
    for name in SUMMARY_MEASURES:
        table.add_column(name, justify="right")
    for record in summary["measures"]:
        cells = []
        for name in SUMMARY_MEASURES:
            value = record["values"].get(name, {})
            cells.append(f"{_fmt(value.get('mean'))}±{_fmt(value.get('std'))}")
        table.add_row(record["learner"], *cells)
    return table


def comparisons_table(comparisons: list[dict[str, Any]]) -> Table:
    alpha = comparisons[0]["alpha"] if comparisons else 0.05
    table = Table(title=f"paired tests over folds at the last report (α = {alpha})")
    for column in ("measure", "a vs b", "wilcoxon p", "sign p", "wins", "verdict"):
        table.add_column(column, justify="right" if column.endswith(("p", "wins")) else "left")
    for record in comparisons:
        w, s = record["wilcoxon"], record["sign"]
        if w["p_value"] is None:
            verdict = "no difference"
        elif w["reject"]:
            better = record["a"] if s["wins_a"] > s["wins_b"] else record["b"]
            verdict = f"[green]{better} better[/]"
        else:
            verdict = "no significant difference"
        table.add_row(record["measure"], f"{record['a']} vs {record['b']}", _fmt(w["p_value"], 4),
                      _fmt(s["p_value"], 4), f"{s['wins_a']}:{s['wins_b']}", verdict)
    return table


def print_summary(console: Console, summaries: list[dict[str, Any]],
                  last_comparisons: dict[str, list[dict[str, Any]]]) -> None:
    for summary in summaries:
        console.print(measures_table(summary))
        comparisons = last_comparisons.get(summary["stream"], [])
        if comparisons:
            console.print(comparisons_table(comparisons))
        console.print(
            f"{summary['examples_read']} records read, {summary['examples_rejected']} rejected, "
            f"{summary['wall_time_s']:.1f} s ({summary['examples_per_second'] or 0:.0f} examples/s)"
        )

"""Rejection rates (docs/method.md §14): per dataset, mode, condition, test and look, the fraction
of replications that rejected with its Wilson score interval, and their table (Markdown, the
terminal), ``rates.json`` and figure.

Only :class:`~.design.ReplicationResult` lines come in, so the rates of a results file can be
computed again without running anything.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import NormalDist

from rich.table import Table

from foldstream.job.tools.experiment.design import LOOKS, TESTS, ExperimentConfig, \
    ReplicationResult
from foldstream.job.tools.plot import literal
from foldstream.job.tools.tables import typed

#: The confidence of the binomial intervals.
CONFIDENCE = 0.95

_TEST_NAMES = {"mcnemar": "McNemar", "sign": "sign test", "wilcoxon": "Wilcoxon",
               "verdict": "verdict (§12)", "regime": "regime verdict (§15)"}


def wilson(successes: int, trials: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion.

    Unlike the normal ("Wald") interval it stays inside ``[0, 1]`` and is not empty at 0 or
    ``trials`` successes, which is where rejection rates sit.

    >>> [round(v, 4) for v in wilson(0, 20)]
    [0.0, 0.1611]
    >>> [round(v, 4) for v in wilson(8, 20)]
    [0.2188, 0.6134]
    >>> wilson(0, 0)
    (0.0, 1.0)
    """
    if trials == 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact ends, not 1e-17
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class Rate:
    """A rejection rate, as ``rates.json`` holds it."""

    dataset: str
    mode: str
    condition: str
    test: str
    look: str
    rate: float
    low: float
    high: float
    replications: int


def rejection_rates(results: Iterable[ReplicationResult], datasets: Sequence[str] | None = None,
                    modes: Sequence[str] | None = None,
                    conditions: Sequence[str] | None = None) -> list[Rate]:
    """Per (dataset, mode, condition, test, look) the fraction of replications that rejected,
    with its :func:`wilson` interval; then the rows of ``dataset: "all"``, pooling the
    replications of every dataset. The orders default to the order of first appearance.

    >>> from foldstream.job.tools.experiment.design import Outcome
    >>> r = [ReplicationResult("x", d, "cv", i, 0, 10, 1, {"no_change": {
    ...     t: Outcome(final=(i == 0 and t == "mcnemar"), any=(t == "mcnemar"), first=None)
    ...     for t in TESTS}}) for d in ("sea", "elec") for i in range(2)]
    >>> [(x.dataset, x.look, x.rate, x.replications) for x in rejection_rates(r)
    ...  if x.test == "mcnemar"]  # doctest: +NORMALIZE_WHITESPACE
    [('sea', 'final', 0.5, 2), ('sea', 'any', 1.0, 2), ('elec', 'final', 0.5, 2),
     ('elec', 'any', 1.0, 2), ('all', 'final', 0.5, 4), ('all', 'any', 1.0, 4)]
    """
    results = list(results)
    datasets = list(datasets or dict.fromkeys(r.dataset for r in results))
    modes = list(modes or dict.fromkeys(r.mode for r in results))
    conditions = list(conditions or dict.fromkeys(c for r in results for c in r.outcomes))
    counts: dict[tuple[str, str, str, str, str], list[int]] = {}
    for r in results:
        for condition, tests in r.outcomes.items():
            for test, outcome in tests.items():
                for look in LOOKS:
                    hit = int(getattr(outcome, look))
                    for dataset in (r.dataset, "all"):
                        count = counts.setdefault((dataset, r.mode, condition, test, look), [0, 0])
                        count[0] += hit
                        count[1] += 1
    rates = []
    for dataset in datasets + ["all"]:
        for mode in modes:
            for condition in conditions:
                for test in TESTS:
                    for look in LOOKS:
                        hits, n = counts.get((dataset, mode, condition, test, look), (0, 0))
                        if n == 0:
                            continue
                        low, high = wilson(hits, n)
                        rates.append(Rate(dataset, mode, condition, test, look, hits / n, low,
                                          high, n))
    return rates


# ------------------------------------------------------------------------------------ table
@dataclass(frozen=True)
class RateTable:
    """Bifet et al.'s Table 2 layout for one dataset (or ``all``): a row per test and look,
    a column per (condition, mode); a cell is a :class:`Rate` or ``None``."""

    dataset: str
    columns: list[tuple[str, str]]
    rows: list[tuple[str, str, list[Rate | None]]]
    replications: int


def rate_table(rates: Sequence[Rate], dataset: str = "all") -> RateTable:
    """The table of one dataset's rates."""
    mine = [r for r in rates if r.dataset == dataset]
    conditions = list(dict.fromkeys(r.condition for r in mine))
    modes = list(dict.fromkeys(r.mode for r in mine))
    columns = [(c, m) for c in conditions for m in modes]
    cell = {(r.test, r.look, r.condition, r.mode): r for r in mine}
    rows = [(test, look, [cell.get((test, look, c, m)) for c, m in columns])
            for test in TESTS for look in LOOKS
            if any((test, look, c, m) in cell for c, m in columns)]
    return RateTable(dataset, columns, rows, max((r.replications for r in mine), default=0))


def _row_name(test: str, look: str) -> str:
    return f"{_TEST_NAMES[test]}, {'final report' if look == 'final' else 'any report'}"


def markdown_table(table: RateTable) -> str:
    """The table in Markdown: a cell is the rate and its 95% interval.

    >>> rate = Rate("all", "cv", "no_change", "sign", "final", 0.1, 0.03, 0.3, 20)
    >>> print(markdown_table(RateTable("all", [("no_change", "cv")],
    ...                                [("sign", "final", [rate])], 20)))
    | test | no_change<br>cv |
    |---|---|
    | sign test, final report | 0.10 (0.03–0.30) |
    """
    head = "| test | " + " | ".join(f"{c}<br>{m}" for c, m in table.columns) + " |"
    lines = [head, "|---|" + "---|" * len(table.columns)]
    for test, look, cells in table.rows:
        text = [f"{r.rate:.2f} ({r.low:.2f}–{r.high:.2f})" if r else "—" for r in cells]
        lines.append(f"| {_row_name(test, look)} | " + " | ".join(text) + " |")
    return "\n".join(lines)


def markdown_report(rates: Sequence[Rate], experiment: ExperimentConfig) -> str:
    """``table.md``: the pooled table, then one per dataset."""
    parts = [f"# Rejection rates ({experiment.replications} replications, n = {experiment.n}, "
             f"{experiment.folds} folds, alpha = {experiment.alpha})", "",
             "Each cell: the fraction of replications that rejected, and its 95% Wilson score "
             "interval. no_change and exact_null: a rejection is a Type I error; noise_*: a "
             "detection (power). docs/method.md §14.", ""]
    for dataset in ["all"] + [d.name for d in experiment.datasets]:
        table = rate_table(rates, dataset)
        if not table.rows:
            continue
        title = "pooled over the datasets" if dataset == "all" else dataset
        parts += [f"## {title} ({table.replications} runs per cell)", "", markdown_table(table), ""]
    return "\n".join(parts)


def rich_table(table: RateTable):
    """The table for the terminal: the rate, its interval below."""
    out = Table(title=f"rejection rates, {'pooled' if table.dataset == 'all' else typed(table.dataset)}"
                      f" ({table.replications} runs per cell; 95% Wilson intervals)")
    out.add_column("test, look", style="bold", no_wrap=True)
    for condition, mode in table.columns:
        out.add_column(f"{condition}\n{mode}", justify="right", min_width=10)
    for test, look, cells in table.rows:
        out.add_row(f"{test}, {look}",
                    *[f"{r.rate:.2f}\n[dim]{r.low:.2f}–{r.high:.2f}[/]" if r else "—"
                      for r in cells])
    return out


def rates_figure(rates: Sequence[Rate], alpha: float, dataset: str = "all"):
    """Rejection rate per test with its interval, one panel per condition, one colour per
    mode; filled: the final report, hollow: any report; the dashed line is ``alpha``."""
    import matplotlib  # with the figure only: a worker process never draws

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mine = [r for r in rates if r.dataset == dataset]
    conditions = list(dict.fromkeys(r.condition for r in mine))
    modes = list(dict.fromkeys(r.mode for r in mine))
    figure, axes = plt.subplots(1, len(conditions), figsize=(3.6 * len(conditions) + 0.6, 3.8),
                                sharey=True, squeeze=False)
    colours = plt.get_cmap("tab10")
    cell = {(r.condition, r.mode, r.test, r.look): r for r in mine}
    width = 0.8 / max(len(modes), 1)
    for ax, condition in zip(axes[0], conditions):
        for j, mode in enumerate(modes):
            for i, test in enumerate(TESTS):
                for look, offset, face in (("final", -0.12, None), ("any", 0.12, "white")):
                    r = cell.get((condition, mode, test, look))
                    if r is None:
                        continue
                    x = i - 0.4 + width * (j + 0.5) + offset * width
                    ax.errorbar([x], [r.rate], yerr=[[r.rate - r.low], [r.high - r.rate]],
                                fmt="o", color=colours(j), markerfacecolor=face or colours(j),
                                markersize=4.5, capsize=2, linewidth=1,
                                label=f"{mode}, {look}" if i == 0 else None)
        ax.axhline(alpha, color="grey", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(TESTS)), [_TEST_NAMES[t].split(" (")[0] for t in TESTS],
                      fontsize=8)
        ax.set_title(condition, fontsize=10)
        ax.set_ylim(-0.03, 1.03)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("rejection rate (95% interval)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=max(len(labels), 1), fontsize=7,
                  frameon=False)
    n = max((r.replications for r in mine), default=0)
    figure.suptitle(f"rejection rates ({'pooled over the datasets' if dataset == 'all' else literal(dataset)}"
                    f", {n} runs per point); dashed: alpha = {alpha}", fontsize=10)
    figure.tight_layout(rect=(0, 0.08, 1, 1))
    return figure


#: the files :func:`write_outputs` writes in its folder
OUTPUTS = ("rates.json", "table.md", "rates.png")


def write_outputs(rates: Sequence[Rate], experiment: ExperimentConfig, out: str | Path) -> Path:
    """:data:`OUTPUTS` in ``out``: ``rates.json``, ``table.md`` and ``rates.png``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    numbers, table, picture = (out / name for name in OUTPUTS)
    numbers.write_text(json.dumps([asdict(r) for r in rates], indent=1) + "\n", encoding="utf-8")
    table.write_text(markdown_report(rates, experiment) + "\n", encoding="utf-8")
    import matplotlib.pyplot as plt  # as rates_figure's

    figure = rates_figure(rates, experiment.alpha)
    figure.savefig(picture, dpi=130)
    plt.close(figure)
    return out

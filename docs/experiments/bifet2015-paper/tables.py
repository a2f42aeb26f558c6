"""Bifet et al.'s Tables 2, 3 and 4 from a results file, each cell beside the paper's number.

``foldstream experiment`` writes its own ``table.md`` (every test, a table per dataset); this
script writes the paper's three tables, so that a reader compares cell by cell: Table 2 (every
test pooled over the streams, the live verdicts of docs/method.md §12 included, and the exact
null, which the paper did not run), Table 3 (McNemar per stream) and Table 4 (Wilcoxon per
stream), each cell the fraction of replications that rejected with its 95% Wilson interval
(the experiment's own :func:`~foldstream.job.tools.experiment.rejection_rates`) and the
published number (``paper.yaml``, transcribed from the paper), in bold where it lies outside our
interval. A figure puts every per-stream cell of ours against the paper's, and a last table
shows what the tests were shown: the accuracy gap between the two seeds and the drop the noise
filter made, per stream (the evidence for the disagreements discussed in README.md). It reads
only the results file, so it can be run on a partial one while the experiment goes on::

    python docs/experiments/bifet2015-paper/tables.py RESULTS.jsonl [OUT_DIR]

(OUT_DIR: this folder by default; it writes ``tables.md`` and ``tables.png``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from foldstream.job.tools.experiment import MODES, TESTS, Rate, read_results, rejection_rates
from foldstream.job.tools.experiment.rates import _row_name  # the one wording of a row

HERE = Path(__file__).resolve().parent
PAPER = HERE / "paper.yaml"
EXACT_NULL = [("exact_null", mode) for mode in MODES]
#: The per-stream tables: which table of paper.yaml, which of our tests (the final report, as
#: the paper's single look).
PER_STREAM = (("table3", "mcnemar", "Table 3: McNemar's test per stream (the paper's: "
                                    "non-prequential)"),
              ("table4", "wilcoxon", "Table 4: Wilcoxon's signed-rank test per stream"))
#: What each per-stream table of the paper is: its Average row names the row of its Table 2
PER_STREAM_NOTE = {
    "table3": "The paper's Table 3 is its **non-prequential** design: its Average row equals "
              "its Table 2's \"McNemar non-prequential\" row (0.71, 0.52, 0.66, ...), not the "
              "prequential one (0.77, 0.80, 0.42, ...). Ours is prequential (every fold tests "
              "each example, then trains on it), so each cell here compares our prequential "
              "rate with the paper's non-prequential one; the paper publishes no prequential "
              "McNemar per stream.",
    "table4": "The paper's Table 4 is its prequential design (its Average row equals its "
              "Table 2's \"Wilcoxon prequential\" row), as ours is.",
}


@dataclass(frozen=True)
class Cell:
    """One cell: our rate (``None``: not run) beside the paper's number (``None``: not in it)."""

    ours: Rate | None
    paper: float | None

    @property
    def outside(self) -> bool:
        """Whether the paper's number lies outside our 95% interval.

        >>> Cell(Rate("all", "cv", "no_change", "sign", "final", .1, .03, .3, 20), .5).outside
        True
        """
        return (self.ours is not None and self.paper is not None
                and not self.ours.low <= self.paper <= self.ours.high)

    def markdown(self) -> str:
        """``ours (low–high)`` above ``paper p`` (bold when outside).

        >>> Cell(Rate("all", "cv", "no_change", "sign", "final", .1, .03, .3, 20), .5).markdown()
        '0.10 (0.03–0.30)<br>paper **0.50**'
        >>> Cell(None, 0.73).markdown()
        '—<br>paper 0.73'
        """
        ours = f"{self.ours.rate:.2f} ({self.ours.low:.2f}–{self.ours.high:.2f})" if self.ours else "—"
        if self.paper is None:
            return ours
        paper = f"**{self.paper:.2f}**" if self.outside else f"{self.paper:.2f}"
        return f"{ours}<br>paper {paper}"


def _count(n: int, what: str) -> str:
    """``n`` and ``what``, plural unless one.

    >>> _count(1, "replication"), _count(20, "replication")
    ('1 replication', '20 replications')
    """
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def load_paper(path: Path = PAPER) -> dict:
    """The paper's tables (``paper.yaml``)."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _index(rates: Sequence[Rate]) -> dict[tuple[str, str, str, str, str], Rate]:
    return {(r.dataset, r.condition, r.mode, r.test, r.look): r for r in rates}


def _header(columns: Sequence[tuple[str, str]], first: str) -> list[str]:
    return [f"| {first} | " + " | ".join(f"{c}<br>{m}" for c, m in columns) + " |",
            "|---|" + "---|" * len(columns)]


def table2(rates: Sequence[Rate], paper: dict) -> list[str]:
    """Table 2: a row per test and look, pooled over the streams; the paper's prequential rows
    beside ours (this experiment is prequential), the exact null ours alone."""
    index = _index(rates)
    columns = [tuple(c) for c in paper["columns"]] + EXACT_NULL
    published = {row["test"]: row["values"] for row in paper["table2"] if row["prequential"]}
    lines = _header(columns, "test")
    for test in TESTS:
        for look in ("final", "any"):
            cells = [Cell(index.get(("all", c, m, test, look)),
                          published[test][j] if test in published and look == "final"
                          and j < len(paper["columns"]) else None)
                     for j, (c, m) in enumerate(columns)]
            if all(cell.ours is None for cell in cells):
                continue
            lines.append(f"| {_row_name(test, look)} | "
                         + " | ".join(cell.markdown() for cell in cells) + " |")
    return lines


def per_stream(rates: Sequence[Rate], paper: dict, key: str, test: str) -> tuple[list[str], list[Cell]]:
    """Table 3 or 4: a row per stream of the paper (Poker-Hand's with the paper's numbers
    alone), then the average (our pooled rate); and the cells, for the figure."""
    index = _index(rates)
    columns = [tuple(c) for c in paper["columns"]]
    lines = _header(columns + EXACT_NULL, "stream")
    cells_out: list[Cell] = []
    for row in paper[key]:
        dataset = row["dataset"]
        name = row["stream"] + (f" (`{dataset}`)" if dataset not in (None, "all") else "")
        if dataset is None:
            name += " (not built here)"
        cells = [Cell(index.get((dataset, c, m, test, "final")) if dataset else None, value)
                 for (c, m), value in zip(columns, row["values"])]
        cells += [Cell(index.get((dataset, c, m, test, "final")) if dataset else None, None)
                  for c, m in EXACT_NULL]
        if dataset not in (None, "all"):
            cells_out += cells[:len(columns)]
        lines.append(f"| {name} | " + " | ".join(cell.markdown() for cell in cells) + " |")
    return lines, cells_out


def paper_detects_more(cells: dict[str, list[Cell]], paper: dict) -> list[str]:
    """The per-stream noise cells where the paper's detection rate lies above our interval."""
    columns = [tuple(c) for c in paper["columns"]]
    streams = [row for row in paper["table3"] if row["dataset"] not in (None, "all")]
    lines = ["## Where the paper detects more than we do", "",
             "The cells of Tables 3 and 4 with a noise filter (a rejection is a detection) "
             "where the paper's rate lies above our 95% interval.", "",
             "| test | stream | condition | mode | ours | paper |", "|---|---|---|---|---|---|"]
    found = 0
    for test, test_cells in cells.items():
        for i, cell in enumerate(test_cells):
            stream, (condition, mode) = streams[i // len(columns)], columns[i % len(columns)]
            if condition.startswith("noise") and cell.ours is not None \
                    and cell.paper is not None and cell.paper > cell.ours.high:
                found += 1
                lines.append(f"| {test} | {stream['stream']} | {condition} | {mode} | "
                             f"{cell.ours.rate:.2f} ({cell.ours.low:.2f}–{cell.ours.high:.2f}) | "
                             f"{cell.paper:.2f} |")
    return lines if found else lines[:4] + ["None."]


def inside_count(rates: Sequence[Rate], paper: dict) -> list[str]:
    """How many of Table 2's cells (the paper's prequential rows) lie inside our intervals."""
    index = _index(rates)
    columns = [tuple(c) for c in paper["columns"]]
    inside = total = 0
    for row in paper["table2"]:
        if not row["prequential"]:
            continue
        for (condition, mode), value in zip(columns, row["values"]):
            ours = index.get(("all", condition, mode, row["test"], "final"))
            if ours is not None:
                total += 1
                inside += ours.low <= value <= ours.high
    return ["## Table 2 against the paper, in one number", "",
            f"{inside} of the paper's {total} prequential Table 2 cells lie inside our 95% "
            f"intervals (README.md, \"Why Table 2's cells differ\", says why)."]


def report(results_path: Path, paper: dict | None = None
           ) -> tuple[str, dict[str, list[Cell]], int]:
    """The Markdown of the three tables, the per-stream cells of each test, and the fewest
    replications a cell has."""
    paper = paper or load_paper()
    results, _ = read_results(results_path)
    if not results:
        raise SystemExit(f"{results_path}: no replication results")
    rates = rejection_rates(results, [r["dataset"] for r in paper["table3"]
                                      if r["dataset"] not in (None, "all")])
    runs = min(r.replications for r in rates if r.dataset != "all")
    replications = len({r.replication for r in results})
    datasets = sorted({r.dataset for r in results})
    fewer = runs < paper["runs"]
    title = (f"# Bifet et al. (KDD 2015), Tables 2, 3 and 4, rerun: {_count(runs, 'replication')} "
             f"a cell" + (f" (the paper's: {paper['runs']})" if fewer else ""))
    parts = [title, "",
             f"From `{results_path.name}`: {len(results)} runs, replications 0 to "
             f"{replications - 1}, {len(datasets)} streams. Each cell: the fraction of runs that "
             f"rejected \"the two are equally good\" at alpha = {paper['alpha']}, its 95% Wilson "
             f"interval, and below it the paper's number ({paper['runs']} runs a cell), **bold** "
             f"where it lies outside our interval. no_change and exact_null: a rejection is a "
             f"Type I error; noise_*: a detection. The exact null (docs/method.md §14) is not "
             f"in the paper.", ""]
    if fewer:
        parts += [f"The paper ran {paper['runs']} replications a cell; these tables hold "
                  f"{_count(runs, 'replication')} a cell at the least. The results file is "
                  f"resumable (`--set replications={paper['runs']}` continues it) and the tables "
                  f"are made again from it.", ""]
    parts += ["## Table 2: every test, pooled over the streams", "",
              "The paper's numbers are its prequential rows (this experiment is prequential); "
              "they stand beside our final report, the paper's only look.", ""]
    parts += table2(rates, paper) + [""]
    cells: dict[str, list[Cell]] = {}
    for key, test, heading in PER_STREAM:
        lines, cells[test] = per_stream(rates, paper, key, test)
        parts += [f"## {heading}", "", PER_STREAM_NOTE[key], "",
                  f"The final report; the last row is our rate pooled over the streams, beside "
                  f"the paper's average.", ""] + lines + [""]
    parts += paper_detects_more(cells, paper) + [""]
    parts += inside_count(rates, paper) + [""]
    parts += gaps(results, [r["dataset"] for r in paper["table3"]
                            if r["dataset"] not in (None, "all")]) + [""]
    return "\n".join(parts), cells, runs


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _three(values: Sequence[float | None], digits: int = 4) -> str:
    """Values per mode, ``a / b / c`` (``—`` where none).

    >>> _three([0.00123, None, 0.1], 3)
    '0.001 / — / 0.100'
    """
    return " / ".join("—" if v is None else f"{v:.{digits}f}" for v in values)


def gaps(results: Sequence, datasets: Sequence[str]) -> list[str]:
    """What the tests were shown: per stream, A's accuracy, the gap between the two seeds under
    no change (``|A - B|``, each learner's mean over the folds at the final report), the same
    gap in the runs where McNemar rejected and where it did not, and the accuracy the noise
    filter took away (``B - B_noise_0.05``: the same model, inside and outside the filter)."""
    rows = ["## Behind the rates: the differences the tests were shown", "",
            "Per stream, each learner's accuracy (its mean over the 10 folds at the final report, "
            "as the results file keeps it), averaged over the runs; three numbers are bootstrap / "
            "cv / split. *Seed gap*: `|A - B|` under no change, two seeds of one design. "
            "*McNemar's runs*: the seed gap where McNemar rejected under no change, and where it "
            "did not (all modes). *Noise drop*: `B - B_noise_0.05`, what the filter of 0.05 took "
            "from the same model; *ratio*: the noise drop over the seed gap (all modes).", "",
            "| stream | A's accuracy | seed gap | McNemar's runs: rejected / not | noise drop | ratio |",
            "|---|---|---|---|---|---|"]
    for dataset in list(datasets) + ["all"]:
        mine = [r for r in results if dataset in ("all", r.dataset)
                and {"A", "B", "B_noise_0.05"} <= {k for k, v in r.accuracy.items() if v is not None}]
        if not mine:
            continue
        by_mode = {m: [r for r in mine if r.mode == m] for m in MODES}
        accuracy = [_mean([r.accuracy["A"] for r in by_mode[m]]) for m in MODES]
        seed = [_mean([abs(r.accuracy["A"] - r.accuracy["B"]) for r in by_mode[m]]) for m in MODES]
        drop = [_mean([r.accuracy["B"] - r.accuracy["B_noise_0.05"] for r in by_mode[m]])
                for m in MODES]
        by_mcnemar = [[abs(r.accuracy["A"] - r.accuracy["B"]) for r in mine
                       if r.outcomes["no_change"]["mcnemar"].final == rejected]
                      for rejected in (True, False)]
        all_seed = _mean([abs(r.accuracy["A"] - r.accuracy["B"]) for r in mine])
        all_drop = _mean([r.accuracy["B"] - r.accuracy["B_noise_0.05"] for r in mine])
        ratio = f"{all_drop / all_seed:.0f}" if all_seed else "—"
        name = "all streams" if dataset == "all" else f"`{dataset}`"
        rows.append(f"| {name} | {_three(accuracy, 3)} | {_three(seed)} | "
                    f"{_three([_mean(values) for values in by_mcnemar])} | {_three(drop)} | {ratio} |")
    return rows


def figure(cells: dict[str, list[Cell]], note: str = ""):
    """Ours against the paper's, one point per stream, condition and mode; the diagonal is
    agreement."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(cells), figsize=(5.2 * len(cells), 4.8), squeeze=False)
    colours = {"no_change": "tab:blue", "noise_0.05": "tab:orange", "noise_0.10": "tab:red"}
    markers = {"bootstrap": "o", "cv": "s", "split": "^"}
    for ax, (test, mine) in zip(axes[0], cells.items()):
        for cell in mine:
            if cell.ours is None:
                continue
            r = cell.ours
            ax.errorbar([cell.paper], [r.rate], yerr=[[r.rate - r.low], [r.high - r.rate]],
                        fmt=markers[r.mode], color=colours.get(r.condition, "grey"),
                        markersize=4, capsize=1.5, linewidth=0.8, alpha=0.8)
        ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("the paper's rejection rate")
        ax.set_title({"mcnemar": "McNemar (Table 3)", "wilcoxon": "Wilcoxon (Table 4)"}.get(test, test),
                     fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("ours (95% interval)")
    handles = [plt.Line2D([], [], color=c, marker="o", linestyle="", label=k)
               for k, c in colours.items()]
    handles += [plt.Line2D([], [], color="black", marker=m, linestyle="", label=k)
                for k, m in markers.items()]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.suptitle(f"rejection rates per stream, ours against Bifet et al. (2015){note}", fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def main(results_path: Path, out: Path = HERE) -> Path:
    """Write ``tables.md`` and ``tables.png`` into ``out``."""
    text, cells, runs = report(results_path)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tables.md").write_text(text + "\n", encoding="utf-8")
    import matplotlib.pyplot as plt

    fig = figure(cells, f", {_count(runs, 'replication')} a cell")
    fig.savefig(out / "tables.png", dpi=120)
    plt.close(fig)
    return out


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("::")[1].strip().split("\n")[0])
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) == 3 else HERE)

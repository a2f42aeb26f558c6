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
only the results files, so it can be run on partial ones while the experiments go on::

    python docs/experiments/bifet2015-paper/tables.py RESULTS.jsonl [OUT_DIR] \
        [--nonprequential RESULTS.jsonl] [--timing TIMING.jsonl]

(OUT_DIR: this folder by default; it writes ``tables.md`` and ``tables.png``). The first file is
the prequential design's. ``--nonprequential``: the same experiment with ``prequential=false``
(each fold scores only the examples it does not train on, the paper's "non-prequential"), whose
complete replications give Table 2's non-prequential rows and Table 3 like for like (the paper's
Table 3 is non-prequential). ``--timing``: ``timing.py``'s file, the timing rows.
"""

from __future__ import annotations

import argparse
import json
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


#: the figure's panels: which of our designs against which table of the paper
PANELS = {"mcnemar, non-prequential": "McNemar, non-prequential (Table 3, like for like)",
          "mcnemar": "McNemar, prequential (Table 3 is non-prequential)",
          "wilcoxon": "Wilcoxon, prequential (Table 4)"}


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


def table2(rates: Sequence[Rate], paper: dict, prequential: bool = True) -> list[str]:
    """Table 2: a row per test and look, pooled over the streams; the paper's rows of the same
    design (prequential or not) beside ours, the exact null ours alone."""
    index = _index(rates)
    columns = [tuple(c) for c in paper["columns"]] + EXACT_NULL
    published = {row["test"]: row["values"] for row in paper["table2"]
                 if row["prequential"] == prequential}
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


def inside_count(rates: Sequence[Rate], paper: dict, np_rates: Sequence[Rate] = ()
                 ) -> list[str]:
    """How many of Table 2's cells lie inside our intervals: the paper's prequential rows
    against our prequential runs, and its non-prequential rows against ours (if run)."""
    lines = ["## Table 2 against the paper, in one number", ""]
    for design, mine in (("prequential", rates), ("non-prequential", np_rates)):
        if mine:
            inside, total = _inside(mine, paper, design == "prequential")
            lines.append(f"{inside} of the paper's {total} {design} Table 2 cells lie inside our "
                         f"95% intervals of the same design (README.md, \"Why Table 2's cells "
                         f"differ\", says why).")
            lines.append("")
    return lines[:-1]


def _inside(rates: Sequence[Rate], paper: dict, prequential: bool) -> tuple[int, int]:
    """How many of the paper's Table 2 cells of one design lie inside our intervals, of how
    many we ran."""
    index = _index(rates)
    columns = [tuple(c) for c in paper["columns"]]
    inside = total = 0
    for row in paper["table2"]:
        if row["prequential"] != prequential:
            continue
        for (condition, mode), value in zip(columns, row["values"]):
            ours = index.get(("all", condition, mode, row["test"], "final"))
            if ours is not None:
                total += 1
                inside += ours.low <= value <= ours.high
    return inside, total


def complete(results: Sequence, datasets: Sequence[str], modes: Sequence[str] = MODES) -> list:
    """The runs of the replications that have every (dataset, mode): a partial replication at
    the end of a stopped run would weigh its streams unevenly in the pooled cells.

    >>> from foldstream.job.tools.experiment import ReplicationResult
    >>> runs = [ReplicationResult("f", d, m, r, 1, 10, 1, {}) for r in (0, 1)
    ...         for d in ("a", "b") for m in MODES if (r, d) != (1, "b")]
    >>> sorted({r.replication for r in complete(runs, ["a", "b"])})
    [0]
    """
    want = {(d, m) for d in datasets for m in modes}
    have: dict[int, set[tuple[str, str]]] = {}
    for r in results:
        have.setdefault(r.replication, set()).add((r.dataset, r.mode))
    whole = {rep for rep, keys in have.items() if want <= keys}
    return [r for r in results if r.replication in whole and r.dataset in datasets]


@dataclass(frozen=True)
class ModeTimes:
    """One design's cost per mode: the mean seconds of a run, and cv's and split's over
    bootstrap's."""

    what: str
    seconds: tuple[float, float, float]  # bootstrap, cv, split (MODES' order)

    @property
    def ratios(self) -> tuple[float, float]:
        """cv and split over bootstrap.

        >>> ModeTimes("paper", (813, 1202, 109)).ratios
        (1.4784747847478474, 0.13407134071340712)
        """
        bootstrap, cv, split = self.seconds
        return cv / bootstrap, split / bootstrap

    def markdown(self, unit: str) -> str:
        cv, split = self.ratios
        return (f"| {self.what} | " + " / ".join(f"{v:,.1f}" for v in self.seconds)
                + f" {unit} | **{cv:.2f}** | **{split:.2f}** |")


def mode_times(runs: Sequence[dict], what: str) -> ModeTimes | None:
    """The mean CPU seconds per mode over the (dataset, replication) groups that have all
    three modes (``runs``: dicts with ``dataset``, ``mode``, ``replication``, ``cpu_time_s``)."""
    groups: dict[tuple[str, int], dict[str, float]] = {}
    for r in runs:
        if r.get("cpu_time_s") is not None:
            groups.setdefault((r["dataset"], r["replication"]), {})[r["mode"]] = r["cpu_time_s"]
    whole = [g for g in groups.values() if set(MODES) <= set(g)]
    if not whole:
        return None
    return ModeTimes(what, tuple(_mean([g[m] for g in whole]) for m in MODES))


def _replications(reps: Sequence[int]) -> str:
    """Which replications, in words.

    >>> _replications([1]), _replications([0, 1]), _replications([0, 1, 2])
    ('replication 1', 'replications 0 and 1', 'replications 0 to 2')
    """
    if len(reps) == 1:
        return f"replication {reps[0]}"
    return f"replications {reps[0]} {'and' if len(reps) == 2 else 'to'} {reps[-1]}"


def timing_rows(paper: dict, timing: Sequence[dict], np_results: Sequence) -> list[str]:
    """Table 2's timing rows: the paper's seconds per mode (its no-change columns) beside our
    CPU seconds, per design, as ratios to bootstrap."""
    lines = ["## Table 2's timing rows: the cost of each mode", "",
             "The paper's \"Avg. time\" of a run (seconds on SAMOA, its no-change columns; the "
             "noise columns are within 3% of them, but prequential cv with noise 0.10: 1,294 s) "
             "beside ours: the CPU seconds of a run (every thread of its process, MOA's JVM "
             "included; each run evaluates A, B, the two noisy B's and the exact null's two "
             "trees over 10 folds), averaged over the (stream, replication) groups that have all "
             "three modes. Ours were measured on a machine shared by several engineers (load "
             "average 11 to 20 on 2 cores): the seconds there are not comparable with the "
             "paper's or between rows, the ratios within a row are (each row's modes ran "
             "interleaved on the same streams and seeds). The bold columns are cv's and split's "
             "time over bootstrap's.", "",
             "| design: what | bootstrap / cv / split | cv / bootstrap | split / bootstrap |",
             "|---|---|---|---|"]
    for design, prequential in (("prequential", True), ("non-prequential", False)):
        row = next(r for r in paper["time"] if r["prequential"] == prequential)
        lines.append(ModeTimes(f"{design}: the paper (SAMOA, wall)",
                               tuple(row["values"][:3])).markdown("s"))
        mine = [t for t in timing if t["design"] == design]
        streams = sorted(d for d in {t["dataset"] for t in mine}  # those timed in every mode
                         if {t["mode"] for t in mine if t["dataset"] == d} >= set(MODES))
        reps = sorted({t["replication"] for t in mine})
        ours = mode_times(mine, f"{design}: ours, `timing.jsonl` ({', '.join(streams)}; "
                                f"{_replications(reps)})")
        if ours:
            lines.append(ours.markdown("CPU-s"))
        if not prequential and np_results:
            runs = [{"dataset": r.dataset, "mode": r.mode, "replication": r.replication,
                     "cpu_time_s": r.cpu_time_s} for r in np_results]
            later = [r for r in runs if r["replication"] > 0]  # replication 0: the JVMs start
            used = later or runs
            ours = mode_times(used, f"{design}: ours, the non-prequential results (12 streams, "
                                    f"{_replications(sorted({r['replication'] for r in used}))})")
            if ours:
                lines.append(ours.markdown("CPU-s"))
    return lines


def report(results_path: Path, paper: dict | None = None, nonprequential: Path | None = None,
           timing: Path | None = None) -> tuple[str, dict[str, list[Cell]], int]:
    """The Markdown of the three tables (and, given the non-prequential results and the timing
    file, Table 2's non-prequential and timing rows, and Table 3 like for like), the
    per-stream cells of each test, and the fewest replications a cell has (prequential)."""
    paper = paper or load_paper()
    streams = [r["dataset"] for r in paper["table3"] if r["dataset"] not in (None, "all")]
    results, _ = read_results(results_path)
    if not results:
        raise SystemExit(f"{results_path}: no replication results")
    rates = rejection_rates(results, streams)
    runs = min(r.replications for r in rates if r.dataset != "all")
    np_results: list = []
    np_rates: list[Rate] = []
    if nonprequential is not None:
        everything, _ = read_results(nonprequential)
        np_results = complete(everything, [d for d in streams  # the streams it has run
                                           if any(r.dataset == d for r in everything)])
        if np_results:
            np_rates = rejection_rates(np_results, streams)
    np_runs = min((r.replications for r in np_rates if r.dataset != "all"), default=0)
    replications = len({r.replication for r in results})
    datasets = sorted({r.dataset for r in results})
    fewer = runs < paper["runs"]
    title = (f"# Bifet et al. (KDD 2015), Tables 2, 3 and 4, rerun: {_count(runs, 'replication')} "
             f"a cell" + (f" (the paper's: {paper['runs']})" if fewer else ""))
    if np_rates:
        title += f"; non-prequential: {_count(np_runs, 'replication')} a cell"
    parts = [title, "",
             f"From `{results_path.name}`: {len(results)} runs, replications 0 to "
             f"{replications - 1}, {len(datasets)} streams. Each cell: the fraction of runs that "
             f"rejected \"the two are equally good\" at alpha = {paper['alpha']}, its 95% Wilson "
             f"interval, and below it the paper's number ({paper['runs']} runs a cell), **bold** "
             f"where it lies outside our interval. no_change and exact_null: a rejection is a "
             f"Type I error; noise_*: a detection. The exact null (docs/method.md §14) is not "
             f"in the paper.", ""]
    if np_rates:
        np_reps = sorted({r.replication for r in np_results})
        parts += [f"The non-prequential rows and Table 3 like for like are from "
                  f"`{nonprequential.name}` (the same experiment with `prequential=false`: each "
                  f"fold scores only the examples it does not train on): {len(np_results)} runs "
                  f"of its complete replications, 0 to {np_reps[-1]}, "
                  f"{_count(np_runs, 'replication')} a cell.", ""]
    if fewer:
        parts += [f"The paper ran {paper['runs']} replications a cell; these tables hold "
                  f"{_count(runs, 'replication')} a cell at the least"
                  + (f" (prequential), {np_runs} (non-prequential)" if np_rates else "")
                  + f". The results files are resumable (`--set replications={paper['runs']}` "
                  f"continues them) and the tables are made again from them.", ""]
    parts += ["## Table 2: every test, pooled over the streams (prequential)", "",
              "Our prequential runs (every fold scores each example, then trains on it) beside "
              "the paper's **prequential** rows; our final report, the paper's only look.", ""]
    parts += table2(rates, paper) + [""]
    if np_rates:
        parts += ["## Table 2: every test, pooled over the streams (non-prequential)", "",
                  "Our non-prequential runs (each fold scores only the examples it does not "
                  "train on: with cv one fold in ten scores each example, with split nine, with "
                  "bootstrap those whose Poisson weight is 0) beside the paper's "
                  f"**non-prequential** rows; {_count(np_runs, 'replication')} a cell.", ""]
        parts += table2(np_rates, paper, prequential=False) + [""]
    timed = []
    if timing is not None and timing.exists():
        timed = [json.loads(line) for line in timing.read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    if timed or np_results:
        parts += timing_rows(paper, timed, np_results) + [""]
    cells: dict[str, list[Cell]] = {}
    if np_rates:
        lines, cells["mcnemar, non-prequential"] = per_stream(np_rates, paper, "table3", "mcnemar")
        parts += ["## Table 3: McNemar's test per stream, non-prequential (like for like)", "",
                  "The paper's Table 3 is its non-prequential design (its Average row is its "
                  "Table 2's \"McNemar non-prequential\" row); here beside our non-prequential "
                  f"runs, {_count(np_runs, 'replication')} a cell. The final report; the last "
                  "row is our rate pooled over the streams, beside the paper's average.", ""]
        parts += lines + [""]
    for key, test, heading in PER_STREAM:
        lines, cells[test] = per_stream(rates, paper, key, test)
        if key == "table3" and np_rates:
            heading = "Table 3 against our prequential runs"
        parts += [f"## {heading}", "", PER_STREAM_NOTE[key], "",
                  f"The final report; the last row is our rate pooled over the streams, beside "
                  f"the paper's average.", ""] + lines + [""]
    parts += paper_detects_more(cells, paper) + [""]
    parts += inside_count(rates, paper, np_rates) + [""]
    parts += gaps(results, streams) + [""]
    if np_results:
        parts += ["### The same, non-prequential", ""] + gaps(np_results, streams)[4:] + [""]
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
        runs = min((c.ours.replications for c in mine if c.ours is not None), default=0)
        ax.set_title(f"{PANELS.get(test, test)}\n{_count(runs, 'replication')} a cell", fontsize=9)
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


def main(results_path: Path, out: Path = HERE, *, nonprequential: Path | None = None,
         timing: Path | None = None) -> Path:
    """Write ``tables.md`` and ``tables.png`` into ``out``."""
    text, cells, runs = report(results_path, nonprequential=nonprequential, timing=timing)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tables.md").write_text(text + "\n", encoding="utf-8")
    import matplotlib.pyplot as plt

    fig = figure(cells)
    fig.savefig(out / "tables.png", dpi=120)
    plt.close(fig)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path, help="the prequential results file")
    parser.add_argument("out", type=Path, nargs="?", default=HERE, help="the output folder")
    parser.add_argument("--nonprequential", type=Path, default=None,
                        help="the non-prequential results file")
    parser.add_argument("--timing", type=Path, default=None, help="timing.py's file")
    args = parser.parse_args()
    main(args.results, args.out, nonprequential=args.nonprequential, timing=args.timing)

"""What a benchmark shows: the comparison table, the tests over streams, the cost of each
learner, the critical-difference diagram and the figure of each stream; as pandas tables
(:class:`BenchmarkResults`, what ``foldstream.benchmark`` returns) and as the files of
``foldstream benchmark --out DIR`` (:func:`write_outputs`), each of which says the versions,
the configuration and the command that made it.

The numbers of a cell are its last ``measures`` record: per measure the mean and standard
deviation over the folds, of the evaluation's window ("final window") and, where the record
holds it, of the whole stream. On each stream the best learner (the highest mean) is bold, and
a learner the Wilcoxon signed-rank test over the folds finds worse than it at the evaluation's
``alpha`` is marked ``†`` (:func:`~foldstream.operators.stats.significance.wilcoxon`, paired by
fold: every learner of a stream is evaluated on the same fold weights). The ranks over streams
(:mod:`foldstream.operators.stats.ranks`) rank the whole-stream means when every cell has them, the
final window's otherwise.
"""

from __future__ import annotations

import html
import math
import platform
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from foldstream.job.tools.benchmark.design import BenchmarkConfig, CellResult
from foldstream.job.tools.report import STYLE, figure_uri
from foldstream.job.tools.tables import fmt, fmt_p
from foldstream.operators.stats.ranks import RankTests, rank_tests
from foldstream.operators.stats.significance import wilcoxon

if TYPE_CHECKING:
    import pandas

#: The files :func:`write_outputs` writes into ``--out``.
OUTPUTS = ("comparison.md", "comparison.tex", "comparison.csv", "cost.csv", "cd.png", "cd.svg",
           "streams.png", "streams.svg", "benchmark.html")
#: The scopes of a measure's value: the evaluation's window at the end, the whole stream.
SCOPES = ("window", "whole")
#: The mark of a learner worse than its stream's best (Wilcoxon over folds).
WORSE = "†"
#: The packages whose versions every output names.
PACKAGES = ("foldstream", "river", "numpy", "scipy", "pandas", "matplotlib")


# --------------------------------------------------------------------------------- values
@dataclass(frozen=True)
class Value:
    """One measure of one cell in one scope: mean and sd over the folds, and the folds."""

    mean: float | None
    sd: float | None
    folds: tuple[float | None, ...]


def cell_value(record: dict[str, Any], measure: str, scope: str = "window") -> Value | None:
    """A measure of a ``measures`` record: the window's (``values``) or the whole stream's
    (``whole_stream``, when the record holds it); ``None`` when it holds no such value.

    >>> r = {"values": {"accuracy": {"mean": 0.8, "std": 0.1, "folds": [0.7, 0.9]}}}
    >>> cell_value(r, "accuracy"), cell_value(r, "accuracy", "whole")
    (Value(mean=0.8, sd=0.1, folds=(0.7, 0.9)), None)
    """
    values = record.get("values" if scope == "window" else "whole_stream")
    entry = values.get(measure) if isinstance(values, dict) else None
    if not isinstance(entry, dict):
        return None
    return Value(entry.get("mean"), entry.get("std"), tuple(entry.get("folds") or ()))


def cell_cpu(cell: CellResult) -> float:
    """The CPU seconds of the cell's learner: in predict and learn, summed over its folds, as
    the run's summary reports them (``cpu_predict_s``, ``cpu_learn_s``); else those of the
    process that ran the cell (reading and evaluating included).

    >>> c = CellResult("f", "s", "nb", 10, 1.0, 0.9, {}, {"cpu_predict_s": {"nb": 0.25},
    ...                                                    "cpu_learn_s": {"nb": 0.5}})
    >>> cell_cpu(c), cell_cpu(CellResult("f", "s", "nb", 10, 1.0, 0.9, {}, {}))
    (0.75, 0.9)
    """
    parts = [cell.summary.get(key) for key in ("cpu_predict_s", "cpu_learn_s")]
    values = [part.get(cell.learner) for part in parts if isinstance(part, dict)]
    if len(values) == 2 and all(isinstance(v, (int, float)) for v in values):
        return float(sum(values))
    return cell.cpu_time_s


def cell_model_bytes(cell: CellResult) -> int | None:
    """The size of the cell's models at the end, summed over the folds, when the run's summary
    reports it (``model_bytes``).

    >>> cell_model_bytes(CellResult("f", "s", "nb", 10, 1.0, 0.9, {},
    ...                             {"model_bytes": {"nb": 812}}))
    812
    """
    sizes = cell.summary.get("model_bytes")
    size = sizes.get(cell.learner) if isinstance(sizes, dict) else None
    return int(size) if isinstance(size, (int, float)) else None


def _mean_sd(value: Value | None, digits: int = 3) -> str:
    if value is None or value.mean is None:
        return "—"
    return f"{fmt(value.mean, digits)} ± {fmt(value.sd, digits)}"


# ----------------------------------------------------------------------------- provenance
@dataclass(frozen=True)
class Provenance:
    """What every output says of itself: the command, the configuration, the versions, when,
    and the wall and CPU seconds of its cells, summed (however many processes ran them, and
    whenever: a resumed benchmark's cells ran at different times)."""

    command: str
    configuration: str
    versions: dict[str, str]
    written: str
    wall_time_s: float | None = None
    cpu_time_s: float | None = None

    @classmethod
    def now(cls, benchmark: BenchmarkConfig, command: str,
            cells: Sequence[CellResult] = ()) -> "Provenance":
        versions = {"python": platform.python_version()}
        for package in PACKAGES:
            try:
                versions[package] = metadata.version(package)
            except metadata.PackageNotFoundError:
                continue
        if any(learner.model.startswith("moa.") for learner in benchmark.learners):
            from foldstream.operators.moa import MOA_VERSION

            versions["moa"] = MOA_VERSION
        text = yaml.safe_dump(benchmark.model_dump(mode="json", exclude_unset=True),
                              sort_keys=False, allow_unicode=True, width=100)
        return cls(command, text, versions,
                   datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                   sum(c.wall_time_s for c in cells) if cells else None,
                   sum(c.cpu_time_s for c in cells) if cells else None)

    @property
    def version_line(self) -> str:
        return ", ".join(f"{name} {version}" for name, version in self.versions.items())

    def comment(self, prefix: str) -> str:
        """The provenance as comment lines (``# `` for CSV, ``% `` for LaTeX)."""
        lines = [f"written by: {self.command}", f"on {self.written} with {self.version_line}"]
        if self.wall_time_s is not None:
            lines.append(f"the cells: {self.wall_time_s:,.0f} s wall, "
                         f"{self.cpu_time_s or 0:,.0f} s CPU, summed")
        lines.append("configuration:")
        lines += ["  " + line for line in self.configuration.splitlines()]
        return "".join(f"{prefix}{line}\n" for line in lines)

    def markdown(self) -> str:
        timing = "" if self.wall_time_s is None else \
            (f" The cells took {self.wall_time_s:,.0f} s wall and "
             f"{self.cpu_time_s or 0:,.0f} s CPU, summed.")
        return (f"Written {self.written} by `{self.command}` with {self.version_line}.{timing}\n\n"
                f"<details><summary>Configuration</summary>\n\n```yaml\n{self.configuration}"
                f"```\n\n</details>\n")

    def metadata(self) -> dict[str, str]:
        """A figure file's metadata (PNG text chunks, SVG's description)."""
        return {"Title": "foldstream benchmark",
                "Description": self.comment("").strip()}


# -------------------------------------------------------------------------------- results
@dataclass
class BenchmarkResults:
    """A benchmark's finished cells and everything shown of them.

    Attributes
    ----------
    benchmark : BenchmarkConfig
    cells : list of CellResult
        One per finished (stream, learner), in the grid's order.
    provenance : Provenance or None
        Said by every file :func:`write_outputs` writes.
    """

    benchmark: BenchmarkConfig
    cells: list[CellResult]
    provenance: Provenance | None = None
    _by_key: dict[tuple[str, str], CellResult] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._by_key = {c.key: c for c in self.cells}

    def __repr__(self) -> str:
        return (f"BenchmarkResults({len(self.cells)} of {len(self.streams) * len(self.learners)}"
                f" cells; streams {', '.join(self.streams)}; learners "
                f"{', '.join(self.learners)})")

    def write(self, out: str | Path) -> list[Path]:
        """Write the tables, figures and page into the folder ``out`` (:data:`OUTPUTS`)."""
        return write_outputs(self, out)

    # -- the grid
    @property
    def streams(self) -> list[str]:
        """The streams with at least one finished cell, in the configuration's order."""
        have = {c.stream for c in self.cells}
        return [s for s in self.benchmark.stream_names if s in have]

    @property
    def learners(self) -> list[str]:
        return self.benchmark.learner_names

    @property
    def measures(self) -> list[str]:
        return self.benchmark.measures

    @property
    def alpha(self) -> float:
        return self.benchmark.evaluation.alpha

    def value(self, stream: str, learner: str, measure: str, scope: str = "window"
              ) -> Value | None:
        cell = self._by_key.get((stream, learner))
        return None if cell is None else cell_value(cell.measures, measure, scope)

    @property
    def _cumulative(self) -> bool:
        """The window is the whole stream: its values are the whole stream's."""
        return self.benchmark.evaluation.window.kind == "cumulative"

    @cached_property
    def scopes(self) -> list[str]:
        """The scopes shown: the window, and the whole stream when a record holds it (and the
        window is not the whole stream already)."""
        whole = any(cell_value(c.measures, self.measures[0], "whole") for c in self.cells)
        return ["whole", "window"] if whole and not self._cumulative else ["window"]

    @property
    def rank_scope(self) -> str:
        """The scope the ranks are of: the whole stream when every cell has it."""
        if not self._cumulative and self.cells and all(
                cell_value(c.measures, self.measures[0], "whole") for c in self.cells):
            return "whole"
        return "window"

    def best(self, stream: str, measure: str, scope: str = "window") -> str | None:
        """The learner of the highest mean on ``stream`` (the first, on a tie)."""
        means = [(v.mean, learner) for learner in self.learners
                 if (v := self.value(stream, learner, measure, scope)) is not None
                 and v.mean is not None]
        if not means:
            return None
        top = max(m for m, _ in means)
        return next(learner for m, learner in means if m == top)

    def worse(self, stream: str, learner: str, measure: str, scope: str = "window"
              ) -> float | None:
        """The Wilcoxon p-value over folds of ``learner`` against the stream's best, when it
        is lower and the test rejects at ``alpha``; else ``None``."""
        best = self.best(stream, measure, scope)
        mine, theirs = (self.value(stream, name, measure, scope) for name in (learner, best))
        if best is None or best == learner or mine is None or theirs is None \
                or len(mine.folds) != len(theirs.folds) or len(mine.folds) < 2:
            return None
        test = wilcoxon(list(theirs.folds), list(mine.folds), self.alpha)
        return test["p_value"] if test["reject"] and mine.mean < theirs.mean else None

    # -- pandas tables
    @cached_property
    def comparison(self) -> "pandas.DataFrame":
        """One row per stream and learner: ``stream``, ``learner``, and per measure
        ``<m>_mean``, ``<m>_sd`` (the final window), ``<m>_whole_mean``, ``<m>_whole_sd`` (the
        whole stream, when the records hold it), ``<m>_best`` and ``<m>_worse_p`` (the
        Wilcoxon p-value against the best where it finds the learner worse)."""
        import pandas

        rows = []
        for stream in self.streams:
            for learner in self.learners:
                if (stream, learner) not in self._by_key:
                    continue
                row: dict[str, Any] = {"stream": stream, "learner": learner}
                for measure in self.measures:
                    for scope in ("window", *[s for s in self.scopes if s != "window"]):
                        v = self.value(stream, learner, measure, scope)
                        name = measure if scope == "window" else f"{measure}_{scope}"
                        row[f"{name}_mean"] = None if v is None else v.mean
                        row[f"{name}_sd"] = None if v is None else v.sd
                    scope = self.rank_scope
                    row[f"{measure}_best"] = self.best(stream, measure, scope) == learner
                    row[f"{measure}_worse_p"] = self.worse(stream, learner, measure, scope)
                rows.append(row)
        return pandas.DataFrame(rows)

    def rank_tests(self, measure: str | None = None) -> RankTests:
        """Average ranks, Friedman, Iman-Davenport, Nemenyi and Holm of ``measure`` (default:
        the first) over the streams where every learner has a value."""
        measure = measure or self.measures[0]
        table = [[getattr(self.value(s, learner, measure, self.rank_scope), "mean", None)
                  for learner in self.learners] for s in self.streams]
        return rank_tests(table, self.learners, self.alpha)

    @cached_property
    def ranks(self) -> "pandas.DataFrame":
        """Average rank of each learner (rows) per measure (columns), best first by the
        first measure."""
        import pandas

        frame = pandas.DataFrame({m: self.rank_tests(m).ranks.ranks for m in self.measures},
                                 index=pandas.Index(self.learners, name="learner"))
        return frame.sort_values(self.measures[0])

    @cached_property
    def tests(self) -> "pandas.DataFrame":
        """Per measure: streams ranked, Friedman's chi-square and p, Iman-Davenport's F and p,
        Nemenyi's q and critical difference at ``alpha``."""
        import pandas

        rows = []
        for measure in self.measures:
            t = self.rank_tests(measure)
            rows.append({
                "measure": measure, "streams": t.ranks.n_streams,
                "learners": len(t.ranks.learners),
                "friedman_chi2": t.friedman.statistic if t.friedman else None,
                "friedman_p": t.friedman.p_value if t.friedman else None,
                "iman_davenport_f": t.iman_davenport.statistic if t.iman_davenport else None,
                "iman_davenport_p": t.iman_davenport.p_value if t.iman_davenport else None,
                "nemenyi_q": t.nemenyi.q_alpha if t.nemenyi else None,
                "critical_difference": t.nemenyi.cd if t.nemenyi else None,
                "alpha": self.alpha})
        return pandas.DataFrame(rows).set_index("measure")

    @cached_property
    def holm(self) -> "pandas.DataFrame":
        """Holm's step-down against the best learner, per measure: one row per other
        learner, from the smallest p-value."""
        import pandas

        rows = []
        for measure in self.measures:
            t = self.rank_tests(measure)
            if t.holm is None:
                continue
            for r in t.holm.rows:
                rows.append({"measure": measure, "control": t.holm.control,
                             "learner": r.learner, "rank": r.rank, "z": r.z,
                             "p": r.p_value, "adjusted_p": r.adjusted_p,
                             "threshold": r.threshold, "reject": r.reject})
        return pandas.DataFrame(rows, columns=["measure", "control", "learner", "rank", "z",
                                               "p", "adjusted_p", "threshold", "reject"])

    @cached_property
    def cost(self) -> "pandas.DataFrame":
        """Per stream and learner: examples, wall seconds, examples per second, CPU seconds
        (``cpu_s``: in predict and learn, summed over the folds, when the run's summary
        reports them; else the cell's process, ``cpu_process_s``) and the models' size in
        bytes summed over the folds when the summary reports it."""
        import pandas

        rows = [{"stream": c.stream, "learner": c.learner, "examples": c.examples,
                 "wall_s": c.wall_time_s, "examples_per_s": c.examples_per_second,
                 "cpu_s": cell_cpu(c), "cpu_process_s": c.cpu_time_s,
                 "model_bytes": cell_model_bytes(c)} for c in self.cells]
        return pandas.DataFrame(rows, columns=["stream", "learner", "examples", "wall_s",
                                               "examples_per_s", "cpu_s", "cpu_process_s",
                                               "model_bytes"])

    # -- figures
    def cd_figure(self, measure: str | None = None):
        """The critical-difference diagram (Demšar 2006, Fig. 1) of ``measure``: the average
        ranks on an axis, rank 1 at the left; a bar joins learners whose ranks differ by less
        than Nemenyi's critical difference (the bar labelled CD above the axis)."""
        from foldstream.job.tools.benchmark.figures import cd_diagram

        measure = measure or self.measures[0]
        return cd_diagram(self.rank_tests(measure), f"{measure}, {self._scope_text()}, "
                                                     f"{len(self.streams)} streams")

    def streams_figure(self, measure: str | None = None):
        """The measure's mean ± sd over folds per stream and learner."""
        from foldstream.job.tools.benchmark.figures import per_stream

        measure = measure or self.measures[0]
        points = {learner: [self.value(s, learner, measure, self.rank_scope)
                            for s in self.streams] for learner in self.learners}
        return per_stream(self.streams, points, f"{measure}, {self._scope_text()}")

    def _scope_text(self, scope: str | None = None) -> str:
        """A scope in words; the final window of a cumulative window is the whole stream."""
        window = self.benchmark.evaluation.window.kind
        if (scope or self.rank_scope) == "whole":
            return "whole stream"
        return "whole stream (cumulative window)" if window == "cumulative" else \
            f"final window ({window} window)"

    # -- text
    def _cell_text(self, stream: str, learner: str, measure: str, scope: str,
                   bold: tuple[str, str], mark: str) -> str:
        v = self.value(stream, learner, measure, scope)
        text = _mean_sd(v)
        if v is None or v.mean is None:
            return text
        if self.best(stream, measure, scope) == learner:
            text = f"{bold[0]}{text}{bold[1]}"
        elif self.worse(stream, learner, measure, scope) is not None:
            text += mark
        return text

    def legend(self) -> str:
        what = self._scope_text(self.rank_scope)
        ev = self.benchmark.evaluation
        return (f"Mean ± sd over {ev.folds} folds ({ev.mode}, "
                f"{'prequential' if ev.prequential else 'holdout'}); best per stream in bold; "
                f"{WORSE}: worse than the stream's best by the Wilcoxon signed-rank test over "
                f"the folds at α = {self.alpha:g}. Ranks over the streams of the {what} means.")

    def markdown(self, provenance: bool = True) -> str:
        """The tables as Markdown (the comparison per measure and scope, ranks and tests,
        Holm, cost), and the provenance unless ``provenance=False``."""
        out = [f"# Benchmark: {len(self.learners)} learners on {len(self.streams)} streams\n",
               self.legend() + "\n"]
        for measure in self.measures:
            for scope in self.scopes:
                out.append(f"## {measure}, {self._scope_text(scope)}\n")
                out.append(_md_table(["stream", *self.learners], [
                    [stream, *(self._cell_text(stream, learner, measure, scope, ("**", "**"),
                                               WORSE) for learner in self.learners)]
                    for stream in self.streams] + ([["average rank", *(
                        _num(r, 2) for r in self.rank_tests(measure).ranks.ranks)]]
                        if scope == self.rank_scope else [])))
        out.append("## Tests over the streams\n")
        out.append(self._tests_markdown())
        out.append("## Cost\n")
        out.append(self._cost_markdown())
        if provenance and self.provenance is not None:
            out.append("## Provenance\n\n" + self.provenance.markdown())
        return "\n".join(out)

    def _tests_markdown(self) -> str:
        rows = []
        for measure in self.measures:
            t = self.rank_tests(measure)
            rows.append([measure, str(t.ranks.n_streams),
                         fmt(t.friedman.statistic, 2) if t.friedman else "—",
                         fmt_p(t.friedman.p_value) if t.friedman else "—",
                         fmt(t.iman_davenport.statistic, 2) if t.iman_davenport else "—",
                         fmt_p(t.iman_davenport.p_value) if t.iman_davenport else "—",
                         fmt(t.nemenyi.cd, 3) if t.nemenyi else "—"])
        text = _md_table(["measure", "streams", "Friedman χ²", "p", "Iman-Davenport F", "p",
                          f"Nemenyi CD (α = {self.alpha:g})"], rows)
        for measure in self.measures:
            t = self.rank_tests(measure)
            if t.holm is None:
                continue
            text += (f"\nHolm's step-down against the best, {t.holm.control} ({measure}):\n\n"
                     + _md_table(["learner", "average rank", "z", "p", "adjusted p", "rejects"],
                                 [[r.learner, fmt(r.rank, 2), fmt(r.z, 2), fmt_p(r.p_value),
                                   fmt_p(r.adjusted_p), "yes" if r.reject else "no"]
                                  for r in t.holm.rows]))
        return text

    def _cost_markdown(self) -> str:
        cost = self.cost
        out = []
        cpu = "CPU seconds" if all(cell_cpu(c) == c.cpu_time_s for c in self.cells) else \
            "CPU seconds in predict and learn, summed over the folds"
        for column, title, digits in (("examples_per_s", "Examples per second", 0),
                                      ("cpu_s", cpu, 1),
                                      ("model_bytes", "Model size (bytes, summed over folds)", 0)):
            if cost[column].isna().all():
                continue
            grid = cost.pivot(index="stream", columns="learner", values=column)
            out.append(f"{title}, per stream and learner:\n\n" + _md_table(
                ["stream", *self.learners],
                [[s, *(_num(grid.at[s, learner] if learner in grid.columns else None, digits)
                       for learner in self.learners)] for s in self.streams if s in grid.index]))
        if self._size_missing():
            out.append("Model sizes: the runs' summary records do not report them.\n")
        return "\n".join(out)

    def _size_missing(self) -> bool:
        return self.cost["model_bytes"].isna().all()

    def latex(self) -> str:
        """The comparison tables as LaTeX (booktabs), one ``table`` per measure and scope."""
        out = [self.provenance.comment("% ") if self.provenance else "",
               "% needs \\usepackage{booktabs}\n"]
        for measure in self.measures:
            for scope in self.scopes:
                t = self.rank_tests(measure)
                head = " & ".join(["stream", *(_tex(name) for name in self.learners)])
                lines = ["\\begin{table}", "\\centering", "\\small",
                         f"\\begin{{tabular}}{{l{'r' * len(self.learners)}}}", "\\toprule",
                         head + " \\\\", "\\midrule"]
                for stream in self.streams:
                    cells = [self._cell_text(stream, learner, measure, scope,
                                             ("\\textbf{", "}"), "$^\\dagger$")
                             .replace(" ± ", " $\\pm$ ") for learner in self.learners]
                    lines.append(" & ".join([_tex(stream), *cells]) + " \\\\")
                if scope == self.rank_scope:
                    lines.append("\\midrule")
                    lines.append(" & ".join(["average rank", *(_num(r, 2) for r in
                                                               t.ranks.ranks)]) + " \\\\")
                caption = (f"{_tex(measure)}, "
                           f"{self._scope_text(scope)}. "
                           + _tex(self.legend()).replace(WORSE, "$^\\dagger$"))
                if t.friedman is not None:
                    caption += (f" Friedman $\\chi^2_F$ = {t.friedman.statistic:.2f} "
                                f"(p = {fmt_p(t.friedman.p_value)}), Iman-Davenport $F_F$ = "
                                f"{fmt(t.iman_davenport.statistic, 2)} (p = "
                                f"{fmt_p(t.iman_davenport.p_value)}), Nemenyi CD = "
                                f"{t.nemenyi.cd:.3f}.")
                lines += ["\\bottomrule", "\\end{tabular}", f"\\caption{{{caption}}}",
                          "\\end{table}", ""]
                out.append("\n".join(lines))
        return "\n".join(out)

    def csv(self) -> str:
        """The comparison as CSV, one row per stream and learner (``stream``, ``learner``,
        ``<m>_mean``, ``<m>_sd``, ...), after ``#`` lines of provenance."""
        return (self.provenance.comment("# ") if self.provenance else "") + \
            self.comparison.to_csv(index=False, float_format="%.6g", lineterminator="\n")

    def cost_csv(self) -> str:
        return (self.provenance.comment("# ") if self.provenance else "") + \
            self.cost.to_csv(index=False, float_format="%.6g", lineterminator="\n")

    def html(self) -> str:
        """One self-contained page (the report's style): every table, both figures, the
        provenance."""
        e = html.escape
        title = (f"foldstream benchmark: {len(self.learners)} learners on "
                 f"{len(self.streams)} streams")
        out = [f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
               f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
               f"<title>{e(title)}</title><style>{STYLE}</style></head><body>",
               f"<h1>{e(title)}</h1>"]
        if self.provenance is not None:
            p = self.provenance
            timing = "" if p.wall_time_s is None else \
                (f" · the cells: {p.wall_time_s:,.0f} s wall, "
                 f"{p.cpu_time_s or 0:,.0f} s CPU, summed")
            out.append(f"<p class=\"dim\">written {e(p.written)} by <code>{e(p.command)}</code> · "
                       f"{e(p.version_line)}{e(timing)}</p>")
        out.append(f"<p>{e(self.legend())}</p>")
        measure = self.measures[0]
        out.append(f"<h2>Critical difference ({e(measure)})</h2>"
                   f"<figure><img src=\"{figure_uri(self.cd_figure(), 'svg')}\" alt=\"critical "
                   f"difference diagram\"><figcaption>Average ranks over the streams (1: the "
                   f"best); learners joined by a bar do not differ by Nemenyi's test at "
                   f"α = {self.alpha:g}.</figcaption></figure>")
        for measure in self.measures:
            for scope in self.scopes:
                rows = [[e(stream), *(self._cell_text(stream, learner, measure, scope,
                                                      ("<b>", "</b>"), WORSE)
                                      for learner in self.learners)] for stream in self.streams]
                if scope == self.rank_scope:
                    rows.append(["<i>average rank</i>", *(_num(r, 2) for r in
                                                          self.rank_tests(measure).ranks.ranks)])
                out.append(f"<h2>{e(measure)}, "
                           f"{e(self._scope_text(scope))}</h2>"
                           + _html_table(["stream", *self.learners], rows,
                                         range(1, len(self.learners) + 1)))
        out.append("<h2>Tests over the streams</h2>" + _markdown_to_html(self._tests_markdown()))
        streams = figure_uri(self.streams_figure(), "svg")
        out.append(f"<h2>Per stream</h2><figure><img src=\"{streams}\" alt=\"the measure per "
                   f"stream\"></figure>")
        out.append("<h2>Cost</h2>" + _markdown_to_html(self._cost_markdown()))
        if self.provenance is not None:
            out.append(f"<h2>Configuration</h2><pre>{e(self.provenance.configuration)}</pre>")
        out.append("</body></html>\n")
        return "".join(out)


# ---------------------------------------------------------------------------------- helpers
def _num(value: Any, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:,.{digits}f}"


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table, numbers right-aligned (every column but the first).

    >>> print(_md_table(["a", "b"], [["x", "1"]]))
    | a | b |
    |:--|--:|
    | x | 1 |
    <BLANKLINE>
    """
    def clean(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(clean(h) for h in headers) + " |",
             "|" + "|".join([":--"] + ["--:"] * (len(headers) - 1)) + "|"]
    lines += ["| " + " | ".join(clean(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _html_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
                numeric: Sequence[int] = ()) -> str:
    numeric = set(numeric)
    cls = lambda i: ' class="num"' if i in numeric else ""  # noqa: E731
    head = "".join(f"<th{cls(i)}>{html.escape(str(h))}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td{cls(i)}>{c}</td>" for i, c in enumerate(row))
                   + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _markdown_to_html(text: str) -> str:
    """The Markdown this module writes (paragraphs and tables) as HTML."""
    out, table = [], []

    def flush() -> None:
        if table:
            cells = [[c.strip().replace("\\|", "|") for c in line.strip().strip("|").split(" | ")]
                     for line in table if not line.startswith("|:")]
            out.append(_html_table(cells[0], [[html.escape(c) for c in row] for row in cells[1:]],
                                   range(1, len(cells[0]))))
            table.clear()

    for line in text.splitlines():
        if line.startswith("|"):
            table.append(line)
            continue
        flush()
        if line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    flush()
    return "".join(out)


def _tex(text: str) -> str:
    """Text escaped for LaTeX.

    >>> _tex("rbf50_0.001 & 5%")
    'rbf50\\\\_0.001 \\\\& 5\\\\%'
    """
    for char, escaped in (("\\", "\\textbackslash{}"), ("&", "\\&"), ("%", "\\%"),
                          ("$", "\\$"), ("#", "\\#"), ("_", "\\_"), ("{", "\\{"), ("}", "\\}"),
                          ("±", "$\\pm$"), ("α", "$\\alpha$")):
        text = text.replace(char, escaped)
    return text


def results_of(benchmark: BenchmarkConfig, cells: Sequence[CellResult],
               provenance: Provenance | None = None) -> BenchmarkResults:
    """The :class:`BenchmarkResults` of a benchmark's finished cells."""
    return BenchmarkResults(benchmark, list(cells), provenance)


def write_outputs(results: BenchmarkResults, out: str | Path) -> list[Path]:
    """Write :data:`OUTPUTS` into ``out``; the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []

    def text(name: str, content: str) -> None:
        path = out / name
        path.write_text(content, encoding="utf-8")
        written.append(path)

    text("comparison.md", results.markdown())
    text("comparison.tex", results.latex())
    text("comparison.csv", results.csv())
    text("cost.csv", results.cost_csv())
    meta = results.provenance.metadata() if results.provenance else {}
    for stem, figure in (("cd", results.cd_figure()), ("streams", results.streams_figure())):
        for fmt_ in ("png", "svg"):
            path = out / f"{stem}.{fmt_}"
            if fmt_ == "svg":  # no date, fixed ids: the same figure, the same bytes
                import matplotlib

                with matplotlib.rc_context({"svg.hashsalt": "foldstream"}):
                    figure.savefig(path, format="svg", metadata={**meta, "Date": None})
            else:
                figure.savefig(path, format="png", dpi=150, metadata=meta)
            written.append(path)
    text("benchmark.html", results.html())
    return written

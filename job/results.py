"""What a run leaves: its records in order (:class:`Results`), and the command line's final tables
made from them (:class:`Summary`).

They live apart from :mod:`foldstream.job.api` because more than the API makes them: the one
run function (:mod:`foldstream.job.runner`) collects a run's :class:`Summary` for the command
line's tables, and :meth:`Results.from_jsonl` reads any run's file back. pandas, matplotlib and
the JSON Schema are imported when a table, a figure or a file is asked for, not with this module.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from foldstream.connectors.sinks import JsonLinesSink
from foldstream.job.config import Config
from foldstream.job.tools.plot import save_figures, stream_figures
from foldstream.job.tools.records import RecordReader, group_by_stream
from foldstream.job.tools.tables import print_summary
from foldstream.operators.stages.aggregator import COMPARE
from foldstream.operators.records.outputs import (
    AlarmRecord, ComparisonRecord, DriftEvaluationRecord, DriftRecord, MeasuresRecord,
    OutputRecord, RankingRecord, SummaryRecord, VerdictRecord
)
from foldstream.operators.records.reading import as_typed
from foldstream.operators.records.base import Record
from foldstream.job.verdicts import (
    fold_scope_text, fold_verdict, live_scope_text, scope_disagreement
)


@dataclass(repr=False)
class Summary:
    """The command line's final tables (:func:`foldstream.job.tools.tables.print_summary`).

    It prints with rich in a terminal (``rich.print(summary)``), as plain text with ``print``,
    and as HTML in Jupyter.
    """

    summaries: list[SummaryRecord] = field(default_factory=list)
    last_comparisons: dict[str, list[ComparisonRecord]] = field(default_factory=dict)
    drift_evaluations: dict[str, list[Record]] = field(default_factory=dict)
    last_rankings: dict[str, list[RankingRecord]] = field(default_factory=dict)
    explain: bool = False  # the tables in words (``foldstream run --explain``)

    @classmethod
    def of(cls, records: Iterable[Record | OutputRecord]) -> "Summary":
        """The tables of a run's records, read in order.

        >>> def comparison(position, a):
        ...     return ComparisonRecord(stream="s", position=position, measure="accuracy", a=a,
        ...                             b="b", alpha=0.05, wilcoxon={}, sign={}, mcnemar={}, q={})
        >>> s = Summary.of([comparison(1, "x"), comparison(2, "y"), comparison(2, "z")])
        >>> [r.a for r in s.last_comparisons["s"]], s.summaries
        (['y', 'z'], [])
        """
        summary = cls()
        for record in records:
            summary.take(record)
        return summary

    def take(self, record: Record | OutputRecord) -> None:
        """Note one record (typed, or its JSON object) as it comes: a ``summary``, a
        ``comparison`` or a ``ranking`` (those of each stream's last report are kept), or a
        ``drift_evaluation``."""
        kind = record.TYPE if isinstance(record, OutputRecord) else record.get("type")
        if kind == DriftEvaluationRecord.TYPE:
            record = as_typed(record)
            self.drift_evaluations.setdefault(record.stream, []).append(record.as_dict())
            return
        if kind not in ("comparison", "ranking", "summary"):
            return
        record = as_typed(record)
        if isinstance(record, (ComparisonRecord, RankingRecord)):
            last = self.last_comparisons if isinstance(record, ComparisonRecord) \
                else self.last_rankings
            kept = last.setdefault(record.stream, [])
            if kept and kept[0].position != record.position:
                kept.clear()
            kept.append(record)
        else:
            self.summaries.append(record)

    def print(self, console: Console) -> None:
        """The tables on ``console``, as ``foldstream run`` ends (nothing without a summary)."""
        print_summary(console, self.summaries, self.last_comparisons, self.last_rankings,
                      self.drift_evaluations, explain=self.explain)

    def _console(self, width: int, **options: Any):
        console = Console(file=io.StringIO(), width=width, record=True, **options)
        if self.summaries:
            self.print(console)
        else:
            console.print("no summary record: the run has not ended")
        return console

    def __rich_console__(self, console, options):
        rendered = self._console(options.max_width, force_terminal=True,
                                 color_system=console.color_system or "standard")
        yield Text.from_ansi(rendered.file.getvalue())

    def __str__(self) -> str:
        return self._console(120, color_system=None).export_text()

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return self._console(120).export_html(inline_styles=True, code_format=(
            '<pre style="font-family:Menlo,\'DejaVu Sans Mono\',monospace;font-size:90%">'
            "<code>{code}</code></pre>"))


@dataclass(repr=False)
class Results:
    """The records of a run, in order, with tables and figures made from them.

    Attributes
    ----------
    records : list of dict
        The output records (docs/method.md §10) as the command line writes them, JSON values.
    rejected : list of dict
        The ``rejected`` records (dead letters): input that could not become an example.
    skipped : int
        :meth:`from_jsonl`: lines that were not records of the contract, left out.
    config : Config or None
        The configuration of the run (``None`` when read back from a file).
    """

    records: list[Record]
    rejected: list[Record] = field(default_factory=list)
    skipped: int = 0
    config: Config | None = None

    def __repr__(self) -> str:
        streams = list(dict.fromkeys(str(r.get("stream")) for r in self.records))
        learners = list(dict.fromkeys(r.learner for r in self._of(MeasuresRecord)))
        skipped = f", {self.skipped} skipped" if self.skipped else ""
        return (f"Results({len(self.records)} records, {len(self.rejected)} rejected{skipped}; "
                f"stream{'s' if len(streams) != 1 else ''} {', '.join(streams) or '-'}; "
                f"learners {', '.join(learners) or '-'})")

    def _of(self, cls: type[OutputRecord]) -> list[OutputRecord]:
        """The records of one class, typed, in order."""
        return [as_typed(r) for r in self.records
                if (r.TYPE if isinstance(r, OutputRecord) else r.get("type")) == cls.TYPE]

    # -- tables
    def predictions(self, path: str | Path | None = None):
        """The predictions file of the run (``sink.predictions``) as a pandas DataFrame: one
        row per example and fold, in stream, position and fold order, with the columns
        ``stream``, ``position``, ``id``, ``fold``, ``label``, then ``pred.<learner>`` (and
        ``scores.<learner>``, the class scores in the stream's order of first appearance, when
        kept) for every learner (docs/predictions.md).

        ``path``: the file to read; default the run's ``sink.predictions``.
        """
        if path is None:
            path = getattr(self.config.sink, "predictions", None) if self.config else None
        if path is None:
            raise ValueError("no predictions file: the run had no sink.predictions (give the "
                             "file's path)")
        from foldstream.connectors.predictions import read_predictions

        return read_predictions(path)

    def measures(self, measure: str | Sequence[str] | None = None):
        """The ``measures`` records as a tidy table: one row per stream, position, learner and
        measure.

        Parameters
        ----------
        measure : str or sequence of str, optional
            Keep these measures only (default: all, e.g. ``accuracy``, ``kappa_m``,
            ``recall[<label>]``).

        Returns
        -------
        pandas.DataFrame
            Columns ``stream``, ``position``, ``learner``, ``measure``, ``mean``, ``std``
            (over folds, ``NaN`` where undefined) and ``fold_0`` ... ``fold_<k-1>``, the value
            of each fold.

        Raises
        ------
        ValueError
            When no record holds a measure asked for.
        """
        import pandas as pd  # with the first table asked for: the command line never needs it

        wanted = [measure] if isinstance(measure, str) else None if measure is None else list(measure)
        rows, folds, seen = [], 0, set()
        for record in self._of(MeasuresRecord):
            for name in record.values:
                seen.add(name)
                if wanted is not None and name not in wanted:
                    continue
                value = record.value(name)
                folds = max(folds, len(value.folds))
                rows.append({"stream": record.stream, "position": record.position,
                             "learner": record.learner, "measure": name, "mean": value.mean,
                             "std": value.std,
                             **{f"fold_{i}": v for i, v in enumerate(value.folds)}})
        missing = [m for m in wanted or () if m not in seen]
        if missing:
            raise ValueError(f"no measure {', '.join(map(repr, missing))} in the records; they "
                             f"hold {', '.join(sorted(seen)) or 'no measures record'}")
        fold_columns = [f"fold_{i}" for i in range(folds)]
        columns = ["stream", "position", "learner", "measure", "mean", "std"]
        return _frame(pd, rows, columns + fold_columns, ["mean", "std", *fold_columns])

    def comparisons(self):
        """The ``comparison`` records as a table: one row per stream, position, measure and
        pair of learners.

        Returns
        -------
        pandas.DataFrame
            ``stream``, ``position``, ``measure``, ``a``, ``b``, ``alpha``; the Wilcoxon
            signed-rank test over folds (``wilcoxon_statistic``, ``wilcoxon_p``,
            ``wilcoxon_reject``); the sign test (``wins_a``, ``wins_b``, ``ties``, ``sign_p``,
            ``sign_reject``); McNemar's example-based test (``mcnemar_statistic``,
            ``mcnemar_p``, ``mcnemar_reject``); the Q statistic (``q``, ``< 0`` favours a);
            and the verdict of the fold tests as the summary tables word it (``better``: the
            better learner or ``None``, ``verdict``: the text), by
            :func:`foldstream.job.verdicts.fold_verdict`. With live verdicts on
            (docs/method.md §12), the ``accuracy`` rows add the confidence sequence:
            ``sequential_lower``, ``sequential_upper`` (an interval for error(a) - error(b),
            valid at every report at once), ``sequential_alpha`` and ``sequential_verdict``
            (``a_better``, ``b_better``, ``undecided``); other rows leave them empty. With
            regime verdicts on (§15) they add ``regime_segment``, ``regime_since``, ``regime_n``,
            ``regime_lower``, ``regime_upper``, ``regime_alpha``, ``regime_verdict``: the same
            over the examples since the comparison last changed. What each covers, in words:
            ``scope`` (the fold tests), ``sequential_scope`` and ``regime_scope``; and
            ``disagreement``, one sentence when these point different ways (else ``None``).
            Older files without these fields leave them empty.
        """
        import pandas as pd  # with the first table asked for: the command line never needs it

        latest: dict[tuple[Any, str], Record] = {}  # (stream, learner) -> its last measures
        rows = []
        for typed in (as_typed(r) for r in self.records
                      if (r.TYPE if isinstance(r, OutputRecord) else r.get("type"))
                      in ("measures", "comparison")):
            record = typed.as_dict()  # the verdicts' wording reads the JSON object
            if isinstance(typed, MeasuresRecord):
                latest[typed.stream, typed.learner] = record
                continue
            w, s, m = typed.wilcoxon, typed.sign, typed.mcnemar
            measures = {learner: measures for (stream, learner), measures in latest.items()
                        if stream == typed.stream}
            verdict = fold_verdict(record, measures)
            sequential = typed.sequential or {}
            regime = sequential.get("regime") or {}
            rows.append({
                "stream": typed.stream, "position": typed.position,
                "measure": typed.measure, "a": typed.a, "b": typed.b,
                "alpha": typed.alpha, "wilcoxon_statistic": w["statistic"],
                "wilcoxon_p": w["p_value"], "wilcoxon_reject": w["reject"],
                "wins_a": s["wins_a"], "wins_b": s["wins_b"], "ties": s["ties"],
                "sign_p": s["p_value"], "sign_reject": s["reject"],
                "mcnemar_statistic": m["statistic"], "mcnemar_p": m["p_value"],
                "mcnemar_reject": m["reject"], "q": typed.q["value"],
                "better": verdict.better, "verdict": verdict.text,
                **{f"sequential_{key}": sequential.get(key) for key in _SEQUENTIAL},
                **{f"regime_{key}": regime.get(key) for key in _REGIME},
                "scope": fold_scope_text(typed.scope),
                "sequential_scope": live_scope_text(sequential.get("n")),
                "regime_scope": live_scope_text(regime.get("n"), regime.get("since"),
                                                regime.get("segment"), "regime"),
                "disagreement": scope_disagreement(record, measures),
            })
        columns = ["stream", "position", "measure", "a", "b", "alpha", "wilcoxon_statistic",
                   "wilcoxon_p", "wilcoxon_reject", "wins_a", "wins_b", "ties", "sign_p",
                   "sign_reject", "mcnemar_statistic", "mcnemar_p", "mcnemar_reject", "q",
                   "better", "verdict", *(f"sequential_{key}" for key in _SEQUENTIAL),
                   *(f"regime_{key}" for key in _REGIME), "scope", "sequential_scope",
                   "regime_scope", "disagreement"]
        return _frame(pd, rows, columns, ["wilcoxon_statistic", "wilcoxon_p", "sign_p",
                                          "mcnemar_statistic", "mcnemar_p", "q",
                                          "sequential_lower", "sequential_upper",
                                          "sequential_alpha", "regime_lower", "regime_upper",
                                          "regime_alpha"])

    def verdicts(self):
        """The ``verdict`` records as a table: each change of a pair's live verdict
        (docs/method.md §12, §15).

        Returns
        -------
        pandas.DataFrame
            ``stream``, ``position``, ``a``, ``b``, ``measure``, ``verdict``, ``previous``,
            ``lower``, ``upper``, ``n``, ``alpha``: the first report at which the verdict
            became ``verdict`` (valid however often the reports were read); ``scope``
            (``stream``: every example so far; ``regime``: since the comparison last changed;
            older files: ``stream``), ``since`` (the first position covered), ``segment``
            (of a regime verdict) and ``covers``, the scope in words.
        """
        import pandas as pd  # with the first table asked for: the command line never needs it

        columns = [*_columns(VerdictRecord), "covers"]
        rows = [{**_row(r), "covers": live_scope_text(r.n, r.since, r.segment, r.scope)}
                for r in self._of(VerdictRecord)]
        return _frame(pd, rows, columns, ["lower", "upper", "alpha"])

    def drifts(self):
        """The ``drift`` records as a table: changes the folds agree on (docs/method.md §16).

        Returns
        -------
        pandas.DataFrame
            ``stream``, ``position``, ``learner``, ``detector``, ``quantity``, ``folds`` (the
            agreeing folds), ``first`` (the earliest of their alarms); empty for a file
            without drift records.
        """
        import pandas as pd

        return _frame(pd, [_row(r) for r in self._of(DriftRecord)], _columns(DriftRecord), [])

    def drift_evaluation(self):
        """The ``drift_evaluation`` records as a table: each detector scored against the
        stream's known changes, beside its two baselines (docs/method.md §19).

        Returns
        -------
        pandas.DataFrame
            ``stream``, ``position`` (the stream's length), ``learner``, ``detector``,
            ``quantity``, ``of`` (``alarms``: every fold's, pooled; ``drifts``: the consensus
            drifts), ``folds``, ``window`` (acceptance), ``changes``; then the detector's
            scores (``alarms``, ``detected``, ``missed``, ``false_alarms``,
            ``false_alarms_per_10k``, ``precision``, ``recall``, ``f1``, ``delay_mean``,
            ``delay_median``, ``per_change``: a list of ``{position, detections, detected,
            delay}``), and the same scores of the baselines prefixed ``periodic_`` and
            ``random_``; empty for a run without known changes.
        """
        import pandas as pd

        head = ["stream", "position", "learner", "detector", "quantity", "of", "folds",
                "window", "changes"]
        numeric = ["false_alarms_per_10k", "precision", "recall", "f1", "delay_mean",
                   "delay_median"]
        scores = ["alarms", "detected", "missed", "false_alarms", *numeric, "per_change"]
        rows = []
        for record in self._of(DriftEvaluationRecord):
            row = {name: getattr(record, name) for name in head}
            row.update({name: record.scores[name] for name in scores})
            for baseline in ("periodic", "random"):
                row.update({f"{baseline}_{name}": getattr(record, baseline)[name]
                            for name in scores})
            rows.append(row)
        columns = head + scores + [f"{b}_{name}" for b in ("periodic", "random") for name in scores]
        return _frame(pd, rows, columns, numeric + [f"{b}_{name}" for b in ("periodic", "random")
                                                    for name in numeric])

    def alarms(self):
        """The ``alarm`` records as a table.

        Returns
        -------
        pandas.DataFrame
            ``stream``, ``position``, ``learner``, ``fold`` (from 0), ``detector``
            (``adwin``, ``page_hinkley``) and ``quantity`` (the watched loss).
        """
        import pandas as pd  # with the first table asked for: the command line never needs it

        return _frame(pd, [_row(r) for r in self._of(AlarmRecord)], _columns(AlarmRecord), [])

    def summary(self) -> Summary:
        """The command line's final tables: per stream, the headline measures at the end and the
        paired tests of the last report (:mod:`foldstream.job.tools.tables`)."""
        return Summary.of(self.records)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    # -- figures
    def plot(self, measures: Sequence[str] | str = COMPARE, out=None,
             formats: Sequence[str] = ("png",)) -> dict[str, Any]:
        """The figures of ``foldstream plot``, per stream (:mod:`foldstream.job.tools.plot`).

        Parameters
        ----------
        measures : sequence of str
            The measures that get a figure of their own (along the stream, mean over folds
            with the folds' band, alarms below).
        out : path, optional
            Also write every figure there as ``<stem>.<format>``, as ``foldstream plot`` does.
        formats : sequence of str
            ``png``, ``svg``, ``pdf``.

        Returns
        -------
        dict of str to matplotlib.figure.Figure
            By file stem: ``<stream>-<measure>``, ``<stream>-window_size``,
            ``<stream>-pvalues`` (two or more learners), ``<stream>-verdicts`` (live verdicts
            on), ``<stream>-cd-<measure>`` (three or more). In Jupyter, ``display(figure)`` shows one.

        Raises
        ------
        ValueError
            Without ``measures`` records, or on an unknown format.
        """
        measures = [measures] if isinstance(measures, str) else list(measures)
        streams = group_by_stream(self.records)
        if not streams:
            raise ValueError("no measures records to plot")
        figures = {stem: figure for data in streams.values()
                   for stem, figure in stream_figures(data, measures).items()}
        if out is not None:
            save_figures(figures, out, formats)
        return figures

    # -- files
    def to_jsonl(self, path, rejected=None) -> Path:
        """Write the records as ``foldstream run`` writes its metrics file, byte for byte
        (:func:`foldstream.operators.records.base.dumps`); ``rejected``: also the dead letters there.
        Returns the path."""
        for target, records in ((path, self.records), (rejected, self.rejected)):
            if target is not None:
                with JsonLinesSink(target) as sink:
                    for record in records:
                        sink.write(record)
        return Path(path)

    @classmethod
    def from_jsonl(cls, path) -> "Results":
        """Read a run's records back: a metrics file (``.gz`` too), or ``kafka://HOST:PORT/TOPIC``.

        A line that is not a record of the contract (not JSON, or not valid against the JSON
        Schema of ``foldstream schema``: :func:`~foldstream.operators.records.reading.parse_record`)
        is left out and counted in :attr:`skipped`; ``rejected`` records go to
        :attr:`rejected`.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     metrics = Path(folder) / "m.jsonl"
        ...     _ = metrics.write_text('not json\\n{"type": "alarm"}\\n{"schema":1,"type":"alarm",'
        ...         '"stream":"s","position":3,"learner":"ht","fold":0,"detector":"adwin",'
        ...         '"quantity":"loss"}\\n')
        ...     results = Results.from_jsonl(metrics)
        >>> results.skipped, results.alarms()[["position", "learner", "detector"]].values.tolist()
        (2, [[3, 'ht', 'adwin']])
        """
        reader = RecordReader(path)
        records: list[Record] = []
        rejected: list[Record] = []
        for record in reader:
            (rejected if record["type"] == "rejected" else records).append(record)
        return cls(records, rejected, skipped=reader.skipped)


_SEQUENTIAL = ("lower", "upper", "alpha", "verdict")
_REGIME = ("segment", "since", "n", "lower", "upper", "alpha", "verdict")


def _columns(cls: type[OutputRecord]) -> list[str]:
    """The columns of a table of one record type: its fields, in their order.

    >>> _columns(AlarmRecord)
    ['stream', 'position', 'learner', 'fold', 'detector', 'quantity']
    """
    return [f.name for f in fields(cls)]


def _row(record: OutputRecord) -> dict[str, Any]:
    return {f.name: getattr(record, f.name) for f in fields(record)}


def _frame(pd, rows: list[dict[str, Any]], columns: list[str], numeric: list[str]):
    """A DataFrame of ``rows`` with these columns (also when empty); JSON ``null`` in the
    numeric ones becomes ``NaN``."""
    frame = pd.DataFrame(rows, columns=columns)
    for column in numeric:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    return frame

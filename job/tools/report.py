"""``foldstream report METRICS.jsonl -o report.html``: one self-contained HTML file of a run.

To share a run's results (an experiment's, say) a single file that any browser opens, offline,
is what travels best: no folder of PNGs, no server, no JavaScript. The report leads, per stream,
with the results: the compact summary (:mod:`foldstream.job.tools.compact`, as ``foldstream
run`` ends) and the figures; then what the records tell of the evaluation (learners, mode,
folds, window, how often it reported; the run's configuration too when a record carries one);
then the same results in words (the end of the run, the fold tests of every pair at the last
report, the live verdicts of docs/method.md §12 when the records carry them, the average ranks),
with the long tables (drifts the folds agree on, verdict changes, alarms) folded in
``<details>``. The figures are those of
``foldstream plot`` (:mod:`foldstream.job.tools.plot`'s figure functions), embedded as
``data:`` images (SVG by default, PNG on request): an ``<img>`` is its own document, so the
figures' internal ids cannot collide, and the page needs nothing but itself.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from foldstream.connectors.sinks import Named, check_outputs
from foldstream.job.checks import check_choices
from foldstream.job.tools.plot import DEFAULT_MEASURES, DPI, stream_figures
from foldstream.job.tools.plot import bounded_learners, check_learner_count
from foldstream.job.tools.records import RecordError, RecordReader, StreamRecords, \
    describe_window, group_by_stream
from foldstream.job.tools.compact import Block, CompactSummary, compact_summary, fmt, \
    fmt_count, fmt_p
from foldstream.job.tools.tables import DRIFT_EVALUATION_COLUMNS, SUMMARY_MEASURES, \
    drift_evaluation_row
from foldstream.operators.stages.aggregator import VERDICT_MEASURE
from foldstream.operators.records.outputs import OutputRecord, SummaryRecord, VerdictRecord
from foldstream.operators.records.reading import as_typed
from foldstream.job.verdicts import (
    fold_verdict, live_scope_text, live_verdict_text, scope_disagreement, sequential_head
)


DEFAULT_OUT = "report.html"
FIGURE_FORMATS = ("svg", "png")  # the first is the default
INVALID_SHOWN = 5  # records left out, named in the report


# ------------------------------------------------------------------------------- facts
@dataclass
class StreamFacts:
    """What the records tell about one stream beyond what :func:`group_by_stream` sorts out."""

    stream: str
    counts: Counter = field(default_factory=Counter)  # records by type
    summary: SummaryRecord | None = None
    verdicts: list[VerdictRecord] = field(default_factory=list)  # `verdict` records (changes)
    drift_evaluations: list[Any] = field(default_factory=list)  # their JSON objects (§19)
    rejected: int = 0


@dataclass
class RunFacts:
    """Everything a report shows, gathered in one pass over the records."""

    source: str
    streams: dict[str, StreamRecords]
    facts: dict[str, StreamFacts]
    configs: list[Any]
    skipped: int  # lines that are not JSON objects
    invalid: list[str]  # why each record that breaks the record contract was left out


def gather(records: Iterable[Any], source: str = "", skipped: int = 0) -> RunFacts:
    """Sort a run's records (typed, or JSON objects) for the report; leave out (and say why)
    those that break the record contract (:func:`~foldstream.operators.records.reading.parse_record`).

    A configuration is shown when a record carries one: a record of type ``config`` or a
    ``config`` field of any record (today's records carry none; the report shows what is
    known instead).

    Examples
    --------
    >>> facts = gather([{"schema": 1, "type": "alarm", "stream": "s", "position": 1,
    ...                  "learner": "a", "fold": 0, "detector": "adwin", "quantity": "loss"},
    ...                 {"schema": 1, "type": "mystery"}])
    >>> facts.facts["s"].counts["alarm"], facts.invalid
    (1, ["mystery record: unknown type 'mystery'; expected one of measures, comparison, verdict, ranking, alarm, drift, drift_evaluation, learner_error, rejected, summary, part, holdout"])
    """
    facts: dict[str, StreamFacts] = {}
    configs: list[Any] = []
    invalid: list[str] = []
    good: list[OutputRecord] = []
    for record in records:
        if isinstance(record, dict) and "config" in record:
            if record["config"] not in configs:
                configs.append(record["config"])
            if record.get("type") == "config":
                continue
        try:
            record = as_typed(record)
        except RecordError as error:
            invalid.append(str(error))
            continue
        name = record.stream
        if not isinstance(name, str):  # a rejected record of no known stream
            continue
        good.append(record)
        stream = facts.setdefault(name, StreamFacts(name))
        stream.counts[record.TYPE] += 1
        if isinstance(record, SummaryRecord):
            stream.summary = record
        elif isinstance(record, VerdictRecord):
            stream.verdicts.append(record)
        elif record.TYPE == "drift_evaluation":
            stream.drift_evaluations.append(record.as_dict())
        elif record.TYPE == "rejected":
            stream.rejected += 1
    streams = group_by_stream(good)
    for data in streams.values():
        check_learner_count(data)
    return RunFacts(source, streams, facts, configs, skipped, invalid)


def report_every(positions: Sequence[int]) -> int | None:
    """The most common step between reporting positions (the last report may come sooner).

    >>> report_every([100, 200, 300, 350])
    100
    >>> report_every([5]) is None
    True
    """
    steps = Counter(b - a for a, b in zip(positions, positions[1:]) if b > a)
    return steps.most_common(1)[0][0] if steps else None


# ---------------------------------------------------------------------------- figures
def figure_uri(figure, fmt: str = FIGURE_FORMATS[0]) -> str:
    """A matplotlib figure as a ``data:`` URI (``svg`` or ``png``), with no timestamp in it."""
    buffer = io.BytesIO()
    if fmt == "svg":
        figure.savefig(buffer, format="svg", metadata={"Date": None})
        mime = "image/svg+xml"
    elif fmt == "png":
        figure.savefig(buffer, format="png", dpi=DPI)
        mime = "image/png"
    else:
        check_choices([fmt], FIGURE_FORMATS, "figure format")
    return f"data:{mime};base64,{base64.b64encode(buffer.getvalue()).decode('ascii')}"


# ------------------------------------------------------------------------------- html
def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: float | None, digits: int = 3) -> str:
    return fmt(None if isinstance(value, float) and math.isnan(value) else value, digits)


_p = fmt_p


def _alpha(value: Any) -> str:
    """A significance level: 0.05, 0.01667 (a Bonferroni share)."""
    return f"{value:.4g}" if isinstance(value, (int, float)) else "—"


_int = fmt_count


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Iterable[int] = (),
           caption: str | None = None) -> str:
    """An HTML table; cells are already HTML (escape what needs it before)."""
    numeric = set(numeric)
    cls = lambda i: ' class="num"' if i in numeric else ""  # noqa: E731
    head = "".join(f"<th{cls(i)}>{_e(h)}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td{cls(i)}>{cell}</td>" for i, cell in enumerate(row))
                   + "</tr>" for row in rows)
    caption = f"<caption>{_e(caption)}</caption>" if caption else ""
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _block_html(block: Block) -> str:
    """A compact table (:class:`~foldstream.job.tools.compact.Block`) as HTML: every column
    (a page scrolls, it does not wrap), its two header lines over each other."""
    head = "".join(f'<th{" class=num" if c.numeric else ""}>'
                   + "<br>".join(_e(line) for line in c.header.split("\n")) + "</th>"
                   for c in block.columns)
    body = "".join("<tr>" + "".join(f'<td{" class=num" if c.numeric else ""}>{_e(cell)}</td>'
                                    for c, cell in zip(block.columns, row)) + "</tr>"
                   for row in zip(*(c.cells for c in block.columns)))
    legend = f'<p class="legend">{_e(block.legend)}</p>' if block.legend else ""
    return (f'<table class="compact"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
            f'</table>{legend}')


def compact_html(compact: CompactSummary) -> str:
    """The compact summary of a stream (:mod:`foldstream.job.tools.compact`) as HTML."""
    parts = [f'<p class="head">{_e(compact.head)}</p>', _block_html(compact.learners)]
    parts += [_block_html(Block(block.columns)) for block in compact.pairs]
    parts += [f"<p>{_e(line)}</p>" for line in compact.same]
    parts += [f'<p class="legend">{_e(block.legend)}</p>' for block in compact.pairs
              if block.legend]
    parts += [f'<p class="note">{_e(line)}</p>' for line in compact.notes]
    parts.append(f'<p class="dim">{_e(compact.tail)}</p>')
    return "".join(parts)


def _compact_section(data: StreamRecords, facts: StreamFacts) -> str:
    """The stream's results at a glance; the last report's tables without a summary record."""
    if facts.summary is None:
        return _summary_section(data, facts)
    comparisons = [series[-1].as_dict() for series in data.comparisons.values()]
    rankings = [ranking.as_dict() for ranking in data.rankings.values()]
    return compact_html(compact_summary(facts.summary, comparisons, rankings))


def _folded(title: str, body: str, count: int | None = None) -> str:
    """A long section, folded: its title and size show, the rest opens on a click."""
    size = f" ({count:,})" if count is not None else ""
    return f"<details><summary>{_e(title)}{size}</summary>{body}</details>" if body else ""


def _setup_section(data: StreamRecords, facts: StreamFacts) -> str:
    first = data.first
    positions = [r.position for r in next(iter(data.measures.values()))]
    compared = list(dict.fromkeys(key[0] for key in data.comparisons))
    every = report_every(positions)
    rows = [
        ("learners", ", ".join(_e(n) for n in data.learners)),
        ("validation", _e(f"{first.mode}, {first.folds} "
                          f"{'fold' if first.folds == 1 else 'folds'}, "
                          f"{'prequential' if first.prequential else 'holdout'}")),
        ("window", _e(describe_window(first.window))),
        ("reports", _e(f"{len(positions)}, every {every:,} examples" if every else
                       f"{len(positions)}") + _e(f" (positions {positions[0]:,} to "
                                                 f"{positions[-1]:,})")),
        ("compared measures", _e(", ".join(compared)) if compared else "—"),
        ("significance level α", _e(data.alpha) if data.alpha is not None else "—"),
        ("records", _e(", ".join(f"{n:,} {kind}" for kind, n in sorted(facts.counts.items())))),
    ]
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="facts"><tbody>{body}</tbody></table>'


def _summary_section(data: StreamRecords, facts: StreamFacts) -> str:
    parts = []
    summary = facts.summary
    if summary is not None:
        parts.append(
            f"<p>Finished: {summary.examples_read:,} records read, "
            f"{summary.examples_rejected:,} rejected, {summary.wall_time_s:.1f} s "
            f"({_int(summary.examples_per_second)} examples/s).</p>")
    else:
        parts.append("<p>No <code>summary</code> record: the input is unbounded or the run "
                     "did not finish; the values below are those of the last report.</p>")
    last = {name: records[-1] for name, records in data.measures.items()}
    shown = [m for m in SUMMARY_MEASURES if any(m in r.values for r in last.values())]
    rows = []
    for name, record in last.items():
        cells = [_e(name), _int(record.position)]
        for measure in shown:
            value = record.value(measure)
            cells.append("n/a" if value is None else
                         f"{_num(value.mean)} ± {_num(value.std)}")
        cells.append(_int(record.window_mean))
        rows.append(cells)
    parts.append(_table(["learner", "position", *shown, "window (mean)"], rows,
                        numeric=range(1, len(shown) + 3),
                        caption="last report: mean ± std over folds"))
    return "".join(parts)


def _tests_section(data: StreamRecords) -> str:
    if not data.comparisons:
        return "<p>No comparisons: a single learner.</p>"
    last_measures = {name: records[-1].as_dict() for name, records in data.measures.items()}
    rows, sentences = [], []
    for (measure, a, b), series in data.comparisons.items():
        typed = series[-1]
        record = typed.as_dict()  # the wording of verdicts reads the record's JSON
        w, s, m, q = typed.wilcoxon, typed.sign, typed.mcnemar, typed.q
        rows.append([_e(measure), _e(f"{a} vs {b}"), _p(w["p_value"]), _p(s["p_value"]),
                     _e(f"{s['wins_a']}:{s['wins_b']} ({s['ties']} ties)"),
                     _e(fold_verdict(record, last_measures).text),
                     _p(m["p_value"]), _num(q["value"])])
        sentence = scope_disagreement(record, last_measures)
        if sentence:
            sentences.append(f"<p class=\"note\">{_e(f'{a} vs {b} ({measure})')}: "
                             f"{_e(sentence)}</p>")
    position = next(iter(data.comparisons.values()))[-1].position
    return _table(["measure", "pair", "Wilcoxon p", "sign p", "wins", "fold tests say",
                   "McNemar p", "Q"], rows, numeric=(2, 3, 4, 6, 7),
                  caption=f"paired tests over folds at position {position:,} (α = {data.alpha}); "
                          f"McNemar is example-based, for reference only (docs/method.md §6)") \
        + "".join(sentences)


def _verdicts_section(data: StreamRecords, facts: StreamFacts) -> str:
    parts = []
    rows = []
    for (measure, a, b), series in data.comparisons.items():
        sequential = series[-1].sequential
        if measure != VERDICT_MEASURE or sequential is None:
            continue
        for live in (sequential, sequential.get("regime")):
            if isinstance(live, dict):
                rows.append([_e(f"{a} vs {b}"), _e(live_verdict_text(live, a, b)),
                             _int(live.get("n")), _alpha(live.get("alpha"))])
    if rows:
        parts.append(_table(["pair", "live verdict", "n", "α"], rows, numeric=(2, 3),
                            caption="live verdicts at the last report, over the whole stream "
                                    "(docs/method.md §12) and since the comparison last "
                                    "changed (§15)"))
    if facts.verdicts:
        parts.append(_folded("Verdict changes", _table(
            ["position", "pair", "scope", "from", "to", "interval", "n"],
            [[_int(v.position), _e(f"{v.a} vs {v.b}"),
              _e(live_scope_text(v.n, v.since, v.segment, v.scope) or ""),
              _e(sequential_head(v.previous, v.a, v.b)),
              _e(sequential_head(v.verdict, v.a, v.b)),
              f"[{_num(v.lower, 4)}, {_num(v.upper, 4)}]", _int(v.n)]
             for v in facts.verdicts], numeric=(0, 5, 6), caption="verdict changes"),
            len(facts.verdicts)))
    if not parts:
        return ""
    return "<h3>Live verdicts</h3>" + "".join(parts)


def _ranks_section(data: StreamRecords) -> str:
    if not data.rankings:
        return ""
    rows = []
    for measure, ranking in data.rankings.items():
        rows.append([_e(measure), _int(ranking.position),
                     _e(", ".join(f"{n} {r:.2f}" for r, n in ranking.ranks)),
                     _p(ranking.friedman["p_value"]), _num(ranking.critical_difference, 2)])
    return "<h3>Average ranks</h3>" + _table(
        ["measure", "position", "average ranks (1 = best)", "Friedman p", "Nemenyi CD"], rows,
        numeric=(1, 3, 4))


def _drifts_section(data: StreamRecords) -> str:
    """The changes the folds agree on (docs/method.md §16): they lead the alarms."""
    if not data.drifts:
        return ""
    rows = [[_int(d.position), _e(d.learner), _e(d.detector),
             _e(", ".join(map(str, d.folds))), _int(d.first)] for d in data.drifts]
    return _table(["position", "learner", "detector", "agreeing folds", "first alarm"], rows,
                  numeric=(0, 4), caption=f"{len(rows):,} drift{'' if len(rows) == 1 else 's'}: "
                                          f"changes that enough folds alarmed on together")


def _drift_evaluation_section(facts: StreamFacts) -> str:
    """The detectors scored against the stream's known changes (docs/method.md §19), beside
    the F1 of the baselines with the same alarms: the compact numeric table."""
    if not facts.drift_evaluations:
        return ""
    first = facts.drift_evaluations[0]
    rows = [[_e(cell) for cell in drift_evaluation_row(r)] for r in facts.drift_evaluations]
    return "<h3>Detectors against the known changes</h3>" + _table(
        DRIFT_EVALUATION_COLUMNS, rows, numeric=range(3, len(DRIFT_EVALUATION_COLUMNS)),
        caption=f"known changes at {', '.join(f'{c:,}' for c in first['changes'])}; an alarm "
                f"within {first['window']:,} examples after a change detects it; the baselines "
                f"(periodic, random) raise as many alarms as the detector")


def _alarms_section(data: StreamRecords) -> str:
    if not data.alarms:
        return "<p>No drift alarms.</p>"
    counts = Counter((a.learner, a.detector) for a in data.alarms)
    rows = [[_e(learner), _e(detector), _int(n)]
            for (learner, detector), n in sorted(counts.items())]
    return _table(["learner", "detector", "alarms"], rows, numeric=(2,),
                  caption=f"{len(data.alarms):,} drift alarm{'' if len(data.alarms) == 1 else 's'} "
                          f"(any fold)")


def _figures_section(data: StreamRecords, measures: Sequence[str], fmt: str) -> str:
    parts = []
    for stem, figure in stream_figures(data, measures).items():
        alt = stem.removeprefix(data.stream + "-").replace("_", " ")
        parts.append(f'<figure><img src="{figure_uri(figure, fmt)}" alt="{_e(alt)}" '
                     f'data-figure="{_e(stem)}"><figcaption>{_e(alt)}</figcaption></figure>')
    return "".join(parts)


STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2433;
       max-width: 1180px; margin: 0 auto; padding: 18px 24px 40px; }
h1 { font-size: 24px; margin-bottom: 4px; }
h2 { margin-top: 34px; border-bottom: 1px solid #e4e7ec; }
h3 { margin: 22px 0 8px; font-size: 16px; } .dim { color: #667085; }
table { border-collapse: collapse; margin: 8px 0 14px; font-variant-numeric: tabular-nums;
        font-size: 13.5px; }
caption { text-align: left; color: #667085; padding-bottom: 4px; }
th, td { text-align: left; padding: 4px 10px; border-bottom: 1px solid #e4e7ec;
         vertical-align: top; }
th { font-weight: 600; color: #475467; } .num { text-align: right; }
table.facts th { width: 13em; }
figure { margin: 16px 0; } figure img { max-width: 100%; height: auto; display: block; }
figcaption { color: #667085; font-size: 13px; }
pre { background: #f6f7f9; padding: 10px; overflow-x: auto; font-size: 12.5px; }
code { background: #f2f4f7; padding: 0 3px; border-radius: 3px; }
p.head { font-weight: 600; } p.legend, p.note { color: #475467; font-size: 13px; margin: 2px 0; }
table.compact { margin: 4px 0; } table.compact td, table.compact th { white-space: nowrap;
                                                                       padding: 2px 8px; }
details { margin: 10px 0; } summary { cursor: pointer; font-weight: 600; color: #475467; }
"""


def render_html(run: RunFacts, measures: Sequence[str] = DEFAULT_MEASURES,
                figures: str = FIGURE_FORMATS[0], title: str | None = None) -> str:
    """The whole report as one HTML document (no external resource, no script)."""
    check_choices([figures], FIGURE_FORMATS, "figure format")
    if not run.streams:
        raise ValueError("no measures records to report")
    title = title or f"foldstream report: {Path(run.source).name or 'records'}"
    written = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    notes = [f"records from <code>{_e(run.source)}</code>", f"written {written}"]
    if run.skipped:
        notes.append(f"{run.skipped:,} lines were not records and were skipped")
    if run.invalid:
        shown = "; ".join(run.invalid[:INVALID_SHOWN])
        more = f" (and {len(run.invalid) - INVALID_SHOWN:,} more)" \
            if len(run.invalid) > INVALID_SHOWN else ""
        notes.append(f"{len(run.invalid):,} records break the record contract and were left "
                     f"out: {_e(shown)}{more}")
    out = [f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
           f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
           f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
           f"<h1>{_e(title)}</h1><p class=\"dim\">{' · '.join(notes)}</p>"]
    if len(run.streams) > 1:
        out.append("<p>Streams: " + ", ".join(
            f'<a href="#stream-{i}">{_e(name)}</a>' for i, name in enumerate(run.streams)) + "</p>")
    if run.configs:
        out.append("<h2>Configuration</h2>" + "".join(
            f"<pre>{_e(json.dumps(c, indent=2, ensure_ascii=False))}</pre>" for c in run.configs))
    for i, (name, data) in enumerate(run.streams.items()):
        facts = run.facts.get(name, StreamFacts(name))
        out.append(f'<section id="stream-{i}"><h2>Stream {_e(name)}</h2>')
        out.append(_compact_section(data, facts))
        out.append("<h3>Figures</h3>" + _figures_section(data, measures, figures))
        out.append("<h3>Evaluation</h3>" + _setup_section(data, facts))
        if facts.rejected:
            out.append(f"<p>{facts.rejected:,} input records were rejected (dead letters).</p>")
        out.append("<h3>In words</h3>")
        if facts.summary is not None:
            out.append(_summary_section(data, facts))
        out.append(_tests_section(data))
        out.append(_verdicts_section(data, facts))
        out.append(_ranks_section(data))
        if data.drifts:
            out.append(_folded("Drifts the folds agree on", _drifts_section(data),
                               len(data.drifts)))
        out.append(_folded("Drift alarms", _alarms_section(data), len(data.alarms)))
        out.append(_drift_evaluation_section(facts))
        out.append("</section>")
    out.append("</body></html>\n")
    return "".join(out)


def write_report(source: str, out: str | Path = DEFAULT_OUT,
                 measures: Sequence[str] = DEFAULT_MEASURES,
                 figures: str = FIGURE_FORMATS[0]) -> Path:
    """Read the records of ``source`` (a file or ``kafka://HOST:PORT/TOPIC``) to their end and
    write the report to ``out``.

    Raises
    ------
    ValueError
        When the records hold no ``measures`` record, or on an unknown figure format.
    OSError
        When the source cannot be read or the report not written.
    SinkUnavailable
        (a ``ValueError``) When ``out`` is the source's file, whatever its spelling: a report
        never writes over the records it reads.
    """
    reader = RecordReader(source, typed=True)
    if not reader.source.is_kafka:
        check_outputs([Named("--out", out)], [Named("metrics", reader.source.path)])
    records = list(bounded_learners(reader))
    run = gather(records, str(reader.source), skipped=reader.skipped)
    document = render_html(run, measures, figures)
    path = Path(out)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True)
    path.write_text(document, encoding="utf-8")
    return path


def main(args) -> int:
    """``foldstream report METRICS [-o report.html] [--measures a,b] [--figures svg|png]``."""
    from foldstream.connectors.kafka import KafkaUnavailable
    from foldstream.job import exitcodes
    from foldstream.job.terminal import inert

    measures = [m.strip() for m in args.measures.split(",") if m.strip()]
    try:
        path = write_report(args.metrics, args.out, measures, args.figures)
    except (OSError, ValueError, KafkaUnavailable) as error:
        print(f"error: {inert(error, lines=True)}", file=sys.stderr)
        return exitcodes.UNUSABLE
    print(inert(path))
    return exitcodes.OK

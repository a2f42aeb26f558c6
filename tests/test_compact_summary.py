"""The compact summary of the default run: numeric lines that fit the terminal, no wrapped cell.

The records are the golden file's (``tests/test_golden.py``: every record of ``foldstream run``
with the embedded default), so the tables are those the default run ends with; the golden file
keeps no timing, so its summary gets one here (and CPU times).
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from foldstream.job.results import Summary
from foldstream.job.tools.compact import compact_summary, fmt, fmt_bytes, fmt_mean_sd, fmt_p, \
    short_names
from foldstream.job.tools.report import compact_html
from foldstream.operators.records.reading import as_typed

GOLDEN = Path(__file__).resolve().parent / "golden" / "default-run.jsonl.gz"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    for record in records:
        if record["type"] == "summary":
            names = [m["learner"] for m in record["measures"]]
            record.update(wall_time_s=66.0, examples_per_second=686.5,
                          cpu_predict_s={n: 1.25 for n in names},
                          cpu_learn_s={n: 10.5 for n in names})
    return records


def rendered(records: list[dict], width: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    Summary.of(records).print(console)
    return console.file.getvalue().splitlines()


def last_of(records: list[dict], kind: str) -> list[dict]:
    last = max(r["position"] for r in records if r["type"] == kind)
    return [r for r in records if r["type"] == kind and r["position"] == last]


def the_line(lines: list[str], start: str, count: int = 1) -> str:
    """The first of the ``count`` lines that start so (a pair has a line per measure whose
    verdicts differ; accuracy's comes first)."""
    found = [line for line in lines if line.startswith(start)]
    assert len(found) == count, (start, found)
    return found[0]


def test_the_default_run_fits_100_columns_with_every_test_and_no_wrapped_cell(records):
    lines = rendered(records, 100)
    assert max(map(len, lines)) <= 100
    summary = as_typed(records[-1])
    names = short_names([m.learner for m in summary.measures])
    for measures in summary.measures:  # one line per learner, every value on it
        line = the_line(lines, f"{measures.learner} ")
        for key in ("accuracy", "kappa", "kappa_m"):
            value = measures.value(key)
            assert fmt_mean_sd(value.mean, value.std) in line, (key, line)
        for key in ("accuracy", "kappa_m"):  # the whole stream, beside the window
            assert f" {fmt(measures.whole_value(key).mean)} " in line, (key, line)
        assert fmt_bytes(summary.model_bytes[measures.learner]) in line  # the cost
        cpu = summary.cpu_predict_s[measures.learner] + summary.cpu_learn_s[measures.learner]
        assert f" {fmt(cpu, 1)} " in line
    header = "\n".join(lines[:8])
    assert "whole" in header and "window" in header and "rank" in header and "CPU" in header
    accuracy = [c for c in last_of(records, "comparison") if c["measure"] == "accuracy"]
    for c in accuracy:  # one line per pair: Wilcoxon, sign, McNemar, the live interval, verdict
        line = the_line(lines, f"{names[c['a']]} − {names[c['b']]} ", count=2)
        assert fmt_p(c["wilcoxon"]["p_value"]) in line
        assert f"{c['sign']['wins_a']}:{c['sign']['wins_b']}" in line
        assert fmt_p(c["sign"]["p_value"]) in line and fmt_p(c["mcnemar"]["p_value"]) in line
        live = c["sequential"]
        assert f"[{fmt(live['lower'], signed=True)}, {fmt(live['upper'], signed=True)}]" in line
        assert line.rstrip().endswith(tuple("=?–") + tuple(names.values()))
    assert any(line.startswith("verdict: folds / live, whole stream") for line in lines)
    assert len(lines) < 30  # the prose tables took 80 lines at 100 columns


def test_a_narrow_terminal_drops_columns_and_wraps_no_cell(records):
    lines = rendered(records, 60)
    assert max(map(len, lines)) <= 60
    summary = as_typed(records[-1])
    names = short_names([m.learner for m in summary.measures])
    for measures in summary.measures:
        value = measures.value("accuracy")
        assert fmt_mean_sd(value.mean, value.std) in the_line(lines, f"{measures.learner} ")
    wide = rendered(records, 100)
    for c in last_of(records, "comparison"):
        if c["measure"] == "accuracy":
            pair = f"{names[c['a']]} − {names[c['b']]} "
            line = the_line(lines, pair, count=2)
            assert fmt_p(c["wilcoxon"]["p_value"]) in line
            assert len(line.split()) < len(the_line(wide, pair, count=2).split())


def test_a_measure_with_the_verdicts_of_accuracy_is_one_line(records):
    comparisons = last_of(records, "comparison")
    for c in comparisons:  # kappa_m's tests made to say what accuracy's say
        if c["measure"] == "kappa_m":
            twin = next(a for a in comparisons if a["measure"] == "accuracy"
                        and (a["a"], a["b"]) == (c["a"], c["b"]))
            c["wilcoxon"], c["sign"] = twin["wilcoxon"], twin["sign"]
            c["wilcoxon"] = {**twin["wilcoxon"], "p_value": twin["wilcoxon"]["p_value"] + 1e-3}
    measures = {m["learner"]: m for m in records[-1]["measures"]}
    for m in measures.values():  # kappa_m's fold values in accuracy's order
        m["values"]["kappa_m"] = m["values"]["accuracy"]
    compact = compact_summary(as_typed(records[-1]), comparisons)
    assert [block.columns[0].header for block in compact.pairs] == ["accuracy\na − b"]
    assert len(compact.same) == 1 and compact.same[0].startswith("kappa_m: same verdicts ")
    assert "Wilcoxon p" in compact.same[0]


def test_the_report_leads_with_the_compact_summary(records):
    summary = as_typed(records[-1])
    page = compact_html(compact_summary(summary, last_of(records, "comparison"),
                                        last_of(records, "ranking")))
    assert page.startswith('<p class="head">elec · 45,312 examples · bootstrap k=10')
    assert "Wilcoxon<br>p" in page and "McNemar<br>p" in page and "whole<br>acc" in page
    assert "model<br>size" in page

"""Every reader of records survives any line: it skips and counts what it cannot use, and goes on.

A metrics file or topic is input like any other: a line may be nested 100,000 deep, hold a
5,000-digit integer, a number JSON cannot hold, a position of 10**30 or a shape no record has.
Each kind is put among the records of the golden run, and every reader (the
:class:`RecordReader`, ``Results.from_jsonl``, ``report``, ``plot``, ``watch``, the dashboard
and ``schema --check``) must read the good records and count the bad lines, never raise. Then a
file of 10,000 learners: ``report`` and ``plot`` answer at once, refusing with the limit named.
"""

from __future__ import annotations

import gzip
import io
import json
import time
from pathlib import Path

import pytest
from rich.console import Console

from foldstream.job import cli
from foldstream.job.api import Results
from foldstream.job.tools.dashboard.state import DashboardState
from foldstream.job.tools.records import RecordReader
from foldstream.job.tools.watch import watch

GOLDEN = Path(__file__).parent / "golden" / "default-run.jsonl.gz"
STREAM = "elec"


def _golden_lines() -> list[str]:
    """The golden run's first reports (enough for every figure), without its summary."""
    lines = gzip.decompress(GOLDEN.read_bytes()).decode("utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    positions = sorted({r["position"] for r in records if r["type"] == "measures"})[:3]
    return [line for line, r in zip(lines, records)
            if r["type"] != "summary" and r["position"] <= positions[-1]]


def _measures(**change) -> dict:
    """A ``measures`` record of the golden stream, changed."""
    lines = gzip.decompress(GOLDEN.read_bytes()).decode("utf-8").splitlines()
    record = next(json.loads(line) for line in lines if '"type":"measures"' in line)
    return {**record, **change}


def _alarm(position) -> str:
    return ('{"schema":1,"type":"alarm","stream":"elec","position":' + str(position)
            + ',"learner":"hoeffding_tree","fold":0,"detector":"adwin","quantity":"loss"}')


HOSTILE = {
    "nested 100,000 deep": "[" * 100_000 + "]" * 100_000,
    "nested in a field": json.dumps(_measures(window="@"))
    .replace('"@"', "[" * 900 + "]" * 900),
    "a 5,000-digit integer": _alarm("9" * 5000),
    "a number out of range": json.dumps(_measures())
    .replace('"mean":', '"mean":1e999,"x":', 1),
    "NaN": json.dumps(_measures()).replace('"mean":', '"mean":NaN,"x":', 1),
    "a position of 10**30": _alarm(10**30),
    "a position beyond 2**63": json.dumps(_measures(position=2**64, learner="evil")),
    "a learner whose values are a list": json.dumps(_measures(learner="odd", values=[1, 2])),
    "an unknown type": '{"schema":1,"type":"gauge","stream":"elec","position":1}',
    "a record without fields": '{"schema":1,"type":"measures"}',
    "a string": '"measures"',
    "a comparison of the wrong shape": json.dumps(
        {"schema": 1, "type": "comparison", "stream": STREAM, "position": 100,
         "measure": "accuracy", "a": "x", "b": "y", "alpha": 0.05, "wilcoxon": "none",
         "sign": {}, "mcnemar": {}, "q": {}}),
}


@pytest.fixture(scope="module")
def good() -> list[str]:
    return _golden_lines()


@pytest.fixture(params=list(HOSTILE), ids=list(HOSTILE))
def hostile(request, good, tmp_path) -> tuple[Path, int]:
    """A metrics file of the good lines with one hostile line in their middle (and one at the
    end); returns it and how many good lines it has."""
    line = HOSTILE[request.param]
    middle = len(good) // 2
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join([*good[:middle], line, *good[middle:], line]) + "\n",
                    encoding="utf-8")
    return path, len(good)


def test_the_record_reader_skips_and_counts(hostile):
    path, count = hostile
    skipped: list[str] = []
    reader = RecordReader(path, on_skip=skipped.append)
    assert len(list(reader)) == count
    assert reader.skipped == 2 and len(skipped) == 2
    assert all(len(message) < 1000 for message in skipped)  # no line echoed whole


def test_results_from_jsonl_skips_and_counts(hostile):
    path, count = hostile
    results = Results.from_jsonl(path)
    assert len(results.records) == count and results.skipped == 2
    assert len(results.alarms()) > 0


def test_schema_check_reports_and_goes_on(hostile, capsys):
    path, count = hostile
    assert cli.main(["schema", "--check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{count} records checked" in out or f"{count + 2} records checked" in out


def test_watch_reads_to_the_end(hostile):
    path, count = hostile
    state = watch(str(path), follow=False, console=Console(file=io.StringIO(), width=120))
    assert state.records == count and STREAM in state.streams


def test_the_dashboard_reads_to_the_end(hostile):
    path, count = hostile
    state = DashboardState()
    shown = sum(state.update_many(batch) for batch in RecordReader(path).batches())
    assert shown == count
    assert state.streams[STREAM].position == max(
        json.loads(line)["position"] for line in _golden_lines())


def test_the_dashboard_refuses_what_a_reader_passes_it(good):
    state = DashboardState()
    for line in HOSTILE.values():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue  # no JSON: the reader never hands it on
        assert state.update(record) is False
    assert state.sources[""].skipped == state.sources[""].records > 0


def test_report_reads_to_the_end(hostile, tmp_path):
    path, _ = hostile
    out = tmp_path / "report.html"
    assert cli.main(["report", str(path), "-o", str(out), "--figures", "png",
                     "--measures", "accuracy"]) == 0
    page = out.read_text(encoding="utf-8")
    assert "2 lines were not records and were skipped" in page
    assert "<td>evil</td>" not in page and "<td>odd</td>" not in page


def test_plot_reads_to_the_end(hostile, tmp_path, capsys):
    path, _ = hostile
    assert cli.main(["plot", str(path), "--out", str(tmp_path / "figs"),
                     "--measures", "accuracy"]) == 0
    assert (tmp_path / "figs" / f"{STREAM}-accuracy.png").exists()


# ----------------------------------------------------------------------------- many learners
@pytest.fixture(scope="module")
def many_learners(tmp_path_factory) -> Path:
    """A file of 10,000 learners of one stream, two reports each."""
    path = tmp_path_factory.mktemp("many") / "metrics.jsonl"
    base = _measures()
    with path.open("w", encoding="utf-8") as f:
        for position in (100, 200):
            for i in range(10_000):
                f.write(json.dumps({**base, "position": position, "learner": f"l{i}"}) + "\n")
    return path


@pytest.mark.parametrize("command", ["report", "plot"])
def test_many_learners_are_refused_at_once_naming_the_limit(many_learners, tmp_path, capsys,
                                                            command):
    started = time.perf_counter()
    out = ["-o", str(tmp_path / "r.html")] if command == "report" else \
        ["--out", str(tmp_path / "figs")]
    assert cli.main([command, str(many_learners), *out]) == 2
    assert time.perf_counter() - started < 60
    err = capsys.readouterr().err
    assert "learners" in err and "at most 200 (MAX_LEARNERS)" in err

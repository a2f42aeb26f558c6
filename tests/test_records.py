"""One way to read records (job/tools/records.py), one schema version, one wording of verdicts.

Every reader (``plot``, ``report``, the Python API, ``watch``, the dashboard) reads through
:class:`~foldstream.job.tools.records.RecordReader`, so a gzip-compressed metrics file must read
the same as the plain one in each of them; files written before (the golden run) must still
read; and the words of a live verdict must be those of :mod:`foldstream.job.verdicts`
wherever they are shown, with no second wording (the dashboard's JavaScript holds none).

Every reader also survives any line: a line nested 100,000 deep, a 5,000-digit integer, a
number JSON cannot hold, a position of 10**30 or a shape no record has is skipped and counted,
and the reader goes on.
"""

from __future__ import annotations

import gzip
import html
import io
import json
import re
import time
from importlib import resources
from pathlib import Path

import pytest
from rich.console import Console

from foldstream.job import cli
from foldstream.job.api import Results
from foldstream.job.tools.dashboard.state import Cursor, DashboardState
from foldstream.job.tools.records import RecordReader, group_by_stream, read_records
from foldstream.job.tools.report import gather, render_html
from foldstream.job.tools.schema import RecordError, load_schema, validate_record
from foldstream.job.tools.watch import watch
from foldstream.operators.records.reading import parse_record
from foldstream.operators.records.base import SCHEMA_VERSION
from foldstream.job.verdicts import (
    ANY_TIME, BETTER, FOLDS, LIVE_VERDICTS, NO_DIFFERENCE, UNDEFINED, sequential_head,
    live_verdict_text
)

GOLDEN = Path(__file__).parent / "golden" / "default-run.jsonl.gz"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict[str, Path]:
    """A small run's metrics (SEA, three learners, two folds, live verdicts on), written plain,
    gzip-compressed as ``.gz``, and compressed under a plain name (found by its bytes)."""
    folder = tmp_path_factory.mktemp("records")
    plain = folder / "metrics.jsonl"
    assert cli.main(["run", "--quiet",
                     "--set", "source={kind: generator, model: river.datasets.synth.SEA, "
                              "limit: 600, seed: 3}",
                     "--set", f"sink.path={plain}", "--set", "evaluation.folds=2",
                     "--set", "evaluation.report_every=100",
                     "--set", "evaluation.verdicts.enabled=true"]) == 0
    data = plain.read_bytes()
    (folder / "metrics.jsonl.gz").write_bytes(gzip.compress(data))
    (folder / "hidden.jsonl").write_bytes(gzip.compress(data))
    return {"plain": plain, "gz": folder / "metrics.jsonl.gz", "hidden": folder / "hidden.jsonl"}


def test_a_gz_file_reads_like_the_plain_one(run):
    plain = read_records(run["plain"])
    assert len(plain) > 20 and {r["type"] for r in plain} >= {"measures", "comparison",
                                                              "ranking", "summary"}
    for name in ("gz", "hidden"):
        reader = RecordReader(run[name])
        assert list(reader) == plain and reader.skipped == 0


def test_report_plot_and_api_read_gz_files(run, tmp_path):
    plain = read_records(run["plain"])
    # report: the same facts, the same page (but for the source's name)
    facts = gather(read_records(run["gz"]), "m")
    assert facts.streams == gather(plain, "m").streams and not facts.invalid
    assert cli.main(["report", str(run["gz"]), "-o", str(tmp_path / "r.html")]) == 0
    assert "Live verdicts" in (tmp_path / "r.html").read_text(encoding="utf-8")
    # plot
    assert cli.main(["plot", str(run["gz"]), "--out", str(tmp_path / "figures"),
                     "--measures", "accuracy", "--format", "svg"]) == 0
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == sorted(
        f"{stem}.svg" for stem in _stems(plain))
    # the Python API
    results = Results.from_jsonl(run["gz"])
    assert results.records == [r for r in plain if r["type"] != "rejected"]
    assert results.skipped == 0


def _stems(records) -> list[str]:
    from foldstream.job.tools.plot import stream_figures

    return [stem for data in group_by_stream(records).values()
            for stem in stream_figures(data, ["accuracy"])]


def test_a_truncated_gz_file_gives_what_it_holds_and_says_the_rest_is_left_out(run, tmp_path):
    data = run["gz"].read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    messages: list[str] = []
    records = read_records(cut, on_skip=messages.append)
    whole = read_records(run["plain"])
    assert 0 < len(records) < len(whole) and records == whole[: len(records)]
    assert any("compressed data ends early or is damaged" in m for m in messages)


def test_the_golden_run_written_before_still_reads_and_validates():
    # The golden file keeps no timing: its summary lacks wall_time_s (tests/test_golden.py).
    skipped: list[str] = []
    records = read_records(GOLDEN, on_skip=skipped.append)
    lines = gzip.decompress(GOLDEN.read_bytes()).decode("utf-8").splitlines()
    assert len(records) == len(lines) - 1 > 100
    assert len(skipped) == 1 and "summary record" in skipped[0] and "wall_time_s" in skipped[0]
    for record in records[:50] + records[-5:]:
        validate_record(record)
        parse_record(record)


def test_one_schema_version_for_writers_and_readers(tmp_path):
    schema = load_schema()
    assert schema["$defs"]["schemaVersion"]["const"] == SCHEMA_VERSION
    alarm = {"schema": SCHEMA_VERSION, "type": "alarm", "stream": "s", "position": 3,
             "learner": "ht", "fold": 0, "detector": "adwin", "quantity": "loss"}
    later = {**alarm, "schema": SCHEMA_VERSION + 1}
    parse_record(alarm)
    for check in (validate_record, parse_record):
        with pytest.raises(RecordError, match=f"schema {SCHEMA_VERSION + 1} is not "
                                              f"{SCHEMA_VERSION}"):
            check(later)
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (alarm, later)) + "\n", encoding="utf-8")
    skipped: list[str] = []
    assert read_records(path, on_skip=skipped.append) == [alarm] and len(skipped) == 1
    state = DashboardState()
    assert state.update_many([alarm, later]) == 1


def test_a_verdict_of_no_known_value_is_no_record_for_any_reader():
    record = {"schema": SCHEMA_VERSION, "type": "verdict", "stream": "s", "position": 9,
              "a": "x", "b": "y", "measure": "accuracy", "verdict": "x_better",
              "previous": "undecided", "lower": -0.1, "upper": -0.01, "n": 9, "alpha": 0.05}
    with pytest.raises(RecordError, match="at verdict: 'x_better' is not one of"):
        parse_record(record)
    assert gather([record]).invalid and not DashboardState().update(record)


# ------------------------------------------------------------------------- one wording
def test_the_dashboard_script_holds_no_verdict_words():
    script = (resources.files("foldstream.job.tools.dashboard") / "static"
              / "dashboard.js").read_text(encoding="utf-8")
    for words in (*LIVE_VERDICTS[:2], ANY_TIME, FOLDS, NO_DIFFERENCE, UNDEFINED,
                  BETTER.format(name="")):
        assert words not in script, words
    assert not re.search(r"\bbetter\b", script)


def test_report_and_dashboard_word_live_verdicts_as_verdicts_py(run):
    records = read_records(run["plain"])
    (data,) = group_by_stream(records).values()
    live = {(a, b, scope): s
            for (measure, a, b), series in data.comparisons.items() if measure == "accuracy"
            for scope, s in (("stream", series[-1].sequential),
                             ("regime", series[-1].sequential["regime"]))}
    changes = [r for r in records if r["type"] == "verdict"]
    assert live
    expected = {key: live_verdict_text(s, *key[:2]) for key, s in live.items()}
    # the dashboard state: the page gets these words and shows no others
    state = DashboardState()
    state.update_many(records)
    meta = state.stream_message(None, None, Cursor())["meta"]
    shown = {(v["a"], v["b"], v["scope"]): v for v in meta["live"]}
    assert {key: v["text"] for key, v in shown.items()} == expected
    assert {key: v["head"] for key, v in shown.items()} == {
        key: sequential_head(s["verdict"], *key[:2]) for key, s in live.items()}
    assert [(v["head"], v["previous_head"]) for v in meta["changes"]] == [
        (sequential_head(r["verdict"], r["a"], r["b"]),
         sequential_head(r["previous"], r["a"], r["b"])) for r in reversed(changes)]
    # the report
    page = html.unescape(render_html(gather(records, "m"), ["accuracy"], "svg"))
    for text in expected.values():
        assert text in page
    for record in changes:
        assert f"<td>{sequential_head(record['verdict'], record['a'], record['b'])}</td>" in page


def test_following_a_gz_file_reads_it_once_and_a_new_one_in_its_place(tmp_path):
    path = tmp_path / "m.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"type": "a"}\n{"type": "b"}'))  # no newline at the end
    batches = RecordReader(path, follow=True, poll_interval=0.01, check=False).batches()
    try:
        seen = [r["type"] for _ in range(4) for r in next(batches)]
        assert seen == ["a", "b"]  # read once, the last line too; then nothing new
        new = tmp_path / "new.gz"
        new.write_bytes(gzip.compress(b'{"type": "c"}\n'))
        new.replace(path)  # a new run's file in its place
        assert [r["type"] for _ in range(4) for r in next(batches)] == ["c"]
    finally:
        batches.close()


# Every reader of records survives any line: it skips and counts what it cannot use, and goes on.



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

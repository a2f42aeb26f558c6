"""``foldstream dashboard`` and ``foldstream report``: the bounded state on its own, then the page
and the report in a real browser; ``--port 0`` prints and guards the port it is bound to.

The browser is Debian's ``chromium`` (or ``$FOLDSTREAM_CHROMIUM``) driven by Playwright's Python
package, pointed at that executable (no browser download). Without either, the browser tests
skip and say why.

``FOLDSTREAM_DOCS_SCREENSHOT=1`` makes the first browser test also write docs/dashboard.png,
the screenshot docs/dashboard.md shows.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from importlib import resources
from pathlib import Path, PurePosixPath

import pytest

from foldstream.job import cli
from foldstream.job.tools.dashboard.state import BoundedSeries, Cursor, DashboardState
from foldstream.job.tools.records import read_records
from foldstream.job.tools.report import gather, render_html, write_report


ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = (os.environ.get("FOLDSTREAM_CHROMIUM")  # another build of Chromium, if need be
            or shutil.which("chromium") or "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
LIVE_DEADLINE_S = 2.0  # a report written must be on the page within this long
LEARNERS = ("hoeffding_tree", "naive_bayes", "softmax")  # the embedded default's

# kafka-python loads its protocol files with importlib.resources' deprecated functions.
pytestmark = pytest.mark.filterwarnings("ignore:(read|open)_text is deprecated:DeprecationWarning")


# ------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def run_file(tmp_path_factory) -> Path:
    """A finished run's metrics: SEA, 2,000 examples, the default's three learners, 4 folds,
    a report every 100 examples, live verdicts on."""
    path = tmp_path_factory.mktemp("run") / "metrics.jsonl"
    assert cli.main(["run", "--quiet",
                     "--set", "source={kind: generator, model: river.datasets.synth.SEA, "
                              "limit: 2000, seed: 7}",
                     "--set", f"sink.path={path}", "--set", "evaluation.folds=4",
                     "--set", "evaluation.report_every=100",
                     "--set", "evaluation.verdicts.enabled=true"]) == 0
    return path


@pytest.fixture(scope="module")
def records(run_file) -> list[dict]:
    return read_records(run_file)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Dashboard:
    """``foldstream dashboard`` in a process of its own, on a free port."""

    def __init__(self, *sources: str, history: int | None = None, cwd: Path | None = None,
                 args: tuple[str, ...] = ()):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "foldstream.job.cli", "dashboard", *sources,
                   "--port", str(self.port), "--interval", "0.1"]
        if history is not None:
            command += ["--history", str(history)]
        command += list(args)
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, cwd=cwd)
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=1) as response:
                    if response.read() == b"ok":
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the dashboard did not start:\n{self.proc.stdout.read()}")
            time.sleep(0.1)

    def json(self, path: str) -> dict:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=5) as response:
            return json.load(response)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.stdout.read()


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright's Python package is not installed (pip install -e '.[test]')")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        except Exception as error:  # noqa: BLE001 - a broken install: say why, do not fail
            pytest.skip(f"Chromium at {CHROMIUM} does not start: {error}")
        yield browser
        browser.close()


class Page:
    """A browser page that records console errors and uncaught exceptions."""

    def __init__(self, browser, url: str, width: int = 1400):
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": width, "height": 1000})
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(url)

    def position(self) -> int:
        return int(self.page.get_attribute("#position", "data-position"))

    def close(self) -> None:
        self.page.close()


def _append(path: Path, records: list[dict]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _by_position(records: list[dict]) -> list[list[dict]]:
    """The records of each report in order (a report: every record at one position)."""
    groups: dict[int, list[dict]] = {}
    for record in records:
        if record["type"] != "summary":
            groups.setdefault(record["position"], []).append(record)
    return [groups[p] for p in sorted(groups)]


# ---------------------------------------------------------------------------- the page
def test_the_page_needs_no_internet_and_ships_in_the_package():
    static = resources.files("foldstream.job.tools.dashboard") / "static"
    vendor = static / "vendor"
    readme = (vendor / "README.md").read_text(encoding="utf-8")
    for name in ("uPlot.iife.min.js", "uPlot.min.css"):
        digest = hashlib.sha256((vendor / name).read_bytes()).hexdigest()
        assert f"| `{name}` | `{digest}` |" in readme, f"{name} is not the recorded file"
    assert "MIT License" in (vendor / "uPlot.LICENSE").read_text(encoding="utf-8")
    for name in ("index.html", "dashboard.js", "dashboard.css"):
        text = (static / name).read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text, f"{name} links outside"
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-data"]["foldstream.job.tools.dashboard"]
    folder = ROOT / "job" / "tools" / "dashboard"
    files = [p.relative_to(folder).as_posix() for p in (folder / "static").rglob("*")
             if p.is_file()]
    assert len(files) >= 7
    for name in files:  # every file of the page is package data (a glob's * stays in a folder)
        path = PurePosixPath(name)
        assert any(len(path.parts) == len(PurePosixPath(p).parts) and path.match(p)
                   for p in patterns), name


# ------------------------------------------------------------------- the bounded history
@pytest.mark.parametrize("history", [4, 5, 10, 64])
def test_a_series_stays_bounded_evenly_thinned_and_ends_at_the_latest_point(history):
    series = BoundedSeries(["y"], history)
    for x in range(1, 5000):
        series.append(x, (x / 2,))
        assert len(series) <= history
        assert series.xs[-1] == x  # the latest report is always shown
        kept = list(series.xs)[:series.permanent]
        assert kept == [1 + i * series.stride for i in range(len(kept))]  # evenly spaced
    assert series.column("y") == [x / 2 for x in series.xs]
    assert series.stride > 1 and series.epoch > 0


def test_a_page_applying_the_deltas_holds_what_the_server_holds():
    """Deltas taken at random moments, applied as dashboard.js applies them, rebuild the
    server's curve exactly, through thinnings and repeated positions."""
    rng = random.Random(3)
    series = BoundedSeries(["a", "b"], 16)
    cursor = Cursor()
    page_x: list[float] = []
    page_a: list[float | None] = []
    from foldstream.job.tools.dashboard.state import _delta

    x = 0
    for _ in range(2000):
        x += rng.choice([0, 1, 1, 1, 2])  # 0: the same position again (its values change)
        series.append(x, (rng.random(), None if rng.random() < 0.1 else x))
        if rng.random() < 0.3:
            delta = _delta(series, ("curve",), cursor)
            if delta is not None:
                del page_x[delta["from"]:], page_a[delta["from"]:]
                page_x += delta["x"]
                page_a += delta["c"]["a"]
            assert page_x == list(series.xs)
            assert page_a == series.column("a")
            assert len(page_x) <= 16


def test_the_state_skips_and_counts_what_is_not_a_record(records):
    state = DashboardState(history=50)
    bad = [{"schema": 1, "type": "measures", "stream": "sea", "position": 5},  # no learner
           {"schema": 1, "type": "comparison", "stream": "sea", "position": "x"},
           {"schema": 1, "type": "teleport", "stream": "sea", "position": 1},
           {"schema": 2, "type": "alarm"}, ["a", "list"], "text"]
    shown = state.update_many(records[:40] + bad + records[40:])
    assert shown == len(records)
    assert state.sources[""].skipped == len(bad)
    assert any("learner" in m for m in state.sources[""].skipped_messages)
    assert list(state.streams) == ["sea"]
    message = state.stream_message(None, "kappa_m", Cursor())
    assert message["meta"]["learners"] == list(LEARNERS)
    assert {tuple(p) for p in message["meta"]["pairs"]} == {
        ("hoeffding_tree", "naive_bayes"), ("hoeffding_tree", "softmax"),
        ("naive_bayes", "softmax")}


def test_nothing_in_the_state_grows_with_the_stream(records):
    """Twenty runs' worth of reports, one after the other along one stream, with a clock that
    moves 0.1 s per record: every curve, list and rate sample stays bounded."""
    now = [0.0]

    def clock() -> float:
        now[0] += 0.1
        return now[0]

    state = DashboardState(history=16, events=5, clock=clock)
    last = max(r["position"] for r in records)
    for lap in range(20):
        state.update_many(dict(r, position=r["position"] + lap * last) for r in records
                          if r["type"] != "summary")
    stream = state.streams["sea"]
    assert stream.position == 20 * last
    curves = [*stream.curves.values(), *stream.windows.values(), *stream.pvalues.values(),
              *stream.sequential.values()]
    assert curves and max(len(c) for c in curves) <= 16
    assert all(c.xs[-1] == 20 * last for c in curves)
    assert len(stream.alarms) == 5 < stream.alarm_count
    assert len(stream.changes) <= 5
    assert len(stream.meter.samples) <= 10 / 0.1 + 1  # the rate's 10 s horizon


def test_a_new_run_in_the_same_file_starts_the_stream_over(records):
    state = DashboardState()
    state.update_many(records)
    cursor = Cursor()
    first = state.stream_message("sea", "accuracy", cursor)
    assert first["reset"] and first["meta"]["position"] == 2000
    state.update_many(records[:30])  # positions went back: a new run
    again = state.stream_message("sea", "accuracy", cursor)
    assert again["reset"] and again["generation"] == 1
    assert again["meta"]["position"] == records[29]["position"]
    assert max(again["series"]["measure"]["naive_bayes"]["x"]) <= records[29]["position"]


# ------------------------------------------------------------------------- in a browser
@pytest.mark.slow  # a browser
def test_the_dashboard_of_a_finished_run(browser, run_file, tmp_path):
    records = read_records(run_file)
    shutil.copyfile(run_file, tmp_path / "metrics.jsonl")
    server = Dashboard("metrics.jsonl", cwd=tmp_path)  # a relative path: no tmp path shown
    page = Page(browser, f"{server.url}/?measure=kappa_m")
    try:
        page.page.wait_for_function(
            "() => { const d = window.foldstreamDashboard; return d && d.charts.measure"
            " && d.meta && d.meta.summary && d.overview }", timeout=15000)
        page.page.wait_for_timeout(300)  # the charts settle (fonts, sizes) for the screenshot
        shot = tmp_path / "dashboard.png"
        page.page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 20_000
        if os.environ.get("FOLDSTREAM_DOCS_SCREENSHOT"):
            shutil.copyfile(shot, ROOT / "docs" / "dashboard.png")

        chart = page.page.evaluate(
            """() => { const u = window.foldstreamDashboard.charts.measure;
                       return {labels: u.series.slice(1).map(s => s.label),
                               bands: u.bands.map(b => b.series.map(i => u.series[i].label)),
                               points: u.data[1].filter(v => v !== null).length}; }""")
        means = [label for label in chart["labels"] if not label.endswith((" low", " high"))]
        assert means == list(LEARNERS)  # one series per learner
        assert sorted(chart["bands"]) == sorted([f"{n} high", f"{n} low"] for n in LEARNERS)
        assert chart["points"] == 20  # every report of 2,000 examples, one per 100
        assert page.page.input_value("#measure") == "kappa_m"
        assert page.page.text_content("#measure-title").startswith("kappa_m: mean over 4 folds")

        table = page.page.inner_text("#tests")
        for a, b in [("hoeffding_tree", "naive_bayes"), ("hoeffding_tree", "softmax"),
                     ("naive_bayes", "softmax")]:
            assert f"{a} vs {b}" in table  # the verdict/test table names every pair
        last = {(r["measure"], r["a"], r["b"]): r for r in records if r["type"] == "comparison"}
        assert "(algorithms, over folds" in table
        live = [r["sequential"] for r in last.values() if "sequential" in r]
        assert len(live) == 3 and all(v["verdict"].replace("_", " ") in
                                      ("a better", "b better", "undecided") for v in live)
        # a decided verdict is marked in both scopes: the whole stream's and the regime's
        decided = [v for s in live for v in (s, s["regime"]) if v["verdict"] != "undecided"]
        assert len(page.page.query_selector_all("#tests td.verdict-decided")) == len(decided)
        assert "over the whole stream" in table and "since position" in table
        changes = [r for r in records if r["type"] == "verdict"]
        rows = page.page.query_selector_all("#changes tbody tr")
        assert len(rows) == len(changes) > 0
        assert page.page.is_visible("#card-sequential")

        assert page.position() == 2000
        assert "finished: 2,000 records read" in page.page.inner_text("#finished")

        page.page.select_option("#band", "std")  # switch the band: the chart redraws
        page.page.wait_for_function(
            "() => document.querySelector('#measure-title').textContent.includes('± std')")
        page.page.select_option("#measure", "accuracy")  # a new subscription
        page.page.wait_for_function(
            "() => window.foldstreamDashboard.measure === 'accuracy'"
            " && window.foldstreamDashboard.charts.measure.series[0] !== undefined", timeout=5000)
        page.page.select_option("#measure", "kappa_m")
        page.page.wait_for_function("() => window.foldstreamDashboard.measure === 'kappa_m'")
        assert page.errors == []
    finally:
        page.close()
        server.stop()


def test_a_stream_selector_switches_between_streams_of_several_sources(browser, run_file,
                                                                       tmp_path):
    records = read_records(run_file)
    (tmp_path / "a.jsonl").write_text(run_file.read_text(encoding="utf-8"), encoding="utf-8")
    other = [dict(r, stream="other") for r in records if r["position"] <= 700
             and r["type"] != "summary"]
    _append(tmp_path / "b.jsonl", other)
    server = Dashboard("a.jsonl", "b.jsonl", cwd=tmp_path)
    page = Page(browser, server.url)
    try:
        page.page.wait_for_function(
            "() => document.querySelectorAll('#stream option').length === 2"
            " && window.foldstreamDashboard.meta", timeout=15000)
        options = page.page.eval_on_selector_all("#stream option", "os => os.map(o => o.value)")
        assert options == ["sea · a.jsonl", "other · b.jsonl"]
        assert page.position() == 2000
        page.page.select_option("#stream", "other · b.jsonl")
        page.page.wait_for_function(
            "() => window.foldstreamDashboard.key === 'other · b.jsonl'"
            " && window.foldstreamDashboard.series.measure.softmax?.x.length === 7"
            " && document.querySelector('#position').dataset.position === '700'", timeout=5000)
        assert page.page.text_content("#stream-name") == "stream other · b.jsonl"
        assert "stream=other" in page.page.url  # the view is in the address, to share
        assert page.errors == []
    finally:
        page.close()
        server.stop()


def _wait_for_position(page: Page, position: int, timeout_s: float) -> float:
    """Seconds until the page shows ``position``; fails after ``timeout_s``."""
    started = time.monotonic()
    page.page.wait_for_function(
        f"() => Number(document.querySelector('#position').dataset.position) >= {position}",
        timeout=timeout_s * 1000)
    return time.monotonic() - started


@pytest.mark.slow  # a browser
def test_a_report_written_to_a_growing_file_shows_within_two_seconds(browser, records, tmp_path):
    reports = _by_position(records)
    source = tmp_path / "growing.jsonl"
    _append(source, [r for report in reports[:5] for r in report])
    history = 8
    server = Dashboard(str(source), history=history)
    page = Page(browser, server.url)
    try:
        _wait_for_position(page, reports[4][0]["position"], 15)
        delays = []
        for report in reports[5:]:
            _append(source, report)
            delays.append(_wait_for_position(page, report[0]["position"], LIVE_DEADLINE_S))
        assert max(delays) < LIVE_DEADLINE_S
        _append(source, [{"schema": 1, "type": "measures", "stream": "sea", "position": 1}])
        with source.open("a", encoding="utf-8") as handle:
            handle.write("not json\n")
        page.page.wait_for_function(
            "() => document.querySelector('#footer').textContent.includes("
            "'2 lines were not records')", timeout=LIVE_DEADLINE_S * 1000)
        page.page.wait_for_function(  # the last report's curves, not only the headline
            "() => window.foldstreamDashboard.series.measure.softmax?.x.slice(-1)[0] === 2000")
        lengths = page.page.evaluate(
            """() => { const s = window.foldstreamDashboard.series;
                       return [...Object.values(s.measure), ...Object.values(s.window),
                               ...Object.values(s.pvalues)].map(c => c.x.length); }""")
        assert lengths and max(lengths) <= history  # the page holds at most the history
        assert server.json("/api/overview")["history"] == history
        assert page.errors == []
    finally:
        page.close()
        server.stop()


@pytest.mark.kafka
def test_a_report_produced_to_a_topic_shows_within_two_seconds(browser, kafka_broker, records):
    from foldstream.connectors.kafka import create_topics, produce_jsonl

    reports = _by_position(records)
    topic = "dashboard-metrics"
    create_topics(kafka_broker.bootstrap, [topic])
    produce_jsonl(kafka_broker.bootstrap, topic, "sea",
                  [r for report in reports[:3] for r in report])
    server = Dashboard(f"kafka://{kafka_broker.bootstrap}/{topic}")
    page = Page(browser, server.url)
    try:
        _wait_for_position(page, reports[2][0]["position"], 20)
        delays = []
        for report in reports[3:6]:
            produce_jsonl(kafka_broker.bootstrap, topic, "sea", report)
            delays.append(_wait_for_position(page, report[0]["position"], LIVE_DEADLINE_S))
        assert max(delays) < LIVE_DEADLINE_S
        assert "naive_bayes vs softmax" in page.page.inner_text("#tests")
        deadline = time.monotonic() + 15  # the backlog is measured every few seconds
        while server.json("/api/overview")["sources"][0]["behind"] is None:
            assert time.monotonic() < deadline, "the topic's backlog was never measured"
            time.sleep(0.5)
        assert server.json("/api/overview")["sources"][0]["behind"] == 0  # all read
        page.page.wait_for_function(
            "() => !document.querySelector('#behind-box').hidden", timeout=3000)
        assert page.errors == []
    finally:
        page.close()
        server.stop()


@pytest.mark.slow  # figures
def test_the_html_report_shows_every_figure(browser, run_file, records, tmp_path):
    out = write_report(str(run_file), tmp_path / "report.html")
    text = out.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text and "<script" not in text
    page = Page(browser, out.as_uri())
    try:
        page.page.wait_for_load_state("load")
        figures = page.page.evaluate(
            """() => [...document.querySelectorAll('img')].map(i => ({
                   name: i.dataset.figure, complete: i.complete, natural: i.naturalWidth,
                   width: i.getBoundingClientRect().width,
                   height: i.getBoundingClientRect().height}))""")
        # accuracy, kappa_m, window size, p-values, live verdicts, a CD diagram per measure
        assert [f["name"] for f in figures] == [
            "sea-accuracy", "sea-kappa_m", "sea-window_size", "sea-pvalues", "sea-verdicts",
            "sea-cd-accuracy", "sea-cd-kappa_m"]
        for figure in figures:
            assert figure["complete"] and figure["natural"] > 0, figure
            assert figure["width"] > 200 and figure["height"] > 100, figure
        body = page.page.inner_text("body")
        for pair in ("hoeffding_tree vs naive_bayes", "hoeffding_tree vs softmax",
                     "naive_bayes vs softmax"):
            assert pair in body
        assert "bootstrap, 4 folds, prequential" in body and "every 100 examples" in body
        assert "Finished: 2,000 records read" in body
        changes = [r for r in records if r["type"] == "verdict"]
        assert "Live verdicts" in body and "(models, any time" in body
        rows = page.page.evaluate(
            """() => [...document.querySelectorAll('caption')]
                     .filter(c => c.textContent === 'verdict changes')
                     .map(c => c.closest('table').querySelectorAll('tbody tr').length)""")
        assert rows == [len(changes)]
        assert page.errors == []
    finally:
        page.close()


# ------------------------------------------------------------------------- the commands
@pytest.mark.slow  # figures
def test_report_command_writes_png_figures_and_fails_clearly(run_file, tmp_path, capsys):
    out = tmp_path / "sub" / "r.html"
    assert cli.main(["report", str(run_file), "-o", str(out), "--figures", "png",
                     "--measures", "accuracy"]) == 0
    text = out.read_text(encoding="utf-8")
    # accuracy, window, p-values, live verdicts, 2 CD
    assert text.count('src="data:image/png;base64,') == 6
    assert cli.main(["report", str(tmp_path / "missing.jsonl"), "-o", str(out)]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"schema": 1, "type": "alarm"}\n', encoding="utf-8")
    assert cli.main(["report", str(empty), "-o", str(out)]) == 2
    assert "no measures records" in capsys.readouterr().err


@pytest.mark.slow  # figures
def test_a_report_shows_a_configuration_when_a_record_carries_one(records):
    carrying = [dict(records[0], config={"evaluation": {"folds": 4}})] + records[1:]
    document = render_html(gather(carrying, "m.jsonl"))
    assert "<h2>Configuration</h2>" in document and "&quot;folds&quot;: 4" in document
    assert "<h2>Configuration</h2>" not in render_html(gather(records, "m.jsonl"))


def test_dashboard_command_refuses_what_it_can_never_read(tmp_path, capsys):
    assert cli.main(["dashboard", "kafka://nohost"]) == 2
    assert "kafka://HOST:PORT/TOPIC" in capsys.readouterr().err
    assert cli.main(["dashboard", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert cli.main(["dashboard", str(tmp_path / "m.jsonl"), "--history", "2"]) == 2
    assert "--history" in capsys.readouterr().err


@pytest.mark.slow  # a process of its own
def test_dashboard_command_says_when_the_port_is_taken(tmp_path):
    # In a process of its own: uvicorn runs an event loop, and Playwright's sync API keeps one
    # running in this one.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "foldstream.job.cli", "dashboard",
                               str(tmp_path / "m.jsonl"), "--port", str(port)],
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"error: could not listen on 127.0.0.1:{port}" in proc.stderr
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------------ Host check and CSP
def _get(port: int, path: str, host: str | None) -> tuple[int, dict[str, str], bytes]:
    """A GET with this ``Host`` header (``None``: none at all), as a rebinding page's is."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.putrequest("GET", path, skip_host=True)
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


@pytest.mark.slow  # a process of its own
def test_the_dashboard_refuses_a_foreign_host_and_sends_a_content_security_policy(run_file):
    server = Dashboard(str(run_file), args=("--allow-host", "dash.example.org"))
    try:
        port = server.port
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}",
                     "dash.example.org", "DASH.example.org:443"):
            for path in ("/", "/api/overview", "/static/dashboard.js"):
                status, headers, _ = _get(port, path, host)
                assert status == 200, (host, path)
                assert "script-src 'self'" in headers["content-security-policy"]
                assert "unsafe-inline" not in headers["content-security-policy"]
        assert _get(port, "/api/overview", None)[0] == 400  # HTTP/1.1 needs a Host (uvicorn)
        for host in (f"rebound.example:{port}", "rebound.example", f"localhost:{port + 1}",
                     f"127.0.0.1.rebound.example:{port}", ""):
            for path in ("/", "/api/overview", "/events", "/static/dashboard.js", "/healthz"):
                status, headers, body = _get(port, path, host)
                assert status == 421, (host, path)
                assert b"--allow-host" in body and b"records" not in body
                assert "content-security-policy" in headers
    finally:
        server.stop()


def test_a_bad_allow_host_is_refused_at_start(tmp_path, capsys):
    assert cli.main(["dashboard", str(tmp_path / "m.jsonl"), "--allow-host", "a/b"]) == 2
    assert "--allow-host 'a/b'" in capsys.readouterr().err


def test_the_page_draws_with_no_content_security_policy_violation(browser, run_file):
    server = Dashboard(str(run_file))
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    page.add_init_script("""window.__violations = [];
        document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(
            e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sourceFile || '') + ':' +
            e.lineNumber));""")
    try:
        response = page.goto(f"{server.url}/?measure=kappa_m")
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_function(
            "() => { const d = window.foldstreamDashboard; return d && d.charts.measure"
            " && d.meta && d.meta.summary && d.overview"
            " && d.charts.measure.data[1].filter(v => v !== null).length === 20 }",
            timeout=15000)
        page.select_option("#measure", "accuracy")  # redraws, new event stream
        page.wait_for_function("() => window.foldstreamDashboard.measure === 'accuracy'")
        page.wait_for_timeout(500)
        assert page.evaluate("window.__violations") == []
        assert [m for m in messages if "Content Security Policy" in m or
                m.startswith(("error", "pageerror"))] == []
        swatches = page.query_selector_all("#legend-measure .swatch")  # coloured all the same
        assert swatches and all(s.evaluate("e => e.style.background") for s in swatches)
    finally:
        page.close()
        server.stop()


# foldstream dashboard --port 0: the line printed and the Host guard name the bound port.



COMMAND = [sys.executable, "-m", "foldstream.job.cli", "dashboard"]


@pytest.mark.slow  # a process of its own, seconds to start
def test_port_0_prints_and_answers_on_the_bound_port(tmp_path):
    metrics = tmp_path / "m.jsonl"
    metrics.write_text("")
    server = subprocess.Popen([*COMMAND, str(metrics), "--port", "0"], stderr=subprocess.PIPE,
                              text=True)
    try:
        line = server.stderr.readline()
        found = re.search(r"on http://127\.0\.0\.1:(\d+) ", line)
        assert found, line
        port = int(found.group(1))
        assert port > 0
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
                    assert (r.status, r.read()) == (200, b"ok")  # the guard let it in
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
        server.stderr.close()

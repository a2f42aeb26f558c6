"""User text is shown as typed (job/terminal.py): no rich markup, no matplotlib mathtext, no
terminal control.

A stream, a learner or a path may hold ``[bold]x[/bold]``, ``[/]``, ``a$b$c`` or an emoji code
such as ``:smile:``: the terminal tables and messages show them as typed, and the figures'
texts are the names, not typeset as math. Control characters (escape sequences, C1, bidi
overrides) are shown inert by ``inert()`` wherever text reaches a terminal. Configuration names
of learners are restricted, so learners with such names come from a metrics file (watch, plot
and report read any file); streams and paths come straight from the configuration.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from foldstream.job.tools.plot import group_by_stream, stream_figures
from foldstream.job.tools.report import write_report
from foldstream.job.tools.records import read_records
from foldstream.job.tools.tables import print_summary

STREAM = "[/] a$b$c [bold]s[/bold] :smile:"  # rich shows an emoji code as the emoji
NAMES = {"nb": "[bold]x[/bold]", "nc": "[/]", "prior": "a$b$c:thumbs_up:"}
CONFIG = f"""
source: {{kind: file, path: in.csv, label: target, stream: {json.dumps(STREAM)}}}
sink: {{kind: file, path: out.jsonl}}
evaluation: {{folds: 3, report_every: 200}}
learners:
  - {{name: nb, model: river.naive_bayes.GaussianNB}}
  - {{name: nc, model: river.dummy.NoChangeClassifier}}
  - {{name: prior, model: river.dummy.PriorClassifier}}
"""


def foldstream(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "foldstream.job.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A run in a folder named ``[x]``, of a stream named :data:`STREAM`."""
    folder = tmp_path_factory.mktemp("text") / "[x]"
    folder.mkdir()
    (folder / "in.csv").write_text("a,b,target\n" + "".join(
        f"{i % 7},{(i * 37) % 11},{'xy'[i % 3 == 0]}\n" for i in range(600)), encoding="utf-8")
    (folder / "run.yaml").write_text(CONFIG, encoding="utf-8")
    done = foldstream(folder, "run", "--no-progress", "run.yaml")  # checked below
    folder.joinpath("run.json").write_text(json.dumps([done.returncode, done.stdout, done.stderr]),
                                           encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def renamed(run_dir) -> Path:
    """The run's records with the learners renamed to :data:`NAMES`."""
    path = run_dir / "renamed.jsonl"
    text = (run_dir / "out.jsonl").read_text(encoding="utf-8")
    for old, new in NAMES.items():
        text = text.replace(json.dumps(old), json.dumps(new))
    path.write_text(text, encoding="utf-8")
    return path


def test_the_run_shows_the_stream_and_paths_as_typed(run_dir):
    code, out, err = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert code == 0 and "Traceback" not in out + err, err  # it crashed after a complete run
    assert f"{STREAM} · 600 examples" in out
    assert "records: out.jsonl; rejected records: out.rejected.jsonl" in out
    checked = foldstream(run_dir, "validate", "../[x]/run.yaml")
    assert checked.returncode == 0 and checked.stdout.startswith("../[x]/run.yaml: valid"), checked


@pytest.mark.parametrize("path", ["[bold]q.csv", "[/]q.csv"])
def test_an_error_names_the_path_as_typed(run_dir, path):
    done = foldstream(run_dir, "run", "run.yaml", "--set", f"source.path={json.dumps(path)}")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"no such file: {path}" in done.stderr


def test_the_summary_tables_show_learner_names_as_typed(renamed):
    records = list(read_records(renamed))
    summaries = [r for r in records if r["type"] == "summary"]
    last = max(r["position"] for r in records if r["type"] == "comparison")
    comparisons = {STREAM: [r for r in records
                            if r["type"] == "comparison" and r["position"] == last]}
    console = Console(record=True, width=250, file=open(os.devnull, "w"))
    print_summary(console, summaries, comparisons)
    text = console.export_text()
    lines = text.splitlines()
    for name in NAMES.values():
        assert any(line.startswith(f"{name} ") for line in lines)  # a learner row
    assert "[bold]x[/bold] (bxb)" in text and "bxb − [/]" in text  # a pair, by short names
    assert f"{STREAM} ·" in text


def test_watch_shows_learner_names_as_typed(renamed, run_dir):
    done = foldstream(run_dir, "watch", "--no-follow", renamed.name)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    for name in NAMES.values():
        assert f"│ {name} " in done.stdout
    assert f"stream {STREAM} ·" in done.stdout


def shown_texts(figure) -> list[tuple[str, bool]]:
    """What the figure draws: each text as matplotlib shows it, and whether as mathtext."""
    from matplotlib.text import Text

    figure.canvas.draw()  # tick labels and legends are made at drawing too
    return [text._preprocess_math(text.get_text()) for text in figure.findobj(Text)]


def test_figure_texts_are_the_names_not_mathtext(renamed):
    data = group_by_stream(read_records(renamed))[STREAM]
    figures = stream_figures(data, ["accuracy"])
    assert {stem.split("-", 1)[1] for stem in figures} >= {"accuracy", "window_size", "pvalues",
                                                            "cd-accuracy"}
    for stem, figure in figures.items():
        texts = shown_texts(figure)
        for text, math in texts:
            if "$b$" in text or "[/]" in text:
                assert not math, (stem, text)
        shown = {text for text, _ in texts}
        kind = stem.split("-", 1)[1]
        if kind in ("accuracy", "window_size"):
            assert set(NAMES.values()) <= shown, (stem, shown)  # the legend's entries
        if kind == "cd-accuracy":
            assert all(any(t.startswith(f"{name} (") for t in shown) for name in NAMES.values())
        assert any(STREAM in text for text in shown), (stem, shown)  # the title


def test_the_report_of_such_names_is_written(renamed, tmp_path):
    page = write_report(str(renamed), tmp_path / "r.html").read_text(encoding="utf-8")
    assert "[bold]x[/bold]" in page and "a$b$c" in page


# ------------------------------------------------------------------ text is inert on a terminal
"""Terminal escapes in user text are shown, never executed: a stream name, a learner name, a
path or a value read from a metrics file that holds ANSI escapes, NUL, OSC 0 (the window
title), OSC 52 (the clipboard) or their 8-bit forms reaches the terminal inert from ``run``,
``watch`` (also under a pseudo-terminal), ``report``'s warnings and the error messages.
"""

import pty
import select
import time

from foldstream.job.terminal import inert
from foldstream.operators.records.outputs import AlarmRecord, LearnerErrorRecord
from foldstream.operators.records.base import dumps

#: what a terminal would act on: colours, a window title, the clipboard (``rm -rf ~``),
#: 8-bit CSI and OSC, NUL, DEL, BEL, a carriage return and a right-to-left override
HOSTILE = ("h\x1b[5;7;35mBLINK\x00\x1b]0;TITLE\x07\x1b]52;c;cm0gLXJmIH4=\x07"
           "\x9b2J\x9d0;T\x9c\x7f\r\u202eZ")
#: HOSTILE as a command-line argument (which cannot hold NUL)
ARGUMENT = HOSTILE.replace("\x00", "")
#: bytes none of HOSTILE's may leave as (a terminal with 8-bit controls reads 0x9b alone)
RAW = (b"\x1b", b"\x9b", b"\x9d", b"\x00", b"\x07", b"\x7f", b"\r", "\u202e".encode())
HOSTILE_CONFIG = f"""
source: {{kind: file, path: in.csv, label: target, stream: {json.dumps(HOSTILE)}}}
sink: {{kind: file, path: out.jsonl}}
evaluation: {{folds: 3, report_every: 200}}
learners:
  - {{name: nb, model: river.naive_bayes.GaussianNB}}
  - {{name: nc, model: river.dummy.NoChangeClassifier}}
"""


def assert_inert(data: bytes | str, *, styled: bool = False) -> None:
    """None of :data:`HOSTILE`'s controls is in ``data``, and it shows them as escapes.

    ``styled``: ``data`` comes from a terminal, where rich writes escapes of its own (colours,
    cursor moves): then no OSC (``ESC ]``) at all and not HOSTILE's own SGR."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    raw = [b for b in RAW if b not in ((b"\x1b", b"\r") if styled else ())]
    found = [b for b in raw if b in data]
    assert not found, (found, data[:2000])
    if styled:
        assert b"\x1b]" not in data and b"\x1b[5;7;35m" not in data, data[:2000]
    assert b"\\x1b]52;c;cm0gLXJmIH4=\\x07" in data, data[:2000]


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory) -> Path:
    """A run of a stream named :data:`HOSTILE`, and a metrics file of learners so named."""
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "in.csv").write_text("a,b,target\n" + "".join(
        f"{i % 7},{(i * 37) % 11},{'xy'[i % 3 == 0]}\n" for i in range(600)), encoding="utf-8")
    (folder / "run.yaml").write_text(HOSTILE_CONFIG, encoding="utf-8")
    done = foldstream(folder, "run", "--no-progress", "run.yaml")
    (folder / "run.json").write_text(json.dumps([done.returncode, done.stdout, done.stderr]),
                                     encoding="utf-8")
    text = (folder / "out.jsonl").read_text(encoding="utf-8")
    text = text.replace('"nb"', json.dumps("nb" + HOSTILE))
    text += dumps(LearnerErrorRecord(stream=HOSTILE, position=600, learner="nb" + HOSTILE, fold=1,
                                     error="Boom: " + HOSTILE, phase="learn").as_dict()) + "\n"
    text += dumps(AlarmRecord(stream=HOSTILE, position=600, learner="nb" + HOSTILE, fold=2,
                              detector=HOSTILE, quantity="loss").as_dict()) + "\n"
    (folder / "crafted.jsonl").write_text(text, encoding="utf-8")
    return folder


def test_inert_shows_every_control():
    shown = inert(HOSTILE)
    assert shown.isprintable() and "\\x1b]0;TITLE\\x07" in shown and "\\u202eZ" in shown
    assert inert("a\nb", lines=True) == "a\nb" and inert("Zürich ě 🌧") == "Zürich ě 🌧"


def test_run_shows_a_stream_name_inert(hostile_dir):
    code, out, err = json.loads((hostile_dir / "run.json").read_text(encoding="utf-8"))
    assert code == 0, err
    assert_inert(out)
    assert_inert(err + "\\x1b]52;c;cm0gLXJmIH4=\\x07")  # nothing on stderr to show


def test_run_to_standard_output_writes_records_inert(hostile_dir):
    (hostile_dir / "stdout.yaml").write_text(
        HOSTILE_CONFIG.replace("{kind: file, path: out.jsonl}", "{kind: stdout}"), "utf-8")
    done = subprocess.run([sys.executable, "-m", "foldstream.job.cli", "run", "--quiet",
                           "stdout.yaml"], cwd=hostile_dir, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    controls = RAW[:-1]  # a record keeps a right-to-left override: text, not a control
    assert not [b for b in controls if b in done.stdout + done.stderr]
    first = json.loads(done.stdout.splitlines()[0])
    assert first["stream"] == HOSTILE  # the same text, read back


def test_validate_and_errors_show_paths_inert(hostile_dir):
    name = "c" + ARGUMENT + "\udc9b.yaml"  # and a byte that is not UTF-8
    (hostile_dir / name).write_text(HOSTILE_CONFIG, encoding="utf-8")
    checked = subprocess.run([sys.executable, "-m", "foldstream.job.cli", "validate", name],
                             cwd=hostile_dir, capture_output=True, timeout=300)
    assert checked.returncode == 0, checked.stderr
    assert_inert(checked.stdout)
    assert b"\\x9b.yaml: valid" in checked.stdout
    for args in (["run", "run.yaml", "--set", f"source.path={json.dumps(HOSTILE)}"],
                 ["run", ARGUMENT], ["run", "run.yaml", ARGUMENT],
                 ["watch", "--no-follow", ARGUMENT], ["report", ARGUMENT], ["plot", ARGUMENT]):
        done = subprocess.run([sys.executable, "-m", "foldstream.job.cli", *args],
                              cwd=hostile_dir, capture_output=True, timeout=300)
        assert done.returncode == 2, (args, done.stderr)
        assert_inert(done.stdout + done.stderr)


def test_watch_shows_values_of_a_file_inert(hostile_dir):
    done = foldstream(hostile_dir, "watch", "--no-follow", "crafted.jsonl")
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout + done.stderr)
    assert "Boom:h\\x1b[5;7;35mBLINK" in "".join(done.stdout.split())  # the learner error


def _under_a_terminal(cwd: Path, *args: str) -> tuple[int, bytes]:
    """Run ``foldstream ARGS`` with a pseudo-terminal as its standard output and error."""
    master, slave = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "foldstream.job.cli", *args], cwd=cwd,
                               stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                               env={**os.environ, "COLUMNS": "400", "TERM": "xterm-256color"})
    os.close(slave)
    data = bytearray()
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the other end closed
                    break
                if not chunk:
                    break
                data += chunk
            elif process.poll() is not None:
                break
    finally:
        os.close(master)
    return process.wait(timeout=60), bytes(data)


def test_watch_under_a_terminal_shows_values_inert(hostile_dir):
    code, data = _under_a_terminal(hostile_dir, "watch", "--no-follow", "crafted.jsonl")
    assert code == 0, data[-2000:]
    assert b"\x1b[" in data  # a terminal indeed: rich draws with escapes of its own
    assert_inert(data, styled=True)


def test_run_under_a_terminal_shows_the_stream_inert(hostile_dir):
    code, data = _under_a_terminal(hostile_dir, "run", "run.yaml", "--set",
                                   "sink.path=again.jsonl")
    assert code == 0, data[-2000:]
    assert_inert(data, styled=True)


def test_report_messages_are_inert(hostile_dir):
    out = "r" + ARGUMENT + ".html"
    done = subprocess.run([sys.executable, "-m", "foldstream.job.cli", "report", "crafted.jsonl",
                           "-o", out], cwd=hostile_dir, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout)  # the path written
    assert b"Glyph" in done.stderr  # matplotlib's warnings quote the names' characters
    assert not [b for b in RAW if b in done.stderr]


def test_log_messages_are_inert():
    import io
    import logging

    from foldstream.job import logs

    out = io.StringIO()
    logs.setup("info", stream=out)
    try:
        logging.getLogger("foldstream.test").info("closing %s failed", HOSTILE)
    finally:
        logs.setup(logs.DEFAULT_LEVEL)
    assert_inert(out.getvalue())

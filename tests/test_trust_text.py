"""User text is shown as typed (issue 18, kind 8): no rich markup, no matplotlib mathtext.

A stream, a learner or a path may hold ``[bold]x[/bold]``, ``[/]`` or ``a$b$c``: the terminal
tables and messages show them as typed (they mangled them, or crashed after a complete run),
and the figures' texts are the names, not typeset as math. Configuration names of learners are
restricted, so learners with such names come from a metrics file (watch, plot and report read
any file); streams and paths come straight from the configuration.
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

STREAM = "[/] a$b$c [bold]s[/bold]"
NAMES = {"nb": "[bold]x[/bold]", "nc": "[/]", "prior": "a$b$c"}
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
    assert f"stream {STREAM}: 600 examples" in out
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
    for name in NAMES.values():
        assert f"│ {name} " in text  # a learner row
    assert "[bold]x[/bold] vs [/]" in text  # a pair
    assert f"stream {STREAM}:" in text


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

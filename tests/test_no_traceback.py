"""No command of the README prints a Python traceback for a broken input.

Each row of :data:`CASES` runs one ``foldstream`` command line in a fresh process (the way a
user meets it: the traceback a user would see is what the interpreter prints for an exception
that escapes ``main``) and checks:

* the exit code is the one of :mod:`foldstream.job.exitcodes` the row names;
* the message says what is wrong: standard error (or, when that is empty, standard output, where
  ``schema --check`` reports) contains the row's ``says`` (case-insensitive, spaces folded, so
  a message rich wrapped over lines still matches);
* neither standard output nor standard error holds ``Traceback``.

To add a case, append a :class:`Case` to :data:`CASES` (or a list of them to
:data:`MORE_CASES`). Its arguments may name the prepared inputs as ``{name}``
(:func:`inputs`): ``{missing}`` (no such file), ``{folder}``, ``{empty}``, ``{garbage}``
(random bytes), ``{csv}`` (a tiny valid CSV stream), ``{metrics}`` (a tiny valid metrics file),
``{results}`` (a damaged experiment results file), ``{unwritable}`` (a path below a regular
file, which no one, root included, can create), ``{tmp}`` (the test's folder), ``{tiny}`` (the
smallest run's ``--set`` overrides: split into arguments). Every process is bounded by
:data:`TIMEOUT_S`; keep each case to a small input.
"""

from __future__ import annotations

import os
import random
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from foldstream.job import exitcodes

# Each case starts an interpreter that imports river and scipy: seconds each, dozens of cases.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 120
UNUSABLE, FAILED, OK = exitcodes.UNUSABLE, exitcodes.FAILED, exitcodes.OK
#: argparse's own exit code for a command line it cannot parse (usage printed)
USAGE = 2
TINY = ("--set source.path={csv} --set source.stream=s --set evaluation.folds=2 "
        "--set evaluation.report_every=50 "
        "--set 'learners=[{{name: nb, model: river.naive_bayes.GaussianNB}}]' "
        "--set sink.path={tmp}/out/m.jsonl")


@dataclass(frozen=True)
class Case:
    """One command line on a broken input, and how it must end."""

    id: str
    command: str  #: after ``foldstream``, shell-quoted, with ``{name}`` inputs
    code: int  #: the exit code (:mod:`foldstream.job.exitcodes`)
    says: str  #: a part of standard error (case-insensitive; spaces folded)
    stdin: bytes = b""


CASES: list[Case] = [
    # -- the command line itself
    Case("no-command", "", USAGE, "usage"),
    Case("unknown-command", "frobnicate", USAGE, "invalid choice"),
    Case("unknown-option", "run --frobnicate", USAGE, "unrecognized arguments"),
    Case("validate-unknown-option", "validate --frobnicate", USAGE, "unrecognized arguments"),
    # -- run and validate: the configuration file
    Case("run-missing-config", "run {missing}", UNUSABLE, "no such file"),
    Case("run-config-is-a-folder", "run {folder}", UNUSABLE, "is a directory"),
    Case("run-empty-config", "run {empty}", UNUSABLE, "error"),
    Case("run-garbage-config", "run {garbage}", UNUSABLE, "error"),
    Case("validate-missing-config", "validate {missing}", UNUSABLE, "no such file"),
    Case("validate-garbage-config", "validate {garbage}", UNUSABLE, "error"),
    # -- run and validate: --set
    Case("run-set-without-value", "run --set evaluation.folds", UNUSABLE, "--set"),
    Case("run-set-wrong-type", "run --set evaluation.folds=many", UNUSABLE, "evaluation.folds"),
    Case("run-set-unknown-key", "run --set evaluation.frobnicate=1", UNUSABLE,
         "evaluation.frobnicate"),
    Case("validate-set-bad-yaml", "validate --set 'learners=[{{'", UNUSABLE, "--set"),
    # -- run and validate: the source
    Case("run-source-missing", "run {tiny} --set source.path={missing}", UNUSABLE, "source.path"),
    Case("run-source-is-a-folder", "run {tiny} --set source.path={folder}", UNUSABLE,
         "source.path"),
    Case("run-source-empty", "run {tiny} --set source.path={empty}", UNUSABLE, "source.path"),
    Case("run-source-garbage", "run {tiny} --set source.path={garbage}", UNUSABLE, "source.path"),
    # -- run and validate: the sinks
    Case("run-sink-is-the-source", "run {tiny} --set sink.path={csv}", UNUSABLE, "sink.path"),
    Case("validate-sink-is-the-source", "validate {tiny} --set sink.path={csv}", UNUSABLE,
         "sink.path"),
    Case("validate-dead-letters-are-the-records",
         "validate {tiny} --set sink.dead_letter_path={tmp}/out/../out/m.jsonl", UNUSABLE,
         "sink.dead_letter_path"),
    Case("run-sink-unwritable", "run {tiny} --set sink.path={unwritable}", UNUSABLE,
         "not a directory"),
    Case("validate-sink-unwritable", "validate {tiny} --set sink.path={unwritable}", UNUSABLE,
         "not a directory"),
    Case("run-sink-is-a-folder", "run {tiny} --set sink.path={folder}", UNUSABLE, "sink.path"),
    # -- schema
    Case("schema-unknown-option", "schema --frobnicate", USAGE, "unrecognized arguments"),
    Case("schema-check-missing", "schema --check {missing}", UNUSABLE, "no such file"),
    Case("schema-check-folder", "schema --check {folder}", UNUSABLE, "is a directory"),
    Case("schema-check-garbage", "schema --check {garbage}", FAILED, ""),
    Case("schema-check-nothing", "schema --check", USAGE, "expected at least one argument"),
    # -- plot
    Case("plot-missing", "plot {missing} --out {tmp}/plots", UNUSABLE, "no such file"),
    Case("plot-folder", "plot {folder} --out {tmp}/plots", UNUSABLE, "error"),
    Case("plot-empty", "plot {empty} --out {tmp}/plots", UNUSABLE, "error"),
    Case("plot-garbage", "plot {garbage} --out {tmp}/plots", UNUSABLE, "error"),
    Case("plot-out-unwritable", "plot {metrics} --out {unwritable}", UNUSABLE, "error"),
    # -- report
    Case("report-missing", "report {missing} -o {tmp}/r.html", UNUSABLE, "no such file"),
    Case("report-folder", "report {folder} -o {tmp}/r.html", UNUSABLE, "error"),
    Case("report-empty", "report {empty} -o {tmp}/r.html", UNUSABLE, "error"),
    Case("report-garbage", "report {garbage} -o {tmp}/r.html", UNUSABLE, "error"),
    Case("report-out-unwritable", "report {metrics} -o {unwritable}", UNUSABLE, "error"),
    # -- watch (bounded: --no-follow)
    Case("watch-missing", "watch --no-follow {missing}", UNUSABLE, "no such file"),
    Case("watch-folder", "watch --no-follow {folder}", UNUSABLE, "error"),
    Case("watch-bad-interval", "watch --no-follow {metrics} --interval soon", USAGE, "invalid"),
    # -- experiment
    Case("experiment-missing", "experiment {missing}", UNUSABLE, "no such file"),
    Case("experiment-garbage", "experiment {garbage}", UNUSABLE, "error"),
    Case("experiment-out-unwritable",
         f"experiment {ROOT / 'conf/experiments/tiny.yaml'} --out {{unwritable}} --quiet",
         UNUSABLE, "--out"),
    Case("experiment-damaged-results",
         f"experiment {ROOT / 'conf/experiments/tiny.yaml'} --results {{results}} --quiet "
         f"--out {{tmp}}/exp", UNUSABLE, "line 1"),
    Case("experiment-results-is-a-folder",
         f"experiment {ROOT / 'conf/experiments/tiny.yaml'} --results {{folder}} --quiet "
         f"--out {{tmp}}/exp", UNUSABLE, "--results"),
    Case("experiment-bad-set", f"experiment {ROOT / 'conf/experiments/tiny.yaml'} "
                               f"--set replications=none", UNUSABLE, "replications"),
    # -- produce
    Case("produce-missing-config", "produce {missing}", UNUSABLE, "no such file"),
    Case("produce-bad-rate", "produce --rate -1", UNUSABLE, "--rate"),
    Case("produce-bad-set", "produce --set source.limit=none", UNUSABLE, "limit"),
    # -- dashboard (refused before it serves anything)
    Case("dashboard-bad-port", "dashboard {metrics} --port many", USAGE, "invalid"),
    Case("dashboard-no-source", "dashboard", USAGE, "required"),
]

#: Cases other parts of the work append (the lead merges them here).
MORE_CASES: list[Case] = [
    # -- hostile variants of the same kinds: outputs onto inputs, bad ports, odd files
    Case("report-out-is-the-metrics", "report {metrics} -o {metrics}", UNUSABLE, "--out"),
    Case("report-out-is-the-metrics-spelled-otherwise",
         "report {metrics} -o {tmp}/folder/../metrics.jsonl", UNUSABLE, "--out"),
    Case("dashboard-port-out-of-range", "dashboard {metrics} --port 99999", UNUSABLE, "--port"),
    Case("dashboard-port-negative", "dashboard {metrics} --port -1", UNUSABLE, "--port"),
    Case("cluster-start-port-out-of-range", "cluster start --port 99999 --dir {tmp}/cl",
         UNUSABLE, "--port"),
    Case("dashboard-interval-zero", "dashboard {metrics} --interval 0", USAGE, "--interval"),
    Case("dashboard-interval-nan", "dashboard {metrics} --interval nan", USAGE, "--interval"),
    Case("watch-interval-negative", "watch {metrics} --interval -1", USAGE, "--interval"),
    Case("watch-interval-nan", "watch {metrics} --interval nan", USAGE, "--interval"),
    Case("produce-rate-nan", "produce --rate nan", USAGE, "--rate"),
]


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, str]:
    """The broken (and a few whole) inputs the cases name, by name."""
    folder = tmp_path / "folder"
    folder.mkdir()
    (tmp_path / "empty.csv").write_bytes(b"")
    rng = random.Random(18)
    (tmp_path / "garbage.csv").write_bytes(bytes(rng.randrange(256) for _ in range(600)))
    rows = "".join(f"{i % 7 / 7:.3f},{(i // 3) % 2}\n" for i in range(120))
    (tmp_path / "s.csv").write_text("x,target\n" + rows, encoding="utf-8")
    (tmp_path / "results.jsonl").write_bytes(b"\xff\xfe not a results line\n")
    regular = tmp_path / "a-file"
    regular.write_text("x", encoding="utf-8")
    names = {"missing": tmp_path / "missing.csv", "folder": folder,
             "empty": tmp_path / "empty.csv", "garbage": tmp_path / "garbage.csv",
             "csv": tmp_path / "s.csv", "results": tmp_path / "results.jsonl",
             "unwritable": regular / "out.jsonl", "tmp": tmp_path,
             "metrics": tmp_path / "metrics.jsonl"}
    quoted = {name: shlex.quote(str(path)) for name, path in names.items()}
    quoted["tiny"] = TINY.format(**quoted)
    _write_metrics(tmp_path / "metrics.jsonl", quoted["tiny"])
    return quoted


def _write_metrics(path: Path, tiny: str) -> None:
    """A small metrics file, written by the run that the cases break (once per test)."""
    from foldstream.job.cli import main

    assert main(["run", "--quiet", *shlex.split(tiny), "--set", f"sink.path={path}"]) == OK


def foldstream(command: str, stdin: bytes = b"", cwd: Path | None = None
               ) -> subprocess.CompletedProcess:
    """``foldstream COMMAND`` in a fresh interpreter, bounded by :data:`TIMEOUT_S`."""
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "foldstream.job.cli", *shlex.split(command)],
                          input=stdin, capture_output=True, timeout=TIMEOUT_S, cwd=cwd, env=env)


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


@pytest.mark.parametrize("case", CASES + MORE_CASES, ids=lambda case: case.id)
def test_a_broken_input_ends_with_a_message_and_its_exit_code(case: Case, inputs, tmp_path):
    done = foldstream(case.command.format(**inputs), case.stdin, cwd=tmp_path)
    out = done.stdout.decode("utf-8", "replace")
    err = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in out + err, err
    assert done.returncode == case.code, err
    message = err if err.strip() else out  # schema --check reports on standard output
    if case.code != OK:
        assert message.strip(), "no message"
    assert _folded(case.says) in _folded(message), message


def test_the_cases_have_unique_names():
    names = [case.id for case in CASES + MORE_CASES]
    assert len(names) == len(set(names))


#: Commands that write to standard output, for :func:`test_a_closed_pipe_ends_any_command_quietly`.
PIPED = {
    "schema": "schema",
    "schema-check": "schema --check {metrics}",
    "validate": "validate",
    "run": "run --quiet {tiny} --set 'sink={{kind: stdout, dead_letter_path: {tmp}/d.jsonl}}'",
    "plot": "plot {metrics} --out {tmp}/plots",
    "report": "report {metrics} -o {tmp}/r.html",
    "watch": "watch --no-follow {metrics}",
}


@pytest.mark.parametrize("command", PIPED.values(), ids=PIPED.keys())
def test_a_closed_pipe_ends_any_command_quietly(command, inputs, tmp_path):
    """``foldstream ... | head``, its reader gone before the first line: exit code 141 (128 +
    SIGPIPE) and nothing on standard error."""
    args = shlex.split(command.format(**inputs))
    process = subprocess.Popen([sys.executable, "-m", "foldstream.job.cli", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                               env={**os.environ, "COLUMNS": "100"})
    process.stdout.close()  # every write to standard output now fails with EPIPE
    err = process.stderr.read().decode("utf-8", "replace")
    assert process.wait(timeout=TIMEOUT_S) == exitcodes.BROKEN_PIPE, err
    assert err == ""

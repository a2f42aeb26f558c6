"""The command line (job/cli.py): its commands, their exit codes and one-line errors.

``validate`` names the key and exits 2; ``run`` writes a generator's records to standard output
and runs the embedded default; an error no check foresaw is one line, its traceback a file; an
unreachable Kafka broker is exit 2 for ``run`` and the cluster entry point alike, found before
Flink starts; the progress bar reaches the Flink job; ``cluster`` and its commands refuse a
``--dir`` or ``--jobmanager`` they cannot use, naming it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from foldstream.job import exitcodes
from foldstream.job.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_validate_command_reports_the_key_and_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("source: {kind: generator, model: river.datasets.synth.SEA, limit: 10}\n"
                   "learners: [{name: a, model: river.tree.HoeffdingTreeClassifier}]\n"
                   "evaluation: {window: {kind: fading, alpha: 1.5}}\n")
    assert main(["validate", str(bad)]) == 2
    assert "evaluation.window.alpha" in capsys.readouterr().err
    assert main(["validate", str(bad), "--set", "evaluation.window.alpha=0.99"]) == 0


def test_run_generator_to_stdout(capsys):
    code = main(["run", "--quiet", "--set", "source={kind: generator, model: river.datasets.synth.SEA, "
                 "limit: 300, seed: 3}", "--set", "sink={kind: stdout, dead_letter_path: "
                 "out/ignored.jsonl}", "--set", "evaluation.folds=2", "--set", "evaluation.report_every=100"])
    assert code == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["stream"] for r in records} == {"sea"}
    assert [r["position"] for r in records if r["type"] == "measures"] == [100] * 3 + [200] * 3 + [300] * 3
    assert records[-1]["type"] == "summary"


@pytest.mark.slow  # the full default: 45,312 examples, 3 learners, 10 folds
def test_default_run_on_a_fresh_directory_ends_with_tables_and_a_summary(tmp_path):
    """`foldstream run` with no arguments: the packaged Electricity, the full default."""
    done = subprocess.run([sys.executable, "-m", "foldstream.job.cli", "run", "--no-progress"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr
    assert "Wilcoxon" in done.stdout and "hoeffding_tree" in done.stdout
    lines = (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()
    summary = json.loads(lines[-1])
    assert summary["type"] == "summary" and summary["position"] == 45_312
    assert summary["examples_rejected"] == 0
    assert [m["learner"] for m in summary["measures"]] == ["hoeffding_tree", "naive_bayes", "softmax"]
    rankings = [json.loads(line) for line in lines if '"type":"ranking"' in line]
    assert rankings and rankings[-1]["critical_difference"] > 0
    assert (tmp_path / "out" / "metrics.rejected.jsonl").read_text() == ""


def test_an_error_no_check_foresaw_is_one_line_and_its_traceback_a_file(monkeypatch, capsys):
    """A failure that no check of foldstream foresaw (a bug, a job failing after it started)
    ends with one line naming it and the file holding its traceback, exit code 1: no traceback
    on the terminal (no traceback reaches a user)."""
    from foldstream.job import cli

    def broken(*args, **kwargs):
        raise RuntimeError("an [unforeseen] failure\nsecond line")

    monkeypatch.setattr(cli, "run", broken)
    monkeypatch.delenv("FOLDSTREAM_TRACEBACK", raising=False)
    code = cli.main(["run", "--no-progress"])
    err = capsys.readouterr().err
    assert code == exitcodes.FAILED
    assert "Traceback" not in err and "second line" not in err
    assert "RuntimeError: an [unforeseen] failure" in " ".join(err.split())
    path = err.split("the traceback is in ")[1].split(")")[0].strip()
    assert "Traceback" in Path(path).read_text() and "second line" in Path(path).read_text()
    Path(path).unlink()
    monkeypatch.setenv("FOLDSTREAM_TRACEBACK", "1")
    with pytest.raises(RuntimeError):
        cli.main(["run", "--no-progress"])


# foldstream cluster and its commands refuse a --dir or --jobmanager they cannot use, naming it.



# --------------------------------------------------------------------------- cluster commands
@pytest.mark.parametrize("where", ["a file", "under a file", "a read-only place"])
def test_cluster_start_on_a_place_it_cannot_use_is_refused_naming_dir(tmp_path, capsys, where):
    blocker = tmp_path / "f"
    blocker.write_text("x")
    folder = {"a file": blocker, "under a file": blocker / "cluster",
              "a read-only place": Path("/proc/foldstream-cluster")}[where]
    assert main(["cluster", "start", "--dir", str(folder)]) == exitcodes.UNUSABLE
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith(f"error: --dir: ") and str(folder) in err, err
    assert blocker.read_text() == "x"


@pytest.mark.parametrize("address", ["localhost:abc", "localhost:", "x y:8081", "localhost",
                                     "localhost:99999"])
@pytest.mark.parametrize("command", [["jobs"], ["stop", "0123"]])
def test_a_jobmanager_that_is_no_address_is_refused_naming_it(capsys, address, command):
    with pytest.raises(SystemExit) as stop:
        main([*command, "--jobmanager", address])
    assert stop.value.code == exitcodes.UNUSABLE
    err = " ".join(capsys.readouterr().err.split())
    assert f"argument --jobmanager/-m: {address!r}:" in err, err


# ------------------------------------------------------------------ one exit code for a dead broker
@pytest.fixture
def flink_never_starts(monkeypatch):
    """A short broker probe, and a Flink that fails the test if the job gets as far as it."""
    from foldstream.job.engines.flink import env as flink_env
    from foldstream.job.engines.flink import kafka as flink_kafka

    # kafka-python wants its request timeout above fetch_max_wait_ms (500 ms)
    monkeypatch.setattr(flink_kafka, "PREFLIGHT_TIMEOUT_S", 0.6)

    def no_flink(config):
        raise AssertionError("Flink was started before the broker was checked")

    monkeypatch.setattr(flink_env, "make_environment", no_flink)


def _one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("bounded", [False, True])
def test_foldstream_run_exits_unusable_when_no_broker_answers(
        bounded, free_port, flink_never_starts, tmp_path, capsys):
    dead = f"127.0.0.1:{free_port()}"
    code = main(["run", "--quiet",
                 "--set", f"source={{kind: kafka, bootstrap_servers: '{dead}', bounded: {str(bounded).lower()}}}",
                 "--set", "engine.kind=flink", "--set", f"sink.path={tmp_path / 'm.jsonl'}"])
    assert code == exitcodes.UNUSABLE == 2
    err = _one_line(capsys.readouterr().err)
    assert f"bootstrap servers {dead}" in err and "Traceback" not in err


def test_the_cluster_entry_point_exits_as_foldstream_run_does(free_port, flink_never_starts, capsys):
    from foldstream.job.engines.flink import main as flink_main

    dead = f"127.0.0.1:{free_port()}"
    code = flink_main.main([str(ROOT / "conf" / "compose.yaml"),
                            "--set", f"source.bootstrap_servers={dead}",
                            "--set", f"sink.bootstrap_servers={dead}"])
    assert code == exitcodes.UNUSABLE == 2
    assert f"bootstrap servers {dead}" in _one_line(capsys.readouterr().err)


def test_a_dead_kafka_sink_is_found_before_flink_starts(free_port, flink_never_starts, tmp_path, capsys):
    dead = f"127.0.0.1:{free_port()}"
    code = main(["run", "--quiet", "--set", "source.limit=10", "--set", "engine.kind=flink",
                 "--set", f"sink={{kind: kafka, bootstrap_servers: '{dead}'}}"])
    assert code == exitcodes.UNUSABLE
    assert f"bootstrap servers {dead}" in _one_line(capsys.readouterr().err)


# ----------------------------------------------------------------- progress of a Flink run
def test_the_command_line_hands_its_progress_bar_to_the_flink_job(monkeypatch, tmp_path):
    """The Flink job reports progress itself (``flink.run.deliver``), as the in-process engine
    does; the command line only passes its bar on."""
    from contextlib import contextmanager

    from foldstream.job.engines.flink import run as flink_run
    from foldstream.job.engines.flink.run import deliver
    from foldstream.job.tools import tables

    drawn: list[int] = []

    @contextmanager
    def bar(total, enabled, console):
        yield drawn.append

    def fake_run(config, emit, dead_letter, on_progress=None, **options):
        assert on_progress is not None, "the command line passed no progress callback"
        from foldstream.operators.records.outputs import SummaryRecord
        from foldstream.operators.records.base import dumps

        summary = SummaryRecord.at_end(stream="elec", position=9, read=10, rejected=1,
                                       wall_time_s=0.5, measures=[])
        deliver(['M{"type":"measures","stream":"elec","position":5,"learner":"a"}',
                 "M" + dumps(summary.as_dict())], emit, dead_letter, on_progress)

    monkeypatch.setattr(tables, "progress_bar", bar)
    monkeypatch.setattr(flink_run, "run", fake_run)  # where the command line takes it
    assert main(["run", "--quiet", "--set", "engine.kind=flink", "--set", "source.limit=10",
                 "--set", f"sink.path={tmp_path / 'm.jsonl'}"]) == exitcodes.OK
    assert drawn == [5, 10]


def test_the_command_ends_without_the_interpreters_teardown(tmp_path):
    """The ``foldstream`` script ends through ``exit_now``: its exit code, its output flushed,
    a thread that is no daemon waited for and the ``atexit`` functions run, and no object freed
    one by one (the teardown that took half a second after a run)."""
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["foldstream"] == "foldstream.job.cli:command"
    program = (
        "import atexit, sys, threading, time\n"
        "from foldstream.job.cli import exit_now\n"
        "class Freed:\n"
        "    def __del__(self):\n"
        "        sys.stdout.write('freed')\n"
        "kept = Freed()\n"
        "atexit.register(lambda: sys.stdout.write(' atexit'))\n"
        "threading.Thread(target=lambda: (time.sleep(0.3), sys.stdout.write(' thread'))).start()\n"
        "sys.stdout.write('buffered')\n"
        "exit_now(3)\n")
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=environ)
    assert (done.returncode, done.stdout, done.stderr) == (3, "buffered thread atexit", "")

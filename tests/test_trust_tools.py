"""Bounded tools (issue 36, kind 9); each test failed before its fix:

* a billion-laughs YAML in ``learners.0.params`` kept ``validate`` running past 60 s at 1.2 GB
  (a cycle of aliases, or collections nested thousands deep, ended in a RecursionError:
  "an error no check foresaw");
* ``replications: 1000000000`` listed every task first: 5.5 GB, then a MemoryError;
* ``cluster start --dir`` on a file or a read-only place, and a ``--jobmanager`` whose port
  is not a number, ended as "an error no check foresaw" (exit 1).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foldstream.job import exitcodes
from foldstream.job.cli import main

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "conf" / "experiments" / "tiny.yaml"


def _laughs(levels: int = 9, indent: str = "      ") -> str:
    """The billion laughs: each level a list of ten aliases of the one before."""
    lines = [f"{indent}a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"{indent}a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


BOMB = ("source: {kind: generator, model: river.datasets.synth.SEA, limit: 100}\n"
        "learners:\n  - name: nb\n    model: river.naive_bayes.GaussianNB\n    params:\n"
        + _laughs())


def _limited(gigabytes: float):
    """A child's address space capped, so that what was unbounded fails fast, not the host."""
    def limit() -> None:
        size = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return limit


def foldstream(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "foldstream.job.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_limited(3))


# ------------------------------------------------------------------------------- YAML bombs
@pytest.mark.parametrize("case", ["file", "--set", "cycle", "deep", "large"])
def test_a_yaml_bomb_is_refused_fast_naming_why(tmp_path, case):
    config = tmp_path / "c.yaml"
    args = ["validate", "c.yaml"]
    if case == "file":
        config.write_text(BOMB, encoding="utf-8")
    elif case == "--set":
        config.write_text(BOMB.split("    params:")[0], encoding="utf-8")
        value = "{" + ", ".join(line.strip().replace(": &", ": &", 1)
                                for line in _laughs(indent="").splitlines()) + "}"
        args += ["--set", f"learners.0.params={value}"]
    elif case == "cycle":
        config.write_text(BOMB.split("    params:")[0] + "    params: {a: &x [*x]}\n", "utf-8")
    elif case == "deep":
        config.write_text(BOMB.split("    params:")[0] + "    params: {a: "
                          + "[" * 20_000 + "]" * 20_000 + "}\n", "utf-8")
    else:
        config.write_text(BOMB.split("    params:")[0] + "    params: {}\n"
                          + "#" * 2_000_000 + "\n", "utf-8")
    started = time.monotonic()
    done = foldstream(tmp_path, *args)
    assert done.returncode == exitcodes.UNUSABLE, done.stderr
    assert time.monotonic() - started < 50
    assert "Traceback" not in done.stderr and "no check foresaw" not in done.stderr
    why = {"file": "more than 100,000 values once its aliases are expanded (at "
                   "learners.0.params.a",
           "--set": "--set learners.0.params: the value: more than 100,000 values",
           "cycle": "more than 100,000 values once its aliases are expanded (at "
                    "learners.0.params.a…)",
           "deep": "c.yaml: its values are nested too deep to read",
           "large": "c.yaml: more than 1,000,000 bytes of YAML"}[case]
    assert why in " ".join(done.stderr.split()), done.stderr


def test_an_ordinary_configuration_with_aliases_is_read():
    from foldstream.job.config import load_config

    text = ("source: {kind: generator, model: river.datasets.synth.SEA, limit: 100}\n"
            "learners:\n  - {name: a, model: river.tree.HoeffdingTreeClassifier, params: "
            "&p {grace_period: 50}}\n  - {name: b, model: river.tree.HoeffdingTreeClassifier, "
            "params: *p}\n")
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"aliases-{os.getpid()}.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        config = load_config(path)
    finally:
        path.unlink()
    assert [learner.params for learner in config.learners] == [{"grace_period": 50}] * 2


# ----------------------------------------------------------------------- counts in experiments
def test_a_billion_replications_run_in_flat_memory_and_stop(tmp_path):
    """The tasks are made as workers free up: the first results come, in bounded memory, and
    SIGTERM stops the run with the count of all it would have run."""
    process = subprocess.Popen(
        [sys.executable, "-m", "foldstream.job.cli", "experiment", str(TINY), "--out", "e",
         "--set", "replications=1000000000", "--set", "n=200", "--set", "report_every=100",
         "--set", "modes=[split]", "--workers", "2"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_limited(4))
    results = tmp_path / "e" / "results.jsonl"
    deadline = time.monotonic() + 240
    while process.poll() is None and time.monotonic() < deadline:
        if results.exists() and results.read_text(encoding="utf-8").count("\n") >= 2:
            break
        time.sleep(0.5)
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=120)
    assert process.returncode == exitcodes.TERMINATED, err[-2000:]
    assert "of 2000000000 replications are in" in " ".join(err.split()), err[-2000:]
    assert results.read_text(encoding="utf-8").count("\n") >= 2


def test_more_workers_than_the_machine_holds_are_refused(capsys):
    code = main(["experiment", str(TINY), "--workers", "1000000"])
    assert code == exitcodes.UNUSABLE
    assert "--workers: 1,000,000 processes on" in capsys.readouterr().err


def test_a_billion_folds_are_refused_at_start_naming_the_key(capsys):
    code = main(["validate", "--set", "evaluation.folds=1000000000"])
    assert code == exitcodes.UNUSABLE
    assert "evaluation.folds" in capsys.readouterr().err


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

"""Stopping (job/engines/stopping.py): whatever a learner does, signals end the run, and the
commands that run until stopped end the same way on Ctrl-C and on SIGTERM.

A learner stuck forever, in pure Python (``while True: pass``) or in C (``time.sleep``), must
not keep ``foldstream run`` alive: a second signal, or SIGTERM alone after the grace period,
ends it with the records so far, whole, and an interrupted summary. A ``SystemExit`` or
``KeyboardInterrupt`` raised inside a learner is that learner's error. ``watch``, ``dashboard``
and ``produce`` take both signals with the same helper. Real processes and real signals, as in
tests/test_faults.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from foldstream.job import exitcodes
from foldstream.job.engines.stopping import Interrupted, interruptible
from foldstream.job.tools.schema import validate_record

LEARNERS = textwrap.dedent('''
    """Learners that misbehave at their ``after``-th ``learn_one`` (tests/test_stopping.py)."""
    import os
    import time

    from river.naive_bayes import GaussianNB


    class Misbehaving(GaussianNB):
        how = "busy"

        def __init__(self, after: int = 250):
            super().__init__()
            self.after = after
            self.calls = 0

        def learn_one(self, x, y, **kwargs):
            self.calls += 1
            if self.calls == self.after:
                self.misbehave()
            return super().learn_one(x, y, **kwargs)

        def misbehave(self):
            open(os.environ["STUCK_MARKER"], "w").close()
            if self.how == "busy":
                while True:
                    pass
            time.sleep(10**6)


    class Sleeping(Misbehaving):
        how = "sleep"


    class Exiting(Misbehaving):
        def misbehave(self):
            raise SystemExit(3)


    class Interrupting(Misbehaving):
        def misbehave(self):
            raise KeyboardInterrupt


    class ExitingClone(GaussianNB):
        def clone(self, *args, **kwargs):
            raise SystemExit(3)


    class InterruptingClone(GaussianNB):
        def clone(self, *args, **kwargs):
            raise KeyboardInterrupt
''')


def wait_until_stuck(process: subprocess.Popen, marker: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not marker.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.1)


def start(tmp_path: Path, model: str, *extra: str) -> tuple[subprocess.Popen, Path]:
    (tmp_path / "misbehaving.py").write_text(LEARNERS, encoding="utf-8")
    out = tmp_path / "m.jsonl"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "STUCK_MARKER": str(tmp_path / "stuck")}
    process = subprocess.Popen(
        [sys.executable, "-m", "foldstream.job.cli", "run", "--quiet",
         "--set", "source={kind: generator, model: river.datasets.synth.SEA, limit: 1000, seed: 3}",
         "--set", f"learners=[{{name: bad, model: misbehaving.{model}}}, "
                  "{name: nochange, model: river.dummy.NoChangeClassifier}]",
         "--set", "evaluation.folds=3", "--set", "evaluation.report_every=100",
         "--set", "engine.batch_size=10", "--set", f"sink.path={out}", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True)
    return process, out


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def reports_whole(records: list[dict]) -> list[int]:
    """The report positions; each holds both learners' measures (no report cut in half)."""
    positions = sorted({r["position"] for r in records if r["type"] == "measures"})
    assert positions == list(range(100, 100 * len(positions) + 1, 100))
    for position in positions:
        assert {r["learner"] for r in records
                if r["type"] == "measures" and r["position"] == position} == {"bad", "nochange"}
    return positions


@pytest.mark.parametrize("model, signals, code", [
    ("Misbehaving", (signal.SIGINT, signal.SIGINT), exitcodes.INTERRUPTED),
    ("Sleeping", (signal.SIGINT, signal.SIGTERM), exitcodes.INTERRUPTED),
    ("Misbehaving", (signal.SIGTERM,), exitcodes.TERMINATED),
    ("Sleeping", (signal.SIGTERM,), exitcodes.TERMINATED),
])
def test_a_stuck_learner_is_abandoned_on_a_second_signal_or_after_sigterms_grace(
        tmp_path, model, signals, code):
    process, out = start(tmp_path, model)
    try:
        wait_until_stuck(process, tmp_path / "stuck")
        for signum in signals:
            process.send_signal(signum)
            time.sleep(0.3)
        # the grace is 5 s; the old code never ended
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == code, stderr
    assert "Traceback" not in stdout + stderr
    assert "forced" in stderr
    records = read_jsonl(out)
    for record in records:
        validate_record(record)
    positions = reports_whole(records)
    summary = records[-1]
    assert (summary["type"], summary["interrupted"]) == ("summary", True)
    assert [r for r in records if r["type"] == "summary"] == [summary]
    # fold 0's replica is stuck at its 250th example: the first two reports came out
    assert positions and summary["position"] == positions[-1]
    assert summary["measures"] == [r for r in records
                                   if r["type"] == "measures" and r["position"] == positions[-1]]


@pytest.mark.flink
def test_a_learner_stuck_in_a_flink_worker_does_not_hold_the_client(tmp_path):
    """Flink runs learners in worker processes: Ctrl-C cancels the job and the client ends with
    what it has, and an interrupted summary of the stream (none came before)."""
    process, out = start(tmp_path, "Misbehaving", "--set", "engine.kind=flink",
                         "--set", "engine.parallelism=1")
    try:
        wait_until_stuck(process, tmp_path / "stuck", timeout_s=240)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == exitcodes.INTERRUPTED, stderr[-3000:]
    assert "stopped (Ctrl-C)" in stderr and "Traceback" not in stdout + stderr, stderr[-3000:]
    records = read_jsonl(out)
    for record in records:
        validate_record(record)
    reports_whole(records)
    summary = records[-1]
    assert (summary["type"], summary["interrupted"]) == ("summary", True)
    assert summary["stream"] and summary["position"] == max(
        [r["position"] for r in records if r["type"] == "measures"], default=0)


@pytest.mark.parametrize("model, error", [("Exiting", "SystemExit: 3"),
                                          ("Interrupting", "KeyboardInterrupt")])
def test_system_exit_or_keyboard_interrupt_inside_a_learner_is_a_learner_error(
        tmp_path, model, error):
    process, out = start(tmp_path, model)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == exitcodes.OK, stderr
    assert "Traceback" not in stdout + stderr
    records = read_jsonl(out)
    errors = [r for r in records if r["type"] == "learner_error"]
    assert sorted(e["fold"] for e in errors) == [0, 1, 2]  # each replica quarantined
    assert all(e["learner"] == "bad" and e["phase"] == "learn" and e["error"].startswith(error)
               for e in errors)
    summary = records[-1]
    assert summary["type"] == "summary" and summary["position"] == 1000
    assert "interrupted" not in summary
    reports_whole(records)


def test_a_real_ctrl_c_still_stops_a_python_api_run(tmp_path):
    """The signal, unlike a learner's own KeyboardInterrupt, stops the run: the Python API
    writes the records so far and an interrupted summary, then raises."""
    import foldstream
    from river import datasets, dummy
    from river.naive_bayes import GaussianNB

    class CtrlC(GaussianNB):
        calls = 0

        def learn_one(self, x, y, **kwargs):
            CtrlC.calls += 1
            if CtrlC.calls == 450:  # a real SIGINT, while the learner runs
                os.kill(os.getpid(), signal.SIGINT)
            return super().learn_one(x, y, **kwargs)

    out = tmp_path / "m.jsonl"
    with pytest.raises(KeyboardInterrupt) as stopped:
        foldstream.evaluate(datasets.synth.SEA(seed=1),
                            {"nb": CtrlC(), "nochange": dummy.NoChangeClassifier()},
                            limit=5000, folds=3, report_every=100, engine={"batch_size": 10},
                            sink={"kind": "file", "path": str(out)})
    assert stopped.value.exit_code == exitcodes.INTERRUPTED
    records = read_jsonl(out)
    assert not [r for r in records if r["type"] == "learner_error"]
    summary = records[-1]
    assert summary["type"] == "summary" and summary["interrupted"] is True
    assert 0 < summary["position"] < 5000


@pytest.mark.parametrize("model, error", [("ExitingClone", "SystemExit: 3"),
                                          ("InterruptingClone", "KeyboardInterrupt")])
def test_system_exit_or_keyboard_interrupt_from_clone_names_the_learner(tmp_path, model, error):
    """A replica that cannot be cloned ends the run at start like a bad configuration, whatever
    its clone() raised (it ended foldstream with exit code 3 and no word, or as a Ctrl-C)."""
    process, _ = start(tmp_path, model)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == exitcodes.UNUSABLE, stderr
    assert "Traceback" not in stdout + stderr
    # the configuration check names the learner by its key (learners.0) before any fold runs
    assert ("learners.bad" in stderr or "learners.0" in stderr) and error in stderr


def test_a_forced_stop_says_the_positive_class_was_not_seen_as_a_clean_stop_does(tmp_path):
    """The summary a forced stop builds from what was delivered carries the same
    ``positive_class_not_seen`` as the summary the stages write (one builder, both engines)."""
    process, out = start(tmp_path, "Sleeping", "--set", "evaluation.positive_class=zzz")
    try:
        wait_until_stuck(process, tmp_path / "stuck")
        for signum in (signal.SIGINT, signal.SIGINT):
            process.send_signal(signum)
            time.sleep(0.3)
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == exitcodes.INTERRUPTED
    summary = read_jsonl(out)[-1]
    assert (summary["type"], summary["interrupted"]) == ("summary", True)
    assert summary["positive_class_not_seen"] == "zzz"


# The commands that run until stopped (watch, dashboard, produce) end the same way on Ctrl-C
# and on SIGTERM, with 130 or 143, one line and no traceback.

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="waits on /proc/PID/status (Linux)")


def command(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "foldstream.job.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def takes_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM (its ``SigCgt`` mask)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


def wait_for(ready, process: subprocess.Popen, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the command never got ready"
        time.sleep(0.05)


def stop(process: subprocess.Popen, signum: int) -> tuple[str, str]:
    try:
        process.send_signal(signum)
        return process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()


@pytest.fixture
def records_file(tmp_path) -> Path:
    path = tmp_path / "m.jsonl"
    assert subprocess.run([sys.executable, "-m", "foldstream.job.cli", "run", "--quiet",
                           "--no-progress", "--set", "source.limit=300", "--set",
                           f"sink.path={path}"], capture_output=True).returncode == 0
    return path


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, exitcodes.INTERRUPTED),
                                          (signal.SIGTERM, exitcodes.TERMINATED)])
def test_watch_following_a_file_stops_with_the_signals_exit_code(records_file, signum, code):
    process = command("watch", str(records_file), "--follow", "--interval", "0.1")
    wait_for(lambda: takes_sigterm(process.pid), process)
    time.sleep(1.0)  # the display is up, following
    out, err = stop(process, signum)
    assert process.returncode == code, err
    assert "Traceback" not in out + err
    assert "stopped" in out  # the display ended cleanly, with what was read


def test_dashboard_stops_gracefully_on_sigterm(records_file, free_port):
    port = free_port()
    process = command("dashboard", str(records_file), "--port", str(port))

    def answers() -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/overview", timeout=1):
                return True
        except OSError:
            return False

    wait_for(answers, process)
    out, err = stop(process, signal.SIGTERM)
    assert process.returncode == exitcodes.TERMINATED, err
    assert "Traceback" not in out + err


def test_a_second_signal_cuts_what_the_first_one_lets_finish():
    """In a held section the first signal waits for its end; outside, a second one raises
    again (a command's teardown that waits is cut short), and what the block raises after a
    signal is reported as the stop."""
    with pytest.raises(Interrupted) as stopped:
        with interruptible() as stop:
            with stop.held():
                signal.raise_signal(signal.SIGTERM)
                finished = True  # the section ran to its end
    assert finished and stopped.value.exit_code == exitcodes.TERMINATED
    with pytest.raises(Interrupted) as stopped:
        with interruptible():
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                raise OSError("a teardown broken by the signal")
    assert stopped.value.exit_code == exitcodes.INTERRUPTED
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers restored


def test_a_signal_ignored_at_start_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interruptible() as stop:
            signal.raise_signal(signal.SIGINT)
        assert not stop and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.kafka
def test_produce_stopped_by_sigterm_delivers_what_was_read(kafka_broker):
    from foldstream.connectors.kafka import KafkaUnavailable, end_offsets, read_topic

    def sending() -> bool:
        try:
            return end_offsets(kafka_broker.bootstrap, "stopped", timeout_s=1).get(0, 0) > 0
        except KafkaUnavailable:  # no such topic yet
            return False

    process = command("produce", "--set", "source={kind: generator, model: "
                      "river.datasets.synth.SEA, limit: 100000}", "--bootstrap-servers",
                      kafka_broker.bootstrap, "--topic", "stopped", "--rate", "50", "--quiet")
    wait_for(lambda: takes_sigterm(process.pid) and sending(), process)
    time.sleep(1.0)  # sending
    out, err = stop(process, signal.SIGTERM)
    assert process.returncode == exitcodes.TERMINATED, err
    assert "Traceback" not in out + err
    assert out.startswith("interrupted: what was read before SIGTERM was sent")
    sent = int(out.split("\nsent ")[1].split()[0])
    messages = read_topic(kafka_broker.bootstrap, "stopped")
    assert 0 < sent == len(messages) and all(json.loads(v) for _, v in messages)

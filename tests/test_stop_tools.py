"""The commands that run until stopped end the same way on Ctrl-C and on SIGTERM.

``watch``, ``dashboard`` and ``produce`` take both signals with the one helper of
job/engines/stopping.py: what they do on Ctrl-C they do on SIGTERM (what ``kill``, ``docker
stop`` and Kubernetes send), and they exit with 130 or 143 (job/exitcodes.py), one line and no
traceback. Real processes and real signals; each test waits until the command has taken
SIGTERM (Linux: ``/proc/PID/status``), so that the signal does not meet Python's default.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from foldstream.job import exitcodes
from foldstream.job.engines.stopping import Interrupted, interruptible

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

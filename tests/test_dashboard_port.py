"""``foldstream dashboard --port 0``: the system chooses the port, and the line printed and the
Host guard both name the port it listens on (issue 19: it printed port 0, and the guard then
refused every request, whose Host names the real port)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

pytestmark = pytest.mark.slow  # a process of its own, seconds to start

COMMAND = [sys.executable, "-m", "foldstream.job.cli", "dashboard"]


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


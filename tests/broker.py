"""A throw-away Kafka-protocol broker for tests: Tansu with in-memory storage on loopback.

No pytest in here, so that benchmarks and scripts can use it too::

    with TansuBroker() as broker:
        create_topics(broker.bootstrap, ["examples"])

Tansu (a Kafka-compatible broker in Rust, 0.6.0) is a test stand-in, with known faults (see
docs/platform.md): a partition's reported end offset is the first offset of its last batch plus one,
and consumer-group ``subscribe`` receives nothing (use ``assign``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on ``host``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _accepts(host: str, port: int, timeout: float = 0.2) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class TansuBroker:
    """Start ``tansu broker`` on a free loopback port; stop it on :meth:`stop` or ``__exit__``.

    ``binary`` defaults to :func:`foldstream.job.engines.flink.deps.ensure_tansu` (downloads on first use).
    """

    def __init__(self, binary: Path | str | None = None, host: str = "127.0.0.1",
                 port: int | None = None, start_timeout: float = 15.0):
        self.binary = Path(binary) if binary is not None else None
        self.host = host
        self.port = port
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self._log = None

    @property
    def bootstrap(self) -> str:
        if self.port is None:
            raise RuntimeError("broker not started")
        return f"{self.host}:{self.port}"

    def command(self) -> list[str]:
        url = f"tcp://{self.host}:{self.port}"
        return [str(self.binary), "broker",
                "--listener-url", url,
                "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/"]

    def log_text(self) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        try:
            return Path(self._log.name).read_text(errors="replace")
        except OSError:
            return ""

    def start(self) -> "TansuBroker":
        if self.proc is not None:
            return self
        if self.binary is None:
            from foldstream.job.engines.flink.deps import ensure_tansu
            self.binary = ensure_tansu()
        fixed_port = self.port is not None
        last_error = ""
        for _attempt in range(1 if fixed_port else 3):
            if not fixed_port:
                self.port = free_port(self.host)
            self._log = tempfile.NamedTemporaryFile(
                prefix="tansu-", suffix=".log", delete=False, mode="w+b")
            # Tansu reads CLUSTER_ID, LISTENER_URL, ... from the environment: keep ours clean.
            env = {k: v for k, v in os.environ.items()
                   if k not in ("CLUSTER_ID", "LISTENER_URL", "ADVERTISED_LISTENER_URL",
                                "STORAGE_ENGINE", "SCHEMA_REGISTRY",
                                "OTEL_EXPORTER_OTLP_ENDPOINT")}
            env.setdefault("RUST_LOG", "warn")
            self.proc = subprocess.Popen(self.command(), stdout=self._log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env)
            deadline = time.monotonic() + self.start_timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if _accepts(self.host, self.port):
                    return self
                time.sleep(0.05)
            last_error = (f"tansu exited with {self.proc.returncode}" if self.proc.poll() is not None
                          else f"tansu did not accept connections within {self.start_timeout}s")
            last_error += f"; log:\n{self.log_text()[-2000:]}"
            self.stop()
        raise RuntimeError(f"could not start Tansu on {self.host}: {last_error}")

    def stop(self, timeout: float = 5.0) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout)
        if self._log is not None:
            self._log.close()
            try:
                os.unlink(self._log.name)
            except OSError:
                pass
            self._log = None

    def __enter__(self) -> "TansuBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __del__(self):  # last resort: never leave a broker behind
        try:
            self.stop(timeout=1.0)
        except Exception:
            pass

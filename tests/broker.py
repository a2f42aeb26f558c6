"""A throw-away Apache Kafka broker for tests: one KRaft process (broker and controller) on loopback.

No pytest in here, so that benchmarks and scripts can use it too::

    with KafkaBroker() as broker:
        create_topics(broker.bootstrap, ["examples"])

The broker's jars are Apache Kafka's own (``kafka_2.13``, the version in ``tests/kafka/pom.xml``),
copied by Maven from its default repository into ``<cache>/kafka-<version>/`` on first use
(:func:`ensure_broker_jars`); the cache is ``$FOLDSTREAM_CACHE`` or ``~/.cache/foldstream/jars``.
That needs ``mvn`` once and a Java 17 (or newer) runtime at every start; without them
:class:`BrokerUnavailable` says what to install. The settings are ``tests/kafka/server.properties``;
each start adds its free loopback ports and a temporary log folder, removed at :meth:`KafkaBroker.stop`.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
POM = HERE / "kafka" / "pom.xml"
SETTINGS = HERE / "kafka" / "server.properties"
#: The Java release Kafka 4's broker needs at least.
JAVA_RELEASE = 17
INSTALL = ("install Maven (`mvn`, to fetch the broker's jars once) and a Java 17 or newer JDK "
           "(e.g. `apt-get install maven openjdk-17-jdk-headless`)")


class BrokerUnavailable(RuntimeError):
    """Apache Kafka cannot run here: a tool is missing or the jars cannot be fetched."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on ``host``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def kafka_version(pom: Path = POM) -> str:
    """The broker's version, as ``tests/kafka/pom.xml`` declares it (its one place)."""
    found = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", pom.read_text())
    if not found:
        raise BrokerUnavailable(f"{pom} declares no <kafka.version>")
    return found.group(1).strip()


def java_release(java: str = "java") -> int:
    """The feature release of ``java`` (17 for "17.0.15"), or 0 when it does not run."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    found = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not found:
        return 0
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def ensure_broker_jars(cache_dir: Path | None = None) -> Path:
    """The folder holding the broker's jars, fetched with ``mvn dependency:copy-dependencies``
    when absent (once: a complete folder holds the file ``complete``). Raises
    :class:`BrokerUnavailable` when Java 17 or, for the first fetch, Maven is missing."""
    from foldstream.operators.downloads import default_cache_dir

    if java_release() < JAVA_RELEASE:
        found = shutil.which("java")
        raise BrokerUnavailable(
            f"Apache Kafka's broker needs Java {JAVA_RELEASE} or newer "
            f"({'found ' + found + ' older or not working' if found else 'no java on PATH'}): "
            f"{INSTALL}")
    version = kafka_version()
    target = default_cache_dir(cache_dir) / f"kafka-{version}"
    if (target / "complete").is_file():
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise BrokerUnavailable(f"the broker's jars (Kafka {version}) are not in {target} and "
                                f"there is no mvn on PATH to fetch them: {INSTALL}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f"kafka-{version}-", dir=target.parent))
    try:
        run = subprocess.run([mvn, "-q", "-B", "-f", str(POM), "dependency:copy-dependencies",
                              f"-DoutputDirectory={partial}"], capture_output=True, text=True,
                             stdin=subprocess.DEVNULL)
        if run.returncode != 0 or not any(partial.glob("kafka_2.13-*.jar")):
            raise BrokerUnavailable(f"mvn could not fetch Kafka {version}'s jars (exit "
                                    f"{run.returncode}):\n{(run.stdout + run.stderr)[-2000:]}")
        (partial / "complete").write_text(version + "\n")
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target


#: What names a broker or Flink process in its command line.
SERVICE_MARKS = ("kafka.Kafka", "kafka.tools.StorageTool", "org.apache.flink", "pyflink")


class Process(NamedTuple):
    """A process of the process table: its id, its parent's and its command line."""

    pid: int
    parent: int
    command: str

    def __str__(self) -> str:
        return f"{self.pid} (parent {self.parent}): {self.command[:160]}"


def processes() -> list[Process]:
    """Every live process (zombies left out), from ``/proc``.

    >>> any(p.pid == os.getpid() and p.parent == os.getppid() for p in processes())
    True
    """
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z":
            found.append(Process(int(entry), int(fields[1]),
                                 command.replace(b"\0", b" ").decode(errors="replace").strip()))
    return found


def descendants(pid: int, table: list[Process] | None = None) -> list[Process]:
    """The live processes below ``pid``: its children, their children, ..."""
    table = processes() if table is None else table
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        children = [p for p in table if p.parent == parent]
        found += children
        todo += [p.pid for p in children]
    return found


def leftover_services(pid: int | None = None) -> list[Process]:
    """The broker and Flink processes running below ``pid`` (default: this process)."""
    return [p for p in descendants(os.getpid() if pid is None else pid)
            if any(mark in p.command for mark in SERVICE_MARKS)]


def _cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, URL-safe base64 without padding (22 characters)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class KafkaBroker:
    """Format a KRaft log folder and start ``kafka.Kafka`` (broker and controller) on free
    loopback ports; :meth:`start` returns once the broker answers a metadata request. Stop it
    with :meth:`stop` or ``__exit__``: the process ends and its folder is removed.

    ``heap``: the JVM's maximum heap (``-Xmx``).
    """

    def __init__(self, host: str = "127.0.0.1", start_timeout: float = 90.0, heap: str = "512m"):
        self.host = host
        self.start_timeout = start_timeout
        self.heap = heap
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.folder: Path | None = None
        self.version = kafka_version()

    @property
    def bootstrap(self) -> str:
        if self.port is None:
            raise RuntimeError("broker not started")
        return f"{self.host}:{self.port}"

    @property
    def log_path(self) -> Path | None:
        return None if self.folder is None else self.folder / "broker.log"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace") if self.log_path else ""
        except OSError:
            return ""

    def _java(self, jars: Path, *args: str) -> list[str]:
        return ["java", f"-Xmx{self.heap}", "-Xms64m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", str(jars / "*"), *args]

    def _settings(self, port: int, controller: int) -> Path:
        text = SETTINGS.read_text() + (
            "\n# this run's\n"
            "node.id=1\n"
            f"controller.quorum.voters=1@{self.host}:{controller}\n"
            f"listeners=PLAINTEXT://{self.host}:{port},CONTROLLER://{self.host}:{controller}\n"
            f"advertised.listeners=PLAINTEXT://{self.host}:{port}\n"
            f"log.dirs={self.folder / 'data'}\n")
        path = self.folder / "server.properties"
        path.write_text(text)
        return path

    def start(self) -> "KafkaBroker":
        if self.proc is not None:
            return self
        from foldstream.connectors.kafka import KafkaUnavailable, check_bootstrap

        jars = ensure_broker_jars()
        last_error = ""
        for _attempt in range(2):  # a port taken between choosing and binding: once more
            self.folder = Path(tempfile.mkdtemp(prefix="foldstream-kafka-"))
            port, controller = free_port(self.host), free_port(self.host)
            settings = self._settings(port, controller)
            log = open(self.log_path, "wb")
            try:
                fmt = subprocess.run(self._java(jars, "kafka.tools.StorageTool", "format",
                                                # one word: an id may begin with "-"
                                                f"--cluster-id={_cluster_id()}",
                                                "--config", str(settings)),
                                     stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, timeout=self.start_timeout)
                if fmt.returncode != 0:
                    raise BrokerUnavailable(f"formatting the KRaft folder failed (exit "
                                            f"{fmt.returncode}); log:\n{self.log_text()[-3000:]}")
                self.proc = subprocess.Popen(self._java(jars, "kafka.Kafka", str(settings)),
                                             stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL)
            finally:
                log.close()
            self.port = port
            deadline = time.monotonic() + self.start_timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    check_bootstrap(self.bootstrap, timeout_s=2.0)
                    return self
                except KafkaUnavailable:
                    time.sleep(0.2)
            last_error = (f"the broker exited with {self.proc.returncode}"
                          if self.proc.poll() is not None else
                          f"the broker did not answer within {self.start_timeout}s")
            last_error += f"; log:\n{self.log_text()[-3000:]}"
            self.stop()
        raise RuntimeError(f"could not start Apache Kafka {self.version} on {self.host}: "
                           f"{last_error}")

    def stop(self, timeout: float = 20.0) -> None:
        """End the broker (SIGTERM: a controlled shutdown; SIGKILL after ``timeout`` seconds)
        and remove its folder."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout)
        folder, self.folder = self.folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        self.port = None

    def __enter__(self) -> "KafkaBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __del__(self):  # last resort: never leave a broker behind
        try:
            self.stop(timeout=2.0)
        except Exception:
            pass


if __name__ == "__main__":  # fetch the jars and start a broker once (CI's check)
    import sys

    try:
        t0 = time.monotonic()
        with KafkaBroker() as b:
            print(f"Apache Kafka {b.version} answered at {b.bootstrap} after "
                  f"{time.monotonic() - t0:.1f}s")
    except (BrokerUnavailable, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)

"""A local standalone Flink cluster from the installed wheel, and the REST calls that talk to one.

The apache-flink wheel ships Flink's ``bin/`` and ``conf/`` (``<site-packages>/pyflink``) but puts
no ``flink`` on the PATH, keeps its logs inside the wheel and has no checkpoint directory. This
module starts a JobManager and TaskManager(s) as separate JVMs (``jobmanager.sh`` and
``taskmanager.sh`` in the foreground, each in a session of its own), with everything under one
directory (:data:`DEFAULT_DIR`, ``--dir``)::

    DIR/conf/config.yaml        the cluster's configuration (written by ``cluster start``)
    DIR/log/                    the daemons' logs (created before they start)
    DIR/run/<daemon>.pid        one line per daemon: its pid, which is also its session id
    DIR/run/flink/              Flink's own pid files (its scripts keep them)
    DIR/checkpoints/<job id>/   retained checkpoints (execution.checkpointing.dir)
    DIR/savepoints/             savepoints (``foldstream stop``)

**Why sessions.** A TaskManager starts a Python worker process per slot (about 250 MB each).
When the TaskManager dies (``kill -9``, an out-of-memory kill), its workers live on, reparented to
init; but they keep the session of the daemon that started them. ``cluster stop`` (and
``cluster start``, before it replaces a dead daemon) ends every process of each recorded session,
found in ``/proc``: nothing the cluster started outlives it.

**Memory** is sized for a small machine (two cores): a JobManager of
:data:`JOBMANAGER_MEMORY`, a TaskManager of :data:`TASKMANAGER_BASE_MB` plus
:data:`TASKMANAGER_SLOT_MB` per slot (the Python workers run outside the JVM).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
from dataclasses import dataclass
from pathlib import Path

#: Where ``foldstream cluster`` keeps its configuration, logs, pids and checkpoints.
DEFAULT_DIR = ".foldstream-cluster"
#: The REST address of a cluster when none is given (Flink's default port).
DEFAULT_JOBMANAGER = "127.0.0.1:8081"
DEFAULT_SLOTS = 4
JOBMANAGER_MEMORY = "1024m"
TASKMANAGER_BASE_MB = 1024
TASKMANAGER_SLOT_MB = 384
#: How long ``cluster start`` waits for the REST API and the TaskManagers' slots.
START_TIMEOUT_S = 120.0


class ClusterError(RuntimeError):
    """The cluster cannot be started or reached (the message says why and where to look)."""


def flink_home() -> Path:
    """The Flink distribution inside the installed apache-flink wheel."""
    import pyflink

    return Path(pyflink.__file__).resolve().parent


def flink_command() -> Path:
    """The wheel's own ``flink`` client (not on the PATH)."""
    return flink_home() / "bin" / "flink"


# ---------------------------------------------------------------- configuration

def _flatten(tree: dict, prefix: str = "") -> dict[str, object]:
    """A nested YAML mapping as Flink's dotted keys.

    >>> _flatten({"rest": {"address": "localhost", "port": 8081}, "a.b": 1})
    {'rest.address': 'localhost', 'rest.port': 8081, 'a.b': 1}
    """
    flat: dict[str, object] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def taskmanager_memory_mb(slots: int) -> int:
    """The process size of a TaskManager with ``slots`` slots.

    >>> taskmanager_memory_mb(4)
    2560
    """
    return TASKMANAGER_BASE_MB + TASKMANAGER_SLOT_MB * slots


def cluster_settings(root: Path, slots: int, rest_port: int, rpc_port: int,
                     python: str) -> dict[str, object]:
    """The keys ``cluster start`` sets over the wheel's ``conf/config.yaml``."""
    return {
        "jobmanager.bind-host": "127.0.0.1",
        "jobmanager.rpc.address": "127.0.0.1",
        "jobmanager.rpc.port": rpc_port,
        "jobmanager.memory.process.size": JOBMANAGER_MEMORY,
        "taskmanager.bind-host": "127.0.0.1",
        "taskmanager.host": "127.0.0.1",
        "taskmanager.numberOfTaskSlots": slots,
        "taskmanager.memory.process.size": f"{taskmanager_memory_mb(slots)}m",
        "rest.address": "127.0.0.1",
        "rest.bind-address": "127.0.0.1",
        "rest.port": rest_port,
        # every TaskManager of this cluster runs on this machine: a local folder reaches them all
        "execution.checkpointing.dir": (root / "checkpoints").as_uri(),
        "execution.checkpointing.savepoint-dir": (root / "savepoints").as_uri(),
        "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
        # the Python of the environment that runs `foldstream cluster start`: it has foldstream
        "python.executable": python,
        "python.client.executable": python,
        # a job that needs more slots than there are fails in seconds, not after 5 minutes
        "slot.request.timeout": "30 s",
        # a TaskManager that died is noticed in seconds (Flink's default: 50 s), so the job's
        # restarts find the TaskManager that replaces it
        "heartbeat.interval": "2 s",
        "heartbeat.timeout": "15 s",
    }


def write_config(root: Path, settings: dict[str, object]) -> Path:
    """Write ``root/conf``: the wheel's configuration with ``settings`` over it, and its log
    configuration files; return the folder."""
    import shutil

    import yaml

    conf = root / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    source = flink_home() / "conf"
    for name in os.listdir(source):
        if name.startswith("log4j") or name.startswith("logback"):
            shutil.copy(source / name, conf / name)
    base = _flatten(yaml.safe_load((source / "config.yaml").read_text()) or {})
    base.update(settings)
    (conf / "config.yaml").write_text(yaml.safe_dump(base, sort_keys=True))
    return conf


def read_config(root: Path) -> dict[str, object]:
    """The flat configuration of the cluster under ``root`` (empty if there is none)."""
    import yaml

    path = root / "conf" / "config.yaml"
    return _flatten(yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- processes

def _stat(pid: int) -> tuple[str, int] | None:
    """(state, session id) of a process from ``/proc/<pid>/stat``, or ``None`` if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
    return fields[0], int(fields[3])


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def session_members(sid: int) -> list[int]:
    """Every live process of session ``sid`` (a daemon and the Python workers it started, also
    those reparented to init after it died)."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] == sid and stat[0] not in ("Z", "X"):
                members.append(int(entry))
    return members


def end_session(sid: int, timeout_s: float = 20.0) -> None:
    """SIGTERM every process of session ``sid``, SIGKILL what is left after ``timeout_s``."""
    for sig, wait in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 5.0)):
        members = session_members(sid)
        for pid in members:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while members and time.monotonic() < deadline:
            time.sleep(0.2)
            members = session_members(sid)
        if not members:
            return


@dataclass(frozen=True)
class Daemon:
    """A JobManager or TaskManager of the cluster: its name and pid (= session id)."""

    name: str
    pid: int

    @property
    def running(self) -> bool:
        return alive(self.pid)


# ---------------------------------------------------------------- REST

def rest(address: str, path: str, method: str = "GET", body: dict | None = None,
         timeout_s: float = 10.0):
    """One call to the REST API at ``address`` (``HOST:PORT``): the decoded JSON answer.
    Raises :class:`ClusterError` when nothing answers, ``urllib.error.HTTPError`` on an error."""
    import urllib.request  # here, not at the top: it loads http.client and email, which every
    # command would pay for at start (the parser reads this module's defaults)

    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://{address}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            text = answer.read()
    except urllib.error.HTTPError:
        raise
    except (urllib.error.URLError, OSError) as error:
        raise ClusterError(f"no Flink JobManager answers at {address} ({error}); start one "
                           f"with `foldstream cluster start`, or name it with --jobmanager") from None
    return json.loads(text) if text else {}


@dataclass(frozen=True)
class Overview:
    """What ``GET /overview`` says of a cluster."""

    address: str
    taskmanagers: int
    slots_total: int
    slots_available: int
    jobs_running: int
    flink_version: str

    @classmethod
    def of(cls, address: str) -> "Overview":
        o = rest(address, "/overview")
        return cls(address, o["taskmanagers"], o["slots-total"], o["slots-available"],
                   o["jobs-running"], o.get("flink-version", "?"))

    def __str__(self) -> str:
        return (f"JobManager at http://{self.address} (Flink {self.flink_version}): "
                f"{self.taskmanagers} TaskManager{'s' * (self.taskmanagers != 1)}, "
                f"{self.slots_available} of {self.slots_total} slots free, "
                f"{self.jobs_running} job{'s' * (self.jobs_running != 1)} running")


def jobmanager_config(address: str) -> dict[str, str]:
    """The JobManager's configuration (``GET /jobmanager/config``) as a mapping."""
    return {item["key"]: item["value"] for item in rest(address, "/jobmanager/config")}


# ---------------------------------------------------------------- the local cluster

class LocalCluster:
    """The standalone cluster kept under ``root`` (see the module docstring)."""

    def __init__(self, root: Path | str = DEFAULT_DIR):
        self.root = Path(root).expanduser().resolve()
        self.run_dir = self.root / "run"
        self.log_dir = self.root / "log"

    # -- state
    def daemons(self) -> list[Daemon]:
        if not self.run_dir.is_dir():
            return []
        return [Daemon(p.stem, int(p.read_text().split()[0]))
                for p in sorted(self.run_dir.glob("*.pid")) if p.read_text().strip()]

    @property
    def settings(self) -> dict[str, object]:
        return read_config(self.root)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.settings.get('rest.port', 8081)}"

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(FLINK_CONF_DIR=str(self.root / "conf"), FLINK_LOG_DIR=str(self.log_dir),
                   FLINK_PID_DIR=str(self.run_dir / "flink"), STD_REDIRECT_TO_FILE="true")
        return env

    # -- start
    def start(self, slots: int = DEFAULT_SLOTS, port: int | None = None,
              taskmanagers: int = 1, timeout_s: float = START_TIMEOUT_S) -> Overview:
        """Start what is not running: the JobManager, then ``taskmanagers`` TaskManagers (a
        TaskManager that died is replaced: first its leftover Python workers are ended). Writes
        the configuration unless the JobManager runs (then its configuration stays)."""
        daemons = {d.name: d for d in self.daemons()}
        jobmanager = daemons.get("jobmanager")
        if jobmanager is None or not jobmanager.running:
            if jobmanager is not None:
                self._end(jobmanager)
            write_config(self.root, cluster_settings(
                self.root, slots, port or int(DEFAULT_JOBMANAGER.rsplit(":", 1)[1]),
                free_port(), sys.executable))
            for folder in ("checkpoints", "savepoints"):
                (self.root / folder).mkdir(parents=True, exist_ok=True)
            self._check_port()
            self._launch("jobmanager", "jobmanager.sh")
        known = self._taskmanager_ids()
        launched = 0
        for n in range(1, taskmanagers + 1):
            name = f"taskmanager-{n}"
            tm = daemons.get(name)
            if tm is not None and tm.running:
                continue
            if tm is not None:
                self._end(tm)  # its Python workers outlive it
            self._launch(name, "taskmanager.sh")
            launched += 1
        return self.wait(taskmanagers, timeout_s, new=launched, known=known)

    def _taskmanager_ids(self) -> set[str]:
        """The TaskManagers registered now (a dead one stays until its heartbeat times out)."""
        try:
            return {tm["id"] for tm in rest(self.address, "/taskmanagers")["taskmanagers"]}
        except (ClusterError, urllib.error.HTTPError, KeyError):
            return set()

    def _check_port(self) -> None:
        port = int(self.settings["rest.port"])
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                raise ClusterError(f"port {port} is taken (another Flink cluster?): "
                                   f"use --port, or stop that cluster")

    def _launch(self, name: str, script: str) -> Daemon:
        self.log_dir.mkdir(parents=True, exist_ok=True)  # the daemons fail silently without it
        self.run_dir.mkdir(parents=True, exist_ok=True)
        out = open(self.log_dir / f"{name}.console", "ab")
        process = subprocess.Popen(
            [str(flink_home() / "bin" / script), "start-foreground"], env=self._environment(),
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True, cwd=self.root)
        out.close()
        (self.run_dir / f"{name}.pid").write_text(f"{process.pid}\n")
        return Daemon(name, process.pid)

    def wait(self, taskmanagers: int, timeout_s: float = START_TIMEOUT_S, new: int = 0,
             known: set[str] = frozenset()) -> Overview:
        """Wait until the REST API answers with ``taskmanagers`` TaskManagers registered, ``new``
        of them not among the ``known`` ones (those started just now)."""
        deadline = time.monotonic() + timeout_s
        seen = None
        while time.monotonic() < deadline:
            dead = [d.name for d in self.daemons() if not d.running]
            if dead:
                raise ClusterError(f"{', '.join(dead)} exited while starting: see "
                                   f"{self.log_dir}")
            try:
                seen = Overview.of(self.address)
                if seen.taskmanagers >= taskmanagers \
                        and len(self._taskmanager_ids() - known) >= new:
                    return seen
            except (ClusterError, urllib.error.HTTPError, KeyError):
                pass
            time.sleep(1.0)
        raise ClusterError(f"the cluster did not come up within {timeout_s:.0f} s "
                           f"({seen or 'no REST answer'}): see {self.log_dir}")

    # -- stop
    def _end(self, daemon: Daemon) -> None:
        end_session(daemon.pid)
        (self.run_dir / f"{daemon.name}.pid").unlink(missing_ok=True)

    def stop(self) -> list[str]:
        """End every daemon and every process they started (TaskManagers first); the names of
        the daemons that were running."""
        daemons = sorted(self.daemons(), key=lambda d: d.name == "jobmanager")
        was_running = [d.name for d in daemons if d.running]
        for daemon in daemons:
            self._end(daemon)
        return was_running

    def leftovers(self) -> list[int]:
        """Processes of the cluster's sessions still alive (none after :meth:`stop`)."""
        return [pid for d in self.daemons() for pid in session_members(d.pid)]

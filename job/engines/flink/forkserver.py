"""The local Python workers, forked from a process that has imported what they import.

Each Python worker of a local run starts a fresh interpreter: it imports PyFlink's runtime
and Apache Beam, then on its first batch river (with pandas and scipy.stats) and numba. That is
2 to 4 s of CPU per worker, three workers per run at parallelism 2, paid while the learners
should already be learning. A run on the local mini-cluster therefore starts a fork server as
its JVM starts: one process that imports those modules once (the learners' own, named by the
configuration, without building a learner) and then forks a worker for each request, which
inherits them.

Flink starts a worker as ``PYTHON -m pyflink.fn_execution.beam.beam_boot ARGS``, ``PYTHON``
being ``python.executable``. The run names a launcher there (:meth:`ForkServer.executable`).
The launcher sends its arguments, environment, working folder and standard streams to the
server over a Unix socket, and waits for the worker's exit code. If the worker's connection
closes (the launcher killed), the worker exits. Any other use of the launcher (Flink first
asks it where PyFlink lives, with ``-c``), or a server that cannot be reached or does not
confirm the fork, runs the real interpreter instead, as without a fork server.

``FOLDSTREAM_FORKSERVER=off`` runs every worker from a fresh interpreter, for comparison
(bench/README.md).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from foldstream.operators.learners.imports import loaded

#: The module Flink runs in a Python worker; the launcher forwards only this one.
WORKER_MODULE = "pyflink.fn_execution.beam.beam_boot"

#: What every worker imports: PyFlink's worker, Beam's harness and gRPC (``beam_boot``'s own
#: imports), and the job's operators.
PRELOAD = (
    "grpc",
    "google.protobuf.json_format",
    "google.protobuf.text_format",
    "apache_beam.portability.api.org.apache.beam.model.fn_execution.v1.beam_fn_api_pb2_grpc",
    "apache_beam.portability.api.org.apache.beam.model.fn_execution.v1."
    "beam_provision_api_pb2_grpc",
    "apache_beam.portability.api.org.apache.beam.model.pipeline.v1.endpoints_pb2",
    "pyflink.fn_execution.beam.beam_sdk_worker_main",
    "foldstream.job.engines.flink.job",
    "foldstream.operators.stats.kernels",
)

_LAUNCHER = '''\
import os, sys
REAL, SOCKET, MODULE, SERVER = {real!r}, {socket!r}, {module!r}, {server}


def forked():
    """The worker's exit code once the server has forked it; None: run it here instead."""
    import json, signal, socket, struct, time
    try:
        for _ in range(100):  # the server not yet listening: up to 10 s while it lives
            if os.path.exists(SOCKET):
                break
            os.kill(SERVER, 0)
            time.sleep(0.1)
        s = socket.socket(socket.AF_UNIX)
        s.connect(SOCKET)
        data = json.dumps({{"module": MODULE, "args": sys.argv[3:], "cwd": os.getcwd(),
                           "env": dict(os.environ)}}).encode()
        socket.send_fds(s, [struct.pack("!I", len(data)) + data], [0, 1, 2])
        if s.recv(1) != b"F":
            return None
    except OSError:
        return None
    signal.signal(signal.SIGTERM, lambda *_: os._exit(143))  # the worker sees the socket close
    code = b""
    while len(code) < 4:
        more = s.recv(4 - len(code))
        if not more:
            return 1
        code += more
    return struct.unpack("!i", code)[0]


if sys.argv[1:3] == ["-m", MODULE]:
    code = forked()
    if code is not None:
        os._exit(code)
os.execv(REAL, [REAL] + sys.argv[1:])
'''


def model_modules(config) -> list[str]:
    """The modules of the configuration's learners (``model`` paths, nested ones included)
    that this process has imported: those its check of the configuration resolved
    (:func:`~foldstream.operators.learners.models.resolve`, which refuses what must not be
    imported). Any other string under a ``model`` key is left alone.

    >>> from foldstream.job.config import load_config
    >>> model_modules(load_config(None, []))
    ['river.compose', 'river.linear_model', 'river.naive_bayes', 'river.preprocessing', 'river.tree']
    """
    found: set[str] = set()

    def walk(value) -> None:
        if isinstance(value, dict):
            model = value.get("model")
            if isinstance(model, str) and loaded(model) is not None:
                found.add(model.rpartition(".")[0])
            for item in value.values():
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    walk([learner.model_dump() for learner in config.learners])
    return sorted(found)


class ForkServer:
    """A fork server for one run's workers, importing ``preload`` and ``modules``;
    :attr:`executable` is the launcher to name as ``python.executable``, which forwards
    ``-m worker_module``. :meth:`close` ends it and removes its folder (its workers end with
    the job)."""

    def __init__(self, modules: list[str], preload: tuple[str, ...] = PRELOAD,
                 worker_module: str = WORKER_MODULE) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="foldstream-workers-"))  # a short path:
        self.socket = self.folder / "workers.sock"  # a Unix socket's holds 107 bytes
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(self.socket), *preload, *modules],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)  # a terminal's Ctrl-C is the client's to handle, as the
        # JVM's (whose workers PyFlink starts with SIGINT ignored): not the workers'
        # Reaped as soon as it ends: a launcher asks whether the server lives, and a dead
        # child not yet reaped would still answer.
        threading.Thread(target=self.process.wait, daemon=True).start()
        launcher = self.folder / "launch.py"
        launcher.write_text(_LAUNCHER.format(real=sys.executable, socket=str(self.socket),
                                             module=worker_module, server=self.process.pid),
                            encoding="utf-8")
        self.executable = self.folder / "python"
        self.executable.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -S "
                                   f"{shlex.quote(str(launcher))} \"$@\"\n", encoding="utf-8")
        self.executable.chmod(0o755)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def start(config) -> ForkServer | None:
    """A fork server for a local run of ``config``; ``None`` when the run names its workers'
    Python (``engine.python_executable``) or ``FOLDSTREAM_FORKSERVER=off``."""
    if config.engine.python_executable or os.environ.get("FOLDSTREAM_FORKSERVER") == "off":
        return None
    return ForkServer(model_modules(config))


# ------------------------------------------------------------------------------ the server
def _request(conn: socket.socket) -> tuple[dict, list[int]]:
    """A launcher's request and standard streams: its length, then its JSON text; the streams
    come with the first bytes."""
    conn.settimeout(10)
    data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
    while len(data) < 4 or len(data) - 4 < struct.unpack("!I", data[:4])[0]:
        more = conn.recv(65536)
        if not more:
            raise OSError("the launcher hung up")
        data += more
    return json.loads(data[4:]), fds


def _worker(request: dict, fds: list[int], conn: socket.socket) -> None:
    """In the forked child: become the worker Flink asked for, then exit."""
    import runpy
    import signal
    import traceback

    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as PyFlink's own workers
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:0] = [p for p in extra if p not in sys.path]

    def watch() -> None:  # the launcher gone (killed): so is its worker
        try:
            conn.recv(1)
        finally:
            os._exit(143)

    threading.Thread(target=watch, daemon=True).start()
    sys.argv = [request["module"], *request["args"]]
    code = 0
    try:
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # noqa: BLE001 - the worker's error goes to its log, as Python's would
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    os._exit(code)


def serve(path: str, modules: list[str]) -> None:
    """Import ``modules`` (those that import), then fork a worker per connection on ``path``
    until the process that started this one is gone. Single-threaded, so a fork copies no
    thread's half-done work."""
    parent = os.getppid()
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(64)  # before the imports: a launcher waits on its connection, which ends
    # if this process dies while importing, rather than on a file that would never come
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a worker that needs it fails there, as it would
            pass
    gc.collect()
    gc.freeze()  # the forked workers' collections skip what they inherit
    server.settimeout(0.2)
    waiting: dict[int, socket.socket] = {}
    while os.getppid() == parent:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            conn = None
        if conn is not None:
            try:
                request, fds = _request(conn)
                conn.settimeout(None)  # the worker's watch on it waits as long as it runs
            except (OSError, ValueError):
                conn.close()
                continue
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                server.close()
                for other in waiting.values():
                    other.close()
                _worker(request, fds, conn)
            for fd in fds:
                os.close(fd)
            try:
                conn.sendall(b"F")
            except OSError:
                pass
            waiting[pid] = conn
        while waiting:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            done = waiting.pop(pid, None)
            if done is not None:
                try:
                    done.sendall(struct.pack("!i", os.waitstatus_to_exitcode(status)))
                except OSError:
                    pass
                done.close()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2:])

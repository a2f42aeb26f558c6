"""The fork server of a local Flink run's Python workers (job/engines/flink/forkserver.py).

A real server process and launcher, with a small module in place of PyFlink's worker: the
request reaches the server, which forks the worker with the launcher's arguments, working
folder, environment and standard streams, and hands its exit code back. Without a server the
launcher runs the real interpreter. The Flink tests run their workers through it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from foldstream.job.engines.flink import forkserver

WORKER = '''\
import os, signal, sys
print("pid", os.getpid(), "parent", os.getppid(), "args", sys.argv[1:], "cwd", os.getcwd(),
      "env", os.environ.get("FS_TEST_VALUE"), "stdin", sys.stdin.read().strip(),
      "sigint-ignored", signal.getsignal(signal.SIGINT) == signal.SIG_IGN, flush=True)
if "--sleep" in sys.argv:
    import time; time.sleep(60)
sys.exit(7)
'''


@pytest.fixture
def worker_module(tmp_path):
    (tmp_path / "fs_fake_worker.py").write_text(WORKER)
    return tmp_path


def _run(executable, *args, cwd, pythonpath, stdin="hello"):
    env = dict(os.environ, PYTHONPATH=str(pythonpath), FS_TEST_VALUE="v1")
    return subprocess.run([str(executable), *args], input=stdin, capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=60)


def _fields(stdout: str) -> dict[str, str]:
    words = stdout.split()
    return {words[i]: words[i + 1] for i in range(0, len(words) - 1, 2)}


def test_a_worker_is_forked_by_the_server_with_the_launchers_world(worker_module, tmp_path):
    server = forkserver.ForkServer([], preload=(), worker_module="fs_fake_worker")
    try:
        work = tmp_path / "work"
        work.mkdir()
        done = _run(server.executable, "-m", "fs_fake_worker", "--id=1-1", cwd=work,
                    pythonpath=worker_module)
        seen = _fields(done.stdout)
        assert done.returncode == 7, done.stderr
        assert seen["parent"] == str(server.process.pid)  # forked, not started afresh
        assert seen["cwd"] == str(work) and seen["env"] == "v1" and seen["stdin"] == "hello"
        assert "--id=1-1" in seen["args"]
        assert seen["sigint-ignored"] == "True"  # Ctrl-C is the client's, as with PyFlink's
    finally:
        server.close()
    assert not server.folder.exists()


def test_without_a_server_the_launcher_runs_the_real_interpreter(worker_module, tmp_path):
    server = forkserver.ForkServer([], preload=(), worker_module="fs_fake_worker")
    server.process.kill()
    server.process.wait()  # reaped: the launcher finds no server, and no socket
    done = _run(server.executable, "-m", "fs_fake_worker", "--id=1-1", cwd=tmp_path,
                pythonpath=worker_module)
    assert done.returncode == 7, done.stderr
    assert _fields(done.stdout)["parent"] != str(server.process.pid)
    other = _run(server.executable, "-c", "import sys; print(sys.executable)", cwd=tmp_path,
                 pythonpath=worker_module)
    assert other.stdout.strip() == sys.executable  # Flink's other calls: the real Python
    server.close()


def test_a_server_that_dies_while_importing_lets_its_launchers_run_alone(worker_module,
                                                                         tmp_path, monkeypatch):
    """A launcher waiting on a server that dies at start (here a preloaded module ends it)
    runs the real interpreter at once, not after waiting out the server's start."""
    (tmp_path / "fs_fatal_import.py").write_text("import os, time\ntime.sleep(0.5)\nos._exit(3)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    server = forkserver.ForkServer([], preload=("fs_fatal_import",),
                                   worker_module="fs_fake_worker")
    try:
        then = time.monotonic()
        done = _run(server.executable, "-m", "fs_fake_worker", "--id=1-1", cwd=tmp_path,
                    pythonpath=worker_module)
        took = time.monotonic() - then
        assert done.returncode == 7, done.stderr
        assert _fields(done.stdout)["parent"] != str(server.process.pid)
        assert took < 4, took  # the launcher gives a server up to 10 s to start listening
        again = time.monotonic()
        _run(server.executable, "-m", "fs_fake_worker", cwd=tmp_path, pythonpath=worker_module)
        assert time.monotonic() - again < 4  # the dead server is not waited for either
    finally:
        server.close()


def test_a_worker_ends_when_its_launcher_is_killed(worker_module, tmp_path):
    server = forkserver.ForkServer([], preload=(), worker_module="fs_fake_worker")
    try:
        env = dict(os.environ, PYTHONPATH=str(worker_module))
        launcher = subprocess.Popen([str(server.executable), "-m", "fs_fake_worker", "--sleep"],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
                                    cwd=tmp_path, env=env)
        pid = int(_fields(launcher.stdout.readline())["pid"])
        os.kill(launcher.pid, signal.SIGKILL)
        launcher.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.1)
        assert not _alive(pid)
    finally:
        server.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_off_by_the_environment_or_a_named_python(monkeypatch):
    from foldstream.job.config import load_config

    monkeypatch.setenv("FOLDSTREAM_FORKSERVER", "off")
    assert forkserver.start(load_config(None, [])) is None
    monkeypatch.delenv("FOLDSTREAM_FORKSERVER")
    named = load_config(None, [f"engine.python_executable={sys.executable}"])
    assert forkserver.start(named) is None


def test_only_the_modules_the_configurations_check_imported_are_preloaded():
    """A ``model`` string that the check did not resolve (here a parameter's) is not imported
    by the server: resolving refuses, for one, a package's ``__main__``."""
    from types import SimpleNamespace

    learner = SimpleNamespace(model_dump=lambda: {
        "model": "river.tree.HoeffdingTreeClassifier",
        "params": {"model": "foldstream_never_imported.__main__.Learner"}})
    import river.tree  # noqa: F401 - as the configuration's check imports it

    assert forkserver.model_modules(SimpleNamespace(learners=[learner])) == ["river.tree"]

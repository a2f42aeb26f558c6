"""Submitting the job to a running Flink cluster, and the rest of its life (list, stop, resume).

``flink run --detached`` exits 0 once the job graph is accepted: a job that then fails to get its
slots, or whose TaskManagers cannot start its Python, has "succeeded" as far as the shell knows.
:func:`submit` checks first what it can (both ends Kafka, enough free slots, the topics exist, where
checkpoints go), submits with the wheel's own ``flink`` client (no ``flink`` on the PATH needed,
the client's Python set to this one), and then follows the job through the REST API until every
task runs (or the job has finished); a job that fails before is cancelled and its root cause
reported, with a non-zero exit.

It does not override the cluster's ``python.executable``: unless ``engine.python_executable`` is
set, the job takes the JobManager's configured one (the Python the TaskManagers are set up with).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.error
from dataclasses import dataclass

from foldstream.job import exitcodes
from foldstream.job.config import Config, ConfigError, load_config
from foldstream.job.engines.flink.cluster import (ClusterError, Overview, flink_command,
                                                  jobmanager_config, rest)

#: How long :func:`submit` follows a job before it calls it started or failed.
FOLLOW_TIMEOUT_S = 180.0
#: The entry point the client runs: importable from a pip install (no clone needed).
ENTRY_MODULE = "foldstream.job.engines.flink.main"
#: The configuration keys where a cluster keeps checkpoints and savepoints.
CHECKPOINT_KEYS = ("execution.checkpointing.dir", "state.checkpoints.dir")
SAVEPOINT_KEYS = ("execution.checkpointing.savepoint-dir", "state.savepoints.dir")
_JOB_ID = re.compile(r"JobID ([0-9a-f]{32})")


class SubmitError(Exception):
    """The job was not submitted or did not start; ``exit_code`` says which (exitcodes)."""

    def __init__(self, message: str, exit_code: int = exitcodes.UNUSABLE):
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class Submitted:
    """A job that runs (or has finished) on the cluster."""

    job_id: str
    state: str
    checkpoints: str | None
    address: str


def _first(settings: dict[str, str], keys: tuple[str, ...]) -> str | None:
    return next((settings[k] for k in keys if settings.get(k)), None)


def local_path(location: str) -> str | None:
    """The local path of a savepoint or checkpoint location (a path or a ``file:`` URI), or
    ``None`` for a location elsewhere (``s3://``, ``hdfs://``: only the cluster can check it).

    >>> local_path("file:/a/b"), local_path("file:///a/b"), local_path("sp/1"), local_path("s3://b/c")
    ('/a/b', '/a/b', 'sp/1', None)
    """
    if location.startswith("file:"):
        return "/" + location.removeprefix("file:").lstrip("/")
    if re.match(r"^[a-z][a-z0-9+.-]*://", location):
        return None
    return os.path.expanduser(location)


def check_slots(config: Config, overview: Overview) -> None:
    """Refuse a job that needs more slots than the cluster has free, with the numbers."""
    need = config.engine.task_slots
    if need > overview.slots_available:
        raise SubmitError(
            f"the job needs {need} free task slots (engine.parallelism "
            f"{config.engine.parallelism}, learner_slots: {config.engine.learner_slots}), the "
            f"cluster at {overview.address} has {overview.slots_available} free of "
            f"{overview.slots_total}: lower engine.parallelism, set engine.learner_slots: "
            f"shared, or add slots (foldstream cluster start --slots N)")


def checkpoint_place(config: Config, settings: dict[str, str]) -> str | None:
    """Where the job's checkpoints go: the job's own ``engine.checkpoint_dir`` folder, else the
    cluster's checkpoint directory (``<dir>/<job id>/chk-N``); ``None`` for a job that takes
    none. Raises :class:`SubmitError` for a job that checkpoints into JobManager memory only
    (nothing would survive a cancel or a JobManager restart)."""
    if config.checkpoint_interval_ms is None:
        return None
    if config.engine.checkpoint_dir:
        return str(config.checkpoint_dir)
    cluster = _first(settings, CHECKPOINT_KEYS)
    if cluster is None:
        raise SubmitError(
            "the cluster has no checkpoint directory (execution.checkpointing.dir) and the job "
            "names none (engine.checkpoint_dir): its checkpoints would live in JobManager memory "
            "and nothing could resume it; set either to a folder every TaskManager reaches")
    return cluster.rstrip("/") + "/<job id>"


def flink_run(address: str, config_path: str, overrides: list[str],
              resume: str | None = None) -> str:
    """Submit with the wheel's ``flink run --detached``; the job id. Raises :class:`SubmitError`
    with the entry point's own message (and its exit code 2, not ``flink``'s 31)."""
    command = [str(flink_command()), "run", "--detached", "-m", address]
    if resume:
        command += ["-s", resume]
    command += ["-pym", ENTRY_MODULE, "--", config_path]
    for override in overrides:
        command += ["--set", override]
    env = dict(os.environ, PYFLINK_CLIENT_EXECUTABLE=sys.executable)
    done = subprocess.run(command, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    output = done.stdout + done.stderr
    found = _JOB_ID.search(output)
    if done.returncode == 0 and found:
        return found.group(1)
    errors = [line for line in output.splitlines() if line.startswith("error: ")]
    if errors:  # the entry point refused (exit 2): its message, not Flink's wrapping
        raise SubmitError("; ".join(line[len("error: "):] for line in errors))
    tail = "\n".join(output.strip().splitlines()[-15:])
    raise SubmitError(f"`flink run` exited with {done.returncode}:\n{tail}", exitcodes.FAILED)


def root_cause(address: str, job_id: str) -> str | None:
    """Flink's root cause of a job's failure (``GET /jobs/<id>/exceptions``), or ``None``."""
    try:
        answer = rest(address, f"/jobs/{job_id}/exceptions")
    except (ClusterError, urllib.error.HTTPError):
        return None
    entries = (answer.get("exceptionHistory") or {}).get("entries") or []
    trace = answer.get("root-exception") or (entries[0].get("stacktrace") if entries else None)
    return deepest_cause(trace) if trace else None


_EXCEPTION = re.compile(r"^(?:Caused by: )?([\w.$]+(?:Exception|Error|Throwable))(?::\s*|$)")


def deepest_cause(trace: str) -> str:
    """The root cause of a Java stack trace, in the words of the outermost exception that still
    carries its message (which often adds what the root lacks: a program's name).

    >>> deepest_cause("a.JobException: Recovery suppressed\\n\\tat x\\n"
    ...     "Caused by: java.io.IOException: Cannot run program \\"/p\\": error=2, No such file\\n"
    ...     "Caused by: java.io.IOException: error=2, No such file\\n\\tat y")
    'java.io.IOException: Cannot run program "/p": error=2, No such file'
    """
    causes = []
    for line in trace.splitlines():
        found = _EXCEPTION.match(line)
        if found and (not causes or line.startswith("Caused by: ")):
            message = line[found.end():]
            while (inner := _EXCEPTION.match(message)) is not None:  # wrapped: class: message
                message = message[inner.end():]
            causes.append((found.group(1), message.strip()))
    if not causes:
        return trace.strip().splitlines()[0] if trace.strip() else "unknown"
    name, message = causes[-1]
    for _, outer in reversed(causes[:-1]):
        if message not in outer:
            break
        message = outer
    return f"{name}: {message}" if message else name


def follow(address: str, job_id: str, timeout_s: float = FOLLOW_TIMEOUT_S) -> str:
    """Wait until every task of the job runs, or it has finished: its state. A job that fails,
    restarts or is cancelled first is cancelled (if it still lives) and :class:`SubmitError`
    reports Flink's root cause (exit 1)."""
    deadline = time.monotonic() + timeout_s
    state = "?"
    while time.monotonic() < deadline:
        job = rest(address, f"/jobs/{job_id}")
        state = job["state"]
        tasks = {v["status"] for v in job.get("vertices", [])}
        if state == "FINISHED" or (state == "RUNNING" and tasks <= {"RUNNING", "FINISHED"}):
            return state
        if state in ("FAILING", "FAILED", "RESTARTING", "CANCELLING", "CANCELED") \
                or (state == "RUNNING" and tasks & {"FAILED", "CANCELING", "CANCELED"}):
            cause = root_cause(address, job_id) or f"the job is {state}"
            if state not in ("FAILED", "CANCELED"):
                cancel(address, job_id)
            raise SubmitError(f"job {job_id} failed to start (cancelled): {cause}",
                              exitcodes.FAILED)
        time.sleep(0.5)
    cancel(address, job_id)
    raise SubmitError(f"job {job_id} did not get all its tasks running within {timeout_s:.0f} s "
                      f"(state {state}); cancelled", exitcodes.FAILED)


def cancel(address: str, job_id: str) -> None:
    try:
        rest(address, f"/jobs/{job_id}?mode=cancel", method="PATCH")
    except urllib.error.HTTPError:
        pass  # already ended


def submit(config_path: str, overrides: list[str], address: str,
           resume: str | None = None) -> Submitted:
    """Check, submit and follow the job (see the module docstring)."""
    from foldstream.connectors.kafka import KafkaUnavailable
    from foldstream.job.engines.flink.main import check_cluster_config
    from foldstream.job.engines.flink.run import check_kafka

    try:
        config = load_config(config_path, overrides)
        check_cluster_config(config)
    except ConfigError as error:
        raise SubmitError(str(error)) from None
    local = local_path(resume) if resume else None
    if local is not None and not os.path.exists(local):
        raise SubmitError(f"--resume {resume}: no such savepoint or checkpoint")
    check_slots(config, Overview.of(address))
    try:
        check_kafka(config)
    except KafkaUnavailable as error:
        raise SubmitError(str(error)) from None
    settings = jobmanager_config(address)
    checkpoints = checkpoint_place(config, settings)
    overrides = list(overrides)
    if config.engine.python_executable is None and settings.get("python.executable"):
        # the job would set the client's Python; keep the cluster's
        overrides.append(f"engine.python_executable={settings['python.executable']}")
    job_id = flink_run(address, config_path, overrides, resume)
    state = follow(address, job_id)
    if checkpoints is not None:
        checkpoints = checkpoints.replace("<job id>", job_id)
    return Submitted(job_id, state, checkpoints, address)


# ---------------------------------------------------------------- the rest of a job's life

@dataclass(frozen=True)
class JobRow:
    job_id: str
    name: str
    state: str
    start_time_ms: int
    duration_ms: int


def jobs(address: str) -> list[JobRow]:
    """The cluster's jobs (``GET /jobs/overview``), newest first."""
    rows = [JobRow(j["jid"], j["name"], j["state"], j["start-time"], j["duration"])
            for j in rest(address, "/jobs/overview")["jobs"]]
    return sorted(rows, key=lambda r: -r.start_time_ms)


def stop_with_savepoint(address: str, job_id: str, directory: str | None = None,
                        timeout_s: float = 300.0) -> str:
    """Stop the job with a savepoint (``POST /jobs/<id>/stop``) into ``directory`` (default:
    the cluster's savepoint directory); the savepoint's location."""
    try:
        state = rest(address, f"/jobs/{job_id}")["state"]
    except urllib.error.HTTPError:
        raise SubmitError(f"no job {job_id} on the cluster at {address} (`foldstream jobs` "
                          f"lists them)") from None
    if state != "RUNNING":
        raise SubmitError(f"job {job_id} is {state}, not running: nothing to stop")
    if directory is None and _first(jobmanager_config(address), SAVEPOINT_KEYS) is None:
        raise SubmitError("the cluster has no savepoint directory "
                          "(execution.checkpointing.savepoint-dir): name one with --savepoint DIR")
    body = {"drain": False}
    if directory:
        body["targetDirectory"] = directory if "://" in directory \
            else os.path.abspath(os.path.expanduser(directory))
    try:
        trigger = rest(address, f"/jobs/{job_id}/stop", method="POST", body=body)["request-id"]
    except urllib.error.HTTPError as error:
        raise SubmitError(f"job {job_id}: {error.code} {error.reason} (is it running? "
                          f"`foldstream jobs` lists them)") from None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answer = rest(address, f"/jobs/{job_id}/savepoints/{trigger}")
        if answer["status"]["id"] == "COMPLETED":
            operation = answer.get("operation") or {}
            if "location" in operation:
                _wait_until_ended(address, job_id, deadline)
                return operation["location"]
            raise SubmitError(f"the savepoint of job {job_id} failed: "
                              f"{_failure(operation)}", exitcodes.FAILED)
        time.sleep(0.5)
    raise SubmitError(f"the savepoint of job {job_id} did not complete within {timeout_s:.0f} s",
                      exitcodes.FAILED)


def _wait_until_ended(address: str, job_id: str, deadline: float) -> None:
    """Wait until the job has ended (it finishes a moment after its savepoint completes)."""
    while rest(address, f"/jobs/{job_id}")["state"] not in ("FINISHED", "CANCELED", "FAILED"):
        if time.monotonic() > deadline:
            raise SubmitError(f"job {job_id} took its savepoint but did not finish",
                              exitcodes.FAILED)
        time.sleep(0.5)


def _failure(operation: dict) -> str:
    cause = operation.get("failure-cause") or {}
    return deepest_cause(cause.get("stack-trace") or cause.get("class") or str(cause))

"""``foldstream cluster|submit|jobs|stop``: the Flink cluster path from the command line.

``cluster start|stop|status`` runs a local standalone cluster from the installed wheel
(:mod:`foldstream.job.engines.flink.cluster`); ``submit``, ``jobs`` and ``stop`` work with any
cluster's REST API (:mod:`foldstream.job.engines.flink.submit`). Every failure is one line on
stderr and an exit code of :mod:`foldstream.job.exitcodes`; so is a stop by Ctrl-C or SIGTERM
while a command waits (:func:`foldstream.job.engines.stopping.interruptible`).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

from foldstream.job import exitcodes
from foldstream.job.terminal import inert

COMMANDS = ("cluster", "submit", "jobs", "stop")


def add_parsers(commands) -> None:
    """Add the four commands to ``foldstream``'s subcommands."""
    from foldstream.job.engines.flink.cluster import DEFAULT_DIR, DEFAULT_JOBMANAGER, DEFAULT_SLOTS

    cluster = commands.add_parser(
        "cluster", help="a local standalone Flink cluster (JobManager + TaskManager JVMs)")
    cluster.add_argument("action", choices=("start", "stop", "status"))
    cluster.add_argument("--dir", default=DEFAULT_DIR,
                         help=f"its configuration, logs, pids and checkpoints (default: "
                              f"./{DEFAULT_DIR})")
    cluster.add_argument("--slots", type=int, default=DEFAULT_SLOTS,
                         help=f"task slots of the TaskManager (default: {DEFAULT_SLOTS}; a job "
                              f"takes 2 x engine.parallelism)")
    cluster.add_argument("--port", type=int, default=None,
                         help="the REST port on 127.0.0.1 (default: 8081)")

    def jobmanager(parser):
        parser.add_argument("--jobmanager", "-m", default=DEFAULT_JOBMANAGER, metavar="HOST:PORT",
                            type=rest_address,
                            help=f"the cluster's REST address (default: {DEFAULT_JOBMANAGER})")

    submit = commands.add_parser(
        "submit", help="submit the job (Kafka in, Kafka out) to a running Flink cluster")
    submit.add_argument("config", help="a YAML configuration (source and sink kind: kafka)")
    submit.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="override a key (repeatable)")
    submit.add_argument("--resume", metavar="SAVEPOINT_OR_CHECKPOINT",
                        help="start from this savepoint or retained checkpoint")
    jobmanager(submit)
    jobs = commands.add_parser("jobs", help="the jobs of a Flink cluster")
    jobmanager(jobs)
    stop = commands.add_parser("stop", help="stop a job of a Flink cluster with a savepoint")
    stop.add_argument("job", help="the job id (`foldstream jobs`)")
    stop.add_argument("--savepoint", metavar="DIR",
                      help="where the savepoint goes (default: the cluster's savepoint directory)")
    jobmanager(stop)


#: what a host of ``--jobmanager`` may hold: a name, an IPv4 address or a bracketed IPv6 one
_HOST = re.compile(r"[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]")


def rest_address(text: str) -> str:
    """``--jobmanager``: ``HOST:PORT`` of a REST API (an ``http://`` before it and a ``/``
    after it are dropped), refused at once with what is wrong rather than as a URL error
    later.

    >>> rest_address("http://localhost:8081/"), rest_address("[::1]:8081")
    ('localhost:8081', '[::1]:8081')
    >>> rest_address("localhost:abc")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'localhost:abc': the port must be a number from 1 to 65535
    """
    address = text.strip().removeprefix("http://").rstrip("/")
    host, colon, port = address.rpartition(":")
    if not colon or not _HOST.fullmatch(host):
        raise argparse.ArgumentTypeError(f"{text!r}: expected HOST:PORT, e.g. 127.0.0.1:8081")
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise argparse.ArgumentTypeError(f"{text!r}: the port must be a number from 1 to 65535")
    return address


def _unusable_dir(root: Path, action: str) -> str | None:
    """Why ``--dir`` cannot hold a cluster: not a folder, or (to start one) a place where
    nothing can be created, in the system's words; ``None`` when it can."""
    if root.exists() and not root.is_dir():
        return f"{root} is not a folder"
    if action != "start":
        return None
    try:  # what start does first; a read-only place, a file on the way, no permission
        root.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=root).close()
    except OSError as error:
        return f"cannot write {root}: {error.strerror or error}"
    return None


def _say(text: object) -> None:
    """One line of a command's output; it may name a path or a job of the user's."""
    print(inert(text, lines=True))


def _fail(message: str, code: int) -> int:
    print(f"error: {inert(message, lines=True)}", file=sys.stderr)
    return code


def main(args: argparse.Namespace) -> int:
    from foldstream.job.engines.flink.cluster import ClusterError
    from foldstream.job.engines.flink.submit import SubmitError
    from foldstream.job.engines.stopping import exit_code, interruptible, stop_text

    try:
        with interruptible():  # waiting for daemons, a savepoint or a job to run
            return {"cluster": _cluster, "submit": _submit, "jobs": _jobs, "stop": _stop}[
                args.command](args)
    except ClusterError as error:
        return _fail(str(error), exitcodes.UNUSABLE)
    except SubmitError as error:
        return _fail(str(error), error.exit_code)
    except KeyboardInterrupt as stop:
        print(f"stopped ({stop_text(stop)})", file=sys.stderr)
        return exit_code(stop)


def _cluster(args) -> int:
    from foldstream.job.engines.flink.cluster import LocalCluster, Overview

    local = LocalCluster(args.dir)
    unusable = _unusable_dir(local.root, args.action)
    if unusable:
        return _fail(f"--dir: {unusable}", exitcodes.UNUSABLE)
    if args.action == "start":
        if args.slots < 1:
            return _fail(f"--slots must be at least 1, not {args.slots}", exitcodes.UNUSABLE)
        if args.port is not None and not 1 <= args.port <= 65535:
            return _fail(f"--port must be 1 to 65535, not {args.port}", exitcodes.UNUSABLE)
        _say(local.start(slots=args.slots, port=args.port))
        _say(f"configuration, logs and checkpoints: {local.root}")
    elif args.action == "stop":
        stopped = local.stop()
        _say(f"stopped: {', '.join(stopped)}" if stopped else "no cluster runs under "
              f"{local.root}")
    else:
        running = [d for d in local.daemons() if d.running]
        for daemon in local.daemons():
            _say(f"{daemon.name}: pid {daemon.pid}, {'running' if daemon.running else 'dead'}")
        if not running:
            _say(f"no cluster runs under {local.root}")
            return exitcodes.FAILED
        _say(Overview.of(local.address))
        _say(f"checkpoints: {local.settings.get('execution.checkpointing.dir')}; "
              f"logs: {local.log_dir}")
    return exitcodes.OK


def _submit(args) -> int:
    from foldstream.job.engines.flink.submit import submit

    done = submit(args.config, args.overrides, args.jobmanager, resume=args.resume)
    _say(f"job {done.job_id}: {done.state} on http://{done.address}")
    _say(f"checkpoints: {done.checkpoints or 'none (the job takes no checkpoints)'}")
    return exitcodes.OK


def _jobs(args) -> int:
    from foldstream.job.engines.flink.submit import jobs

    rows = jobs(args.jobmanager)
    if not rows:
        _say(f"no jobs on http://{args.jobmanager}")
    for row in rows:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.start_time_ms / 1000))
        _say(f"{row.job_id}  {row.state:<10} {started}  {row.duration_ms / 1000:>8.0f} s  "
              f"{row.name}")
    return exitcodes.OK


def _stop(args) -> int:
    from foldstream.job.engines.flink.submit import stop_with_savepoint

    location = stop_with_savepoint(args.jobmanager, args.job, args.savepoint)
    _say(f"job {args.job} stopped; savepoint: {location}")
    _say(f"resume with: foldstream submit CONFIG --resume {location}")
    return exitcodes.OK

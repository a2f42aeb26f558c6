"""Helpers of the Flink tests: records compared as bytes, a run that fails once, and a
``foldstream run`` started as a process of its own, waited on and killed.

No pytest in here (loaded with ``conftest.load_helper``; tests take the ``flink_runs``
fixture), so the failure tests share one definition of "the records of a run that failed once
equal those of a run that never failed", and the live Kafka tests one way to start, watch and
kill a run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from foldstream.job.config import Config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.records.base import dumps

TIMING = SummaryRecord.TIMING_FIELDS  # the one list of the fields that vary from run to run


def comparable(records, summaries: bool = False) -> list[str]:
    """Every record as exact bytes, sorted: without the summaries (their wall time differs), or
    with them but for their timing fields."""
    return sorted(dumps({k: v for k, v in r.items() if k not in TIMING}) for r in records
                  if summaries or r["type"] != "summary")


def fail_once_and_compare(cfg: Config, marker: Path, summaries: bool = False) -> tuple[list, list]:
    """Run ``cfg`` in-process with ``marker`` present (its ``FailOnce`` learner takes the marker
    and never fails), then on Flink without it (the learner fails once, the job restarts from
    its last checkpoint); check that it failed, that the records are equal and that there is
    exactly one summary. Returns ``(flink records, in-process records)``."""
    from foldstream.job.engines.flink import run as flink_run

    marker.touch()  # the reference run: the marker is taken, nothing fails
    reference, _ = evaluate_to_list(make_plans(cfg), open_source(cfg))
    marker.unlink()
    records: list[dict] = []
    flink_run.run(cfg, records.append, lambda r: None)
    assert marker.exists()  # it did fail once
    assert comparable(records, summaries) == comparable(reference, summaries)
    assert sum(r["type"] == "summary" for r in records) == 1
    return records, reference


def rows(start: int, stop: int) -> list[dict]:
    """The examples ``start`` to ``stop`` (excluded) of the live tests' stream, as JSON rows:
    two features and a binary label ``y``, the same rows whatever the range is cut into."""
    return [{"a": (i * 7) % 11, "b": (i % 5) * 0.5, "y": (i // 3) % 2} for i in range(start, stop)]


def positions(records: list[dict]) -> set[int]:
    """The positions of the ``measures`` records among ``records``."""
    return {r["position"] for r in records if r["type"] == "measures"}


def start_run(config: Path, log: Path, *extra: str) -> subprocess.Popen:
    """``foldstream run --quiet CONFIG *extra`` in a process group of its own (its JVM and the
    mini-cluster's Python workers with it, so that :func:`end_run` can kill them all), its output
    appended to ``log``."""
    return subprocess.Popen([sys.executable, "-m", "foldstream.job.cli", "run", "--quiet",
                             str(config), *extra], stdout=log.open("a"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def wait_for(predicate, timeout_s: float, job: subprocess.Popen, log: Path,
             every_s: float = 0.5) -> None:
    """Wait until ``predicate()`` holds; fail with the end of ``log`` if the run ends first or
    ``timeout_s`` passes."""
    deadline = time.time() + timeout_s
    while not predicate():
        assert job.poll() is None, log.read_text()[-3000:]
        assert time.time() < deadline, log.read_text()[-3000:]
        time.sleep(every_s)


def end_run(job: subprocess.Popen) -> None:
    """Kill what is left of a run started by :func:`start_run` (its whole process group)."""
    try:
        os.killpg(job.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    job.wait(timeout=30)

"""Exactly-once delivery to the metrics topic, on Apache Kafka, through a real failure.

A live run (``foldstream run``, unbounded Kafka source, checkpoints every 15 s, the sink's
``delivery_guarantee: exactly-once``) on the local mini-cluster; its learner fails once
(:class:`foldstream.job.engines.flink.faults.FailOnce`) between two checkpoints, so the job
restarts from the last one. The second part of the input is sent once the first is committed
(a checkpoint completed), and is evaluated well within one interval: the failure comes after
reports written in a transaction that no checkpoint committed. A ``read_committed`` reader of the metrics topic then finds every
record of the in-process run exactly once; a ``read_uncommitted`` reader finds more: the records
of the transaction that the failure aborted (so the test is known to have gone through an abort).
The cluster's counterpart (a TaskManager killed with SIGKILL, a savepoint, a resume at another
parallelism) is in tests/test_cluster.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans
from foldstream.job.tools.records import read_records
from foldstream.operators.records.base import dumps

pytestmark = [pytest.mark.kafka, pytest.mark.flink]

FIRST, SECOND = 600, 600  # examples before the failing part, and the failing part
# training calls of a fold before it fails: a bootstrap fold trains on about 63% of the examples
# (a weight of 0 skips the call), so this falls at about position 950, in the second part
FAIL_AFTER = 600
REPORT_EVERY = 100
BEFORE_FAIL = 800  # the reports up to here are written before the failing examples are sent


def _rows(start: int, stop: int) -> list[dict]:
    return [{"a": (i * 7) % 11, "b": (i % 5) * 0.5, "y": (i // 3) % 2} for i in range(start, stop)]


def _metrics(bs: str, topic: str, isolation: str = "read_committed") -> list[dict]:
    from foldstream.connectors.kafka import read_topic

    return [json.loads(v) for _, v in read_topic(bs, topic, timeout_s=10,
                                                 isolation_level=isolation)]


def _positions(records: list[dict]) -> set[int]:
    return {r["position"] for r in records if r["type"] == "measures"}


def _wait(predicate, timeout_s: float, job: subprocess.Popen, log: Path) -> None:
    deadline = time.time() + timeout_s
    while not predicate():
        assert job.poll() is None, log.read_text()[-3000:]
        assert time.time() < deadline, log.read_text()[-3000:]
        time.sleep(0.5)


def test_a_failure_between_checkpoints_leaves_each_record_once_for_read_committed(
        kafka_broker, kafka_jars, tmp_path):
    from foldstream.connectors.kafka import create_topics, produce_jsonl
    from foldstream.connectors.messages import MessageParser

    bs = kafka_broker.bootstrap
    create_topics(bs, ["eo-in", "eo-out", "eo-dead"])
    checkpoints, marker = tmp_path / "checkpoints", tmp_path / "failed"
    config = tmp_path / "live.yaml"
    config.write_text(f"""
source: {{kind: kafka, bootstrap_servers: "{bs}", topic: eo-in, label: y}}
sink: {{kind: kafka, bootstrap_servers: "{bs}", topic: eo-out, dead_letter_topic: eo-dead,
        delivery_guarantee: exactly-once}}
evaluation: {{folds: 3, report_every: {REPORT_EVERY}}}
learners:
  - name: nb
    model: foldstream.job.engines.flink.faults.FailOnce
    params: {{model: {{model: river.naive_bayes.GaussianNB}}, after: {FAIL_AFTER},
              marker: "{marker}", checkpoints: "{checkpoints}"}}
engine: {{kind: flink, parallelism: 1, learner_slots: shared, batch_size: 50,
          checkpoint_interval_ms: 15000, checkpoint_dir: "{checkpoints}",
          jars: {json.dumps([str(j) for j in kafka_jars])}}}
""")
    cfg = load_config(str(config), [])
    log = tmp_path / "job.log"
    produce_jsonl(bs, "eo-in", "s", _rows(0, FIRST))
    job = subprocess.Popen([sys.executable, "-m", "foldstream.job.cli", "run", "--quiet",
                            str(config)], stdout=log.open("a"), stderr=subprocess.STDOUT,
                           start_new_session=True)
    try:
        # the first part committed: a checkpoint completed after its last report was written
        _wait(lambda: FIRST in _positions(_metrics(bs, "eo-out")), 300, job, log)
        assert not marker.exists()
        # reports written in the open transaction first (the Python worker hands its output on
        # by bundles: sent with the failing examples, they could die in the bundle unsent)
        produce_jsonl(bs, "eo-in", "s", _rows(FIRST, BEFORE_FAIL))
        _wait(lambda: BEFORE_FAIL in _positions(_metrics(bs, "eo-out", "read_uncommitted")),
              300, job, log)
        produce_jsonl(bs, "eo-in", "s", _rows(BEFORE_FAIL, FIRST + SECOND))
        _wait(lambda: FIRST + SECOND in _positions(_metrics(bs, "eo-out")), 300, job, log)
        time.sleep(2)  # the rest of that report, were it not whole
    finally:
        try:
            os.killpg(job.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        job.wait(timeout=30)
    assert marker.exists(), "the learner did not fail"

    committed = _metrics(bs, "eo-out")
    texts = [dumps(r) for r in committed if r["type"] != "summary"]
    repeated = [t for t, n in Counter(texts).items() if n > 1]
    assert not repeated, f"{len(repeated)} records read twice, e.g. {repeated[:1]}"
    assert _positions(committed) == set(range(REPORT_EVERY, FIRST + SECOND + 1, REPORT_EVERY))

    marker.touch()  # the reference run: the marker is taken, nothing fails
    parser = MessageParser(label=cfg.source.label)
    examples = [e for row in _rows(0, FIRST + SECOND) for e in parser(b"s", json.dumps(row), "x")]
    reference, _ = evaluate_to_list(make_plans(cfg), examples)
    assert sorted(texts) == sorted(dumps(r) for r in reference if r["type"] != "summary")

    # the aborted transaction's records are in the log: a read_uncommitted reader sees them
    uncommitted = _metrics(bs, "eo-out", "read_uncommitted")
    assert len(uncommitted) > len(committed), "no aborted record: the failure aborted nothing"
    # foldstream's own readers (watch, dashboard, plot, report) read each record once too
    read = read_records(f"kafka://{bs}/eo-out")
    assert sorted(dumps(r) for r in read if r["type"] != "summary") == sorted(texts)
    assert "Traceback" not in log.read_text()

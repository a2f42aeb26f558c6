"""The cluster path on a real standalone Flink cluster: ``foldstream cluster start`` (one
JobManager and one TaskManager with 4 slots, separate JVMs, from the installed wheel),
``foldstream submit`` / ``jobs`` / ``stop``, a TaskManager killed with SIGKILL and replaced under
exactly-once delivery, a savepoint and ``--resume`` at another parallelism, and ``cluster stop``
leaving no process behind.

One cluster serves the module (starting one takes 20 to 30 s here); the tests run in file order,
cheapest first, and the last one stops it.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from foldstream.job import exitcodes
from foldstream.job.cli import main
from foldstream.job.config import load_config
from foldstream.job.engines.flink.cluster import Overview
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans
from foldstream.operators.records.base import dumps

pytestmark = [pytest.mark.flink, pytest.mark.slow]

SLOTS = 4
REPORT_EVERY = 200


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, free_port):
    from foldstream.job.engines.flink.cluster import LocalCluster

    local = LocalCluster(tmp_path_factory.mktemp("cluster"))
    try:
        local.start(slots=SLOTS, port=free_port())
        yield local
    finally:
        local.stop()


def _rows(start: int, stop: int) -> list[dict]:
    return [{"a": (i * 7) % 11, "b": (i % 5) * 0.5, "y": (i // 3) % 2} for i in range(start, stop)]


def _config(tmp_path: Path, bs: str, prefix: str, jars, *, bounded: bool,
            guarantee: str = "at-least-once", **engine) -> Path:
    from foldstream.connectors.kafka import create_topics

    create_topics(bs, [f"{prefix}-in", f"{prefix}-out", f"{prefix}-dead"])
    settings = {"kind": "flink", "parallelism": 1, "batch_size": 500,
                "jars": [str(j) for j in jars], **engine}
    config = tmp_path / f"{prefix}.yaml"
    config.write_text(f"""
source: {{kind: kafka, bootstrap_servers: "{bs}", topic: {prefix}-in, label: y,
          bounded: {str(bounded).lower()}}}
sink: {{kind: kafka, bootstrap_servers: "{bs}", topic: {prefix}-out,
        dead_letter_topic: {prefix}-dead, delivery_guarantee: {guarantee}}}
evaluation: {{folds: 3, report_every: {REPORT_EVERY}}}
learners: [{{name: nb, model: river.naive_bayes.GaussianNB}}]
engine: {json.dumps(settings)}
""")
    return config


def _metrics(bs: str, topic: str, isolation: str = "read_committed") -> list[dict]:
    from foldstream.connectors.kafka import read_topic

    return [json.loads(v) for _, v in read_topic(bs, topic, timeout_s=10,
                                                 isolation_level=isolation)]


def _positions(records: list[dict]) -> set[int]:
    return {r["position"] for r in records if r["type"] == "measures"}


def _reference(config: Path, n: int) -> list[str]:
    """The records of the in-process run over the same rows (summaries aside), as text."""
    from foldstream.connectors.messages import MessageParser

    cfg = load_config(str(config), [])
    parser = MessageParser(label=cfg.source.label)
    examples = [e for row in _rows(0, n) for e in parser(b"s", json.dumps(row), "x")]
    records, _ = evaluate_to_list(make_plans(cfg), examples)
    return sorted(dumps(r) for r in records if r["type"] != "summary")


def _wait(predicate, timeout_s: float, what: str, cluster=None, job_id: str | None = None):
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}" + (
            _story(cluster, job_id) if job_id else "")
        time.sleep(1)


def _submit(cluster, capsys, config: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["submit", str(config), "--jobmanager", cluster.address, *extra])
    out, err = capsys.readouterr()
    return code, out, err


def _job_id(out: str) -> str:
    return out.split()[1].rstrip(":")


def _story(cluster, job_id: str) -> str:
    """The job's state and Flink's root cause, for a failure message."""
    from foldstream.job.engines.flink.submit import root_cause

    return f" (job {job_id} {_state(cluster, job_id)}: {root_cause(cluster.address, job_id)})"


def _state(cluster, job_id: str) -> str:
    from foldstream.job.engines.flink.cluster import rest

    return rest(cluster.address, f"/jobs/{job_id}")["state"]


def test_status_shows_the_rest_address_taskmanagers_and_free_slots(cluster, capsys):
    assert main(["cluster", "status", "--dir", str(cluster.root)]) == exitcodes.OK
    out = capsys.readouterr().out
    assert f"http://{cluster.address}" in out
    assert f"1 TaskManager, {SLOTS} of {SLOTS} slots free" in out
    assert "taskmanager-1: pid" in out and "jobmanager: pid" in out


def test_a_job_above_the_free_slots_is_refused_with_the_numbers(cluster, capsys, tmp_path):
    config = tmp_path / "big.yaml"
    config.write_text("""
source: {kind: kafka, bootstrap_servers: "127.0.0.1:1", topic: t, label: y}
sink: {kind: kafka, bootstrap_servers: "127.0.0.1:1", topic: m}
learners: [{name: nb, model: river.naive_bayes.GaussianNB}]
engine: {kind: flink, parallelism: 3}
""")
    code, _, err = _submit(cluster, capsys, config)
    assert code == exitcodes.UNUSABLE
    assert f"needs 6 free task slots" in err and f"has {SLOTS} free of {SLOTS}" in err


def test_the_entry_points_refusal_keeps_its_reason_and_exit_2(cluster, tmp_path, free_port):
    """``flink run`` exits 31 when the entry point exits 2 (here: no broker answers, checked
    inside the job's client); the submit reports the entry point's message and 2."""
    from foldstream.job.engines.flink.submit import SubmitError, flink_run

    dead = f"127.0.0.1:{free_port()}"
    config = tmp_path / "dead.yaml"
    config.write_text(f"""
source: {{kind: kafka, bootstrap_servers: "{dead}", topic: t, label: y}}
sink: {{kind: kafka, bootstrap_servers: "{dead}", topic: m}}
learners: [{{name: nb, model: river.naive_bayes.GaussianNB}}]
engine: {{kind: flink, parallelism: 1, jars: []}}
""")
    with pytest.raises(SubmitError, match=f"no Kafka broker reachable at bootstrap servers {dead}") \
            as refused:
        flink_run(cluster.address, str(config), [])
    assert refused.value.exit_code == exitcodes.UNUSABLE


def test_a_file_source_is_refused_naming_the_key(cluster, capsys, tmp_path):
    config = tmp_path / "file.yaml"
    (tmp_path / "in.csv").write_text("a,y\n1,0\n")
    config.write_text(f"""
source: {{kind: file, path: "{tmp_path / 'in.csv'}", label: y}}
learners: [{{name: nb, model: river.naive_bayes.GaussianNB}}]
engine: {{kind: flink}}
""")
    code, _, err = _submit(cluster, capsys, config)
    assert code == exitcodes.UNUSABLE and "source.kind" in err


def test_a_job_whose_python_cannot_start_fails_the_submit_with_the_reason(
        cluster, capsys, tmp_path, kafka_broker, kafka_jars):
    """``flink run --detached`` exits 0 for this job; ``foldstream submit`` follows it, cancels
    it and exits 1 with Flink's root cause."""
    config = _config(tmp_path, kafka_broker.bootstrap, "cp", kafka_jars, bounded=False,
                     python_executable=str(tmp_path / "no-such-python"))
    code, out, err = _submit(cluster, capsys, config)
    assert code == exitcodes.FAILED, out + err
    assert "failed to start" in err and "no-such-python" in err
    assert "Traceback" not in err
    job_id = err.split("job ")[1].split()[0]
    _wait(lambda: _state(cluster, job_id) in ("CANCELED", "FAILED"), 60, "the cancel")
    _wait(lambda: Overview.of(cluster.address).slots_available == SLOTS, 60, "the slots back")


def test_a_bounded_job_writes_the_in_process_records(cluster, capsys, tmp_path, kafka_broker,
                                                     kafka_jars):
    from foldstream.connectors.kafka import produce_jsonl

    bs, n = kafka_broker.bootstrap, 1000
    config = _config(tmp_path, bs, "cb", kafka_jars, bounded=True)
    produce_jsonl(bs, "cb-in", "s", _rows(0, n))
    code, out, err = _submit(cluster, capsys, config)
    assert code == exitcodes.OK, err
    job_id = _job_id(out)
    _wait(lambda: _state(cluster, job_id) == "FINISHED", 180, "the bounded job to finish")
    records = _metrics(bs, "cb-out")
    assert [r for r in records if r["type"] == "summary"]
    assert sorted(dumps(r) for r in records if r["type"] != "summary") == _reference(config, n)
    assert main(["jobs", "--jobmanager", cluster.address]) == exitcodes.OK
    assert f"{job_id}  FINISHED" in capsys.readouterr().out


def test_exactly_once_through_a_killed_taskmanager_and_a_rescaled_resume(
        cluster, capsys, tmp_path, kafka_broker, kafka_jars):
    """A live job writing exactly-once: SIGKILL of the TaskManager while a transaction is open,
    a new one started (``cluster start``): the job restores from its checkpoint and aborts that
    transaction; then ``foldstream stop`` with a savepoint and ``submit --resume`` at
    parallelism 2. A ``read_committed`` reader finds every record of the in-process run once;
    a ``read_uncommitted`` reader also finds the aborted ones."""
    from foldstream.connectors.kafka import produce_jsonl
    from foldstream.job.engines.flink.cluster import alive, session_members

    bs = kafka_broker.bootstrap
    first, second, third = 600, 600, 400
    config = _config(tmp_path, bs, "cl", kafka_jars, bounded=False,
                     guarantee="exactly-once", checkpoint_interval_ms=20_000,
                     restart_attempts=10)  # 10 s apart: time for a slow new TaskManager
    produce_jsonl(bs, "cl-in", "s", _rows(0, first))
    code, out, err = _submit(cluster, capsys, config)
    assert code == exitcodes.OK, err
    job_id = _job_id(out)
    checkpoints = Path(out.split("checkpoints: ")[1].split()[0].removeprefix("file:"))
    assert checkpoints.name == job_id and checkpoints.parent == cluster.root / "checkpoints"
    _wait(lambda: first in _positions(_metrics(bs, "cl-out")), 180, f"position {first}",
          cluster, job_id)

    # the next part: killed while the records since the last checkpoint are not yet committed
    # (checkpoints 20 s apart: reports stay uncommitted long enough to be seen)
    produce_jsonl(bs, "cl-in", "s", _rows(first, first + second))
    deadline = time.monotonic() + 180
    while not _positions(_metrics(bs, "cl-out", "read_uncommitted")) - \
            _positions(_metrics(bs, "cl-out")):
        assert time.monotonic() < deadline, "no uncommitted report" + _story(cluster, job_id)
        time.sleep(0.1)
    taskmanager = next(d for d in cluster.daemons() if d.name == "taskmanager-1")
    workers = [p for p in session_members(taskmanager.pid) if p != taskmanager.pid]
    assert workers, "the TaskManager runs Python workers"
    os.kill(taskmanager.pid, signal.SIGKILL)
    _wait(lambda: not alive(taskmanager.pid), 30, "the kill")
    assert main(["cluster", "start", "--dir", str(cluster.root)]) == exitcodes.OK
    capsys.readouterr()
    assert not [p for p in workers if alive(p)], "orphaned Python workers"
    _wait(lambda: first + second in _positions(_metrics(bs, "cl-out")), 480,
          f"position {first + second} after the restore", cluster, job_id)
    time.sleep(2)  # the rest of that report, were it not whole
    _once(_metrics(bs, "cl-out"), first + second)

    assert main(["stop", job_id, "--jobmanager", cluster.address]) == exitcodes.OK
    out = capsys.readouterr().out
    savepoint = out.split("savepoint: ")[1].split()[0]
    assert _state(cluster, job_id) == "FINISHED"
    stopped = _metrics(bs, "cl-out")

    produce_jsonl(bs, "cl-in", "s", _rows(first + second, first + second + third))
    code, out, err = _submit(cluster, capsys, config, "--resume", savepoint,
                             "--set", "engine.parallelism=2")
    assert code == exitcodes.OK, err
    resumed = _job_id(out)
    total = first + second + third
    _wait(lambda: total in _positions(_metrics(bs, "cl-out")), 180, f"position {total}",
          cluster, resumed)
    time.sleep(2)
    records = _metrics(bs, "cl-out")
    assert records[:len(stopped)] == stopped
    assert _once(records, total) == _reference(config, total)
    aborted = len(_metrics(bs, "cl-out", "read_uncommitted")) - len(records)
    assert aborted > 0, "no aborted record: the kill aborted nothing"
    assert main(["stop", resumed, "--jobmanager", cluster.address,
                 "--savepoint", str(tmp_path / "sp")]) == exitcodes.OK
    assert str(tmp_path / "sp") in capsys.readouterr().out


def _once(records: list[dict], last: int) -> list[str]:
    """The records (summaries aside) as sorted text, after checking that none is there twice and
    that every report up to position ``last`` is."""
    texts = [dumps(r) for r in records if r["type"] != "summary"]
    twice = [t for t, n in Counter(texts).items() if n > 1]
    assert not twice, f"{len(twice)} records read twice, e.g. {twice[:1]}"
    assert _positions(records) == set(range(REPORT_EVERY, last + 1, REPORT_EVERY))
    return sorted(texts)


def test_cluster_stop_leaves_no_process(cluster, capsys):
    from foldstream.job.engines.flink.cluster import session_members

    sessions = [d.pid for d in cluster.daemons()]
    assert sessions and all(session_members(s) for s in sessions)
    assert main(["cluster", "stop", "--dir", str(cluster.root)]) == exitcodes.OK
    assert [p for s in sessions for p in session_members(s)] == []
    root = str(cluster.root).encode()
    left = [p for p in os.listdir("/proc") if p.isdigit()
            and root in _cmdline(p)]
    assert left == [], f"processes of the cluster left: {left}"
    assert main(["cluster", "status", "--dir", str(cluster.root)]) == exitcodes.FAILED


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""

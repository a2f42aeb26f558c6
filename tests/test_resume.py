"""A live Kafka run killed for real (SIGKILL of the client, whose JVM hosts the local Flink
mini-cluster) and resumed with ``foldstream run CONFIG --resume``: the metrics topic then holds
every report of an uninterrupted run with the same values; reports written again since the last
checkpoint (at-least-once) are byte-identical repeats.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans
from foldstream.operators.records.base import dumps


FIRST, SECOND = 600, 600  # examples before the kill, and after it
REPORT_EVERY = 200


def _rows(start: int, stop: int) -> list[dict]:
    return [{"a": (i * 7) % 11, "b": (i % 5) * 0.5, "y": (i // 3) % 2} for i in range(start, stop)]


def _metrics(bs: str, topic: str) -> list[dict]:
    from foldstream.connectors.kafka import read_topic

    return [json.loads(v) for _, v in read_topic(bs, topic, timeout_s=10)]


def _positions(records: list[dict]) -> set[int]:
    return {r["position"] for r in records if r["type"] == "measures"}


def _identity(record: dict) -> tuple:
    """What names a record (its values aside): two records with one identity must be equal."""
    return tuple(str(record.get(k)) for k in ("type", "stream", "position", "learner", "fold",
                                              "a", "b", "measure", "window", "test"))


def _wait(predicate, timeout_s: float, job: subprocess.Popen, log: Path) -> None:
    deadline = time.time() + timeout_s
    while not predicate():
        assert job.poll() is None, log.read_text()[-3000:]
        assert time.time() < deadline, log.read_text()[-3000:]
        time.sleep(1)


def _start(config: Path, log: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "foldstream.job.cli", "run", "--quiet",
                             str(config), *extra], stdout=log.open("a"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _end(job: subprocess.Popen) -> None:
    """Stop what is left of a run started here (its process group)."""
    try:
        os.killpg(job.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    job.wait(timeout=30)


@pytest.mark.kafka
@pytest.mark.flink  # slow (tests/conftest.py)
def test_a_killed_live_run_resumes_from_its_checkpoint(kafka_broker, kafka_jars, tmp_path):
    from foldstream.connectors.kafka import create_topics, produce_jsonl

    bs = kafka_broker.bootstrap
    create_topics(bs, ["rs-in", "rs-out", "rs-dead"])
    checkpoints = tmp_path / "checkpoints"
    config = tmp_path / "live.yaml"
    config.write_text(f"""
source: {{kind: kafka, bootstrap_servers: "{bs}", topic: rs-in, label: y}}
sink: {{kind: kafka, bootstrap_servers: "{bs}", topic: rs-out, dead_letter_topic: rs-dead}}
evaluation: {{folds: 3, report_every: {REPORT_EVERY}}}
learners: [{{name: nb, model: river.naive_bayes.GaussianNB}}]
engine: {{kind: flink, parallelism: 1, learner_slots: shared, batch_size: 500,
          checkpoint_interval_ms: 1000, checkpoint_dir: "{checkpoints}",
          jars: {json.dumps([str(j) for j in kafka_jars])}}}
""")
    cfg = load_config(str(config), [])
    assert cfg.checkpoint_dir.parent == checkpoints.resolve()
    log = tmp_path / "job.log"

    produce_jsonl(bs, "rs-in", "s", _rows(0, FIRST))
    job = _start(config, log)
    try:
        _wait(lambda: FIRST in _positions(_metrics(bs, "rs-out")), 180, job, log)
        seen = time.time()
        # a checkpoint completed after the report at FIRST was written: it holds the state
        # that reached it (the batch flushed by the timer included)
        _wait(lambda: any(m.stat().st_mtime > seen + 1
                          for m in cfg.checkpoint_dir.glob("*/chk-*/_metadata")), 60, job, log)
        job.send_signal(signal.SIGKILL)  # the client only: its JVM, the mini-cluster, goes too
        job.wait(timeout=30)
    finally:
        _end(job)
    before = _metrics(bs, "rs-out")

    produce_jsonl(bs, "rs-in", "s", _rows(FIRST, FIRST + SECOND))
    job = _start(config, log, "--resume")
    try:
        try:
            _wait(lambda: FIRST + SECOND in _positions(_metrics(bs, "rs-out")), 120, job, log)
        except AssertionError as error:
            raise AssertionError(f"positions {sorted(_positions(_metrics(bs, 'rs-out')))}; "
                                 f"{error}") from None
        time.sleep(3)  # let the other records of that report arrive
    finally:
        _end(job)
    records = _metrics(bs, "rs-out")
    assert records[:len(before)] == before

    parser_cfg = cfg.source
    from foldstream.connectors.messages import MessageParser

    parser = MessageParser(label=parser_cfg.label)
    examples = [e for row in _rows(0, FIRST + SECOND) for e in parser(b"s", json.dumps(row), "x")]
    reference, _ = evaluate_to_list(make_plans(cfg), examples)
    reference = [r for r in reference if r["type"] != "summary"]

    by_identity: dict[tuple, set[str]] = {}
    for record in records:
        by_identity.setdefault(_identity(record), set()).add(dumps(record))
    changed = {k: v for k, v in by_identity.items() if len(v) > 1}
    assert not changed, f"records repeated with other values: {list(changed)[:3]}"
    assert _positions(records) == set(range(REPORT_EVERY, FIRST + SECOND + 1, REPORT_EVERY))
    assert sorted(t for (texts) in by_identity.values() for t in texts) == \
        sorted(dumps(r) for r in reference)
    assert "Traceback" not in log.read_text()


def _kafka_config(tmp_path, *extra: str):
    return load_config(None, ["source={kind: kafka, topic: t, label: y}", "sink={kind: kafka}",
                              "engine.kind=flink", f"engine.checkpoint_dir={tmp_path}", *extra])


def test_start_committed_without_a_checkpoint_is_refused_naming_the_key(tmp_path):
    """Fresh learners at position 0 on committed offsets would repeat earlier record identities."""
    from foldstream.job.config import ConfigError
    from foldstream.job.engines.flink.run import check_start, run

    cfg = _kafka_config(tmp_path, "source.start=committed")
    with pytest.raises(ConfigError, match="source.start"):
        run(cfg, print, print)  # before any broker is asked
    check_start(cfg, restore=str(tmp_path))  # with a checkpoint: allowed


def test_resume_finds_the_latest_checkpoint_of_its_configuration_or_says_there_is_none(tmp_path):
    from foldstream.job.config import ConfigError
    from foldstream.job.engines.flink.env import resume_point

    cfg = _kafka_config(tmp_path)
    assert cfg.checkpoint_dir.parent == tmp_path.resolve()
    with pytest.raises(ConfigError, match="no completed checkpoint"):
        resume_point(cfg, "latest")
    done = cfg.checkpoint_dir / "job-a" / "chk-4"
    done.mkdir(parents=True)
    (done / "_metadata").write_bytes(b"")
    (cfg.checkpoint_dir / "job-b" / "chk-9").mkdir(parents=True)  # not complete: no _metadata
    assert resume_point(cfg, "latest") == str(done)
    other = _kafka_config(tmp_path, "evaluation.folds=3")  # another configuration, another folder
    with pytest.raises(ConfigError, match="no completed checkpoint"):
        resume_point(other, "latest")


def test_resume_on_the_in_process_engine_is_a_clear_error(capsys):
    from foldstream.job import exitcodes
    from foldstream.job.cli import main

    assert main(["run", "--resume", "--set", "source.limit=10"]) == exitcodes.UNUSABLE
    assert "--resume" in capsys.readouterr().err


def test_a_dead_letter_that_could_exceed_the_producer_limit_is_refused_at_start():
    from foldstream.job.config import ConfigError

    with pytest.raises(ConfigError, match="sink.dead_letter_max_bytes"):
        load_config(None, ["sink={kind: kafka, dead_letter_max_bytes: 1000000}", "engine.kind=flink"])
    load_config(None, ["sink={kind: kafka, dead_letter_max_bytes: 1000000, "
                       "properties: {max.request.size: 8000000}}", "engine.kind=flink"])

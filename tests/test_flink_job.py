"""The Flink job on a real mini-cluster: the same records as the in-process engine, over Kafka too.

The in-process engine is the reference: for the same configuration and seed the Flink job at
parallelism 2 (Python workers in separate processes) must write exactly the same ``measures``,
``comparison``, ``ranking`` and ``alarm`` records, byte for byte (order may differ).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os

import pytest

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.records.base import Example, dumps

pytestmark = pytest.mark.flink

TWO_LEARNERS = ("learners=[{name: ht, model: river.tree.HoeffdingTreeClassifier}, "
                "{name: nb, model: river.naive_bayes.GaussianNB}]")


def comparable(records) -> list[str]:
    """Every record but the summary, whose wall time differs, as exact bytes, sorted."""
    return sorted(dumps(r) for r in records if r["type"] != "summary")


def test_fold_routes_land_where_flink_sends_them():
    """job/engines/flink/routing.py mirrors Flink's key-group hashing; ask the JVM itself."""
    from pyflink.java_gateway import get_gateway

    from foldstream.job.engines.flink.routing import fold_routes, subtask_of

    gateway = get_gateway()
    assign = gateway.jvm.org.apache.flink.runtime.state.KeyGroupRangeAssignment
    row = gateway.jvm.org.apache.flink.types.Row
    for stream, folds, parallelism in (("elec", 10, 2), ("sea", 7, 3), ("ünïcode", 5, 4)):
        for key in fold_routes(stream, folds, parallelism):
            fields = gateway.new_array(gateway.jvm.java.lang.Object, 1)
            fields[0] = key
            assert assign.assignKeyToParallelOperator(row.of(fields), 128, parallelism) == \
                subtask_of(key, parallelism)
        counts = [0] * parallelism
        for key in fold_routes(stream, folds, parallelism):
            counts[subtask_of(key, parallelism)] += 1
        assert max(counts) - min(counts) <= 1


@pytest.mark.parametrize("mode,window,keying,extra", [
    ("bootstrap", "{kind: adwin, delta: 0.002}", "fold", ()),
    ("cv", "{kind: sliding, size: 500}", "learner_fold", ()),
    # live verdicts (docs/method.md §12), holdout: the packed per-example losses cross operators
    # (a prior-class learner, so that a verdict is reached within 3,000 examples)
    ("bootstrap", "{kind: adwin, delta: 0.002}", "fold",
     ("evaluation.verdicts.enabled=true", "evaluation.prequential=false",
      "learners=[{name: ht, model: river.tree.HoeffdingTreeClassifier}, "
      "{name: prior, model: river.dummy.PriorClassifier}]")),
    # the kept class scores cross operators, and the AUC windows live in keyed state
    ("cv", "{kind: sliding, size: 500}", "learner_fold",
     ("evaluation.scores=[auc]", "evaluation.compare=[accuracy, auc]")),
    # detectors on a windowed measure (docs/method.md §7), with consensus drift (§16)
    ("cv", "{kind: adwin, delta: 0.002}", "fold",
     ("evaluation.alarms.quantity=kappa", "evaluation.alarms.window=50",
      "evaluation.alarms.page_hinkley={mode: down, threshold: 2}",
      "evaluation.alarms.consensus={window: 500}", "source.drifts=[1000, 2000]")),
], ids=["bootstrap-fold", "cv-learner_fold", "verdicts-holdout", "auc-learner_fold",
      "alarms-on-kappa"])
def test_flink_at_parallelism_2_writes_the_records_of_the_in_process_engine(elec_path, mode, window,
                                                                           keying, extra,
                                                                           monkeypatch):
    from foldstream.job.engines.flink import run as flink_run

    cfg = load_config(None, [
        f"source.path={elec_path}", "source.limit=3000", TWO_LEARNERS, f"evaluation.mode={mode}",
        f"evaluation.window={window}", "evaluation.report_every=500", "engine.kind=flink",
        "engine.parallelism=2", "engine.batch_size=200", f"engine.keying={keying}", *extra,
    ])
    reference, _ = evaluate_to_list(make_plans(cfg), open_source(cfg))
    records, rejected, texts = [], [], []
    deliver = flink_run.deliver
    monkeypatch.setattr(flink_run, "deliver", lambda tagged, *args, **kwargs: deliver(
        (texts.append(text) or text for text in tagged), *args, **kwargs))
    flink_run.run(cfg, records.append, rejected.append)
    assert comparable(records) == comparable(reference)
    # the records of an aggregator's step cross into the client together
    assert 0 < len(texts) < len(records)
    if "evaluation.verdicts.enabled=true" in extra:
        assert any(r["type"] == "verdict" for r in reference)
    if "evaluation.scores=[auc]" in extra:
        assert all("auc" in r["values"] for r in reference if r["type"] == "measures")
    if "evaluation.alarms.quantity=kappa" in extra:
        assert any(r["type"] == "drift" and r["quantity"] == "kappa" for r in reference)
        assert sum(r["type"] == "drift_evaluation" for r in reference) == 2 * 2 * 2
    assert sum(r["type"] == "measures" for r in records) == 2 * 6
    summaries = [r for r in records if r["type"] == "summary"]
    assert len(summaries) == 1 and summaries[0]["position"] == 3000 and not rejected


@pytest.mark.kafka
def test_kafka_in_kafka_out_equals_the_in_process_engine(elec_path, kafka_broker, kafka_jars, tmp_path):
    """Electricity produced into a topic, evaluated by the job, read back from the metrics topic;
    bad messages (one of 5 MB) go to the dead-letter topic and the job goes on."""
    from foldstream.connectors.kafka import create_topics, produce_jsonl, read_topic
    from foldstream.connectors.messages import MessageParser
    from foldstream.job.engines.flink import run as flink_run

    bs = kafka_broker.bootstrap
    create_topics(bs, ["fj-metrics", "fj-rejected"])
    create_topics(bs, ["fj-examples"], configs={"max.message.bytes": str(8 << 20)})
    lines = gzip.decompress(elec_path.read_bytes()).decode().splitlines()
    header = lines[0].split(",")
    rows = [dict(zip(header, line.split(","))) for line in lines[1:1501]]
    rows = [{k: (v if k == "target" else float(v)) for k, v in row.items()} for row in rows]
    produce_jsonl(bs, "fj-examples", "elec", rows[:700])
    # bad input: not JSON, no key, a row without its label, an unknown stream; the job goes on
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bs, max_request_size=8 << 20)
    producer.send("fj-examples", key=b"elec", value=b"{not json").get(timeout=10)
    # 5 MB without a label: five times the Kafka producer's default limit (max.request.size,
    # 1 MB), which the whole text in its dead letter would exceed and fail the job
    big = json.dumps({"pad": "x" * (5 << 20)}).encode()
    producer.send("fj-examples", key=b"elec", value=big).get(timeout=30)
    producer.send("fj-examples", key=None, value=json.dumps(rows[0]).encode()).get(timeout=10)
    producer.send("fj-examples", key=b"elec", value=b'{"feat_1": 0.5}').get(timeout=10)
    producer.send("fj-examples", key=b"other", value=json.dumps(rows[0]).encode()).get(timeout=10)
    producer.close()
    produce_jsonl(bs, "fj-examples", "elec", [rows[700:1100]])  # one message holding an array
    produce_jsonl(bs, "fj-examples", "elec", rows[1100:])

    cfg = load_config(None, [
        f"source={{kind: kafka, bootstrap_servers: '{bs}', topic: fj-examples, bounded: true, "
        "label: target, streams: [elec]}", f"sink={{kind: kafka, bootstrap_servers: '{bs}', topic: fj-metrics, "
        "dead_letter_topic: fj-rejected}", TWO_LEARNERS, "evaluation.folds=4",
        "evaluation.report_every=250", "engine.kind=flink", "engine.parallelism=2",
        f"engine.jars={json.dumps([str(j) for j in kafka_jars])}",
    ])
    flink_run.run(cfg, lambda r: None, lambda r: None)

    metrics = read_topic(bs, "fj-metrics", timeout_s=30)
    # the messages rejected for their key (none, or not in source.streams) belong to no
    # stream: dead letters, and no summary of their own
    assert {key for key, _ in metrics} == {"elec"}
    records = [json.loads(value) for _, value in metrics]
    dead = [json.loads(value) for _, value in read_topic(bs, "fj-rejected", timeout_s=30)]
    assert len(dead) == 5 and all(d["type"] == "rejected" and d["reason"] for d in dead)
    (large,) = [d for d in dead if d["record_bytes"] == len(big)]
    assert large["truncated"] and len(large["record"].encode()) <= cfg.sink.dead_letter_max_bytes
    assert big.decode().startswith(large["record"]) and large["record"]
    assert large["record_sha256"] == hashlib.sha256(big).hexdigest()
    assert sum("unknown stream 'other'" in d["reason"] for d in dead) == 1
    assert {d["location"].split("@")[0] for d in dead} == {"fj-examples/0"}

    parser = MessageParser(label="target")
    examples = [e for row in rows for e in parser(b"elec", json.dumps(row), "x")]
    assert all(isinstance(e, Example) for e in examples)
    reference, _ = evaluate_to_list(make_plans(cfg), examples)
    assert comparable(records) == comparable(reference)
    summaries = [r for r in records if r["type"] == "summary"]
    assert [s["stream"] for s in summaries] == ["elec"]  # exactly one summary per stream
    assert (summaries[0]["position"], summaries[0]["examples_rejected"]) == (1500, 3)


@pytest.mark.parametrize("unaligned", [True, False])
def test_a_failure_mid_stream_restarts_from_the_checkpoint_with_nothing_lost_or_duplicated(
        elec_path, tmp_path, unaligned, flink_runs):
    """A learner raises once after 1,500 training calls; Flink restarts the job from its last
    checkpoint (learners, windows and pending batches in keyed state; with unaligned checkpoints
    also the batches in flight) and the records it then delivers equal those of a run that never
    failed: none missing, none twice."""
    marker = tmp_path / "failed-once"
    failing = ("learners=[{name: ht, model: foldstream.job.engines.flink.faults.FailOnce, params: {model: "
               "{model: river.tree.HoeffdingTreeClassifier}, after: 1500, "
               f"marker: '{marker}'}}}}, {{name: nb, model: river.naive_bayes.GaussianNB}}]")
    cfg = load_config(None, [
        f"source.path={elec_path}", "source.limit=4000", failing, "evaluation.folds=4",
        "evaluation.report_every=250", "engine.kind=flink", "engine.parallelism=2",
        "engine.batch_size=100", "engine.checkpoint_interval_ms=300", "engine.restart_attempts=2",
        f"engine.unaligned_checkpoints={str(unaligned).lower()}",
    ])
    flink_runs.fail_once_and_compare(cfg, marker)


@pytest.mark.kafka
def test_an_unbounded_kafka_source_reports_live_and_flushes_partial_batches(kafka_broker, kafka_jars,
                                                                            tmp_path, flink_runs):
    """`foldstream run` on an unbounded topic: 600 examples in batches of 500 still give the
    report at position 600, flushed by the timer, while the job keeps running."""
    import time

    from foldstream.connectors.kafka import create_topics, produce_jsonl, read_topic

    bs = kafka_broker.bootstrap
    create_topics(bs, ["live-in", "live-out", "live-dead"])
    config = tmp_path / "live.yaml"
    config.write_text(f"""
source: {{kind: kafka, bootstrap_servers: "{bs}", topic: live-in, label: y}}
sink: {{kind: kafka, bootstrap_servers: "{bs}", topic: live-out, dead_letter_topic: live-dead}}
evaluation: {{folds: 3, report_every: 200}}
learners: [{{name: nb, model: river.naive_bayes.GaussianNB}}]
engine: {{kind: flink, parallelism: 2, batch_size: 500, jars: {json.dumps([str(j) for j in kafka_jars])}}}
""")
    log = tmp_path / "job.log"
    job = flink_runs.start_run(config, log)
    try:
        produce_jsonl(bs, "live-in", "s", [{"a": i % 7, "y": i % 2} for i in range(600)])
        positions: set[int] = set()
        deadline = time.time() + 120
        while 600 not in positions and time.time() < deadline and job.poll() is None:
            time.sleep(1)
            positions = {json.loads(v)["position"] for _, v in read_topic(bs, "live-out", timeout_s=5)
                         if json.loads(v)["type"] == "measures"}
        assert positions == {200, 400, 600}, (tmp_path / "job.log").read_text()[-3000:]
        assert job.poll() is None  # unbounded: still running, no summary
    finally:
        flink_runs.end_run(job)


@pytest.mark.parametrize("signum, code, said", [(2, 130, "stopped (Ctrl-C)"),
                                                (15, 143, "stopped (SIGTERM)")])
def test_ctrl_c_and_sigterm_stop_a_flink_run_in_one_line(elec_path, tmp_path, signum, code, said):
    """A signal while the job runs: a one-line message, no py4j traceback, 128 + the signal."""
    import subprocess
    import sys
    import time

    out = tmp_path / "metrics.jsonl"
    job = subprocess.Popen(
        [sys.executable, "-m", "foldstream.job.cli", "run", "--quiet", "--set",
         f"source.path={elec_path}", "--set", f"sink.path={out}", "--set", "engine.kind=flink",
         "--set", "engine.parallelism=1", "--set", "evaluation.report_every=100"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.time() + 120
        while not (out.exists() and out.stat().st_size) and job.poll() is None:
            assert time.time() < deadline
            time.sleep(0.2)
        assert job.poll() is None, job.communicate()  # still running: records are arriving
        job.send_signal(signum)
        stdout, stderr = job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, 9)
    assert job.returncode == code, stderr[-3000:]
    assert said in stderr and "Traceback" not in stderr + stdout, stderr[-3000:]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    last = records[-1]  # the summary of what was evaluated, marked interrupted
    assert (last["type"], last["stream"], last.get("interrupted")) == ("summary", "elec", True)
    position = max(r["position"] for r in records if r["type"] == "measures")
    assert last["position"] == position and last["measures"] == \
        [r for r in records if r["type"] == "measures" and r["position"] == position]


# ------------------------------------------------------------------ file and generator input
def hostile_csv_gz(path, rows: int) -> None:
    """A gzipped CSV with a byte order mark, and among its rows blank lines, a line that is
    not UTF-8, a short line, a text where a number belongs and a label first seen late."""
    lines = ["\ufeffa,b,target"]
    for i in range(rows):
        lines.append(f"{i % 7}.5,{(i * 13) % 11},{'xy'[i % 3 == 0] if i < rows // 2 else 'xyz'[i % 3]}")
        if i % 997 == 5:
            lines += ["", "1,2", "oops,3,x"]
    data = "\n".join(lines).encode() + b"\n"
    bad = b"\xff\xfe,1,x\n"
    half = data.index(b"\n", len(data) // 3) + 1
    path.write_bytes(gzip.compress(data[:half] + bad + data[half:]))


def _no_client_read(monkeypatch):
    """The client may read a file's header, but not its rows (nor run a generator): the job
    does."""
    from foldstream.job.engines.flink import run as flink_run

    def refuse(config):
        raise AssertionError("the client read the input")

    monkeypatch.setattr(flink_run, "open_source", refuse)


@pytest.mark.parametrize("source", ["file", "generator"])
def test_input_read_in_the_job_restarts_mid_stream_with_identical_records(
        source, tmp_path, monkeypatch):
    """A gzipped file with bad lines, read by Flink's file source, or a generator run in the
    job: a learner fails once mid-stream, the job restarts from its last checkpoint (the
    source's position and the fan-out's line count in it), and the records and rejected
    records equal the in-process engine's, byte for byte. The file's lines come in blocks of
    97 (its 6,000 lines in 62 blocks, the limit falling inside one), read by the block reader
    as a file of many lines would be (here, and in-process)."""
    from foldstream.connectors import files as connector_files
    from foldstream.job.engines.flink import files as flink_files
    from foldstream.job.engines.flink import run as flink_run

    marker, checkpoints = tmp_path / "failed-once", tmp_path / "checkpoints"
    if source == "file":
        path = tmp_path / "hostile.csv.gz"
        hostile_csv_gz(path, 6000)
        spec = [f"source.path={path}", "source.limit=5000"]
        monkeypatch.setattr(flink_files, "BLOCK_LINES", 97)
        monkeypatch.setattr(connector_files, "_BLOCK_BYTES", 0)
        monkeypatch.setattr(connector_files, "_BLOCK_LIMIT", 0)
    else:
        spec = ["source={kind: generator, model: river.datasets.synth.SEA, limit: 5000, seed: 7}"]
    cfg = load_config(None, [
        *spec, "learners=[{name: nb, model: foldstream.job.engines.flink.faults.FailOnce, "
        "params: {model: {model: river.naive_bayes.GaussianNB}, after: 1000, "
        f"marker: '{marker}', checkpoints: '{checkpoints}'}}}}]",
        "evaluation.folds=3", "evaluation.report_every=500", "engine.kind=flink",
        "engine.parallelism=2", "engine.batch_size=100", "engine.checkpoint_interval_ms=300",
        f"engine.checkpoint_dir={checkpoints}", "engine.restart_attempts=2",
    ])
    marker.touch()  # the reference run: the marker is taken, nothing fails
    reference, reference_rejected = evaluate_to_list(make_plans(cfg), open_source(cfg))
    marker.unlink()
    _no_client_read(monkeypatch)
    records, rejected = [], []
    flink_run.run(cfg, records.append, rejected.append)
    assert marker.exists()  # it did fail once
    assert comparable(records) == comparable(reference)
    assert sorted(map(dumps, rejected)) == sorted(map(dumps, reference_rejected))
    (summary,) = [r for r in records if r["type"] == "summary"]
    assert summary["position"] == 5000
    if source == "file":
        assert len(rejected) > 10 and any("not valid UTF-8" in r["reason"] for r in rejected)
        assert connector_files.line_reader(path, label="target", limit=5000).bulk


def test_records_joined_and_cut_into_texts_come_back_whole_and_in_order():
    """The aggregators' records reach the client as texts of at most 6,144 characters (a
    longer one waits 44 ms or more in Py4J): short records joined, long ones cut into pieces.
    With the texts of several aggregators interleaved as the collect sink may take them, the
    client gets every record back, whole, in its aggregator's order."""
    import random

    from foldstream.job.engines.flink.job import JOINED_MAX_CHARS, Rejoined, joined_records

    rng = random.Random(3)
    alphabet = 'ab"\\\t\u00e9\U0001f600 {}:,0123456789'
    for _ in range(30):
        sent: dict[str, list[str]] = {}
        queues: dict[str, list[str]] = {}
        for key in ("elec", "s\t2", "covtype"):
            for _ in range(rng.randint(0, 6)):  # an aggregator's inputs, a list of records each
                records = [json.dumps({"v": "".join(rng.choice(alphabet) for _ in range(
                    rng.choice([1, 50, 3000, 6140, 6200, 9000, 25_000])))})
                    for _ in range(rng.randint(0, 4))]
                sent.setdefault(key, []).extend(records)
                queues.setdefault(key, []).extend(joined_records(records, key=key))
        rejoined, got = Rejoined(), {}
        while any(queues.values()):
            key = rng.choice([k for k, q in queues.items() if q])
            text = queues[key].pop(0)
            assert len(text) <= JOINED_MAX_CHARS
            got.setdefault(key, []).extend(rejoined(text))  # the key of the text it completes
        assert got == {k: v for k, v in sent.items() if v}
        assert not rejoined.partial


def test_blocks_of_lines_split_at_newlines_are_the_lines_of_flinks_line_format(tmp_path):
    """foldstream's block format (LineBlocks.java) gives the lines Flink's text line format
    gives, every byte kept: line ends \\n, \\r\\n and a lone \\r, blank lines, bytes that
    are not UTF-8, a last line without its end; in blocks of at most the lines and about the
    characters asked for."""
    from pyflink.common import WatermarkStrategy
    from pyflink.datastream.connectors.file_system import FileSource, StreamFormat
    from pyflink.java_gateway import get_gateway

    from foldstream.job.engines.flink import env as flink_env
    from foldstream.job.engines.flink.files import FILE_CHARSET, line_blocks_jar

    path = tmp_path / "lines.txt"
    path.write_bytes(b"a,1\nb\r\n\n\xff\xfe c\rd\n" + b"e" * 30 + b"\nf\n\n\ng")
    env = flink_env.make_env(1, [line_blocks_jar()])
    formats = {"lines": StreamFormat.text_line_format(FILE_CHARSET)}
    for lines, chars in [(1, 100), (3, 100), (100, 8), (4096, 1 << 20)]:
        formats[f"{lines}/{chars}"] = StreamFormat(
            get_gateway().jvm.foldstream.flink.LineBlocks(lines, chars))
    read = {}
    for name, fmt in formats.items():
        source = FileSource.for_record_stream_format(fmt, str(path)).build()
        stream = env.from_source(source, WatermarkStrategy.no_watermarks(), name)
        with stream.set_parallelism(1).execute_and_collect() as records:
            read[name] = list(records)
    lines = read.pop("lines")
    assert len(lines) == 10 and lines[3] == "\xff\xfe c"
    for name, blocks in read.items():
        most, chars = map(int, name.split("/"))
        assert "\n".join(blocks).split("\n") == lines, name
        assert all(len(b.split("\n")) <= most and len(b) < chars + 31 for b in blocks), name
    assert len(read["3/100"]) == 4 and len(read["4096/1048576"]) == 1
    assert [len(b.split("\n")) for b in read["100/8"]] == [4, 2, 4]


def test_a_file_on_flink_without_javac_fails_saying_what_to_install(tmp_path):
    """The block format is compiled on first use: without ``javac`` (a JRE only), a Flink run
    of a file exits 2, naming the JDK to install, with no traceback."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    jre = tmp_path / "jre"
    jre.mkdir()
    (jre / "java").symlink_to(Path(shutil.which("java")).resolve())
    env = {"PATH": f"{jre}:{Path(sys.executable).parent}", "HOME": str(tmp_path),
           "FOLDSTREAM_CACHE": str(tmp_path / "c")}
    proc = subprocess.run([str(Path(sys.executable).parent / "foldstream"), "run", "--quiet",
                           "--set", "engine.kind=flink", "--set", f"sink.path={tmp_path}/o.jsonl"],
                          capture_output=True, text=True, env=env, timeout=120)
    text = " ".join(proc.stderr.split())
    assert proc.returncode == 2, text
    assert "no `javac` found" in text and "engine.kind: flink" in text, text
    assert "openjdk-17-jdk" in text and "Traceback" not in text, text


def test_a_file_source_is_flinks_file_source_and_nothing_is_shipped(tmp_path):
    """The job reads a file itself, at parallelism 1: its graph holds the file's name, not its
    rows (rows shipped from the client would bound the file's size: nothing past 256 MiB)."""
    from foldstream.job.engines.flink import env as flink_env
    from foldstream.job.engines.flink import job as flink_job
    from foldstream.job.engines.flink.files import configured_input

    path = tmp_path / "mid.csv.gz"
    hostile_csv_gz(path, 60_000)
    cfg = load_config(None, [f"source.path={path}", "engine.kind=flink",
                             "engine.parallelism=2"])
    env = flink_env.make_environment(cfg)
    flink_job.build(env, cfg, configured_input(env, cfg, tmp_path / "work"))
    plan = json.loads(env.get_execution_plan())
    sources = [n for n in plan["nodes"] if n["type"].startswith("Source")]
    assert [(n["type"], n["parallelism"]) for n in sources] == [("Source: file", 1)]
    assert not hasattr(flink_job, "MAX_SHIPPED_BYTES")


def test_one_stream_starts_one_python_worker_besides_the_learners(tmp_path):
    """With one stream known before the run, every Python operator but the learners runs in
    one subtask (each further subtask of them starts a Python worker with nothing to do)."""
    from foldstream.job.engines.flink import env as flink_env
    from foldstream.job.engines.flink import job as flink_job
    from foldstream.job.engines.flink.files import configured_input

    cfg = load_config(None, ["engine.kind=flink", "engine.parallelism=2"])
    env = flink_env.make_environment(cfg)
    records, dead_letters = flink_job.build(env, cfg, configured_input(env, cfg, tmp_path))
    records.print()
    dead_letters.print()
    nodes = json.loads(env.get_execution_plan())["nodes"]
    parallel = sorted({n["contents"] for n in nodes if n["parallelism"] > 1
                       and not n["type"].startswith("Sink")})
    assert parallel == ["learners+evaluator"]
    assert any(n["contents"] == "aggregator" for n in nodes)


def test_the_local_jvm_compiles_with_the_quick_compiler_unless_told(tmp_path):
    """PyFlink's JVM gets ``LOCAL_JVM_ARGS`` when ``JVM_ARGS`` is unset, and ``JVM_ARGS``
    when it is set (a fresh process: this one's JVM may be running already)."""
    import os
    import subprocess
    import sys

    from foldstream.job.engines.flink.jvm import LOCAL_JVM_ARGS

    probe = ("from foldstream.job.engines.flink.env import make_env; make_env(1); "
             "from pyflink.java_gateway import get_gateway; "
             "print(list(get_gateway().jvm.java.lang.management.ManagementFactory"
             ".getRuntimeMXBean().getInputArguments()))")
    env = {k: v for k, v in os.environ.items() if k != "JVM_ARGS"}
    for given, expected in ((None, LOCAL_JVM_ARGS), ("-Dfoldstream.probe=1", "-Dfoldstream.probe=1")):
        if given:
            env["JVM_ARGS"] = given
        out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                             text=True, timeout=120, cwd=tmp_path)
        assert out.returncode == 0, out.stderr[-2000:]
        assert expected in out.stdout
        assert (LOCAL_JVM_ARGS in out.stdout) == (given is None)


def test_a_run_starts_the_jvm_early_with_the_same_options(tmp_path):
    """``start_early`` starts PyFlink's JVM from a thread, with the options :func:`make_env`
    gives it, and the client's own ``get_gateway()`` then finds that JVM (a fresh process)."""
    import os
    import subprocess
    import sys

    from foldstream.job.engines.flink.jvm import LOCAL_JVM_ARGS

    probe = ("from foldstream.job.engines.flink.jvm import start_early; thread = start_early(); "
             "thread.join(); import pyflink.java_gateway as g; started = g._gateway; "
             "assert started is not None, 'no JVM after the thread'; "
             "from foldstream.job.engines.flink.env import make_env; make_env(1); "
             "assert g.get_gateway() is started, 'a second JVM'; "
             "print(list(started.jvm.java.lang.management.ManagementFactory"
             ".getRuntimeMXBean().getInputArguments()))")
    env = {k: v for k, v in os.environ.items() if k != "JVM_ARGS"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert LOCAL_JVM_ARGS in out.stdout


def test_a_run_keeps_the_jvms_classes_and_the_next_run_maps_them(elec_path, tmp_path):
    """The first ``foldstream run`` on Flink waits for its JVM to write the class-data archive
    and keeps it, checked whole; the next run starts with it and writes nothing new. Both
    write the same records, and none of Java's lines about the archive reach either output
    (standard output carries the records here)."""
    import subprocess
    import sys

    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "JVM_ARGS"}
    env["FOLDSTREAM_CACHE"] = str(cache)
    command = [sys.executable, "-m", "foldstream.job.cli", "run", "--no-progress",
               "--set", f"source.path={elec_path}", "--set", "source.limit=300",
               "--set", "sink={kind: stdout}", "--set", "engine.kind=flink",
               "--set", "engine.parallelism=1", "--set", "evaluation.report_every=100"]
    records, kept_at = [], None
    for run in (1, 2):
        out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300,
                             cwd=tmp_path)
        assert out.returncode == 0, out.stderr[-3000:]
        assert "cds" not in out.stdout + out.stderr, out.stdout[-3000:] + out.stderr[-3000:]
        kept = list(cache.glob("flink-jvm-*"))
        assert [p.suffix for p in kept] == [".jsa"], kept  # the archive, and no part left
        assert ("keeping the Flink JVM's classes" in out.stderr) == (run == 1), out.stderr
        if run == 1:
            kept_at = kept[0].stat().st_mtime_ns
        assert kept[0].stat().st_mtime_ns == kept_at
        records.append(comparable(json.loads(line) for line in out.stdout.splitlines()))
    assert records[0] == records[1] and len(records[0]) > 3


def test_a_learner_worker_gives_unpickled_examples_its_own_feature_names():
    """Two records unpickled apart hold equal feature names in distinct string objects; the
    learner worker's FoldFunction gives both batches' examples the same name objects (the
    in-process engine's examples share theirs), records unchanged."""
    import pickle

    from foldstream.job.config import load_config
    from foldstream.job.engines.flink import job as flink_job
    from foldstream.job.engines.flink.job import FoldFunction, RoutedBatches
    from foldstream.job.plans import make_plans
    from foldstream.operators.records.base import FoldBatch

    class State:  # the keyed ValueState of one key, as PyFlink gives it
        def __init__(self):
            self.held = None

        def value(self):
            return self.held

        def update(self, value):
            self.held = value

    plans = make_plans(load_config(None, ["evaluation.folds=2", "evaluation.mode=split"]))
    function = FoldFunction(plans, 1)
    function.state = State()
    batches = []
    try:
        for seq in range(2):
            batch = FoldBatch(stream="s", fold=0, seq=seq, start=2 * seq,
                              xs=[{"price": 1.0 + seq, "demand": 2.0},
                                  {"price": 0.5, "demand": 1.0}],
                              y=[0, 1], prev_y=[-1, 0], weights=[1, 1], classes=["up", "down"])
            routed = pickle.loads(pickle.dumps(RoutedBatches("r", [(None, batch)])))
            list(function.process_element(routed, None))
            batches.append(routed.items[0][1])
    finally:  # the worker's collector froze this process's objects: a worker's, not pytest's
        flink_job._WORKER_COLLECTOR.release()
    first, second = (list(b.xs[0]) for b in batches)
    assert first == second == ["price", "demand"]
    assert all(a is b for a, b in zip(first, second))
    assert batches[1].xs[0] == {"price": 2.0, "demand": 2.0}


PICKLED_LEARNER = '''\
import os
from river.naive_bayes import GaussianNB


class Noted(GaussianNB):
    """GaussianNB, noting in a file each time it is pickled."""

    def __reduce_ex__(self, protocol):
        with open(os.environ["PICKLED_NOTE"], "a") as note:
            note.write("pickled\\n")
        return super().__reduce_ex__(protocol)
'''


@pytest.mark.parametrize("checkpoints", [False, True], ids=["no-checkpoints", "checkpoints"])
def test_learners_are_pickled_into_flinks_state_only_when_a_checkpoint_can_read_them(
        tmp_path, checkpoints):
    """A local run without checkpoints keeps its learners in the worker: PyFlink would pickle
    them at every bundle's end, and a pickled object's attributes are slower to read for the
    rest of the run (Python 3.11 and 3.12). With checkpoints they go into Flink's state."""
    import subprocess
    import sys

    (tmp_path / "noted_learner.py").write_text(PICKLED_LEARNER, encoding="utf-8")
    note = tmp_path / "pickled.txt"
    extra = ["--set", "engine.checkpoint_interval_ms=200"] if checkpoints else []
    done = subprocess.run(
        [sys.executable, "-m", "foldstream.job.cli", "run", "--quiet",
         "--set", "source={kind: generator, model: river.datasets.synth.SEA, limit: 3000, "
                  "seed: 3}",
         "--set", "learners=[{name: nb, model: noted_learner.Noted}]",
         "--set", "evaluation.folds=2", "--set", "engine.kind=flink",
         "--set", "engine.batch_size=100", "--set", f"sink.path={tmp_path / 'm.jsonl'}",
         *extra],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "PICKLED_NOTE": str(note)})
    assert done.returncode == 0, done.stderr
    assert note.exists() == checkpoints


def test_the_fan_out_sends_a_batchs_float_features_as_one_array_its_folds_share():
    """Dicts of floats with the same names in order cross to the learners as one array (the
    dicts made from it again equal them); any other batch crosses as it is."""
    from types import SimpleNamespace

    from foldstream.job.engines.flink.job import FanOutFunction
    from foldstream.operators.records.base import FoldBatch
    from foldstream.operators.records.features import FeatureRows

    floats = [{"a": 1.0, "b": 2.0}, {"a": 3.0, "b": -0.0}]
    ints = [{"a": 1, "b": 2.0}, {"a": 3.0, "b": 4.0}]

    def batch(fold, xs):
        return FoldBatch(stream="s", fold=fold, seq=0, start=0, xs=xs, y=[0, 1], prev_y=[-1, 0],
                         weights=[1, 1], classes=["u", "v"])

    head = SimpleNamespace(targets={0: [("r0", None)], 1: [("r1", None)], 2: [("r1", None)]},
                           position=0)
    rows = list(FanOutFunction._fan_out(head, [batch(0, floats), batch(1, floats),
                                               batch(2, ints)]))
    sent = [fold_batch.xs for row in rows for _, fold_batch in row[1].items]
    assert isinstance(sent[0], FeatureRows) and sent[0] is sent[1]  # made once for both folds
    assert sent[0] == floats and [list(x) for x in sent[0]] == [["a", "b"], ["a", "b"]]
    assert sent[2] is ints

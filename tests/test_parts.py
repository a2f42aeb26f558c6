"""Records larger than a Kafka message (connectors/parts.py): written in parts, read back whole.

The producer refuses a message over its ``max.request.size``; a ``measures`` record of many
classes times folds can exceed it, and a refused record would fail the Flink job, losing the
last reports and the summary. The fast tests hold the split and put-together rule (:mod:`foldstream.connectors.parts`)
and the reader that applies it; the slow one runs a Flink job with a producer limit below its
records' size against the real test broker and reads the topic back.
"""

from __future__ import annotations

import json
import random

import pytest

from foldstream.connectors.parts import Assembler, MESSAGE_OVERHEAD, fits, kafka_messages, split
from foldstream.job.tools.records import RecordReader, read_records
from foldstream.job.tools.schema import validate_record
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.records.base import dumps


def _record(stream: str = "s", position: int = 100, size: int = 5000, seed: int = 0) -> str:
    rng = random.Random(seed)
    alphabet = 'ab"\\é€\U0001F600\n\t<>/'  # escapes of every kind, characters of 1 to 4 bytes
    note = "".join(rng.choice(alphabet) for _ in range(size))
    return json.dumps({"schema": 1, "type": "summary", "stream": stream, "position": position,
                       "examples_read": position, "examples_rejected": 0, "wall_time_s": 1.0,
                       "examples_per_second": None, "measures": [], "note": note},
                      separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("limit", [1400, 2000, 5000])
@pytest.mark.parametrize("seed", range(3))
def test_a_large_record_is_cut_into_messages_within_the_limit_and_put_together_exactly(limit, seed):
    text = _record(size=3000 + 1000 * seed, seed=seed)
    messages = kafka_messages(text, limit)
    assert not fits("s", text, limit) and len(messages) > 1
    assert all(key == "s" and len((key + value).encode()) + MESSAGE_OVERHEAD <= limit
               for key, value in messages)
    assembler = Assembler()
    got = [assembler.take(json.loads(value), "t@0") for _, value in messages]
    assert got[:-1] == [None] * (len(messages) - 1) and got[-1] == text
    for _, value in messages:
        validate_record(json.loads(value))  # every part is a record of the schema


def test_a_record_that_fits_is_its_own_bytes():
    text = _record(size=100)
    assert kafka_messages(text, 1 << 20) == [("s", text)]


def test_a_limit_with_no_room_for_data_is_refused():
    with pytest.raises(ValueError, match="no room"):
        split(_record(), json.loads(_record()), "s" * 2000, 2000)


def _parts(text: str, limit: int = 1500) -> list[str]:
    return [value for _, value in kafka_messages(text, limit)]


def test_the_reader_puts_parts_together_between_other_records_and_streams(tmp_path):
    a, b = _record("a", 1, 4000, 1), _record("b", 2, 3000, 2)
    small = '{"schema":1,"type":"alarm","stream":"a","position":3,"learner":"nb","fold":0,' \
            '"detector":"adwin","quantity":"loss"}'
    pa, pb = _parts(a), _parts(b)
    lines = [pa[0], pb[0], small, *pb[1:], pa[1], pa[1], *pa[2:]]  # interleaved, one duplicate
    path = tmp_path / "raw.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    skipped: list[str] = []
    assert read_records(path, on_skip=skipped.append) == [json.loads(small), json.loads(b),
                                                          json.loads(a)]
    assert skipped == []


def test_a_record_whose_parts_do_not_all_come_is_reported_not_dropped_silently(tmp_path):
    a = _record("a", 7, 4000, 3)
    parts = _parts(a)
    path = tmp_path / "raw.jsonl"
    path.write_text("\n".join(parts[:-1]) + "\n", encoding="utf-8")
    reader = RecordReader(path)
    skipped: list[str] = []
    reader.on_skip = skipped.append
    assert list(reader) == [] and reader.skipped == 1
    assert skipped == [f"left out: summary record (stream 'a', position 7, sha256 "
                       f"{json.loads(parts[0])['sha256'][:12]}...) in {len(parts)} parts: "
                       f"{len(parts) - 1} arrived, from {path}:1"]


def test_a_damaged_part_is_skipped_with_its_reason(tmp_path):
    parts = [json.loads(p) for p in _parts(_record("a", 7, 4000, 4))]
    parts[1]["data"] = parts[1]["data"][::-1]
    path = tmp_path / "raw.jsonl"
    path.write_text("\n".join(json.dumps(p) for p in parts) + "\n", encoding="utf-8")
    skipped: list[str] = []
    assert read_records(path, on_skip=skipped.append) == []
    assert len(skipped) == 1 and "does not have its sha256" in skipped[0]


def test_a_following_reader_gives_the_record_when_its_last_part_arrives(tmp_path):
    text = _record("a", 1, 4000, 5)
    parts = _parts(text)
    path = tmp_path / "raw.jsonl"
    path.write_text("\n".join(parts[:-1]) + "\n", encoding="utf-8")
    batches = RecordReader(path, follow=True, poll_interval=0.01).batches()
    assert next(batches) == []
    with path.open("a", encoding="utf-8") as handle:
        handle.write(parts[-1] + "\n")
    got = []
    while not got:
        got = next(batches)
    assert got == [json.loads(text)]
    batches.close()


@pytest.mark.parametrize("name", ["raw.jsonl", "raw.jsonl.gz"])
def test_results_from_a_saved_topic_put_parts_together_and_count_an_incomplete_one(tmp_path,
                                                                                   name):
    import gzip

    from foldstream.job.api import Results

    text = dumps({"schema": 1, "type": "alarm", "stream": "a", "position": 5,
                  "learner": "é\"" * 2000, "fold": 0, "detector": "adwin", "quantity": "loss"})
    parts = _parts(text)  # a record of the schema (Results validates each)
    path = tmp_path / name
    content = "\n".join(parts + parts[:1]) + "\n"  # the last record's parts end too soon
    if name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(content)
    else:
        path.write_text(content, encoding="utf-8")
    results = Results.from_jsonl(path)
    assert results.skipped == 1 and len(results.records) == 1
    assert dumps(results.records[0]) == dumps(json.loads(text))


# ------------------------------------------------------------------- Flink + Kafka, end to end
#: 100 classes times 120 folds: ``measures`` and ``summary`` records of about 77 kB, over a
#: producer limit of 70,000 bytes (the least the dead-letter rule of the configuration allows).
BIG = """
source: {kind: generator, model: river.datasets.synth.RandomRBF, limit: 300, stream: rbf,
         params: {n_classes: 100, n_features: 5, seed_model: 1, seed_sample: 1}}
evaluation: {mode: bootstrap, folds: 120, report_every: 300}
learners:
  - {name: nb, model: river.naive_bayes.GaussianNB}
"""
LIMIT = 70000


def _steady(text: str) -> str:
    """A record's text without the summary's timings, which differ from run to run."""
    record = json.loads(text)
    return dumps({k: v for k, v in record.items() if k not in SummaryRecord.TIMING_FIELDS})


@pytest.mark.kafka
@pytest.mark.flink
def test_a_flink_run_with_records_over_the_message_limit_ends_and_reads_back_whole(
        kafka_broker, kafka_jars, tmp_path):
    from foldstream.connectors.kafka import create_topics, read_topic
    from foldstream.job.cli import main

    bs = kafka_broker.bootstrap
    create_topics(bs, ["size-metrics", "size-rejected"])
    jars = json.dumps([str(j) for j in kafka_jars])
    expected = tmp_path / "metrics.jsonl"
    in_file = tmp_path / "file.yaml"
    in_file.write_text(BIG + f"sink: {{kind: file, path: {json.dumps(str(expected))}}}\n")
    assert main(["run", str(in_file), "--quiet"]) == 0
    lines = expected.read_text(encoding="utf-8").splitlines()
    assert sum(len(line.encode()) > LIMIT for line in lines) >= 2  # the test means something

    on_kafka = tmp_path / "kafka.yaml"
    on_kafka.write_text(BIG + f"""
sink: {{kind: kafka, bootstrap_servers: "{bs}", topic: size-metrics,
        dead_letter_topic: size-rejected, dead_letter_max_bytes: 100,
        properties: {{max.request.size: {LIMIT}}}}}
engine: {{kind: flink, parallelism: 2, jars: {jars}}}
""")
    assert main(["run", str(on_kafka), "--quiet"]) == 0

    raw = read_topic(bs, "size-metrics", timeout_s=60)
    assert all(len(k.encode()) + len(v.encode()) + MESSAGE_OVERHEAD <= LIMIT for k, v in raw)
    assert sum(json.loads(v)["type"] == "part" for _, v in raw) >= 4
    # Put together, the topic holds the file sink's records byte for byte ...
    assembler, texts = Assembler(), []
    for _, value in raw:
        record = json.loads(value)
        whole = assembler.take(record, "") if Assembler.is_part(record) else value
        if whole is not None:
            texts.append(whole)
    assert sorted(map(_steady, texts)) == sorted(map(_steady, lines))
    # ... and every reader of records (they all read through RecordReader) sees them whole.
    skipped: list[str] = []
    read = read_records(f"kafka://{bs}/size-metrics", on_skip=skipped.append)
    assert sorted(_steady(dumps(r)) for r in read) == sorted(map(_steady, lines))
    assert skipped == []

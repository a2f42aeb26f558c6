"""End-to-end smoke test of the Kafka path: Kafka -> KafkaSource -> Python map -> KafkaSink.

Runs a real Flink mini-cluster at parallelism 2 with Python workers in separate processes, and
a real Apache Kafka broker (tests/broker.py). The connector jars are fetched on first use
(``python -m foldstream.job.engines.flink.deps``).
"""

from __future__ import annotations

import json
import time
from collections import Counter

import pytest

pytestmark = [pytest.mark.kafka, pytest.mark.flink]



N = 1000
STREAMS = ("elec", "sea")  # two streams, one partition each


@pytest.fixture(scope="module")
def jars(kafka_jars):
    return kafka_jars


@pytest.fixture(scope="module")
def broker(kafka_broker):
    return kafka_broker


def test_kafka_roundtrip_keyed_parallelism_2(broker, jars):
    from foldstream.connectors.kafka import create_topics, produce_jsonl, read_topic
    from foldstream.job.engines.flink.kafka import KEYED_TYPE, kafka_sink, kafka_source
    from foldstream.job.engines.flink.env import make_env
    from pyflink.common import Row

    bs = broker.bootstrap
    create_topics(bs, ["smoke-in", "smoke-out"], partitions=2)
    # One stream per partition.
    per_stream = N // len(STREAMS)
    for part, stream in enumerate(STREAMS):
        rows = [{"i": i, "x": i * 0.5, "target": i % 3} for i in range(per_stream)]
        assert produce_jsonl(bs, "smoke-in", stream, rows, partition=part) == per_stream

    t0 = time.time()
    env = make_env(2, jars)
    ds = kafka_source(env, bs, "smoke-in", group_id="smoke", start="earliest", bounded=True,
                      stop_offsets={0: per_stream, 1: per_stream})

    # Local function: cloudpickle ships it by value to the Python worker processes.
    def transform(r):
        d = json.loads(r.value)
        d["stream"] = r.key
        d["source"] = f"{r.topic}@{r.partition}:{r.offset}"
        d["t_processed"] = time.time()
        return Row(key=r.key, value=json.dumps(d))

    out = ds.map(transform, output_type=KEYED_TYPE)
    kafka_sink(env, out, bs, "smoke-out")
    t_submit = time.time()
    env.execute("smoke: kafka -> map -> kafka")
    t_done = time.time()

    got = read_topic(bs, "smoke-out", timeout_s=30)
    assert len(got) == N
    counts = Counter(k for k, _ in got)
    assert counts == {s: per_stream for s in STREAMS}
    values = [json.loads(v) for _, v in got]
    seen = set()
    for (key, _), d in zip(got, values):
        assert d["stream"] == key  # the message key reached Python and the sink
        assert d["target"] == d["i"] % 3 and d["x"] == d["i"] * 0.5
        part = STREAMS.index(key)
        assert d["source"] == f"smoke-in@{part}:{d['i']}"
        seen.add((key, d["i"]))
    assert len(seen) == N  # no duplicates, none missing

    first = min(d["t_processed"] for d in values)
    last = max(d["t_processed"] for d in values)
    print(f"\n[timing] build {t_submit - t0:.2f}s, submit->first record {first - t_submit:.2f}s, "
          f"first->last record {last - first:.2f}s, execute total {t_done - t_submit:.2f}s")


def test_value_only_datastream_api(broker, jars, kafka_values):
    """The plain DataStream KafkaSource/KafkaSink (value only; the key is lost)."""
    from foldstream.connectors.kafka import create_topics, produce_jsonl, read_topic
    from foldstream.job.engines.flink.env import make_env
    from pyflink.common import Types, WatermarkStrategy

    bs = broker.bootstrap
    create_topics(bs, ["vo-in", "vo-out"], partitions=1)
    produce_jsonl(bs, "vo-in", "s", [{"i": i} for i in range(100)])
    env = make_env(2, jars)
    src = kafka_values.kafka_value_source(bs, "vo-in", group_id="vo", bounded=True, stop_offsets={0: 100})
    ds = env.from_source(src, WatermarkStrategy.no_watermarks(), "kafka")

    def add(s):
        d = json.loads(s)
        d["y"] = d["i"] * 2
        return json.dumps(d)

    ds.map(add, output_type=Types.STRING()).sink_to(kafka_values.kafka_value_sink(bs, "vo-out"))
    env.execute("smoke: value only")
    got = read_topic(bs, "vo-out", timeout_s=30)
    assert sorted(json.loads(v)["y"] for _, v in got) == [2 * i for i in range(100)]
    assert {k for k, _ in got} == {None}


def test_broker_down_fails_fast(jars, free_port):
    from foldstream.connectors.kafka import KafkaUnavailable, check_bootstrap
    from foldstream.job.engines.flink.kafka import KEYED_TYPE, kafka_sink, kafka_source
    from foldstream.job.engines.flink.env import make_env

    dead = f"127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    with pytest.raises(KafkaUnavailable, match=dead):
        check_bootstrap(dead, timeout_s=3)
    assert time.monotonic() - t0 < 8

    env = make_env(2, jars)
    t0 = time.monotonic()
    with pytest.raises(KafkaUnavailable, match=dead):
        kafka_source(env, dead, "examples", start="earliest", bounded=True,
                     preflight_timeout_s=3)
    assert time.monotonic() - t0 < 8

    ds = env.from_collection([("s", "{}")], type_info=KEYED_TYPE)
    t0 = time.monotonic()
    with pytest.raises(KafkaUnavailable, match=dead):
        kafka_sink(env, ds, dead, "metrics", preflight_timeout_s=3)
    assert time.monotonic() - t0 < 8


def test_missing_topic_fails_fast(broker, jars):
    from foldstream.connectors.kafka import KafkaUnavailable
    from foldstream.job.engines.flink.kafka import kafka_source
    from foldstream.job.engines.flink.env import make_env

    env = make_env(1, jars)
    with pytest.raises(KafkaUnavailable, match="no-such-topic"):
        kafka_source(env, broker.bootstrap, "no-such-topic", preflight_timeout_s=3)


def test_exactly_once_sink_commits_at_the_end_of_a_bounded_input(broker, jars):
    """KafkaSink exactly-once: transactions committed at checkpoints, the final one at the end
    of a bounded input (a failure and its abort: tests/test_exactly_once.py)."""
    from foldstream.connectors.kafka import create_topics, end_offsets, produce_jsonl, read_topic
    from foldstream.job.engines.flink.kafka import KEYED_TYPE, kafka_sink, kafka_source
    from foldstream.job.engines.flink.env import make_env
    from pyflink.common import Row

    bs = broker.bootstrap
    create_topics(bs, ["eos-in", "eos-out"], partitions=1)
    produce_jsonl(bs, "eos-in", "elec", [{"i": i} for i in range(300)])
    stop = end_offsets(bs, "eos-in")
    assert stop == {0: 300}
    env = make_env(2, jars, {"execution.checkpointing.interval": "500 ms"})
    ds = kafka_source(env, bs, "eos-in", bounded=True, stop_offsets=stop)

    def ident(r):
        return Row(key=r.key, value=r.value)

    kafka_sink(env, ds.map(ident, output_type=KEYED_TYPE), bs, "eos-out",
               delivery_guarantee="exactly-once", transactional_id_prefix="foldstream-smoke")
    env.execute("smoke: exactly-once")
    got = read_topic(bs, "eos-out", timeout_s=30, isolation_level="read_committed")
    assert sorted(json.loads(v)["i"] for _, v in got) == list(range(300))
    assert {k for k, _ in got} == {"elec"}


def test_exactly_once_needs_checkpointing_and_prefix(jars):
    from foldstream.job.engines.flink.kafka import KEYED_TYPE, kafka_sink
    from foldstream.job.engines.flink.env import make_env

    env = make_env(1, jars)
    ds = env.from_collection([("s", "{}")], type_info=KEYED_TYPE)
    with pytest.raises(ValueError, match="transactional_id_prefix"):
        kafka_sink(env, ds, "127.0.0.1:1", "t", delivery_guarantee="exactly-once",
                   preflight_timeout_s=None)
    with pytest.raises(ValueError, match="checkpointing"):
        kafka_sink(env, ds, "127.0.0.1:1", "t", delivery_guarantee="exactly-once",
                   transactional_id_prefix="p", preflight_timeout_s=None)


def test_start_committed_resumes_after_committed_offsets(broker, jars):
    """start: committed resumes where a previous run's checkpoints committed the group offsets."""
    from foldstream.connectors.kafka import create_topics, produce_jsonl, read_topic
    from foldstream.job.engines.flink.kafka import KEYED_TYPE, kafka_sink, kafka_source
    from foldstream.job.engines.flink.env import make_env
    from pyflink.common import Row

    bs = broker.bootstrap
    create_topics(bs, ["gc-in", "gc-out"], partitions=1)
    produce_jsonl(bs, "gc-in", "sea", [{"i": i} for i in range(200)])

    def ident(r):
        return Row(key=r.key, value=r.value)

    for stop in (120, 200):
        env = make_env(1, jars, {"execution.checkpointing.interval": "300 ms"})
        ds = kafka_source(env, bs, "gc-in", group_id="gc", start="committed", bounded=True,
                          stop_offsets={0: stop})
        kafka_sink(env, ds.map(ident, output_type=KEYED_TYPE), bs, "gc-out")
        env.execute(f"smoke: committed, stop at {stop}")
    got = read_topic(bs, "gc-out", timeout_s=30)
    assert [json.loads(v)["i"] for _, v in got] == list(range(200))  # no gap, no repeat

"""Delayed labels through Kafka (docs/method.md §13) on a real Apache Kafka broker.

``foldstream produce`` of a delayed stream, and a delayed Flink job reading features on one topic
and labels on a second one, compared with the in-process run of the same events.

Why the events are split between the topics as they are. With two topics the job's
interleaving of them is the order in which its two sources happen to read, which no test
controls: a label read before its example is a label for an unknown key. So the *order that
matters* is on the input topic, one partition, read in order: the arrivals and their labels,
partly out of order, a duplicate label, and examples whose labels never come. The labels topic
gets what cannot depend on the interleaving: labels for keys that never arrive (rejected as
unknown whenever they are read, and a rejected label changes no state). The metrics topic must
then equal, byte for byte (timings aside), the in-process run of the same events, parsed by the
same parsers; the bad labels are dead-lettered with their reasons; and the examples still
waiting at the end of the bounded run are counted as pending in the final report.

Real labels on the labels topic, arriving later and out of order, are tested live: a job fed
in two phases (every arrival, plus enough labels on the input topic for one report that shows
they were read; only then the labels topic), whose reports equal the in-process run's.
(In-process, the events are the parsed messages rather than a JSON Lines file: the labels
topic's rows are parsed by its own parser, which keeps only the id and the label.)
"""

from __future__ import annotations

import json

import pytest

from foldstream.job import cli
from foldstream.job.config import load_config
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.records.base import dumps

TIMING = SummaryRecord.TIMING_FIELDS  # the one list of the fields that vary from run to run
N = 150            # arrivals
NEVER = 17         # the examples i with i % NEVER == 0 never get a label
DUPLICATE = 3      # the example whose label comes twice (the second time on the input topic)
UNKNOWN = (10_001, "ghost")  # keys that never arrive: their labels, on the labels topic


def _delay(i: int) -> int:
    """The delay, in arrivals, of example i's label: varying, so labels come out of order."""
    return 4 + (i * 7) % 11


def _label(i: int) -> int:
    return (i // 3 + i % 2) % 2


def input_events() -> list[dict]:
    """The input topic, in order: arrivals ``{id, a, b}`` and label rows ``{id, y}``."""
    due: dict[int, list[int]] = {}
    events: list[dict] = []
    for i in range(1, N + 1):
        events.append({"id": i, "a": (i * 7) % 13 * 0.5, "b": float(i % 5)})
        if i % NEVER:
            due.setdefault(i + _delay(i), []).append(i)
        for j in sorted(due.pop(i, []), reverse=True):
            events.append({"id": j, "y": _label(j)})
            if j == DUPLICATE:
                events.append({"id": j, "y": _label(j)})  # a duplicate, right away
    for when in sorted(due):  # the labels due after the last arrival, in order
        for j in sorted(due[when]):
            events.append({"id": j, "y": _label(j)})
    return events


def label_events() -> list[dict]:
    return [{"id": key, "y": 1} for key in UNKNOWN]


def in_process(config, input_rows: list[dict], input_topic: str, label_rows: list[dict],
               labels_topic: str) -> tuple[list[dict], list[dict]]:
    """The in-process run of the messages of the input topic, then those of the labels topic
    (stream ``s``), parsed by the parsers the job uses: ``(records, rejected records)``."""
    from foldstream.connectors.messages import LabelParser, MessageParser
    from foldstream.job.engines.inprocess import evaluate_to_list
    from foldstream.job.plans import make_plans

    parse = MessageParser(label="y", id_field="id", labels_later=True)
    parse_label = LabelParser(label="y", id_field="id")
    items = [item for i, row in enumerate(input_rows)
             for item in parse(b"s", json.dumps(row), f"{input_topic}/0@{i}")]
    items += [item for i, row in enumerate(label_rows)
              for item in parse_label(b"s", json.dumps(row), f"{labels_topic}/0@{i}")]
    return evaluate_to_list(make_plans(config), items)


def _stripped(record: dict) -> str:
    return dumps({k: v for k, v in record.items() if k not in TIMING})


def test_the_events_are_out_of_order_and_hold_every_case():
    events = input_events()
    labels = [e["id"] for e in events if "y" in e]
    arrivals = [e["id"] for e in events if "y" not in e]
    assert arrivals == list(range(1, N + 1))
    assert labels != sorted(labels)  # partly out of order
    assert labels.count(DUPLICATE) == 2
    assert not {i for i in arrivals if i % NEVER == 0} & set(labels)  # never labelled


@pytest.fixture(scope="module")
def broker(kafka_broker):
    return kafka_broker


@pytest.mark.kafka
@pytest.mark.flink  # slow (tests/conftest.py)
def test_delayed_labels_from_two_topics_equal_the_in_process_run(broker, kafka_jars, tmp_path):
    from foldstream.connectors.kafka import create_topics, produce_jsonl, read_topic

    bs = broker.bootstrap
    topics = {"input": "dk-in", "labels": "dk-labels", "metrics": "dk-out",
              "dead": "dk-dead"}
    create_topics(bs, topics.values())
    produce_jsonl(bs, topics["input"], "s", input_events())
    produce_jsonl(bs, topics["labels"], "s", label_events())
    jars = json.dumps([str(j) for j in kafka_jars])
    overrides = [
        f"source={{kind: kafka, bootstrap_servers: '{bs}', topic: {topics['input']}, "
        f"labels_topic: {topics['labels']}, label: y, id_field: id, bounded: true}}",
        f"sink={{kind: kafka, bootstrap_servers: '{bs}', topic: {topics['metrics']}, "
        f"dead_letter_topic: {topics['dead']}}}",
        "evaluation.delay={max_pending: 1000}", "evaluation.folds=3",
        "evaluation.report_every=25", "evaluation.window={kind: cumulative}",
        "learners=[{name: nb, model: river.naive_bayes.GaussianNB}]",
        f"engine={{kind: flink, parallelism: 2, jars: {jars}}}",
    ]
    args = ["run", "--quiet"]
    for item in overrides:
        args += ["--set", item]
    assert cli.main(args) == 0

    records = [json.loads(v) for _, v in read_topic(bs, topics["metrics"], timeout_s=30)]
    dead = [json.loads(v) for _, v in read_topic(bs, topics["dead"], timeout_s=30)]

    # The in-process run of the same events: the input topic's messages in order, then the
    # labels topic's (where they come does not matter: a label for an unknown key changes
    # nothing but the count of rejected records).
    reference, rejected = in_process(load_config(None, overrides), input_events(),
                                     topics["input"], label_events(), topics["labels"])

    assert [_stripped(r) for r in records] == [_stripped(r) for r in reference]
    reasons = sorted(r["reason"] for r in dead)
    assert reasons == sorted(r["reason"] for r in rejected)
    assert len(reasons) == 1 + len(UNKNOWN)
    assert sum("already labelled" in r for r in reasons) == 1
    assert sum("unknown" in r for r in reasons) == len(UNKNOWN)

    # Nothing pending is lost at the end of the bounded run: the final report counts the
    # examples whose labels never came as pending, and every arrival is accounted for.
    final = [r for r in records if r["type"] == "measures" and r["position"] == N]
    assert final
    never = N // NEVER
    for r in final:
        assert (r["labelled"], r["pending"], r["expired"]) == (N - never, never, 0)
    summary = records[-1]
    assert summary["type"] == "summary" and summary["position"] == N
    assert summary["examples_rejected"] == 1 + len(UNKNOWN)


@pytest.mark.kafka
def test_the_start_check_names_a_missing_labels_topic(broker):
    from foldstream.connectors.kafka import KafkaUnavailable, create_topics
    from foldstream.job.engines.flink.run import check_kafka

    bs = broker.bootstrap
    create_topics(bs, ["mk-in"])
    config = load_config(None, [
        f"source={{kind: kafka, bootstrap_servers: '{bs}', topic: mk-in, "
        f"labels_topic: mk-labels, label: y, id_field: id}}",
        "evaluation.delay={}", "engine.kind=flink"])
    with pytest.raises(KafkaUnavailable, match="mk-labels"):
        check_kafka(config)
    create_topics(bs, ["mk-labels"])
    check_kafka(config)


# ----------------------------------------------------------- labels on their own topic, live
LIVE_N, LIVE_EVERY = 100, 20  # arrivals; report_every (labelled examples)


def live_phases() -> tuple[list[dict], list[dict]]:
    """Phase 1, the input topic: every arrival, then the labels of the first ``LIVE_EVERY``
    examples (their report, at position ``LIVE_N``, shows that the job has read every arrival).
    Phase 2, the labels topic: the other labels, out of order (in reversed blocks of 7), one
    for a key that never arrives, one duplicate; the examples i with i % NEVER == 0 never get
    theirs."""
    arrivals = [{"id": i, "a": (i * 7) % 13 * 0.5, "b": float(i % 5)}
                for i in range(1, LIVE_N + 1)]
    first = [{"id": i, "y": _label(i)} for i in range(1, LIVE_EVERY + 1)]
    rest = [i for i in range(LIVE_EVERY + 1, LIVE_N + 1) if i % NEVER]
    order = [i for start in range(0, len(rest), 7) for i in reversed(rest[start:start + 7])]
    later = [{"id": i, "y": _label(i)} for i in order]
    later.insert(10, {"id": UNKNOWN[0], "y": 1})
    later.insert(20, {"id": order[3], "y": _label(order[3])})  # a duplicate
    return arrivals + first, later


@pytest.mark.kafka
@pytest.mark.flink  # slow (tests/conftest.py)
def test_labels_on_their_own_topic_arriving_later_live(broker, kafka_jars, tmp_path, flink_runs):
    """A live (unbounded) run fed in two phases, so that the order in which the job reads the
    two topics is known: the labels are produced on their topic only once the job has read
    every arrival. Its reports equal those of the in-process run of the same events."""
    import time

    from foldstream.connectors.kafka import create_topics, produce_jsonl, read_topic

    bs = broker.bootstrap
    create_topics(bs, ["lv-in", "lv-labels", "lv-out", "lv-dead"])
    config_path = tmp_path / "live.yaml"
    config_path.write_text(f"""
source: {{kind: kafka, bootstrap_servers: "{bs}", topic: lv-in, labels_topic: lv-labels,
          label: y, id_field: id}}
sink: {{kind: kafka, bootstrap_servers: "{bs}", topic: lv-out, dead_letter_topic: lv-dead}}
evaluation: {{folds: 3, report_every: {LIVE_EVERY}, window: {{kind: cumulative}},
              delay: {{max_pending: 1000}}}}
learners: [{{name: nb, model: river.naive_bayes.GaussianNB}}]
engine: {{kind: flink, parallelism: 1, learner_slots: shared, batch_size: 50, flush_ms: 200,
          jars: {json.dumps([str(j) for j in kafka_jars])}}}
""")
    log = tmp_path / "job.log"

    def metrics() -> list[dict]:
        return [json.loads(v) for _, v in read_topic(bs, "lv-out", timeout_s=10)]

    def labelled() -> set[int]:
        return {r["labelled"] for r in metrics() if r["type"] == "measures"}

    phase1, phase2 = live_phases()
    produce_jsonl(bs, "lv-in", "s", phase1)
    job = flink_runs.start_run(config_path, log)
    try:
        flink_runs.wait_for(lambda: LIVE_EVERY in labelled(), 180, job, log)
        produce_jsonl(bs, "lv-labels", "s", phase2)
        last = (LIVE_N - LIVE_N // NEVER) // LIVE_EVERY * LIVE_EVERY
        flink_runs.wait_for(lambda: last in labelled()
                            and len(read_topic(bs, "lv-dead", timeout_s=10)) == 2, 120, job, log)
        time.sleep(2)  # the other records of that report
    finally:
        flink_runs.end_run(job)
    records = [r for r in metrics() if r["type"] != "summary"]
    dead = [json.loads(v) for _, v in read_topic(bs, "lv-dead", timeout_s=10)]

    reference, rejected = in_process(load_config(str(config_path), []), phase1, "lv-in",
                                     phase2, "lv-labels")
    # The live run has no end: its reports are the in-process run's but the final one.
    assert [dumps(r) for r in records] == [dumps(r) for r in reference[:len(records)]]
    assert {r["labelled"] for r in records if r["type"] == "measures"} == \
        set(range(LIVE_EVERY, last + 1, LIVE_EVERY))
    assert all(r["position"] == LIVE_N for r in records if r["type"] == "measures")
    assert sorted(r["reason"] for r in dead) == sorted(r["reason"] for r in rejected)
    assert sorted("unknown" in r["reason"] for r in dead) == [False, True]
    assert any("already labelled" in r["reason"] for r in dead)
    assert "Traceback" not in log.read_text()


# ------------------------------------------------------------------------- foldstream produce
CSV = "id,a,b,label\n" + "".join(f"{100 + i},{i * 0.5},{i % 3},{'up' if i % 4 else 'down'}\n"
                                  for i in range(12))


@pytest.fixture
def csv_source(tmp_path) -> list[str]:
    path = tmp_path / "rows.csv"
    path.write_text(CSV)
    return ["--set", f"source.path={path}", "--set", "source.label=label",
            "--set", "source.id_field=id", "--set", "source.stream=rows",
            "--set", "evaluation.delay.examples=3"]


def _sent(bootstrap: str, topic: str) -> list[tuple[str, dict]]:
    from foldstream.connectors.kafka import read_topic

    return [(k, json.loads(v)) for k, v in read_topic(bootstrap, topic, timeout_s=10)]


@pytest.mark.kafka
def test_produce_a_delayed_stream_to_a_labels_topic(broker, csv_source, capsys):
    from foldstream.connectors.kafka import end_offsets
    from foldstream.job.plans import open_source
    from foldstream.operators.stages.delay import LabelOnly

    bs = broker.bootstrap
    assert cli.main(["produce", *csv_source, "--bootstrap-servers", bs, "--topic", "dp-in",
                     "--labels-topic", "dp-labels", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "sent 12 examples (12 of rows) to topic dp-in" in out
    assert "sent 12 delayed labels (label-only rows) to topic dp-labels" in out
    arrivals, labels = _sent(bs, "dp-in"), _sent(bs, "dp-labels")
    assert {k for k, _ in arrivals + labels} == {"rows"}
    assert [v for _, v in arrivals] == [{"id": 100 + i, "a": i * 0.5, "b": float(i % 3)}
                                        for i in range(12)]
    # the labels in the order simulate_delay reveals them (3 examples later, the rest at the end)
    config = load_config(None, [s for s in csv_source if s != "--set"])
    expected = [{"id": e.key, "label": e.y} for e in open_source(config)
                if isinstance(e, LabelOnly)]
    assert [v for _, v in labels] == expected and [v["id"] for v in expected][:2] == [100, 101]
    # every message acknowledged before produce returns: the end offsets say all are there
    assert end_offsets(bs, "dp-in") == {0: 12} and end_offsets(bs, "dp-labels") == {0: 12}


@pytest.mark.kafka
def test_produce_a_delayed_generator_on_one_topic_with_positions_as_ids(broker, capsys):
    bs = broker.bootstrap
    assert cli.main(["produce", "--set", "source={kind: generator, model: "
                     "river.datasets.synth.SEA, limit: 1000}", "--set",
                     "evaluation.delay.examples=2", "--bootstrap-servers", bs, "--topic",
                     "dp-one", "--id-field", "n", "--limit", "5", "--quiet"]) == 0
    assert "sent 5 delayed labels (label-only rows) to topic dp-one" in capsys.readouterr().out
    events = [v for _, v in _sent(bs, "dp-one")]
    shape = [("label", v["n"]) if "target" in v else ("arrival", v["n"]) for v in events]
    assert shape == [("arrival", 1), ("arrival", 2), ("arrival", 3), ("label", 1),
                     ("arrival", 4), ("label", 2), ("arrival", 5), ("label", 3),
                     ("label", 4), ("label", 5)]
    assert all(set(v) == {"n", "target"} for v in events if "target" in v)


def test_produce_of_a_delayed_stream_without_an_id_fails_clearly(capsys):
    assert cli.main(["produce", "--set", "evaluation.delay.examples=5", "--bootstrap-servers",
                     "127.0.0.1:1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "source.id_field" in err and "--id-field" in err and "Traceback" not in err
    assert cli.main(["produce", "--labels-topic", "l", "--bootstrap-servers", "127.0.0.1:1",
                     "--quiet"]) == 2
    assert "--labels-topic" in capsys.readouterr().err

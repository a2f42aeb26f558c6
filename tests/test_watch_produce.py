"""``foldstream watch`` and ``foldstream produce``: the watch state on a real run's records, the
command on a file and on a topic, and produce against a real Apache Kafka broker."""

from __future__ import annotations

import io
import json
import time

import pytest
from rich.console import Console

from foldstream.job import cli
from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.job.tools.records import RecordReader
from foldstream.job.tools.watch import RateMeter, WatchState
from foldstream.operators.records.base import Example
from foldstream.job.verdicts import fold_verdict



# kafka-python 2.x loads its protocol files with importlib.resources' deprecated functions.
pytestmark = pytest.mark.filterwarnings("ignore:(read|open)_text is deprecated:DeprecationWarning")

THREE = ("learners=[{name: ht, model: river.tree.HoeffdingTreeClassifier}, "
         "{name: nb, model: river.naive_bayes.GaussianNB}, "
         "{name: nochange, model: river.dummy.NoChangeClassifier}]")
# An id column, and rows a file source rejects: a non-numeric feature, too few columns, NaN,
# an empty label.
CSV = "id,a,b,label\n" + "".join(
    f"{100 + i},{i % 7},{(i * 3) % 5},{'up' if i % 3 else 'down'}\n" for i in range(60)
) + "900,1,zz,up\n901,3\n902,1,nan,up\n903,2,3,\n" + "".join(
    f"{200 + i},{i % 4},{i % 6},{'up' if i % 2 else 'down'}\n" for i in range(40))
GOOD_ROWS, BAD_ROWS = 100, 4


@pytest.fixture(scope="module")
def records() -> list[dict]:
    config = load_config(None, ["source.limit=500", THREE, "evaluation.folds=4",
                                "evaluation.report_every=100",
                                "evaluation.alarms.page_hinkley.threshold=5"])
    out, _ = evaluate_to_list(make_plans(config), open_source(config))
    return out


def text_of(renderable) -> str:
    console = Console(file=io.StringIO(), width=600, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


# ------------------------------------------------------------------------------ WatchState
def test_watch_state_shows_the_latest_values_verdicts_ranks_and_alarms(records):
    state = WatchState(["accuracy", "kappa_m"], source="m.jsonl")
    for record in records:
        state.update(record)
    view = state.streams["elec"]
    assert view.position == 500 and state.records == len(records)
    last = {r["learner"]: r for r in records if r["type"] == "measures" and r["position"] == 500}
    assert view.measures == last
    text = text_of(state.render())
    for name, record in last.items():
        acc = record["values"]["accuracy"]
        assert f"{acc['mean']:.3f} ± {acc['std']:.3f}" in text
        sizes = record["window_size"]
        assert f"{sum(sizes) / len(sizes):,.0f}" in text
    comparisons = [r for r in records if r["type"] == "comparison" and r["position"] == 500]
    assert len(view.comparisons) == len(comparisons) == 6
    for record in comparisons:
        assert f"{record['a']} vs {record['b']}" in text
        assert fold_verdict(record, view.measures).text in text
    assert "average ranks of accuracy" in text and "Nemenyi CD" in text
    alarms = [r for r in records if r["type"] == "alarm"]
    assert view.alarm_count == len(alarms) > 0
    assert f"latest alarms ({len(alarms)} in all)" in text
    assert f"{alarms[-1]['position']:,}" in text
    summary = records[-1]
    assert f"finished: {summary['examples_read']} records read" in text
    assert "bootstrap, 4 folds, prequential, window adwin (delta=0.002)" in text


def test_watch_state_counts_rejected_and_unknown_records_and_shows_missing_measures(records):
    state = WatchState(["accuracy", "norm_kappa"])
    for record in records:
        state.update(record)
    state.update({"schema": 1, "type": "rejected", "stream": "elec", "position": 3,
                  "reason": "bad", "location": "x:1", "record": "?", "record_bytes": 1,
                  "record_sha256": "0" * 64, "truncated": False})
    state.update({"schema": 1, "type": "gauge", "stream": "elec", "position": 500})
    assert state.streams["elec"].rejected == 1 and state.unknown == 1
    assert state.streams["elec"].position == 500  # a rejected record does not move it
    text = text_of(state.render())
    assert "1 rejected" in text and "1 of unknown type" in text and "n/a" in text


def test_watch_state_rate_is_positions_per_second_of_arrival():
    now = [0.0]
    state = WatchState(clock=lambda: now[0])
    for second in range(4):
        now[0] = float(second)
        state.update({"schema": 1, "type": "alarm", "stream": "s", "position": 1000 * second,
                      "learner": "a", "fold": 0, "detector": "adwin", "quantity": "loss"})
    assert state.streams["s"].meter.rate(3.0) == pytest.approx(1000.0)
    assert "1,000 examples/s" in text_of(state.render())
    assert state.streams["s"].meter.rate(30.0) == 0.0  # stalled for longer than the horizon
    assert RateMeter().rate(0.0) is None


# ---------------------------------------------------------------------------- watch command
def test_watch_no_follow_prints_the_table_and_exits_0(records, tmp_path, capsys):
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "not a record\n")
    assert cli.main(["watch", "--no-follow", str(path), "--measures", "accuracy,kappa"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the heading may wrap
    assert "end of input; 1 lines were not records" in out
    for needle in ("stream elec", "position 500", "ht", "nb", "nochange", "kappa",
                   "paired tests over folds", "latest alarms", "finished: 500 records read"):
        assert needle in out, needle


def test_watch_a_missing_file_fails_cleanly(tmp_path, capsys):
    assert cli.main(["watch", "--no-follow", str(tmp_path / "none.jsonl")]) == 2
    assert "none.jsonl" in capsys.readouterr().err


# ------------------------------------------------------------------------- against a broker
@pytest.fixture(scope="module")
def broker(kafka_broker):
    return kafka_broker


@pytest.fixture
def csv_config(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text(CSV)
    return [f"source.path={path}", "source.label=label", "source.id_field=id",
            "source.stream=rows"]


@pytest.mark.kafka
def test_produce_sends_every_example_keyed_by_stream_and_skips_rejected_rows(
        broker, csv_config, capsys):
    from foldstream.connectors.kafka import end_offsets, read_topic
    from foldstream.connectors.messages import MessageParser

    args = ["produce", "--bootstrap-servers", broker.bootstrap, "--topic", "rows", "--quiet"]
    for item in csv_config:
        args += ["--set", item]
    assert cli.main(args) == 0
    captured = capsys.readouterr()
    assert f"sent {GOOD_ROWS} examples ({GOOD_ROWS} of rows) to topic rows" in captured.out
    assert f"rejected rows skipped: {BAD_ROWS}" in captured.out
    assert f"end offsets of rows: partition 0: {GOOD_ROWS}" in captured.out
    assert captured.err.count("skipped") == BAD_ROWS and "'zz'" in captured.err

    messages = read_topic(broker.bootstrap, "rows")
    assert len(messages) == GOOD_ROWS and {key for key, _ in messages} == {"rows"}
    values = [json.loads(value) for _, value in messages]
    assert values[0] == {"id": 100, "a": 0.0, "b": 0.0, "label": "down"}
    # what a Kafka job parses back is what the file source yields
    config = load_config(None, csv_config)
    expected = [e for e in open_source(config) if isinstance(e, Example)]
    parse = MessageParser(label="label", id_field="id")
    parsed = [parse(key, value, f"rows@{i}")[0] for i, (key, value) in enumerate(messages)]
    assert [(e.stream, e.x, e.y, e.key) for e in parsed] == \
           [(e.stream, e.x, e.y, e.key) for e in expected]
    # every message acknowledged before produce returns: the end offset says all are there
    assert end_offsets(broker.bootstrap, "rows") == {0: GOOD_ROWS}


@pytest.mark.kafka
def test_produce_a_generator_with_rate_and_limit(broker, capsys):
    from foldstream.connectors.kafka import read_topic

    t0 = time.monotonic()
    assert cli.main(["produce", "--set", "source={kind: generator, model: "
                     "river.datasets.synth.SEA, limit: 1000}", "--bootstrap-servers",
                     broker.bootstrap, "--topic", "sea", "--rate", "100", "--limit", "50",
                     "--quiet"]) == 0
    assert time.monotonic() - t0 >= 0.45  # 50 examples at 100 per second
    assert "sent 50 examples (50 of sea)" in capsys.readouterr().out
    messages = read_topic(broker.bootstrap, "sea")
    assert len(messages) == 50 and {k for k, _ in messages} == {"sea"}
    assert all(set(json.loads(v)) == {"0", "1", "2", "target"} for _, v in messages)


@pytest.mark.kafka
def test_produce_names_the_servers_when_no_broker_answers(capsys, free_port):
    dead = f"127.0.0.1:{free_port()}"
    assert cli.main(["produce", "--bootstrap-servers", dead, "--topic", "t", "--limit", "3",
                     "--quiet"]) == 2
    assert dead in capsys.readouterr().err


@pytest.mark.kafka
def test_watch_a_topic_of_metrics_records(broker, records, capsys):
    from foldstream.connectors.kafka import create_topics, produce_jsonl

    create_topics(broker.bootstrap, ["metrics"])
    # in batches: the reader must not lose the last one
    produce_jsonl(broker.bootstrap, "metrics", "elec", records)
    source = f"kafka://{broker.bootstrap}/metrics"
    assert cli.main(["watch", source, "--no-follow"]) == 0
    out = capsys.readouterr().out
    assert f"{len(records)} records" in out and "position 500" in out
    assert "finished: 500 records read" in out and "nochange" in out

    assert cli.main(["watch", f"kafka://{broker.bootstrap}/no-such-topic", "--no-follow"]) == 2
    assert "no-such-topic" in capsys.readouterr().err


@pytest.mark.kafka
def test_following_a_topic_sees_records_produced_later(broker, records):
    from foldstream.connectors.kafka import create_topics, produce_jsonl

    source = f"kafka://{broker.bootstrap}/later"
    batches = RecordReader(source, follow=True, poll_interval=0.1).batches()
    try:
        assert next(batches) == []  # the topic does not exist yet: wait for it
        create_topics(broker.bootstrap, ["later"])
        produce_jsonl(broker.bootstrap, "later", "elec", records[:10])
        got: list[dict] = []
        deadline = time.monotonic() + 20
        while len(got) < 10 and time.monotonic() < deadline:
            got.extend(next(batches))
        assert got == records[:10]
        produce_jsonl(broker.bootstrap, "later", "elec", records[10:12])
        while len(got) < 12 and time.monotonic() < deadline:
            got.extend(next(batches))
        assert got == records[:12]
    finally:
        batches.close()

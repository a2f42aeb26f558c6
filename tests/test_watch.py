"""``foldstream watch`` (job/tools/watch.py): the watch state on a real run's records, and the
command on a file and on a topic of a real Apache Kafka broker."""

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
from foldstream.job.verdicts import fold_verdict


# kafka-python 2.x loads its protocol files with importlib.resources' deprecated functions.
pytestmark = pytest.mark.filterwarnings("ignore:(read|open)_text is deprecated:DeprecationWarning")

THREE = ("learners=[{name: ht, model: river.tree.HoeffdingTreeClassifier}, "
         "{name: nb, model: river.naive_bayes.GaussianNB}, "
         "{name: nochange, model: river.dummy.NoChangeClassifier}]")


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

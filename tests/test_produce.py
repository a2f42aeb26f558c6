"""``foldstream produce`` (job/tools/produce.py) against a real Apache Kafka broker: every
example keyed by its stream, rejected rows skipped, a generator at a rate and a limit, and the
servers named when no broker answers."""

from __future__ import annotations

import json
import time

import pytest

from foldstream.job import cli
from foldstream.job.config import load_config
from foldstream.job.plans import open_source
from foldstream.operators.records.base import Example

# kafka-python 2.x loads its protocol files with importlib.resources' deprecated functions.
pytestmark = pytest.mark.filterwarnings("ignore:(read|open)_text is deprecated:DeprecationWarning")


@pytest.fixture(scope="module")
def broker(kafka_broker):
    return kafka_broker


# An id column, and rows a file source rejects: a non-numeric feature, too few columns, NaN,
# an empty label.
CSV = "id,a,b,label\n" + "".join(
    f"{100 + i},{i % 7},{(i * 3) % 5},{'up' if i % 3 else 'down'}\n" for i in range(60)
) + "900,1,zz,up\n901,3\n902,1,nan,up\n903,2,3,\n" + "".join(
    f"{200 + i},{i % 4},{i % 6},{'up' if i % 2 else 'down'}\n" for i in range(40))


GOOD_ROWS, BAD_ROWS = 100, 4


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

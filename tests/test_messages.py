"""Input to examples (connectors/messages.py, and the file and data set readers that share its
rule): a parser yields examples, labels or rejected records with a reason, and never raises.

* A JSON number that Python refuses to convert (an integer of 5,000 digits), or any error no
  check foresaw, is a rejected record, in a file, a Kafka message or a data set item: a file
  run ends with its summary, a Kafka job goes on.
* The parsers are fuzzed with hypothesis (arbitrary bytes, arbitrary JSON values and
  documents, huge integers, NaN and Infinity, deep nesting, invalid UTF-8).
* A row of a Kafka message and a line of a JSON Lines file go through the same checks.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from river import dummy

import foldstream
from foldstream.connectors.files import iter_file
from foldstream.connectors.generators import iter_dataset
from foldstream.connectors.messages import ByTopic, LabelParser, MessageParser
from foldstream.job import exitcodes
from foldstream.job.cli import main
from foldstream.operators.stages.delay import LabelOnly
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.records.base import Example, Rejected, dumps

POISON = "7" * 5000  # a JSON integer Python will not convert (sys.int_max_str_digits: 4300)
TIMING = SummaryRecord.TIMING_FIELDS  # the one list of the fields that vary from run to run
FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def write(path: Path, text: str | bytes, gz: bool = False) -> Path:
    data = text.encode("utf-8") if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def rows_jsonl(rows: list) -> str:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)


def by_type(results, kind: str) -> list[dict]:
    return [r for r in results.records if r["type"] == kind]


def stripped(records: list[dict]) -> list[str]:
    return [dumps({k: v for k, v in r.items() if k not in TIMING}) for r in records]


# ------------------------------------------------------------------ one poison record, any source
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_a_5000_digit_integer_in_a_jsonl_file_is_one_rejected_line(tmp_path, gz):
    rows = [{"a": float(i % 4), "y": i % 2} for i in range(40)]
    rows.insert(10, '{"a": %s, "y": 1}' % POISON)
    path = write(tmp_path / ("p.jsonl.gz" if gz else "p.jsonl"), rows_jsonl(rows), gz)
    results = foldstream.evaluate({"path": str(path), "label": "y"},
                                  {"nc": dummy.NoChangeClassifier()}, mode="single",
                                  report_every=1000)
    assert [(r["reason"], r["location"]) for r in results.rejected] == [
        ("line 11: unreadable JSON (a number of 5000 digits; at most 4300 are read)",
         f"{path.name}:11")]
    summary = by_type(results, "summary")[0]
    assert (summary["position"], summary["examples_read"], summary["examples_rejected"]) == \
        (40, 41, 1)


def test_the_command_line_ends_a_poisoned_file_with_its_summary(tmp_path, capsys):
    rows = [{"a": float(i % 4), "y": i % 2} for i in range(30)] + ['{"a": %s, "y": 1}' % POISON]
    path = write(tmp_path / "p.jsonl", rows_jsonl(rows))
    records, dead = tmp_path / "out.jsonl", tmp_path / "dead.jsonl"
    code = main(["run", "--set", f"source={{kind: file, path: '{path}', label: y}}",
                 "--set", f"sink={{kind: file, path: '{records}', dead_letter_path: '{dead}'}}",
                 "--set", "learners=[{name: nc, model: river.dummy.NoChangeClassifier}]",
                 "--set", "evaluation.folds=2"])
    out = capsys.readouterr()
    assert code == exitcodes.OK, out.err
    assert "Traceback" not in out.out + out.err
    assert json.loads(records.read_text().splitlines()[-1])["examples_rejected"] == 1
    assert "5000 digits" in json.loads(dead.read_text())["reason"]


@pytest.mark.parametrize("value, reason", [
    (b'{"a": %s, "y": 1}' % POISON.encode(), "message t/0@5: unreadable JSON (a number of 5000 "
                                             "digits; at most 4300 are read)"),
    (b'[{"a": 1, "y": 1}, {"a": %s}]' % POISON.encode(), "message t/0@5: unreadable JSON (a "
                                                        "number of 5000 digits; at most 4300 are "
                                                        "read)"),
    (b"[" * 50_000 + b"]" * 50_000, "message t/0@5: malformed JSON (nested too deeply)"),
    (b'{"id": "\\ud800", "y": 1}', "message t/0@5: malformed JSON (a lone surrogate '\\ud800' in "
                                  "a string: no Unicode text)"),
])
def test_a_poison_message_is_a_rejected_record(value, reason):
    for parse in (MessageParser(label="y"), MessageParser(label="y", id_field="id",
                                                          labels_later=True),
                  LabelParser(label="y", id_field="id")):
        (item,) = parse(b"s", value, "t/0@5")
        assert isinstance(item, Rejected) and item.reason == reason


def test_an_error_no_check_foresaw_is_a_rejected_record_not_a_crash():
    """Whatever a row's handling raises becomes the record's reason (here a parser whose row
    check fails with a TypeError), and the other rows of the message go on."""
    class Fragile(MessageParser):
        def _item(self, row, stream, where):
            if "boom" in row:
                raise TypeError("unexpected")
            return super()._item(row, stream, where)

    items = Fragile(label="y")(b"s", b'[{"a": 1, "y": 1}, {"boom": 1}]', "t/0@1")
    assert [type(item).__name__ for item in items] == ["Example", "Rejected"]
    assert items[1].reason == "message t/0@1[1]: unreadable (TypeError: unexpected)"


def test_a_dataset_item_that_is_no_example_is_a_rejected_record():
    def dataset():
        yield {"a": 1.0}, "u"
        yield {"a": 1.0}, ["not", "a", "class"]
        yield {"a": 1.0}, float("nan")
        yield {"a": 2.0}, "v"
        raise RuntimeError("the generator broke")

    items = list(iter_dataset(dataset(), stream="s"))
    assert [type(i).__name__ for i in items] == ["Example", "Rejected", "Rejected", "Example",
                                                 "Rejected"]
    assert [i.reason for i in items if isinstance(i, Rejected)] == [
        "item 2: the label is a list, not a class (not hashable)", "item 3: the label is NaN",
        "item 5: the dataset raised RuntimeError: the generator broke; it ends here"]


# ------------------------------------------------------------------------------------ fuzzing
def check_items(items: list) -> None:
    """The property: every item is an example, a label or a rejected record with a reason."""
    for item in items:
        if isinstance(item, Rejected):
            assert isinstance(item.reason, str) and item.reason
            assert isinstance(item.raw, str)
        elif isinstance(item, Example):
            assert isinstance(item.x, dict) and all(isinstance(k, str) for k in item.x)
            assert item.y is None or hash(item.y) is not None
        else:
            assert isinstance(item, LabelOnly) and hash(item.key) is not None


_scalars = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
            | st.integers(-10 ** 400, 10 ** 400))
json_values = st.recursive(_scalars, lambda children: st.lists(children, max_size=3)
                           | st.dictionaries(st.text(max_size=4), children, max_size=3),
                           max_leaves=12)
field_names = st.sampled_from(["a", "b", "y", "id", "c"]) | st.text(max_size=4)
rows = st.dictionaries(field_names, json_values, max_size=5)
#: JSON text Python's json reads only in part, or not at all
nasty_text = st.sampled_from([POISON, "-" + POISON, "NaN", "Infinity", "-Infinity", "1e999",
                              "[" * 3000 + "]" * 3000, '{"a":' * 3000 + "1" + "}" * 3000,
                              '"\\ud800"', "1" * 4301, "0." + "1" * 5000])


@st.composite
def json_lines(draw) -> str:
    """A line of a JSON Lines file: a JSON document, a row, or a row with a nasty value."""
    kind = draw(st.sampled_from(["value", "row", "nasty"]))
    if kind == "value":
        return json.dumps(draw(json_values))
    row = draw(rows)
    text = json.dumps(row)
    if kind == "nasty":
        name = draw(field_names)
        body = text[1:-1]
        text = ("{" + body + (", " if body else "") + json.dumps(name) + ": "
                + draw(nasty_text) + "}")
    return text


def read_all(data: bytes, suffix: str, **options) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"f{suffix}"
        path.write_bytes(data)
        try:
            items = iter_file(path, **options)
        except ValueError:  # an unusable header: a configuration error, at the call
            return []
        return list(items)


@FAST
@given(lines=st.lists(json_lines(), max_size=6), gz=st.booleans(), later=st.booleans())
def test_fuzz_jsonl_files_every_line_is_one_record(lines, gz, later):
    data = "\n".join(lines).encode("utf-8")
    options = dict(label="y", id_field="id" if later else None, labels_later=later)
    items = read_all(gzip.compress(data) if gz else data, ".jsonl.gz" if gz else ".jsonl",
                     **options)
    check_items(items)
    assert len(items) == sum(1 for line in lines if line.strip())


@FAST
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".csv", ".arff", ".jsonl"]),
       gz=st.booleans())
def test_fuzz_files_of_arbitrary_bytes_never_raise(data, suffix, gz):
    header = {".csv": b"a,b,y\n", ".arff": b"@relation r\n@attribute a numeric\n"
              b"@attribute b {x,y}\n@attribute y string\n@data\n", ".jsonl": b""}[suffix]
    content = header + data
    check_items(read_all(gzip.compress(content) if gz else content,
                         suffix + (".gz" if gz else ""), label="y"))
    if gz:  # arbitrary bytes under a gzip name: a damaged file, never a crash
        check_items(read_all(content, suffix + ".gz", label="y"))


@FAST
@given(key=st.none() | st.binary(max_size=6) | st.sampled_from([b"s", b"\xff"]),
       value=st.none() | st.binary(max_size=200) | json_lines().map(str.encode)
       | st.lists(json_lines(), max_size=3).map(lambda ls: ("[" + ",".join(ls) + "]").encode()))
def test_fuzz_kafka_messages_never_raise(key, value):
    parsers = [MessageParser(label="y"), MessageParser(label="y", stream="d"),
               MessageParser(label="y", id_field="id", labels_later=True, streams={"s"}),
               LabelParser(label="y", id_field="id"),
               ByTopic(MessageParser(label="y", id_field="id", labels_later=True),
                       {"labels": LabelParser(label="y", id_field="id")})]
    for parse in parsers:
        for location in ("t/0@1", "labels/0@2"):
            items = parse(key, value, location)
            assert items
            check_items(items)


_anything = json_values | st.tuples(json_values) | st.frozensets(st.integers(), max_size=2)


@FAST
@given(items=st.lists(st.tuples(st.dictionaries(st.text(max_size=3), _anything, max_size=3),
                                 _anything) | _anything, max_size=6))
def test_fuzz_dataset_items_never_raise(items):
    out = list(iter_dataset(items, stream="s"))
    check_items(out)
    assert len(out) == len(items)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(lines=st.lists(json_lines(), max_size=8), later=st.booleans())
def test_fuzz_a_whole_run_accounts_for_every_line(lines, later):
    """A fuzzed JSON Lines file through the in-process engine (delayed or not): no exception,
    and every non-blank line is read, and either evaluated or rejected."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.jsonl"
        path.write_text("\n".join(lines))
        results = foldstream.evaluate(
            {"path": str(path), "label": "y", "stream": "s", "id_field": "id" if later else None},
            {"nc": dummy.NoChangeClassifier()}, mode="single", report_every=1000,
            delay={} if later else None)
    if not any(line.strip() for line in lines):
        return  # (the Python API writes no summary for an input without a record)
    summary = by_type(results, "summary")[0]
    assert summary["examples_read"] == sum(1 for line in lines if line.strip())
    assert summary["examples_rejected"] == len(results.rejected)
    if not later:
        assert summary["position"] + summary["examples_rejected"] == summary["examples_read"]


@pytest.mark.slow
@settings(max_examples=2000, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(lines=st.lists(json_lines(), max_size=12), key=st.none() | st.binary(max_size=4),
       value=st.binary(max_size=400))
def test_fuzz_long(lines, key, value):
    """The quick fuzz tests' properties over many more inputs."""
    check_items(read_all("\n".join(lines).encode("utf-8"), ".jsonl", label="y", id_field="id",
                         labels_later=True))
    for parse in (MessageParser(label="y", id_field="id", labels_later=True),
                  LabelParser(label="y", id_field="id")):
        check_items(parse(key, value, "t/0@1"))
        check_items(parse(b"s", b"[" + b",".join(line.encode() for line in lines) + b"]",
                          "t/0@2"))


# ----------------------------------------------------------------------------- Kafka, Flink
@pytest.mark.kafka
@pytest.mark.flink  # slow (tests/conftest.py)
def test_a_poison_message_on_kafka_is_a_dead_letter_and_the_job_goes_on(kafka_broker, kafka_jars):
    from foldstream.connectors.kafka import create_topics, produce_jsonl, read_topic

    bs = kafka_broker.bootstrap
    create_topics(bs, ["poison-in", "poison-out", "poison-dead"])
    rows = [json.dumps({"a": float(i % 4), "y": i % 2}) for i in range(60)]
    rows.insert(20, '{"a": %s, "y": 1}' % POISON)
    produce_jsonl(bs, "poison-in", "s", rows)
    jars = json.dumps([str(j) for j in kafka_jars])
    args = ["run", "--quiet"]
    for item in (f"source={{kind: kafka, bootstrap_servers: '{bs}', topic: poison-in, label: y,"
                 f" bounded: true}}",
                 f"sink={{kind: kafka, bootstrap_servers: '{bs}', topic: poison-out, "
                 f"dead_letter_topic: poison-dead}}",
                 "evaluation.folds=2", "evaluation.report_every=20",
                 "learners=[{name: nc, model: river.dummy.NoChangeClassifier}]",
                 f"engine={{kind: flink, parallelism: 1, jars: {jars}}}"):
        args += ["--set", item]
    assert main(args) == exitcodes.OK
    records = [json.loads(v) for _, v in read_topic(bs, "poison-out", timeout_s=30)]
    dead = [json.loads(v) for _, v in read_topic(bs, "poison-dead", timeout_s=30)]
    assert [(d["reason"], d["location"]) for d in dead] == [
        ("message poison-in/0@20: unreadable JSON (a number of 5000 digits; at most 4300 are "
         "read)", "poison-in/0@20")]
    summary = records[-1]
    assert summary["type"] == "summary"
    assert (summary["position"], summary["examples_read"], summary["examples_rejected"]) == \
        (60, 61, 1)


# A row of a Kafka message and a line of a JSON Lines file go through the same checks
# (connectors/rows.py): the same examples, and rejections for the same reasons in the same words.

MESSAGE_ROWS = ['{"a": 1, "c": "red", "y": "u", "id": 7}', '{"a": "1", "y": "u", "id": 8}',
        '{"a": 1, "y": [1], "id": 9}', '{"a": 1, "y": "u"}', '{"a": null, "y": "u", "id": 1}', '{"a": 1e400, "y": 1, "id": 3}',
        '{"a": 1', '{"a": 2, "c": 2000, "y": true, "id": "k"}']


def test_kafka_messages_and_json_lines_share_their_checks(tmp_path):
    from foldstream.connectors.messages import MessageParser

    path = write(tmp_path / "s.jsonl", "\n".join(MESSAGE_ROWS) + "\n")
    from_file = list(iter_file(path, label="y", nominal=["c"], id_field="id"))
    parse = MessageParser(label="y", nominal=["c"], id_field="id")
    from_messages = [item for i, row in enumerate(MESSAGE_ROWS) for item in parse(b"s", row.encode(), f"t@{i}")]
    assert [type(r) for r in from_file] == [type(r) for r in from_messages]
    assert sum(isinstance(r, Example) for r in from_file) == 2
    for line, (f, m) in enumerate(zip(from_file, from_messages), start=1):
        if isinstance(f, Example):
            assert (f.x, f.y, f.key) == (m.x, m.y, m.key)
        else:  # "line 3: ..." and "message t@2: ..." give the same reason
            assert f.reason.removeprefix(f"line {line}: ") == m.reason.removeprefix(f"message t@{line - 1}: ")
            assert f.reason != m.reason

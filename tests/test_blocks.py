"""The block reader (connectors/blocks.py) against the row parser, line by line.

Random and hostile CSV, ARFF and JSON Lines files are read twice by ``iter_file``: with the block reader
(pyarrow) and with the row parser alone. Every line must have the same fate: the same example
(features to the bit, label, key, location) or the same rejected record (reason, raw text,
location, position), in the same order.
"""

from __future__ import annotations

import csv
import gzip
import random
from pathlib import Path

import pytest

from foldstream.connectors import blocks, files
from foldstream.connectors.files import iter_file
from foldstream.operators.records.base import Example
from foldstream.operators.records.features import BlockExample

NUMBERS = ["0", "1", "-1", "2.5", "-0", "-0.0", "+3", ".5", "5.", "1e5", "1E+05", "-2.5e-3",
           " 7", "7 ", "\t7", " 1.25 ", "007", "00.1e0001", "1.7976931348623157e308",
           "4.9e-324", "1e-400", "0.1000000000000000055511151231257827021181583404541015625",
           "123456789012345678901234567890", "3.141592653589793238462643383279"]
HOSTILE = ["", " ", "?", "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "+inf", "nan(1)",
           "1e400", "-1e400", "1.7976931348623159e308", "1_0", "0x10", "1e", "e5", "1.5.2",
           "--1", "+", ".", "-", "true", "NA", "null", "#N/A", '"1"', "'1'", "１", "١٢",
           "1\x0b", "1\x0c", "\x1c1", "1\x00", "\u00a01", "1\u2028", "\ufeff1", "1d5",
           "{1", "%1", "1,2", "1\r", "\r", "1e+", "٣.٥"]
LABELS = ["a", "b", " a ", "b\t", "c"]
BAD_LABELS = ["", " ", "?", "z", "'a'", '"b"', "'c", "{a", "%a", "\ufeffa", "a\x00", "é", "a b", "\x1ca"]
IDS = ["1", "7", " 8 ", "-3", "007", "-0", "+5", "1_000", "x", "", " ", "1.0", "٣", "9" * 30]


def _value(rng: random.Random, bad: float, hostile: list[str] = HOSTILE,
           numbers: list[str] = NUMBERS) -> str:
    """A value's text: one of ``hostile`` with probability ``bad``, else one of ``numbers`` or
    a random float."""
    if rng.random() < bad:
        return rng.choice(hostile)
    if rng.random() < 0.5:
        return rng.choice(numbers)
    return repr(rng.uniform(-1e6, 1e6) * 10.0 ** rng.randint(-30, 30))


def _line(rng: random.Random, fmt: str, width: int, label_at: int, id_at: int | None,
          bad: float) -> bytes:
    roll = rng.random()
    if roll < bad / 4:  # a line broken as a whole
        return rng.choice([b"", b"   ", b"\t", b"% a comment", b"{0 1, 2 a}", b"\xff\xfe,1",
                           b"1,2", b",".join([b"1"] * (width + 1)), b'"1,2",a',
                           b"\xef\xbb\xbf" + b",".join([b"1"] * width), b"a\rb",
                           b"1," * (width - 1) + b"\xc3\x28", "é,".encode() * width])
    values = [_value(rng, bad) for _ in range(width)]
    values[label_at] = rng.choice(BAD_LABELS) if rng.random() < bad else rng.choice(LABELS)
    if id_at is not None:
        values[id_at] = rng.choice(IDS) if rng.random() < 0.5 else str(rng.randint(0, 10 ** 6))
    return ",".join(values).encode("utf-8", "surrogatepass")


def _write(path: Path, rng: random.Random, fmt: str, lines: int, bad: float,
           with_id: bool) -> tuple[str, str | None]:
    width = rng.randint(2, 8)
    names = [f"f{i}" for i in range(width)]
    label_at = rng.randrange(width)
    names[label_at] = "y"
    id_at = None
    if with_id:
        id_at = rng.choice([i for i in range(width) if i != label_at])
        names[id_at] = "id"
    if fmt == "csv":
        head = (",".join(names) + "\n").encode()
    else:
        kind = rng.choice(["{a,b,c}", "{'a',b,\"c\"}", "string", "numeric"])  # the label's
        head = b"@relation r\n" + b"".join(
            (f"@attribute {n} {kind}\n" if n == "y" else f"@attribute {n} numeric\n").encode()
            if n != "id" else b"@attribute id string\n" for n in names) + b"@data\n"
    body = b"\n".join(_line(rng, fmt, width, label_at, id_at, bad) for _ in range(lines))
    data = head + body + rng.choice([b"", b"\n", b"\r\n"])
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return "y", ("id" if with_id else None)


def _both(monkeypatch, path: Path, label: str, id_field: str | None, limit: int | None = None,
          blocks_always: bool = True) -> tuple[list, list, int]:
    """The records of ``path`` by the row parser alone and with the block reader (for any size
    of file and ``limit`` when ``blocks_always``), and the examples that the block reader read
    itself."""
    with monkeypatch.context() as m:
        m.setattr(files, "_block_reader", lambda schema: None)
        rows = list(iter_file(path, label=label, id_field=id_field, limit=limit))
    by_rows: list = []  # the row parser's items (kept, so that no id is reused)
    read_batch = files._read_batch

    def counted(batch, *args):
        items = read_batch(batch, *args)
        by_rows.extend(items)
        return items

    with monkeypatch.context() as m:
        m.setattr(files, "_read_batch", counted)
        if blocks_always:
            m.setattr(files, "_BLOCK_BYTES", 0)
            m.setattr(files, "_BLOCK_LIMIT", 0)
        fast = list(iter_file(path, label=label, id_field=id_field, limit=limit))
    parsed = set(map(id, by_rows))
    return rows, fast, sum(isinstance(item, Example) and id(item) not in parsed for item in fast)


def _same(rows: list, fast: list) -> None:
    assert len(fast) == len(rows)
    for a, b in zip(rows, fast):
        if isinstance(b, BlockExample):  # a row of the block's array: its dict when read
            b = b.plain()
        assert type(a) is type(b)
        assert repr(a) == repr(b)  # floats to the bit (-0.0, the last digit), reasons, places
        if isinstance(a, Example):
            assert [type(v) for v in a.x.values()] == [type(v) for v in b.x.values()]
            assert type(a.y) is type(b.y) and type(a.key) is type(b.key)


@pytest.mark.parametrize("seed", range(24))
def test_every_line_has_the_fate_the_row_parser_gives_it(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    monkeypatch.setattr(files, "_BLOCK", rng.choice([16, 50, 200, 4096]))
    fmt = "csv" if seed % 2 else "arff"
    path = tmp_path / (f"data.{fmt}" + (".gz" if seed % 3 == 0 else ""))
    bad = [0.0, 0.002, 0.02, 0.1, 0.4][seed % 5]
    label, id_field = _write(path, rng, fmt, rng.randint(50, 700), bad, with_id=seed % 4 == 1)
    rows, fast, by_blocks = _both(monkeypatch, path, label, id_field)
    _same(rows, fast)
    if bad <= 0.02:
        assert by_blocks > 0  # the block reader read some lines itself


def test_a_limit_and_rejections_keep_their_positions(tmp_path, monkeypatch):
    rng = random.Random(99)
    monkeypatch.setattr(files, "_BLOCK", 64)
    path = tmp_path / "data.csv"
    label, id_field = _write(path, rng, "csv", 900, 0.05, with_id=False)
    for limit in (None, 0, 1, 63, 64, 65, 300, 10 ** 6):
        rows, fast, _ = _both(monkeypatch, path, label, id_field, limit)
        _same(rows, fast)


def test_a_damaged_gzip_ends_the_source_alike(tmp_path, monkeypatch):
    rng = random.Random(5)
    monkeypatch.setattr(files, "_BLOCK", 128)
    whole = tmp_path / "whole.csv.gz"
    label, id_field = _write(whole, rng, "csv", 3000, 0.01, with_id=False)
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(whole.read_bytes()[:len(whole.read_bytes()) * 2 // 3])
    rows, fast, by_blocks = _both(monkeypatch, cut, label, id_field)
    _same(rows, fast)
    assert "damaged" in rows[-1].reason and by_blocks > 0


def test_a_line_longer_than_the_csv_modules_field_limit(tmp_path, monkeypatch):
    limit = csv.field_size_limit()
    try:
        csv.field_size_limit(40)
        path = tmp_path / "long.csv"
        path.write_text("a,b,y\n" + "1,2,u\n" * 30 + "1," + "0" * 60 + "1,u\n" + "3,4,v\n" * 30)
        rows, fast, by_blocks = _both(monkeypatch, path, "y", None)
        _same(rows, fast)
        assert by_blocks > 0 and any(not isinstance(item, Example) for item in rows)
    finally:
        csv.field_size_limit(limit)


def test_a_file_of_plain_numbers_is_read_by_blocks(tmp_path, monkeypatch):
    path = tmp_path / "plain.csv"
    path.write_text("a,y,b\n" + "".join(f"{i / 7},c{i % 3},{-i}e-3\n" for i in range(5000)))
    rows, fast, by_blocks = _both(monkeypatch, path, "y", None)
    _same(rows, fast)
    assert by_blocks == 5000


def test_small_files_and_short_runs_are_the_row_parsers(tmp_path, monkeypatch):
    path = tmp_path / "plain.csv"
    path.write_text("a,y\n" + "1,u\n" * 3000)
    _, fast, by_blocks = _both(monkeypatch, path, "y", None, blocks_always=False)
    assert len(fast) == 3000 and by_blocks == 0
    monkeypatch.setattr(files, "_BLOCK_BYTES", 0)
    _, fast, by_blocks = _both(monkeypatch, path, "y", None, limit=2000, blocks_always=False)
    assert len(fast) == 2000 and by_blocks == 0
    _, fast, by_blocks = _both(monkeypatch, path, "y", None, blocks_always=False)
    assert by_blocks == 3000


def test_files_it_does_not_read(tmp_path):
    """A nominal feature or delayed labels: the row parser reads every line."""
    from foldstream.connectors.rows import RowSchema

    assert blocks.block_reader(RowSchema("csv", "y", None, frozenset({"a"}), ("a", "y"))) is None
    assert blocks.block_reader(RowSchema("jsonl", "y", None, frozenset({"a"}))) is None
    assert blocks.block_reader(RowSchema("jsonl", "y", "id", frozenset(),
                                         labels_later=True)) is None
    assert blocks.block_reader(RowSchema("jsonl", "y", None, frozenset())) is not None
    assert blocks.block_reader(RowSchema("csv", "y", "id", frozenset(), ("id", "y", "a"),
                                         labels_later=True)) is None
    assert blocks.block_reader(RowSchema("csv", "y", None, frozenset(), ("a", "y"))) is not None


@pytest.mark.parametrize("fmt", ["csv", "arff"])
@pytest.mark.parametrize("label_first", [False, True])
def test_each_hostile_line_alone_at_each_place_of_a_block(tmp_path, monkeypatch, fmt,
                                                          label_first):
    """Each hostile value, label and line alone among plain lines: first, second, last of a
    block, and where a piece of a block starts after it."""
    monkeypatch.setattr(files, "_BLOCK", 32)
    order = (lambda a, b, y: f"{y},{a},{b}") if label_first else (lambda a, b, y: f"{a},{b},{y}")
    attributes = "".join(f"@attribute {n} {'string' if n == 'y' else 'numeric'}\n"
                         for n in order("a", "b", "y").split(","))
    head = order("a", "b", "y") + "\n" if fmt == "csv" else f"@relation r\n{attributes}@data\n"
    lines = [order(v, 1, "u").encode() for v in HOSTILE]
    lines += [order(1, 2, v).encode() for v in BAD_LABELS]
    lines += [b"", b" ", b"\xef\xbb\xbf" + order(1, 2, "u").encode(), order(1, 2, "u,").encode(),
              b"1,2", order("\udcff", 1, "u").encode("utf-8", "surrogateescape"), b"% c",
              b"a\rb", order(1, 2, "u\rv").encode()]
    plain = order(1.5, -2, "u").encode()
    for line in lines:
        for at in (0, 1, 15, 31, 32, 33):  # places in the blocks of 32 lines
            body = [plain] * 80
            body[at] = line
            if at >= 2:
                body[at - 1] = order("x", 1, "u").encode()  # a piece starts after it
            path = tmp_path / f"f.{fmt}"
            path.write_bytes(head.encode() + b"\n".join(body) + b"\n")
            rows, fast, by_blocks = _both(monkeypatch, path, "y", None)
            _same(rows, fast)
            assert by_blocks > 0, (line, at)


def test_block_rows_reach_the_learners_as_one_array_and_the_records_stay(tmp_path, monkeypatch):
    """A batch of rows read by blocks is one array (``FeatureRows``) that MOA's bridge takes as
    is; a batch with an example of the row parser in it is a list of dicts; and the
    records of a run (MOA's and river's learners, rejected lines) are the row parser's."""
    from foldstream.job.config import load_config
    from foldstream.job.engines.inprocess import evaluate_to_list
    from foldstream.job.plans import make_plans, open_source
    from foldstream.operators.learners.moa import classifier
    from foldstream.operators.records.base import dumps
    from foldstream.operators.records.features import FeatureRows
    from foldstream.operators.records.outputs import SummaryRecord

    rng = random.Random(3)
    lines = [",".join(f"{rng.gauss(0, 1):.6g}" for _ in range(4)) + f",c{rng.randrange(3)}"
             for _ in range(3000)]
    lines[1234] = "1,2,3,nan,c1"  # not finite: the row parser's, rejected
    lines[2100] = "1,2,c0"  # too short: the row parser's, rejected
    lines[2500] = '"0.5",1,2,3,c2'  # a quote: the row parser's, an example among the block's
    path = tmp_path / "numbers.csv"
    path.write_text("a,b,c,d,y\n" + "\n".join(lines) + "\n")
    cfg = load_config(None, [
        f"source={{kind: file, path: {path}, label: y}}", "evaluation.folds=3",
        "engine.batch_size=200", "evaluation.report_every=500",
        "learners=[{name: nb, model: moa.classifiers.bayes.NaiveBayes}, "
        "{name: gnb, model: river.naive_bayes.GaussianNB}]"])
    taken = []  # per batch the MOA bridge encoded: (features as one array, taken as is)
    numeric_rows = classifier.MoaClassifier._numeric_rows

    def spied(self, xs):
        rows = numeric_rows(self, xs)
        taken.append((isinstance(xs, FeatureRows), rows is getattr(xs, "array", None)))
        return rows

    def records() -> list[str]:
        out = evaluate_to_list(make_plans(cfg), open_source(cfg))
        return [dumps({k: v for k, v in r.items() if k not in SummaryRecord.TIMING_FIELDS})
                for part in out for r in part]

    with monkeypatch.context() as m:
        m.setattr(files, "_block_reader", lambda schema: None)
        by_rows = records()
    monkeypatch.setattr(files, "_BLOCK_BYTES", 0)
    monkeypatch.setattr(files, "_BLOCK_LIMIT", 0)
    monkeypatch.setattr(classifier.MoaClassifier, "_numeric_rows", spied)
    assert records() == by_rows
    assert sum(a and b for a, b in taken) > 0  # arrays taken as they came
    assert sum(not a for a, _ in taken) > 0  # the batches with the quoted line: dicts


def test_a_delay_field_leaves_the_features_of_a_block_row():
    """``evaluation.delay.field`` takes its column out of the features of a row read by
    blocks too (its dict is made once, then the column is taken out of it)."""
    import numpy as np

    from foldstream.operators.records.features import BlockExample, FeatureRows
    from foldstream.operators.stages.delay import simulate_delay

    block = FeatureRows(np.array([[0.5, 1.0], [1.5, 0.0]]), ("a", "wait"))
    items = [BlockExample("s", block, i, "u", None, f"f:{i + 2}") for i in (0, 1)]
    arrivals = [e for e in simulate_delay(items, field="wait") if isinstance(e, Example)]
    assert [e.x for e in arrivals] == [{"a": 0.5}, {"a": 1.5}]


def test_a_batcher_holding_block_rows_pickles_their_dicts():
    """A batcher pickled mid-batch (a checkpoint) keeps its examples' features as dicts, not
    the block they came in, and cuts the same batch after it."""
    import pickle

    import numpy as np

    from foldstream.operators.records.features import BlockExample, FeatureRows
    from foldstream.operators.stages.fanout import Batcher

    block = FeatureRows(np.arange(6.0).reshape(3, 2), ("a", "b"))
    batcher = Batcher("s", batch_size=3)
    for i in (0, 1):
        batcher.add(BlockExample("s", block, i, "u", None, None))
    state = pickle.dumps(batcher)
    assert b"FeatureRows" not in state
    restored = pickle.loads(state)
    for b in (batcher, restored):
        (batch,) = b.add(BlockExample("s", block, 2, "u", None, None))
        assert list(batch.xs) == [{"a": 0.0, "b": 1.0}, {"a": 2.0, "b": 3.0}, {"a": 4.0, "b": 5.0}]



# --------------------------------------------------------------------------------------------
# JSON Lines: values as JSON text, the hostile ones among them

JSON_NUMBERS = ["0", "1", "-1", "2.5", "-0.0", "1e5", "1E+05", "-2.5e-3", "0.1", "4.9e-324",
                "1e-400", "1.7976931348623157e308", "9007199254740991", "-9007199254740991",
                "0.1000000000000000055511151231257827021181583404541015625", "3.14159265358979323"]
JSON_HOSTILE = ["-0", "9007199254740992", "9007199254740993", "-9007199254740993",
                "18446744073709551615", "18446744073709551617", "123456789012345678901234567890",
                "9" * 400, "7" * 5000, "1e400", "-1e400", "1.7976931348623159e308", "NaN",
                "Infinity", "-Infinity", "true", "false", "null", '"1.5"', '""', '"NaN"', "[1]",
                "[]", '{"a": 1}', "{}", "01", "+1", ".5", "5.", "1e", "0x10", "1_0", '"\\u0031"',
                "- 1", "1.5.2", '"é"', "\u0661", "1 2"]
JSON_LABELS = ['"a"', '"b"', '" a "', '"b\\t"', "1", "2", "-3", "0", "2.0", "-0.0", "true", "false",
               '"é"', '"\\u00e9"', '"\\ud83d\\ude00"', "9007199254740993", "1e3"]
JSON_BAD_LABELS = ["2.5", "null", '""', '" "', "[1]", '{"a": 1}', "1e19", "18446744073709551617",
                   "1e300", "9007199254740993.0", '"\\ud800"', "NaN", "Infinity", "1" * 400,
                   '"\\u0000"', '"a\\"b"', "-0", "1e400"]
JSON_IDS = ['1', '"7"', '" 8 "', '"007"', "-3", "7.0", "7.5", '"x"', '""', "null", "true",
            '"1_000"', "123456789012345678901234567890", "1e19", '"-0"', "[1]", '"\\u0037"']


def _json_value(rng: random.Random, bad: float) -> str:
    return _value(rng, bad, JSON_HOSTILE, JSON_NUMBERS)


def _json_line(rng: random.Random, names: list[str], bad: float) -> bytes:
    """A JSON Lines line: mostly ``names`` in order with numbers, or broken in one way."""
    roll = rng.random()
    if roll < bad / 4:  # a line broken as a whole
        return rng.choice([b"", b"   ", b"\t", b"\x0c", b"[1, 2]", b"1", b'"x"', b"null", b"{",
                           b"{}", b'{"y": "a"}', b'{"y": "a", "f0": 1}{"y": "a"}',
                           b"\xef\xbb\xbf" + _json_line(rng, names, 0.0),
                           _json_line(rng, names, 0.0) + b"\r",
                           _json_line(rng, names, 0.0) + b" \x0c",
                           _json_line(rng, names, 0.0)[:-1],
                           b'{"y": "\xff", "f0": 1}', b'{"y": "a", "f0": 1, "f1": "\xc3\x28"}',
                           '{"y": "é", "f0": 1}'.encode(), "{\u00a0}".encode(),
                           b'{"f0": 1, "y": "' + b"z" * 100_000 + b'"}',
                           b"[" * 300 + b"]" * 300, b'{"a": ' + b"[" * 300 + b"]" * 300 + b"}"])
    pairs = [[name, _json_value(rng, bad)] for name in names]
    for pair in pairs:
        if pair[0] == "y":
            pair[1] = rng.choice(JSON_BAD_LABELS) if rng.random() < bad else rng.choice(JSON_LABELS)
        elif pair[0] == "id":
            pair[1] = rng.choice(JSON_IDS) if rng.random() < 0.5 else str(rng.randint(0, 10 ** 6))
    if rng.random() < bad:  # the keys of the row changed
        how = rng.randrange(5)
        if how == 0 and len(pairs) > 1:
            rng.shuffle(pairs)  # out of order
        elif how == 1:
            pairs.insert(rng.randrange(len(pairs) + 1), [rng.choice(names), _json_value(rng, 0.3)])
        elif how == 2:
            del pairs[rng.randrange(len(pairs))]  # a missing key
        elif how == 3:
            pairs.insert(rng.randrange(len(pairs) + 1), ["extra", _json_value(rng, 0.3)])
        else:
            pairs[rng.randrange(len(pairs))][0] = rng.choice(["f\\u0030", "F0", "f0 ", "é"])
    colon, comma = rng.choice([(":", ","), (": ", ", "), (" : ", " ,"), (":\t", ",")])
    text = "{" + comma.join(f'"{k}"{colon}{v}' for k, v in pairs) + "}"
    return text.encode("utf-8", "surrogatepass")


def _write_json(path: Path, rng: random.Random, lines: int, bad: float, with_id: bool) -> None:
    width = rng.randint(1, 7)
    names = [f"f{i}" for i in range(width)]
    names.insert(rng.randint(0, width), "y")
    if with_id:
        names.insert(rng.randint(0, width + 1), "id")
    body = b"\n".join(_json_line(rng, names, bad) for _ in range(lines))
    if rng.random() < 0.2:
        body = body.replace(b"\n", b"\r\n")
    if rng.random() < 0.2:
        body = b"\xef\xbb\xbf" + body  # a byte order mark at the start of the file
    data = body + rng.choice([b"", b"\n", b"\r\n", b"\n\n"])
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)


@pytest.mark.parametrize("seed", range(30))
def test_every_json_line_has_the_fate_the_row_parser_gives_it(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    monkeypatch.setattr(files, "_BLOCK", rng.choice([16, 50, 200, 4096]))
    path = tmp_path / ("data.jsonl" + (".gz" if seed % 3 == 0 else ""))
    bad = [0.0, 0.002, 0.02, 0.1, 0.4][seed % 5]
    with_id = seed % 4 == 1
    _write_json(path, rng, rng.randint(50, 700), bad, with_id)
    rows, fast, by_blocks = _both(monkeypatch, path, "y", "id" if with_id else None)
    _same(rows, fast)
    if bad <= 0.02:
        assert by_blocks > 0  # the block reader read some lines itself


@pytest.mark.parametrize("with_id", [False, True])
def test_each_hostile_json_line_alone_at_each_place_of_a_block(tmp_path, monkeypatch, with_id):
    """Each hostile value, label, id and line alone among plain rows: first, second, last of a
    block, and after a row of other keys."""
    monkeypatch.setattr(files, "_BLOCK", 32)

    def row(a: str = "1.5", y: str = '"u"', key: str = "3") -> bytes:
        return (f'{{"a": {a}, "y": {y}, ' + (f'"id": {key}, ' if with_id else "")
                + '"b": -2}').encode("utf-8", "surrogatepass")

    lines = [row(a=v) for v in JSON_HOSTILE] + [row(y=v) for v in JSON_BAD_LABELS + JSON_LABELS]
    if with_id:
        lines += [row(key=v) for v in JSON_IDS]
    lines += [b"", b" ", b"\xef\xbb\xbf" + row(), row() + b"\r", row()[:-1], b"[]",
              row().replace(b'"a"', b'"b"'), row().replace(b'"b"', b'"a"'),
              row().replace(b'"a": 1.5, ', b"") + b"", row().replace(b"}", b', "c": 1}'),
              row().replace(b"1.5", b"1.5, \"a\": 2"), row(a='"x\xff"')]
    for line in lines:
        for at in (0, 1, 15, 31, 32, 33):  # places in the blocks of 32 lines
            body = [row()] * 80
            body[at] = line
            if at >= 2:
                body[at - 1] = b'{"b": 1, "a": 2, "y": "u"}'  # keys in another order
            path = tmp_path / "f.jsonl"
            path.write_bytes(b"\n".join(body) + b"\n")
            rows, fast, by_blocks = _both(monkeypatch, path, "y", "id" if with_id else None)
            _same(rows, fast)
            assert by_blocks > 0, (line, at)


def test_a_json_file_of_numbers_is_read_by_blocks_in_any_key_order(tmp_path, monkeypatch):
    """Rows of numbers, integers among them, are all the block reader's, whatever the order of
    their keys (each block takes its most common order; the rest are the row parser's)."""
    rng = random.Random(1)
    lines = [f'{{"a": {i / 7}, "y": "c{i % 3}", "b": {-i}}}' for i in range(5000)]
    lines[100:110] = [f'{{"y": {i}, "b": {i}, "a": 0.5}}' for i in range(10)]
    path = tmp_path / "plain.jsonl"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(files, "_BLOCK", rng.choice([64, 4096]))
    rows, fast, by_blocks = _both(monkeypatch, path, "y", None)
    _same(rows, fast)
    assert by_blocks == 4990
    swapped = tmp_path / "swapped.jsonl"
    swapped.write_text("\n".join(f'{{"y": 1, "b": {i}, "a": 2}}' for i in range(300)) + "\n")
    rows, fast, by_blocks = _both(monkeypatch, swapped, "y", None)
    _same(rows, fast)
    assert by_blocks == 300 and list(rows[0].x) == ["b", "a"]

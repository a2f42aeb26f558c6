"""Rows in bulk (connectors/rows.py): the quick paths read a row exactly as the checks do.

Rows are read by quick paths when they are plain (a CSV line without a quote is split at its
commas; a row of plain finite numbers is read by one ``float`` per value; JSON is read by
orjson), and by the value-by-value checks of :mod:`foldstream.connectors.rows` otherwise. Each
test here reads fuzzed rows both ways, the quick path and the checks alone, and asserts the same
result: the same example (the same ``repr``: ``1.0`` is not ``1``, ``-0.0`` not ``0.0``) or the
same rejection with the same reason.
"""

from __future__ import annotations

import csv
import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from foldstream.connectors import files, rows
from foldstream.connectors.rows import Reject, RowSchema

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def outcome(read, *args):
    """What reading gives: the item's repr, or the reason of its rejection."""
    try:
        return "ok", repr(read(*args))
    except Reject as exc:
        return "reject", str(exc)
    except Exception as exc:  # the readers turn these into rejections too: compare them
        return "error", rows.unexpected(exc)


def checks_outcome(read, *args):
    """:func:`outcome` with the quick paths off: every row goes through the checks alone."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rows, "_quick_features", lambda row, schema: None)
        patch.setattr(rows, "orjson", _NoOrjson)
        patch.setattr(files, "columns_example", lambda *args: None)
        return outcome(read, *args)


class _NoOrjson:
    @staticmethod
    def loads(text):
        raise ValueError("off")


# ------------------------------------------------------------------------------- CSV splitting
@FUZZ
@given(st.text(alphabet=st.characters(blacklist_characters='"\r\n'), max_size=40)
       | st.text(alphabet=" ,a1\x00\t\x0b\x0c\x1c\x85\u2028'\\;", max_size=30))
def test_csv_lines_without_quotes_split_as_the_csv_module_splits_them(text):
    if not text:
        return  # blank lines are skipped before splitting
    (expected,) = csv.reader([text], strict=True)
    assert files._split(text) == expected


def test_a_field_longer_than_the_csv_module_reads_is_rejected_as_it_says():
    text = "1,2," + "a" * (csv.field_size_limit() + 1)
    with pytest.raises(Reject, match="field larger than field limit"):
        files._split(text)
    assert files._split(text[:-1]) == ["1", "2", "a" * csv.field_size_limit()]


# ---------------------------------------------------------------------------------- numbers
PLAIN = ["1", "-0", "0.5", " 2.5 ", "1e3", "+1", "1e-400", "00012", "\u0661\u0662", "9" * 400]
ODD = ["1E400", "-1e400", "1_000", "nan", "-inf", "Infinity", "0x10", "", " ", "?", "1.2.3",
       "abc", "\u0661_"]
# mostly plain numbers, so that a row with a single odd value is frequent
CELL = st.sampled_from(PLAIN * 6 + ODD) | st.text(alphabet="0123456789.eE+-_ naif", max_size=8)
LABEL_TEXT = st.sampled_from(["u", " d ", "", "  ", "1", "UP_1", "u", "d"])
ID_TEXT = st.sampled_from(["7", "-3", "007", "", " 12 ", "x", "-0", "1_0", "7", "8"])


@FUZZ
@given(st.lists(CELL, min_size=0, max_size=5), LABEL_TEXT, ID_TEXT,
       st.booleans(), st.booleans(), st.booleans(), st.booleans())
@example(["1_000", "1"], "u", "7", False, False, False, False)
@example(["1", "nan"], "u", "7", False, False, False, False)
@example(["1e400", "1"], "u", "7", False, False, False, False)
@example([" 2.5 ", "1"], "u", "007", False, True, False, False)
def test_csv_rows_read_as_the_checks_read_them(cells, label, key, short, with_id, nominal,
                                               declared):
    names = [f"f{i}" for i in range(len(cells))]
    columns = tuple(names + ["y"] + (["id"] if with_id else []))
    values = cells + [label] + ([key] if with_id else [])
    if short:
        values = values[:-1]  # one value short: rejected
    schema = RowSchema("csv", "y", "id" if with_id else None,
                       frozenset(names[:1]) if nominal else frozenset(), columns,
                       categories={"y": frozenset({"u", "d"})} if declared else {})
    text = ",".join(values)
    assert outcome(files._read_csv_line, text, schema, "s", "f:2") \
        == checks_outcome(files._read_csv_line, text, schema, "s", "f:2")


# ------------------------------------------------------------------------------------ ARFF
@FUZZ
@given(st.text(alphabet=st.characters(blacklist_characters="'\"\r\n"), max_size=40)
       | st.text(alphabet=" ,a1?%{}\t\x0b\x0c\x1c\x85\xa0\u2028\u3000\\", max_size=30))
def test_arff_lines_without_quotes_split_as_the_pattern_splits_them(text):
    assert files._split_arff(text) == files._split_arff_quoted(text)


ARFF_CELL = CELL | st.sampled_from(["?", " ? ", "%", "{1", "'1'", '"2"', "1 }"])


@FUZZ
@given(st.lists(ARFF_CELL, min_size=0, max_size=5), LABEL_TEXT | st.just("?"), ID_TEXT,
       st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.booleans())
@example(["1", "?"], "u", "7", False, False, False, True, False)
@example(["1", "2"], "?", "7", False, False, False, True, True)
@example(["{1", "2"], "u", "7", False, False, False, True, False)
def test_arff_rows_read_as_the_checks_read_them(cells, label, key, short, with_id, nominal,
                                                declared, question):
    """An ARFF data line read by the quick path (split at commas, :func:`columns_example`)
    and by the pattern and the checks alone: the same example, or the same rejection."""
    names = [f"f{i}" for i in range(len(cells))]
    columns = tuple(names + ["y"] + (["id"] if with_id else []))
    values = cells + [label] + ([key] if with_id else [])
    if short:
        values = values[:-1]
    allowed = {"u", "d", "?"} if question else {"u", "d"}
    schema = RowSchema("arff", "y", "id" if with_id else None,
                       frozenset(names[:1]) if nominal else frozenset(), columns,
                       categories={"y": frozenset(allowed)} if declared else {})
    text = ", ".join(values)

    def checks_alone(*args):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(files, "_split_arff", files._split_arff_quoted)
            return checks_outcome(files._read_arff_line, *args)
    assert outcome(files._read_arff_line, text, schema, "s", "f:2") \
        == checks_alone(text, schema, "s", "f:2")


JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(10 ** 30), 10 ** 30)
    | st.sampled_from([2 ** 63, -(2 ** 63) - 1, 2 ** 64, 10 ** 400, 2 ** 53 + 1])
    | st.floats(allow_nan=False) | st.floats(min_value=9e18, max_value=1e20)
    | st.floats(-1e6, 1e6) | st.floats(-1e6, 1e6)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3),
    max_leaves=8)
PLAIN_JSON = st.floats(-1e6, 1e6) | st.integers(-1000, 1000)
# rows of plain numbers with at most an odd value or two among them, and rows of anything
JSON_ROW = st.fixed_dictionaries(
    {"a": PLAIN_JSON, "c": PLAIN_JSON, "y": st.sampled_from(["u", 1, 2.0, True])},
    optional={"b": JSON_VALUE, "id": JSON_VALUE | st.integers(0, 9), "d": PLAIN_JSON,
              "e": JSON_VALUE}) \
    | st.dictionaries(st.sampled_from(["a", "b", "c", "y", "id"]), JSON_VALUE, max_size=5)


@FUZZ
@given(JSON_ROW, st.booleans(), st.booleans(), st.booleans())
@example({"a": 1, "b": float("inf"), "y": "u"}, False, False, False)
@example({"a": 1.5, "b": 10 ** 400, "y": "u"}, False, False, False)
@example({"a": 1.5, "b": True, "y": "u"}, False, False, False)
@example({"a": 1.5, "b": "1", "y": "u"}, False, False, False)
@example({"a": 1.5, "id": 2 ** 64, "y": 10 ** 20}, True, False, False)
def test_json_rows_read_as_the_checks_read_them(row, with_id, nominal, later):
    schema = RowSchema("jsonl", "y", "id" if with_id else None,
                       frozenset({"b"}) if nominal else frozenset(), labels_later=later)
    text = json.dumps(row, allow_nan=True)
    def read():
        return rows.to_item(rows.json_object(rows.parse_json(text)), schema, "s", "t@0")
    assert outcome(read) == checks_outcome(read)


JSON_PIECES = st.sampled_from(['{', '}', '[', ']', ',', ':', '"a"', '"\\ud800"',
                               '"\\ud83d\\ude00"',
                               '"\\u00e9"', '1', '-0', '01', '1.', '.5', '1e400', '-1e5',
                               '18446744073709551616', '-9223372036854775809', '1' * 25,
                               'NaN', 'Infinity', 'true', 'null', ' ', '\t', '\u00a0', '"\x00"',
                               '"x', '\ufeff', '9.3e18'])


@FUZZ
@given(st.lists(JSON_PIECES, max_size=12).map("".join) | st.text(max_size=20)
       | JSON_VALUE.map(lambda v: json.dumps(v, allow_nan=True)))
def test_json_texts_parse_as_json_parses_them(text):
    assert outcome(rows.parse_json, text) == checks_outcome(rows.parse_json, text)


def test_an_integer_beyond_64_bits_stays_an_integer():
    """orjson reads it as a float: such a text is read again by json."""
    wide = 10 ** 30
    assert rows.parse_json(f'{{"id": {wide}, "y": {2 ** 64}}}') == {"id": wide, "y": 2 ** 64}
    schema = RowSchema("jsonl", "y", "id", frozenset())
    example = rows.to_example(rows.parse_json(f'{{"id": {wide}, "y": 1, "a": 2}}'), schema,
                              "s", "t@0")
    assert (example.key, type(example.key)) == (wide, int)


@pytest.mark.parametrize("depth", [150, 250, 990, 1000, 1024, 1100])
def test_deep_nesting_is_read_as_json_reads_it(depth):
    """orjson reads 1,024 levels, json fewer (its limit depends on the stack)."""
    text = "[" * depth + "]" * depth
    assert outcome(rows.parse_json, text) == checks_outcome(rows.parse_json, text)

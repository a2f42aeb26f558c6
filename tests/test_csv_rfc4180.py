"""CSV as RFC 4180 says: a quoted field may hold line breaks, quotes (doubled) and separators.

Such a record is one row wherever a CSV file is read (the examples, the header, the progress
count, a run's summary), numbered by its first line; a quote that is never closed still costs
its own line only.
"""

from __future__ import annotations

import csv
import gzip
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldstream.connectors.files import count_rows, iter_file
from foldstream.job.cli import main
from foldstream.operators.records.base import Example, Rejected


def _quoted_rows(n: int, end: str = "\n") -> tuple[str, list[str]]:
    """``n`` rows of ``a,note,y``, every fourth note a quoted field holding a line break, a
    comma and a doubled quote; and the notes as read."""
    lines, notes = [f"a,note,y{end}"], []
    for i in range(n):
        note = f'row {i}{end}says ""hi"", then stops' if i % 4 == 0 else f"plain {i}"
        lines.append(f'{i},"{note}",{"ud"[i % 2]}{end}' if i % 4 == 0
                     else f"{i},{note},{'ud'[i % 2]}{end}")
        notes.append(note.replace('""', '"'))
    return "".join(lines), notes


@pytest.mark.parametrize("end", ["\n", "\r\n"])
@pytest.mark.parametrize("gz", [False, True])
def test_400_rows_with_quoted_line_breaks_are_400_examples(tmp_path, end, gz):
    text, notes = _quoted_rows(400, end)
    path = tmp_path / ("q.csv.gz" if gz else "q.csv")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    items = list(iter_file(path, label="y", nominal=["note"]))
    assert [type(item) for item in items] == [Example] * 400
    assert [item.x["note"] for item in items] == notes  # the line end kept, as written
    assert [item.x["a"] for item in items] == [float(i) for i in range(400)]
    lines = [1 + 1 + i + (i + 3) // 4 for i in range(400)]  # each row's first line
    assert [item.location for item in items] == [f"{path.name}:{n}" for n in lines]
    assert count_rows(path) == 400
    assert count_rows(path, at_most=10) == 10


def test_a_run_counts_400_rows_read_not_404(tmp_path):
    text, _ = _quoted_rows(400)
    (tmp_path / "q.csv").write_text(text)
    sink = tmp_path / "m.jsonl"
    assert main(["run", "--quiet", "--set", f"source={{kind: file, path: {tmp_path / 'q.csv'}, "
                 f"label: y, nominal: [note]}}", "--set", "evaluation.folds=2",
                 "--set", f"sink.path={sink}"]) == 0
    summary = [json.loads(line) for line in sink.read_text().splitlines()][-1]
    assert (summary["examples_read"], summary["examples_rejected"]) == (400, 0)


def test_quotes_and_separators_inside_quotes(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text('y,"a, the ""first""",b\nu,"1,2",3\nd,"say ""no""",""\n')
    first, second = iter_file(path, label="y", nominal=["a, the \"first\"", "b"])
    assert first.x == {'a, the "first"': "1,2", "b": "3"}
    assert isinstance(second, Rejected)  # an empty quoted field is a missing value
    assert second.reason == "line 3: column 'b': missing value"


def test_a_header_with_a_quoted_line_break_numbers_the_rows_after_it(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text('"first\nfeature",y\n1,u\n2,d\n')
    items = list(iter_file(path, label="y"))
    assert [item.x for item in items] == [{"first\nfeature": 1.0}, {"first\nfeature": 2.0}]
    assert [item.location for item in items] == ["h.csv:3", "h.csv:4"]
    assert count_rows(path) == 2


def test_a_quote_never_closed_costs_its_own_line_only(tmp_path):
    path = tmp_path / "o.csv"
    path.write_text('a,y\n1,u\n2,"open\n3,d\n4,u\n')
    items = list(iter_file(path, label="y"))
    assert [type(item) for item in items] == [Example, Rejected, Example, Example]
    assert items[1].location == "o.csv:3"
    assert items[1].reason == "line 3: malformed line (unexpected end of data)"
    assert [item.x["a"] for item in items if isinstance(item, Example)] == [1.0, 3.0, 4.0]
    assert count_rows(path) == 4


def test_a_quote_open_longer_than_the_csv_module_reads_costs_its_own_line_only(tmp_path):
    path = tmp_path / "l.csv"
    filler = "".join(f"{i},u\n" for i in range(csv.field_size_limit() // 6 + 10))
    path.write_text('a,y\n0,"long\n' + filler)
    items = list(iter_file(path, label="y"))
    assert isinstance(items[0], Rejected) and items[0].location == "l.csv:2"
    assert all(isinstance(item, Example) for item in items[1:])
    assert len(items) == 1 + filler.count("\n")


def test_a_stray_quote_closed_lines_later_costs_its_own_line_only(tmp_path):
    """Joined up to a later quote, the lines make no row of the header's width: each line is
    read as before, on its own."""
    path = tmp_path / "s.csv"
    path.write_text('a,b,y\n1,"2,u\n3,4,d\n5,"6"x,u\n7,8,d\n')
    items = list(iter_file(path, label="y"))
    assert [item.location.split(":")[1] for item in items] == ["2", "3", "4", "5"]
    assert [type(item) for item in items] == [Rejected, Example, Rejected, Example]
    assert count_rows(path) == 4


FIELD = st.text(alphabet='ab ,"\n\r\t\u00e9', min_size=1, max_size=8).filter(
    lambda t: t.strip() != "")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.lists(FIELD, min_size=3, max_size=3), max_size=12),
       end=st.sampled_from(["\n", "\r\n"]))
def test_any_file_the_csv_module_writes_is_read_row_for_row(tmp_path_factory, rows, end):
    """Rows of text with quotes, separators and line breaks, written by the csv module: each
    is one example, its values as the csv module reads them back (stripped, as categories)."""
    path = tmp_path_factory.mktemp("w") / "w.csv"
    with path.open("w", newline="") as file:
        # RFC 4180 quotes a field holding CR or LF; the csv module does only for the
        # characters of its line end, so with "\n" every field is quoted
        writer = csv.writer(file, lineterminator=end,
                            quoting=csv.QUOTE_MINIMAL if end == "\r\n" else csv.QUOTE_ALL)
        writer.writerow(["a", "b", "y"])
        writer.writerows(rows)
    with path.open(newline="") as file:
        expected = list(csv.reader(file))[1:]
    items = list(iter_file(path, label="y", nominal=["a", "b"]))
    assert [type(item) for item in items] == [Example] * len(expected)
    assert [(item.x["a"], item.x["b"], item.y) for item in items] \
        == [tuple(value.strip() for value in row) for row in expected]
    assert count_rows(path) == len(expected)

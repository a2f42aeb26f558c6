"""The fold evaluator's positive class (operators/evaluator.py, ``positive_code``):
``evaluation.positive_class`` matches a label by value, then by its text, so that ``1`` finds
the label ``"1"`` of a CSV stream; a positive class that matches no label is a warning under
the final tables and a summary field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from foldstream.job import exitcodes
from foldstream.job.cli import main
from foldstream.operators.evaluator import positive_code

ROOT = Path(__file__).resolve().parents[1]
LEARNERS = ("learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
            "{name: last, model: river.dummy.NoChangeClassifier}]")


def write(path: Path, text: str | bytes, gz: bool = False) -> Path:
    data = text.encode("utf-8") if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


# ------------------------------------------------------------------- evaluation.positive_class
def _summary_precision(tmp_path: Path, capsys, positive: str | None) -> list:
    """Run a small CSV stream (labels "0" first, then "1") in process; each learner's precision
    in the summary."""
    data = tmp_path / "s.csv"
    if not data.exists():
        rows = [f"{i % 7 / 7:.3f},{(i // 3) % 2}" for i in range(300)]
        data.write_text("x,target\n" + "\n".join(rows) + "\n")
    overrides = ["--set", f"source={{kind: file, path: '{data}', stream: s}}",
                 "--set", f"sink={{kind: stdout, dead_letter_path: '{tmp_path / 'dead.jsonl'}'}}",
                 "--set", LEARNERS, "--set", "evaluation.folds=2",
                 "--set", "evaluation.report_every=100"]
    if positive is not None:
        overrides += ["--set", f"evaluation.positive_class={positive}"]
    assert main(["run", "--quiet", *overrides]) == exitcodes.OK
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    summary = [r for r in records if r["type"] == "summary"]
    assert len(summary) == 1
    return [m["values"]["precision"]["mean"] for m in summary[0]["measures"]]


def test_an_integer_positive_class_finds_the_text_label_of_a_csv_stream(tmp_path, capsys):
    as_number = _summary_precision(tmp_path, capsys, "1")  # YAML: the integer 1
    assert None not in as_number
    assert as_number == _summary_precision(tmp_path, capsys, "'1'")  # the text "1": the label
    assert as_number != _summary_precision(tmp_path, capsys, None)  # the first seen: "0"


@pytest.mark.parametrize("classes,positive,code", [
    (["0", "1"], 1, 1),  # CSV, ARFF: text labels; YAML: a number
    (["0", "1"], "1", 1),
    ([0, 1], "1", 1),  # JSON Lines, Kafka: typed labels; YAML: quoted text
    ([0, 1], 1, 1),
    ([False, True], "true", 1),  # a generator's bool labels
    (["no", "yes"], True, 1),  # YAML reads `positive_class: yes` as true
    (["False", "True"], True, 1),  # Python's spelling of a bool in a CSV file
    (["b", "a"], None, 0),  # default: the class seen first
    (["0", "1"], 2, -1),  # not seen (yet): precision, recall and F1 are null
    (["1", "true"], True, 1),  # True == 1 in Python, but "1" is not the text of true
])
def test_the_positive_class_is_matched_by_value_then_by_its_text(classes, positive, code):
    assert positive_code(classes, positive) == code


# ----------------------------------------------------------------------------- positive_class
def run_with_positive(tmp_path: Path, capsys, positive: str) -> tuple[dict, str]:
    data = write(tmp_path / "s.csv", "x,target\n" + "".join(f"{i % 5},{i % 2}\n"
                                                             for i in range(60)))
    records = tmp_path / "out.jsonl"
    code = main(["run", "--set", f"source={{kind: file, path: '{data}', stream: s}}",
                 "--set", f"sink={{kind: file, path: '{records}', "
                          f"dead_letter_path: '{tmp_path / 'dead.jsonl'}'}}",
                 "--set", "learners=[{name: nc, model: river.dummy.NoChangeClassifier}]",
                 "--set", "evaluation.folds=2", "--set", f"evaluation.positive_class={positive}"])
    out = capsys.readouterr()
    assert code == exitcodes.OK, out.err
    summary = json.loads(records.read_text().splitlines()[-1])
    return summary, " ".join((out.out + out.err).split())


def test_a_positive_class_that_matches_no_label_is_a_warning_and_a_summary_field(
        tmp_path, capsys):
    from foldstream.job.tools.schema import validate_record

    summary, shown = run_with_positive(tmp_path, capsys, "up")
    assert summary["type"] == "summary" and summary["positive_class_not_seen"] == "up"
    validate_record(summary)
    assert ("warning: evaluation.positive_class 'up' matches no label of stream s: precision, "
            "recall and F1 are undefined") in shown
    summary, shown = run_with_positive(tmp_path, capsys, "1")
    assert "positive_class_not_seen" not in summary and "warning" not in shown

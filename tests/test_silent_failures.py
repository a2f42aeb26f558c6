"""Failures that used to pass unnoticed: each test here failed before its fix.

* ``evaluation.positive_class: 1`` on a CSV stream (text labels) left precision, recall and F1
  null for the whole run;
* the same unreachable broker ended ``foldstream run`` with exit code 2 and the cluster entry
  point with 1 (and a bounded Kafka source with a traceback after 30 s);
* the Flink engine's ``run(on_progress=...)`` ignored its argument, while the command line
  drew its bar from the records itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldstream.job import exitcodes
from foldstream.job.cli import main
from foldstream.operators.stages.evaluator import positive_code

ROOT = Path(__file__).resolve().parents[1]
LEARNERS = ("learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
            "{name: last, model: river.dummy.NoChangeClassifier}]")


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


# ------------------------------------------------------------------ one exit code for a dead broker
@pytest.fixture
def flink_never_starts(monkeypatch):
    """A short broker probe, and a Flink that fails the test if the job gets as far as it."""
    from foldstream.job.engines.flink import env as flink_env
    from foldstream.job.engines.flink import kafka as flink_kafka

    # kafka-python wants its request timeout above fetch_max_wait_ms (500 ms)
    monkeypatch.setattr(flink_kafka, "PREFLIGHT_TIMEOUT_S", 0.6)

    def no_flink(config):
        raise AssertionError("Flink was started before the broker was checked")

    monkeypatch.setattr(flink_env, "make_environment", no_flink)


def _one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("bounded", [False, True])
def test_foldstream_run_exits_unusable_when_no_broker_answers(
        bounded, free_port, flink_never_starts, tmp_path, capsys):
    dead = f"127.0.0.1:{free_port()}"
    code = main(["run", "--quiet",
                 "--set", f"source={{kind: kafka, bootstrap_servers: '{dead}', bounded: {str(bounded).lower()}}}",
                 "--set", "engine.kind=flink", "--set", f"sink.path={tmp_path / 'm.jsonl'}"])
    assert code == exitcodes.UNUSABLE == 2
    err = _one_line(capsys.readouterr().err)
    assert f"bootstrap servers {dead}" in err and "Traceback" not in err


def test_the_cluster_entry_point_exits_as_foldstream_run_does(free_port, flink_never_starts, capsys):
    from foldstream.job.engines.flink import main as flink_main

    dead = f"127.0.0.1:{free_port()}"
    code = flink_main.main([str(ROOT / "conf" / "compose.yaml"),
                            "--set", f"source.bootstrap_servers={dead}",
                            "--set", f"sink.bootstrap_servers={dead}"])
    assert code == exitcodes.UNUSABLE == 2
    assert f"bootstrap servers {dead}" in _one_line(capsys.readouterr().err)


def test_a_dead_kafka_sink_is_found_before_flink_starts(free_port, flink_never_starts, tmp_path, capsys):
    dead = f"127.0.0.1:{free_port()}"
    code = main(["run", "--quiet", "--set", "source.limit=10", "--set", "engine.kind=flink",
                 "--set", f"sink={{kind: kafka, bootstrap_servers: '{dead}'}}"])
    assert code == exitcodes.UNUSABLE
    assert f"bootstrap servers {dead}" in _one_line(capsys.readouterr().err)


# ----------------------------------------------------------------- progress of a Flink run
def test_the_command_line_hands_its_progress_bar_to_the_flink_job(monkeypatch, tmp_path):
    """The Flink job reports progress itself (``flink.run.deliver``), as the in-process engine
    does; the command line only passes its bar on."""
    from contextlib import contextmanager

    from foldstream.job.engines.flink import run as flink_run
    from foldstream.job.engines.flink.run import deliver
    from foldstream.job.tools import tables

    drawn: list[int] = []

    @contextmanager
    def bar(total, enabled, console):
        yield drawn.append

    def fake_run(config, emit, dead_letter, on_progress=None, **options):
        assert on_progress is not None, "the command line passed no progress callback"
        from foldstream.operators.records.outputs import SummaryRecord
        from foldstream.operators.records.base import dumps

        summary = SummaryRecord.at_end(stream="elec", position=9, read=10, rejected=1,
                                       wall_time_s=0.5, measures=[])
        deliver(['M{"type":"measures","stream":"elec","position":5,"learner":"a"}',
                 "M" + dumps(summary.as_dict())], emit, dead_letter, on_progress)

    monkeypatch.setattr(tables, "progress_bar", bar)
    monkeypatch.setattr(flink_run, "run", fake_run)  # where the command line takes it
    assert main(["run", "--quiet", "--set", "engine.kind=flink", "--set", "source.limit=10",
                 "--set", f"sink.path={tmp_path / 'm.jsonl'}"]) == exitcodes.OK
    assert drawn == [5, 10]

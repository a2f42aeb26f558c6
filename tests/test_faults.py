"""Nothing that a stream or a user sends kills a run or loses a record (issue 11, in-process side).

Each test feeds one kind of fault: a record of any size, a learner that raises, one label in
two types, bad learner parameters, a damaged gzip file, an unusable header or path, a signal,
an empty input, and lines of a metrics file that are not records. The run must go on (or stop
cleanly at start, exit code 2, no traceback), and every record it writes must follow the schema.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from river.naive_bayes import GaussianNB

from foldstream.job import cli, exitcodes
from foldstream.job.config import ConfigError, load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.job.tools.records import read_records
from foldstream.job.tools.schema import validate_record
from foldstream.operators.stages.learner import LearnerSpec
from foldstream.operators.records.base import DEAD_LETTER_MAX_BYTES

CHEAP = ("learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
         "{name: nochange, model: river.dummy.NoChangeClassifier}]")
SEA = "source={kind: generator, model: river.datasets.synth.SEA, limit: 300, seed: 3}"


def csv_text(n: int, start: int = 0) -> str:
    return "a,b,target\n" + "".join(f"{i % 7},{i % 5},{'xy'[i % 3 == 0]}\n"
                                    for i in range(start, start + n))


def run(*overrides: str) -> tuple[list[dict], list[dict]]:
    config = load_config(None, list(overrides))
    return evaluate_to_list(make_plans(config), open_source(config))


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ----------------------------------------------------------------------- 1. records of any size
def test_a_huge_line_is_rejected_with_a_bounded_prefix_its_length_and_hash(tmp_path):
    huge = "1,2," + "é" * 1_000_000  # one label of 2 MB: too few columns
    path = tmp_path / "huge.csv"
    path.write_text(csv_text(50) + huge + "\n" + csv_text(50, 50).split("\n", 1)[1],
                    encoding="utf-8")
    records, rejected = run(f"source.path={path}", CHEAP, "evaluation.folds=3")
    (dead,) = rejected
    validate_record(dead)
    whole = huge.encode("utf-8")
    assert dead["truncated"] is True
    assert dead["record_bytes"] == len(whole)
    assert dead["record_sha256"] == hashlib.sha256(whole).hexdigest()
    kept = dead["record"].encode("utf-8")
    assert len(kept) <= DEAD_LETTER_MAX_BYTES and whole.startswith(kept)
    assert len(kept) >= DEAD_LETTER_MAX_BYTES - 1  # cut at a character boundary, not before
    assert records[-1]["type"] == "summary" and records[-1]["examples_rejected"] == 1


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_dead_letter_that_cannot_be_written_is_counted_not_fatal(tmp_path, capsys):
    """/dev/full refuses every write, as a full disk does: the run ends normally with every
    report, and says how many rejected records were lost and why."""
    path = tmp_path / "bad.csv"
    path.write_text(csv_text(100) + "1,2\n" + csv_text(100, 100).split("\n", 1)[1]
                    + "3,4\n", encoding="utf-8")
    out = tmp_path / "m.jsonl"
    code = cli.main(["run", "--quiet", "--set", f"source.path={path}", "--set", CHEAP,
                     "--set", "evaluation.folds=3", "--set", "evaluation.report_every=50",
                     "--set", f"sink.path={out}", "--set", "sink.dead_letter_path=/dev/full"])
    assert code == exitcodes.OK
    records = read_jsonl(out)
    assert records[-1]["type"] == "summary" and records[-1]["examples_rejected"] == 2
    assert {r["position"] for r in records if r["type"] == "measures"} == {50, 100, 150, 200}
    err = " ".join(capsys.readouterr().err.split())
    assert "2 rejected records could not be written to /dev/full (No space left on device)" in err


def test_the_prefix_length_is_a_sink_key_and_short_records_are_whole(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(csv_text(20) + "1,zz,x\n" + "1,2,3,4,5,6,7,8,9\n", encoding="utf-8")
    _, rejected = run(f"source.path={path}", CHEAP, "evaluation.folds=3",
                      "sink.dead_letter_max_bytes=10")
    short, cut = rejected
    assert (short["record"], short["truncated"], short["record_bytes"]) == ("1,zz,x", False, 6)
    assert (cut["record"], cut["truncated"], cut["record_bytes"]) == ("1,2,3,4,5,", True, 17)
    for record in rejected:
        validate_record(record)


# ------------------------------------------------------------------ 2. learners that raise
class Exploding(GaussianNB):
    """A Gaussian NB that raises at its ``after``-th call of ``phase``."""

    def __init__(self, after: int = 50, phase: str = "learn"):
        super().__init__()
        self.after, self.phase, self.calls = after, phase, 0

    def _tick(self, phase: str) -> None:
        if phase == self.phase:
            self.calls += 1
            if self.calls == self.after:
                raise ZeroDivisionError("boom " + "x" * 2000)

    def learn_one(self, x, y, **kwargs):
        self._tick("learn")
        return super().learn_one(x, y, **kwargs)

    def predict_one(self, x, **kwargs):
        self._tick("predict")
        return super().predict_one(x, **kwargs)


def run_with(model, batch_size: int, folds: int = 3) -> list[dict]:
    config = load_config(None, [SEA, CHEAP, f"evaluation.folds={folds}",
                                "evaluation.mode=cv", "evaluation.report_every=100",
                                f"engine.batch_size={batch_size}"])
    plans = make_plans(config)
    bad = LearnerSpec("nb", "river.naive_bayes.GaussianNB", prototype=model)
    plans = dataclasses.replace(plans, learners=(bad,) + plans.learners[1:])
    records, _ = evaluate_to_list(plans, open_source(config))
    return records


@pytest.mark.parametrize("phase", ["learn", "predict"])
def test_a_learner_that_raises_is_quarantined_and_reported_once_per_fold(phase):
    records = run_with(Exploding(after=50, phase=phase), batch_size=16)
    errors = [r for r in records if r["type"] == "learner_error"]
    assert sorted(e["fold"] for e in errors) == [0, 1, 2]  # one per replica
    assert [e["position"] for e in errors] == sorted(e["position"] for e in errors)
    for error in errors:
        validate_record(error)
        assert error["learner"] == "nb" and error["phase"] == phase
        assert error["error"].startswith("ZeroDivisionError: boom") and len(error["error"]) <= 500
    # The run went on to its end, every learner measured at every report.
    summary = records[-1]
    assert summary["type"] == "summary" and summary["position"] == 300
    measures = [r for r in records if r["type"] == "measures"]
    assert [r["position"] for r in measures if r["learner"] == "nb"] == [100, 200, 300]
    assert [r["position"] for r in measures if r["learner"] == "nochange"] == [100, 200, 300]
    last_nb = [r for r in measures if r["learner"] == "nb"][-1]
    assert last_nb["values"]["accuracy"]["mean"] < 0.5  # its predictions count as wrong


def test_learner_errors_do_not_depend_on_the_batch_size():
    def comparable(records):
        return [r for r in records if r["type"] != "summary"]

    small = run_with(Exploding(after=70), batch_size=7)
    large = run_with(Exploding(after=70), batch_size=128)
    assert any(r["type"] == "learner_error" for r in small)
    assert comparable(small) == comparable(large)


def test_one_label_in_two_types_is_rejected_naming_both(tmp_path):
    path = tmp_path / "labels.jsonl"
    rows = [{"a": i, "label": lab} for i, lab in
            enumerate([1, 0, 1, "1", True, 0, 1, False, "0"] + [i % 2 for i in range(40)])]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    records, rejected = run(f"source.path={path}", "source.label=label", CHEAP,
                            "evaluation.folds=3")
    assert len(rejected) == 4
    assert [r["location"] for r in rejected] == [f"labels.jsonl:{n}" for n in (4, 5, 8, 9)]
    assert "'1' (str)" in rejected[0]["reason"] and "1 (int)" in rejected[0]["reason"]
    assert "True (bool)" in rejected[1]["reason"] and "(int)" in rejected[1]["reason"]
    for record in rejected:
        validate_record(record)
    assert [r["position"] for r in rejected] == [3, 3, 5, 5]
    summary = records[-1]
    assert summary["examples_rejected"] == 4 and summary["position"] == len(rows) - 4


def test_learner_parameters_are_checked_at_start(capsys):
    with pytest.raises(ConfigError, match=r"learners\.0\.params\.grace_period: "):
        load_config(None, ["learners.0.params={grace_period: abc}"])
    assert cli.main(["validate", "--set", "learners.0.params={grace_period: abc}"]) == 2
    assert "params.grace_period" in capsys.readouterr().err


def test_a_regressor_is_refused_at_start():
    with pytest.raises(ConfigError, match=r"learners\.0\.model: .*LinearRegression.* is a regressor"):
        load_config(None, ["learners.0.model=river.linear_model.LinearRegression"])


# ------------------------------------------------------------------------ 3. damaged files
def test_a_truncated_gzip_ends_the_source_with_a_rejected_record(tmp_path):
    rng = random.Random(1)  # incompressible enough that half the file holds many rows
    rows = "".join(f"{rng.random()},{rng.random()},{rng.choice('xy')}\n" for _ in range(3000))
    data = gzip.compress(("a,b,target\n" + rows).encode())
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(data[: len(data) // 2])
    out = tmp_path / "m.jsonl"
    code = cli.main(["run", "--quiet", "--set", f"source.path={path}", "--set", CHEAP,
                     "--set", "evaluation.folds=3", "--set", "evaluation.report_every=200",
                     "--set", f"sink.path={out}"])
    assert code == exitcodes.OK
    records = read_jsonl(out)
    (dead,) = read_jsonl(tmp_path / "m.rejected.jsonl")
    validate_record(dead)
    assert "cut.csv.gz is damaged at line" in dead["reason"] and "byte" in dead["reason"]
    assert dead["location"].startswith("cut.csv.gz:")
    summary = records[-1]
    assert summary["type"] == "summary" and summary["examples_rejected"] == 1
    read = summary["position"]
    assert 200 < read < 3000 and read == dead["position"]
    assert int(dead["location"].split(":")[1]) == read + 2  # header, then `read` rows
    positions = {r["position"] for r in records if r["type"] == "measures"}
    assert max(positions) == read  # everything read before the damage is evaluated


# ------------------------------------------------------------------------ 4. start-up checks
@pytest.mark.parametrize("content, overrides, expected", [
    ("a,b,y\n1,2,x\n", [], "source.label: label column 'target' is not in the header of "
                           "f.csv: ['a', 'b', 'y']"),
    ("a,a,target\n1,2,x\n", [], "column names must be unique"),
    ("", [], "f.csv is empty"),
    ("a,b,target\n1,2,x\n", ["source.id_field=key"], "source.id_field: id column 'key'"),
])
def test_an_unusable_header_fails_at_start(tmp_path, capsys, content, overrides, expected):
    path = tmp_path / "f.csv"
    path.write_text(content)
    args = ["--set", f"source.path={path}"] + [a for o in overrides for a in ("--set", o)]
    for command in ("validate", "run"):
        assert cli.main([command, *args, "--set", f"sink.path={tmp_path / 'm.jsonl'}"]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert "error:" in err and expected in err and "Traceback" not in err
    assert not (tmp_path / "m.jsonl").exists()


def test_directories_as_paths_fail_at_start_naming_the_key(tmp_path, capsys):
    assert cli.main(["validate", "--set", f"source.path={tmp_path}"]) == 2
    assert "source.path" in capsys.readouterr().err.replace("\n", " ")
    assert cli.main(["validate", "--set", f"source.path={tmp_path}"]) == 2
    assert "is a directory" in " ".join(capsys.readouterr().err.split())
    assert cli.main(["run", "--quiet", "--set", f"sink.path={tmp_path}"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "sink.path" in err and "is a directory" in err


# ------------------------------------------------------------------------ 5. signals
GENERATOR_RUN = ["--set", "source={kind: generator, model: river.datasets.synth.Agrawal, "
                          "limit: 5000000, seed: 1}",
                 "--set", CHEAP, "--set", "evaluation.folds=3",
                 "--set", "evaluation.report_every=100"]


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, exitcodes.TERMINATED),
                                          (signal.SIGINT, exitcodes.INTERRUPTED)])
def test_a_signal_ends_the_run_with_whole_reports_and_an_interrupted_summary(
        tmp_path, signum, code):
    out = tmp_path / "m.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "foldstream.job.cli", "run", "--quiet",
                                *GENERATOR_RUN, "--set", f"sink.path={out}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and out.stat().st_size > 0):  # the sink buffers: a few KB
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline
            time.sleep(0.1)
        process.send_signal(signum)
        assert process.wait(timeout=60) == code
    finally:
        if process.poll() is None:
            process.kill()
    assert b"Traceback" not in process.stderr.read()
    records = read_jsonl(out)
    summary = records[-1]
    assert summary["type"] == "summary" and summary["interrupted"] is True
    for record in records:
        validate_record(record)
    positions = sorted({r["position"] for r in records if r["type"] == "measures"})
    assert positions and positions == list(range(100, positions[-1] + 1, 100))
    def report(position: int) -> set[tuple]:  # what a report holds, alarms aside
        return {(r["type"], r.get("learner"), r.get("measure"), r.get("a"), r.get("b"))
                for r in records if r.get("position") == position
                and r["type"] in ("measures", "comparison")}

    whole = report(positions[0])
    assert {k[:2] for k in whole if k[0] == "measures"} == {("measures", "nb"),
                                                            ("measures", "nochange")}
    assert any(k[0] == "comparison" for k in whole)
    assert all(report(p) == whole for p in positions)  # every report whole, the last too
    assert summary["position"] >= positions[-1]


# ------------------------------------------------------------------------ 6. empty input
def test_an_input_with_no_rows_still_writes_a_summary(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("a,b,target\n")
    out = tmp_path / "m.jsonl"
    assert cli.main(["run", "--quiet", "--set", f"source={{kind: file, path: {path}}}",
                     "--set", CHEAP, "--set", f"sink.path={out}"]) == exitcodes.OK
    (summary,) = read_jsonl(out)
    validate_record(summary)
    assert (summary["type"], summary["stream"], summary["examples_read"],
            summary["position"]) == ("summary", "empty", 0, 0)


# ------------------------------------------------------------------------ 7. robust readers
def metrics_with_junk(tmp_path: Path) -> Path:
    records, _ = run(SEA, CHEAP, "evaluation.folds=3", "evaluation.report_every=100")
    junk = ["not json", "[1, 2]", '{"no": "type"}', '{"schema": 1, "type": "gauge"}',
            '{"schema": 1, "type": "measures", "stream": "s"}',
            '{"schema": 1, "type": "comparison", "position": 5}',
            '{"schema": 1, "type": "summary"}']
    lines = [json.dumps(r) for r in records]
    mixed = lines[:3] + junk + lines[3:] + junk
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(mixed) + "\n")
    return path


def test_readers_skip_and_count_lines_that_are_not_records(tmp_path):
    path = metrics_with_junk(tmp_path)
    skipped: list[str] = []
    records = read_records(path, on_skip=skipped.append)
    assert len(skipped) == 14
    assert any("not JSON" in s for s in skipped) and any("is a required property" in s for s in skipped)
    assert any("unknown type" in s for s in skipped)
    assert records[-1]["type"] == "summary"


def test_watch_skips_lines_that_are_not_records(tmp_path, capsys):
    path = metrics_with_junk(tmp_path)
    assert cli.main(["watch", "--no-follow", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "14 lines were not records" in out and "finished" in out


def test_plot_skips_lines_that_are_not_records(tmp_path, capsys):
    path = metrics_with_junk(tmp_path)
    assert cli.main(["plot", str(path), "--out", str(tmp_path / "plots")]) == 0
    assert list((tmp_path / "plots").glob("*.png"))

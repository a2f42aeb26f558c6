"""Configuration errors name their key; the command line runs the embedded default."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from foldstream.job import exitcodes
from foldstream.job.cli import main
from foldstream.job.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("override,key", [
    ("evaluation.mode=boot", "evaluation.mode"),
    ("evaluation.folds=1", "folds"),
    ("evaluation.window={kind: adwin, delta: 2}", "evaluation.window.delta"),
    ("evaluation.window={kind: sliding, delta: 0.1}", "evaluation.window"),
    ("evaluation.compare=[accuracy, acc]", "evaluation.compare"),
    ("evaluation.normalize=[kappa_m]", "evaluation.normalize"),
    ("evaluation.report_every=0", "evaluation.report_every"),
    ("evaluation.colour=red", "evaluation.colour"),
    ("learners.0.model=river.tree.NoSuchTree", "learners.0"),
    ("learners.0.params={nonsense: 1}", "learners.0"),
    ("learners.1.name=hoeffding_tree", "learners"),
    ("source.path=/no/such/file.csv", "source"),
    ("source.kind=generator", "source.generator.model"),
    ("engine.batch_size=0", "engine.batch_size"),
])
def test_a_bad_configuration_fails_at_start_naming_the_key(override, key):
    with pytest.raises(ConfigError) as info:
        load_config(None, [override])
    assert key in str(info.value)


def test_every_shipped_configuration_validates():
    for path in sorted((ROOT / "conf").glob("*.yaml")):
        assert load_config(path).learners, path


def test_validate_command_reports_the_key_and_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("source: {kind: generator, model: river.datasets.synth.SEA, limit: 10}\n"
                   "learners: [{name: a, model: river.tree.HoeffdingTreeClassifier}]\n"
                   "evaluation: {window: {kind: fading, alpha: 1.5}}\n")
    assert main(["validate", str(bad)]) == 2
    assert "evaluation.window.alpha" in capsys.readouterr().err
    assert main(["validate", str(bad), "--set", "evaluation.window.alpha=0.99"]) == 0


def test_run_generator_to_stdout(capsys):
    code = main(["run", "--quiet", "--set", "source={kind: generator, model: river.datasets.synth.SEA, "
                 "limit: 300, seed: 3}", "--set", "sink={kind: stdout, dead_letter_path: "
                 "out/ignored.jsonl}", "--set", "evaluation.folds=2", "--set", "evaluation.report_every=100"])
    assert code == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["stream"] for r in records} == {"sea"}
    assert [r["position"] for r in records if r["type"] == "measures"] == [100] * 3 + [200] * 3 + [300] * 3
    assert records[-1]["type"] == "summary"


@pytest.mark.slow  # the full default: 45,312 examples, 3 learners, 10 folds
def test_default_run_on_a_fresh_directory_ends_with_tables_and_a_summary(tmp_path):
    """`foldstream run` with no arguments: the packaged Electricity, the full default."""
    done = subprocess.run([sys.executable, "-m", "foldstream.job.cli", "run", "--no-progress"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr
    assert "paired tests over folds" in done.stdout and "hoeffding_tree" in done.stdout
    lines = (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()
    summary = json.loads(lines[-1])
    assert summary["type"] == "summary" and summary["position"] == 45_312
    assert summary["examples_rejected"] == 0
    assert [m["learner"] for m in summary["measures"]] == ["hoeffding_tree", "naive_bayes", "softmax"]
    rankings = [json.loads(line) for line in lines if '"type":"ranking"' in line]
    assert rankings and rankings[-1]["critical_difference"] > 0
    assert (tmp_path / "out" / "metrics.rejected.jsonl").read_text() == ""


def test_kafka_client_properties_reach_the_clients_as_kafka_spells_them():
    from foldstream.job.engines.flink.env import properties_text
    from foldstream.job.engines.flink.kafka import consumer_properties

    live = load_config(None, ["source={kind: kafka, properties: {security.protocol: SSL, "
                              "check.crcs: true}}", "engine.kind=flink"])
    assert consumer_properties(live) == {"security.protocol": "SSL", "check.crcs": "true",
                                         "fetch.max.wait.ms": "100"}  # a live source's default
    bounded = load_config(None, ["source={kind: kafka, bounded: true, properties: "
                                 "{fetch.max.wait.ms: 700}}", "engine.kind=flink"])
    assert consumer_properties(bounded) == {"fetch.max.wait.ms": "700"}
    sink = load_config(None, ["source={kind: kafka}", "sink={kind: kafka, properties: "
                              "{linger.ms: 5, enable.idempotence: false}}", "engine.kind=flink"])
    assert properties_text(sink.sink.properties) == {"linger.ms": "5", "enable.idempotence": "false"}


def test_an_error_no_check_foresaw_is_one_line_and_its_traceback_a_file(monkeypatch, capsys):
    """A failure that no check of foldstream foresaw (a bug, a job failing after it started)
    ends with one line naming it and the file holding its traceback, exit code 1: no traceback
    on the terminal (issue 18: no traceback reaches a user)."""
    from foldstream.job import cli

    def broken(*args, **kwargs):
        raise RuntimeError("an [unforeseen] failure\nsecond line")

    monkeypatch.setattr(cli, "run", broken)
    monkeypatch.delenv("FOLDSTREAM_TRACEBACK", raising=False)
    code = cli.main(["run", "--no-progress"])
    err = capsys.readouterr().err
    assert code == exitcodes.FAILED
    assert "Traceback" not in err and "second line" not in err
    assert "RuntimeError: an [unforeseen] failure" in " ".join(err.split())
    path = err.split("the traceback is in ")[1].split(")")[0].strip()
    assert "Traceback" in Path(path).read_text() and "second line" in Path(path).read_text()
    Path(path).unlink()
    monkeypatch.setenv("FOLDSTREAM_TRACEBACK", "1")
    with pytest.raises(RuntimeError):
        cli.main(["run", "--no-progress"])

"""``foldstream benchmark``: its cells repeat ``foldstream run``'s measures records byte for
byte, it resumes after SIGTERM without running a finished cell again, a bad key fails at start
naming it, and its files hold the tables, the figures and what made them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from foldstream.job.cli import main
from foldstream.job.tools.benchmark import cells, load_benchmark, read_results, run_cell, \
    run_config
from foldstream.operators.records.base import dumps

SEA = {"kind": "generator", "model": "river.datasets.synth.SEA"}
LEARNERS = [{"name": "nb", "model": "river.naive_bayes.GaussianNB"},
            {"name": "ht", "model": "river.tree.HoeffdingTreeClassifier"}]


def _write(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _small(tmp_path: Path, limit: int = 300, streams: int = 2) -> Path:
    return _write(tmp_path / "bench.yaml", {
        "streams": [{"kind": "file", "path": "package://elec.csv.gz", "stream": "elec"}]
                   + [{**SEA, "seed": s, "stream": f"sea{s}"} for s in range(1, streams)],
        "learners": LEARNERS, "limit": limit,
        "evaluation": {"folds": 3, "report_every": 100}})


def test_cells_repeat_a_plain_run_byte_for_byte(tmp_path):
    config = _small(tmp_path)
    written = yaml.safe_load(config.read_text())
    benchmark = load_benchmark(config)
    for stream, source in zip(benchmark.stream_names, written["streams"]):
        # the run a user writes by hand: the stream's source, every learner, the evaluation
        run_yaml = _write(tmp_path / f"{stream}.yaml", {
            "source": {**source, "limit": written["limit"]}, "learners": written["learners"],
            "evaluation": written["evaluation"]})
        assert load_benchmark(config) == benchmark and run_config(benchmark, stream)
        records = tmp_path / f"{stream}.jsonl"
        assert main(["run", str(run_yaml), "--quiet", "--set",
                     f"sink={{kind: file, path: {records}}}"]) == 0
        plain = [line for line in records.read_text(encoding="utf-8").splitlines()
                 if json.loads(line)["type"] == "measures"]
        for learner in benchmark.learner_names:
            from foldstream.job.tools.benchmark import Cell

            result, kept = run_cell(benchmark, Cell(stream, learner), keep=True)
            mine = [dumps(r) for r in kept if r["type"] == "measures"]
            theirs = [line for line in plain if json.loads(line)["learner"] == learner]
            assert mine == theirs and len(mine) == 3
            assert dumps(result.measures) == theirs[-1]


def test_command_writes_every_file(tmp_path):
    config = _small(tmp_path, streams=3)
    out = tmp_path / "out"
    assert main(["benchmark", str(config), "--out", str(out), "--quiet"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["benchmark.html", "cd.png", "cd.svg", "comparison.csv",
                            "comparison.md", "comparison.tex", "cost.csv", "results.jsonl",
                            "streams.png", "streams.svg"])
    command = f"foldstream benchmark {config} --out {out} --quiet"
    for name in names:
        if name == "results.jsonl":
            continue
        data = (out / name).read_bytes()
        assert command.encode() in data.replace(b"&quot;", b'"'), name  # the command
        assert b"river 0.23.0" in data, name  # the versions
        assert b"river.naive_bayes.GaussianNB" in data, name  # the configuration
    csv_lines = [line for line in (out / "comparison.csv").read_text().splitlines()
                 if not line.startswith("#")]
    header = csv_lines[0].split(",")
    assert header[:6] == ["stream", "learner", "accuracy_mean", "accuracy_sd", "accuracy_best",
                          "accuracy_worse_p"] or header[:4] == ["stream", "learner",
                                                                 "accuracy_mean", "accuracy_sd"]
    assert len(csv_lines) == 1 + 3 * 2
    markdown = (out / "comparison.md").read_text()
    assert "**" in markdown and "Friedman" in markdown and "Holm" in markdown
    tex = (out / "comparison.tex").read_text()
    assert "\\toprule" in tex and "\\bottomrule" in tex and "\\textbf{" in tex


def test_bad_key_fails_at_start_naming_it(tmp_path, capsys):
    config = _write(tmp_path / "bad.yaml", {
        "streams": [{**SEA, "limit": 10, "stremm": "x"}], "learners": LEARNERS,
        "evaluation": {"folds": 3}, "measure": ["accuracy"]})
    assert main(["benchmark", str(config), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "streams.0.generator.stremm" in err and "measure:" in err
    assert not (tmp_path / "o").exists()


def test_resumes_after_sigterm_without_rerunning_a_cell(tmp_path):
    config = _small(tmp_path, limit=1500, streams=3)
    out = tmp_path / "out"
    results = out / "results.jsonl"
    command = [sys.executable, "-m", "foldstream.job.cli", "benchmark", str(config), "--out",
               str(out), "--quiet"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if results.exists() and results.read_text().count("\n") >= 1:
            break
        time.sleep(0.05)
    assert process.poll() is None, "the benchmark ended before it could be stopped"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "the same command continues from there" in err
    first = results.read_text().splitlines()
    assert 1 <= len(first) < 6
    benchmark = load_benchmark(config)
    rerun = subprocess.run([*command[:-1]], env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{6 - len(first)} cells run, {len(first)} found" in rerun.stderr
    lines = results.read_text().splitlines()
    assert lines[:len(first)] == first  # the finished cells are kept as they were
    done, cut = read_results(results, benchmark)
    assert not cut and len(lines) == len(done) == 6
    assert sorted(r.key for r in done) == sorted(c.key for c in cells(benchmark))


def test_whole_stream_values_and_costs_from_the_records(tmp_path):
    """A record with ``whole_stream`` values and a summary with costs: the table shows both
    scopes, ranks the whole stream's, and the cost table takes the learners' CPU and sizes."""
    from foldstream.job.tools.benchmark import CellResult, validate_benchmark
    from foldstream.job.tools.benchmark.outputs import results_of

    benchmark = validate_benchmark({
        "streams": [{**SEA, "limit": 10, "seed": s, "stream": f"s{s}"} for s in (1, 2)],
        "learners": LEARNERS, "evaluation": {"folds": 3}})

    def record(window: float, whole: float) -> dict:
        def value(mean: float) -> dict:
            return {"accuracy": {"mean": mean, "std": 0.01, "folds": [mean] * 3},
                    "kappa_m": {"mean": mean / 2, "std": 0.01, "folds": [mean / 2] * 3}}
        return {"type": "measures", "values": value(window), "whole_stream": value(whole)}

    cells_ = [CellResult("f", s, learner, 10, 2.0, 1.5, record(w, h),
                         {"cpu_predict_s": {learner: 0.1}, "cpu_learn_s": {learner: 0.2},
                          "model_bytes": {learner: 1000}})
              for s in ("s1", "s2")
              for learner, w, h in (("nb", 0.9, 0.6), ("ht", 0.8, 0.7))]
    results = results_of(benchmark, cells_)
    assert results.scopes == ["whole", "window"] and results.rank_scope == "whole"
    table = results.comparison
    assert {"accuracy_whole_mean", "accuracy_whole_sd", "kappa_m_whole_mean"} <= set(table)
    assert results.ranks.index.tolist() == ["ht", "nb"]  # ht is better over the whole stream
    assert results.cost["cpu_s"].tolist() == pytest.approx([0.3] * 4)
    assert results.cost["model_bytes"].tolist() == [1000] * 4
    markdown = results.markdown()
    assert "## accuracy, whole stream" in markdown and "## accuracy, final window" in markdown
    assert "CPU seconds in predict and learn" in markdown

"""One way to run a configuration (job/runner.py): ``foldstream run`` and the Python API write the
same records, the summary included, whatever the file holds.

A second way to run would drift: not telling the engine a file's stream, say, an empty file
would give a ``summary`` record through one path and none through the other. Here each kind of
file runs through both, and the metrics and dead-letter files are compared byte for
byte but for the summary's two timing fields.
"""

from __future__ import annotations

import json
import random
import signal
from pathlib import Path

import pytest

import foldstream
from foldstream.job import api, cli
from foldstream.job.config import load_config
from foldstream.job.engines.stopping import Interrupted
from foldstream.job.runner import RunOutcome, known_streams, run_configuration
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.records.base import dumps

TIMING = SummaryRecord.TIMING_FIELDS  # the one list of the fields that vary from run to run
LEARNERS = {"nb": {"model": "river.naive_bayes.GaussianNB"},
            "prior": {"model": "river.dummy.PriorClassifier"}}


def _normal(n: int = 60) -> str:
    rng = random.Random(7)
    rows = []
    for _ in range(n):
        a, b = rng.random(), rng.random()
        rows.append(f"{a:.4f},{b:.4f},{'x' if a + b > 1 else 'y'}")
    return "a,b,target\n" + "\n".join(rows) + "\n"


FILES = {
    "empty": "a,b,target\n",
    "only_bad": "a,b,target\n1,2\nq,4,y,5\n5,6,\n",
    "normal": _normal(),
}


def _comparable(path: Path) -> list[str]:
    """The lines of a record file as bytes, a summary without its timing fields."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if '"type":"summary"' in line:
            line = dumps({k: v for k, v in json.loads(line).items() if k not in TIMING})
        out.append(line)
    return out


def _yaml(data: Path, sink: Path) -> str:
    learners = ", ".join(f"{{name: {name}, model: {spec['model']}}}"
                         for name, spec in LEARNERS.items())
    return (f"source: {{kind: file, path: {json.dumps(str(data))}}}\n"
            f"evaluation: {{folds: 3, report_every: 20, compare: [accuracy]}}\n"
            f"learners: [{learners}]\n"
            f"sink: {{kind: file, path: {json.dumps(str(sink))}}}\n")


@pytest.mark.parametrize("kind", list(FILES))
def test_the_api_and_the_cli_write_the_same_records(tmp_path, kind):
    data = tmp_path / f"{kind}.csv"
    data.write_text(FILES[kind], encoding="utf-8")
    by_cli, by_api, by_run = (tmp_path / "cli.jsonl", tmp_path / "api.jsonl",
                              tmp_path / "run.jsonl")
    config = tmp_path / "run.yaml"
    config.write_text(_yaml(data, by_cli), encoding="utf-8")
    assert cli.main(["run", str(config), "--quiet"]) == 0

    results = foldstream.evaluate(str(data), LEARNERS, folds=3, report_every=20,
                                  compare=["accuracy"], sink={"path": str(by_api)})
    from_yaml = api.run(load_config(str(config), [f"sink.path={json.dumps(str(by_run))}"]),
                        write=True)

    expected = _comparable(by_cli)
    assert expected[-1].startswith('{"schema":1,"type":"summary","stream":"' + kind + '"')
    assert _comparable(by_api) == expected
    assert _comparable(by_run) == expected
    rejected = by_cli.with_name("cli.rejected.jsonl").read_bytes()
    assert by_api.with_name("api.rejected.jsonl").read_bytes() == rejected
    assert by_run.with_name("run.rejected.jsonl").read_bytes() == rejected
    assert len(rejected.splitlines()) == (3 if kind == "only_bad" else 0)
    # the records kept in memory are those written
    for kept in (results, from_yaml):
        assert [_strip(r) for r in kept.records] == [json.loads(line) for line in expected]
        assert kept.rejected == [json.loads(line) for line in rejected.splitlines()]


def _strip(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in TIMING or record["type"] != "summary"}


def test_run_configuration_keeps_collects_and_calls_back(tmp_path):
    data = tmp_path / "s.csv"
    data.write_text(FILES["normal"], encoding="utf-8")
    config = load_config(None, [f"source={{kind: file, path: {json.dumps(str(data))}}}",
                                "learners=[{name: nb, model: river.naive_bayes.GaussianNB}]",
                                "evaluation.folds=2", "evaluation.report_every=30"])
    seen, read = [], []
    outcome = run_configuration(config, write=False, keep=True, on_record=seen.append,
                                on_progress=read.append)
    assert [r["type"] for r in outcome.records] == ["measures", "measures", "summary"]
    assert seen == outcome.records and read[-1] == 60
    assert [s.as_dict() for s in outcome.summary.summaries] == outcome.records[-1:]
    assert outcome.interrupted is None and outcome.dead_letters_lost == 0
    assert known_streams(config) == ["s"]


def test_a_python_object_source_has_no_known_stream_and_an_interrupted_outcome_raises():
    config, _ = api.make_config([({"a": 1.0}, "x")], {"nb": LEARNERS["nb"]}, folds=2)
    assert known_streams(config) == []
    with pytest.raises(Interrupted) as stop:
        RunOutcome(interrupted=signal.SIGTERM).raise_if_interrupted()
    assert stop.value.exit_code == 143


def test_the_api_imports_nothing_private_and_not_the_command_line():
    """The API ran configurations through ``cli._open_sinks``, a cycle cli -> experiment -> api ->
    cli kept alive by function-local imports; both now import job/runner.py."""
    import ast
    import subprocess
    import sys

    tree = ast.parse((Path(api.__file__)).read_text(encoding="utf-8"))
    private = [f"{node.module}.{alias.name}" for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) for alias in node.names
               if alias.name.startswith("_") and node.module != "__future__"]
    assert private == []
    loaded = subprocess.run([sys.executable, "-c", "import sys, foldstream.job.api; "
                             "print(sorted(m for m in sys.modules if m.startswith('foldstream.job.')"
                             " and m.rsplit('.', 1)[-1] in ('cli', 'experiment')))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"

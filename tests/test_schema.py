"""The JSON Schema of the output records holds every record the engine writes, and only those.

Small in-process runs cover every mode and window kind, prequential and holdout, with live
verdicts off and on (the ``sequential`` object, ``verdict`` records), three learners (ranking
records), normalised measures, a multi-class stream and bad input (rejected records); every
record they write is validated. Then broken records must be refused.
"""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from foldstream.job import cli
from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.job.tools.records import RecordError, RecordReader, RecordSource, read_records
from foldstream.job.tools.schema import SCHEMA_RESOURCE, load_schema, schema_text, \
    validate_record
from foldstream.operators.stats.auc import SCORE_MEASURES
from foldstream.operators.stats.measures import MEASURES
from foldstream.operators.stats.normalization import NORMALIZABLE

CHEAP_LEARNERS = ("learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
                  "{name: nochange, model: river.dummy.NoChangeClassifier}]")
THREE_LEARNERS = ("learners=[{name: ht, model: river.tree.HoeffdingTreeClassifier}, "
                  "{name: nb, model: river.naive_bayes.GaussianNB}, "
                  "{name: nochange, model: river.dummy.NoChangeClassifier}]")
SEA = "source={kind: generator, model: river.datasets.synth.SEA, limit: 240, seed: 3}"
RBF3 = ("source={kind: generator, model: river.datasets.synth.RandomRBF, limit: 240, "
        "params: {n_classes: 3, n_features: 4}}")
LED = "source={kind: generator, model: river.datasets.synth.LED, limit: 200}"
VERDICTS = "evaluation.verdicts.enabled=true"
WINDOWS = {
    "cumulative": "{kind: cumulative}",
    "sliding": "{kind: sliding, size: 60}",
    "fading": "{kind: fading, alpha: 0.98}",
    "adwin": "{kind: adwin, delta: 0.002}",
}

# Rows a file source must reject: a non-numeric feature, too few columns, NaN, an empty label.
BAD_CSV = "a,b,target\n1,2,x\n1,zz,y\n3\n1,nan,x\n2,3,\n" + "".join(
    f"{i % 7},{i % 5},{'xy'[i % 3 == 0]}\n" for i in range(150))


def run(*overrides: str) -> tuple[list[dict], list[dict]]:
    config = load_config(None, list(overrides))
    return evaluate_to_list(make_plans(config), open_source(config))


def assert_all_valid(records: list[dict]) -> None:
    whole = jsonschema.Draft202012Validator(load_schema())
    for record in records:
        validate_record(record)
        whole.validate(record)  # the schema as a dashboard reads it: the top-level oneOf


def types(records: list[dict]) -> set[str]:
    return {r["type"] for r in records}


# ------------------------------------------------------------------------------ engine output
def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(load_schema())


def test_the_committed_schema_is_what_the_record_classes_generate():
    from importlib import resources

    committed = (resources.files("foldstream.job.tools") / SCHEMA_RESOURCE).read_text("utf-8")
    assert committed == schema_text(), (
        "job/tools/schema/records.schema.json differs from the record classes "
        "(foldstream.operators.records.outputs): regenerate it with python -m foldstream.job.tools.schema")


def test_the_schema_names_every_measure_the_engine_computes():
    values = load_schema()["$defs"]["values"]
    assert tuple(values["required"]) == MEASURES
    assert set(values["properties"]) == set(MEASURES + SCORE_MEASURES)
    norm = next(p for p in values["patternProperties"] if p.startswith("^norm_"))
    assert set(norm.removeprefix("^norm_(").removesuffix(")$").split("|")) == set(NORMALIZABLE)


MODES = ("bootstrap", "cv", "split", "single")


def every_mode_and_window():
    """All 64 combinations; ``-m "not slow"`` keeps 8 of them: every mode meets two windows
    and every window two modes, once prequential and once not; half of them with verdicts."""
    for prequential in (True, False):
        for m, mode in enumerate(MODES):
            for w, window in enumerate(WINDOWS):
                for verdicts in (False, True):
                    sample = w == (m + (0 if prequential else 2)) % 4 and verdicts == (m % 2 == 1)
                    yield pytest.param(
                        mode, window, prequential, verdicts, marks=() if sample else pytest.mark.slow,
                        id=f"{prequential}-{mode}-{window}-{'verdicts' if verdicts else ''}")


@pytest.mark.parametrize("mode,window,prequential,verdicts", list(every_mode_and_window()))
def test_every_mode_and_window_writes_valid_records(mode, window, prequential, verdicts):
    records, rejected = run(SEA, CHEAP_LEARNERS, f"evaluation.mode={mode}", "evaluation.folds=3",
                            f"evaluation.window={WINDOWS[window]}", "evaluation.report_every=80",
                            f"evaluation.prequential={str(prequential).lower()}",
                            f"evaluation.verdicts.enabled={str(verdicts).lower()}")
    assert {"measures", "comparison", "summary"} <= types(records)
    assert not rejected
    assert_all_valid(records)
    accuracy = [r for r in records if r["type"] == "comparison" and r["measure"] == "accuracy"]
    assert all(("sequential" in r) == verdicts for r in accuracy)
    measures = [r for r in records if r["type"] == "measures"]
    assert {r["mode"] for r in measures} == {mode}
    assert {r["window"]["kind"] for r in measures} == {window}


def test_single_holdout_tests_nothing_and_every_measure_is_null():
    """single + holdout only trains: every value is undefined (null) and still valid."""
    records, _ = run(SEA, CHEAP_LEARNERS, "evaluation.mode=single", "evaluation.prequential=false",
                     "evaluation.report_every=100", VERDICTS)
    assert_all_valid(records)
    last = [r for r in records if r["type"] == "measures"][-1]
    assert last["values"]["accuracy"] == {"mean": None, "std": None, "folds": [None]}
    accuracy = [r for r in records if r["type"] == "comparison" and r["measure"] == "accuracy"]
    assert accuracy[-1]["sequential"]["n"] == 0  # nothing scored: an empty sequence, still valid


def test_three_learners_normalised_measures_and_alarms():
    records, _ = run("source.limit=300", THREE_LEARNERS, "evaluation.folds=4",
                     "evaluation.report_every=100", "evaluation.normalize=[kappa, f1]",
                     "evaluation.alarms.page_hinkley.threshold=5")
    assert {"measures", "comparison", "ranking", "alarm", "summary"} <= types(records)
    assert_all_valid(records)
    measures = [r for r in records if r["type"] == "measures"]
    assert all({"norm_kappa", "norm_f1", "recall[0]", "recall[1]"} <= set(r["values"])
               for r in measures)
    assert all("normalization" in r for r in measures)
    assert {r["detector"] for r in records if r["type"] == "alarm"} <= {"adwin", "page_hinkley"}


@pytest.mark.parametrize("source", [RBF3, LED], ids=["rbf3", "led"])
def test_multi_class_streams(source):
    records, _ = run(source, THREE_LEARNERS, "evaluation.mode=cv", "evaluation.folds=3",
                     "evaluation.report_every=60", "evaluation.normalize=[mcc]",
                     "evaluation.window={kind: sliding, size: 50}", VERDICTS)
    assert_all_valid(records)
    last = [r for r in records if r["type"] == "measures"][-1]
    assert sum(name.startswith("recall[") for name in last["values"]) >= 3
    assert last["values"]["norm_mcc"]["mean"] is None  # not binary: undefined, not 0


def test_bad_input_gives_valid_rejected_records(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(BAD_CSV)
    records, rejected = run(f"source.path={path}", "source.stream=bad", CHEAP_LEARNERS,
                            "evaluation.folds=3", "evaluation.report_every=50")
    assert len(rejected) == 4
    assert_all_valid(records + rejected)
    assert all(r["type"] == "rejected" and r["stream"] == "bad" for r in rejected)
    summary = records[-1]
    assert summary["type"] == "summary" and summary["examples_rejected"] == 4


# ----------------------------------------------------------------------------- bad records
@pytest.fixture(scope="module")
def good() -> dict[str, dict]:
    """One record of every type, from a real run (the comparison: one of accuracy, with its
    ``sequential`` object)."""
    records, _ = run(SEA, "source.limit=300", THREE_LEARNERS, "evaluation.folds=3",
                     "evaluation.report_every=100", "evaluation.alarms.page_hinkley.threshold=3",
                     VERDICTS)
    by_type = {r["type"]: r for r in records}
    by_type["comparison"] = next(r for r in records if "sequential" in r)
    by_type["rejected"] = {"schema": 1, "type": "rejected", "stream": None, "position": None,
                           "reason": "message t@0 has no key", "location": "t@0", "record": "{}",
                           "record_bytes": 2, "record_sha256": "44136fa355b3678a1146ad16f7e8649e"
                           "94fb4fc21fe77e8310c060f61caaff8a", "truncated": False}
    assert set(by_type) == {"measures", "comparison", "verdict", "ranking", "alarm", "drift",
                            "summary", "rejected"}
    return by_type


def _broken(record: dict, path: tuple, value=..., delete: bool = False) -> dict:
    record = copy.deepcopy(record)
    node = record
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return record


BROKEN = [
    ("measures", ("learner",), None, True, "'learner' is a required property"),
    ("measures", ("values", "accuracy", "mean"), "0.8", False, "at values.accuracy.mean"),
    ("measures", ("values", "accuracy", "folds", 0), "high", False, "values.accuracy.folds[0]"),
    ("measures", ("values", "kappa"), None, True, "'kappa' is a required property"),
    ("measures", ("values", "recal[x]"), {"mean": 1, "std": 0, "folds": [1]}, False, "recal[x]"),
    ("measures", ("window", "kind"), "tumbling", False, "at window"),
    ("measures", ("mode",), "loo", False, "at mode"),
    ("measures", ("position",), -1, False, "at position"),
    ("measures", ("extra",), 1, False, "'extra' was unexpected"),
    ("comparison", ("wilcoxon", "p_value"), 1.5, False, "at wilcoxon.p_value"),
    ("comparison", ("sign", "reject"), "yes", False, "at sign.reject"),
    ("comparison", ("mcnemar", "example_based"), False, False, "at mcnemar.example_based"),
    ("comparison", ("sequential", "verdict"), "b", False, "at sequential.verdict"),
    ("comparison", ("sequential", "lower"), -1.5, False, "at sequential.lower"),
    ("comparison", ("sequential", "variance"), None, True, "'variance' is a required property"),
    ("verdict", ("previous",), "tie", False, "at previous"),
    ("verdict", ("measure",), "kappa", False, "at measure"),
    ("verdict", ("n",), -1, False, "at n"),
    ("verdict", ("alpha",), 0, False, "at alpha"),
    ("verdict", ("upper",), None, True, "'upper' is a required property"),
    ("ranking", ("critical_difference",), None, True, "'critical_difference' is a required"),
    ("alarm", ("fold",), "3", False, "at fold"),
    ("drift", ("folds",), [], False, "at folds"),
    ("drift", ("first",), None, True, "'first' is a required property"),
    ("comparison", ("scope", "window_size", "a"), None, True, "'a' is a required property"),
    ("comparison", ("sequential", "regime", "segment"), 0, False, "at sequential.regime.segment"),
    ("verdict", ("scope",), "window", False, "at scope"),
    ("alarm", ("detector",), "ddm", False, "at detector"),
    ("summary", ("examples_read",), 1.5, False, "at examples_read"),
    ("summary", ("measures", 0, "values"), None, True, "at measures[0]"),
    ("rejected", ("record",), None, True, "'record' is a required property"),
]


@pytest.mark.parametrize("kind,path,value,delete,message", BROKEN,
                         ids=[f"{b[0]}:{'.'.join(map(str, b[1]))}" for b in BROKEN])
def test_broken_records_are_refused_with_the_field_named(good, kind, path, value, delete, message):
    assert_all_valid([good[kind]])
    record = _broken(good[kind], path, value, delete)
    with pytest.raises(RecordError, match=f"^{kind} record") as caught:
        validate_record(record)
    assert message in str(caught.value)
    with pytest.raises(jsonschema.ValidationError):  # the schema alone refuses it too
        jsonschema.validate(record, load_schema(), cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize("change,message", [
    ({"type": "gauge"}, "unknown type 'gauge'"),
    ({"type": None}, "unknown type None"),
    ({"schema": 2}, "schema 2 is not 1"),
    ({"schema": "1"}, "schema '1' is not 1"),
])
def test_unknown_types_and_other_schema_versions_are_refused(good, change, message):
    record = {**good["alarm"], **change}
    with pytest.raises(RecordError, match=message):
        validate_record(record)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(record, load_schema(), cls=jsonschema.Draft202012Validator)


def test_a_record_must_be_an_object():
    with pytest.raises(RecordError, match="JSON object"):
        validate_record([1, 2])


# ---------------------------------------------------------------------- reading, command line
def test_the_reader_skips_what_is_not_a_record_and_keeps_an_unterminated_last_line(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"type": "a"}\n\n[1]\n{broken\n{"type": "b"}')
    skipped = []
    assert [r["type"] for r in read_records(path, on_skip=skipped.append, check=False)] == ["a", "b"]
    assert len(skipped) == 2 and f"{path}:3" in skipped[0] and f"{path}:4" in skipped[1]


def test_sources_are_paths_or_kafka_urls(tmp_path):
    assert RecordSource.parse(tmp_path / "x.jsonl").path == tmp_path / "x.jsonl"
    kafka = RecordSource.parse("kafka://h1:9092,h2:9092/metrics")
    assert (kafka.bootstrap, kafka.topic, kafka.is_kafka) == ("h1:9092,h2:9092", "metrics", True)
    for bad in ("kafka://host:9092", "kafka:///metrics", "kafka://h:1/a/b"):
        with pytest.raises(ValueError, match="kafka://HOST:PORT/TOPIC"):
            RecordSource.parse(bad)


def test_following_a_file_sees_lines_appended_later(tmp_path):
    path = tmp_path / "m.jsonl"
    batches = RecordReader(path, follow=True, poll_interval=0.01, check=False).batches()
    assert next(batches) == []  # the file does not exist yet: wait for it
    path.write_text('{"type": "a"}\n{"type": "b"')  # "b" is still being written
    assert [r["type"] for r in next(batches)] == ["a"]
    assert next(batches) == []
    with path.open("a") as f:
        f.write('}\n')
    assert [r["type"] for r in next(batches)] == ["b"]
    path.write_text('{"type": "c"}\n')  # a new run replaces the file: read it from the start
    got = [r for _ in range(3) for r in next(batches)]
    assert [r["type"] for r in got] == ["c"]
    batches.close()


def test_schema_command_prints_the_schema_and_checks_files(tmp_path, capsys, good):
    assert cli.main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == load_schema()
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in good.values()))
    assert cli.main(["schema", "--check", str(path)]) == 0
    assert "8 records checked" in capsys.readouterr().out
    with path.open("a") as f:
        f.write(json.dumps({**good["alarm"], "fold": -1}) + "\nnot json\n")
    assert cli.main(["schema", "--check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "alarm record" in out and "at fold" in out and ":10: not JSON" in out

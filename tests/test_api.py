"""The Python API (``import foldstream``): the records of ``foldstream run``, from Python objects.

Every run here is compared with the command line on the equivalent YAML configuration, byte for
byte but for the summary's two timing fields, so the API cannot drift from the path both engines
take (``make_plans``, ``open_source``).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import re
from pathlib import Path

import pytest
from river import linear_model, naive_bayes, tree
from river.datasets import Phishing, synth

import foldstream
from foldstream.job import cli
from foldstream.job.api import make_config
from foldstream.job.config import ConfigError, GeneratorSource
from foldstream.job.plans import make_plans
from foldstream.operators.stages.learner import LearnerSpec
from foldstream.operators.records.outputs import RejectedRecord, SummaryRecord
from foldstream.operators.records.base import Rejected, dumps

ROOT = Path(__file__).resolve().parents[1]
TIMING = SummaryRecord.TIMING_FIELDS  # the one list of the fields that vary from run to run


def comparable(lines: list[str]) -> list[str]:
    """Record lines as exact bytes; a summary without its timing fields (they vary)."""
    out = []
    for line in lines:
        if '"type":"summary"' in line:
            record = json.loads(line)
            line = dumps({k: v for k, v in record.items() if k not in TIMING})
        out.append(line)
    return out


def api_lines(results: foldstream.Results, folder: Path) -> tuple[list[str], list[str]]:
    metrics, rejected = folder / "api.jsonl", folder / "api.rejected.jsonl"
    results.to_jsonl(metrics, rejected=rejected)
    return (comparable(metrics.read_text(encoding="utf-8").splitlines()),
            rejected.read_text(encoding="utf-8").splitlines())


def cli_lines(config_text: str, folder: Path) -> tuple[list[str], list[str]]:
    """``foldstream run`` on a YAML configuration: its metrics and dead-letter lines."""
    config = folder / "run.yaml"
    config.write_text(config_text, encoding="utf-8")
    metrics = folder / "cli" / "metrics.jsonl"
    assert cli.main(["run", str(config), "--quiet", "--set",
                     f"sink={{kind: file, path: {json.dumps(str(metrics))}}}"]) == 0
    rejected = metrics.with_name("metrics.rejected.jsonl")
    return (comparable(metrics.read_text(encoding="utf-8").splitlines()),
            rejected.read_text(encoding="utf-8").splitlines())


SEA_YAML = """
source: {kind: generator, model: river.datasets.synth.SEA, seed: 1, limit: 1200}
evaluation: {folds: 3, report_every: 400, window: {kind: cumulative}, compare: [accuracy, kappa]}
learners:
  - {name: ht, model: river.tree.HoeffdingTreeClassifier, params: {grace_period: 50}}
  - {name: nb, model: river.naive_bayes.GaussianNB}
"""


@pytest.mark.slow  # runs twice
def test_generator_object_and_model_objects_give_the_records_of_the_cli(tmp_path):
    ht, nb = tree.HoeffdingTreeClassifier(grace_period=50), naive_bayes.GaussianNB()
    before = pickle.dumps((ht, nb))
    results = foldstream.evaluate(synth.SEA(seed=1), {"ht": ht, "nb": nb}, limit=1200, folds=3,
                                  report_every=400, window="cumulative",
                                  compare=["accuracy", "kappa"])
    assert pickle.dumps((ht, nb)) == before  # cloned per fold, never trained in place
    assert ht.n_nodes in (0, None) and len(nb.gaussians) == 0
    api, api_rejected = api_lines(results, tmp_path)
    cli_metrics, cli_rejected = cli_lines(SEA_YAML, tmp_path)
    assert api == cli_metrics
    assert api_rejected == cli_rejected == []
    kinds = [json.loads(line)["type"] for line in api]
    assert kinds.count("measures") == 2 * 3 and kinds.count("comparison") == 2 * 3
    assert kinds[-1] == "summary"


CSV = """a,b,colour,target
0.1,1.5,red,yes
0.4,oops,blue,no
""" + "".join(f"{i / 97:.4f},{(i * 7) % 13 / 3:.4f},{('red', 'blue', 'green')[i % 3]},"
              f"{'yes' if (i * 5) % 11 > 4 else 'no'}\n" for i in range(700))


@pytest.mark.slow  # runs twice per format
@pytest.mark.parametrize("name", ["data.csv", "data.jsonl.gz"])
def test_a_file_source_gives_the_records_and_dead_letters_of_the_cli(tmp_path, name):
    path = tmp_path / name
    if name.endswith(".csv"):
        path.write_text(CSV, encoding="utf-8")
    else:
        header, *rows = CSV.splitlines()
        keys = header.split(",")
        lines = [json.dumps(dict(zip(keys, [_number(v) for v in row.split(",")])))
                 for row in rows]
        lines[1] = lines[1].replace('"b": "oops"', '"b": "oops",')  # not JSON: rejected
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
    learners = [LearnerSpec("nb", "river.compose.Pipeline",
                            args=[{"model": "river.compose.Discard", "args": ["colour"]},
                                  {"model": "river.naive_bayes.GaussianNB"}]),
                {"name": "ht", "model": "river.tree.HoeffdingTreeClassifier",
                 "params": {"grace_period": 50}}]
    results = foldstream.evaluate({"path": str(path), "nominal": ["colour"]}, learners,
                                  mode="cv", folds=4, report_every=250, limit=600)
    api, api_rejected = api_lines(results, tmp_path)
    cli_metrics, cli_rejected = cli_lines(f"""
source: {{kind: file, path: {json.dumps(str(path))}, nominal: [colour], limit: 600}}
evaluation: {{mode: cv, folds: 4, report_every: 250}}
learners:
  - name: nb
    model: river.compose.Pipeline
    args: [{{model: river.compose.Discard, args: [colour]}}, {{model: river.naive_bayes.GaussianNB}}]
  - {{name: ht, model: river.tree.HoeffdingTreeClassifier, params: {{grace_period: 50}}}}
""", tmp_path)
    assert api == cli_metrics
    assert api_rejected == cli_rejected and len(api_rejected) == 1
    assert json.loads(api[-1])["stream"] == "data" and json.loads(api[-1])["examples_rejected"] == 1
    assert len(results.rejected) == 1 and results.rejected[0]["position"] == 1


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return text


@pytest.mark.slow  # many runs
def test_every_form_of_a_source_and_a_learner_gives_the_same_records():
    keywords = dict(folds=2, report_every=200)
    spec = {"model": "river.naive_bayes.GaussianNB"}
    reference = foldstream.evaluate(
        {"kind": "generator", "model": "river.datasets.synth.SEA", "seed": 3, "limit": 500},
        {"nb": spec}, **keywords).records
    same = [
        foldstream.evaluate(synth.SEA(seed=3), {"nb": naive_bayes.GaussianNB()}, limit=500,
                            **keywords),
        foldstream.evaluate(GeneratorSource(kind="generator", model="river.datasets.synth.SEA",
                                            seed=3, limit=10), [{"name": "nb", **spec}],
                            limit=500, **keywords),  # limit= overrides the section's
        foldstream.evaluate(synth.SEA(seed=3), {"nb": LearnerSpec("nb", **spec)}, limit=500,
                            **keywords),
        foldstream.evaluate(synth.SEA(seed=3), [LearnerSpec(
            "nb", "river.naive_bayes.GaussianNB", prototype=naive_bayes.GaussianNB())],
            limit=500, **keywords),
        foldstream.evaluate(list(synth.SEA(seed=3).take(500)), {"nb": naive_bayes.GaussianNB()},
                            stream="sea", **keywords),
    ]
    strip = lambda records: [dumps({k: v for k, v in r.items() if k not in TIMING}) for r in records]
    for results in same:
        assert strip(results.records) == strip(reference)
    other = foldstream.evaluate(synth.SEA(seed=3), {"nb": naive_bayes.GaussianNB()}, limit=500,
                                folds=2, report_every=200, seed=2)
    assert strip(other.records) != strip(reference)  # the evaluation's seed does reach the fan-out


def test_plans_with_model_objects_pickle_and_train_clones():
    prototype = linear_model.LogisticRegression()
    config, _ = make_config(synth.SEA(seed=1), {"lr": prototype}, limit=10, folds=2)
    plans = pickle.loads(pickle.dumps(make_plans(config)))  # what Flink keeps in state
    spec = plans.learners[0]
    assert spec.name == "lr" and spec.model == "river.linear_model.log_reg.LogisticRegression"
    task = plans.learner_task(0, 1)
    assert type(task.model) is linear_model.LogisticRegression
    assert task.model is not spec.prototype and task.model is not prototype
    assert plans.learner_task(0, 0).model is not task.model


@pytest.mark.parametrize("keywords,message", [
    ({"folds": 0}, "evaluation.folds: Input should be greater than or equal to 1"),
    ({"mode": "cv", "folds": 1}, "evaluation: folds: mode cv needs at least 2 folds"),
    ({"window": "hopping"}, "evaluation.window.kind: Input should be"),
    ({"window": {"kind": "sliding", "delta": 0.1}}, "evaluation.window: delta does not apply"),
    ({"compare": ["acc"]}, "evaluation.compare: unknown measure 'acc'"),
    ({"foldz": 3}, "foldz: not a keyword of foldstream.evaluate"),
    ({"engine": "spark"}, "engine.kind: Input should be 'inprocess' or 'flink'"),
    ({"engine": {"batch_size": 0}}, "engine.batch_size: Input should be greater than"),
    ({"sink": {"kind": "kafka"}}, "sink.kind: kafka needs engine.kind: flink"),
    ({"limit": 0}, "source.limit: Input should be greater than or equal to 1"),
])
def test_a_bad_keyword_fails_naming_its_key(keywords, message):
    keywords = {"limit": 10, **keywords}
    with pytest.raises(foldstream.ConfigError) as raised:
        foldstream.evaluate(synth.SEA(seed=1), {"nb": naive_bayes.GaussianNB()}, **keywords)
    assert message in str(raised.value)
    assert foldstream.ConfigError is ConfigError


@pytest.mark.parametrize("source,learners,message", [
    ("no/such.csv", {"nb": naive_bayes.GaussianNB()}, "source.file: source.path: no such file"),
    ({"kind": "generator", "model": "river.datasets.synth.SEA"}, {"nb": naive_bayes.GaussianNB()},
     "source.generator.limit: Field required"),
    (synth.SEA(), {"nb": naive_bayes.GaussianNB()}, "limit: SEA never ends; pass limit=N"),
    (42, {"nb": naive_bayes.GaussianNB()}, "source: expected a file path"),
    ([], {"nb": {"model": "river.nope.Model"}}, "learners.nb.model: cannot import 'river.nope.Model'"),
    ([], {"nb": {"model": "river.naive_bayes.GaussianNB", "params": {"x": 1}}},
     "learners.nb.params.x: cannot build river.naive_bayes.GaussianNB"),
    ([], [naive_bayes.GaussianNB()], "learners.0: a model object needs a name"),
    ([], {"a b": naive_bayes.GaussianNB()}, "learners.a b.name: String should match pattern"),
    ([], {"x": object()}, "learners.x: object has no predict_one(): not a river classifier"),
    ([], {"x": LearnerSpec("y", "river.naive_bayes.GaussianNB")}, "learners.x: the learner is named 'y'"),
    ([], [{"name": "a", "model": "river.naive_bayes.GaussianNB"}] * 2,
     "learners: learner names must be unique; repeated: a"),
    ([], {}, "learners: List should have at least 1 item"),
    ([], "river.naive_bayes.GaussianNB", "learners: expected a dict of name -> model"),
])
def test_a_bad_source_or_learner_fails_naming_it(source, learners, message):
    with pytest.raises(ConfigError) as raised:
        foldstream.evaluate(source, learners, limit=5 if source == [] else None)
    assert message in str(raised.value)


def test_an_iterable_of_pairs_and_a_bundled_dataset():
    items = [({"a": 1.0}, "x"), "junk", ({"a": 2.0}, None), ({"a": 3.0}, "y")] * 60
    results = foldstream.evaluate(iter(items), {"nb": naive_bayes.GaussianNB()}, folds=2,
                                  report_every=50)
    assert results.records[-1]["stream"] == "stream" and results.records[-1]["position"] == 120
    assert [r["reason"] for r in results.rejected[:2]] == [
        "item 2: not a pair (x: a mapping of features, y: the label)", "item 3: the label is None"]
    assert len(results.rejected) == 120 and results.rejected[0]["position"] == 1
    phishing = foldstream.evaluate(Phishing(), {"nb": naive_bayes.GaussianNB()}, folds=2,
                                   report_every=1000)
    assert phishing.records[-1]["stream"] == "phishing"
    assert phishing.records[-1]["examples_read"] == Phishing().n_samples
    with pytest.raises(ConfigError, match="iter_pandas"):
        import pandas as pd

        foldstream.evaluate(pd.DataFrame({"a": [1.0]}), {"nb": naive_bayes.GaussianNB()})


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """A three-learner run and the command line's standard output on the same configuration."""
    results = foldstream.evaluate(
        synth.Agrawal(seed=2), {"ht": tree.HoeffdingTreeClassifier(), "nb": naive_bayes.GaussianNB(),
                                "lr": {"model": "river.linear_model.LogisticRegression"}},
        limit=900, folds=4, report_every=300)
    folder = tmp_path_factory.mktemp("three")
    config = folder / "three.yaml"
    config.write_text("""
source: {kind: generator, model: river.datasets.synth.Agrawal, seed: 2, limit: 900}
evaluation: {folds: 4, report_every: 300}
learners:
  - {name: ht, model: river.tree.HoeffdingTreeClassifier}
  - {name: nb, model: river.naive_bayes.GaussianNB}
  - {name: lr, model: river.linear_model.LogisticRegression}
""")
    import contextlib

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["run", str(config), "--no-progress", "--set",
                         f"sink={{kind: file, path: {json.dumps(str(folder / 'm.jsonl'))}}}"]) == 0
    return results, out.getvalue()


def test_tables_hold_the_records(three):
    results, _ = three
    measures = [r for r in results.records if r["type"] == "measures"]
    table = results.measures()
    assert len(table) == sum(len(r["values"]) for r in measures)
    assert list(table.columns) == ["stream", "position", "learner", "measure", "mean", "std",
                                   "fold_0", "fold_1", "fold_2", "fold_3"]
    last = measures[-1]  # lr at 900
    row = table[(table.position == 900) & (table.learner == "lr") & (table.measure == "kappa_m")]
    assert row["mean"].item() == pytest.approx(last["values"]["kappa_m"]["mean"])
    assert row[["fold_0", "fold_1", "fold_2", "fold_3"]].values.tolist()[0] == \
        pytest.approx(last["values"]["kappa_m"]["folds"])
    accuracy = results.measures("accuracy")
    assert set(accuracy.measure) == {"accuracy"} and len(accuracy) == 3 * 3
    assert len(results.measures(["accuracy", "kappa"])) == 2 * 3 * 3
    with pytest.raises(ValueError, match="no measure 'acc'"):
        results.measures("acc")

    comparisons = results.comparisons()
    records = [r for r in results.records if r["type"] == "comparison"]
    assert len(comparisons) == len(records) == 3 * 3 * 2  # positions x pairs x measures
    first = comparisons.iloc[0]
    assert (first.a, first.b, first.measure) == ("ht", "nb", "accuracy")
    assert first.wilcoxon_p == pytest.approx(records[0]["wilcoxon"]["p_value"])
    assert first.mcnemar_p == pytest.approx(records[0]["mcnemar"]["p_value"])
    assert comparisons.better.isin(["ht", "nb", "lr", None]).all()
    assert {"sign_p", "wins_a", "wins_b", "q", "verdict"} <= set(comparisons.columns)

    alarms = results.alarms()
    assert len(alarms) == sum(r["type"] == "alarm" for r in results.records)
    assert list(alarms.columns) == ["stream", "position", "learner", "fold", "detector", "quantity"]
    empty = foldstream.Results([]).alarms()
    assert list(empty.columns) == list(alarms.columns) and empty.empty


def test_the_summary_is_the_cli_tables(three):
    results, cli_out = three
    text = str(results.summary())

    def tables(output: str) -> list[str]:
        """The lines above the timing footer, without the times two runs cannot share."""
        lines = output.splitlines()
        lines = lines[:next(i for i, line in enumerate(lines) if "records read" in line)]
        lines = [lines[0].rsplit(" · ", 1)[0], *lines[1:]]  # the head line ends with the time
        words = [line.split() for line in lines]  # columns widen with the CPU seconds
        return [" ".join(w[:-3] + w[-2:]) if re.fullmatch(r"[kMG]?B", w[-1]) and len(w) > 3
                else " ".join(w) for w in words]  # a learner's row: ... CPU-s size unit

    assert tables(text) == tables(cli_out)
    assert "agrawal · 900 examples" in text and "Wilcoxon" in text and "McNemar" in text
    html = results._repr_html_()
    assert html.startswith("<pre") and "agrawal · 900 examples" in html
    assert html == results.summary()._repr_html_()
    from rich.console import Console

    console = Console(file=io.StringIO(), width=100, force_terminal=True)
    console.print(results.summary())
    assert "\x1b[" in console.file.getvalue() and "kappa_m" in console.file.getvalue()
    assert "no summary record" in str(foldstream.Results([]).summary())


@pytest.mark.slow  # figures
def test_plot_returns_the_figures_and_writes_them(three, tmp_path):
    results, _ = three
    figures = results.plot("kappa", out=tmp_path / "plots", formats=("png", "svg"))
    assert list(figures) == ["agrawal-kappa", "agrawal-window_size", "agrawal-pvalues",
                             "agrawal-verdicts", "agrawal-cd-accuracy", "agrawal-cd-kappa_m"]
    assert type(figures["agrawal-kappa"]).__name__ == "Figure"
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == sorted(
        f"{stem}.{fmt}" for stem in figures for fmt in ("png", "svg"))
    with pytest.raises(ValueError, match="no measures records"):
        foldstream.Results([]).plot()


def test_jsonl_round_trip_skips_what_is_not_a_record(three, tmp_path):
    results, _ = three
    path = results.to_jsonl(tmp_path / "m.jsonl")
    again = foldstream.Results.from_jsonl(path)
    assert again.records == results.records and again.skipped == 0
    assert again.to_jsonl(tmp_path / "again.jsonl").read_bytes() == path.read_bytes()
    lines = path.read_text(encoding="utf-8").splitlines()
    rejected = dumps(RejectedRecord.of(Rejected("s", "r", "x", "f:2", 0)).as_dict())
    dump = ["% a Kafka topic dump", *lines[:3], "{not json", '{"type": "measures"}', "[1, 2]",
            "", rejected, *lines[3:]]
    with gzip.open(tmp_path / "dump.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join(dump))
    for name in ("dump.jsonl", "dump.jsonl.gz"):
        if name == "dump.jsonl":
            (tmp_path / name).write_text("\n".join(dump), encoding="utf-8")
        read = foldstream.Results.from_jsonl(tmp_path / name)
        assert read.records == results.records and read.skipped == 4
        assert [r["reason"] for r in read.rejected] == ["r"]
    with pytest.raises(FileNotFoundError):
        foldstream.Results.from_jsonl(tmp_path / "none.jsonl")


def test_a_sink_gets_the_bytes_of_the_cli_and_progress_draws(tmp_path, capsys):
    sink = tmp_path / "sink" / "m.jsonl"
    results = foldstream.evaluate(synth.SEA(seed=1), {"nb": naive_bayes.GaussianNB()}, limit=300,
                                  folds=2, report_every=100, sink={"path": str(sink)},
                                  progress=True)
    assert sink.read_bytes() == results.to_jsonl(tmp_path / "again.jsonl").read_bytes()
    assert (tmp_path / "sink" / "m.rejected.jsonl").read_text() == ""
    assert "evaluating" in capsys.readouterr().err


# --------------------------------------------------------------------------------- README
def readme_section(text: str, title: str = "## From Python") -> str:
    """A section of the README, to the next heading of its level."""
    start = text.index(f"\n{title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def code_block(section: str, language: str) -> str:
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow  # the README's example in full
def test_the_readme_example_runs_and_gives_the_records_of_the_cli(tmp_path, monkeypatch, capsys):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme_section(readme)
    command_line = readme_section(readme, "## From the command line")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code_block(section, "python"), "README.md: From Python", "exec"), namespace)
    results = namespace["results"]
    assert results.records[-1]["type"] == "summary" and results.records[-1]["position"] == 5000
    assert set(results.measures("accuracy").learner) == {"ht", "nb"}
    printed = capsys.readouterr().out
    assert "sea · 5,000 examples" in printed and "wilcoxon_p" in printed
    assert sorted(os.listdir("plots")) == sorted(f"{stem}.png" for stem in namespace["figures"])
    assert "sea-accuracy" in namespace["figures"]
    api = comparable(Path("out/metrics.jsonl").read_text(encoding="utf-8").splitlines())
    cli_metrics, _ = cli_lines(code_block(command_line, "yaml"), tmp_path)
    assert api == cli_metrics and len(api) > 10


@pytest.mark.slow
@pytest.mark.flink
def test_the_flink_engine_runs_objects_to_the_same_records():
    keywords = dict(limit=600, folds=3, report_every=200)
    learners = lambda: {"ht": tree.HoeffdingTreeClassifier(), "nb": naive_bayes.GaussianNB()}
    inprocess = foldstream.evaluate(synth.SEA(seed=1), learners(), **keywords)
    flink = foldstream.evaluate(synth.SEA(seed=1), learners(), engine={"kind": "flink"}, **keywords)
    records = lambda results: sorted(dumps(r) for r in results.records if r["type"] != "summary")
    assert records(flink) == records(inprocess) and len(records(flink)) > 0


def test_live_verdicts_reach_the_tables():
    """A strong learner against the prior: a decided live verdict shows in both tables."""
    from river import dummy

    results = foldstream.evaluate(synth.SEA(seed=3), {"ht": tree.HoeffdingTreeClassifier(),
                                                      "prior": dummy.PriorClassifier()},
                                  limit=2000, folds=3, report_every=250)
    verdicts = results.verdicts()
    records = [r for r in results.records if r["type"] == "verdict"]
    assert len(verdicts) == len(records) >= 1
    first = verdicts.iloc[0]
    assert (first.a, first.b, first.previous, first.verdict) == ("ht", "prior", "undecided", "a_better")
    assert first.upper < 0 and first.position == records[0]["position"]

    comparisons = results.comparisons()
    accuracy = comparisons[comparisons.measure == "accuracy"]
    others = comparisons[comparisons.measure != "accuracy"]
    assert accuracy.sequential_verdict.notna().all() and others.sequential_verdict.isna().all()
    decided = accuracy[accuracy.position >= first.position]
    assert (decided.sequential_verdict == "a_better").all()
    assert (decided.sequential_upper < 0).all()
    assert (accuracy.sequential_lower <= accuracy.sequential_upper).all()

"""``foldstream experiment`` (docs/method.md §14): the small experiment end to end, rates and
intervals on hand-made replication results, 1 vs 2 workers, resuming, stopping, and errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from foldstream.job import exitcodes
from foldstream.job.cli import main
from foldstream.job.config import ConfigError
from foldstream.job.tools import experiment as ex  # ex.run: where the runner looks run_replication up
from foldstream.job.tools.experiment import LOOKS, TESTS, Outcome, ReplicationResult, \
    load_experiment, read_results, rejection_rates, run_experiment, wilson

TINY = Path(__file__).resolve().parents[1] / "conf" / "experiments" / "tiny.yaml"
#: A smaller version of the tiny experiment, for the tests that run it more than once.
SMALLER = ["n=400", "report_every=200", "modes=[split, bootstrap]", "replications=2"]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _outcomes(line: dict) -> tuple:
    """A results line without its timing."""
    return tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in line.items()
                        if k not in ("wall_time_s", "cpu_time_s")))


# ------------------------------------------------------------------------------- end to end
def test_the_small_experiment_end_to_end(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["experiment", str(TINY), "--out", str(out), "--workers", "2"]) == exitcodes.OK
    printed = capsys.readouterr().out
    assert "rejection rates, pooled (6 runs per cell" in printed

    experiment = load_experiment(TINY)
    lines = _lines(out / "results.jsonl")
    keys = {(l["dataset"], l["mode"], l["replication"]) for l in lines}
    assert len(lines) == len(keys) == 2 * 3 * 3  # datasets x modes x replications
    conditions = ["no_change", "noise_0.05", "noise_0.10", "exact_null"]
    for line in lines:
        assert list(line["outcomes"]) == conditions
        assert all(list(tests) == list(TESTS) for tests in line["outcomes"].values())
        assert line["examples"] == 2000 and line["reports"] == 4
        assert set(line["accuracy"]) == {"A", "B", "B_noise_0.05", "B_noise_0.10", "E1", "E2"}
        for tests in line["outcomes"].values():
            for o in tests.values():
                assert o["final"] <= o["any"]  # the final report is one of the reports
                assert (o["first"] is not None) == o["any"]

    # rates.json: every (dataset or all, mode, condition, test, look), recomputed here from
    # the results file by counting
    rates = json.loads((out / "rates.json").read_text())
    assert len(rates) == 3 * 3 * 4 * len(TESTS) * 2
    assert set(rates[0]) == {"dataset", "mode", "condition", "test", "look", "rate", "low",
                             "high", "replications"}
    for rate in rates:
        mine = [l for l in lines if rate["dataset"] in ("all", l["dataset"])
                and l["mode"] == rate["mode"]]
        hits = sum(l["outcomes"][rate["condition"]][rate["test"]][rate["look"]] for l in mine)
        assert rate["replications"] == len(mine) == (6 if rate["dataset"] == "all" else 3)
        assert rate["rate"] == pytest.approx(hits / len(mine))
        assert (rate["low"], rate["high"]) == pytest.approx(wilson(hits, len(mine)))
    assert {r["dataset"] for r in rates} == {"sea", "elec", "all"}
    # the noise filters change something: McNemar detects 10% noise in most runs
    detected = [r for r in rates if r["dataset"] == "all" and r["condition"] == "noise_0.10"
                and r["test"] == "mcnemar" and r["look"] == "final"]
    assert sum(r["rate"] for r in detected) / len(detected) > 0.5

    # table.md: Bifet et al.'s layout, rows tests x looks, columns condition x mode
    table = (out / "table.md").read_text()
    sections = [line for line in table.splitlines() if line.startswith("## ")]
    assert sections == ["## pooled over the datasets (6 runs per cell)", "## sea (3 runs per cell)",
                        "## elec (3 runs per cell)"]
    pooled = table.split("## pooled over the datasets")[1].split("## sea")[0]
    rows = [line for line in pooled.splitlines() if line.startswith("|")]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    assert header == ["test"] + [f"{c}<br>{m}" for c in conditions
                                 for m in ("bootstrap", "cv", "split")]
    assert len(rows) == 2 + len(TESTS) * len(LOOKS)
    first = [c.strip() for c in rows[2].strip("|").split("|")]
    assert first[0] == "McNemar, final report"
    cell = next(r for r in rates if (r["dataset"], r["condition"], r["mode"], r["test"],
                                     r["look"]) == ("all", "no_change", "bootstrap", "mcnemar",
                                                    "final"))
    assert first[1] == f"{cell['rate']:.2f} ({cell['low']:.2f}–{cell['high']:.2f})"
    assert (out / "rates.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert experiment.replications == 3


# ----------------------------------------------------------------------- rates and intervals
def _result(dataset: str, mode: str, replication: int, final: bool, any_: bool) -> ReplicationResult:
    tests = {t: Outcome(final if t == "wilcoxon" else False, any_ if t == "wilcoxon" else False,
                        100 if any_ and t == "wilcoxon" else None) for t in TESTS}
    return ReplicationResult("x", dataset, mode, replication, replication, 1000, 10,
                             {"no_change": tests})


def test_rates_and_wilson_intervals_of_hand_made_results():
    # sea/cv: final 1 of 4, any 3 of 4; elec/cv: final 0 of 2, any 2 of 2
    results = [_result("sea", "cv", 0, True, True), _result("sea", "cv", 1, False, True),
               _result("sea", "cv", 2, False, True), _result("sea", "cv", 3, False, False),
               _result("elec", "cv", 0, False, True), _result("elec", "cv", 1, False, True)]
    rates = {(r.dataset, r.test, r.look): r for r in rejection_rates(results)}
    assert len(rates) == 3 * len(TESTS) * 2
    expected = {("sea", "final"): (1, 4), ("sea", "any"): (3, 4), ("elec", "final"): (0, 2),
                ("elec", "any"): (2, 2), ("all", "final"): (1, 6), ("all", "any"): (5, 6)}
    for (dataset, look), (hits, n) in expected.items():
        r = rates[dataset, "wilcoxon", look]
        assert (r.rate, r.replications) == (hits / n, n)
        assert (r.low, r.high) == wilson(hits, n)
        assert rates[dataset, "mcnemar", look].rate == 0.0
    # the Wilson interval: the p whose normal test at 95% just accepts the observed rate,
    # |phat - p| = z sqrt(p (1 - p) / n), solved here as a quadratic in p
    z = 1.959963984540054
    for hits, n in [(1, 4), (5, 6), (8, 20), (0, 20), (20, 20), (37, 60)]:
        phat = hits / n
        a, b, c = 1 + z * z / n, -(2 * phat + z * z / n), phat * phat
        root = math.sqrt(b * b - 4 * a * c)
        assert wilson(hits, n) == pytest.approx(((-b - root) / (2 * a), (-b + root) / (2 * a)),
                                                abs=1e-12)
    assert wilson(0, 20)[0] == 0.0 and wilson(20, 20)[1] == 1.0
    assert rates["all", "wilcoxon", "final"].low > 0  # 1 of 6 is not 0: the interval says so


# ------------------------------------------------------------------- workers, resume, stop
def test_one_and_two_workers_give_the_same_results(tmp_path):
    experiment = load_experiment(TINY, SMALLER)
    one = run_experiment(experiment, tmp_path / "one.jsonl", workers=1)
    two = run_experiment(experiment, tmp_path / "two.jsonl", workers=2)
    assert one.ran == two.ran == 8 and one.interrupted is None
    a, b = _lines(tmp_path / "one.jsonl"), _lines(tmp_path / "two.jsonl")
    assert sorted(map(_outcomes, a)) == sorted(map(_outcomes, b))
    assert one.rates == two.rates
    # the replications differ from each other (their seeds do), so the identity is not vacuous
    assert len({l["seed"] for l in a}) == 2
    assert len({json.dumps(l["accuracy"]) for l in a}) == 8


def test_a_results_line_keeps_its_cpu_seconds_and_an_older_line_still_reads(tmp_path):
    experiment = load_experiment(TINY, SMALLER[:2] + ["modes=[split]", "replications=1"])
    run_experiment(experiment, tmp_path / "r.jsonl", workers=1)
    lines = _lines(tmp_path / "r.jsonl")
    assert len(lines) == 2
    for line in lines:  # the process's CPU seconds of the run: some, and no more than it had
        assert 0 < line["cpu_time_s"] <= 2 * line["wall_time_s"]
    older = {k: v for k, v in lines[0].items() if k != "cpu_time_s"}  # a line written before
    assert ReplicationResult.from_json(older).cpu_time_s is None
    assert ReplicationResult.from_json(lines[0]).cpu_time_s == lines[0]["cpu_time_s"]


def test_a_restart_runs_only_the_missing_replications(tmp_path, monkeypatch):
    results = tmp_path / "results.jsonl"
    first = load_experiment(TINY, SMALLER[:-1] + ["replications=1"])
    done = run_experiment(first, results, workers=1)
    assert done.ran == 4
    # plant an outcome no run would give, and a line cut by a kill
    lines = _lines(results)
    lines[0]["outcomes"]["no_change"]["sign"] = {"final": True, "any": True, "first": 7}
    planted = (lines[0]["dataset"], lines[0]["mode"])
    results.write_text("".join(json.dumps(l) + "\n" for l in lines) + '{"experiment": "cut')
    ran = []
    real = ex.run_replication

    def counting(experiment, task):
        ran.append(task.key)
        return real(experiment, task)

    monkeypatch.setattr(ex.run, "run_replication", counting)
    second = load_experiment(TINY, SMALLER)  # replications=2: four more
    again = run_experiment(second, results, workers=1)
    assert (again.ran, again.skipped) == (4, 4)
    assert sorted(ran) == sorted((d, m, 1) for d in ("sea", "elec") for m in ("split", "bootstrap"))
    kept = _lines(results)  # the cut line is gone, the planted one kept
    assert len(kept) == 8 and kept[0] == lines[0]
    sign = next(r for r in again.rates if (r.dataset, r.mode, r.condition, r.test, r.look)
                == (*planted, "no_change", "sign", "final"))
    assert (sign.rate, sign.replications) == (0.5, 2)  # the planted line counts, read, not rerun
    # nothing left to run
    assert run_experiment(second, results, workers=2).ran == 0


def test_ctrl_c_keeps_the_results_so_far_and_exits_130(tmp_path, monkeypatch, capsys):
    real = ex.run_replication
    calls = []

    def stop_at_the_second(experiment, task):
        calls.append(task)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(experiment, task)

    monkeypatch.setattr(ex.run, "run_replication", stop_at_the_second)
    results = tmp_path / "r.jsonl"
    code = main(["experiment", str(TINY), "--workers", "1", "--results", str(results),
                 "--out", str(tmp_path / "out"), "--quiet", *sum((["--set", s] for s in SMALLER), [])])
    assert code == exitcodes.INTERRUPTED == 130
    assert len(_lines(results)) == 1
    err = capsys.readouterr().err
    assert "stopped: 1 of 8 replications are in" in err and "Traceback" not in err
    assert (tmp_path / "out" / "rates.json").exists()


def test_a_failing_replication_is_named_and_the_others_kept(tmp_path, monkeypatch, capsys):
    real = ex.run_replication

    def fail_on_elec(experiment, task):
        if task.dataset == "elec":
            raise ValueError("a learner bug")
        return real(experiment, task)

    monkeypatch.setattr(ex.run, "run_replication", fail_on_elec)
    results = tmp_path / "r.jsonl"
    code = main(["experiment", str(TINY), "--workers", "1", "--results", str(results),
                 "--out", str(tmp_path / "out"), "--quiet", *sum((["--set", s] for s in SMALLER), [])])
    err = capsys.readouterr().err
    assert code == exitcodes.FAILED
    assert "replication 0 of elec (split) failed: ValueError: a learner bug" in err
    assert "Traceback" not in err
    assert [l["dataset"] for l in _lines(results)] == ["sea", "sea"]  # its two modes, before elec


# --------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("override,message", [
    ("foldz=3", "foldz"),
    ("datasets.0.source.limit=5", "datasets.0.source.limit: set by `n`"),
    ("learner.params={model: {model: river.tree.HoeffdingTreeClassifier}}",
     "learner: river.ensemble.BaggingClassifier has no `seed` parameter"),
    ("modes=[bootstrap, single]", "modes.1"),
    ("conditions.noise=[0.1, 0.10]", "conditions.noise"),
    ("conditions.exact_null.p_noise=0", "conditions.exact_null.p_noise"),
    ("datasets.1.name=sea", "dataset names must be unique"),
    ("datasets.1.name=all", "datasets.1.name"),
    ("datasets.0.source.params={seed: 3}", "datasets.0.source.params.seed: set per replication"),
])
def test_a_bad_key_fails_at_start_naming_it(override, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("[", r"\[")):
        load_experiment(TINY, [override])


def test_the_command_line_names_the_key_and_refuses_another_experiments_results(tmp_path, capsys):
    assert main(["experiment", str(TINY), "--set", "replicationz=2"]) == exitcodes.UNUSABLE
    assert "replicationz" in capsys.readouterr().err
    results = tmp_path / "r.jsonl"
    line = _result("sea", "split", 0, True, True)
    results.write_text(line.to_json() + "\n")
    code = main(["experiment", str(TINY), "--results", str(results), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == exitcodes.UNUSABLE and "written by another experiment configuration" in err
    assert "Traceback" not in err


def test_the_published_experiment_is_valid():
    config = Path(__file__).resolve().parents[1] / "conf" / "experiments" / "bifet2015-table2.yaml"
    experiment = load_experiment(config)
    assert experiment.folds == 10 and experiment.modes == ["bootstrap", "cv", "split"]
    assert experiment.conditions.names() == ["no_change", "noise_0.05", "noise_0.10", "exact_null"]
    assert [d.name for d in experiment.datasets] == ["elec", "sea", "rbf"]


# A results file (--results) read back: a line cut by a kill is dropped, anything else that is
# no result is refused, and a device is no results file.

@pytest.mark.parametrize("text", ['{"x": 1, "target": 0}\n', "x,target\n"])
def test_a_whole_last_line_that_is_no_result_is_refused_not_erased(tmp_path, text):
    """A kill cuts a line before its newline; a whole line that is no result is another file
    given as ``--results`` (a data set): refused, never "repaired" away."""
    path = tmp_path / "one.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1"):
        read_results(path)
    assert path.read_text(encoding="utf-8") == text


def test_a_cut_last_line_is_still_a_line_cut_by_a_kill(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"experiment": "cu', encoding="utf-8")
    assert read_results(path) == ([], 1)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/full"])
def test_a_results_file_that_is_a_device_is_refused_at_once(device):
    """Reading ``/dev/zero`` (or ``/dev/full``) never ends: a results file must be a file."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(read_results, device)
        try:
            error = future.exception(timeout=20)
        except concurrent.futures.TimeoutError:
            pytest.fail(f"read_results({device}) never ended")  # the thread stays: test ends
        assert isinstance(error, ConfigError) and "not a regular file" in str(error)


def test_results_into_dev_null_still_read_as_none():
    assert read_results("/dev/null") == ([], 0)


# An experiment's outputs: never one file twice.



def one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("results", ["{out}/rates.json", "{out}/table.md", "{out}/./rates.png",
                                     "{config}"])
def test_an_experiment_never_writes_one_file_twice(tmp_path, capsys, results):
    out = tmp_path / "e"
    out.mkdir()
    config = tmp_path / "tiny.yaml"
    config.write_bytes(TINY.read_bytes())
    target = results.format(out=out, config=config)
    code = main(["experiment", str(config), "--out", str(out), "--results", target,
                 "--set", "replications=1", "--set", "n=200", "--set", "report_every=100",
                 "--quiet", "--workers", "1"])
    assert code == exitcodes.UNUSABLE
    err = one_line(capsys.readouterr().err)
    assert f"--results: {Path(target)} is " in err, err
    assert sorted(p.name for p in out.iterdir()) == []  # nothing run, nothing written
    assert config.read_bytes() == TINY.read_bytes()


def test_an_experiment_whose_outputs_differ_runs(tmp_path, capsys):
    out = tmp_path / "e"
    code = main(["experiment", str(TINY), "--out", str(out), "--results", str(out / "r.jsonl"),
                 "--set", "replications=1", "--set", "n=200", "--set", "report_every=100",
                 "--set", "modes=[split]", "--set", "datasets=[{name: sea, source: {kind: "
                 "generator, model: river.datasets.synth.SEA}}]", "--quiet", "--workers", "1"])
    assert code == exitcodes.OK, capsys.readouterr().err
    assert len((out / "r.jsonl").read_text(encoding="utf-8").splitlines()) == 1
    assert {"rates.json", "table.md", "rates.png"} <= {p.name for p in out.iterdir()}

"""MOA's classifiers as learners (operators/learners/moa/): the configuration's checks, MOA's
semantics through the batch path, pickling, and equality with MOA's own EvaluatePrequential.

These tests start a JVM in the test process (MOA's jar is fetched into $FOLDSTREAM_CACHE on
first use) and need a JDK.
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import pickle
import random
import subprocess
import sys
from pathlib import Path

import pytest

import foldstream
from foldstream.job.config import ConfigError, load_config
from foldstream.operators.stages.fanout import FanOut, FanOutPlan
from foldstream.operators.stages.learner import LearnerSpec, LearnerTask
from foldstream.operators.learners.moa import MoaClassifier, ensure_moa_jar, moa, start_jvm
from foldstream.operators.records.base import ExampleBatch

pytestmark = pytest.mark.jvm  # slow (tests/conftest.py)

HT = "moa.classifiers.trees.HoeffdingTree"


def _validate(tmp_path: Path, learner: str, env: dict | None = None) -> subprocess.CompletedProcess:
    config = tmp_path / "c.yaml"
    config.write_text("source: {kind: generator, model: river.datasets.synth.SEA, limit: 10}\n"
                      f"learners:\n  - {learner}\n")
    return subprocess.run([str(Path(sys.executable).parent / "foldstream"), "validate",
                           str(config)], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("learner, words", [
    ("{name: a, model: moa.classifiers.trees.Nope}", "no MOA class moa.classifiers.trees.Nope"),
    ("{name: a, model: moa.streams.generators.SEAGenerator}", "starts with 'moa.classifiers.'"),
    ("{name: a, model: moa.classifiers.trees.HoeffdingTree, options: '-x 1'}",
     "Unknown option: -x"),
    ("{name: a, model: moa.classifiers.trees.HoeffdingTree, options: '-g abc'}",
     'NumberFormatException: For input string: "abc"'),
    ("{name: a, model: moa.classifiers.trees.HoeffdingTree, params: {g: 1}}", "not params"),
    ("{name: a, model: river.naive_bayes.GaussianNB, options: '-g 1'}", "only a MOA classifier"),
])
def test_a_bad_moa_learner_fails_at_start_naming_the_key_and_moas_message(learner, words):
    with pytest.raises(ConfigError) as error:
        load_config(None, [f"learners=[{learner}]"])
    text = " ".join(str(error.value).split())
    assert "learners.0" in text and words in text, text


def test_validate_exits_2_on_a_bad_moa_learner_and_accepts_a_good_one(tmp_path):
    bad = _validate(tmp_path, "{name: a, model: moa.classifiers.trees.HoeffdingTree, "
                              "options: '-x 1'}")
    assert bad.returncode == 2 and "Unknown option: -x" in " ".join(bad.stderr.split())
    good = _validate(tmp_path, "{name: a, model: moa.classifiers.trees.HoeffdingTree, "
                               "options: '-g 100 -c 0.01'}")
    assert good.returncode == 0, good.stderr


def test_python_name():
    assert foldstream.moa("bayes.NaiveBayes") == {"model": "moa.classifiers.bayes.NaiveBayes",
                                                  "options": ""}


def _batch(xs, ys, mode="single", folds=1):
    fanout = FanOut("s", FanOutPlan(mode, folds=folds))
    return fanout.process(ExampleBatch("s", 0, 0, list(range(1, len(xs) + 1)), xs, ys))


def _task(model=HT, options="", **spec):
    return LearnerTask(LearnerSpec("m", model, options=options, **spec), 0)


def test_not_ready_then_learns_and_late_classes_and_text_features():
    rng = random.Random(1)
    xs = [{"a": rng.random(), "c": rng.choice("xy")} for _ in range(300)]
    ys = ["lo" if x["a"] < 0.5 else "hi" for x in xs]
    xs += [{"a": rng.random(), "c": "z"} for _ in range(100)]  # a late value and a late class
    ys += ["new"] * 100
    task = _task("moa.classifiers.bayes.NaiveBayes")
    out = task.process(_batch(xs, ys)[0])
    assert out.error is None and out.y_pred[0] == -1  # not trained yet: no prediction
    new = out.classes.index("new")
    assert new == 2 and out.y_pred[300] != new  # the class is unknown until trained on
    assert all(p == new for p in out.y_pred[310:])  # then MOA predicts it by its code
    assert sum(p == y for p, y in zip(out.y_pred[100:300], out.y[100:300])) > 180
    assert task.model.nominal == {1: {"x": 0, "y": 1, "z": 2}}


def test_text_after_numbers_is_quarantined():
    task = _task()
    out = task.process(_batch([{"a": 1.0}, {"a": 2.0}, {"a": "text"}], [0, 1, 0])[0])
    assert out.y_pred == [-1, 0, -1]
    assert out.error[:2] == (3, "predict") and "is text" in out.error[2]


def test_java_exception_is_quarantined_with_its_class():
    task = _task("moa.classifiers.functions.Perceptron")  # sized by the classes at its start
    first = task.process(_batch([{"a": float(i % 3)} for i in range(20)], [i % 2 for i in range(20)])[0])
    assert first.error is None
    xs, ys = [{"a": 1.0}] * 3, [0, 1, 2]
    batch = _batch(xs, ys)[0]
    batch = dataclasses.replace(batch, start=20)
    out = task.process(batch)
    assert out.error is not None and out.error[2].startswith("java.lang.ArrayIndexOutOfBounds")
    assert task.failed == out.error
    assert task.process(batch).y_pred == [-1, -1, -1]  # quarantined from then on


def test_weight_is_the_instance_weight():
    xs = [{"a": 0.0}, {"a": 1.0}]
    light = MoaClassifier("moa.classifiers.bayes.NaiveBayes")
    heavy = MoaClassifier("moa.classifiers.bayes.NaiveBayes")
    light.run(xs, [0, 1], [1, 1], [False, False], ["p", "q"])
    heavy.run(xs, [0, 1], [1, 5], [False, False], ["p", "q"])
    # an instance without features: the class prior decides; weight 5 makes q the majority
    assert light.predict_one({}) == "p" and heavy.predict_one({}) == "q"


def test_fold_seeds_give_each_fold_its_seed():
    rng = random.Random(0)
    xs = [{"a": rng.random(), "b": rng.random()} for _ in range(500)]
    ys = [int(x["a"] > x["b"]) for x in xs]
    spec = LearnerSpec("bag", "moa.classifiers.meta.OzaBag", options="-s 3", fold_seeds=True)
    runs = [spec.build(fold).run(xs, ys, [1] * 500, [True] * 500, [0, 1])[0] for fold in (0, 1, 0)]
    assert runs[0] != runs[1] and runs[0] == runs[2]


def test_pickles_by_java_serialisation():
    rng = random.Random(2)
    xs = [{"a": rng.random(), "c": rng.choice("uv")} for _ in range(400)]
    ys = [int(x["a"] > 0.3) for x in xs]
    task = _task()
    task.process(_batch(xs[:200], ys[:200])[0])
    copy = pickle.loads(pickle.dumps(task))
    rest = _batch(xs, ys)[0]
    rest = dataclasses.replace(rest, xs=xs[200:], y=rest.y[200:], prev_y=rest.prev_y[200:],
                               weights=rest.weights[200:], start=200)
    assert task.process(rest).y_pred == copy.process(rest).y_pred


def test_a_pickle_naming_the_flat_module_loads():
    """A state pickled when MoaClassifier lived in ``foldstream.operators.moa`` (a checkpoint of
    before the rooms) loads as the learner it was (operators/moved.py)."""
    rng = random.Random(3)
    xs = [{"a": rng.random(), "b": rng.random()} for _ in range(300)]
    ys = [int(x["a"] > x["b"]) for x in xs]
    model = MoaClassifier(HT)
    model.run(xs[:200], ys[:200], [1] * 200, [True] * 200, [0, 1])
    new = pickle.dumps(model, 0)
    assert b"foldstream.operators.learners.moa.classifier" in new
    old = pickle.loads(new.replace(b"foldstream.operators.learners.moa.classifier",
                                   b"foldstream.operators.moa"))
    assert type(old) is MoaClassifier
    assert old.run(xs[200:], ys[200:], [1] * 100, [True] * 100, [0, 1]) == \
        model.run(xs[200:], ys[200:], [1] * 100, [True] * 100, [0, 1])


def test_moa_and_river_side_by_side():
    from river import naive_bayes
    from river.datasets import synth

    results = foldstream.evaluate(synth.SEA(seed=1), {"ht": moa("trees.HoeffdingTree -g 100"),
                                                      "nb": naive_bayes.GaussianNB()},
                                  limit=1500, folds=3)
    accuracy = results.measures("accuracy")
    final = accuracy[accuracy.position == 1500].set_index("learner")["mean"]
    assert final["ht"] > 0.8 and final["nb"] > 0.8
    assert len(results.comparisons()) > 0


def _moa_rows(arff: Path, learner: str, out: Path,
              evaluator: str = "WindowClassificationPerformanceEvaluator -w 1000") -> list[dict]:
    """MOA's own EvaluatePrequential of ``learner`` on ``arff``, a row every 1000 examples."""
    subprocess.run(["java", "-Xmx1g", "-cp", str(ensure_moa_jar()), "moa.DoTask",
                    f"EvaluatePrequential -l {learner} -s (ArffFileStream -f {arff}) "
                    f"-e ({evaluator}) -f 1000 -d {out}"],
                   check=True, capture_output=True)
    return list(csv.DictReader(out.open()))


def _moa_task(arff: Path, learner: str, out: Path) -> dict[str, float]:
    last = _moa_rows(arff, learner, out)[-1]
    return {"accuracy": float(last["classifications correct (percent)"]) / 100,
            "kappa": float(last["Kappa Statistic (percent)"]) / 100,
            "kappa_m": float(last["Kappa M Statistic (percent)"]) / 100}


def _elec_arff(elec_path: Path, tmp_path: Path) -> tuple[Path, int]:
    """Electricity as an ARFF whose classes are listed in the order foldstream codes them
    (first appearance: 1, then 0), so MOA's class indices agree; and its number of rows."""
    rows = list(csv.reader(gzip.open(elec_path, "rt")))
    header, data = rows[0], rows[1:]
    classes = list(dict.fromkeys(r[-1] for r in data))
    assert classes == ["1", "0"]
    arff = tmp_path / "elec.arff"
    with arff.open("w") as fh:
        fh.write("@relation elec\n")
        fh.writelines(f"@attribute {name} numeric\n" for name in header[:-1])
        fh.write(f"@attribute {header[-1]} {{{','.join(classes)}}}\n@data\n")
        fh.writelines(",".join(r) + "\n" for r in data)
    return arff, len(data)


@pytest.mark.slow
def test_equal_to_moas_evaluate_prequential(tmp_path, elec_path):
    """All of Electricity, single mode, a sliding window of 1000: the last report of MOA's
    learners through foldstream equals MOA's own task."""
    arff, n = _elec_arff(elec_path, tmp_path)
    data = range(n)
    learners = {"ht": "trees.HoeffdingTree", "nb": "bayes.NaiveBayes"}
    results = foldstream.evaluate(str(elec_path), {k: moa(v) for k, v in learners.items()},
                                  mode="single", window={"kind": "sliding", "size": 1000})
    measures = results.measures()
    last = measures[measures.position == len(data)]
    for name, learner in learners.items():
        want = _moa_task(arff, learner, tmp_path / f"{name}.csv")
        got = last[last.learner == name].set_index("measure")["mean"]
        for measure, value in want.items():
            assert abs(got[measure] - value) <= 1e-9, (name, measure, got[measure], value)


@pytest.mark.slow
@pytest.mark.parametrize("window,evaluator", [
    ({"kind": "sliding", "size": 1000}, "WindowAUCImbalancedPerformanceEvaluator -w 1000"),
    ({"kind": "cumulative"}, "BasicAUCImbalancedPerformanceEvaluator -a"),
], ids=["window", "cumulative"])
def test_auc_equal_to_moas_auc_evaluators(tmp_path, elec_path, window, evaluator):
    """All of Electricity, single mode: the AUC of MOA's learners through foldstream at the
    last report equals that of MOA's own EvaluatePrequential with its AUC evaluator. MOA's
    positive class is its class index 1, the label "0" (foldstream's code 1)."""
    arff, n = _elec_arff(elec_path, tmp_path)
    learners = {"ht": "trees.HoeffdingTree", "nb": "bayes.NaiveBayes"}
    results = foldstream.evaluate(str(elec_path), {k: moa(v) for k, v in learners.items()},
                                  mode="single", window=window, scores=["auc"],
                                  positive_class="0")
    measures = results.measures()
    last = measures[(measures.position == n) & (measures.measure == "auc")]
    for name, learner in learners.items():
        rows = _moa_rows(arff, learner, tmp_path / f"{name}.csv", evaluator)
        assert int(float(rows[-1]["learning evaluation instances"])) == n
        want = float(rows[-1]["AUC"])
        got = float(last[last.learner == name]["mean"].iloc[0])
        assert abs(got - want) <= 1e-9, (name, got, want)


@pytest.mark.slow
def test_holdout_equal_to_moas_evaluate_periodic_held_out_test(tmp_path, elec_path):
    """evaluation.holdout (operators/holdout.py) on all of Electricity, single mode: every
    test's accuracy and kappa equal MOA's own EvaluatePeriodicHeldOutTest (its default
    evaluator) to 1e-9, with a cached test set (-c) of the first 5,000 examples and a test every
    4,000 training examples, for MOA's naive Bayes: the same tests, of the same models, on the
    same examples. kappa_m and kappa_per differ slightly by definition, not by protocol: MOA's
    evaluator counts the current example's label in its majority baseline and starts its
    no-change baseline at class 0, where foldstream's majority is the window's before the
    example and the first example has no predecessor (docs/method.md §3)."""
    arff, examples = _elec_arff(elec_path, tmp_path)
    out = tmp_path / "moa.csv"
    subprocess.run(["java", "-Xmx1g", "-cp", str(ensure_moa_jar()), "moa.DoTask",
                    f"EvaluatePeriodicHeldOutTest -l bayes.NaiveBayes -s (ArffFileStream -f "
                    f"{arff}) -n 5000 -f 4000 -c -d {out}"], check=True, capture_output=True)
    want = {int(float(row["evaluation instances"])): row for row in csv.DictReader(out.open())}
    results = foldstream.evaluate(str(elec_path), {"nb": moa("bayes.NaiveBayes")},
                                  mode="single", holdout={"size": 5000, "every": 4000})
    got = {r["position"]: r["values"] for r in results.records if r["type"] == "holdout"}
    assert sorted(want) == list(range(4000, examples - 5000 + 1, 4000)) == sorted(got)
    names = {"accuracy": ("classifications correct (percent)", 1e-9),
             "kappa": ("Kappa Statistic (percent)", 1e-9),
             "kappa_m": ("Kappa M Statistic (percent)", 0.01),
             "kappa_per": ("Kappa Temporal Statistic (percent)", 0.01)}
    for position, row in want.items():
        for measure, (column, tolerance) in names.items():
            value = float(row[column]) / 100
            assert abs(got[position][measure]["mean"] - value) <= tolerance, \
                (position, measure, got[position][measure]["mean"], value)


def test_delayed_labels_reach_a_moa_learner():
    """Delayed labels (docs/method.md §13) take river's per-example path: predict at arrival,
    train at the label, through ``predict_one``/``learn_one``."""
    from river.datasets import synth

    results = foldstream.evaluate(synth.SEA(seed=3), {"nb": moa("bayes.NaiveBayes")}, limit=1500,
                                  folds=2, delay={"examples": 20})
    assert not [r for r in results.records if r["type"] == "learner_error"]
    accuracy = results.measures("accuracy")
    assert accuracy[accuracy.position == accuracy.position.max()]["mean"].iloc[0] > 0.8


@pytest.mark.parametrize("how", ["yaml", "python"])
def test_engine_jvm_options_start_the_jvm(how):
    """engine.jvm_options reach the JVM, though the learners' check starts it (a fresh process:
    a JVM starts once per process)."""
    if how == "yaml":
        run = ("from foldstream.job.config import load_config; load_config(None, ["
               "'engine.jvm_options=[-Xmx200m]', 'learners=[{name: a, model: "
               "moa.classifiers.bayes.NaiveBayes}]'])")
    else:
        run = ("import foldstream; from river.datasets import synth; foldstream.evaluate("
               "synth.SEA(seed=1), {'a': foldstream.moa('bayes.NaiveBayes')}, limit=10, "
               "folds=2, engine={'jvm_options': ['-Xmx200m']})")
    code = (f"{run}\nimport jpype\n"
            "print(jpype.JClass('java.lang.Runtime').getRuntime().maxMemory() // 2**20)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split()[-1]) < 256  # -Xmx200m, not the default -Xmx1g


def test_no_jdk_fails_at_start_saying_what_to_install(tmp_path):
    """Without ``javac`` (a JRE only), ``validate`` exits 2 naming the JDK to install."""
    cache = tmp_path / "cache"
    cache.mkdir()
    jar = ensure_moa_jar()
    (cache / jar.name).symlink_to(jar)  # the jar is there; the compiled class is not
    env = {"PATH": str(Path(sys.executable).parent), "FOLDSTREAM_CACHE": str(cache),
           "HOME": str(tmp_path)}
    proc = _validate(tmp_path, "{name: a, model: moa.classifiers.bayes.NaiveBayes}", env=env)
    text = " ".join(proc.stderr.split())
    assert proc.returncode == 2, text
    assert "learners.0" in text and "no `javac` found" in text and "openjdk-17-jdk" in text, text


def test_a_process_whose_jvm_a_thread_started_exits():
    """A notebook's or a server's thread that runs the first MOA learner starts the JVM there;
    the process still exits when its work is done (the JVM's shutdown would wait for that
    thread's Java twin forever)."""
    code = ("import threading, foldstream\n"
            "from foldstream.operators.learners.moa import moa\n"
            "def go():\n"
            "    r = foldstream.evaluate('package://elec.csv.gz', {'m': moa('bayes.NaiveBayes')},"
            " folds=2, limit=300)\n"
            "    print(len(r.measures('accuracy')))\n"
            "t = threading.Thread(target=go); t.start(); t.join()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split()[-1]) > 0


@pytest.mark.parametrize("mode, batch_size", [("bootstrap", 500), ("cv", 7)])
def test_folds_on_java_threads_give_the_records_of_one_thread(elec_path, mode, batch_size):
    """engine.threads: the folds of a batch learn side by side on Java's threads, the records
    byte for byte those of one thread: a randomised MOA ensemble (each fold's own seed), a
    tree, a river learner between them, and one that is quarantined mid-stream."""
    from foldstream.job.engines.inprocess import evaluate_to_list
    from foldstream.job.plans import make_plans, open_source
    from foldstream.operators.records.base import dumps
    from foldstream.operators.records.outputs import SummaryRecord

    learners = ("learners=[{name: bag, model: moa.classifiers.meta.OzaBag, options: "
                "'-l trees.HoeffdingTree -s 4', params: {seed: 5}, fold_seeds: true}, "
                "{name: nb, model: river.naive_bayes.GaussianNB}, "
                "{name: ht, model: moa.classifiers.trees.HoeffdingTree, options: '-g 50'}, "
                "{name: perceptron, model: moa.classifiers.functions.Perceptron}]")

    def run(threads: int) -> list[str]:
        cfg = load_config(None, [f"source.path={elec_path}", "source.limit=2500", learners,
                                 f"evaluation.mode={mode}", "evaluation.folds=5",
                                 "evaluation.report_every=500",
                                 f"engine.batch_size={batch_size}", f"engine.threads={threads}"])
        records, _ = evaluate_to_list(make_plans(cfg), open_source(cfg))
        return [dumps({k: v for k, v in r.items() if k not in SummaryRecord.TIMING_FIELDS})
                for r in records]

    one = run(1)
    many = run(3)
    assert start_jvm().poolThreads() == 3  # the folds went to a pool of 3
    assert many == one

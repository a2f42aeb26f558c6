"""The configuration (job/config.py): check, then build, and bounded.

Nothing a configuration names is called before it is known to be what its key promises; a model
that cannot be built, cloned or given its parameters fails at start, exit 2, naming the key,
without a traceback. A bad value of any key names that key; every shipped configuration
validates; engine keys that name an executable or code are checked for what they must be; a
configuration file is bounded (a YAML bomb is refused fast) and so are the sizes it asks for
(folds, replications, workers).
"""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from river import naive_bayes

import foldstream
from foldstream.job import exitcodes
from foldstream.job.cli import main
from foldstream.job.config import ConfigError, load_config
from foldstream.job.tools.experiment import load_experiment

ROOT = Path(__file__).resolve().parents[1]
CHEAP = ["source.limit=200", "evaluation.folds=2", "evaluation.report_every=100"]

#: A module of the user's: classes that act when called, as a hostile configuration would name.
MODELS = '''
from pathlib import Path
from river import base


def touch(path):
    Path(path).write_text("ran")


class Touching:  # a class, but no river class: calling it acts
    def __init__(self, path):
        Path(path).write_text("ran")


class Custom(Exception):
    pass


class Raising(base.Classifier):
    """A classifier whose constructor raises what `error` names."""

    def __init__(self, error: str = "type", limit: int = 1):
        if limit < 0:
            raise ValueError("limit must be >= 0")
        errors = {"type": TypeError, "runtime": RuntimeError, "custom": Custom}
        raise errors[error]("the constructor gave up")

    def learn_one(self, x, y):
        pass

    def predict_one(self, x):
        return None


class Unclonable(base.Classifier):
    def __init__(self, n: int = 1):
        self.n = n

    def clone(self, new_params=None, include_attributes=False):
        raise RuntimeError("cannot copy myself")

    def learn_one(self, x, y):
        pass

    def predict_one(self, x):
        return None


class Weighted(base.Classifier):
    def __init__(self, weights: dict | None = None, names: list | None = None):
        self.weights, self.names = weights, names

    def learn_one(self, x, y):
        pass

    def predict_one(self, x):
        return None
'''


def stderr(capsys) -> str:
    """What the command wrote to stderr, with the terminal's line wrapping undone."""
    return " ".join(capsys.readouterr().err.split())


@pytest.fixture
def user_models(tmp_path, monkeypatch):
    """``fs_trust_models`` importable (in this process and in subprocesses); the directory."""
    (tmp_path / "fs_trust_models.py").write_text(MODELS)
    (tmp_path / "fs_trust_pkg").mkdir()
    (tmp_path / "fs_trust_pkg" / "__init__.py").write_text("")
    (tmp_path / "fs_trust_pkg" / "__main__.py").write_text(  # a program that runs on import
        "from pathlib import Path\nPath(__file__).parents[1].joinpath('ran').write_text('ran')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in ("fs_trust_models", "fs_trust_pkg", "fs_trust_pkg.__main__"):
        sys.modules.pop(name, None)


def hostile(marker: Path) -> dict[str, list[str]]:
    """``--set`` overrides that would create ``marker`` if what they name were called."""
    cmd = f"'touch {marker}'"
    return {
        "learner": [f"learners.0={{name: x, model: os.system, args: [{cmd}]}}"],
        "learner params": [f"learners.0={{name: x, model: os.system, params: {{command: {cmd}}}}}"],
        "nested in params": [f"learners.0={{name: x, model: river.ensemble.BaggingClassifier, "
                             f"params: {{model: {{model: os.system, args: [{cmd}]}}}}}}"],
        "nested in args": [f"learners.0={{name: x, model: river.compose.Pipeline, "
                           f"args: [{{model: os.system, args: [{cmd}]}}]}}"],
        "nested in a list": [f"learners.0={{name: x, model: river.ensemble.VotingClassifier, "
                             f"params: {{models: [{{model: os.system, args: [{cmd}]}}]}}}}"],
        "a user's function": [f"learners.0={{name: x, model: fs_trust_models.touch, "
                              f"args: ['{marker}']}}"],
        "a user's class": [f"learners.0={{name: x, model: river.compose.Pipeline, "
                           f"args: [{{model: fs_trust_models.Touching, args: ['{marker}']}}]}}"],
        "a __main__ module": ["learners.0={name: x, model: fs_trust_pkg.__main__.Model}"],
        "generator": [f"source={{kind: generator, model: os.system, params: {{command: {cmd}}}, "
                      f"limit: 5}}"],
        "nested generator": [f"source={{kind: generator, model: river.datasets.synth."
                             f"ConceptDriftStream, params: {{stream: {{model: fs_trust_models."
                             f"Touching, params: {{path: '{marker}'}}}}}}, limit: 5}}"],
    }


HOSTILE_KEYS = {
    "learner": "learners.0.model", "learner params": "learners.0.model",
    "nested in params": "learners.0.params.model.model",
    "nested in args": "learners.0.args.0.model",
    "nested in a list": "learners.0.params.models.0.model",
    "a user's function": "learners.0.model", "a user's class": "learners.0.args.0.model",
    "a __main__ module": "learners.0.model",
    "generator": "source.generator.model", "nested generator": "source.generator.params.stream.model",
}


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("case", list(HOSTILE_KEYS))
def test_nothing_named_is_called_before_it_is_checked(user_models, capsys, command, case):
    marker = user_models / "ran"
    overrides = [a for o in hostile(marker)[case] + CHEAP for a in ("--set", o)]
    code = main([command, *(["--quiet"] if command == "run" else []), *overrides])
    err = stderr(capsys)
    assert not marker.exists(), f"{case}: the configuration ran something"
    assert code == 2, err
    assert HOSTILE_KEYS[case] in err and "Traceback" not in err


def test_a_hostile_configuration_file_is_refused_in_a_fresh_process(user_models):
    """The command as a user types it: exit 2, the key named, no traceback, nothing run."""
    marker = user_models / "ran"
    config = user_models / "shared.yaml"
    config.write_text(f"source: {{kind: generator, model: river.datasets.synth.SEA, limit: 50}}\n"
                      f"learners:\n  - {{name: ok, model: river.naive_bayes.GaussianNB}}\n"
                      f"  - name: evil\n    model: river.ensemble.BaggingClassifier\n"
                      f"    params: {{model: {{model: os.system, args: ['touch {marker}']}}}}\n")
    done = subprocess.run([sys.executable, "-m", "foldstream.job.cli", "validate", str(config)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "learners.1.params.model.model" in done.stderr and "Traceback" not in done.stderr
    assert not marker.exists()


def test_the_python_api_checks_the_same(user_models):
    marker = user_models / "ran"
    for learner in ({"model": "os.system", "args": [f"touch {marker}"]},
                    foldstream.LearnerSpec("x", "fs_trust_models.touch", args=[str(marker)])):
        with pytest.raises(ConfigError, match="learners.x.model"):
            foldstream.evaluate([({"a": 1.0}, "y")] * 5, {"x": learner})
    with pytest.raises(ConfigError, match="source.generator.model"):
        foldstream.evaluate({"kind": "generator", "model": "fs_trust_models.Touching",
                             "params": {"path": str(marker)}, "limit": 5},
                            {"nb": naive_bayes.GaussianNB()})
    assert not marker.exists()


@pytest.mark.parametrize("error", ["type", "runtime", "custom"])
def test_a_constructor_error_of_any_type_names_the_key(user_models, capsys, error):
    learner = f"learners.1={{name: r, model: fs_trust_models.Raising, params: {{error: {error}}}}}"
    assert main(["validate", "--set", learner]) == 2
    err = stderr(capsys)
    assert "learners.1" in err and "the constructor gave up" in err and "Traceback" not in err
    nested = (f"learners.1={{name: r, model: river.ensemble.BaggingClassifier, params: "
              f"{{model: {{model: fs_trust_models.Raising, params: {{error: {error}}}}}}}}}")
    assert main(["validate", "--set", nested]) == 2
    err = stderr(capsys)
    assert "learners.1.params.model" in err and "Traceback" not in err


def test_a_constructor_error_names_the_parameter_it_names(user_models):
    with pytest.raises(ConfigError, match=r"learners\.0\.params\.limit: cannot build "
                                          r"fs_trust_models\.Raising: ValueError: limit must be"):
        load_config(None, ["learners.0={name: r, model: fs_trust_models.Raising, "
                           "params: {limit: -1}}"])


def test_a_learner_whose_clone_fails_is_refused_at_start(user_models, capsys):
    learner = "learners.2={name: copycat, model: fs_trust_models.Unclonable}"
    for command in (["validate"], ["run", "--quiet", *[a for o in CHEAP for a in ("--set", o)]]):
        assert main([*command, "--set", learner]) == 2
        err = stderr(capsys)
        assert "learners.2" in err and "clone() failed" in err and "Traceback" not in err
    from fs_trust_models import Unclonable

    with pytest.raises(ConfigError, match="learners.copycat: .*clone"):
        foldstream.evaluate([({"a": 1.0}, "y")] * 5, {"copycat": Unclonable()})


@pytest.mark.parametrize("override,key", [
    ("learners.0.params={grace_period: [1, 2]}", "learners.0.params.grace_period"),
    ("learners.0.params={grace_period: {a: 1}}", "learners.0.params.grace_period"),
    ("learners.0.params={delta: abc}", "learners.0.params.delta"),
    ("learners.0.params={nominal_attributes: 3}", "learners.0.params.nominal_attributes"),
    ("learners.0.params={splitter: 3}", "learners.0.params.splitter"),
    ("learners.0.params={binary_split: maybe}", "learners.0.params.binary_split"),
    ("learners.0={name: w, model: fs_trust_models.Weighted, params: {weights: 3}}",
     "learners.0.params.weights"),
    ("learners.0={name: w, model: fs_trust_models.Weighted, params: {names: {a: 1}}}",
     "learners.0.params.names"),
    ("learners.0={name: u, model: river.imblearn.RandomUnderSampler, params: {classifier: "
     "{model: river.naive_bayes.GaussianNB}, desired_dist: 0.5}}", "learners.0.params.desired_dist"),
    ("learners.0={name: b, model: river.ensemble.BaggingClassifier, params: {model: {model: "
     "river.tree.HoeffdingTreeClassifier, params: {grace_period: [1]}}}}",
     "learners.0.params.model.params.grace_period"),
    ("learners.0={name: b, model: river.ensemble.BaggingClassifier, params: {model: {model: "
     "river.preprocessing.StandardScaler}}}", "learners.0.params.model.model"),
    ("learners.0={name: b, model: river.ensemble.BaggingClassifier, params: {model: {model: "
     "river.naive_bayes.GaussianNB, parms: {}}}}", "learners.0.params.model"),
    ("learners.0={name: s, model: river.preprocessing.StandardScaler}", "learners.0.model"),
    ("learners.0={name: b, model: river.ensemble.BaggingClassifier, params: {model: {model: "
     "moa.classifiers.trees.HoeffdingTree}}}", "learners.0.params.model.model"),
    pytest.param("learners.0={name: m, model: moa.classifiers.trees.NoSuchTree}", "learners.0",
                 marks=pytest.mark.jvm),  # MOA's classes are looked up in a JVM
    ("learners.0={name: p, model: river.compose.Pipeline, args: [{model: "
     "river.preprocessing.StandardScaler}]}", "learners.0"),
    ("source={kind: generator, model: river.datasets.synth.SEA, params: {variant: [1]}, "
     "limit: 5}", "source.generator.params.variant"),
    ("source={kind: generator, model: river.tree.HoeffdingTreeClassifier, limit: 5}",
     "source.generator.model"),
    ("source={kind: generator, model: river.datasets.CreditCard, limit: 5}",
     "source.generator.model"),
])
def test_a_parameter_of_the_wrong_type_or_kind_names_its_key(user_models, capsys, override, key):
    assert main(["validate", "--set", override]) == 2
    err = stderr(capsys)
    assert f"{key}: " in err and "Traceback" not in err


@pytest.mark.parametrize("override", [
    "learners.0.params={grace_period: 50, delta: 0.01, nominal_attributes: [a, b], "
    "binary_split: true, max_depth: null, leaf_prediction: mc}",
    "learners.0.params={splitter: {model: river.tree.splitter.GaussianSplitter, "
    "params: {n_splits: 5}}}",
    "learners.0={name: lr, model: river.linear_model.LogisticRegression, params: {optimizer: "
    "{model: river.optim.SGD, params: {lr: 0.1}}, l2: 0, intercept_lr: 0.01}}",
    "learners.0={name: v, model: river.ensemble.VotingClassifier, params: {models: "
    "[{model: river.naive_bayes.GaussianNB}, {model: river.tree.HoeffdingTreeClassifier}]}}",
    "learners.0={name: p, model: river.compose.Pipeline, args: [{model: "
    "river.preprocessing.StandardScaler}, {model: river.linear_model.SoftmaxRegression}]}",
    "learners.0={name: n, model: foldstream.operators.learners.noise.NoiseFilter, fold_seeds: true, "
    "params: {model: {model: river.tree.HoeffdingTreeClassifier}, p_noise: 0.1, seed: 1}}",
    "learners.0={name: u, model: river.imblearn.RandomUnderSampler, params: {classifier: "
    "{model: river.naive_bayes.GaussianNB}, desired_dist: {0: 0.5, 1: 0.5}, seed: 1}}",
    "learners.0={name: w, model: fs_trust_models.Weighted, params: {weights: {a: 1}, names: [a]}}",
    "learners.0={name: w, model: fs_trust_models.Weighted, params: {weights: {model: 1.0}}}",
    "source={kind: generator, model: river.datasets.synth.ConceptDriftStream, params: {stream: "
    "{model: river.datasets.synth.SEA, params: {variant: 0}}, drift_stream: {model: "
    "river.datasets.synth.SEA, params: {variant: 3}}, position: 50, width: 10}, limit: 100}",
])
def test_valid_configurations_still_validate(user_models, override):
    assert load_config(None, [override]).learners


def test_every_shipped_and_experiment_configuration_still_validates():

    for path in sorted((ROOT / "conf").glob("*.yaml")):
        assert load_config(path).learners, path
    for path in sorted((ROOT / "conf" / "experiments").glob("*.yaml")):
        assert load_experiment(path), path


@pytest.mark.parametrize("overrides,key", [
    (["learner.params.model={model: os.system, args: ['touch {marker}']}"],
     "learner.params.model.model"),
    (["conditions.exact_null={model: fs_trust_models.touch, params: {path: '{marker}'}}"],
     "conditions.exact_null"),
    (["datasets.0.source={kind: generator, model: fs_trust_models.Touching, "
      "params: {path: '{marker}'}}"], "datasets.0.source.generator.model"),
])
def test_an_experiment_checks_the_same(user_models, overrides, key):

    marker = user_models / "ran"
    with pytest.raises(ConfigError) as raised:
        load_experiment(ROOT / "conf" / "experiments" / "tiny.yaml",
                        [o.replace("{marker}", str(marker)) for o in overrides])
    assert key in str(raised.value)
    assert not marker.exists()


# The configuration's keys: a bad value fails at start naming its key; the shipped files validate;
# Kafka's client properties reach the clients.

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


# Configuration files are bounded: a YAML bomb (aliases, cycles, deep nesting, sheer size) is
# refused fast, naming why; ordinary aliases read.

def _laughs(levels: int = 9, indent: str = "      ") -> str:
    """The billion laughs: each level a list of ten aliases of the one before."""
    lines = [f"{indent}a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"{indent}a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


BOMB = ("source: {kind: generator, model: river.datasets.synth.SEA, limit: 100}\n"
        "learners:\n  - name: nb\n    model: river.naive_bayes.GaussianNB\n    params:\n"
        + _laughs())


def _limited(gigabytes: float):
    """A child's address space capped, so that what was unbounded fails fast, not the host."""
    def limit() -> None:
        size = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return limit


# ------------------------------------------------------------------------------- YAML bombs
@pytest.mark.parametrize("case", ["file", "--set", "cycle", "deep", "large"])
def test_a_yaml_bomb_is_refused_fast_naming_why(tmp_path, case):
    config = tmp_path / "c.yaml"
    args = ["validate", "c.yaml"]
    if case == "file":
        config.write_text(BOMB, encoding="utf-8")
    elif case == "--set":
        config.write_text(BOMB.split("    params:")[0], encoding="utf-8")
        value = "{" + ", ".join(line.strip().replace(": &", ": &", 1)
                                for line in _laughs(indent="").splitlines()) + "}"
        args += ["--set", f"learners.0.params={value}"]
    elif case == "cycle":
        config.write_text(BOMB.split("    params:")[0] + "    params: {a: &x [*x]}\n", "utf-8")
    elif case == "deep":
        config.write_text(BOMB.split("    params:")[0] + "    params: {a: "
                          + "[" * 20_000 + "]" * 20_000 + "}\n", "utf-8")
    else:
        config.write_text(BOMB.split("    params:")[0] + "    params: {}\n"
                          + "#" * 2_000_000 + "\n", "utf-8")
    started = time.monotonic()
    done = run_command(tmp_path, *args)
    assert done.returncode == exitcodes.UNUSABLE, done.stderr
    assert time.monotonic() - started < 50
    assert "Traceback" not in done.stderr and "no check foresaw" not in done.stderr
    why = {"file": "more than 100,000 values once its aliases are expanded (at "
                   "learners.0.params.a",
           "--set": "--set learners.0.params: the value: more than 100,000 values",
           "cycle": "more than 100,000 values once its aliases are expanded (at "
                    "learners.0.params.a…)",
           "deep": "c.yaml: its values are nested too deep to read",
           "large": "c.yaml: more than 1,000,000 bytes of YAML"}[case]
    assert why in " ".join(done.stderr.split()), done.stderr


def test_an_ordinary_configuration_with_aliases_is_read():
    from foldstream.job.config import load_config

    text = ("source: {kind: generator, model: river.datasets.synth.SEA, limit: 100}\n"
            "learners:\n  - {name: a, model: river.tree.HoeffdingTreeClassifier, params: "
            "&p {grace_period: 50}}\n  - {name: b, model: river.tree.HoeffdingTreeClassifier, "
            "params: *p}\n")
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"aliases-{os.getpid()}.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        config = load_config(path)
    finally:
        path.unlink()
    assert [learner.params for learner in config.learners] == [{"grace_period": 50}] * 2


def test_a_billion_folds_are_refused_at_start_naming_the_key(capsys):
    code = main(["validate", "--set", "evaluation.folds=1000000000"])
    assert code == exitcodes.UNUSABLE
    assert "evaluation.folds" in capsys.readouterr().err


# ---------------------------------------------------------- keys naming executables and jars
@pytest.mark.parametrize("override, words", [
    ("engine.python_executable=/bin/sh", "engine.python_executable: '/bin/sh' is not the path"),
    ("engine.python_executable='python3 -c \"import os\"'", "not the path of a Python"),
    ("engine.python_executable=/bin/python;touch", "not the path of a Python"),
    ("engine.jars=[/etc/passwd]", "engine.jars: '/etc/passwd' is not a jar file"),
    ("engine.jars=[{tmp}/fake.jar]", "is not a jar file"),
    ("engine.flink_config={{env.java.opts.all: -XX:OnError=sh}}", "env.java.opts.all: a Flink key"),
    ("engine.flink_config={{python.executable: /bin/sh}}", "python.executable: a Flink key"),
    ("engine.flink_config={{pipeline.jars: file:///tmp/x.jar}}", "pipeline.jars: a Flink key"),
    ("engine.flink_config={{containerized.taskmanager.env.LD_PRELOAD: /x.so}}", "a Flink key"),
])
def test_keys_that_name_an_executable_or_code_are_checked_for_what_they_must_be(tmp_path,
                                                                                override, words):
    (tmp_path / "fake.jar").write_text("not a zip")
    with pytest.raises(ConfigError) as error:
        load_config(None, [override.format(tmp=tmp_path)])
    assert words in " ".join(str(error.value).split())


def test_a_python_on_the_workers_and_flinks_other_keys_pass(tmp_path):
    config = load_config(None, ["engine.python_executable=/opt/venv/bin/python3.11",
                                "engine.flink_config={rest.port: 8082, "
                                "python.fn-execution.bundle.size: 100}"])
    assert config.engine.python_executable == "/opt/venv/bin/python3.11"


TINY = ROOT / "conf" / "experiments" / "tiny.yaml"


def run_command(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "foldstream.job.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_limited(3))


# ----------------------------------------------------------------------- counts in experiments
def test_a_billion_replications_run_in_flat_memory_and_stop(tmp_path):
    """The tasks are made as workers free up: the first results come, in bounded memory, and
    SIGTERM stops the run with the count of all it would have run."""
    process = subprocess.Popen(
        [sys.executable, "-m", "foldstream.job.cli", "experiment", str(TINY), "--out", "e",
         "--set", "replications=1000000000", "--set", "n=200", "--set", "report_every=100",
         "--set", "modes=[split]", "--workers", "2"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_limited(4))
    results = tmp_path / "e" / "results.jsonl"
    deadline = time.monotonic() + 240
    while process.poll() is None and time.monotonic() < deadline:
        if results.exists() and results.read_text(encoding="utf-8").count("\n") >= 2:
            break
        time.sleep(0.5)
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=120)
    assert process.returncode == exitcodes.TERMINATED, err[-2000:]
    assert "of 2000000000 replications are in" in " ".join(err.split()), err[-2000:]
    assert results.read_text(encoding="utf-8").count("\n") >= 2


def test_more_workers_than_the_machine_holds_are_refused(capsys):
    code = main(["experiment", str(TINY), "--workers", "1000000"])
    assert code == exitcodes.UNUSABLE
    assert "--workers: 1,000,000 processes on" in capsys.readouterr().err

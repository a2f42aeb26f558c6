"""Check, then build (issue 18): nothing a configuration names is called before it is known to
be what its key promises; a model that cannot be built, cloned or given its parameters fails at
start, exit 2, naming the key, without a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from river import naive_bayes

import foldstream
from foldstream.job.cli import main
from foldstream.job.config import ConfigError, load_config

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
    ("learners.0={name: m, model: moa.classifiers.trees.NoSuchTree}", "learners.0"),
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
    from foldstream.job.tools.experiment import load_experiment

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
    from foldstream.job.tools.experiment import load_experiment

    marker = user_models / "ran"
    with pytest.raises(ConfigError) as raised:
        load_experiment(ROOT / "conf" / "experiments" / "tiny.yaml",
                        [o.replace("{marker}", str(marker)) for o in overrides])
    assert key in str(raised.value)
    assert not marker.exists()

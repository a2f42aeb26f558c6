"""Remembered checks (operators/learners/checked.py): ``foldstream validate`` passes a learner
spec that passed before without importing its classes, and fails a bad one exactly as a full
check does; an entry made against other files is not used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from foldstream.job.config import ConfigError, load_config
from foldstream.operators.learners import checked

#: Bad learners of the embedded default, each beside a good spec of the same class (remembered
#: first), and the key its error must name.
BAD = {
    "unknown param": ("{model: river.tree.HoeffdingTreeClassifier, params: {no_such: 1}}",
                      "{model: river.tree.HoeffdingTreeClassifier, params: {grace_period: 50}}",
                      "learners.0.params.no_such"),
    "wrong shape": ("{model: river.tree.HoeffdingTreeClassifier, params: {grace_period: [1]}}",
                    "{model: river.tree.HoeffdingTreeClassifier, params: {grace_period: 1}}",
                    "learners.0.params.grace_period"),
    "not a classifier": ("{model: river.preprocessing.StandardScaler}",
                         "{model: river.compose.Pipeline, args: [{model: "
                         "river.preprocessing.StandardScaler}, {model: "
                         "river.naive_bayes.GaussianNB}]}",
                         "learners.0.model"),
    "missing class": ("{model: river.tree.NoSuchTree}",
                      "{model: river.tree.HoeffdingTreeClassifier}",
                      "learners.0.model"),
}


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("FOLDSTREAM_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / checked.FOLDER


def _learner(spec: str) -> list[str]:
    return [f"learners=[{{name: a, {spec[1:-1]}}}]"]


def _error(overrides: list[str], remember: bool) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(None, overrides, remember_checks=remember)
    return str(caught.value)


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_spec_fails_the_same_with_remembered_checks(cache, case):
    bad, good, key = BAD[case]
    plain = _error(_learner(bad), remember=False)
    assert key in plain
    load_config(None, _learner(good), remember_checks=True)  # the class's good spec remembered
    assert len(list(cache.glob("*.json"))) == 1
    assert _error(_learner(bad), remember=True) == plain  # cold for this spec
    assert _error(_learner(bad), remember=True) == plain  # and again: nothing was remembered
    assert len(list(cache.glob("*.json"))) == 1


def test_a_good_spec_is_remembered_with_what_it_gives(cache):
    config = load_config(None, remember_checks=True)
    assert len(list(cache.glob("*.json"))) == len(config.learners) == 3
    again = load_config(None, remember_checks=True)
    assert [learner._passed for learner in again.learners] == [checked.Passed(True)] * 3
    # a measure of class scores needs them: a learner remembered without them is refused
    no_scores = ["learners=[{name: ovo, model: river.multiclass.OneVsOneClassifier, "
                 "params: {classifier: {model: river.linear_model.LogisticRegression}}}]",
                 "evaluation.scores=[auc]"]
    plain = _error(no_scores, remember=False)
    assert "gives no class scores" in plain
    load_config(None, no_scores[:1], remember_checks=True)
    assert _error(no_scores, remember=True) == plain


def _module(folder: Path, text: str) -> Path:
    path = folder / "foldstream_test_models.py"
    path.write_text(text)
    return path


GOOD_MODULE = """\
from river.dummy import NoChangeClassifier


class Model(NoChangeClassifier):
    def __init__(self, depth: int = 1):
        super().__init__()
        self.depth = depth
"""


def test_a_changed_file_makes_its_entry_stale(cache, tmp_path, monkeypatch):
    path = _module(tmp_path, GOOD_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "foldstream_test_models", raising=False)
    spec = ("foldstream_test_models.Model", {"depth": 2}, [])
    load_config(None, ["learners=[{name: m, model: foldstream_test_models.Model, "
                       "params: {depth: 2}}]"], remember_checks=True)
    assert checked.recall(*spec) == checked.Passed(True)
    assert str(path) in json.loads(next(cache.glob("*.json")).read_text())["files"]
    found = os.stat(path)
    os.utime(path, ns=(found.st_atime_ns, found.st_mtime_ns + 1_000_000_000))
    assert checked.recall(*spec) is None
    load_config(None, ["learners=[{name: m, model: foldstream_test_models.Model, "
                       "params: {depth: 2}}]"], remember_checks=True)
    assert checked.recall(*spec) == checked.Passed(True)  # checked anew, remembered anew


def test_an_unreadable_entry_is_no_entry(cache):
    load_config(None, remember_checks=True)
    for entry in cache.glob("*.json"):
        entry.write_text("{not json")
    assert checked.recall("river.naive_bayes.GaussianNB", {}, []) is None
    load_config(None, remember_checks=True)
    assert checked.recall("river.naive_bayes.GaussianNB", {}, []) == checked.Passed(True)


def test_validate_fails_a_spec_whose_class_changed_since_it_passed(tmp_path):
    """Fresh processes, as a user runs them: a module edited after a passing ``validate`` (its
    class lost a parameter) fails the next one, naming the key."""
    _module(tmp_path, GOOD_MODULE)
    env = {**os.environ, "FOLDSTREAM_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": str(tmp_path)}
    command = [sys.executable, "-m", "foldstream.job.cli", "validate", "--set",
               "learners=[{name: m, model: foldstream_test_models.Model, params: {depth: 2}}]"]

    def validate() -> subprocess.CompletedProcess:
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)

    assert validate().returncode == 0
    assert validate().returncode == 0  # from the entry
    _module(tmp_path, GOOD_MODULE.replace("depth: int = 1", "height: int = 1")
            .replace("self.depth = depth", "self.height = height"))
    done = validate()
    assert done.returncode == 2, done.stdout
    assert "learners.0.params.depth" in done.stderr

"""River's generators and data sets as sources (connectors/generators.py): a generator yields
``limit`` examples reproducibly, its seed fills every seed parameter, its values are kept as
river yields them, nested generators (concept drift) build, and bad parameters fail clearly."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from foldstream.connectors.generators import iter_generator
from foldstream.operators.learners.imports import import_object
from foldstream.operators.records.base import Example
GENERATORS = [
    ("river.datasets.synth.SEA", {"variant": 1, "noise": 0.1}),
    ("river.datasets.synth.Hyperplane", {"n_features": 4, "mag_change": 0.01}),
    ("river.datasets.synth.RandomRBFDrift", {"n_classes": 3, "change_speed": 0.01}),
    ("river.datasets.synth.LED", {"noise_percentage": 0.1}),
    ("river.datasets.synth.Agrawal", {"classification_function": 2}),
]


@pytest.mark.parametrize(("model", "params"), GENERATORS,
                         ids=[g[0].rsplit(".")[-1] for g in GENERATORS])
def test_generator_yields_limit_examples_reproducibly(model, params):
    first = list(iter_generator(model, params, seed=7, limit=200))
    assert len(first) == 200
    assert all(isinstance(e, Example) for e in first)
    assert {e.stream for e in first} == {model.rsplit(".", 1)[-1].lower()}
    assert all(e.key is None and e.location for e in first)
    assert all(isinstance(name, str) for e in first for name in e.x)
    assert not any(isinstance(v, np.generic) for e in first for v in [*e.x.values(), e.y])
    assert all(isinstance(v, (int, float)) for e in first for v in e.x.values())
    again = list(iter_generator(model, params, seed=7, limit=200))
    assert [(e.x, e.y) for e in again] == [(e.x, e.y) for e in first]
    other = list(iter_generator(model, params, seed=8, limit=200))
    assert [e.x for e in other] != [e.x for e in first]


def test_generator_seed_fills_every_seed_parameter():
    # RandomRBF has seed_model and seed_sample and no `seed`: both take the seed.
    a = list(iter_generator("river.datasets.synth.RandomRBF", {}, seed=3, limit=20))
    b = list(iter_generator("river.datasets.synth.RandomRBF", {"seed_model": 3}, seed=3,
                            limit=20))
    assert [(e.x, e.y) for e in a] == [(e.x, e.y) for e in b]
    with pytest.raises(ValueError, match="seed given twice"):
        iter_generator("river.datasets.synth.SEA", {"seed": 1}, seed=2, limit=5)


def test_generator_values_kept_as_river_yields_them():
    (led,) = iter_generator("river.datasets.synth.LED", {}, seed=1, limit=1)
    assert all(type(v) is int for v in led.x.values()) and type(led.y) is int
    (sea,) = iter_generator("river.datasets.synth.SEA", {}, seed=1, limit=1, stream="s")
    assert list(sea.x) == ["0", "1", "2"] and type(sea.y) is bool and sea.stream == "s"


def test_concept_drift_stream_with_nested_generators():
    params = {"stream": {"model": "river.datasets.synth.SEA", "params": {"variant": 0}},
              "drift_stream": {"model": "river.datasets.synth.SEA", "params": {"variant": 3}},
              "position": 50, "width": 10}
    first = list(iter_generator("river.datasets.synth.ConceptDriftStream", params, 5, 100))
    again = list(iter_generator("river.datasets.synth.ConceptDriftStream", params, 5, 100))
    assert len(first) == 100 and first[0].stream == "conceptdriftstream"
    assert [(e.x, e.y) for e in first] == [(e.x, e.y) for e in again]
    with pytest.raises(ValueError, match="unknown keys"):
        iter_generator("river.datasets.synth.ConceptDriftStream",
                       {"stream": {"model": "river.datasets.synth.SEA", "extra": 1}}, 5, 10)


@pytest.mark.parametrize(("model", "params", "limit", "match"), [
    ("river.datasets.synth.SEA", {}, None, "limit"),
    ("river.datasets.synth.SEA", {}, -1, "limit"),
    ("river.datasets.synth.Nope", {}, 5, "river.datasets.synth.Nope"),
    ("river.datasets.synth.SEA", {"colour": 1}, 5, "cannot build river.datasets.synth.SEA"),
    ("river.datasets.synth.Friedman", {}, 5, "regression"),
])
def test_generator_errors(model, params, limit, match):
    with pytest.raises(ValueError, match=match):
        iter_generator(model, params, seed=1, limit=limit)


def test_import_object(tmp_path, monkeypatch):
    from river.datasets import synth
    assert import_object("river.datasets.synth.SEA") is synth.SEA
    assert import_object("river.datasets.synth") is synth
    for bad, match in [("SEA", "not a dotted path"), ("river..x", "not a dotted path"),
                       ("nowhere_xyz.thing", "no module named 'nowhere_xyz'"),
                       ("river.datasets.synth.Nope", "has no attribute 'Nope'")]:
        with pytest.raises(ValueError, match=match) as info:
            import_object(bad)
        assert repr(bad) in str(info.value)
    # A module that exists but lacks a dependency of its own: that is the error to show.
    (tmp_path / "fs_broken_mod.py").write_text("import fs_missing_dependency_xyz\nX = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="fs_missing_dependency_xyz"):
        import_object("fs_broken_mod.X")
    sys.modules.pop("fs_broken_mod", None)

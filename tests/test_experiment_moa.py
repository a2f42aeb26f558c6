"""``foldstream experiment`` with MOA's learners (operators/learners/moa/): the design a MOA ensemble
seeded per replication and role, its noise conditions a noise filter around it (the batch path
kept), the exact null around a MOA tree, and the same results with 1 and 2 worker processes
although the parent has started a JVM (the workers are spawned, each starts its own).

These tests start JVMs (the test process's and the workers') and need a JDK.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldstream.job.config import ConfigError
from foldstream.job.tools.experiment import load_experiment, run_configs, run_experiment, tasks
from foldstream.operators.stages.fanout import FanOut, FanOutPlan
from foldstream.operators.stages.learner import LearnerSpec, LearnerTask
from foldstream.operators.learners.moa import jvm_running
from foldstream.operators.learners.noise import NoiseFilter
from foldstream.operators.records.base import ExampleBatch

pytestmark = pytest.mark.jvm  # slow (tests/conftest.py)

TINY = Path(__file__).resolve().parents[1] / "conf" / "experiments" / "tiny.yaml"
#: tiny.yaml with MOA's learners: OzaBag of 3 Hoeffding trees, the exact null a MOA tree.
MOA = ["learner={name: ozabag3, model: moa.classifiers.meta.OzaBag, options: '-s 3', "
       "params: {seed: 1}}",
       "conditions.exact_null={model: moa.classifiers.trees.HoeffdingTree, options: '-g 50', "
       "p_noise: 0.1}",
       "datasets=[{name: sea, source: {kind: generator, model: river.datasets.synth.SEA}}]",
       "modes=[bootstrap]", "n=2000", "report_every=1000", "replications=2"]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _outcomes(line: dict) -> str:
    return json.dumps({k: v for k, v in line.items() if k not in ("wall_time_s", "cpu_time_s")},
                      sort_keys=True)


def test_moa_learners_run_an_experiment_alike_with_one_and_two_workers(tmp_path):
    experiment = load_experiment(TINY, MOA)
    assert jvm_running()  # the checks started the parent's JVM: the workers must not fork it
    one = run_experiment(experiment, tmp_path / "one.jsonl", workers=1)
    two = run_experiment(experiment, tmp_path / "two.jsonl", workers=2)
    assert one.ran == two.ran == 2 and one.interrupted is None and two.interrupted is None
    a, b = _lines(tmp_path / "one.jsonl"), _lines(tmp_path / "two.jsonl")
    assert sorted(map(_outcomes, a)) == sorted(map(_outcomes, b))
    assert one.rates == two.rates
    for line in a:
        accuracy = line["accuracy"]
        # every learner learned (SEA: a tree is right on more than 80%), A and B are two seeds
        # of the design, and the noise costs accuracy
        assert min(accuracy.values()) > 0.7, accuracy
        assert accuracy["A"] != accuracy["B"]
        assert accuracy["B_noise_0.10"] < accuracy["B_noise_0.05"] < accuracy["B"]
    assert a[0]["accuracy"] != a[1]["accuracy"]  # the replications' seeds reach MOA


def test_the_noise_filters_wrap_the_moa_design_with_its_seeds_and_keep_the_batch_path():
    experiment = load_experiment(TINY, MOA)
    design, null = run_configs(experiment, tasks(experiment)[0])
    b = next(l for l in design.learners if l.name == "B")
    noisy = next(l for l in design.learners if l.name == "B_noise_0.05")
    assert noisy.params["model"] == {"model": b.model, "options": "-s 3", "params": b.params,
                                     "args": []}  # B, its own seed, inside the filter
    spec = LearnerSpec(noisy.name, noisy.model, dict(noisy.params), fold_seeds=True)
    model = spec.build(0)
    assert isinstance(model, NoiseFilter) and hasattr(model, "run_batch")
    plain = LearnerSpec("B", b.model, dict(b.params), options=b.options, fold_seeds=True).build(0)
    assert model.model.random_seed() == plain.random_seed()  # the same MOA seed as B's fold 0
    e1 = null.learners[0]
    assert e1.params["model"]["model"] == "moa.classifiers.trees.HoeffdingTree"


def _batches(n=600, size=100, folds=3):
    from river.datasets import synth

    data = list(synth.SEA(seed=1).take(n))
    fan = FanOut("s", FanOutPlan("bootstrap", folds=folds, seed=1))
    return [fan.process(ExampleBatch("s", s // size, s, list(range(s + 1, s + size + 1)),
                                     [x for x, _ in data[s:s + size]],
                                     [int(y) for _, y in data[s:s + size]]))
            for s in range(0, n, size)]


def test_the_noise_filters_batch_path_draws_as_its_per_example_path():
    from river.naive_bayes import GaussianNB

    class Batched(GaussianNB):
        """GaussianNB with a batch path made of its own per-example calls."""

        def run_batch(self, batch, prequential, xs):
            codes = {label: code for code, label in enumerate(batch.classes)}
            pred, scored = [], []
            for x, y, w in zip(xs, batch.y, batch.weights):
                scored.append(prequential or w == 0)
                pred.append(codes.get(self.predict_one(x), -1) if scored[-1] else -1)
                for _ in range(w):
                    self.learn_one(x, batch.classes[y])
            return pred, scored, None

    def run(model):
        replicas = [LearnerTask(LearnerSpec("n", "x", prototype=model), fold)
                    for fold in range(3)]
        return [[replicas[b.fold].process(b).y_pred for b in group] for group in _batches()]

    assert not hasattr(NoiseFilter(GaussianNB()), "run_batch")  # river's: per example
    batched, plain = run(NoiseFilter(Batched(), 0.3, 4)), run(NoiseFilter(GaussianNB(), 0.3, 4))
    assert batched == plain
    assert batched != run(GaussianNB())  # the noise is there


@pytest.mark.parametrize("override, words", [
    ("learner={name: ht, model: moa.classifiers.trees.HoeffdingTree, params: {seed: 1}}",
     "not randomizable"),
    ("learner={name: bag, model: moa.classifiers.meta.OzaBag}", "has no `seed` parameter"),
    ("conditions.exact_null={model: moa.classifiers.trees.HoeffdingTree, options: '-x 1'}",
     "Unknown option: -x"),
])
def test_a_bad_moa_design_fails_at_start_naming_it(override, words):
    with pytest.raises(ConfigError) as error:
        load_experiment(TINY, [override])
    assert words in " ".join(str(error.value).split())


PAPER = TINY.parent / "bifet2015-paper.yaml"


def test_the_paper_scale_experiment_is_valid_and_builds_every_stream():
    """conf/experiments/bifet2015-paper.yaml: the generated streams of Bifet et al.'s Tables
    3-4, Covertype (fetched on first use, dataset://covtype) and Electricity, MOA's design, the
    paper's size; each generator is seeded and yields its features."""
    from foldstream.connectors.generators import make_generator

    experiment = load_experiment(PAPER)
    assert [d.name for d in experiment.datasets] == [
        "covtype", "elec", "led50000", "sea50", "sea50000", "hyp10_0.001", "hyp10_0.0001",
        "rbf0_0", "rbf50_0.001", "rbf10_0.001", "rbf50_0.0001", "rbf10_0.0001"]
    assert (experiment.folds, experiment.replications, experiment.modes) == \
        (10, 50, ["bootstrap", "cv", "split"]) and experiment.n >= 10_000
    assert experiment.learner.model.startswith("moa.") and \
        experiment.conditions.exact_null.model.startswith("moa.")
    widths = {}
    assert experiment.datasets[0].source.label == "Cover_Type"
    for dataset in experiment.datasets[2:]:
        source = dataset.source
        first = [x for x, _ in make_generator(source.model, source.params, 5).take(3)]
        again = [x for x, _ in make_generator(source.model, source.params, 5).take(3)]
        assert first == again and len(first[0]) in (3, 10, 24), dataset.name  # seeded, sized
        widths[dataset.name] = source.params.get("width")
    assert widths["sea50"] == 50 and widths["sea50000"] == widths["led50000"] == 50_000

"""The learners of Bifet et al.'s experiments (docs/method.md §14): per-fold seeds and the
seeded noise filter, from a configuration, the same in every run and batch size."""

from __future__ import annotations

import pytest
from river import dummy, naive_bayes

from foldstream.job.config import ConfigError, load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.stages.learner import LearnerSpec, LearnerTask
from foldstream.operators.learners.noise import NoiseFilter
from foldstream.operators.stats.weights import derive_seed

SEA = "source={kind: generator, model: river.datasets.synth.SEA, limit: 1500, seed: 2}"
BAGGING = ("{name: bag, model: river.ensemble.BaggingClassifier, fold_seeds: %s, params: "
           "{model: {model: river.naive_bayes.GaussianNB}, n_models: 2, seed: 5}}")
NOISY = ("{name: noisy, model: foldstream.operators.learners.noise.NoiseFilter, fold_seeds: true, params: "
         "{model: {model: river.ensemble.BaggingClassifier, params: {model: "
         "{model: river.naive_bayes.GaussianNB}, n_models: 2, seed: 5}}, p_noise: 0.1, seed: 1}}")


def tasks(config, name):
    plans = make_plans(config)
    index = [spec.name for spec in plans.learners].index(name)
    return [plans.learner_task(index, fold) for fold in range(plans.folds)]


def test_fold_seeds_give_every_fold_its_own_seed_nested_ones_too():
    config = load_config(None, [SEA, f"learners=[{BAGGING % 'true'}, {NOISY}]",
                                "evaluation.folds=4"])
    assert [t.model.seed for t in tasks(config, "bag")] == [derive_seed(5, f) for f in range(4)]
    noisy = tasks(config, "noisy")
    assert [t.model.seed for t in noisy] == [derive_seed(1, f) for f in range(4)]
    assert [t.model.model.seed for t in noisy] == [derive_seed(5, f) for f in range(4)]
    plain = load_config(None, [SEA, f"learners=[{BAGGING % 'false'}]", "evaluation.folds=4"])
    assert [t.model.seed for t in tasks(plain, "bag")] == [5] * 4


def test_a_prototype_object_gets_fold_seeds_too():
    from river import ensemble

    spec = LearnerSpec("bag", "river.ensemble.BaggingClassifier", fold_seeds=True,
                       prototype=ensemble.BaggingClassifier(naive_bayes.GaussianNB(), seed=9))
    assert [LearnerTask(spec, f).model.seed for f in range(3)] == [derive_seed(9, f) for f in range(3)]
    assert spec.prototype.seed == 9


@pytest.mark.slow
def test_runs_with_fold_seeds_and_noise_are_the_same_in_every_batch_size():
    runs = []
    for batch in (7, 500):
        config = load_config(None, [SEA, f"learners=[{BAGGING % 'true'}, {NOISY}]",
                                    "evaluation.folds=3", "evaluation.report_every=500",
                                    f"engine.batch_size={batch}"])
        records, rejected = evaluate_to_list(make_plans(config), open_source(config))
        runs.append([r for r in records if r["type"] != "summary"])
    assert runs[0] == runs[1] and len(runs[0]) > 6


def test_the_noise_filter_replaces_about_p_of_the_predictions_with_seen_classes():
    inner = dummy.NoChangeClassifier()
    noisy = NoiseFilter(inner.clone(), p_noise=0.3, seed=4)
    clean = inner.clone()
    changed = 0
    for i in range(4000):
        y = "abc"[i % 3]
        prediction = noisy.predict_one({})
        if prediction != clean.predict_one({}):
            changed += 1
            assert prediction in "abc"
        noisy.learn_one({}, y)
        clean.learn_one({}, y)
    # a replacement equals the clean prediction one time in three: 0.3 * 2/3 = 0.2 changed
    assert 0.17 < changed / 4000 < 0.23


def test_two_filters_draw_differently_by_seed_and_alike_by_replay():
    def predictions(seed):
        f = NoiseFilter(dummy.NoChangeClassifier(), p_noise=0.5, seed=seed)
        out = []
        for i in range(300):
            out.append(f.predict_one({}))
            f.learn_one({}, i % 4)
        return out

    assert predictions(1) == predictions(1)
    assert predictions(1) != predictions(2)


def test_a_bad_noise_rate_fails_at_start_naming_the_learner():
    with pytest.raises(ConfigError, match="learners.0.*p_noise"):
        load_config(None, [SEA, "learners=[{name: n, model: foldstream.operators.learners.noise.NoiseFilter, "
                                "params: {model: {model: river.dummy.NoChangeClassifier}, "
                                "p_noise: 1.5}}]"])

"""Live verdicts in the stages and records (docs/method.md §10, §12), with verdicts switched on.

* Brute force: for random small streams (deterministic and seeded random-guess learners, 1 to
  5 folds, every mode, prequential and holdout, classes appearing late, random batch sizes and
  reporting intervals) the ``sequential`` object of every ``accuracy`` comparison and every
  ``verdict`` record equal what this file recomputes from the learners' raw predictions: the
  per-fold 0/1 losses, the fold-averaged differences in exact rationals, ``n``, ``S_n`` and
  ``V_n`` by their definitions, the bounds through :func:`operators.stats.sequential.interval`.
* The records do not depend on the batch size.
* End to end on 10,000 SEA examples: two noise filters of the same rate around one learner are
  never told apart; the learner against its 20%-randomised copy is, before the end.
* Configuration errors, a misaligned report, and the size of what a report carries.

The test learners live in this file and are registered as the module ``LEARNERS`` so that a
configuration can name them by dotted path (they run in-process only).
"""

from __future__ import annotations

import pickle
import random
import sys
import types
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from river import base

from foldstream.job.config import ConfigError, load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.operators.stages.aggregator import Aggregator
from foldstream.operators.records.base import Example, ExampleBatch, dumps
from foldstream.operators.stats.sequential import UNDECIDED, interval, verdict_of

LEARNERS = "foldstream_verdict_test_learners"


# ------------------------------------------------------------------------------ test learners
class RandomGuess(base.Classifier):
    """Predicts a class drawn uniformly from the labels it has learned (None before any)."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self._rng = random.Random(seed)
        self._classes: list = []

    def learn_one(self, x, y):
        if y not in self._classes:
            self._classes.append(y)

    def predict_proba_one(self, x):
        return {c: 1.0 / len(self._classes) for c in self._classes}

    def predict_one(self, x, **kwargs):
        return self._rng.choice(self._classes) if self._classes else None


_module = types.ModuleType(LEARNERS)
_module.RandomGuess = RandomGuess
sys.modules[LEARNERS] = _module

SEA = "source={kind: generator, model: river.datasets.synth.SEA, limit: 600, seed: 3}"
ON = "evaluation.verdicts.enabled=true"
CHEAP = {
    "nochange": "{name: nochange, model: river.dummy.NoChangeClassifier}",
    "prior": "{name: prior, model: river.dummy.PriorClassifier}",
    "nb": "{name: nb, model: river.naive_bayes.GaussianNB}",
    "guess": f"{{name: guess, model: {LEARNERS}.RandomGuess, params: {{seed: 7}}}}",
    "guess2": f"{{name: guess2, model: {LEARNERS}.RandomGuess, params: {{seed: 8}}}}",
}


def learners(*names: str) -> str:
    return "learners=[" + ", ".join(CHEAP[n] for n in names) + "]"


def comparable(records) -> list[str]:
    return [dumps(r) for r in records if r["type"] != "summary"]


# -------------------------------------------------------------------------------- brute force
def predictions(plans, examples: list[Example]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``scored`` (k, N) and, per learner, its 0/1 losses (k, N; 0 where not scored), from the
    learners' raw predictions on the whole stream in one batch (learners predict then learn one
    example at a time, so batching does not change a prediction)."""
    batch = ExampleBatch(examples[0].stream, 0, 0, list(range(1, len(examples) + 1)),
                         [e.x for e in examples], [e.y for e in examples], final=True)
    fold_batches = plans.fan_out(examples[0].stream).process(batch)
    scored = np.zeros((plans.folds, len(examples)), dtype=bool)
    losses = {spec.name: np.zeros((plans.folds, len(examples)), dtype=int)
              for spec in plans.learners}
    for fb in fold_batches:
        for index, spec in enumerate(plans.learners):
            out = plans.learner_task(index, fb.fold).process(fb)
            for t in range(len(examples)):
                if out.scored[t]:
                    scored[fb.fold, t] = True
                    losses[spec.name][fb.fold, t] = int(out.y_pred[t] != out.y[t])
    return scored, losses


def brute_states(scored, losses_a, losses_b, positions) -> dict[int, tuple]:
    """At each position, ``n``, ``S_n``, ``V_n`` as the accumulator rounds it (each exact term
    rounded, then summed in floats) and the exact ``V_n``, over examples ``1 .. position``, by
    the definitions."""
    k = scored.shape[0]
    n, total, variance, exact = 0, Fraction(0), 0.0, Fraction(0)
    states, t = {}, 0
    for position in positions:
        for t in range(t, position):
            if not scored[:, t].any():
                continue  # no fold scored it: not in the sequence
            d = Fraction(sum(int(losses_a[f, t]) - int(losses_b[f, t])
                             for f in range(k) if scored[f, t]), k)
            m = total / n if n else Fraction(0)
            variance += float((d - m) ** 2)
            exact += (d - m) ** 2
            total += d
            n += 1
        t = position
        states[position] = (n, total, variance, exact)
    return states


def stream_examples(labels: list[str], values: list[int]) -> list[Example]:
    return [Example("s", {"a": float(v), "b": float(v % 3)}, y) for y, v in zip(labels, values)]


@st.composite
def runs(draw):
    mode = draw(st.sampled_from(["bootstrap", "cv", "split", "single"]))
    folds = 1 if mode == "single" else draw(st.integers(2, 5))
    # labels in runs (so that the no-change learner can beat a random guess), the third class
    # appearing late
    n = draw(st.integers(1, 300))
    longest = draw(st.integers(1, 15))
    late = draw(st.integers(0, n))
    rnd = draw(st.randoms(use_true_random=False))
    labels: list[str] = []
    while len(labels) < n:
        labels += [rnd.choice("xy" if len(labels) < late else "xyz")] * rnd.randint(1, longest)
    labels = labels[:n]
    values = [rnd.randint(0, 9) for _ in range(n)]
    names = draw(st.lists(st.sampled_from(sorted(CHEAP)), min_size=2, max_size=4, unique=True)
                 | st.just(["nochange", "guess"]))  # a pair that a few hundred examples decide
    overrides = [
        "source={kind: generator, model: river.datasets.synth.SEA, limit: 1}", learners(*names),
        ON, f"evaluation.mode={mode}", f"evaluation.folds={max(folds, 2)}",
        f"evaluation.prequential={draw(st.booleans())}".lower(),
        f"evaluation.seed={draw(st.integers(0, 5))}",
        f"evaluation.report_every={draw(st.integers(1, 40))}",
        f"evaluation.alpha={draw(st.sampled_from([0.05, 0.5]))}",
        f"evaluation.compare={draw(st.sampled_from(['[accuracy, kappa_m]', '[kappa]']))}",
        f"evaluation.verdicts.correction={draw(st.sampled_from(['bonferroni', 'none']))}",
        f"evaluation.verdicts.v_min={draw(st.sampled_from([0.1, 100]))}",
        f"engine.batch_size={draw(st.integers(1, 30))}",
    ]
    return overrides, stream_examples(labels, values)


@pytest.mark.slow  # 80 random runs
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs())
def test_sequential_and_verdicts_equal_a_recomputation_from_the_raw_losses(run):
    overrides, examples = run
    config = load_config(None, overrides)
    plans = make_plans(config)
    records, _ = evaluate_to_list(plans, examples)
    scored, losses = predictions(plans, examples)
    names = [spec.name for spec in plans.learners]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    ev = config.evaluation
    alpha = ev.alpha / len(pairs) if ev.verdicts.correction == "bonferroni" else ev.alpha
    positions = sorted({r["position"] for r in records if r["type"] == "measures"})
    assert positions[-1] == len(examples)
    sequential = {(r["position"], r["a"], r["b"]): r["sequential"] for r in records
                  if r["type"] == "comparison" and r["measure"] == "accuracy"}
    assert all("sequential" not in r for r in records
               if r["type"] == "comparison" and r["measure"] != "accuracy")
    # the whole-stream verdicts (docs/method.md §12); their scope fields are checked apart
    stream_verdicts = [r for r in records if r["type"] == "verdict" and r["scope"] == "stream"]
    got = [{k: v for k, v in r.items() if k not in ("scope", "since")} for r in stream_verdicts]
    expected = []
    previous = {pair: UNDECIDED for pair in pairs}
    states = {(a, b): brute_states(scored, losses[a], losses[b], positions) for a, b in pairs}
    for position in positions:
        for a, b in pairs:
            n, total, variance, exact = states[a, b][position]
            lower, upper = interval(n, float(total), variance, alpha, ev.verdicts.v_min)
            verdict = verdict_of(lower, upper)
            if "accuracy" in ev.compare:
                seq = sequential[position, a, b]
                assert (seq["n"], seq["sum"], seq["variance"]) == (n, float(total), variance)
                assert seq["variance"] == pytest.approx(float(exact), rel=1e-12, abs=1e-300)
                assert (seq["lower"], seq["upper"], seq["alpha"], seq["verdict"]) == \
                    (lower, upper, alpha, verdict)
            if verdict != previous[a, b]:
                expected.append({"schema": 1, "type": "verdict", "stream": "s",
                                 "position": position, "a": a, "b": b, "measure": "accuracy",
                                 "verdict": verdict, "previous": previous[a, b], "lower": lower,
                                 "upper": upper, "n": n, "alpha": alpha})
                previous[a, b] = verdict
    assert got == expected
    event(f"verdict records: {'some' if got else 'none'}")
    # Order within a position: alarms, measures, comparisons, verdicts, rankings.
    rank = {"alarm": 0, "measures": 1, "comparison": 2, "verdict": 3, "ranking": 4}
    for position in positions:
        kinds = [rank[r["type"]] for r in records
                 if r["type"] in rank and r["position"] == position]
        assert kinds == sorted(kinds)


def test_the_brute_force_sees_decisions_and_holdout_gaps():
    """The recomputation above is not vacuous: on a plain stream the cheap learners reach
    decided verdicts, and holdout leaves examples that no fold scored out of ``n``."""
    examples = stream_examples((["x"] * 10 + ["y"] * 10) * 30, list(range(600)))
    config = load_config(None, ["source={kind: generator, model: river.datasets.synth.SEA, "
                                "limit: 1}", learners("nochange", "guess"), ON,
                                "evaluation.folds=3", "evaluation.prequential=false",
                                "evaluation.report_every=50", "evaluation.verdicts.v_min=1"])
    records, _ = evaluate_to_list(make_plans(config), examples)
    verdicts = [r for r in records if r["type"] == "verdict"]
    assert verdicts and verdicts[0]["verdict"] == "a_better"
    last = [r for r in records if r["type"] == "comparison" and r["measure"] == "accuracy"][-1]
    assert 0 < last["sequential"]["n"] < 600  # some examples were scored by no fold


# -------------------------------------------------------------------------- batch-size identity
@pytest.mark.slow  # several runs
@pytest.mark.parametrize("evaluation", [
    ["evaluation.mode=bootstrap", "evaluation.folds=4"],
    ["evaluation.mode=cv", "evaluation.folds=3", "evaluation.prequential=false",
     "evaluation.window={kind: sliding, size: 50}"],
])
def test_records_do_not_depend_on_the_batch_size(evaluation):
    outputs = []
    for batch_size in (1, 7, 500):
        config = load_config(None, [SEA, learners("nb", "nochange", "guess"), ON,
                                    "evaluation.report_every=60", *evaluation,
                                    f"engine.batch_size={batch_size}"])
        records, _ = evaluate_to_list(make_plans(config), open_source(config))
        outputs.append(comparable(records))
    assert outputs[0] == outputs[1] == outputs[2]
    assert any('"type":"verdict"' in line for line in outputs[0])
    assert any('"sequential":' in line for line in outputs[0])


# --------------------------------------------------------------------------------- end to end
@pytest.mark.slow  # a long run
def test_noise_filters_of_one_rate_stay_undecided_and_the_clean_learner_wins():
    tree = "{model: river.tree.HoeffdingTreeClassifier}"
    noisy = [f"{{name: noisy{seed}, model: foldstream.operators.learners.noise.NoiseFilter, "
             f"params: {{model: {tree}, p_noise: 0.2, seed: {seed}}}}}" for seed in (1, 2)]
    config = load_config(None, [
        "source={kind: generator, model: river.datasets.synth.SEA, limit: 10000, seed: 11}",
        f"learners=[{{name: tree, model: river.tree.HoeffdingTreeClassifier}}, {', '.join(noisy)}]",
        ON, "evaluation.folds=5", "evaluation.report_every=100",
    ])
    records, _ = evaluate_to_list(make_plans(config), open_source(config))
    accuracy = {}
    for r in records:
        if r["type"] == "comparison" and r["measure"] == "accuracy":
            accuracy.setdefault((r["a"], r["b"]), []).append(r["sequential"])
    verdicts = [r for r in records if r["type"] == "verdict"]
    same_rate = accuracy["noisy1", "noisy2"]
    assert len(same_rate) == 100 and same_rate[-1]["n"] == 10_000
    assert {s["verdict"] for s in same_rate} == {UNDECIDED}
    assert not [v for v in verdicts if (v["a"], v["b"]) == ("noisy1", "noisy2")]
    assert same_rate[-1]["sum"] != 0  # the filters did differ: undecided is not vacuous
    for noisy in ("noisy1", "noisy2"):
        won = [v for v in verdicts if (v["a"], v["b"]) == ("tree", noisy)]
        assert won and won[0]["verdict"] == "a_better" and won[0]["previous"] == UNDECIDED
        assert won[0]["position"] < 10_000 and won[0]["upper"] < 0
        assert accuracy["tree", noisy][-1]["verdict"] == "a_better"
        assert won[0]["alpha"] == pytest.approx(0.05 / 3)


# ------------------------------------------------------------------- switches, errors, sizes
def test_verdicts_off_adds_nothing():
    config = load_config(None, [SEA, learners("nb", "nochange"),
                                "evaluation.verdicts.enabled=false"])
    plans = make_plans(config)
    assert plans.aggregation.verdicts is None and not plans.evaluation.losses
    records, _ = evaluate_to_list(plans, open_source(config))
    assert not [r for r in records if r["type"] == "verdict" or "sequential" in r]


@pytest.mark.parametrize("override,message", [
    ("evaluation.verdicts.v_min=0", "evaluation.verdicts.v_min"),
    ("evaluation.verdicts.v_min=-3", "evaluation.verdicts.v_min"),
    ("evaluation.verdicts.v_min=.inf", "evaluation.verdicts.v_min"),
    ("evaluation.verdicts.correction=holm", "evaluation.verdicts.correction"),
    ("evaluation.verdicts.enable=true", "evaluation.verdicts.enable"),
])
def test_bad_verdict_settings_fail_at_start_naming_the_key(override, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_config(None, [SEA, learners("nb", "nochange"), override])


@pytest.mark.slow  # several runs
def test_alpha_is_shared_by_bonferroni_or_not():
    for correction, expected in (("bonferroni", 0.05 / 6), ("none", 0.05)):
        config = load_config(None, [SEA, learners("nb", "nochange", "prior", "guess"), ON,
                                    f"evaluation.verdicts.correction={correction}",
                                    "evaluation.verdicts.v_min=50", "source.limit=100"])
        records, _ = evaluate_to_list(make_plans(config), open_source(config))
        alphas = {r["sequential"]["alpha"] for r in records
                  if r["type"] == "comparison" and r["measure"] == "accuracy"}
        assert alphas == {expected}


def _reports(overrides: list[str]):
    """The fold reports of a small run, as the aggregator receives them."""
    config = load_config(None, [SEA, learners("nb", "nochange", "guess"), ON, *overrides])
    plans = make_plans(config)
    examples = [e for e in open_source(config) if isinstance(e, Example)]
    batch = ExampleBatch("sea", 0, 0, list(range(1, len(examples) + 1)),
                         [e.x for e in examples], [e.y for e in examples], final=True)
    reports = []
    for fb in plans.fan_out("sea").process(batch):
        evaluator = plans.fold_evaluator("sea", fb.fold)
        for index in range(len(plans.learners)):
            reports.extend(evaluator.add(plans.learner_task(index, fb.fold).process(fb)))
    return plans, reports


def test_a_report_carries_packed_losses_of_the_examples_since_the_previous_report():
    plans, reports = _reports(["source.limit=2500", "evaluation.report_every=1000",
                               "evaluation.folds=3", "evaluation.prequential=false"])
    fold0 = [r for r in reports if r.fold == 0]
    assert [(r.losses.start, r.position) for r in fold0] == [(0, 1000), (1000, 2000), (2000, 2500)]
    first = fold0[0].losses
    assert len(first.scored) == 125 and all(len(b) <= 125 for b in first.losses.values())
    assert len(pickle.dumps(first)) < 700  # three learners, 1,000 examples
    assert pickle.loads(pickle.dumps(fold0[0])) == fold0[0]


def test_the_aggregator_refuses_reports_that_do_not_line_up():
    plans, reports = _reports(["source.limit=300", "evaluation.report_every=100",
                               "evaluation.folds=2"])
    by_position = {}
    for r in reports:
        by_position.setdefault(r.position, []).append(r)
    aggregator = Aggregator("sea", plans.aggregation)
    for r in by_position[100]:
        aggregator.add(r)
    skipped = Aggregator("sea", plans.aggregation)  # never saw position 100
    with pytest.raises(ValueError, match="start after position 100, the previous report was at 0"):
        for r in by_position[200]:
            skipped.add(r)
    bare = by_position[200][0]
    bare.losses = None
    with pytest.raises(ValueError, match="carries no losses"):
        for r in by_position[200]:
            aggregator.add(r)

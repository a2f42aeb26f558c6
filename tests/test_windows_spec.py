"""The window spec (operators/stats/windows.py): one frozen spec of the evaluators' window, its defaults
defined once, and bad parameters rejected by the window and by the configuration alike."""

from __future__ import annotations

import pickle

import pytest

from foldstream.job.config import ConfigError, EvaluationConfig, load_config
from foldstream.job.plans import make_plans
from foldstream.operators.stages.evaluator import REPORT_EVERY, EvalPlan
from foldstream.operators.stats.normalization import MAX_MATRICES
from foldstream.operators.stats.windows import (
    ADWIN_DELTA, FADING_ALPHA, SLIDING_SIZE, AdwinWindow, FadingWindow, SlidingWindow, WindowSpec,
    make_window
)


@pytest.mark.parametrize("kind, params, match", [
    ("sliding", {"size": 0}, "size must be an integer >= 1, got 0"),  # was silently 1000
    ("sliding", {"size": -5}, "size must be an integer >= 1, got -5"),
    ("sliding", {"size": 2.5}, "size must be an integer >= 1, got 2.5"),
    ("fading", {"alpha": 0.0}, r"fading factor must be a number in \(0, 1\], got 0.0"),
    ("fading", {"alpha": 1.5}, r"fading factor must be a number in \(0, 1\], got 1.5"),
    ("adwin", {"delta": 0.0}, r"ADWIN delta must be a number in \(0, 1\), got 0.0"),
    ("adwin", {"delta": 1.0}, r"ADWIN delta must be a number in \(0, 1\), got 1.0"),
    ("adwin", {"size": 50}, "size does not apply to a window of kind adwin"),  # was ignored
    ("hopping", {}, "unknown window kind 'hopping'"),
])
def test_make_window_rejects_bad_parameters(kind, params, match):
    with pytest.raises(ValueError, match=match):
        make_window(kind, **params)
    with pytest.raises(ValueError, match=match):
        WindowSpec(kind, **params)


def test_the_windows_themselves_check_their_parameter():
    with pytest.raises(ValueError, match="size must be an integer >= 1"):
        SlidingWindow(0)
    with pytest.raises(ValueError, match="fading factor"):
        FadingWindow(0.0)
    with pytest.raises(ValueError, match="ADWIN delta"):
        AdwinWindow(delta=2.0)


def test_defaults_fill_in_the_kinds_parameter():
    assert make_window("sliding").width == SLIDING_SIZE == 1000
    assert make_window("fading").alpha == FADING_ALPHA == 0.999
    assert make_window("adwin").delta == ADWIN_DELTA == 0.002
    assert make_window("cumulative").kind == "cumulative"
    assert WindowSpec("sliding", size=7).items() == (("kind", "sliding"), ("size", 7))
    assert WindowSpec("cumulative").items() == (("kind", "cumulative"),)
    assert WindowSpec("fading", alpha=1).alpha == 1.0 and WindowSpec("fading", alpha=1).items() == (
        ("kind", "fading"), ("alpha", 1.0))


def test_the_spec_is_frozen_hashable_and_picklable():
    spec = WindowSpec("sliding", size=40)
    assert pickle.loads(pickle.dumps(spec)) == spec and hash(spec) == hash(WindowSpec("sliding", 40))
    with pytest.raises(AttributeError):
        spec.size = 3  # type: ignore[misc]
    assert EvalPlan(("a",)).window == WindowSpec() == WindowSpec("adwin", delta=ADWIN_DELTA)


@pytest.mark.parametrize("override, key, words", [
    ("evaluation.window={kind: sliding, size: 0}", "evaluation.window.size", "integer >= 1, got 0"),
    ("evaluation.window={kind: fading, alpha: 1.5}", "evaluation.window.alpha", "(0, 1], got 1.5"),
    ("evaluation.window={kind: adwin, delta: 1}", "evaluation.window.delta", "(0, 1), got 1.0"),
    ("evaluation.window={kind: cumulative, size: 10}", "evaluation.window", "size does not apply"),
    ("evaluation.alarms.adwin_delta=0", "evaluation.alarms.adwin_delta", "(0, 1), got 0.0"),
    ("evaluation.q_fading=0", "evaluation.q_fading", "(0, 1], got 0.0"),
])
def test_the_configuration_fails_at_start_naming_the_key(override, key, words):
    with pytest.raises(ConfigError) as error:
        load_config(None, [override])
    assert f"  {key}: " in str(error.value) and words in str(error.value)


def test_the_configuration_takes_its_defaults_from_the_operators():
    evaluation = EvaluationConfig()
    assert evaluation.window.spec() == WindowSpec()
    assert evaluation.alarms.adwin_delta == ADWIN_DELTA and evaluation.q_fading == FADING_ALPHA
    assert evaluation.report_every == REPORT_EVERY and evaluation.max_matrices == MAX_MATRICES
    config = load_config(None, ["evaluation.window={kind: sliding}"])
    plans = make_plans(config)
    assert plans.evaluation.window == WindowSpec("sliding", size=SLIDING_SIZE)
    assert plans.aggregation.window == (("kind", "sliding"), ("size", SLIDING_SIZE))

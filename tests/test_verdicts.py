"""One verdict rule for the fold tests (job/verdicts.py), shown alike by the summary tables
and ``foldstream watch``, and the wording of a live (sequential) verdict.

The two cases the views used to disagree on: a sign test that rejects while Wilcoxon does not
(the tables said "no significant difference"), and a rejecting Wilcoxon test with tied sign-test
wins (the tables named B whatever the fold values said).
"""

from __future__ import annotations

import dataclasses
import io

import pytest
from rich.console import Console

from foldstream.job.tools.tables import comparisons_table
from foldstream.job.tools.watch import WatchState
from foldstream.operators.stats import significance as stats
from foldstream.operators.stats.measures import MEASURES
from foldstream.operators.stats.sequential import A_BETTER, B_BETTER, UNDECIDED
from foldstream.job.verdicts import (
    ANY_TIME, FOLDS, SIGN, WILCOXON, FoldVerdict, decide, fold_verdict, sequential_text
)

POSITION = 5000


def measures_record(learner: str, folds: list[float]) -> dict:
    mean, std = stats.mean_std(folds)
    return {"schema": 1, "type": "measures", "stream": "s", "position": POSITION,
            "learner": learner, "mode": "bootstrap", "prequential": True, "folds": len(folds),
            "window": {"kind": "adwin", "delta": 0.002}, "window_size": [100] * len(folds),
            "values": {m: {"mean": mean, "std": std, "folds": folds} for m in MEASURES}}


def comparison_record(a: str, b: str, folds_a: list[float], folds_b: list[float],
                      alpha: float = 0.05) -> dict:
    """As the aggregator builds it (operators/stages/aggregator.py)."""
    return {"schema": 1, "type": "comparison", "stream": "s", "position": POSITION,
            "measure": "accuracy", "a": a, "b": b, "alpha": alpha,
            "wilcoxon": stats.wilcoxon(folds_a, folds_b, alpha),
            "sign": stats.sign_test(folds_a, folds_b, alpha),
            "mcnemar": stats.mcnemar([0] * len(folds_a), [0] * len(folds_b), alpha),
            "q": stats.q_statistic([0.0] * len(folds_a), [0.0] * len(folds_b))}


def text_of(renderable) -> str:
    console = Console(file=io.StringIO(), width=220, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


def both_views(records: list[dict]) -> tuple[str, str]:
    """The text of the summary table and of watch's display for these records."""
    measures = {r["learner"]: r for r in records if r["type"] == "measures"}
    comparisons = [r for r in records if r["type"] == "comparison"]
    table = text_of(comparisons_table(comparisons, measures))
    state = WatchState(["accuracy"])
    for record in records:
        state.update(record)
    return table, text_of(state.render())


# A wins 9 folds by a little, B one fold by a lot: sign p = 0.0215, Wilcoxon p = 0.084.
SIGN_ONLY_A = [0.5] * 10
SIGN_ONLY_B = [0.5 - 0.01 * (i + 1) for i in range(9)] + [1.5]
# 15 wins each, A's by more: the sign test cannot reject (p = 1), Wilcoxon does (p = 0.0197,
# rank sums 345 for A and 120 for B).
TIED_A = [0.5] * 30
TIED_B = [0.5 - 0.01 * (i + 16) for i in range(15)] + [0.5 + 0.01 * (i + 1) for i in range(15)]


def test_the_worked_cases_are_what_they_claim():
    sign_only = comparison_record("x", "y", SIGN_ONLY_A, SIGN_ONLY_B)
    assert sign_only["sign"]["reject"] and not sign_only["wilcoxon"]["reject"]
    tied = comparison_record("x", "y", TIED_A, TIED_B)
    assert tied["wilcoxon"]["reject"] and not tied["sign"]["reject"]
    assert tied["sign"]["wins_a"] == tied["sign"]["wins_b"] == 15
    assert stats.signed_rank_sums(TIED_A, TIED_B) == (345.0, 120.0)


def test_a_sign_test_rejecting_alone_is_a_verdict_in_both_views():
    records = [measures_record("x", SIGN_ONLY_A), measures_record("y", SIGN_ONLY_B),
               comparison_record("x", "y", SIGN_ONLY_A, SIGN_ONLY_B)]
    verdict = fold_verdict(records[-1])
    assert verdict == FoldVerdict("x", (SIGN,), f"x better ({FOLDS}: sign test only)")
    table, watch = both_views(records)
    assert verdict.text in table  # the table used to say "no significant difference"
    assert verdict.text in watch
    assert "no significant difference" not in table + watch


def test_tied_sign_wins_take_the_wilcoxon_direction_in_both_views():
    records = [measures_record("x", TIED_A), measures_record("y", TIED_B),
               comparison_record("x", "y", TIED_A, TIED_B)]
    measures = {r["learner"]: r for r in records[:2]}
    verdict = fold_verdict(records[-1], measures)
    assert verdict == FoldVerdict("x", (WILCOXON,), f"x better ({FOLDS}: Wilcoxon only)")
    table, watch = both_views(records)
    assert verdict.text in table and verdict.text in watch  # the table used to name y
    assert "y better" not in table + watch


def test_a_rejecting_wilcoxon_without_fold_values_names_no_learner():
    comparison = comparison_record("x", "y", TIED_A, TIED_B)
    unclear = FoldVerdict(None, (WILCOXON,),
                          f"x and y differ, direction unclear ({FOLDS}: Wilcoxon only)")
    assert fold_verdict(comparison) == unclear
    # measures of another position do not give the direction either
    stale = {n: {**measures_record(n, f), "position": POSITION - 1000}
             for n, f in (("x", TIED_A), ("y", TIED_B))}
    assert fold_verdict(comparison, stale) == unclear


def test_tests_pointing_different_ways_name_no_learner():
    # B wins 21 of 30 folds by a little, A 9 by a lot: the rank sums favour A (234 to 231),
    # the wins B. Both tests cannot reject on these values; the flags are set by hand.
    a = [0.5 + 0.1 * (i + 1) for i in range(9)] + [0.5] * 21
    b = [0.5] * 9 + [0.5 + 0.001 * (i + 1) for i in range(21)]
    assert stats.signed_rank_sums(a, b) == (234.0, 231.0)
    wilcoxon = {"p_value": 0.01, "reject": True}
    sign = {"wins_a": 9, "wins_b": 21, "p_value": 0.04, "reject": True}
    verdict = decide("x", "y", wilcoxon, sign, a, b)
    assert verdict.better is None and verdict.tests == (WILCOXON, SIGN)
    assert verdict.text == f"x and y differ, direction unclear ({FOLDS}: both tests)"


def test_agreeing_tests_undefined_and_no_difference():
    strong_a = [0.9 + 0.001 * i for i in range(10)]
    weak_b = [0.5] * 10
    both = fold_verdict(comparison_record("x", "y", weak_b, strong_a),
                        {"x": measures_record("x", weak_b), "y": measures_record("y", strong_a)})
    assert both == FoldVerdict("y", (WILCOXON, SIGN), f"y better ({FOLDS}: both tests)")
    same = comparison_record("x", "y", weak_b, weak_b)
    assert fold_verdict(same) == FoldVerdict(None, (), f"undefined, no fold differs ({FOLDS})")
    close = comparison_record("x", "y", [0.5, 0.6, 0.5, 0.6], [0.6, 0.5, 0.6, 0.5])
    assert fold_verdict(close) == FoldVerdict(None, (), f"no significant difference ({FOLDS})")


def test_the_verdict_is_a_frozen_value():
    verdict = fold_verdict(comparison_record("x", "y", SIGN_ONLY_A, SIGN_ONLY_B))
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.better = "y"  # type: ignore[misc]


def test_a_live_verdict_in_words_names_its_question():
    assert sequential_text(B_BETTER, "ht", "nb", 0.0067, 0.0333) == (
        f"nb better ({ANY_TIME}: error(ht) - error(nb) in [0.0067, 0.0333])")
    assert sequential_text(A_BETTER, "ht", "nb", -0.03, -0.01).startswith(f"ht better ({ANY_TIME}")
    assert sequential_text(UNDECIDED, "ht", "nb", -1.0, 1.0) == (
        f"undecided ({ANY_TIME}: error(ht) - error(nb) in [-1.0000, 1.0000])")
    with pytest.raises(ValueError, match="unknown live verdict 'maybe'"):
        sequential_text("maybe", "ht", "nb", 0.0, 1.0)
    assert FOLDS != ANY_TIME

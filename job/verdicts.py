"""Verdicts in words: what the tests say about a pair of learners, worded in one place.

foldstream answers two different questions about a pair (A, B), and a reader must be able to
tell them apart wherever a verdict is shown:

* **"algorithms, over folds"** (:data:`FOLDS`): the Wilcoxon signed-rank and sign tests over
  the ``k`` fold values of one report (docs/method.md §6). They say whether one learning
  *algorithm* does better than the other on this stream, read at the end of the stream or at a
  position fixed in advance. :func:`fold_verdict` applies the one rule below to a ``comparison``
  record; the summary tables and ``foldstream watch`` both show its :class:`FoldVerdict`.
* **"models, any time"** (:data:`ANY_TIME`): the confidence sequence of
  :mod:`foldstream.operators.stats.sequential` (docs/method.md §12). It says whether one running
  *model* does better than the other and may be read at every report. :func:`sequential_text`
  words its verdict.

Every verdict also says what it covers (docs/method.md §15): the fold tests each fold's last
window (:func:`fold_scope_text`), the whole-stream verdict its ``n`` examples, the regime
verdict the examples since the comparison last changed (:func:`live_scope_text`); and
:func:`scope_disagreement` gives the one sentence a view shows when these point different ways.

The rule for the fold tests
---------------------------
1. When neither test is defined (no fold where the two values differ), the verdict is
   *undefined*.
2. When neither test rejects at the record's ``alpha``, there is *no significant difference*.
3. Otherwise each rejecting test points the way of its own statistic: the sign test to the
   learner that wins more folds; the Wilcoxon test to the learner with the larger signed-rank
   sum, computed from the fold values of the two learners
   (:func:`~foldstream.operators.stats.significance.signed_rank_sums`; the record keeps only
   the smaller sum, which does not tell the way).
4. The better learner is named when every rejecting test points to it. When the tests point
   different ways, or a rejecting Wilcoxon test comes without the fold values that give its
   way (or with rank sums that tie), the two learners *differ, direction unclear*.

In particular a tie in the sign test's wins never names a learner by itself (rule 3), and a
test that rejects alone is enough for a verdict, which says which test it was.

Presentation only: the records carry the codes of :mod:`foldstream.operators.stats.sequential`
and the tests' numbers, never these words, so no record's bytes depend on this module. It sits
with the views (``Results``, ``report``, ``plot``, ``tables``, ``watch``, the dashboard) that
show it, not among the stages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from foldstream.operators.records.base import Record
from foldstream.operators.stats.sequential import A_BETTER, B_BETTER, UNDECIDED
from foldstream.operators.stats.significance import signed_rank_sums

__all__ = [
    "FOLDS",
    "ANY_TIME",
    "WILCOXON",
    "SIGN",
    "FoldVerdict",
    "decide",
    "fold_verdict",
    "LIVE_VERDICTS",
    "sequential_head",
    "sequential_text",
    "fold_scope_text",
    "live_scope_text",
    "live_verdict_text",
    "scope_disagreement",
]

# ------------------------------------------------------------------------------- the wording
FOLDS = "algorithms, over folds"
"""The question the fold tests answer (docs/method.md §6)."""
ANY_TIME = "models, any time"
"""The question the confidence sequence answers (docs/method.md §12)."""
WILCOXON = "Wilcoxon"
SIGN = "sign test"
BETTER = "{name} better"
NO_DIFFERENCE = "no significant difference"
UNDEFINED = "undefined, no fold differs"
UNCLEAR = "{a} and {b} differ, direction unclear"
UNDECIDED_TEXT = "undecided"
BOTH_TESTS = "both tests"
ONLY = "{test} only"
INTERVAL = "error({a}) - error({b}) in [{lower:.4f}, {upper:.4f}]"
# what each verdict covers (docs/method.md §15 "Wording")
STREAM_SCOPE = "over the whole stream ({n:,} examples)"
REGIME_SCOPE = "since position {since:,} ({n:,} examples; the comparison changed there)"
FIRST_REGIME_SCOPE = "since position {since:,} ({n:,} examples; no change so far)"
OPEN_REGIME_SCOPE = "since the change just detected (no example yet)"
FOLD_SCOPE = "over the last window of each fold ({window}, {low} to {high} {unit})"
WINDOW_NAMES = {"adwin": "ADWIN", "sliding": "sliding, size {size}",
                "fading": "fading, alpha {alpha}", "cumulative": "cumulative"}
CHANGED = "the ranking changed: {parts}"


def _worded(head: str, question: str, detail: str | None = None, scope: str | None = None) -> str:
    """``head [scope] (question)`` or ``head [scope] (question: detail)``: every verdict names
    its question, and what it covers when that is known."""
    head = f"{head} {scope}" if scope else head
    return f"{head} ({question}: {detail})" if detail else f"{head} ({question})"


@dataclass(frozen=True, slots=True)
class FoldVerdict:
    """What the fold tests say about a pair (the rule of the module docstring).

    Attributes
    ----------
    better : str or None
        The better learner's name; ``None`` when no learner can be named.
    tests : tuple of str
        The tests that reject, in the order :data:`WILCOXON`, :data:`SIGN`.
    text : str
        The verdict in words, naming its question (:data:`FOLDS`); plain text, no markup.
    """

    better: str | None
    tests: tuple[str, ...]
    text: str


def _direction(a: str, b: str, first: float, second: float) -> str | None:
    return a if first > second else b if second > first else None


def decide(a: str, b: str, wilcoxon: Mapping[str, Any], sign: Mapping[str, Any],
           folds_a: Sequence[float | None] | None = None,
           folds_b: Sequence[float | None] | None = None,
           scope: str | None = None) -> FoldVerdict:
    """The verdict of the fold tests on learners ``a`` and ``b`` (the module's rule).

    Parameters
    ----------
    a, b : str
        The learners' names, A first, as in the ``comparison`` record.
    wilcoxon, sign : mapping
        The record's ``wilcoxon`` (``p_value``, ``reject``) and ``sign`` (``wins_a``,
        ``wins_b``, ``p_value``, ``reject``) objects.
    folds_a, folds_b : sequence of float or None, optional
        The compared measure's fold values of A and B at the record's position: they give a
        rejecting Wilcoxon test its direction.
    scope : str, optional
        What the tests cover, in words (:func:`fold_scope_text`), put after the verdict's head.

    Returns
    -------
    FoldVerdict

    Examples
    --------
    The worked example of docs/method.md §6: Wilcoxon rejects (rank sums 52 and 3), the sign
    test does not (8 wins to 2).

    >>> A = [77.98, 72.26, 76.95, 77.94, 72.23, 76.90, 77.93, 72.37, 76.93, 77.97]
    >>> B = [77.91, 72.27, 76.97, 76.57, 71.63, 75.48, 75.75, 71.33, 74.54, 77.94]
    >>> w = {"p_value": 0.009765625, "reject": True}
    >>> s = {"wins_a": 8, "wins_b": 2, "p_value": 0.109375, "reject": False}
    >>> decide("A", "B", w, s, A, B)
    FoldVerdict(better='A', tests=('Wilcoxon',), text='A better (algorithms, over folds: Wilcoxon only)')

    Without the fold values the Wilcoxon test has no direction:

    >>> decide("A", "B", w, s).text
    'A and B differ, direction unclear (algorithms, over folds: Wilcoxon only)'

    A sign test that rejects alone is a verdict too, and says so:

    >>> decide("x", "y", {"p_value": 0.2, "reject": False},
    ...        {"wins_a": 9, "wins_b": 1, "p_value": 0.02, "reject": True}).text
    'x better (algorithms, over folds: sign test only)'
    >>> decide("x", "y", {"p_value": None, "reject": False},
    ...        {"wins_a": 0, "wins_b": 0, "p_value": None, "reject": False}).text
    'undefined, no fold differs (algorithms, over folds)'
    """
    if wilcoxon.get("p_value") is None and sign.get("p_value") is None:
        return FoldVerdict(None, (), _worded(UNDEFINED, FOLDS, scope=scope))
    directions: dict[str, str | None] = {}
    if wilcoxon.get("reject"):
        sums = None if folds_a is None or folds_b is None else signed_rank_sums(folds_a, folds_b)
        directions[WILCOXON] = None if sums is None else _direction(a, b, *sums)
    if sign.get("reject"):
        directions[SIGN] = _direction(a, b, sign["wins_a"], sign["wins_b"])
    if not directions:
        return FoldVerdict(None, (), _worded(NO_DIFFERENCE, FOLDS, scope=scope))
    tests = tuple(directions)
    which = BOTH_TESTS if len(tests) == 2 else ONLY.format(test=tests[0])
    ways = set(directions.values())
    better = ways.pop() if len(ways) == 1 else None
    if better is None:
        return FoldVerdict(None, tests, _worded(UNCLEAR.format(a=a, b=b), FOLDS, which, scope))
    return FoldVerdict(better, tests, _worded(BETTER.format(name=better), FOLDS, which, scope))


def fold_verdict(comparison: Record, measures: Mapping[str, Record] | None = None) -> FoldVerdict:
    """The verdict of a ``comparison`` record (docs/method.md §10), by :func:`decide`.

    Parameters
    ----------
    comparison : dict
        A ``comparison`` output record.
    measures : mapping of str to dict, optional
        The latest ``measures`` record of each learner; the fold values of the two learners are
        taken from them when they are at the comparison's position (else the Wilcoxon test has
        no direction).

    Examples
    --------
    >>> comparison = {"position": 10, "measure": "accuracy", "a": "x", "b": "y",
    ...               "wilcoxon": {"p_value": 0.001953125, "reject": True},
    ...               "sign": {"wins_a": 0, "wins_b": 10, "p_value": 0.001953125, "reject": True}}
    >>> fold_verdict(comparison).text
    'x and y differ, direction unclear (algorithms, over folds: both tests)'
    >>> measures = {n: {"position": 10, "values": {"accuracy": {"folds": folds}}}
    ...             for n, folds in (("x", [0.1 * i for i in range(10)]),
    ...                              ("y", [0.1 * i + 0.05 for i in range(10)]))}
    >>> fold_verdict(comparison, measures).better
    'y'

    A record that says what its tests cover (``scope``, docs/method.md §10) is worded with it:

    >>> comparison["scope"] = {"window": {"kind": "adwin", "delta": 0.002},
    ...                        "window_size": {"a": [224, 500], "b": [928, 300]}}
    >>> fold_verdict(comparison, measures).text  # doctest: +NORMALIZE_WHITESPACE
    'y better over the last window of each fold (ADWIN, 224 to 928 examples)
     (algorithms, over folds: both tests)'
    """
    a, b = comparison["a"], comparison["b"]
    folds = [_fold_values(measures or {}, name, comparison) for name in (a, b)]
    return decide(a, b, comparison["wilcoxon"], comparison["sign"], *folds,
                  scope=fold_scope_text(comparison.get("scope")))


def fold_scope_text(scope: Mapping[str, Any] | None) -> str | None:
    """What the fold tests of a ``comparison`` record cover, in words; ``None`` for a record
    without ``scope`` (older files).

    Examples
    --------
    >>> fold_scope_text({"window": {"kind": "sliding", "size": 1000},
    ...                  "window_size": {"a": [1000, 1000], "b": [1000, 1000]}})
    'over the last window of each fold (sliding, size 1000, 1,000 to 1,000 examples)'
    >>> fold_scope_text({"window": {"kind": "fading", "alpha": 0.99},
    ...                  "window_size": {"a": [99.5], "b": [98.2]}})
    'over the last window of each fold (fading, alpha 0.99, 98 to 100 weight)'
    >>> fold_scope_text(None) is None
    True
    """
    if not isinstance(scope, Mapping):
        return None
    window = scope.get("window") or {}
    sizes = [v for side in ("a", "b") for v in (scope.get("window_size") or {}).get(side) or []
             if isinstance(v, int | float)]
    kind = window.get("kind")
    name = WINDOW_NAMES.get(kind, str(kind)).format(**{k: v for k, v in window.items()
                                                        if k != "kind"})
    if not sizes:
        return FOLD_SCOPE.split(" (")[0]
    return FOLD_SCOPE.format(window=name, low=f"{min(sizes):,.0f}", high=f"{max(sizes):,.0f}",
                             unit="weight" if kind == "fading" else "examples")


def live_scope_text(n: int | None, since: int | None = None, segment: int | None = None,
                    scope: str = "stream") -> str | None:
    """What a live verdict covers, in words (docs/method.md §12, §15); ``None`` when ``n`` is
    unknown.

    Examples
    --------
    >>> live_scope_text(45_312)
    'over the whole stream (45,312 examples)'
    >>> live_scope_text(7_200, 38_112, 3, "regime")
    'since position 38,112 (7,200 examples; the comparison changed there)'
    >>> live_scope_text(7_200, 1, 1, "regime")
    'since position 1 (7,200 examples; no change so far)'
    >>> live_scope_text(0, None, 4, "regime")
    'since the change just detected (no example yet)'
    """
    if n is None:
        return None
    if scope != "regime":
        return STREAM_SCOPE.format(n=n)
    if since is None:
        return OPEN_REGIME_SCOPE
    words = FIRST_REGIME_SCOPE if segment == 1 else REGIME_SCOPE
    return words.format(since=since, n=n)


def _fold_values(measures: Mapping[str, Record], name: str,
                 comparison: Record) -> list[float | None] | None:
    record = measures.get(name)
    if record is None or record.get("position") != comparison.get("position"):
        return None
    return record.get("values", {}).get(comparison["measure"], {}).get("folds")


LIVE_VERDICTS = (A_BETTER, B_BETTER, UNDECIDED)
"""The values of a live verdict (docs/method.md §12), as the records hold them."""


def sequential_head(verdict: str, a: str, b: str) -> str:
    """A live verdict's short words, without its question: what a table cell shows.

    >>> sequential_head("b_better", "ht", "nb"), sequential_head("undecided", "ht", "nb")
    ('nb better', 'undecided')
    >>> sequential_head("a_worse", "ht", "nb")
    Traceback (most recent call last):
    ...
    ValueError: unknown live verdict 'a_worse'; expected one of a_better, b_better, undecided
    """
    if verdict == A_BETTER:
        return BETTER.format(name=a)
    if verdict == B_BETTER:
        return BETTER.format(name=b)
    if verdict == UNDECIDED:
        return UNDECIDED_TEXT
    raise ValueError(f"unknown live verdict {verdict!r}; "
                     f"expected one of {', '.join(LIVE_VERDICTS)}")


def sequential_text(verdict: str, a: str, b: str, lower: float | None = None,
                    upper: float | None = None, scope: str | None = None) -> str:
    """A live verdict of docs/method.md §12 in words, naming its question (:data:`ANY_TIME`).

    Parameters
    ----------
    verdict : str
        :data:`~foldstream.operators.stats.sequential.A_BETTER`, ``B_BETTER`` or ``UNDECIDED``.
    a, b : str
        The learners' names, A first.
    lower, upper : float, optional
        The interval for the difference of their error rates, A's minus B's (positive: B
        better); the words name it when both are given.
    scope : str, optional
        What the verdict covers, in words (:func:`live_scope_text`), after the head.

    Raises
    ------
    ValueError
        On a verdict that is none of :data:`LIVE_VERDICTS`.

    Examples
    --------
    >>> sequential_text("b_better", "ht", "nb", 0.0067, 0.0333)
    'nb better (models, any time: error(ht) - error(nb) in [0.0067, 0.0333])'
    >>> sequential_text("undecided", "ht", "nb", -0.01, 0.02)
    'undecided (models, any time: error(ht) - error(nb) in [-0.0100, 0.0200])'
    >>> sequential_text("a_better", "ht", "nb")
    'ht better (models, any time)'
    """
    head = sequential_head(verdict, a, b)
    if lower is None or upper is None:
        return _worded(head, ANY_TIME, scope=scope)
    return _worded(head, ANY_TIME, INTERVAL.format(a=a, b=b, lower=lower, upper=upper), scope)


def live_verdict_text(live: Mapping[str, Any], a: str, b: str) -> str:
    """A live verdict in words with what it covers: of a ``sequential`` object, its ``regime``
    object, or a ``verdict`` record (whose ``scope`` says which; older records are
    ``"stream"``).

    Examples
    --------
    >>> live_verdict_text({"verdict": "b_better", "lower": 0.0666, "upper": 0.083,
    ...                    "n": 45_312}, "nb", "softmax")  # doctest: +NORMALIZE_WHITESPACE
    'softmax better over the whole stream (45,312 examples)
     (models, any time: error(nb) - error(softmax) in [0.0666, 0.0830])'
    >>> live_verdict_text({"verdict": "a_better", "lower": -0.05, "upper": -0.01, "n": 7_200,
    ...                    "since": 38_112, "segment": 3}, "nb", "softmax")
    ... # doctest: +NORMALIZE_WHITESPACE
    'nb better since position 38,112 (7,200 examples; the comparison changed there)
     (models, any time: error(nb) - error(softmax) in [-0.0500, -0.0100])'
    """
    scope = live.get("scope") or ("regime" if "segment" in live else "stream")
    return sequential_text(live["verdict"], a, b, live.get("lower"), live.get("upper"),
                           live_scope_text(live.get("n"), live.get("since"), live.get("segment"),
                                           scope))


def scope_disagreement(comparison: Record, measures: Mapping[str, Record] | None = None
                       ) -> str | None:
    """One sentence when the scopes of a ``comparison`` record's verdicts point different ways
    (the fold tests, the whole-stream and the regime verdict), else ``None``.

    Examples
    --------
    >>> comparison = {"position": 9, "measure": "accuracy", "a": "nb", "b": "sm",
    ...     "wilcoxon": {"p_value": 0.5, "reject": False},
    ...     "sign": {"wins_a": 5, "wins_b": 5, "p_value": 1.0, "reject": False},
    ...     "sequential": {"verdict": "b_better", "n": 45_312, "lower": 0.07, "upper": 0.08,
    ...                    "regime": {"verdict": "a_better", "n": 7_200, "since": 38_112,
    ...                               "segment": 3, "lower": -0.05, "upper": -0.01}}}
    >>> scope_disagreement(comparison)  # doctest: +NORMALIZE_WHITESPACE
    'the ranking changed: sm better over the whole stream (45,312 examples), nb better since
     position 38,112 (7,200 examples; the comparison changed there)'
    >>> comparison["sequential"]["regime"]["verdict"] = "undecided"
    >>> scope_disagreement(comparison) is None
    True
    """
    a, b = comparison["a"], comparison["b"]
    parts: list[tuple[str, str]] = []
    folds = fold_verdict(comparison, measures)
    if folds.better is not None:
        parts.append((folds.better, fold_scope_text(comparison.get("scope"))
                      or FOLD_SCOPE.split(" (")[0]))
    sequential = comparison.get("sequential")
    for live, scope in ((sequential, "stream"),
                        ((sequential or {}).get("regime"), "regime")):
        if isinstance(live, Mapping) and live.get("verdict") in (A_BETTER, B_BETTER):
            parts.append((a if live["verdict"] == A_BETTER else b,
                          live_scope_text(live.get("n"), live.get("since"), live.get("segment"),
                                          scope) or ""))
    if len({name for name, _ in parts}) < 2:
        return None
    return CHANGED.format(parts=", ".join(f"{BETTER.format(name=name)} {words}".rstrip()
                                          for name, words in parts))

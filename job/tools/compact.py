"""The compact summary of a run: a few numeric lines a reader takes in at a glance.

What a run ends with, in the terminal (``foldstream run``, ``Results.summary()``), in Jupyter
and at the top of ``foldstream report``: one header line (stream, examples, validation, window,
α, time); one line per learner (whole-stream values, the last window's mean ± sd over the
folds, the average rank, the cost); one line per pair of learners and compared measure (the
difference, the Wilcoxon, sign and McNemar tests, the live interval, the verdicts as short
words explained by a legend line); a measure whose verdicts equal the first one's as one line;
one footnote line per pair whose verdicts' scopes point different ways. The prose of each
verdict stays with ``foldstream report`` and ``foldstream run --explain``.

This module builds those lines as plain strings (:class:`CompactSummary`, columns with a
priority); :mod:`foldstream.job.tools.tables` draws them with rich, dropping the least
important columns on a narrow terminal rather than wrapping a cell, and
:mod:`foldstream.job.tools.report` writes them as HTML. Every number of the views is formatted
by the functions here (:func:`fmt`, :func:`fmt_p`, :func:`fmt_count`, :func:`fmt_bytes`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from foldstream.operators.records.outputs import MeasuresRecord, SummaryRecord
from foldstream.operators.records.base import Record
from foldstream.operators.stats.sequential import A_BETTER, B_BETTER
from foldstream.job.verdicts import NO_DIFFERENCE, UNDEFINED, fold_verdict, scope_disagreement

DASH = "—"
"""What a view shows for an undefined value."""

ABBREVIATION = 4
"""Names longer than this are shortened in the pair lines (``hoeffding_tree`` → ``ht``)."""


# ------------------------------------------------------------------------------ numbers
def fmt(value: float | None, digits: int = 3, signed: bool = False) -> str:
    """A number with ``digits`` decimals (a sign always with ``signed``), or a dash for an
    undefined one (``None``, NaN).

    >>> fmt(0.12345), fmt(None), fmt(1234.5, 0), fmt(-0.0481, signed=True), fmt(float("nan"))
    ('0.123', '—', '1234', '-0.048', '—')
    """
    if value is None or value != value:
        return DASH
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_p(value: float | None) -> str:
    """A p-value: four decimals, or scientific notation when smaller.

    >>> fmt_p(0.0123), fmt_p(2.5e-7), fmt_p(None)
    ('0.0123', '2.5e-07', '—')
    """
    if value is None or value != value:
        return DASH
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def fmt_count(value: float | None) -> str:
    """A count, with thousands separated by commas.

    >>> fmt_count(45312), fmt_count(687.4), fmt_count(None)
    ('45,312', '687', '—')
    """
    return DASH if value is None or value != value else f"{value:,.0f}"


def fmt_bytes(value: float | None) -> str:
    """A size in bytes, in the unit that keeps it short (powers of 1,000).

    >>> fmt_bytes(812), fmt_bytes(34_567), fmt_bytes(12_345_678), fmt_bytes(None)
    ('812 B', '34.6 kB', '12.3 MB', '—')
    """
    if value is None:
        return DASH
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:.1f} {unit}"
    return f"{value:.0f} B"


def fmt_mean_sd(mean: float | None, sd: float | None, digits: int = 3) -> str:
    """``mean±sd``; the sd alone may be undefined (one fold).

    >>> fmt_mean_sd(0.8441, 0.0132), fmt_mean_sd(0.8, None), fmt_mean_sd(None, None)
    ('0.844±0.013', '0.800±—', '—')
    """
    return DASH if mean is None else f"{fmt(mean, digits)}±{fmt(sd, digits)}"


# ------------------------------------------------------------------------------ columns
@dataclass
class Column:
    """One column of a compact table: a header of one or two lines, its cells (plain text),
    whether it is numeric (right-aligned), and its priority (the lowest goes first when the
    table is too wide)."""

    header: str
    cells: list[str]
    numeric: bool = True
    priority: int = 0

    @property
    def width(self) -> int:
        return max(len(line) for line in [*self.header.split("\n"), *self.cells])


@dataclass
class Block:
    """A compact table: its columns, in order, and a line under it (its legend)."""

    columns: list[Column]
    legend: str | None = None

    def fitting(self, width: int, gap: int = 2) -> list[Column]:
        """The columns that fit in ``width`` characters with ``gap`` between them: the least
        important go first (the first column always stays).

        >>> block = Block([Column("name", ["a"], priority=9), Column("x", ["12345"], priority=1),
        ...                Column("y", ["123"], priority=2)])
        >>> [c.header for c in block.fitting(16)], [c.header for c in block.fitting(12)]
        (['name', 'x', 'y'], ['name', 'y'])
        """
        kept = list(self.columns)
        while len(kept) > 1 and sum(c.width for c in kept) + gap * (len(kept) - 1) > width:
            kept.remove(min(kept[1:], key=lambda c: c.priority))
        return kept


@dataclass
class CompactSummary:
    """The compact summary of one stream (see the module docstring): all plain text."""

    head: str
    learners: Block
    pairs: list[Block] = field(default_factory=list)
    same: list[str] = field(default_factory=list)  # a measure whose verdicts equal the first's
    notes: list[str] = field(default_factory=list)  # where the verdicts' scopes disagree
    tail: str = ""


# ------------------------------------------------------------------------------ building
def short_names(names: Sequence[str]) -> dict[str, str]:
    """A short name per learner for the pair lines: a name of at most :data:`ABBREVIATION`
    characters as it is, a longer one by its words' initials (or its first characters); the
    names themselves when the short ones would collide.

    >>> short_names(["hoeffding_tree", "naive_bayes", "softmax"])
    {'hoeffding_tree': 'ht', 'naive_bayes': 'nb', 'softmax': 'soft'}
    >>> short_names(["naive_bayes", "new_bagging"])
    {'naive_bayes': 'naive_bayes', 'new_bagging': 'new_bagging'}
    """
    def short(name: str) -> str:
        if len(name) <= ABBREVIATION:
            return name
        words = [w for w in re.split(r"[\W_]+", name) if w]
        return "".join(w[0] for w in words) if len(words) > 1 else name[:ABBREVIATION]
    shorts = {name: short(name) for name in names}
    if len(set(shorts.values())) < len(shorts) or not all(shorts.values()):
        return {name: name for name in names}
    return shorts


def describe_evaluation(record: MeasuresRecord | Mapping[str, Any], sizes: Sequence[float] = ()
                        ) -> str:
    """The validation and the window in a few words.

    >>> describe_evaluation({"mode": "bootstrap", "folds": 10, "prequential": True,
    ...                      "window": {"kind": "adwin", "delta": 0.002}}, [224, 928.0])
    'bootstrap k=10, prequential · ADWIN δ=0.002 (224–928 ex)'
    """
    get = record.get if isinstance(record, Mapping) else lambda key: getattr(record, key)
    window = dict(get("window"))
    kind = window.pop("kind", "?")
    names = {"adwin": "ADWIN", "delta": "δ", "alpha": "α", "size": "n"}
    words = " ".join([names.get(kind, kind), *(f"{names.get(k, k)}={v}" for k, v in window.items())])
    if sizes and kind != "cumulative":
        low, high = fmt_count(min(sizes)), fmt_count(max(sizes))
        words += f" ({low} ex)" if low == high else f" ({low}–{high} ex)"
    return (f"{get('mode')} k={get('folds')}, "
            f"{'prequential' if get('prequential') else 'holdout'} · {words}")


def _verdict_word(better: str | None, text: str, short: Mapping[str, str]) -> str:
    if better is not None:
        return short.get(better, better)
    if text.startswith(NO_DIFFERENCE):
        return "="
    return "–" if text.startswith(UNDEFINED) else "?"


def _live_word(live: Mapping[str, Any] | None, a: str, b: str, short: Mapping[str, str]) -> str:
    if not isinstance(live, Mapping):
        return ""
    verdict = live.get("verdict")
    return short[a] if verdict == A_BETTER else short[b] if verdict == B_BETTER else "="


COST_FIELDS = ("cpu_predict_s", "cpu_learn_s", "model_bytes")
"""The ``summary`` record's cost fields: per learner, summed over its folds."""

LEGEND = "verdict: folds"
"""The legend's start; :func:`legend` adds what the verdict cells hold."""
_SYMBOLS = (("=", "no difference"), ("?", "direction unclear"), ("–", "undefined"))


def legend(cells: Sequence[str]) -> str:
    """The line under the pair tables: what the parts of a verdict cell are, and the symbols
    that occur in ``cells``.

    >>> legend(["nb/ht/=", "=/soft/soft"])
    'verdict: folds / live, whole stream / live, since change · name: better · =: no difference'
    >>> legend(["nb", "?"])
    'verdict: folds · name: better · ?: direction unclear'
    """
    parts = max((cell.count("/") for cell in cells), default=0)
    head = " / ".join([LEGEND, "live, whole stream", "live, since change"][:parts + 1])
    words = [f"{symbol}: {meaning}" for symbol, meaning in _SYMBOLS
             if any(symbol in cell.split("/") for cell in cells)]
    return " · ".join([head, "name: better", *words])


def compact_summary(summary: SummaryRecord, comparisons: Sequence[Record] = (),
                    rankings: Sequence[Record] = ()) -> CompactSummary:
    """The compact summary of a stream from its ``summary`` record (typed) and the
    ``comparison`` and ``ranking`` records of its last report (JSON objects).

    Examples
    --------
    >>> m = lambda name, acc: MeasuresRecord.of_folds(stream="s", position=9, learner=name,
    ...     mode="cv", prequential=True, folds=2, window={"kind": "cumulative"},
    ...     window_size=[9, 9], fold_values={"accuracy": acc})
    >>> s = SummaryRecord.at_end(stream="s", position=9, read=9, rejected=0, wall_time_s=2.0,
    ...     measures=[m("ht", [0.5, 0.6]), m("nb", [0.7, 0.8])])
    >>> c = {"stream": "s", "position": 9, "measure": "accuracy", "a": "ht", "b": "nb",
    ...      "alpha": 0.05, "wilcoxon": {"p_value": 0.5, "reject": False},
    ...      "sign": {"wins_a": 0, "wins_b": 2, "ties": 0, "p_value": 0.5, "reject": False},
    ...      "mcnemar": {"p_value": 0.02}}
    >>> compact = compact_summary(s, [c])
    >>> compact.head
    's · 9 examples · cv k=2, prequential · cumulative · α=0.05 · 2 s'
    >>> [col.cells[0] for col in compact.pairs[0].columns]
    ['ht − nb', '-0.200', '0.5000', '0:2', '0.5000', '0.0200', '=']
    """
    measures = {record.learner: record for record in summary.measures}
    names = list(measures)
    short = short_names(names)
    first = summary.measures[0] if summary.measures else None
    alpha = comparisons[0].get("alpha") if comparisons else None
    sizes = [size for record in summary.measures for size in record.window_size]
    head = [str(summary.stream), f"{fmt_count(summary.position)} examples"]
    if first is not None:
        head.append(describe_evaluation(first, sizes))
    if alpha is not None:
        head.append(f"α={alpha}")
    head.append(f"{summary.wall_time_s:.0f} s")
    if summary.interrupted:
        head.append("interrupted")
    tail = (f"{fmt_count(summary.examples_read)} records read, "
            f"{fmt_count(summary.examples_rejected)} rejected, {summary.wall_time_s:.1f} s "
            f"({fmt_count(summary.examples_per_second or 0)} examples/s)")
    compared = list(dict.fromkeys(c["measure"] for c in comparisons))
    reference = compared[0] if compared else "accuracy"
    compact = CompactSummary(head=" · ".join(head), tail=tail,
                             learners=_learner_block(summary, measures, short, rankings,
                                                     reference))
    _add_pairs(compact, comparisons, summary, short, compared)
    return compact


def _learner_block(summary: SummaryRecord, measures: Mapping[str, MeasuresRecord],
                   short: Mapping[str, str], rankings: Sequence[Record],
                   reference: str) -> Block:
    names = list(measures)
    label = [name if short[name] == name else f"{name} ({short[name]})" for name in names]
    columns = [Column("\nlearner", label, numeric=False, priority=99)]
    for key, head, priority in (("accuracy", "acc", 90), ("kappa_m", "κm", 70)):
        whole = [measures[name].whole_value(key) for name in names]
        if any(whole):
            columns.append(Column(f"whole\n{head}", [
                DASH if value is None else fmt(value.mean) for value in whole],
                priority=priority))
    for key, head, priority in (("accuracy", "acc", 95), ("kappa", "κ", 20),
                                ("kappa_m", "κm", 60)):
        if any(key in record.values for record in measures.values()):
            values = [measures[name].value(key) for name in names]
            columns.append(Column(f"window\n{head}", [
                DASH if v is None else fmt_mean_sd(v.mean, v.std) for v in values],
                priority=priority))
    ranking = next((r for r in rankings if r.get("measure") == reference), None)
    if ranking is not None:
        ranks = dict(zip(ranking["learners"], ranking["average_ranks"]))
        columns.append(Column("\nrank", [fmt(ranks.get(name), 1) for name in names],
                              priority=50))
    costs = tuple(getattr(summary, key, None) for key in COST_FIELDS)
    if costs[0] is not None and costs[1] is not None:
        columns.append(Column("CPU\ns", [
            fmt((costs[0].get(n) or 0) + (costs[1].get(n) or 0), 1) for n in names],
            priority=40))
    if costs[2] is not None:
        columns.append(Column("model\nsize", [fmt_bytes(costs[2].get(n)) for n in names],
                              priority=30))
    folds = summary.measures[0].folds if summary.measures else 0
    parts = []
    if len(columns) > 1 and columns[1].header.startswith("whole"):
        parts.append("whole: all examples")
    parts.append(f"window: last, mean±sd of {folds} folds")
    if ranking is not None:
        parts.append(f"rank: {reference} (1 best)")
    if costs[0] is not None:
        parts.append("CPU, size: sums")
    return Block(columns, legend=" · ".join(parts))


def _pair_block(measure: str, comparisons: Sequence[Record], measures: Mapping[str, Record],
                short: Mapping[str, str]) -> Block:
    rows = []
    for c in comparisons:
        a, b = c["a"], c["b"]
        va, vb = (((measures.get(n) or {}).get("values") or {}).get(measure) or {}
                  for n in (a, b))
        delta = None if va.get("mean") is None or vb.get("mean") is None \
            else va["mean"] - vb["mean"]
        verdict = fold_verdict(c, measures)
        live = c.get("sequential")
        words = [_verdict_word(verdict.better, verdict.text, short)]
        if isinstance(live, Mapping):
            words.append(_live_word(live, a, b, short))
            if isinstance(live.get("regime"), Mapping):
                words.append(_live_word(live["regime"], a, b, short))
        sign, mcnemar = c.get("sign") or {}, c.get("mcnemar") or {}
        rows.append({
            "pair": f"{short[a]} − {short[b]}", "delta": fmt(delta, signed=True),
            "wilcoxon": fmt_p((c.get("wilcoxon") or {}).get("p_value")),
            "wins": f"{sign.get('wins_a', DASH)}:{sign.get('wins_b', DASH)}",
            "sign": fmt_p(sign.get("p_value")), "mcnemar": fmt_p(mcnemar.get("p_value")),
            "live": "" if not isinstance(live, Mapping) else
            f"[{fmt(live.get('lower'), signed=True)}, {fmt(live.get('upper'), signed=True)}]",
            "verdict": "/".join(words)})
    spec = [("pair", f"{measure}\na − b", False, 99), ("delta", "\nΔ", True, 90),
            ("wilcoxon", "Wilcoxon\np", True, 85), ("wins", "sign\na:b", True, 60),
            ("sign", "sign\np", True, 50), ("mcnemar", "McNemar\np", True, 40),
            ("live", "live Δerr\nany time", True, 70), ("verdict", "\nverdict", False, 95)]
    columns = [Column(header, [row[key] for row in rows], numeric, priority)
               for key, header, numeric, priority in spec if any(row[key] for row in rows)]
    return Block(columns)


def _add_pairs(self: CompactSummary, comparisons: Sequence[Record], summary: SummaryRecord,
               short: Mapping[str, str], compared: Sequence[str]) -> None:
    """One block per compared measure, but one line for a measure whose fold verdicts are the
    first measure's; the legend under the last block; the footnotes."""
    measures = {record.learner: record.as_dict() for record in summary.measures}
    by_measure = {m: [c for c in comparisons if c["measure"] == m] for m in compared}
    reference = None
    for measure, records in by_measure.items():
        verdicts = [fold_verdict(c, measures) for c in records]
        found = [(v.better, v.tests, v.text.split(" (")[0].split(" over ")[0]) for v in verdicts]
        if reference is not None and found == reference:
            ps = " / ".join(fmt_p((c.get("wilcoxon") or {}).get("p_value")) for c in records)
            self.same.append(f"{measure}: same verdicts (Wilcoxon p {ps})")
            continue
        if reference is None:
            reference = found
        block = _pair_block(measure, records, measures, short)
        if self.pairs:  # McNemar's test is on the examples, the same for every measure
            block.columns = [c for c in block.columns if not c.header.startswith("McNemar")]
        self.pairs.append(block)
    if self.pairs:
        self.pairs[-1].legend = legend([cell for block in self.pairs for col in block.columns
                                        if col.header.endswith("verdict") for cell in col.cells])
    for c in comparisons:
        if scope_disagreement(c, measures):
            self.notes.append(disagreement_note(c, measures, short))


def disagreement_note(comparison: Record, measures: Mapping[str, Record],
                      short: Mapping[str, str]) -> str:
    """One footnote line for a pair whose verdicts point different ways: who each verdict
    names, and over which examples (the scopes differ, so both can hold).

    >>> c = {"position": 9, "measure": "accuracy", "a": "ht", "b": "nb",
    ...      "wilcoxon": {"p_value": 0.5, "reject": False},
    ...      "sign": {"wins_a": 5, "wins_b": 5, "p_value": 1.0, "reject": False},
    ...      "sequential": {"verdict": "b_better", "regime": {"verdict": "a_better",
    ...                     "since": 38112, "segment": 3}}}
    >>> disagreement_note(c, {}, {"ht": "ht", "nb": "nb"})
    '* ht − nb, accuracy: nb better over the whole stream (live), ht since 38,112 (live, since change)'
    """
    a, b = comparison["a"], comparison["b"]
    parts = []
    folds = fold_verdict(comparison, measures)
    if folds.better is not None:
        parts.append(f"{short[folds.better]} better in the last window (folds)")
    live = comparison.get("sequential")
    if isinstance(live, Mapping) and live.get("verdict") in (A_BETTER, B_BETTER):
        parts.append(f"{short[a] if live['verdict'] == A_BETTER else short[b]}"
                     f"{'' if parts else ' better'} over the whole stream (live)")
    regime = live.get("regime") if isinstance(live, Mapping) else None
    if isinstance(regime, Mapping) and regime.get("verdict") in (A_BETTER, B_BETTER):
        parts.append(f"{short[a] if regime['verdict'] == A_BETTER else short[b]}"
                     f"{'' if parts else ' better'} since {fmt_count(regime.get('since'))} "
                     f"(live, since change)")
    return f"* {short[a]} − {short[b]}, {comparison['measure']}: {', '.join(parts)}"

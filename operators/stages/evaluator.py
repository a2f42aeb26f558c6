"""The per-fold evaluator: every learner's window, baselines, alarms and paired counts on a fold.

One :class:`FoldEvaluator` per (stream, fold) receives the :class:`PredictionBatch` of every
learner for each batch of the fold, in any order across learners, and scores them example by
example. Keeping all learners of a fold together is what lets it count, per example, where
learner A was wrong and B right (McNemar) over the same examples. At every reporting position
(each ``report_every`` examples of the stream, and the end of a bounded input) it emits a
:class:`FoldReport`. With live verdicts on (``EvalPlan.losses``) the report also carries every
learner's per-example 0/1 losses since the previous report, packed, for the aggregator's
confidence sequences (docs/method.md §12; why there, not here: :mod:`.aggregator`). Beside
the configured window every learner keeps a cumulative one, so that each report also gives the
whole-stream value of every scalar measure (``whole``), as MOA's and River's progressive scores
do; with a cumulative window configured the two are one.

Why one module: :class:`FoldEvaluator` and its private parts (the pair
counts, each learner's state, the labels held for delayed scoring) are one object's state,
pickled together into Flink's keyed state and read back by one ``__setstate__``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, Hashable, NamedTuple

import numpy as np

from foldstream.operators.stats import detectors, measures, normalization
from foldstream.operators.stats.auc import WindowAuc
from foldstream.operators.stats.detectors import Adwin, PageHinkley, fade
from foldstream.operators.stages.delay import DelayPredictionBatch
from foldstream.operators.stats.measures import positive_code
from foldstream.operators.stages.messages import (
    WAITING, Alarm, ArrivalSeen, Expiry, FoldError, HeldArrival, upgrade_held
)
from foldstream.operators.records.base import (
    DelayCounts, FoldLosses, FoldPredictions, FoldReport, PredictionBatch, pair_key, pack_bits
)
from foldstream.operators.stats.watched import LOSS, WATCH_WINDOW, MeasureWatch, defined
from foldstream.operators.stats.windows import ADWIN_DELTA, FADING_ALPHA, Window, WindowSpec

REPORT_EVERY = 1000
"""Default reporting interval: the folds report every this many examples of a stream."""
STATE_FORMAT = 3
"""The layout of a :class:`FoldEvaluator`'s pickled state (Flink's keyed state): 2 since the
windows and detectors keep their state in numpy arrays (operators/stats/detectors.py), 3 since its
held arrivals, alarms and errors are the named types of :mod:`foldstream.operators.stages.messages`.
A state of format 2 is read into format 3 (:data:`READS_FORMATS`); one of another layout is
refused (:class:`StateFormatError`), never half read."""
READS_FORMATS = (2, STATE_FORMAT)


class StateFormatError(ValueError):
    """A fold evaluator's pickled state (a checkpoint's) of a layout this version cannot read."""


@dataclass(frozen=True)
class EvalPlan:
    """What an evaluator needs to know of the configuration (picklable, hashable)."""

    learners: tuple[str, ...]
    window: WindowSpec = WindowSpec()
    report_every: int = REPORT_EVERY
    # Page-Hinkley's parameters other than its defaults (operators/stats/detectors.py); None: none
    page_hinkley: tuple[tuple[str, Any], ...] | None = ()
    adwin_alarms: bool = True
    adwin_delta: float = ADWIN_DELTA  # for the alarm detector when the window is not ADWIN's own
    q_fading: float = FADING_ALPHA
    positive: Hashable | None = None  # None: the class seen first; see positive_code
    normalize: tuple[str, ...] = ()
    max_matrices: int = normalization.MAX_MATRICES
    pair_window_cap: int = 65_536  # McNemar over an ADWIN window: at most this many examples
    losses: bool = False  # reports carry the per-example losses (live verdicts, docs/method.md §12)
    scores: tuple[str, ...] = ()  # score-based measures (operators/stats/auc.py), from kept scores
    predictions: bool = False  # reports carry the examples' predictions (sink.predictions)
    alarm_quantity: str = LOSS  # what the detectors watch: the 0/1 loss, or a measure (§7)
    alarm_window: int = WATCH_WINDOW  # the sliding window of a watched measure


class _PairCounts:
    """McNemar's ``a`` (A wrong, B right) and ``b`` (the opposite) over a pair's shared window.

    Cumulative: every example; fading: faded like the window; sliding and ADWIN: the last
    ``min(size_A, size_B)`` examples, the ones both learners' windows hold (ADWIN windows are
    suffixes of the scored examples), at most ``cap`` of them, whose codes a ring keeps (grown
    as it fills). A segment of codes at a time, in one compiled loop
    (:func:`~foldstream.operators.stats.kernels.pairs_run`).
    """

    _FIRST_RING = 64

    def __init__(self, kind: str, alpha: float, cap: int):
        self.kind = kind
        self.alpha = alpha
        self.cap = cap
        self._ab = np.zeros(2)
        self._ring = np.zeros(min(cap + 1, self._FIRST_RING) if kind in ("sliding", "adwin")
                              else 0, dtype=np.int8)
        self._ring_state = np.zeros(2, dtype=np.int64)  # the oldest code, the number of codes

    def __setstate__(self, state: dict) -> None:
        if "_recent" in state:  # pickled before the counts were arrays: read it into them
            recent = state.pop("_recent")
            counts = _PairCounts(state["kind"], state["alpha"], state["cap"])
            counts._ab[:] = (state.pop("a"), state.pop("b"))
            if recent is not None:
                counts._ring = np.zeros(max(len(recent) + 1, counts._ring.shape[0]), np.int8)
                counts._ring[:len(recent)] = list(recent)
                counts._ring_state[1] = len(recent)
            state = dict(counts.__dict__)
        self.__dict__.update(state)

    @property
    def a(self) -> float:
        return float(self._ab[0])

    @property
    def b(self) -> float:
        return float(self._ab[1])

    def update_many(self, codes: np.ndarray, shared: np.ndarray | None) -> None:
        """Count ``codes`` in turn (1: A wrong and B right, 2: the opposite, 0 otherwise;
        ``shared``: each one's shared window size, ``None`` for cumulative and fading)."""
        if self.kind == "cumulative":  # integer-valued sums: the same in one step
            self._ab[0] += int(np.count_nonzero(codes == 1))
            self._ab[1] += int(np.count_nonzero(codes == 2))
            return
        n = len(codes)
        if not n:
            return
        ring, (head, count) = self._ring, self._ring_state.tolist()
        # before each code comes in, at most max(count, the shared sizes so far) are kept
        need = min(self.cap, count + n, max(count, int(shared.max()) if shared is not None
                                            else 0)) + 1
        if ring.shape[0] and need > ring.shape[0]:  # grown, its codes from the oldest on
            grown = np.zeros(min(self.cap + 1, max(need, 2 * ring.shape[0])), dtype=np.int8)
            grown[:count] = np.roll(ring, -head)[:count]
            self._ring = ring = grown
            self._ring_state[:] = (0, count)
        detectors._kernels().pairs_run(
            np.asarray(codes, dtype=np.int64),
            np.zeros(n, dtype=np.int64) if shared is None else np.asarray(shared, np.int64),
            self.kind == "fading", float(self.alpha), int(self.cap), self._ab, ring,
            self._ring_state)


class _Pair(NamedTuple):
    """A pair of learners (``a`` before ``b`` in configuration order) and its McNemar counts."""

    a: str
    b: str
    counts: _PairCounts


class _BatchArrays(NamedTuple):
    """A batch's lists as arrays, made once for all its segments: the true classes, the
    persistent baseline's predictions, the scored flags and each learner's predictions."""

    y: np.ndarray
    prev: np.ndarray
    scored: np.ndarray
    preds: dict[str, np.ndarray]


class _ReportedAt(NamedTuple):
    """Where a fold's last report stands: its position, and its labels (delayed labels; 0
    otherwise)."""

    position: int
    labelled: int


@dataclass
class _LearnerState:
    window: Window
    page_hinkley: PageHinkley | None
    adwin: Adwin | None  # alarm detector, when the window's own ADWIN does not serve
    faded_loss: float = 0.0
    watch: MeasureWatch | None = None  # the measure the detectors watch (None: the loss)
    wrong: Any = None  # this segment's losses (booleans) and window sizes, for the pairs
    sizes: Any = None
    auc: WindowAuc | None = None  # evaluation.scores: auc
    # Every example so far, for the whole-stream values: ``window`` itself when it is
    # cumulative; None in a state checkpointed without it (its values are then not reported).
    whole: Window | None = None


class _Labels:
    """A run of labels of a delayed stream not scored yet (:meth:`FoldEvaluator._score_delayed`):
    for each, ``(y, prev, scored, preds, majs, at)``: its true class, persistent baseline,
    whether the fold scores it, every learner's prediction and majority baseline at its arrival,
    and the position it was labelled at. ``scored`` counts the scored ones; ``waiting`` maps the
    key of each example that arrived during the run to how many of them came before it."""

    def __init__(self) -> None:
        self.items: list[tuple] = []
        self.scored = 0
        self.waiting: dict[Hashable, int] = {}

    def add(self, y: int, prev: int, scored: bool, preds: tuple[int, ...], majs: tuple[int, ...],
            at: int) -> None:
        self.items.append((y, prev, scored, preds, majs, at))
        if scored:
            self.scored += 1

    def clear(self) -> None:
        self.items = []
        self.scored = 0
        self.waiting = {}


def _packed(chunks: list) -> bytes:
    """:func:`~foldstream.operators.records.base.pack_bits` of flags kept a segment at a time
    (arrays of booleans; a state pickled before keeps single booleans).

    >>> _packed([np.array([True, False]), True, np.array([], dtype=bool)]), _packed([])
    (b'\\xa0', b'')
    """
    return pack_bits(np.hstack(chunks) if chunks else ())


class FoldEvaluator:
    """Scores every learner of one fold of one stream; see the module docstring.

    >>> from foldstream.operators.records import PredictionBatch
    >>> ev = FoldEvaluator("s", 0, EvalPlan(("a", "b"), report_every=2))
    >>> def batch(name, preds):
    ...     return PredictionBatch(stream="s", fold=0, learner=name, seq=0, start=0, y=[0, 1, 1],
    ...                            prev_y=[-1, 0, 1], y_pred=preds, scored=[True] * 3,
    ...                            classes=["x", "y"], final=True)
    >>> ev.add(batch("a", [0, 1, 0]))
    []
    >>> reports = ev.add(batch("b", [0, 0, 1]))
    >>> [(r.position, r.final, r.learners["a"]["values"]["accuracy"]) for r in reports]
    [(2, False, 1.0), (3, True, 0.6666666666666666)]
    >>> reports[-1].pairs["a|b"]["a"], reports[-1].pairs["a|b"]["b"]
    (1.0, 1.0)
    """

    def __init__(self, stream: str, fold: int, plan: EvalPlan):
        self.stream = stream
        self.fold = fold
        self.plan = plan
        spec = plan.window
        self._kind = spec.kind
        self._learners: dict[str, _LearnerState] = {}
        on_loss = plan.alarm_quantity == LOSS
        for name in plan.learners:
            window = spec.make()
            ph = PageHinkley(**dict(plan.page_hinkley)) if plan.page_hinkley is not None else None
            # the window's own ADWIN serves as the alarm detector when it watches the loss
            alarm_adwin = Adwin(delta=plan.adwin_delta) \
                if plan.adwin_alarms and (self._kind != "adwin" or not on_loss) else None
            watch = None if on_loss else MeasureWatch(plan.alarm_quantity, plan.alarm_window,
                                                      plan.positive)
            whole = window if self._kind == "cumulative" else WindowSpec("cumulative").make()
            self._learners[name] = _LearnerState(
                window, ph, alarm_adwin, watch=watch, whole=whole,
                auc=WindowAuc(self._kind != "cumulative") if "auc" in plan.scores else None)
        self._pairs = {
            pair_key(a, b): _Pair(a, b, _PairCounts(self._kind, spec.alpha or 1.0,
                                                    plan.pair_window_cap))
            for a, b in combinations(plan.learners, 2)
        }
        self._pending: dict[int, dict[str, PredictionBatch]] = {}
        self._next_seq = 0
        self._alarms: list[Alarm] = []
        self._errors: list[FoldError] = []  # quarantined learners, for the report
        self._classes: list[Hashable] = []
        self._n_classes = 0  # classes of the stream seen up to the current position
        self._reported = 0  # the position of the last snapshot
        self.position = 0
        # Live verdicts: the scored flags and each learner's losses since the last snapshot, an
        # array of booleans a segment (packed by _packed).
        self._scored_since: list[np.ndarray] = []
        self._losses_since: dict[str, list[np.ndarray]] = {name: [] for name in plan.learners}
        # Delayed labels (docs/method.md §13): position counts arrivals, these the labels.
        self._delayed = False
        self._held: dict[Hashable, HeldArrival] = {}  # by key
        self._labelled = 0
        self._expired = 0
        self._delay_sum = 0
        self._delay_max = 0
        # where the last report was (or none was needed: nothing arrived yet)
        self._reported_state = _ReportedAt(0, 0)
        self._state_format = STATE_FORMAT
        self._kept = self._no_predictions()  # sink.predictions: since the last report
        self._kept_width = 0  # sink.predictions: the classes seen so far

    def _no_predictions(self) -> FoldPredictions | None:
        if not self.plan.predictions:
            return None
        return FoldPredictions(preds={name: [] for name in self.plan.learners},
                               scores={name: [] for name in self.plan.learners}
                               if self.plan.scores else None)

    def __setstate__(self, state: dict) -> None:
        found = state.get("_state_format", 1)
        if found not in READS_FORMATS:
            raise StateFormatError(
                f"the checkpoint holds the fold evaluator of stream {state.get('stream')!r}, "
                f"fold {state.get('fold')} in state format {found}, and this version of "
                f"foldstream reads formats {', '.join(map(str, READS_FORMATS))} only (its "
                f"windows and alarm detectors changed): start the run afresh, without "
                f"resuming from this checkpoint")
        if found == 2:  # plain tuples where format 3 has named ones
            state["_pairs"] = {key: _Pair(*pair) for key, pair in state["_pairs"].items()}
            state["_alarms"] = [Alarm(*alarm) for alarm in state["_alarms"]]
            state["_errors"] = [FoldError(*error) for error in state["_errors"]]
            state["_held"] = {key: upgrade_held(entry) for key, entry in state["_held"].items()}
            reported = state["_reported_state"]
            state["_reported_state"] = _ReportedAt(0, 0) if reported is None \
                else _ReportedAt(*reported)
            state["_state_format"] = STATE_FORMAT
        state.setdefault("_kept", None)  # a state from before sink.predictions: none kept
        state.setdefault("_kept_width", 0)
        self.__dict__.update(state)

    # ---------------------------------------------------------------------------------------
    def add(self, batch: PredictionBatch | DelayPredictionBatch) -> list[FoldReport]:
        """Take one learner's predictions; score every batch for which all learners are in."""
        self._pending.setdefault(batch.seq, {})[batch.learner] = batch
        reports: list[FoldReport] = []
        while len(self._pending.get(self._next_seq, ())) == len(self._learners):
            batches = self._pending.pop(self._next_seq)
            if isinstance(next(iter(batches.values())), DelayPredictionBatch):
                scored = self._score_delayed(batches)
            else:
                scored = self._score(batches)
            costs = {name: getattr(b, "cost", None) for name, b in batches.items()}
            if scored and scored[-1].final and all(costs.values()):
                scored[-1].costs = {name: costs[name] for name in self._learners}
            reports.extend(scored)
            self._next_seq += 1
        return reports

    # ---------------------------------------------------------------------------------------
    # Delayed labels (docs/method.md §13)
    def _score_delayed(self, batches: dict[str, DelayPredictionBatch]) -> list[FoldReport]:
        """Hold the predictions made at each arrival; score them when the label comes.

        The labels are scored a run at a time (:class:`_Labels`), as one segment of arrays,
        with the result of scoring them one by one: a run ends at a report, at the end of the
        batch, and before the label of an example that arrived during the run, whose majority
        baseline is the windows' after the run's labels scored before its arrival (each
        window's majority after each example, from :meth:`~.windows.Window.update_many`)."""
        self._delayed = True
        first = next(iter(batches.values()))
        self._classes = first.classes
        names = list(self._learners)
        states = list(self._learners.values())
        preds = [batches[name].y_pred for name in names]
        scored = first.scored  # the folds' weights are shared by all learners
        for name in names:
            error = batches[name].error
            if error is not None:
                self._errors.append(FoldError.of(name, error))
        every = self.plan.report_every
        reports: list[FoldReport] = []
        held = self._held
        run = _Labels()
        pred_rows = list(zip(*preds))  # every learner's prediction at each arrival
        majs_now = None  # the windows' majorities, while no label of the run is scored
        j = 0  # index of the arrival among this batch's arrivals
        for event in first.events:
            kind = type(event)
            if kind is ArrivalSeen:
                self.position += 1
                if run.scored:  # its majorities: the windows' after the run's labels so far
                    run.waiting[event.key] = run.scored
                    held[event.key] = HeldArrival(event.position, event.prev, scored[j],
                                                  pred_rows[j], state=WAITING)
                else:
                    if majs_now is None:
                        majs_now = tuple(state.window.majority() for state in states)
                    held[event.key] = HeldArrival(event.position, event.prev, scored[j],
                                                  pred_rows[j], majs_now)
                j += 1
            elif kind is Expiry:
                if held.pop(event.key, None) is not None:
                    self._expired += 1
            else:
                if held[event.key].state == WAITING:  # its majorities come with the run
                    self._score_run(run)
                    majs_now = None
                entry = held.pop(event.key)
                delay = self.position - entry.position
                self._labelled += 1
                self._delay_sum += delay
                if delay > self._delay_max:
                    self._delay_max = delay
                run.add(event.y, entry.prev, entry.scored, entry.preds, entry.majorities,
                        self.position)
                if self._labelled % every == 0:
                    self._score_run(run)
                    majs_now = None
                    reports.append(self._snapshot(final=False))
        self._score_run(run)
        if first.final:
            self._end(reports)
        return reports

    def _score_run(self, run: _Labels) -> None:
        """Score a run of labelled examples (:meth:`_score_delayed`), then give the arrivals
        that waited on it their majorities; the run is emptied."""
        if not run.items:
            return
        ys, prevs, flags, preds, majs, where = zip(*run.items)
        self._n_classes = max(self._n_classes, max(ys) + 1)
        if self.plan.losses:
            self._scored_since.append(np.asarray(flags, dtype=np.bool_))
        if run.scored:
            at = np.flatnonzero(np.asarray(flags, dtype=np.bool_))
            names = list(self._learners)
            preds_a = np.asarray(preds, dtype=np.int64)[at]
            majs_a = np.asarray(majs, dtype=np.int64)[at]
            after = self._score_examples(
                np.asarray(ys, dtype=np.int64)[at], np.asarray(prevs, dtype=np.int64)[at],
                {name: preds_a[:, i] for i, name in enumerate(names)},
                {name: majs_a[:, i] for i, name in enumerate(names)},
                np.asarray(where, dtype=np.int64)[at])
            if run.waiting:
                rows = list(zip(*(a.tolist() for a in after.values())))
                held = self._held
                for key, k in run.waiting.items():
                    entry = held.get(key)
                    if entry is not None and entry.state == WAITING:
                        entry.ready(rows[k - 1])
        run.clear()

    def _score(self, batches: dict[str, PredictionBatch]) -> list[FoldReport]:
        first = next(iter(batches.values()))
        self._classes = first.classes
        n, start, every = len(first), first.start, self.plan.report_every
        arrays = _BatchArrays(
            np.asarray(first.y, dtype=np.int64), np.asarray(first.prev_y, dtype=np.int64),
            # scored flags are mostly all True (prequential): their list's own loop says so
            np.ones(n, dtype=np.bool_) if all(first.scored) else
            np.asarray(first.scored, dtype=np.bool_),
            {name: np.asarray(batches[name].y_pred, dtype=np.int64) for name in self._learners})
        reports = []
        i0 = 0
        # Cut the batch at reporting positions, so every report sees exactly the examples up to
        # its position whatever the batch size.
        for i1 in range(every - start % every, n + 1, every):
            self._score_segment(batches, first, arrays, i0, i1)
            self.position = start + i1
            i0 = i1
            reports.append(self._snapshot(final=False))
        if i0 < n:
            self._score_segment(batches, first, arrays, i0, n)
            self.position = start + n
        if first.final:
            self._end(reports)
        return reports

    def _end(self, reports: list[FoldReport]) -> None:
        """The end of a bounded input, after the ``reports`` of the last batch: the last of
        them marked final when it stands where the fold stands (position and labels), a bare
        end marker when an earlier batch's report does (so that no report is sent twice, and
        none for a stream with no input), otherwise a final report."""
        if self._reported_state == (self.position, self._labelled):
            if reports:
                reports[-1].final = True
            else:
                reports.append(FoldReport(stream=self.stream, fold=self.fold,
                                          position=self.position, final=True, learners={},
                                          pairs={}))
        else:
            reports.append(self._snapshot(final=True))

    def _score_segment(self, batches: dict[str, PredictionBatch], first: PredictionBatch,
                       arrays: _BatchArrays, i0: int, i1: int) -> None:
        """Score examples ``i0 .. i1`` of the batches (:meth:`_score_examples`); ``arrays``:
        the batches' lists as arrays."""
        start = first.start
        y, prev = arrays.y[i0:i1], arrays.prev[i0:i1]
        if i1 > i0:
            # A batch's class list runs to its end; a report must know only what came before it.
            self._n_classes = max(self._n_classes, int(y.max()) + 1)
        scored = arrays.scored[i0:i1]
        all_scored = bool(scored.all())
        if all_scored:
            where = np.arange(start + i0 + 1, start + i1 + 1)
        else:
            at = np.flatnonzero(scored)  # the scored examples of the segment
            where = at + (start + i0 + 1)
            y, prev = y[at], prev[at]
        preds = {}
        kept = {} if self.plan.scores else None
        for name in self._learners:
            batch = batches[name]
            if kept is not None:
                k = len(first.classes)
                rows = np.asarray(batch.scores[i0 * k:i1 * k], dtype=np.float64) \
                    .reshape(i1 - i0, k)
                kept[name] = rows if all_scored else rows[at]
            error = batch.error
            if error is not None and start + i0 < error[0] <= start + i1:
                # With the report that covers the example where it raised, whatever the batches.
                self._errors.append(FoldError.of(name, error))
            y_pred = arrays.preds[name][i0:i1]
            preds[name] = y_pred if all_scored else y_pred[at]
        self._score_examples(y, prev, preds, None, where, kept)
        if self._kept is not None:
            self._keep(batches, first, i0, i1)
        if self.plan.losses:
            self._scored_since.append(scored)

    def _keep(self, batches: dict[str, PredictionBatch], first: PredictionBatch, i0: int,
              i1: int) -> None:
        """Keep examples ``i0 .. i1`` of the batches for ``sink.predictions``."""
        kept, k = self._kept, len(first.classes)
        kept.positions.extend(range(first.start + i0 + 1, first.start + i1 + 1))
        kept.keys.extend(first.keys[i0:i1])
        kept.y.extend(first.y[i0:i1])
        # each example's scores for the classes seen up to it (a batch's list runs to its end,
        # and no learner scores a class before its first example: those are zeros)
        widths = np.maximum.accumulate(np.maximum(np.asarray(first.y[i0:i1]) + 1,
                                                  self._kept_width)).tolist() if i1 > i0 else []
        if widths:
            self._kept_width = widths[-1]
        kept.widths.extend(widths)
        kept.classes = first.classes
        for name in self._learners:
            batch = batches[name]
            kept.preds[name].extend(p if s else -1 for p, s in
                                    zip(batch.y_pred[i0:i1], batch.scored[i0:i1]))
            if kept.scores is not None:
                flat, out = batch.scores, kept.scores[name]
                for j, width in zip(range(i0, i1), widths):
                    out.extend(flat[j * k:j * k + width])

    def _score_examples(self, y: np.ndarray, prev: np.ndarray, preds: dict[str, np.ndarray],
                        majs: dict[str, np.ndarray] | None,
                        where: np.ndarray,
                        kept: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Score scored examples, in order: every learner's window, alarm detectors and faded
        loss a segment at a time (arrays, compiled loops), then the pairs.

        ``y``/``prev``: the true classes and the persistent baseline's predictions;
        ``preds[name]`` each learner's predictions; ``majs[name]`` each learner's majority
        baseline's predictions made earlier (delayed labels; ``None``: the windows' own);
        ``where`` the position each example's alarms are reported at; ``kept[name]`` each
        learner's class scores (a row per example; ``None``: not kept). Returns each learner's
        window majority after each example."""
        track_sizes = self._kind in ("sliding", "adwin")
        own_adwin = self._kind == "adwin" and self.plan.adwin_alarms and \
            self.plan.alarm_quantity == LOSS
        alarms = self._alarms
        after = {}
        for name, state in self._learners.items():
            y_pred = preds[name]
            sizes, drifts, after[name] = state.window.update_many(
                y, y_pred, prev, None if majs is None else majs[name])
            if state.whole is not None and state.whole is not state.window:
                state.whole.update_many(y, y_pred, prev)  # its own majority baseline
            wrong = y != y_pred
            loss = wrong.astype(np.float64)
            state.faded_loss = fade(loss, self.plan.q_fading, state.faded_loss)
            found = []  # (index, order, kind): the alarms of this learner, in scoring order
            if own_adwin and drifts is not None:
                found += [(i, 0, "adwin") for i in np.flatnonzero(drifts).tolist()]
            if state.watch is None:
                watched, index = loss, None
            else:  # a measure: its defined values, and the example of each
                index, watched = defined(state.watch.update_many(y, y_pred, prev,
                                                                 self._classes))
            for order, kind, detector in ((0, "adwin", state.adwin),
                                          (1, "page_hinkley", state.page_hinkley)):
                if detector is not None:
                    hits = np.flatnonzero(detector.update_many(watched))
                    found += [(i, order, kind)
                              for i in (hits if index is None else index[hits]).tolist()]
            if found:
                at = where.tolist()
                alarms.extend(Alarm(at[i], name, kind) for i, _, kind in sorted(found))
            state.wrong = wrong
            state.sizes = np.asarray(sizes) if track_sizes else None
            if state.auc is not None:
                # an ADWIN window's AUC, as its pairs' counts, over at most the cap's examples
                state.auc.update(y, kept[name], None if state.sizes is None
                                 else np.minimum(state.sizes, self.plan.pair_window_cap)
                                 if self._kind == "adwin" else state.sizes)
            if self.plan.losses:
                self._losses_since[name].append(wrong)
        for a, b, counts in self._pairs.values():
            sa, sb = self._learners[a], self._learners[b]
            wa, wb = sa.wrong, sb.wrong
            codes = np.where(wa & ~wb, 1, np.where(wb & ~wa, 2, 0))
            counts.update_many(codes, np.minimum(sa.sizes, sb.sizes) if track_sizes else None)
        return after

    def _snapshot(self, final: bool) -> FoldReport:
        classes = self._classes[: self._n_classes]
        pos_code = positive_code(classes, self.plan.positive)
        learners: dict[str, dict[str, Any]] = {}
        norm: dict[str, dict[str, Any]] = {}
        for name, state in self._learners.items():
            counts = state.window.counts()
            values = measures.compute(counts, classes, pos_code)
            if self.plan.normalize:
                binary = measures.binary_counts(counts, pos_code, len(classes))
                norm[name] = self._normalize(values, binary)
            if state.auc is not None:
                values["auc"] = state.auc.value(len(classes), pos_code)
            learners[name] = {"values": values, "window_size": state.window.size}
            if state.whole is not None:
                whole = values if state.whole is state.window else measures.compute(
                    state.whole.counts(), classes, pos_code)
                learners[name]["whole"] = {m: whole[m] for m in measures.MEASURES}
        pairs = {
            key: {"a": c.a, "b": c.b, "loss_a": self._learners[a].faded_loss,
                  "loss_b": self._learners[b].faded_loss}
            for key, (a, b, c) in self._pairs.items()
        }
        losses = None
        if self.plan.losses:
            losses = FoldLosses(self._reported, _packed(self._scored_since),
                                {name: _packed(lost) for name, lost in self._losses_since.items()})
            self._scored_since = []
            self._losses_since = {name: [] for name in self._losses_since}
        delay = None
        if self._delayed:
            delay = DelayCounts(labelled=self._labelled, pending=len(self._held),
                                expired=self._expired, delay_sum=self._delay_sum,
                                delay_max=self._delay_max)
        report = FoldReport(stream=self.stream, fold=self.fold, position=self.position,
                            final=final, learners=learners, pairs=pairs, alarms=self._alarms,
                            normalization=norm, losses=losses, errors=self._errors, delay=delay,
                            predictions=self._kept)
        self._kept = self._no_predictions()
        self._alarms = []
        self._errors = []
        # The live verdicts' losses run in scoring order: by labels when they are delayed.
        self._reported = self._labelled if self._delayed else self.position
        self._reported_state = _ReportedAt(self.position, self._labelled)
        return report

    def _normalize(self, values: dict[str, Any], binary: tuple[float, ...] | None) -> dict[str, Any]:
        """Brzezinski et al.'s normalisation of the binary window's measures (docs/method.md §8)."""
        info: dict[str, Any] = {"positives": None, "negatives": None, "scaled": False}
        if binary is None:
            for m in self.plan.normalize:
                values[f"norm_{m}"] = None
            return info
        tp, fn, fp, tn = binary
        positives, negatives = round(tp + fn), round(fp + tn)
        for m in self.plan.normalize:
            raw = normalization.binary_measure(m, tp, fn, fp, tn)
            value = None if raw != raw else float(raw)  # NaN: undefined
            values[f"norm_{m}"], used = normalization.normalize(
                m, positives, negatives, value, max_matrices=self.plan.max_matrices)
            info = {"positives": used["positives"], "negatives": used["negatives"],
                    "scaled": used["scaled"]}
        return info

"""Delayed labels (docs/method.md §13): the events of a delayed stream, the per-stream fan-out
that turns them into per-fold events, and the simulation of delay for files and generators.

Why this shape. A delayed stream is a sequence of *events*, per stream, in the order read: an
arrival (an example's key and features, maybe with its label) and a label (a key and its label).
The stages stay the ones of an undelayed run, keyed the same way, so that an engine only routes
events:

- :class:`DelayFanOut`, one per stream (it replaces the batcher and the fan-out), gives each
  arrival its position, draws its weights (docs/method.md §2, at arrival), encodes labels in
  order of *arrival of labels*, and holds what the label will need, once per stream: the
  features, the weights, the lagged labels. It emits, per fold, a :class:`DelayFoldBatch` of
  ordered events (:mod:`foldstream.operators.stages.messages`): an
  :class:`~foldstream.operators.stages.messages.Arrival`, a
  :class:`~foldstream.operators.stages.messages.Labelling` (the features shipped again) and an
  :class:`~foldstream.operators.stages.messages.Expiry` (an example dropped unscored beyond
  ``max_pending``). A label for an unknown, expired or already
  labelled key raises :class:`BadLabel` (a ``rejected`` record); :class:`DoneKeys` tells the
  three apart for any key, in 9 bytes per key done.
- :class:`~foldstream.operators.stages.learner.LearnerTask`, per (stream, learner, fold), predicts at
  an arrival and trains at a label, and passes a :class:`DelayPredictionBatch` on: the events
  without features, and its predictions at the arrivals. It holds nothing per example.
- :class:`~foldstream.operators.stages.evaluator.FoldEvaluator`, per (stream, fold), holds each pending
  example's predictions (every learner's), the persistent baseline's prediction and each
  window's majority at arrival, and scores them when the label comes (the window advances in
  label order); it reports each time ``labelled`` reaches a multiple of ``report_every``.

All state is plain picklable Python, as elsewhere.
"""

from __future__ import annotations

import bisect
import heapq
import json
from array import array
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, NamedTuple

import numpy as np

from foldstream.operators.stages.fanout import FanOutPlan, check_label_type
from foldstream.operators.stages.messages import (
    Arrival, Expiry, FoldEvent, LearnerError, Labelling, SeenEvent, upgrade_fold_event,
    upgrade_seen_event
)
from foldstream.operators.records.base import Example, Label, LearnerCost, Rejected
from foldstream.operators.stats.weights import fold_weights, key_code

MAX_PENDING = 100_000
"""Default ``evaluation.delay.max_pending``: examples of a stream that may wait for labels."""

@dataclass(slots=True)
class LabelOnly:
    """The label of an example that arrived earlier (a label-only row, docs/method.md §13).

    ``simulated``: made by :func:`simulate_delay` from a row already read (not a record of the
    input, so not counted as read). ``not_example``: a row on the input with the id, the label
    and other fields that make no example (why not): it is a label whose other fields are
    ignored when its key is pending, and rejected, saying both, when its key is unknown."""

    stream: str
    key: int | str
    y: Label
    location: str | None = None
    simulated: bool = False
    not_example: str | None = None


@dataclass(slots=True)
class DelayFoldBatch:
    """What one fold (of every learner) receives for a run of events of a delayed stream.

    ``events`` in order: :class:`~foldstream.operators.stages.messages.Arrival`,
    :class:`~foldstream.operators.stages.messages.Labelling` and
    :class:`~foldstream.operators.stages.messages.Expiry` (their fields say what they hold; a label's
    ``y`` is a class code in ``classes``, the stream's labels in order of arrival, and its
    ``lags`` the same tuple as at its arrival).
    """

    stream: str
    fold: int
    seq: int
    events: list[FoldEvent]
    classes: list[Label]
    final: bool = False

    def __setstate__(self, state: Any) -> None:
        _set_slots(self, state)
        self.events = [upgrade_fold_event(event) for event in self.events]


@dataclass(slots=True)
class DelayPredictionBatch:
    """One learner's output for a :class:`DelayFoldBatch`: the events without features, and the
    learner's prediction (a class code, -1 for none) and whether the fold scores it, for each
    arrival, in order. ``events`` are :class:`~foldstream.operators.stages.messages.ArrivalSeen`,
    :class:`~foldstream.operators.stages.messages.LabellingSeen` and
    :class:`~foldstream.operators.stages.messages.Expiry`. ``error``: as
    :class:`~foldstream.operators.records.base.PredictionBatch`'s, the position being the example's.
    """

    stream: str
    fold: int
    learner: str
    seq: int
    events: list[SeenEvent]
    y_pred: list[int]
    scored: list[bool]
    classes: list[Label]
    final: bool = False
    error: LearnerError | None = None
    cost: LearnerCost | None = None  # on the final batch: as PredictionBatch's

    def __setstate__(self, state: Any) -> None:
        self.cost = None  # a batch pickled before batches carried it
        _set_slots(self, state)
        self.events = [upgrade_seen_event(event) for event in self.events]
        if self.error is not None:
            self.error = LearnerError(*self.error)


def _set_slots(obj: Any, state: Any) -> None:
    """Restore a slotted dataclass's pickled state (``(None, {slot: value})``, or a dict)."""
    if isinstance(state, tuple):
        state = {**(state[0] or {}), **(state[1] or {})}
    for name, value in state.items():
        setattr(obj, name, value)


class BadLabel(ValueError):
    """A label that no pending example waits for: its key is unknown, expired or already
    labelled (or an arrival whose key is pending). :meth:`rejected` is its dead-letter message."""

    def __init__(self, message: str, item: Example | LabelOnly):
        super().__init__(message)
        self.item = item

    def rejected(self) -> Rejected:
        item = self.item
        body = {"key": item.key, "y": item.y} if isinstance(item, LabelOnly) else \
            {"key": item.key, "x": item.x, "y": item.y}
        raw = json.dumps(body, ensure_ascii=False, default=str)
        return Rejected(item.stream, str(self), raw, item.location)


class DoneKeys:
    """The keys of a stream's examples that are done, labelled or expired, for any number of
    keys: what tells an ``already labelled`` and an ``expired`` label from an ``unknown`` one
    (docs/method.md §13).

    A key is stored as its 64-bit code (:func:`~foldstream.operators.stats.weights.key_code`: an
    integer key as itself modulo 2**64, so exactly; a text key by a 64-bit hash) with one byte
    of state, in two sorted arrays: 9 bytes per key, plus a dict of the most recent keys
    (at most 65,536) merged into the arrays when it fills. A text key never seen is taken for a
    done one only if its hash equals one of the ``n`` done keys' codes: probability ``n / 2**64``
    (below 1e-9 for 10 billion keys). Plain picklable state, as every stage's.

    >>> done = DoneKeys()
    >>> done.set(7, DoneKeys.LABELLED); done.set("e2", DoneKeys.EXPIRED)
    >>> done.get(7), done.get("e2"), done.get(8), len(done)
    (1, 2, 0, 2)
    """

    LABELLED, EXPIRED = 1, 2
    _MERGE_MIN, _MERGE_MAX = 4096, 65536

    def __init__(self):
        # array.array, not numpy: bisect searches it at C speed without a numpy call per key
        self._codes = array("Q")  # sorted
        self._states = array("B")
        self._recent: dict[int, int] = {}  # code -> state, for codes not in the arrays

    def __len__(self) -> int:
        return len(self._codes) + len(self._recent)

    @property
    def nbytes(self) -> int:
        """The bytes of the arrays (the recent keys' dict aside)."""
        return len(self._codes) * self._codes.itemsize + len(self._states)

    def get(self, key: int | str) -> int:
        """The state of ``key``: :attr:`LABELLED`, :attr:`EXPIRED`, or 0 (never done)."""
        code = key_code(key)
        state = self._recent.get(code)
        if state is not None:
            return state
        i = self._find(code)
        return 0 if i < 0 else self._states[i]

    def set(self, key: int | str, state: int) -> None:
        code = key_code(key)
        if code not in self._recent:
            i = self._find(code)
            if i >= 0:
                self._states[i] = state
                return
        self._recent[code] = state
        if len(self._recent) > min(self._MERGE_MAX, max(self._MERGE_MIN, len(self._codes) // 8)):
            self._merge()

    def _find(self, code: int) -> int:
        codes = self._codes
        i = bisect.bisect_left(codes, code)
        return i if i < len(codes) and codes[i] == code else -1

    def _merge(self) -> None:
        recent = sorted(self._recent.items())
        new = np.fromiter((code for code, _ in recent), dtype=np.uint64, count=len(recent))
        codes = np.frombuffer(self._codes, dtype=np.uint64)
        at = np.searchsorted(codes, new)
        merged = np.insert(codes, at, new)
        states = np.insert(np.frombuffer(self._states, dtype=np.uint8), at,
                           np.fromiter((state for _, state in recent), dtype=np.uint8,
                                       count=len(recent)))
        self._codes, self._states = array("Q"), array("B")
        self._codes.frombytes(memoryview(merged).cast("B"))  # the buffer: no third copy
        self._states.frombytes(memoryview(states).cast("B"))
        self._recent = {}


class _Held:
    """A pending example at the fan-out: what its label event will carry."""

    __slots__ = ("position", "x", "lags", "weights")

    def __init__(self, position: int, x: dict[str, Any], lags: tuple | None):
        self.position = position
        self.x = x
        self.lags = lags
        self.weights: list[int] | None = None  # drawn when the batch holding its arrival is cut


class _Taken(NamedTuple):
    """An event the fan-out took and has not emitted yet: the type of event it becomes
    (:class:`~foldstream.operators.stages.messages.Arrival`, ``Labelling`` or ``Expiry``), the key, the
    pending example, and the arrival's ``prev`` or the label's class code (``None``: an
    expiry)."""

    kind: type
    key: int | str
    held: _Held
    value: int | None = None

    @classmethod
    def upgrade(cls, taken: tuple) -> "_Taken":
        """An event as an older pickle holds it: ``(kind code, key, held[, value])``."""
        if type(taken) is not tuple:
            return taken
        return cls((Arrival, Labelling, Expiry)[taken[0]], *taken[1:])


class DelayFanOut:
    """The per-stream stage of a delayed stream; see the module docstring.

    ``add`` takes an :class:`Example` (``y is None``: an arrival without label; with a label,
    either the label of the pending example with that key, or an arrival and at once its label)
    or a :class:`LabelOnly`, and returns the fold batches completed (``k`` per cut, in fold
    order). It raises :class:`BadLabel` or :class:`~foldstream.operators.stages.fanout.LabelClash`
    for an input to reject.

    >>> f = DelayFanOut("s", FanOutPlan("single"), batch_size=10, max_pending=2)
    >>> for key in (1, 2, 3):
    ...     _ = f.add(Example("s", {"a": 1.0}, None, key))
    >>> f.position, f.pending, f.expired
    (3, 2, 1)
    >>> try:
    ...     f.add(LabelOnly("s", 1, "u"))
    ... except BadLabel as bad:
    ...     print(bad)
    label of key 1: expired (dropped unscored beyond evaluation.delay.max_pending)
    >>> _ = f.add(LabelOnly("s", 3, "u"))
    >>> [type(event).__name__ for event in f.flush(final=True)[0].events]
    ['Arrival', 'Arrival', 'Expiry', 'Arrival', 'Labelling']
    """

    def __init__(self, stream: str, plan: FanOutPlan, batch_size: int,
                 max_pending: int = MAX_PENDING):
        if batch_size < 1 or max_pending < 1:
            raise ValueError("batch_size and max_pending must be at least 1")
        self.stream = stream
        self.plan = plan
        self.batch_size = batch_size
        self.max_pending = max_pending
        self.position = 0  # arrivals accepted so far
        self.labelled = 0
        self.expired = 0
        self.seq = 0
        self.classes: list[Label] = []
        self._codes: dict[Label, int] = {}
        self._recent: deque[Label] = deque(maxlen=max(1, plan.lags))  # labels arrived, last last
        self._label_types: dict[Label, tuple[type, Label]] = {}  # fanout.check_label_type's
        self._pending: OrderedDict[int | str, _Held] = OrderedDict()  # oldest first
        self._done = DoneKeys()  # every key labelled or expired, to say why a label is rejected
        self._events: list[_Taken] = []
        self._new: list[tuple[int | str, _Held]] = []  # arrivals whose weights are not drawn

    def __setstate__(self, state: dict) -> None:
        done = state.get("_done")
        if isinstance(done, dict):  # a checkpoint from before DoneKeys: {why: {key: None}}
            state["_done"] = DoneKeys()
            for why, keys in done.items():
                for key in keys:
                    state["_done"].set(key, DoneKeys.LABELLED if why == "labelled"
                                       else DoneKeys.EXPIRED)
        state["_events"] = [_Taken.upgrade(taken) for taken in state.get("_events", ())]
        self.__dict__.update(state)

    @property
    def pending(self) -> int:
        """Examples arrived and not yet labelled (nor expired)."""
        return len(self._pending)

    @property
    def buffered(self) -> int:
        """Events taken but not yet emitted in a batch."""
        return len(self._events)

    # ---------------------------------------------------------------------------------------
    def add(self, item: Example | LabelOnly) -> list[DelayFoldBatch]:
        if isinstance(item, LabelOnly):
            self._label(item.key, item.y, item)
        elif item.y is None:
            self._arrive(item)
        elif item.key is not None and (item.key in self._pending or self._done.get(item.key)):
            self._label(item.key, item.y, item)  # a label row joined by its id
        else:
            check_label_type(self._label_types, item)
            key = self._arrive(item)
            self._label(key, item.y, item)
        if len(self._events) >= self.batch_size:
            return self._emit(final=False)
        return []

    def flush(self, final: bool = False) -> list[DelayFoldBatch]:
        """Emit what is buffered (a timer, or the end of a bounded input when ``final``).

        Examples still pending at the end stay pending: the final reports count them."""
        if self._events or final:
            return self._emit(final)
        return []

    def _arrive(self, item: Example) -> int | str:
        key = self.position + 1 if item.key is None else item.key
        if key in self._pending:
            raise BadLabel(f"arrival of key {key!r}: an example with this key is pending", item)
        # A key used again after its example is done: pending now (looked up first), and done
        # again, with its new state, when its label comes or it expires.
        self.position += 1
        if len(self._pending) >= self.max_pending:
            old, held = self._pending.popitem(last=False)
            self.expired += 1
            self._done.set(old, DoneKeys.EXPIRED)
            self._events.append(_Taken(Expiry, old, held))
        recent = self._recent
        prev = self._codes[recent[-1]] if recent else -1
        held = _Held(self.position, item.x, tuple(reversed(recent)) if self.plan.lags else None)
        self._pending[key] = held
        self._events.append(_Taken(Arrival, key, held, prev))
        self._new.append((key, held))
        return key

    def _label(self, key: int | str, y: Label, item: Example | LabelOnly) -> None:
        if key not in self._pending:
            raise BadLabel(f"label of key {key!r}: {self._why_not(key, item)}", item)
        check_label_type(self._label_types, Example(item.stream, {}, y, key, item.location))
        held = self._pending.pop(key)
        self.labelled += 1
        code = self._codes.get(y)
        if code is None:
            code = self._codes[y] = len(self.classes)
            self.classes.append(y)
        self._recent.append(y)
        self._done.set(key, DoneKeys.LABELLED)
        self._events.append(_Taken(Labelling, key, held, code))

    def _why_not(self, key: int | str, item: Example | LabelOnly) -> str:
        """Why the label of ``key``, which no pending example has, is rejected."""
        state = self._done.get(key)
        if state == DoneKeys.EXPIRED:
            return "expired (dropped unscored beyond evaluation.delay.max_pending)"
        if state == DoneKeys.LABELLED:
            return "already labelled"
        reason = "unknown (no pending example has this key)"
        not_example = getattr(item, "not_example", None)
        # a row with other fields than the id and the label: an example's row, maybe
        return reason if not_example is None else f"{reason}; as an example: {not_example}"

    def _emit(self, final: bool) -> list[DelayFoldBatch]:
        plan, k = self.plan, self.plan.k
        if self._new:
            keys = [key for key, _ in self._new]
            positions = np.array([held.position for _, held in self._new])
            rows = fold_weights(plan.mode, k, plan.seed, self.stream, keys, positions,
                                plan.fold_choice).tolist()
            for (_, held), row in zip(self._new, rows):
                held.weights = row
            self._new = []
        # Each event's fields once, then every fold's events in one comprehension (an
        # expiry's weights are None: it takes none).
        fields = [(kind, key, held.position, held.x, held.weights if kind is not Expiry else None,
                   value, held.lags) for kind, key, held, value in self._events]
        per_fold = [[kind(key, position, x, weights[f], value, lags) if weights is not None
                     else Expiry(key, position)
                     for kind, key, position, x, weights, value, lags in fields]
                    for f in range(k)]
        classes = list(self.classes)
        batches = [DelayFoldBatch(stream=self.stream, fold=f, seq=self.seq, events=per_fold[f],
                                  classes=classes, final=final)
                   for f in range(k)]
        self.seq += 1
        self._events = []
        return batches


# --------------------------------------------------------------------------------------------
# Simulated delay for files and generators


def simulate_delay(items: Iterable[Any], *, examples: int = 0, field: str | None = None,
                   ) -> Iterator[Any]:
    """Files and generators with delayed labels (docs/method.md §13).

    Each labelled example becomes an arrival without label (same key: ``None`` keeps the
    position) and, right after the arrival of the example ``delay`` positions later (before
    any later arrival), a :class:`LabelOnly`; ``delay`` is ``examples``, or each row's value of
    the column ``field`` (a non-negative integer, taken out of the features; a row without one
    is rejected). At the end of the input the labels left are revealed in order of position.
    Positions are counted per stream over the arrivals passed on. A row without label (an
    arrival whose label comes in a later row with its id) passes unchanged, and so does that
    later row. Rejected records pass unchanged.

    >>> rows = [Example("s", {"a": float(i)}, "y%d" % i) for i in range(1, 4)]
    >>> [(type(e).__name__, e.key if isinstance(e, LabelOnly) else e.x["a"])
    ...  for e in simulate_delay(rows, examples=1)]
    [('Example', 1.0), ('Example', 2.0), ('LabelOnly', 1), ('Example', 3.0), ('LabelOnly', 2), ('LabelOnly', 3)]
    """
    counts: dict[str, int] = {}
    due: dict[str, list[tuple[int, int, LabelOnly]]] = {}
    waiting: OrderedDict[tuple[str, Any], None] = OrderedDict()  # keys of label-less rows
    for item in items:
        if isinstance(item, (Rejected, LabelOnly)):
            if isinstance(item, LabelOnly):  # a label row of the input, joined by its id
                waiting.pop((item.stream, item.key), None)
            yield item
            continue
        stream = item.stream
        if item.y is None:
            waiting[stream, item.key] = None
            if len(waiting) > MAX_PENDING:
                waiting.popitem(last=False)
        elif item.key is not None and (stream, item.key) in waiting:
            del waiting[stream, item.key]
            yield item  # the label of a label-less row: the fan-out joins it by its id
            continue
        else:
            x = item.x  # once: an example of a block makes a new dict at each read
            if field is not None:
                value = x.pop(field, None)
                if not (isinstance(value, (int, float)) and not isinstance(value, bool)
                        and value == value and float(value).is_integer() and value >= 0):
                    what = "missing" if value is None else f"{value!r} is not a non-negative integer"
                    raw = json.dumps({"x": x, "y": item.y}, ensure_ascii=False, default=str)
                    yield Rejected(stream, f"delay field {field!r} (evaluation.delay.field): "
                                           f"{what}", raw, item.location, counts.get(stream, 0))
                    continue
                delay = int(value)
            else:
                delay = examples
            position = counts.get(stream, 0) + 1
            key = position if item.key is None else item.key
            heapq.heappush(due.setdefault(stream, []),
                           (position + delay, position,
                            LabelOnly(stream, key, item.y, item.location, simulated=True)))
            item = Example(stream, x, None, item.key, item.location)
        position = counts[stream] = counts.get(stream, 0) + 1
        yield item
        heap = due.get(stream)
        while heap and heap[0][0] <= position:
            yield heapq.heappop(heap)[2]
    for stream, heap in due.items():
        for _, _, label in sorted(heap, key=lambda entry: entry[1]):
            yield label

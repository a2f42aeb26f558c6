"""The small messages the stages pass each other, and the entries they hold, by name.

What crosses from one stage to the next (a learner task to its fold evaluator, an evaluator to
the aggregator, the delay fan-out to the learner tasks) travels inside the batch and report
dataclasses of :mod:`foldstream.operators.records.base` and :mod:`foldstream.operators.stages.delay`; the
pieces those carry are the types here, each field named for what it holds:

=======================================  ====================================================
:class:`LearnerError`                    a learner replica's quarantine
                                         (``PredictionBatch.error``)
:class:`FoldError`                       the same, named by its learner (``FoldReport.errors``)
:class:`Alarm`                           a detector's alarm on a fold (``FoldReport.alarms``)
:class:`Arrival`, :class:`Labelling`,    the events of a delayed stream for one fold
:class:`Expiry`                          (``DelayFoldBatch.events``, docs/method.md §13)
:class:`ArrivalSeen`,                    the same events as a learner task passes them on,
:class:`LabellingSeen`, :class:`Expiry`  without the features (``DelayPredictionBatch.events``)
:class:`HeldArrival`                     an arrival a fold evaluator holds until its label
=======================================  ====================================================

Why ``NamedTuple``s. Each is made once per example or event and pickled between Flink
operators and into checkpoints: a named tuple costs what a tuple costs there, reads by name,
and compares equal to the plain tuple of the same values (tests that compare reports
field by field see no difference). :class:`HeldArrival` changes state in place (its
majorities come later), so it is a slotted dataclass.

Pickles of the layout before these types held plain tuples (a checkpoint's state, or a batch
in flight in an unaligned checkpoint); the ``upgrade_*`` functions read them into these types,
and the stages that hold such values call them when they are restored.

The stages dispatch on an event's type (``type(event) is Arrival``), not on a kind code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, NamedTuple

from foldstream.operators.records.base import Label

Key = Hashable
"""An example's key: its ``source.id_field`` value, or its position."""


class LearnerError(NamedTuple):
    """A learner replica raised (:class:`~foldstream.operators.stages.learner.LearnerTask`): the
    position of the example, the phase (``"predict"`` or ``"learn"``) and ``"Type: message"``.

    >>> LearnerError(3, "learn", "ValueError: no").phase
    'learn'
    """

    position: int
    phase: str
    error: str


class FoldError(NamedTuple):
    """A fold's report of a quarantined replica: :class:`LearnerError` with its learner."""

    position: int
    learner: str
    phase: str
    error: str

    @classmethod
    def of(cls, learner: str, error: LearnerError | tuple) -> "FoldError":
        """``error`` (a :class:`LearnerError`, or the plain tuple of an older pickle) of
        ``learner``.

        >>> FoldError.of("nb", LearnerError(3, "learn", "ValueError: no"))
        FoldError(position=3, learner='nb', phase='learn', error='ValueError: no')
        """
        position, phase, text = error
        return cls(position, learner, phase, text)


class Alarm(NamedTuple):
    """A change detector's alarm on one learner of a fold (docs/method.md §7)."""

    position: int
    learner: str
    detector: str  # "adwin" or "page_hinkley"


# --------------------------------------------------------------------------------------------
# Delayed labels: the events of one fold (docs/method.md §13)


class Arrival(NamedTuple):
    """An example arrives: its features and fold weight, the persistent baseline's prediction
    ``prev`` (the code of the most recent label arrived, -1 before any) and ``lags`` (the most
    recent labels arrived before it, most recent first; ``None`` without a temporal wrapper)."""

    key: Key
    position: int
    x: dict[str, Any]
    weight: int
    prev: int
    lags: tuple[Label, ...] | None


class Labelling(NamedTuple):
    """The label of a pending example comes: ``y`` is its class code; the features, weight and
    lags are the ones of its arrival, shipped again so that the learner task holds nothing."""

    key: Key
    position: int  # the example's own (its arrival's) position
    x: dict[str, Any]
    weight: int
    y: int
    lags: tuple[Label, ...] | None


class Expiry(NamedTuple):
    """A pending example dropped unscored beyond ``max_pending``."""

    key: Key
    position: int


class ArrivalSeen(NamedTuple):
    """An :class:`Arrival` as a learner task passes it on: no features (its prediction travels
    in the batch's ``y_pred``)."""

    key: Key
    position: int
    prev: int


class LabellingSeen(NamedTuple):
    """A :class:`Labelling` as a learner task passes it on: no features."""

    key: Key
    position: int
    y: int


FoldEvent = Arrival | Labelling | Expiry
SeenEvent = ArrivalSeen | LabellingSeen | Expiry


WAITING, READY = "waiting", "ready"
"""The states of a :class:`HeldArrival`."""


@dataclass(slots=True)
class HeldArrival:
    """An arrival a fold evaluator holds until its label: its position, the persistent
    baseline's prediction, whether the fold scores it, every learner's prediction and every
    learner's majority baseline at its arrival.

    ``state`` is :data:`READY` when ``majorities`` are known, or :data:`WAITING` for an example
    that arrived while a run of labels was being gathered: its majorities are the windows' after
    that run's earlier labels, known once the run is scored (:meth:`ready`).

    >>> held = HeldArrival(5, 0, True, (1, 0), state=WAITING)
    >>> held.ready((0, 0)); held.state, held.majorities
    ('ready', (0, 0))
    """

    position: int
    prev: int
    scored: bool
    preds: tuple[int, ...]
    majorities: tuple[int, ...] = ()
    state: str = READY

    def ready(self, majorities: tuple[int, ...]) -> None:
        self.majorities = majorities
        self.state = READY


# --------------------------------------------------------------------------------------------
# Reading the plain tuples of an older pickle



def upgrade_fold_event(event: tuple) -> FoldEvent:
    """A fold event as an older pickle holds it, ``(kind, key, position, ...)``, as its type
    (one of the types here: unchanged).

    >>> upgrade_fold_event((0, "k", 1, {}, 1, -1, None))
    Arrival(key='k', position=1, x={}, weight=1, prev=-1, lags=None)
    >>> upgrade_fold_event((2, "k", 1))
    Expiry(key='k', position=1)
    """
    if type(event) is tuple:
        kind, *fields = event
        return (Arrival, Labelling, Expiry)[kind](*fields)
    return event


def upgrade_seen_event(event: tuple) -> SeenEvent:
    """A learner task's event as an older pickle holds it, ``(kind, key, position[, value])``,
    as its type.

    >>> upgrade_seen_event((1, "k", 4, 0))
    LabellingSeen(key='k', position=4, y=0)
    """
    if type(event) is tuple:
        kind, *fields = event
        return (ArrivalSeen, LabellingSeen, Expiry)[kind](*fields)
    return event


def upgrade_held(entry: tuple | HeldArrival) -> HeldArrival:
    """A held arrival as an older pickle holds it, ``(position, prev, scored, preds,
    majorities or None)`` (``None``: arrived during the run), as a :class:`HeldArrival`.

    >>> upgrade_held((5, 0, True, (1, 0), None)).state
    'waiting'
    """
    if isinstance(entry, HeldArrival):
        return entry
    position, prev, scored, preds, majorities = entry
    if majorities is None:
        return HeldArrival(position, prev, scored, preds, state=WAITING)
    return HeldArrival(position, prev, scored, preds, majorities)

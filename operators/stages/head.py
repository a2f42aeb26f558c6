"""The head of one stream: what both engines do with a source item before the folds see it.

Each stream's input passes one object that counts what is read, gives accepted examples their
positions (the batcher, or with delayed labels the delay fan-out, docs/method.md §13), rejects
what cannot be evaluated (a label that clashes in type with an earlier one, a label-only row
when labels are not delayed, a label no example waits for) with the position it came at, and
cuts the fold batches. The in-process engine (``job/engines/inprocess.py``) and the Flink job's
fan-out (``job/engines/flink/job.py``) both hold a :class:`StreamHead` per stream, so that the
rule of what is counted, rejected and batched is written once and both engines emit the same
records; the Flink job keeps it in keyed state, so it must stay picklable (plain attributes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from foldstream.operators.stages.delay import BadLabel, DelayFanOut, DelayFoldBatch, LabelOnly
from foldstream.operators.stages.fanout import Batcher, FanOut, LabelClash
from foldstream.operators.stages.holdout import Holdout
from foldstream.operators.records.base import Example, FoldBatch, Label, Rejected


def counts_as_read(item: Example | LabelOnly | Rejected) -> bool:
    """Whether a source item is a record read from the input: every one but a label that
    :func:`~foldstream.operators.stages.delay.simulate_delay` made from a row already read.

    >>> counts_as_read(LabelOnly("s", 7, 1, simulated=True)), counts_as_read(LabelOnly("s", 7, 1))
    (False, True)
    """
    return not (isinstance(item, LabelOnly) and item.simulated)
MAX_CLASSES = 100_000
"""Default ``evaluation.max_classes``: the classes a stream may have. Memory grows linearly with
them (docs/memory.md), and so does every ``measures`` record (a recall per class); a label
column that is really an identifier makes every example a new class, so the output would grow
with the square of the stream. The default is above every single-label data set in use for
classification (ImageNet-21k's 21,841 classes, iNaturalist 2021's 10,000), not above landmark
recognition's (GLDv2, 203,094): such a run raises the key."""


class TooManyClasses(ValueError):
    """A stream's labels passed ``evaluation.max_classes``: the run ends there, cleanly."""

    def __init__(self, stream: str, limit: int, label: Label):
        self.stream = stream
        self.limit = limit
        self.label = label
        super().__init__(
            f"stream {stream!r} has more than {limit:,} classes (label {label!r} is one more): "
            f"evaluation.max_classes is {limit:,}; raise it if the stream has that many, or "
            f"check that the label column is a class, not an identifier")


class Taken(NamedTuple):
    """What one source item gave: the fold batches it completed (in fold order per cut), and
    the item rejected, if it was (with its position), for the dead letters."""

    fold_batches: list[FoldBatch | DelayFoldBatch]
    rejected: Rejected | None = None


@dataclass
class StreamHead:
    """One stream's head: counts (``read``, ``rejected``), positions and fold batches.

    ``delay``: the delay fan-out of a stream with delayed labels, which takes the place of
    ``batcher`` and ``fanout``.

    >>> from foldstream.operators.stages.fanout import FanOutPlan
    >>> head = StreamHead(Batcher("s", 2), FanOut("s", FanOutPlan("single")))
    >>> [len(head.take(Example("s", {"a": 1.0}, y)).fold_batches) for y in (1, 0)]
    [0, 1]
    >>> bad = head.take(LabelOnly("s", 7, 1)).rejected
    >>> bad.position, bad.reason
    (2, 'a label-only row, but labels are not delayed (evaluation.delay)')
    >>> head.read, head.rejected, head.position, head.classes
    (3, 1, 2, [1, 0])
    """

    batcher: Batcher
    fanout: FanOut
    delay: DelayFanOut | None = None
    holdout: Holdout | None = None  # evaluation.holdout (operators/stages/holdout.py)
    read: int = 0  # source items read (a label simulated from a row already read is not)
    rejected: int = 0
    # evaluation.max_classes; set on a head only when it is not the default, so that the state
    # a Flink checkpoint holds keeps its attributes
    max_classes: ClassVar[int] = MAX_CLASSES

    @property
    def stream(self) -> str:
        return self.batcher.stream

    @property
    def position(self) -> int:
        """Examples (arrivals) accepted so far."""
        return self.batcher.position if self.delay is None else self.delay.position

    @property
    def classes(self) -> list[Label]:
        """The stream's labels in order of first arrival (the summary's
        ``positive_class_not_seen`` looks in them)."""
        return (self.delay or self.fanout).classes

    def take(self, item: Example | LabelOnly | Rejected) -> Taken:
        """Count one source item and add it, or reject it: a :class:`Rejected` item as it
        came, an input that :meth:`add` refuses as its :class:`LabelClash` or
        :class:`BadLabel` says."""
        self.read += counts_as_read(item)
        if not isinstance(item, Rejected):
            try:
                return Taken(self.add(item))
            except (LabelClash, BadLabel) as bad:
                item = bad.rejected()
        self.rejected += 1
        item.position = self.position
        return Taken([], item)

    def add(self, item: Example | LabelOnly) -> list[FoldBatch | DelayFoldBatch]:
        """The fold batches that ``item`` completes. Raises :class:`LabelClash` or
        :class:`BadLabel` for an input to reject (not counted: :meth:`take` counts)."""
        if self.delay is not None:
            return self._counted(self.delay.add(item))
        if isinstance(item, LabelOnly):
            raise BadLabel("a label-only row, but labels are not delayed (evaluation.delay)",
                           item)
        holdout = self.holdout
        if holdout is not None:
            if not holdout.full:
                self.batcher._check_label(item)
                holdout.take(item, self.fanout)
                return self._counted([])
            batches = self.batcher.add(item)
            if holdout.due(self.batcher.position):  # cut here: the test comes after it
                batches += self.batcher.flush()
                return self._counted([fold_batch for batch in batches
                                      for fold_batch in self.fanout.process(batch)]
                                     + holdout.batches(self.fanout, self.batcher.position,
                                                       self.fanout.plan.k))
        else:
            batches = self.batcher.add(item)
            if not batches:  # nothing cut: no fold batch, and no class counted yet
                return batches
        return self._counted([fold_batch for batch in batches
                              for fold_batch in self.fanout.process(batch)])

    def flush(self, final: bool) -> list[FoldBatch | DelayFoldBatch]:
        """The fold batches of what is buffered (``final``: the end of a bounded input)."""
        if self.delay is not None:
            return self._counted(self.delay.flush(final=final))
        return self._counted([fold_batch for batch in self.batcher.flush(final=final)
                              for fold_batch in self.fanout.process(batch)])

    def _counted(self, fold_batches: list) -> list:
        """``fold_batches``, unless the stream's classes passed :attr:`max_classes`
        (:class:`TooManyClasses`: what they hold is not evaluated).

        >>> from foldstream.operators.stages.fanout import FanOutPlan
        >>> head = StreamHead(Batcher("s", 1), FanOut("s", FanOutPlan("single")))
        >>> head.max_classes = 2
        >>> [len(head.add(Example("s", {}, y))) for y in "abab"]
        [1, 1, 1, 1]
        >>> head.add(Example("s", {}, "c"))
        Traceback (most recent call last):
        ...
        foldstream.operators.stages.head.TooManyClasses: stream 's' has more than 2 classes (label 'c' is one more): evaluation.max_classes is 2; raise it if the stream has that many, or check that the label column is a class, not an identifier
        """
        classes = self.classes
        if len(classes) > self.max_classes:
            raise TooManyClasses(self.stream, self.max_classes, classes[self.max_classes])
        return fold_batches

"""Driving one stream's stages a step at a time, for the tests that look between the steps.

The engines feed :class:`~foldstream.job.engines.inprocess.StreamStages` through
:meth:`~foldstream.job.engines.inprocess.StreamStages.take`, which counts every item; a test
that checks the batcher's batches or pickles the stages between two inputs drives them here
instead, by the head's parts, and passes the fold batches through
:meth:`~foldstream.job.engines.inprocess.StreamStages.through_folds` as the engine does.

tests/ is no package: conftest.py loads this file by path (the ``stage_driver`` fixture).
"""

from __future__ import annotations

from foldstream.job.engines.inprocess import StreamStages
from foldstream.operators.records.base import Example, ExampleBatch, Record
from foldstream.operators.stages.delay import LabelOnly


def process(stages: StreamStages, batch: ExampleBatch) -> list[Record]:
    """The records of one batch cut by the head's batcher (``stages.head.batcher``)."""
    return stages.through_folds(stages.head.fanout.process(batch))


def add(stages: StreamStages, item: Example | LabelOnly) -> list[Record] | None:
    """Add one input, uncounted: the records of the batches it completed, ``None`` if none
    was cut. Raises what the head's ``add`` raises for an input to reject."""
    fold_batches = stages.head.add(item)
    return stages.through_folds(fold_batches) if fold_batches else None

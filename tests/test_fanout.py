"""The fan-out (operators/stages/fanout.py): the batcher and the fan-out give each fold its weights,
labels, previous labels and lags, the same whatever the batch size."""

from __future__ import annotations

from foldstream.operators.stages.fanout import Batcher, FanOut, FanOutPlan
from foldstream.operators.records.base import Example
def fan_out(batch_size: int, labels: list[str]) -> list[tuple]:
    batcher = Batcher("s", batch_size)
    fan = FanOut("s", FanOutPlan(mode="bootstrap", folds=3, seed=5, lags=2))
    rows = []
    batches = [b for y in labels for b in batcher.add(Example("s", {}, y))]
    for batch in batches + batcher.flush(final=True):
        for fb in fan.process(batch):
            for i in range(len(fb)):
                rows.append((fb.fold, fb.start + i + 1, fb.weights[i], fb.y[i], fb.prev_y[i], fb.lags[i]))
    return sorted(rows)


def test_fan_out_is_independent_of_batch_size():
    labels = list("abacbbcaab" * 7)
    reference = fan_out(500, labels)
    assert len(reference) == 3 * 70
    for size in (1, 7, 64):
        assert fan_out(size, labels) == reference
    # codes in order of first appearance; previous labels for the persistent baseline and lags
    first = [r for r in reference if r[0] == 0][:4]
    assert [r[3] for r in first] == [0, 1, 0, 2] and [r[4] for r in first] == [-1, 0, 1, 0]
    assert first[3][5] == ("a", "b")

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


def test_codes_in_bulk_are_those_of_the_example_by_example_loop():
    """A batch whose labels were all seen before takes its class codes in bulk; they, and each
    example's previous code, are those the loop gives (the loop runs with lags)."""
    import random

    from foldstream.operators.records.base import ExampleBatch
    from foldstream.operators.stages.fanout import FanOut, FanOutPlan

    rng = random.Random(4)
    bulk, loop = FanOut("s", FanOutPlan("cv", 3)), FanOut("s", FanOutPlan("cv", 3, lags=2))
    start, bulk_batches = 0, 0
    for seq in range(60):
        n = rng.choice([1, 2, 5, 40])
        ys = [rng.choice("abcdefg"[:1 + seq // 8]) for _ in range(n)]
        batch = ExampleBatch("s", seq, start, list(range(start + 1, start + n + 1)),
                             [{}] * n, ys)
        bulk_batches += all(y in bulk._codes for y in ys)
        a, b = bulk.process(batch)[0], loop.process(batch)[0]
        assert (a.y, a.prev_y, a.classes) == (b.y, b.prev_y, b.classes)
        start += n
    assert bulk_batches > 30

"""The no-change learner a batch at a time gives what river's, example by example, gives."""

from __future__ import annotations

import random

from river.dummy import NoChangeClassifier

from foldstream.operators.learners.baselines import no_change_batch


def test_no_change_batch_is_river_example_by_example():
    """Predictions (-1: none, or not scored) and the model's state after every batch, over
    batches of every length with weights 0 (not learnt) and unscored examples."""
    rng = random.Random(7)
    classes = ["a", "b", "c"]
    batched, single = NoChangeClassifier(), NoChangeClassifier()
    for _ in range(300):
        n = rng.choice([0, 1, 2, 3, 40])
        y = [rng.randrange(len(classes)) for _ in range(n)]
        weights = [rng.choice([0, 0, 1, 2]) for _ in range(n)]
        scored = [rng.random() < 0.8 for _ in range(n)] if rng.random() < 0.5 else [True] * n
        want = []
        for t, weight, score in zip(y, weights, scored):
            label = single.predict_one({})
            want.append(classes.index(label) if score and label is not None else -1)
            if weight > 0:
                single.learn_one({}, classes[t])
        assert no_change_batch(batched, y, weights, scored, classes) == want
        assert batched.last_class == single.last_class
        assert batched.classes == single.classes

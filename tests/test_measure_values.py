"""A record's mean and deviation of each measure are ``mean_std``'s, float for float."""

from __future__ import annotations

import random

from foldstream.operators.records.outputs import measure_values
from foldstream.operators.stats.significance import mean_std


def test_measure_values_are_mean_std_of_each_measure():
    """Rows of every length, with undefined values (None, NaN), an integer and extreme
    floats: the numpy pass over the plain rows gives ``mean_std``'s exact floats."""
    rnd = random.Random(3)
    for _ in range(3000):
        k = rnd.choice([1, 2, 3, 5, 8, 9, 10, 16, 17, 31])
        folds = {}
        for m in range(rnd.randint(0, 6)):
            n = k if rnd.random() < 0.9 else rnd.randint(0, 12)
            row = [rnd.choice([rnd.random(), rnd.uniform(-1e6, 1e6), 0.1, 1 / 3, -0.0, 1e150])
                   for _ in range(n)]
            if row and rnd.random() < 0.1:
                row[rnd.randrange(n)] = None
            if row and rnd.random() < 0.05:
                row[rnd.randrange(n)] = float("nan")
            if row and rnd.random() < 0.03:
                row[rnd.randrange(n)] = 1
            folds[f"m{m}"] = row
        got = measure_values(folds)
        assert list(got) == list(folds)
        for measure, row in folds.items():
            value = got[measure]
            assert value["folds"] is row
            assert repr((value["mean"], value["std"])) == repr(mean_std(row))

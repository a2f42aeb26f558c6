"""Memory linear in the number of classes (docs/memory.md), and ``evaluation.max_classes``.

A window's counts, and an ADWIN window's summary per bucket, grow with the classes and the
confusion cells seen, not with the square of the classes; a fold evaluator over thousands of
classes stays small; a stream whose classes pass ``evaluation.max_classes`` ends cleanly with
its records so far, exit code ``TOO_MANY`` and a message naming the key.
"""

from __future__ import annotations

import json
import pickle
import tracemalloc

import numpy as np
import pytest

from foldstream.job import exitcodes
from foldstream.job.cli import main
from foldstream.operators.stages.evaluator import EvalPlan, FoldEvaluator
from foldstream.operators.records.base import PredictionBatch
from foldstream.operators.stats.windows import WindowSpec

KINDS = {"cumulative": WindowSpec("cumulative"), "sliding": WindowSpec("sliding", size=500),
         "fading": WindowSpec("fading"), "adwin": WindowSpec("adwin")}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_window_state_grows_linearly_with_the_classes(kind):
    """Each example its own class, predicted as the previous one (a no-change learner): every
    example a new class and a new cell. A dense matrix of the classes was 8 * C * (C + 1)
    bytes (5 MB at 800 classes), and an ADWIN window held one per bucket."""
    sizes = {}
    for classes in (400, 800):
        window = KINDS[kind].make()
        t = np.arange(classes)
        prev = t - 1
        window.update_many(t, prev, prev)
        sizes[classes] = len(pickle.dumps(window))
    for classes, size in sizes.items():  # bytes per class (and per cell): a hundred or so
        assert size < 200 * classes + 4_096, sizes


def batches(classes: int, n: int, size: int = 500):
    """A no-change learner and a constant one over ``n`` examples of ``classes`` classes."""
    rng = np.random.default_rng(1)
    y = rng.integers(0, classes, size=n)
    prev = np.r_[-1, y[:-1]]
    labels = [f"c{i}" for i in range(classes)]
    for seq, start in enumerate(range(0, n, size)):
        stop = min(n, start + size)
        yield {name: PredictionBatch("s", 0, name, seq, start, y[start:stop].tolist(),
                                     prev[start:stop].tolist(), pred[start:stop].tolist(),
                                     [True] * (stop - start), labels, final=stop == n)
               for name, pred in (("nochange", prev), ("constant", np.zeros(n, np.int64)))}


def test_a_fold_evaluator_of_5000_classes_stays_small():
    """Two learners, the default ADWIN window, 5,000 classes over 20,000 examples: the
    evaluator's peak allocation (numpy's included) stays under 60 MB; the dense layout needed
    200 MB for one window's matrix, and one such matrix per ADWIN bucket."""
    evaluator = FoldEvaluator("s", 0, EvalPlan(("nochange", "constant"), report_every=5_000))
    tracemalloc.start()
    try:
        reports = []
        for batch in batches(5_000, 20_000):
            for name in ("nochange", "constant"):
                reports += evaluator.add(batch[name])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(reports) == 4
    assert len([k for k in reports[-1].learners["nochange"]["values"] if k.startswith("recall[")]) \
        == 5_000
    assert peak < 60 * 2**20, f"peak {peak / 2**20:.0f} MB"


def write_stream(path, classes: int, n: int) -> None:
    """Labels among ``classes``, a new one every ``n // classes`` examples at most."""
    rng = np.random.default_rng(3)
    with path.open("w") as out:
        out.write("x,y\n")
        for i in range(n):
            seen = 1 + i * classes // n
            out.write(f"{rng.random():.3f},k{rng.integers(0, seen)}\n")


def test_a_stream_past_max_classes_ends_cleanly_naming_the_key(tmp_path, capsys):
    path = tmp_path / "many.csv"
    write_stream(path, 40, 2_000)
    sink = tmp_path / "out.jsonl"
    code = main(["run", "--no-progress", "--set", f"source={{kind: file, path: {path}, label: y}}",
                 "--set", "learners=[{name: nc, model: river.dummy.NoChangeClassifier}]",
                 "--set", "evaluation.folds=3", "--set", "evaluation.report_every=100",
                 "--set", "engine.batch_size=50", "--set", "evaluation.max_classes=20",
                 "--set", f"sink.path={sink}"])
    assert code == exitcodes.TOO_MANY == 65
    err = capsys.readouterr().err
    assert "evaluation.max_classes is 20" in err and "Traceback" not in err
    records = [json.loads(line) for line in sink.read_text().splitlines()]
    measures = [r for r in records if r["type"] == "measures"]
    assert measures and records[-1]["type"] == "summary" and records[-1]["interrupted"]
    # the records so far: every report before the 21st class came, none after
    assert max(r["position"] for r in measures) >= 800
    assert all(len([k for k in r["values"] if k.startswith("recall[")]) <= 20 for r in measures)


def test_max_classes_is_checked_at_start(capsys):
    assert main(["validate", "--set", "evaluation.max_classes=0"]) == exitcodes.UNUSABLE
    assert "evaluation.max_classes" in capsys.readouterr().err

"""A checkpoint whose stages hold the plain tuples of the layout before the named messages
(``operators/stages/messages.py``) resumes, and reports from there on what that layout reported.

``tests/data/messages-checkpoint-v2.pickle.gz`` holds the stages of a delayed stream
(:class:`~foldstream.job.engines.inprocess.StreamStages`: the delay fan-out with buffered events,
learner tasks, one of them quarantined, fold evaluators holding arrivals, alarms and errors, the
aggregator waiting for the other folds' reports) pickled in the middle of a batch, with the
batches in flight at that moment (fold batches not yet learnt from, one learner's predictions
not yet scored), and the records that layout gave for the rest of the stream. It was written
once by the code before the named messages (commit 0a22e3e), with this file's ``--write``:

    <a checkout of 0a22e3e>/.venv/bin/python tests/test_messages_checkpoint.py --write
"""

from __future__ import annotations

import gzip
import pickle
import sys
from pathlib import Path

from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import StreamStages
from foldstream.job.plans import make_plans
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.records.base import Example

STORED = Path(__file__).resolve().parent / "data" / "messages-checkpoint-v2.pickle.gz"
N, CUT, EVERY = 400, 180, 40


def stages() -> StreamStages:
    """Two learners (Gaussian naive Bayes raises on a text feature), three cv folds, labels
    joined by key, Page-Hinkley alarms that fire, consensus drift, a report every
    :data:`EVERY` labels."""
    config = load_config(None, [
        "source={kind: generator, model: river.datasets.synth.Agrawal, limit: 1}",
        "learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
        "{name: prior, model: river.dummy.PriorClassifier}]",
        "evaluation.mode=cv", "evaluation.folds=3", f"evaluation.report_every={EVERY}",
        "evaluation.delay={examples: 5, max_pending: 8}", "engine.batch_size=16",
        "evaluation.alarms.page_hinkley={threshold: 2.0, min_instances: 5}",
        "evaluation.alarms.consensus={window: 100}"])
    return StreamStages(make_plans(config), "s")


def items() -> list:
    """A stream whose concept flips twice, with a text feature at example 95 (the naive Bayes
    replicas raise), labels 5 examples late; every 37th label never comes (it expires)."""
    out = []
    for i in range(1, N + 1):
        a = float(i % 7)
        label = (i % 3 == 0) != (60 < i <= 200)
        out.append(Example("s", {"a": "text" if i == 95 else a, "b": float(i % 5)}, None, i))
        if i > 5 and (i - 5) % 37:
            out.append(Example("s", {}, label if (i - 5) % 3 else not label, i - 5))
    return out


def comparable(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in SummaryRecord.TIMING_FIELDS}
            for r in records]


def run_to_cut() -> tuple[StreamStages, list, object]:
    """The stages in the middle of a batch that completes a report: fold 0 done, fold 1's
    first learner done, the fan-out a few events further."""
    st = stages()
    for item in items()[:CUT]:
        st.take(item)
    rest = iter(items()[CUT:])
    for item in rest:
        fold_batches, _ = st.head.take(item)
        if fold_batches and st.head.delay.labelled // EVERY > st.evaluators[0]._labelled // EVERY:
            break
        st.through_folds(fold_batches)
    for _ in range(3):
        assert not st.head.take(next(rest)).fold_batches
    first = fold_batches[0]
    for task in st.tasks[0]:
        for report in st.evaluators[0].add(task.process(first)):
            st.aggregator.add(report)
    predictions = st.tasks[1][0].process(fold_batches[1])
    return st, fold_batches[1:], predictions


def resume(st: StreamStages, in_flight: list, predictions) -> list[dict]:
    """The rest of the stream after :func:`run_to_cut`."""
    records = []
    for report in st.evaluators[1].add(predictions):
        records += st.aggregator.add(report)
    for task in st.tasks[1][1:]:
        for report in st.evaluators[1].add(task.process(in_flight[0])):
            records += st.aggregator.add(report)
    records += st.through_folds(in_flight[1:])
    taken = st.head.read
    for item in items()[taken:]:
        out, _ = st.take(item)
        records += out or []
    records += st.finish()
    return records


def test_stages_pickled_with_plain_tuples_resume_and_report_as_before():
    with gzip.open(STORED, "rb") as handle:
        checkpoint, expected = pickle.load(handle)
    st, in_flight, predictions = pickle.loads(checkpoint)
    records = comparable(resume(st, in_flight, predictions))
    assert len(records) == len(expected) > 40
    assert {r["type"] for r in expected} >= {"alarm", "drift", "learner_error", "measures"}
    assert records == expected
    # and the new layout, pickled at the same place, goes on alike (with the fields added
    # since the stored records were written: whole-stream values, model sizes)
    again = pickle.loads(pickle.dumps(run_to_cut()))
    added = ("whole_stream", "model_bytes")
    assert [{k: v for k, v in r.items() if k not in added}
            for r in comparable(resume(*again))] == expected


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    cut = run_to_cut()
    checkpoint = pickle.dumps(cut)
    expected = comparable(resume(*cut))
    STORED.parent.mkdir(exist_ok=True)
    with gzip.GzipFile(STORED, "wb", mtime=0) as handle:
        pickle.dump((checkpoint, expected), handle)
    print(f"wrote {STORED}: {len(expected)} records")

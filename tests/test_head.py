"""One stream head for both engines (operators/stages/head.py), and the Flink checkpoints it must read.

The Flink fan-out keeps each stream's head pickled in keyed state (state ``stream``), so a
checkpoint holds the class ``foldstream.job.engines.flink.job._StreamHead`` and its attributes:
a head restored from a checkpoint taken before the head moved to ``operators/`` must still be
one, with the attributes the job reads.
"""

from __future__ import annotations

import pickle

from foldstream.job.api import make_config
from foldstream.job.engines.inprocess import StreamStages
from foldstream.job.plans import make_plans
from foldstream.operators.stages.delay import LabelOnly
from foldstream.operators.stages.head import StreamHead
from foldstream.operators.records.base import Example, Rejected

#: The attributes of the fan-out's state before operators/stages/head.py (commit f648c19).
OLD_STATE = {"batcher", "fanout", "targets", "read", "rejected", "started", "flush_due", "delay"}


def plans(**options):
    from river import naive_bayes

    config, _ = make_config([({"a": 1.0}, "u")], {"nb": naive_bayes.GaussianNB()}, folds=3,
                            stream="s", report_every=100, engine={"batch_size": 100}, **options)
    return make_plans(config)


def test_both_engines_hold_the_one_head():
    from foldstream.job.engines.flink.job import _StreamHead

    p = plans()
    assert type(StreamStages(p, "s").head) is StreamHead
    head = p.stream_head("s", _StreamHead, targets=[[("r", None)]] * 3)
    assert isinstance(head, StreamHead)
    # what a checkpoint holds: the old state, how far the job has read its file or generator,
    # and the held-out test set (None unless evaluation.holdout; a class default for old states)
    assert set(vars(head)) == OLD_STATE | {"reader", "holdout"}
    again = pickle.loads(pickle.dumps(head))
    assert type(again) is _StreamHead and again.targets == head.targets
    del head.reader  # a head checkpointed before it kept one restores with none
    assert pickle.loads(pickle.dumps(head)).reader is None


def test_a_head_counts_rejects_and_cuts_as_the_engines_did():
    head = plans().stream_head("s")
    rows = [Example("s", {"a": i / 10}, "uv"[i % 2]) for i in range(250)]
    cut = [batch for row in rows for batch in head.take(row).fold_batches]
    assert [(b.fold, b.start, len(b)) for b in cut] == [(f, 0, 100) for f in range(3)] + \
        [(f, 100, 100) for f in range(3)]
    clash = head.take(Example("s", {"a": 0.0}, True))  # "u"/"v" labels, then a bool: no clash
    assert clash.rejected is None
    bad = head.take(Example("s", {"a": 0.0}, 1))  # 1 == True, another type: rejected
    assert bad.fold_batches == [] and bad.rejected.position == 251
    label = head.take(LabelOnly("s", 7, "u"))  # labels are not delayed here
    assert "not delayed" in label.rejected.reason
    came = head.take(Rejected("s", "not JSON", "{"))
    assert came.rejected.position == 251
    assert (head.read, head.rejected, head.position) == (254, 3, 251)
    final = head.flush(final=True)
    assert [(b.start, len(b), b.final) for b in final] == [(200, 51, True)] * 3


def test_a_delayed_head_counts_a_simulated_label_as_no_row_read():
    head = plans(delay={"examples": 2}).stream_head("s")
    assert head.delay is not None
    head.take(Example("s", {"a": 0.0}, None, key=1))
    head.take(LabelOnly("s", 1, "u", simulated=True))
    assert (head.read, head.position, head.classes) == (1, 1, ["u"])

"""Delayed labels (docs/method.md §13), in process: each example is predicted when it arrives and
scored and trained when its label arrives.

The reference for the measures is an independent loop written here from the specification
(river's models, no foldstream code): MOA's EvaluatePrequentialDelayed tests each example at its
arrival and trains on it ``k`` arrivals later, and the baselines are delayed-aware (the
persistent baseline predicts the most recent label that has *arrived*, the majority baseline
the most frequent label arrived so far).
"""

from __future__ import annotations

import csv
import gzip
import json
from collections import Counter

import pytest
from river import dummy, naive_bayes

import foldstream
from foldstream.operators.records.base import dumps

TIMING = ("wall_time_s", "examples_per_second")


def lines(results) -> list[str]:
    """The records as bytes, the summary without its timing fields."""
    return [dumps({k: v for k, v in r.items() if k not in TIMING}) for r in results.records]


def measures(results, learner: str | None = None) -> list[dict]:
    return [r for r in results.records
            if r["type"] == "measures" and (learner is None or r["learner"] == learner)]


def summary(results) -> dict:
    return next(r for r in results.records if r["type"] == "summary")


def write_jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


# ------------------------------------------------------------------------ the independent loop
def read_elec(path, limit: int) -> tuple[list[dict], list[str]]:
    xs, ys = [], []
    with gzip.open(path, "rt", newline="") as f:
        for row in csv.DictReader(f):
            ys.append(row.pop("target"))
            xs.append({name: float(value) for name, value in row.items()})
            if len(ys) == limit:
                break
    return xs, ys


def delayed_prequential(model, xs: list[dict], ys: list, k: int) -> dict[str, float]:
    """Predict at arrival; label (score, then train) right after the arrival k positions later;
    the labels left at the end in order. Cumulative window. Measures as docs/method.md §5."""
    held: dict[int, tuple] = {}
    arrived: Counter = Counter()
    first_seen: list = []  # labels in order of arrival: majority ties go to the first
    last = None  # the most recent label arrived
    cm: Counter = Counter()
    right = {"maj": 0, "per": 0}

    def majority():
        if not arrived:
            return None
        top = max(arrived.values())
        return next(c for c in first_seen if arrived[c] == top)

    def label(p: int) -> None:
        nonlocal last
        pred, maj, per = held.pop(p)
        y = ys[p]
        cm[y, pred] += 1
        right["maj"] += maj == y
        right["per"] += per == y
        if y not in arrived:
            first_seen.append(y)
        arrived[y] += 1
        last = y
        model.learn_one(xs[p], y)

    for p in range(len(xs)):
        held[p] = (model.predict_one(xs[p]), majority(), last)
        if p - k >= 0:
            label(p - k)
    for p in sorted(held):
        label(p)
    n = sum(cm.values())
    p0 = sum(c for (t, q), c in cm.items() if t == q) / n
    rows, cols = Counter(), Counter()
    for (t, q), c in cm.items():
        rows[t] += c
        cols[q] += c
    pc = sum(rows[c] * cols[c] for c in rows) / n / n
    pm, pper = right["maj"] / n, right["per"] / n
    return {"accuracy": p0, "kappa": (p0 - pc) / (1 - pc), "kappa_m": (p0 - pm) / (1 - pm),
            "kappa_per": (p0 - pper) / (1 - pper)}


@pytest.mark.parametrize("name,factory,limit", [
    ("nochange", dummy.NoChangeClassifier, None),
    ("gnb", naive_bayes.GaussianNB, 10_000),
])
def test_fixed_delay_equals_an_independent_loop(elec_path, name, factory, limit):
    k = 500
    xs, ys = read_elec(elec_path, limit or 10 ** 9)
    expected = delayed_prequential(factory(), xs, ys, k)
    results = foldstream.evaluate(str(elec_path), {name: factory()}, mode="single",
                                  window="cumulative", report_every=5000, limit=limit,
                                  delay={"examples": k}, verdicts={"enabled": False})
    last = measures(results)[-1]
    for measure, value in expected.items():
        assert last["values"][measure]["mean"] == pytest.approx(value, abs=1e-9), measure
    assert (last["position"], last["labelled"], last["pending"], last["expired"]) == \
        (len(xs), len(xs), 0, 0)
    assert last["delay_max"] == k
    # k for every label but the last k, which come at the end (delays k-1 .. 0)
    assert last["delay_mean"] == pytest.approx((k * (len(xs) - k) + k * (k - 1) / 2) / len(xs))
    if name == "nochange":
        # MOA: a NoChange learner predicts the label of the example k + 1 positions back, the
        # §13 persistent baseline exactly
        assert last["values"]["kappa_per"]["mean"] == 0.0
        # reports each 5,000 labels, then the end
        assert [m["labelled"] for m in measures(results)] == \
            list(range(5000, len(xs) + 1, 5000)) + [len(xs)]
        assert summary(results)["examples_read"] == len(xs)


def test_delay_zero_is_the_undelayed_run_byte_for_byte(elec_path):
    kwargs = dict(mode="bootstrap", folds=3, report_every=300, limit=1000)
    learners = {"nb": naive_bayes.GaussianNB(), "nc": dummy.NoChangeClassifier()}
    plain = foldstream.evaluate(str(elec_path), learners, **kwargs)
    zero = foldstream.evaluate(str(elec_path), learners, delay={"examples": 0}, **kwargs)
    assert lines(zero) == lines(plain)
    assert "labelled" not in measures(plain)[0]


def test_labels_right_after_arrival_score_as_the_undelayed_run(tmp_path):
    """A delay column of zeros: delayed mode, every label right after its arrival. Every value
    (both baselines, every fold, the comparisons and the live verdicts) equals the undelayed
    run's; only the delayed fields are added."""
    rows = [{"a": (i * 37 % 101) / 101, "b": i % 7, "d": 0, "target": "xyz"[(i * i) % 3]}
            for i in range(1, 901)]
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    plain_rows = [{k: v for k, v in row.items() if k != "d"} for row in rows]
    plain_path = write_jsonl(tmp_path / "p.jsonl", plain_rows)
    learners = {"nb": naive_bayes.GaussianNB(), "nc": dummy.NoChangeClassifier()}
    kwargs = dict(mode="cv", folds=3, report_every=200, stream="s")
    plain = foldstream.evaluate(plain_path, learners, **kwargs)
    delayed = foldstream.evaluate(path, learners, delay={"field": "d"}, **kwargs)
    extra = ("labelled", "pending", "expired", "delay_mean", "delay_max")
    stripped = [{k: v for k, v in r.items() if k not in extra} for r in delayed.records]
    assert [dumps(r) for r in stripped if r["type"] != "summary"] == \
        [dumps(r) for r in plain.records if r["type"] != "summary"]
    assert [(m["labelled"], m["pending"], m["delay_max"]) for m in measures(delayed, "nb")] == \
        [(200, 0, 0), (400, 0, 0), (600, 0, 0), (800, 0, 0), (900, 0, 0)]


def test_max_pending_expires_the_oldest_exactly(tmp_path):
    n, cap = 2000, 50
    rows = [{"a": float(i % 13), "d": 10 ** 9, "target": i % 2} for i in range(1, n + 1)]
    # 100 labels come in time: every 20th example has delay 3
    for i in range(0, n, 20):
        rows[i]["d"] = 3
    path = write_jsonl(tmp_path / "never.jsonl", rows)
    results = foldstream.evaluate(path, {"nb": naive_bayes.GaussianNB()}, mode="single",
                                  report_every=40, delay={"field": "d", "max_pending": cap})
    # 100 labels come in time; the other 1,900 come at the end, in order of position: 50 of
    # them find their example still pending, 1,850 find it expired and are rejected
    last = measures(results)[-1]
    assert (last["position"], last["labelled"], last["pending"], last["expired"]) == \
        (n, 150, 0, n - 150)
    reports = measures(results)
    assert [m["labelled"] for m in reports] == [40, 80, 120, 150]
    # the 40th in-time label (position 781) comes right after arrival 784
    assert (reports[0]["position"], reports[0]["pending"]) == (784, cap - 1)
    assert all(m["position"] == m["labelled"] + m["pending"] + m["expired"] and
               m["pending"] <= cap for m in reports)
    assert len(results.rejected) == n - 150
    # every expired key is remembered (operators.stages.delay.DoneKeys), not only the last max_pending
    reasons = Counter(r["reason"].split(": ", 1)[1] for r in results.rejected)
    assert reasons == {"expired (dropped unscored beyond evaluation.delay.max_pending)": n - 150}
    assert summary(results)["examples_rejected"] == n - 150
    assert summary(results)["examples_read"] == n


def test_label_rows_join_by_id_and_bad_labels_are_rejected(tmp_path):
    """JSON Lines rows without the label are arrivals; a later row with the id and the label is
    the label. A duplicate and an expired key are rejected with their reason; what is still
    pending at the end stays pending."""
    rows = [{"id": f"e{i}", "a": float(i % 5)} for i in range(1, 7)]  # six arrivals, no labels
    rows += [{"id": "e5", "target": "u"}, {"id": "e4", "target": "v"},  # out of order
             {"id": "e2", "target": "u"},  # expired: max_pending 3 dropped e1..e3 at e4..e6
             {"id": "e5", "target": "u"},  # duplicate
             {"id": "e3", "target": "u"}]  # expired
    path = write_jsonl(tmp_path / "events.jsonl", rows)
    results = foldstream.evaluate({"path": path, "id_field": "id"},
                                  {"nc": dummy.NoChangeClassifier()}, mode="single",
                                  report_every=1000, delay={"max_pending": 3})
    expired = "expired (dropped unscored beyond evaluation.delay.max_pending)"
    assert [(r["reason"], r["position"]) for r in results.rejected] == [
        (f"label of key 'e2': {expired}", 6), ("label of key 'e5': already labelled", 6),
        (f"label of key 'e3': {expired}", 6)]
    last = measures(results)[-1]
    assert (last["position"], last["labelled"], last["pending"], last["expired"]) == (6, 2, 1, 3)
    # e5 labelled 1 arrival after it, e4 2 arrivals after it
    assert (last["delay_mean"], last["delay_max"]) == (1.5, 2)
    assert (summary(results)["examples_read"], summary(results)["examples_rejected"]) == (11, 3)


def test_a_label_for_an_unknown_key_is_rejected():
    """A label-only event (a labels topic's row) whose key no example has."""
    from foldstream.job.api import make_config
    from foldstream.job.engines.inprocess import evaluate_to_list
    from foldstream.job.plans import make_plans
    from foldstream.operators.stages.delay import LabelOnly
    from foldstream.operators.records.base import Example

    config, _ = make_config([({"a": 1.0}, "u")], {"nc": dummy.NoChangeClassifier()},
                            mode="single", stream="s", delay={"examples": 1})
    items = [Example("s", {"a": 1.0}, None, 1), Example("s", {"a": 2.0}, None, 2),
             LabelOnly("s", 2, "u"), LabelOnly("s", 9, "u", "labels@3"), LabelOnly("s", 1, "v")]
    records, rejected = evaluate_to_list(make_plans(config), items)
    assert [(r["reason"], r["location"], r["position"]) for r in rejected] == [
        ("label of key 9: unknown (no pending example has this key)", "labels@3", 2)]
    last = [r for r in records if r["type"] == "measures"][-1]
    assert (last["labelled"], last["pending"], last["delay_mean"]) == (2, 0, 0.5)
    assert [r for r in records if r["type"] == "summary"][0]["examples_rejected"] == 1


def test_verdicts_advance_in_label_order(tmp_path):
    """A hand-made stream: B (no-change) is right on every example, A (a constant) wrong on
    every other; labels come in reverse order of arrival. The sequence counts the labels in the
    order they come, and its sum is exact."""
    n = 400
    rows = [{"id": i, "a": 0.0} for i in range(1, n + 1)]
    rows += [{"id": i, "target": "u"} for i in range(n, 0, -1)]
    path = write_jsonl(tmp_path / "rev.jsonl", rows)
    results = foldstream.evaluate({"path": path, "id_field": "id"},
                                  {"a": {"model": "river.dummy.NoChangeClassifier"},
                                   "b": {"model": "river.dummy.PriorClassifier"}},
                                  mode="single", report_every=100, delay={},
                                  verdicts={"v_min": 1})
    seq = [r["sequential"] for r in results.records
           if r["type"] == "comparison" and r["measure"] == "accuracy"]
    # no prediction exists at arrival (nothing labelled yet): both wrong on every example
    assert [(s["n"], s["sum"]) for s in seq] == [(100, 0.0), (200, 0.0), (300, 0.0), (400, 0.0)]
    positions = [r["position"] for r in measures(results, "a")]
    assert positions == [n, n, n, n]


def test_the_worked_example_of_the_method(tmp_path):
    """docs/method.md §13, worked example: labels a b b a, delay 2, a no-change learner."""
    path = write_jsonl(tmp_path / "w.jsonl", [{"f": 0.0, "target": y} for y in "abba"])
    results = foldstream.evaluate(path, {"nc": dummy.NoChangeClassifier()}, mode="single",
                                  window="cumulative", delay={"examples": 2})
    last = measures(results)[-1]
    values = {m: last["values"][m]["mean"] for m in ("accuracy", "kappa_per")}
    assert values == {"accuracy": 0.25, "kappa_per": 0.0}
    assert (last["position"], last["labelled"], last["delay_mean"], last["delay_max"]) == \
        (4, 4, 1.25, 2)


def test_delayed_records_follow_the_schema(tmp_path):
    import jsonschema

    from foldstream.job.tools.schema import load_schema

    rows = [{"id": i, "a": float(i % 3)} for i in range(1, 30)]
    rows += [{"id": i, "target": "uv"[i % 2]} for i in range(1, 25)]
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    results = foldstream.evaluate({"path": path, "id_field": "id"},
                                  {"a": {"model": "river.naive_bayes.GaussianNB"},
                                   "b": {"model": "river.dummy.NoChangeClassifier"}},
                                  folds=3, report_every=10, delay={})
    validator = jsonschema.Draft202012Validator(load_schema())
    kinds = set()
    for record in results.records + results.rejected:
        validator.validate(record)
        kinds.add(record["type"])
    assert {"measures", "comparison", "summary"} <= kinds
    assert measures(results)[-1]["pending"] == 5


def test_the_delayed_stages_pickle_mid_stream(tmp_path, stage_driver):
    """Every stage's state of a delayed stream (pending features at the fan-out, held
    predictions at the evaluators) survives a pickle round trip mid-stream, as keyed state in a
    checkpoint must: the records after it are those of the run without it."""
    import pickle

    from foldstream.job.api import make_config
    from foldstream.job.engines.inprocess import StreamStages
    from foldstream.job.plans import make_plans, with_delay
    from foldstream.operators.records.base import Example

    rows = [Example("s", {"a": (i * 7 % 11) / 11.0}, "uvw"[i * i % 3]) for i in range(1, 601)]
    config, _ = make_config([({"a": 1.0}, "u")], {"nb": naive_bayes.GaussianNB(),
                                                   "nc": dummy.NoChangeClassifier()},
                            folds=3, stream="s", report_every=100, delay={"examples": 37})
    plans = make_plans(config)

    def run(cut: int | None) -> list[str]:
        stages, out = StreamStages(plans, "s"), []
        for n, item in enumerate(with_delay(config, rows)):
            if n == cut:
                stages = pickle.loads(pickle.dumps(stages))
                assert stages.head.delay.pending > 0
            out += stage_driver.add(stages, item) or []
        out += stages.finish()
        return [dumps(r) for r in out]

    whole = run(None)
    assert len(whole) > 10 and run(301) == whole


@pytest.mark.parametrize("overrides,message", [
    (["evaluation.delay={examples: 5, field: lag}"], "evaluation.delay: examples and field"),
    (["evaluation.delay={examples: -1}"], "evaluation.delay.examples"),
    (["evaluation.delay={max_pending: 0}"], "evaluation.delay.max_pending"),
    (["evaluation.delay={typo: 1}"], "evaluation.delay.typo"),
    (["source={kind: kafka, topic: t}", "engine.kind=flink", "evaluation.delay={}"],
     "source.id_field: delayed labels"),
    (["source={kind: kafka, topic: t, id_field: id, labels_topic: l}", "engine.kind=flink"],
     "source.labels_topic: labels on a topic of their own need evaluation.delay"),
    (["evaluation.delay={field: target}"], "evaluation.delay.field: 'target' is the label"),
])
def test_bad_delay_configurations_fail_at_start_naming_the_key(overrides, message):
    from foldstream.job.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("'", ".")):
        load_config(None, overrides)


def test_delay_zero_without_an_id_is_not_delayed_and_with_one_it_is():
    from foldstream.job.config import load_config

    assert not load_config(None, ["evaluation.delay={examples: 0}"]).delayed
    assert load_config(None, ["evaluation.delay={examples: 3}"]).delayed
    assert not load_config(None, []).delayed

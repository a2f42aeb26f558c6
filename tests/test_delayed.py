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
import pickle
from collections import Counter
from pathlib import Path

import pytest
from river import dummy, naive_bayes

import foldstream
from foldstream.operators.stages.delay import DoneKeys, LabelOnly
from foldstream.operators.records.outputs import SummaryRecord
from foldstream.operators.records.base import Example, dumps

TIMING = SummaryRecord.TIMING_FIELDS  # the one list of the fields that vary from run to run


def write(path: Path, text: str | bytes, gz: bool = False) -> Path:
    data = text.encode("utf-8") if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def rows_jsonl(rows: list) -> str:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)


def by_type(results, kind: str) -> list[dict]:
    return [r for r in results.records if r["type"] == kind]


def stripped(records: list[dict]) -> list[str]:
    return [dumps({k: v for k, v in r.items() if k not in TIMING}) for r in records]


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


# Ids of delayed labels: an id is the text of a row's id field, an integer key only when it is
# that integer's own decimal form.

def _delayed(tmp_path, rows):
    import json

    import foldstream
    from river import dummy

    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return foldstream.evaluate({"path": str(path), "id_field": "id", "label": "y",
                                "stream": "s"}, {"nc": dummy.NoChangeClassifier()},
                               mode="single", report_every=1000, delay={})


@pytest.mark.parametrize("ids", [("007", "7"), ("1_000", "1000"), ("+5", "5"),
                                 ("\u0661\u0662", "12")])
def test_text_ids_that_spell_a_number_otherwise_are_other_ids(tmp_path, ids):
    """``"007"`` and ``"7"`` are two ids: a label of one never joins the other's example (the
    text of an id is an integer key only when it is the integer's own decimal form)."""
    first, second = ids
    results = _delayed(tmp_path, [{"id": first, "a": 1.0}, {"id": second, "a": 2.0},
                                  {"id": second, "y": "v"}, {"id": first, "y": "u"}])
    assert results.rejected == []
    last = [r for r in results.records if r["type"] == "measures"][-1]
    assert (last["position"], last["labelled"], last["pending"]) == (2, 2, 0)


def test_an_integer_id_and_its_decimal_text_are_one_id(tmp_path):
    """Kafka keys are text: ``1`` and ``"1"`` stay one id."""
    results = _delayed(tmp_path, [{"id": 1, "a": 1.0}, {"id": "1", "y": "u"}])
    assert results.rejected == []
    last = [r for r in results.records if r["type"] == "measures"][-1]
    assert (last["labelled"], last["pending"]) == (1, 0)


def test_a_text_id_of_5000_digits_is_a_text_id(tmp_path):
    """Longer than Python converts to an integer: kept as text, never an error."""
    key = "9" * 5000
    results = _delayed(tmp_path, [{"id": key, "a": 1.0}, {"id": key, "y": "u"}])
    assert results.rejected == []


# ------------------------------------------------------------------------------ delayed labels
def delayed(tmp_path: Path, rows: list, name: str = "d.jsonl", **options):
    path = write(tmp_path / name, rows_jsonl(rows))
    return foldstream.evaluate({"path": str(path), "id_field": "id", "label": "y",
                                "stream": "s"},
                               {"nc": dummy.NoChangeClassifier()}, mode="single",
                               report_every=1000, delay=options)


def arrivals(n: int) -> list[dict]:
    return [{"id": i, "a": float(i % 3)} for i in range(1, n + 1)]


def test_a_label_row_for_an_id_never_seen_is_rejected_and_counts_nowhere(tmp_path):
    labels = [{"id": i, "y": "u" if i % 3 else "v"} for i in range(1, 11)]
    clean = delayed(tmp_path, arrivals(10) + labels, "clean.jsonl")
    ghost = {"id": 99, "y": "ghost"}
    dirty = delayed(tmp_path, arrivals(10) + labels[:5] + [ghost] + labels[5:])
    assert [(r["reason"], r["location"], r["position"]) for r in dirty.rejected] == [
        ("label of key 99: unknown (no pending example has this key)", "d.jsonl:16", 10)]
    # the measures are those of the run without it: it is no example, its class no class
    assert stripped(by_type(dirty, "measures")) == stripped(by_type(clean, "measures"))
    last = by_type(dirty, "measures")[-1]
    assert (last["position"], last["labelled"], last["pending"]) == (10, 10, 0)
    summary = by_type(dirty, "summary")[0]
    assert (summary["examples_read"], summary["examples_rejected"]) == (21, 1)


def test_extra_fields_of_a_label_row_are_ignored(tmp_path):
    labels = [{"id": i, "y": "u", "note": f"checked by {i}", "when": "2026-01-01"}
              for i in range(1, 6)]
    results = delayed(tmp_path, arrivals(5) + labels)
    assert results.rejected == []
    last = by_type(results, "measures")[-1]
    assert (last["labelled"], last["pending"]) == (5, 0)


def test_a_label_row_with_extra_fields_for_an_unknown_id_says_both(tmp_path):
    results = delayed(tmp_path, arrivals(2) + [{"id": 7, "y": "u", "note": "late"}])
    (rejected,) = results.rejected
    assert rejected["reason"] == (
        "label of key 7: unknown (no pending example has this key); as an example: field "
        "'note': expected a number, got 'late' (list it in `nominal` to read it as a category)")


def test_labels_beyond_max_pending_keys_get_their_true_reason(tmp_path):
    """max_pending 2: the label of key 1 comes after 40 more examples expired and 40 more were
    labelled; it is still `expired`, and a second label of key 3 still `already labelled`."""
    rows = arrivals(3) + [{"id": 3, "y": "u"}]
    rows += [{"id": i, "a": 1.0} for i in range(4, 84)]  # key 1, 2 and 40 more expire ...
    rows += [{"id": i, "y": "u"} for i in range(44, 84)]  # ... and 40 are labelled
    rows += [{"id": 1, "y": "u"}, {"id": 3, "y": "u"}, {"id": 1000, "y": "u"}]
    results = delayed(tmp_path, rows, max_pending=40)
    assert [r["reason"] for r in results.rejected] == [
        "label of key 1: expired (dropped unscored beyond evaluation.delay.max_pending)",
        "label of key 3: already labelled",
        "label of key 1000: unknown (no pending example has this key)"]
    last = by_type(results, "measures")[-1]
    assert (last["position"], last["labelled"], last["pending"], last["expired"]) == \
        (83, 41, 0, 42)


def test_done_keys_are_exact_for_many_keys_and_cost_9_bytes_each():
    done = DoneKeys()
    n = 60_000
    for i in range(n):
        done.set(i, DoneKeys.EXPIRED if i % 3 else DoneKeys.LABELLED)
        done.set(f"k{i}", DoneKeys.LABELLED)
    for i in range(0, n, 3):
        done.set(i + 1, DoneKeys.LABELLED)  # a key done again: its new state
    again = pickle.loads(pickle.dumps(done))
    for keys in (done, again):
        assert len(keys) == 2 * n
        assert [keys.get(i) for i in range(6)] == [1, 1, 2, 1, 1, 2]
        assert keys.get("k17") == DoneKeys.LABELLED and keys.get("17") == 0
        assert keys.get(n) == 0 and keys.get(-1) == 0 and keys.get("k") == 0
    assert done.nbytes / len(done) <= 9.0
    assert all(done.get(i) for i in range(n)) and all(done.get(f"k{i}") for i in range(n))


def test_a_checkpoint_from_before_done_keys_restores_its_keys():
    """A delay fan-out pickled by the previous version (a checkpoint of a run to resume) kept
    its done keys as ``{why: {key: None}}``; restored, they are :class:`DoneKeys`."""
    from collections import OrderedDict

    from foldstream.operators.stages.delay import BadLabel, DelayFanOut
    from foldstream.operators.stages.fanout import FanOutPlan

    fan_out = DelayFanOut("s", FanOutPlan("single"), batch_size=10, max_pending=2)
    fan_out.add(Example("s", {"a": 1.0}, None, 5))
    fan_out.__dict__["_done"] = {"labelled": OrderedDict({3: None}),
                                 "expired": OrderedDict({1: None})}
    restored = pickle.loads(pickle.dumps(fan_out))
    reasons = []
    for key in (1, 3, 4):
        with pytest.raises(BadLabel) as bad:
            restored.add(LabelOnly("s", key, "u"))
        reasons.append(str(bad.value).split(": ", 1)[1])
    assert reasons == ["expired (dropped unscored beyond evaluation.delay.max_pending)",
                       "already labelled", "unknown (no pending example has this key)"]

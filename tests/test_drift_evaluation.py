"""Change detectors scored against known changes (docs/method.md §19), and the class-ratio
schedule whose changes are known (``source.class_ratio``)."""

from __future__ import annotations

import itertools
import statistics
from collections import Counter

import pytest

from foldstream.job.config import load_config
from foldstream.job.plans import make_plans, open_source
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.operators.stats.consensus import Consensus
from foldstream.operators.stats.drifteval import periodic_alarms, random_alarms, score

SEA = "river.datasets.synth.SEA"
CHANGES = [4000, 8000]
WINDOW = 1000
# SEA's concept 0, then 3 from 4,000 on, then 0 again from 8,000 on (sharp changes)
SEA_DRIFTS = ("source={kind: generator, model: river.datasets.synth.ConceptDriftStream, "
              "limit: 12000, seed: 3, params: {"
              f"stream: {{model: {SEA}, params: {{variant: 0}}}}, position: 4000, width: 100, "
              "drift_stream: {model: river.datasets.synth.ConceptDriftStream, params: {"
              f"stream: {{model: {SEA}, params: {{variant: 3}}}}, "
              f"drift_stream: {{model: {SEA}, params: {{variant: 0}}}}, "
              "position: 4000, width: 100}}}}")


def test_scores_equal_a_hand_computed_example():
    """Changes at 5,000 and 10,000 over 15,000 examples, acceptance window 1,000, two folds.

    fold 0 alarms at 300, 5,200, 5,900, 10,400, 14,000: it detects 5,000 (delay 200; 5,900 is a
    second alarm of it, so false) and 10,000 (delay 400); 300 and 14,000 are false alarms.
    fold 1 alarms at 5,600, 11,200: it detects 5,000 (delay 600); 11,200 is 1,200 after 10,000,
    too late: a false alarm, and 10,000 is missed by fold 1.
    So 7 alarms, 3 of 4 (fold, change) detected, 4 false alarms over 2 x 15,000 examples;
    precision 3/7, recall 3/4, F1 = 2 (3/7)(3/4) / (3/7 + 3/4) = 6/11; delays 200, 400, 600.
    """
    s = score([[300, 5200, 5900, 10400, 14000], [5600, 11200]], [5000, 10000], 15000, 1000)
    assert (s.alarms, s.detected, s.missed, s.false_alarms) == (7, 3, 1, 4)
    assert s.false_alarms_per_10k == pytest.approx(4 / 30000 * 10000)
    assert (s.precision, s.recall) == (3 / 7, 3 / 4)
    assert s.f1 == pytest.approx(6 / 11)
    assert (s.delay_mean, s.delay_median) == (400.0, 400.0)
    assert [(c.position, c.detections, c.detected, c.delay) for c in s.per_change] == \
        [(5000, 3, 2, 400.0), (10000, 1, 1, 400.0)]


def test_a_change_accepts_alarms_up_to_the_next_change_only():
    s = score([[5500]], [5000, 5300], 10000, 1000)  # 5,500 belongs to 5,300, not 5,000
    assert [(c.position, c.delay) for c in s.per_change] == [(5000, None), (5300, 200.0)]
    assert score([[100]], [], 1000, 10).precision == 0.0  # no changes: every alarm is false
    assert score([[]], [500], 1000, 10).precision is None  # no alarms: precision undefined
    assert [c.position for c in score([[900]], [500, 2000], 1000).per_change] == [500]  # past the end


def test_baselines_have_the_detectors_alarm_count_and_are_seeded():
    assert periodic_alarms(3, 15000) == [2500, 7500, 12500]
    drawn = random_alarms(20, 15000, 1, 0, "nb", "adwin", "alarms")
    assert len(drawn) == 20 and drawn == sorted(set(drawn)) and 1 <= drawn[0] <= drawn[-1] <= 15000
    assert drawn == random_alarms(20, 15000, 1, 0, "nb", "adwin", "alarms")
    assert drawn != random_alarms(20, 15000, 2, 0, "nb", "adwin", "alarms")


@pytest.fixture(scope="module")
def sea_run():
    cfg = load_config(None, [
        SEA_DRIFTS, "learners=[{name: nb, model: river.naive_bayes.GaussianNB}]",
        "evaluation.folds=4", "evaluation.report_every=2000",
        "evaluation.alarms.consensus={window: 1000}",
        f"evaluation.alarms.scoring.window={WINDOW}"])
    assert cfg.known_changes() == CHANGES  # filled in from the ConceptDriftStreams
    records, _ = evaluate_to_list(make_plans(cfg), open_source(cfg))
    return records


def by_hand(sequences: list[list[int]], length: int) -> dict:
    """The scores of the module docstring, computed the plain way."""
    detected, delays, alarms = 0, [], 0
    for alarms_of_fold in sequences:
        alarms += len(alarms_of_fold)
        for i, c in enumerate(CHANGES):
            end = min(c + WINDOW, CHANGES[i + 1]) if i + 1 < len(CHANGES) else c + WINDOW
            accepted = [p for p in alarms_of_fold if c <= p < end]
            if accepted:
                detected += 1
                delays.append(accepted[0] - c)
    return {"alarms": alarms, "detected": detected,
            "missed": len(sequences) * len(CHANGES) - detected,
            "false_alarms": alarms - detected,
            "delay_mean": statistics.fmean(delays) if delays else None,
            "delay_median": float(statistics.median(delays)) if delays else None}


def test_sea_with_known_drifts_reports_the_scores_of_its_alarms_and_drifts(sea_run):
    evaluations = [r for r in sea_run if r["type"] == "drift_evaluation"]
    assert [(r["detector"], r["of"]) for r in evaluations] == [
        ("adwin", "alarms"), ("adwin", "drifts"), ("page_hinkley", "alarms"),
        ("page_hinkley", "drifts")]
    assert sea_run.index(evaluations[0]) > max(i for i, r in enumerate(sea_run)
                                               if r["type"] == "measures")
    for record in evaluations:
        assert record["position"] == 12000 and record["changes"] == CHANGES
        if record["of"] == "alarms":
            sequences = [[a["position"] for a in sea_run if a["type"] == "alarm"
                          and a["detector"] == record["detector"] and a["fold"] == f]
                         for f in range(4)]
        else:
            sequences = [[d["position"] for d in sea_run if d["type"] == "drift"
                          and d["detector"] == record["detector"]]]
        expected = by_hand(sequences, 12000)
        assert {k: record["scores"][k] for k in expected} == expected
        for baseline in ("periodic", "random"):  # beside the detector's, with its alarm count
            assert record[baseline]["alarms"] == record["scores"]["alarms"]
            assert "f1" in record[baseline]
    adwin = evaluations[1]["scores"]
    assert adwin["detected"] == 2 and adwin["f1"] > 0.5  # the real changes are found


def test_a_detector_firing_every_100_examples_does_not_beat_adwin_on_consensus_drifts(sea_run):
    adwin = next(r for r in sea_run if r["type"] == "drift_evaluation"
                 and r["detector"] == "adwin" and r["of"] == "drifts")
    consensus = Consensus(k=4, window=1000)
    drifts = [p for p in range(100, 12001, 100) for f in range(4)
              if consensus.alarm(p, "nb", f, "every100") is not None]
    every100 = score([drifts], CHANGES, 12000, WINDOW)
    assert every100.recall == 1.0  # it finds every change ...
    assert every100.f1 < adwin["scores"]["f1"]  # ... and still scores below ADWIN


def test_no_known_changes_no_scoring():
    """The embedded default (Electricity) declares no changes: no drift_evaluation records."""
    assert make_plans(load_config(None, [])).aggregation.drift_scoring is None
    cfg = load_config(None, ["source.drifts=[100, 200]"])
    assert make_plans(cfg).aggregation.drift_scoring.changes == (100, 200)


# ------------------------------------------------------------------- the class-ratio schedule
def labels_of(cfg) -> list:
    return [item.y for item in open_source(cfg)]


def test_the_class_ratio_schedule_draws_its_ratios_and_declares_its_changes():
    ratio = ("source.class_ratio={classes: [0, 1], ratios: [[1, 1], [1, 9], [4, 1]], "
             "positions: [3001, 6001]}")
    cfg = load_config(None, [f"source={{kind: generator, model: {SEA}, limit: 9000}}", ratio])
    assert cfg.known_changes() == [3001, 6001]
    y = labels_of(cfg)
    assert len(y) == 9000
    shares = [Counter(y[a:b])[1] / (b - a) for a, b in ((0, 3000), (3000, 6000), (6000, 9000))]
    assert shares[0] == pytest.approx(0.5, abs=0.03)
    assert shares[1] == pytest.approx(0.9, abs=0.02)
    assert shares[2] == pytest.approx(0.2, abs=0.02)
    assert labels_of(cfg) == y  # seeded: the same draws every run
    other = load_config(None, [f"source={{kind: generator, model: {SEA}, limit: 9000}}",
                               ratio.replace("}", ", seed: 5}")])
    assert labels_of(other) != y


@pytest.mark.parametrize("value,says", [
    ("{classes: [0, 1], ratios: [[1, 1], [1, 9]]}", "positions"),
    ("{classes: [0, 1], ratios: [[1, 1, 1]]}", "ratios[0]"),
    ("{classes: [0, 1], ratios: [[0, 0]]}", "ratios[0]"),
    ("{classes: [0, 1], ratios: [[1, 1], [1, 2], [1, 3]], positions: [50, 20]}", "increase"),
])
def test_a_bad_class_ratio_fails_at_start_naming_the_key(value, says):
    from foldstream.job.config import ConfigError

    with pytest.raises(ConfigError) as error:
        load_config(None, [f"source={{kind: generator, model: {SEA}, limit: 10}}",
                           f"source.class_ratio={value}"])
    assert "source.generator.class_ratio" in str(error.value) or "class_ratio" in str(error.value)
    assert says in str(error.value)


def test_a_class_the_generator_never_yields_ends_the_stream_with_a_rejected_record():
    cfg = load_config(None, [f"source={{kind: generator, model: {SEA}, limit: 100}}",
                             "source.class_ratio={classes: [0, 7], ratios: [[1, 1]], "
                             "max_draws: 50}"])
    items = list(itertools.islice(open_source(cfg), 200))
    assert "no example of class 7" in items[-1].reason


def test_the_scores_reach_the_api_the_tables_and_the_report(sea_run, tmp_path):
    from foldstream.job.results import Results
    from foldstream.job.tools.report import gather, render_html

    results = Results(sea_run)
    frame = results.drift_evaluation()
    assert list(frame[["detector", "of"]].itertuples(index=False, name=None)) == [
        ("adwin", "alarms"), ("adwin", "drifts"), ("page_hinkley", "alarms"),
        ("page_hinkley", "drifts")]
    record = next(r for r in sea_run if r["type"] == "drift_evaluation")
    assert frame["f1"].iloc[0] == record["scores"]["f1"]
    assert frame["periodic_f1"].iloc[0] == record["periodic"]["f1"]
    assert frame["random_alarms"].iloc[0] == record["scores"]["alarms"]
    text = str(results.summary())
    assert "periodic" in text and "random" in text and "known changes [4000, 8000]" in text
    page = render_html(gather(sea_run))
    assert "Detectors against the known changes" in page and "F1 periodic" in page
    assert Results([r for r in sea_run if r["type"] != "drift_evaluation"]) \
        .drift_evaluation().empty

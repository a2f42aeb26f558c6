"""``sink.predictions``: every example's prediction per learner and fold, in a Parquet file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from river import naive_bayes

from foldstream.job.config import ConfigError, load_config
from foldstream.job.plans import make_plans, open_source
from foldstream.job.results import Results
from foldstream.job.runner import run_configuration

ELEC = Path(__file__).resolve().parents[2] / "shared" / "data" / "elec.csv.gz"
if not ELEC.exists():  # a checkout without ../shared: use the packaged copy
    ELEC = Path(__file__).resolve().parents[1] / "connectors" / "data" / "elec.csv.gz"

TWO_LEARNERS = ("learners=[{name: ht, model: river.tree.HoeffdingTreeClassifier}, "
                "{name: nb, model: river.naive_bayes.GaussianNB}]")


def run_to(tmp_path: Path, name: str, *overrides: str) -> pd.DataFrame:
    cfg = load_config(None, [f"source.path={ELEC}", TWO_LEARNERS,
                             f"sink.path={tmp_path / name}.jsonl",
                             f"sink.predictions={tmp_path / name}.parquet", *overrides])
    outcome = run_configuration(cfg, keep=True)
    assert all(r["type"] != "predictions" for r in outcome.records)  # not in the records
    return Results(outcome.records, config=cfg).predictions()


def test_single_mode_rows_are_the_learners_own_predictions_and_scores(tmp_path):
    table = run_to(tmp_path, "single", "source.limit=700", "evaluation.mode=single",
                   "evaluation.scores=[auc]", "evaluation.report_every=300")
    assert list(table.columns) == ["stream", "position", "id", "fold", "label", "pred.ht",
                                   "scores.ht", "pred.nb", "scores.nb"]
    assert table.position.tolist() == list(range(1, 701)) and set(table.fold) == {0}
    cfg = load_config(None, [f"source.path={ELEC}", "source.limit=700"])
    model, classes = naive_bayes.GaussianNB(), []
    for i, example in enumerate(open_source(cfg)):
        if example.y not in classes:
            classes.append(example.y)
        row = table.iloc[i]
        assert row.id == str(i + 1) and row.label == str(example.y)
        proba = model.predict_proba_one(example.x)
        predicted = model.predict_one(example.x)
        assert row["pred.nb"] == (None if predicted is None else str(predicted))
        assert list(row["scores.nb"]) == [proba.get(c, 0.0) for c in classes]
        model.learn_one(example.x, example.y)


def test_one_row_per_example_and_fold_whatever_the_batches(tmp_path):
    base = ["source.limit=600", "evaluation.mode=bootstrap", "evaluation.folds=3",
            "evaluation.report_every=250"]
    table = run_to(tmp_path, "a", *base, "evaluation.scores=[auc]", "engine.batch_size=500")
    assert len(table) == 600 * 3
    assert table[["position", "fold"]].values.tolist() == \
        [[p, f] for p in range(1, 601) for f in range(3)]
    # each example's scores cover the classes seen up to it, whatever its batch's list holds
    assert table["scores.nb"].map(len).tolist()[:3] == [1, 1, 1]
    pd.testing.assert_frame_equal(table, run_to(tmp_path, "b", *base, "evaluation.scores=[auc]",
                                                "engine.batch_size=7"))
    # a fold that trained on an example in holdout mode made no prediction for it
    holdout = run_to(tmp_path, "h", *base, "evaluation.prequential=false")
    assert holdout["pred.nb"].isna().any() and holdout["pred.nb"].notna().any()
    assert "scores.nb" not in holdout.columns  # no score-based measure: no scores kept


def test_off_by_default_the_folds_carry_no_ids(tmp_path):
    cfg = load_config(None, [f"source.path={ELEC}", "source.limit=10"])
    assert cfg.sink.predictions is None
    plans = make_plans(cfg)
    assert not plans.fanout.keys and not plans.evaluation.predictions
    with pytest.raises(ValueError, match="no predictions file"):
        Results([], config=cfg).predictions()


def test_refused_with_delayed_labels_and_on_kafka(tmp_path):
    with pytest.raises(ConfigError, match=r"sink\.predictions: not kept with delayed labels"):
        load_config(None, [f"source.path={ELEC}", f"sink.predictions={tmp_path}/p.parquet",
                           "evaluation.delay={examples: 5}"])
    with pytest.raises(ConfigError, match=r"sink\.kafka\.predictions: Extra inputs"):
        load_config(None, [f"source.path={ELEC}", "engine.kind=flink",
                           "sink={kind: kafka, predictions: p.parquet}"])


@pytest.mark.flink
def test_flink_writes_the_file_of_the_in_process_engine(tmp_path):
    base = ["source.limit=1500", "evaluation.mode=cv", "evaluation.folds=3",
            "evaluation.window={kind: sliding, size: 500}", "evaluation.report_every=500",
            "evaluation.scores=[auc]", "engine.batch_size=200"]
    reference = run_to(tmp_path, "inprocess", *base)
    flink = run_to(tmp_path, "flink", *base, "engine.kind=flink", "engine.parallelism=2")
    assert len(reference) == 1500 * 3
    pd.testing.assert_frame_equal(flink, reference)

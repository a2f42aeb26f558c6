"""``foldstream plot``: figures from the records of a real small run, checked as files and as
matplotlib objects (one mean curve per learner, a CD diagram only with three learners or more)."""

from __future__ import annotations

import dataclasses

import json

import pytest
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.lines import Line2D

from foldstream.job import cli
from foldstream.job.config import load_config
from foldstream.job.engines.inprocess import evaluate_to_list
from foldstream.job.plans import make_plans, open_source
from foldstream.job.tools.plot import (
    cd_figure,
    cliques,
    group_by_stream,
    measure_figure,
    plot_records,
    pvalues_figure,
    stream_figures,
    window_size_figure,
)

THREE = ("learners=[{name: ht, model: river.tree.HoeffdingTreeClassifier}, "
         "{name: nb, model: river.naive_bayes.GaussianNB}, "
         "{name: nochange, model: river.dummy.NoChangeClassifier}]")
TWO = ("learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
       "{name: nochange, model: river.dummy.NoChangeClassifier}]")
PNG = b"\x89PNG\r\n\x1a\n"


def run(*overrides: str) -> list[dict]:
    config = load_config(None, ["source.limit=600", "evaluation.folds=4",
                                "evaluation.report_every=100", *overrides])
    records, _ = evaluate_to_list(make_plans(config), open_source(config))
    return records


@pytest.fixture(scope="module")
def three() -> list[dict]:
    return run(THREE, "evaluation.alarms.page_hinkley.threshold=5")


@pytest.fixture(scope="module")
def two() -> list[dict]:
    return run(TWO, "evaluation.window={kind: sliding, size: 200}")


def lines(ax) -> list[Line2D]:
    return [line for line in ax.lines if isinstance(line, Line2D)]


def test_measure_figure_has_one_curve_and_one_band_per_learner_and_the_alarms(three):
    data = group_by_stream(three)["elec"]
    figure = measure_figure(data, "kappa_m")
    ax, strip = figure.axes
    assert [line.get_label() for line in lines(ax)] == ["ht", "nb", "nochange"]
    assert sum(isinstance(c, PolyCollection) for c in ax.collections) == 3  # the fold bands
    # the mean curve is the mean over folds of every measures record, at its position
    ht = [r for r in three if r["type"] == "measures" and r["learner"] == "ht"]
    x, y = lines(ax)[0].get_data()
    assert list(x) == [r["position"] for r in ht] == [100, 200, 300, 400, 500, 600]
    assert list(y) == pytest.approx([r["values"]["kappa_m"]["mean"] for r in ht], nan_ok=True)
    title = ax.get_title()
    assert "kappa_m" in title and "elec" in title and "adwin (delta=0.002)" in title
    assert "min-max" in ax.get_legend().get_title().get_text()
    # drifts lead: ticks in the strip below, as many as there are drift records
    drifts = [r for r in three if r["type"] == "drift"]
    alarms = [r for r in three if r["type"] == "alarm"]
    assert drifts and alarms
    ticks = sum(len(c.get_offsets()) for c in strip.collections if isinstance(c, PathCollection))
    assert ticks == len(drifts) and strip.get_ylabel() == f"drifts\n({len(drifts)})"
    assert not lines(strip)
    # a file without drift records (older, or consensus off) shows every fold's alarms
    _, strip = measure_figure(group_by_stream([r for r in three if r["type"] != "drift"])["elec"],
                              "kappa_m").axes
    ticks = sum(len(c.get_offsets()) for c in strip.collections if isinstance(c, PathCollection))
    assert ticks == len(alarms)


def test_window_size_figure_shows_the_mean_over_folds(two):
    data = group_by_stream(two)["elec"]
    ax = window_size_figure(data).axes[0]
    assert [line.get_label() for line in lines(ax)] == ["nb", "nochange"]
    nb = [r for r in two if r["type"] == "measures" and r["learner"] == "nb"]
    _, y = lines(ax)[0].get_data()
    assert list(y) == pytest.approx([sum(r["window_size"]) / 4 for r in nb])
    assert y[-1] == 200  # a sliding window of 200 is full at the end
    assert "sliding (size=200)" in ax.get_title()


def test_pvalues_figure_draws_both_tests_per_pair_on_a_log_scale_with_alpha(three):
    data = group_by_stream(three)["elec"]
    figure = pvalues_figure(data)
    assert len(figure.axes) == 2  # accuracy, kappa_m
    for ax in figure.axes:
        assert ax.get_yscale() == "log"
        labels = [line.get_label() for line in lines(ax)]
        assert len(labels) == 3 * 2 + 1  # 3 pairs x (Wilcoxon, sign) + the alpha line
        assert "α = 0.05" in labels and "ht vs nb: Wilcoxon" in labels
    alpha_line = next(l for l in lines(figure.axes[0]) if l.get_label() == "α = 0.05")
    assert set(alpha_line.get_ydata()) == {0.05}


def test_cd_diagram_only_with_three_learners_or_more(three, two):
    data = group_by_stream(three)["elec"]
    figures = stream_figures(data, ["accuracy", "kappa_m"])
    assert set(figures) == {"elec-accuracy", "elec-kappa_m", "elec-window_size", "elec-pvalues",
                            "elec-verdicts", "elec-cd-accuracy", "elec-cd-kappa_m"}
    ranking = data.rankings["accuracy"]
    texts = [t.get_text() for t in figures["elec-cd-accuracy"].axes[0].texts]
    for name, rank in zip(ranking.learners, ranking.average_ranks):
        assert f"{name} ({rank:.2f})" in texts
    assert f"CD = {ranking.critical_difference:.3f}" in texts
    assert "elec" in figures["elec-cd-accuracy"].axes[0].get_title()

    two_figures = stream_figures(group_by_stream(two)["elec"], ["accuracy"])
    assert not any("-cd-" in name for name in two_figures)
    assert cd_figure(dataclasses.replace(ranking, critical_difference=None)) is None


def test_cliques_join_learners_closer_than_the_critical_difference():
    assert cliques([1.0, 1.4, 1.8, 3.0], 1.0) == [(0, 2)]
    assert cliques([1.0, 1.4, 1.8, 2.3], 1.0) == [(0, 2), (1, 3)]  # overlapping groups
    assert cliques([1.0, 2.0, 3.0], 5.0) == [(0, 2)]
    assert cliques([1.0, 2.5, 4.0], 1.0) == []


@pytest.mark.slow  # figures in two formats
def test_plot_records_writes_png_and_svg_files(three, tmp_path):
    written = plot_records(three, tmp_path / "figs", measures=["accuracy", "kappa_m"],
                           formats=["png", "svg"])
    assert len(written) == 7 * 2  # with the live verdicts' figure
    for path in written:
        assert path.parent == tmp_path / "figs" and path.stat().st_size > 1000
        head = path.read_bytes()[:200]
        assert head.startswith(PNG) if path.suffix == ".png" else b"<svg" in head or b"<?xml" in head
    with pytest.raises(ValueError, match="unknown format"):
        plot_records(three, tmp_path, formats=["gif"])
    with pytest.raises(ValueError, match="unknown measure 'nosuch'; choose from accuracy, "):
        plot_records(three, tmp_path / "none", measures=["nosuch"])
    with pytest.raises(ValueError, match="no measures records"):
        plot_records([r for r in three if r["type"] == "alarm"], tmp_path)


@pytest.mark.slow  # figures
def test_plot_command_reads_a_file_and_prints_what_it_wrote(two, tmp_path, capsys):
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text("".join(json.dumps(r) + "\n" for r in two))
    out = tmp_path / "plots"
    assert cli.main(["plot", str(metrics), "--out", str(out), "--measures", "f1,recall[1]",
                     "--format", "png"]) == 0
    captured = capsys.readouterr()
    printed = captured.out.split()
    assert printed == [str(out / f"elec-{name}.png")
                       for name in ("f1", "recall_1_", "window_size", "pvalues", "verdicts")]
    assert all((out / name).exists() for name in printed)
    # a measure that no stream holds is a mistake, named with the choices, and nothing is drawn
    assert cli.main(["plot", str(metrics), "--out", str(tmp_path / "none"), "--measures",
                     "f1,nope"]) == 2
    captured = capsys.readouterr()
    assert "unknown measure 'nope'; choose from accuracy, " in captured.err and not captured.out
    assert not (tmp_path / "none").exists()
    assert cli.main(["plot", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err


def test_a_class_first_seen_mid_stream_leaves_a_gap_before_it(two):
    late = [json.loads(json.dumps(r)) for r in two]
    for record in late:
        if record["type"] == "measures" and record["position"] <= 200:
            del record["values"]["recall[1]"]  # as if class 1 had not been seen yet
    ax = measure_figure(group_by_stream(late)["elec"], "recall[1]").axes[0]
    _, y = lines(ax)[0].get_data()
    assert all(v != v for v in y[:2]) and all(v == v for v in y[2:])  # NaN, then values

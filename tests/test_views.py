"""The views of a run's records (job/tools/tables.py, watch.py, plot.py) show the live verdicts
(docs/method.md §12): the command line's final table and ``foldstream watch`` put the any-time
verdict with its interval next to the fold tests, watch shows the latest change of each pair's
verdict, and ``foldstream plot`` draws the interval along the stream with the zero line and the
first decided position.

One real run: SEA, 3,000 examples, a Hoeffding tree against the prior (a decided verdict comes
early), 5 folds, where the fold tests cannot reject (the smallest p-value with 5 folds is
0.0625) but the confidence sequence decides: the two questions answered differently.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json

import pytest
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from rich.console import Console

from foldstream.job.tools.compact import fmt
from foldstream.job import cli
from foldstream.job.tools.plot import (
    first_decided,
    group_by_stream,
    stream_figures,
    verdicts_figure,
)
from foldstream.job.tools.records import read_records
from foldstream.job.tools.tables import comparisons_table
from foldstream.job.tools.watch import WatchState, watch
from foldstream.operators.stats.sequential import A_BETTER, UNDECIDED
from foldstream.job.verdicts import ANY_TIME, FOLDS, fold_verdict, live_verdict_text

PNG = b"\x89PNG\r\n\x1a\n"
LAST = 3000


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[list[dict], str]:
    """The run's records and what ``foldstream run`` printed (its final tables)."""
    path = tmp_path_factory.mktemp("run") / "metrics.jsonl"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main([
            "run", "--no-progress",
            "--set", "source={kind: generator, model: river.datasets.synth.SEA, limit: 3000, "
                     "seed: 1}",
            "--set", "learners=[{name: ht, model: river.tree.HoeffdingTreeClassifier}, "
                     "{name: prior, model: river.dummy.PriorClassifier}]",
            "--set", f"sink.path={path}", "--set", "evaluation.folds=5",
            "--set", "evaluation.report_every=100",
            "--set", "evaluation.verdicts.enabled=true"])
    assert code == 0
    return read_records(path), out.getvalue()


@pytest.fixture(scope="module")
def records(run) -> list[dict]:
    return run[0]


def text_of(renderable) -> str:
    console = Console(file=io.StringIO(), width=600, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


def table_rows(text: str) -> dict[str, list[str]]:
    """The rows of the printed comparisons tables, by measure: each cell's text with its
    wrapped lines joined (a narrow terminal wraps the verdicts over several lines)."""
    rows: dict[str, list[str]] = {}
    current: list[list[str]] | None = None
    for line in text.splitlines():
        if not line.startswith("│"):
            current = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("│").split("│")]
        if cells[0]:
            current = [[cell] for cell in cells]
            rows[cells[0]] = current  # type: ignore[assignment]
        elif current is not None:
            for parts, cell in zip(current, cells):
                parts.append(cell)
    return {measure: [" ".join(p for p in parts if p) for parts in cells]
            for measure, cells in rows.items()}


def last_comparisons(records: list[dict]) -> list[dict]:
    return [r for r in records if r["type"] == "comparison" and r["position"] == LAST]


def live_text(record: dict, regime: bool = False) -> str:
    s = record["sequential"]["regime"] if regime else record["sequential"]
    return live_verdict_text(s, record["a"], record["b"])


def test_the_run_decides_early_while_the_fold_tests_cannot(records):
    verdicts = [r for r in records if r["type"] == "verdict"]
    assert verdicts and verdicts[0]["verdict"] == A_BETTER and verdicts[0]["position"] <= 500
    accuracy = [r for r in last_comparisons(records) if r["measure"] == "accuracy"]
    assert accuracy[0]["sequential"]["verdict"] == A_BETTER
    assert not accuracy[0]["wilcoxon"]["reject"] and not accuracy[0]["sign"]["reject"]


# ---------------------------------------------------------------------------------- table
def test_the_final_table_shows_the_live_verdict_with_its_interval_next_to_the_fold_tests(run):
    records, printed = run
    accuracy, kappa_m = sorted(last_comparisons(records), key=lambda r: r["measure"])
    assert "sequential" in accuracy and "sequential" not in kappa_m
    interval = f"[{accuracy['sequential']['lower']:.4f}, {accuracy['sequential']['upper']:.4f}]"
    # the command line's compact summary: the live interval beside the fold tests, in numbers
    live = accuracy["sequential"]
    assert "live Δerr" in printed and "Wilcoxon" in printed
    assert f"[{fmt(live['lower'], signed=True)}, {fmt(live['upper'], signed=True)}]" in printed
    # the tables in words (--explain): both questions on the row, side by side, in their words
    text = text_of(comparisons_table([accuracy, kappa_m]))
    assert "live verdict" in text
    rows = table_rows(text)
    assert rows["accuracy"][5:] == [fold_verdict(accuracy).text, live_text(accuracy),
                                    live_text(accuracy, regime=True)]
    assert "over the whole stream" in rows["accuracy"][6]
    assert "since position" in rows["accuracy"][7]
    assert FOLDS in rows["accuracy"][5] and ANY_TIME in rows["accuracy"][6]
    assert interval in rows["accuracy"][6]
    assert rows["kappa_m"][6] == ""  # no sequential object on kappa_m: an empty cell


def test_without_live_verdicts_the_column_is_left_out(records):
    plain = copy.deepcopy(last_comparisons(records))
    for record in plain:
        record.pop("sequential", None)
    text = text_of(comparisons_table(plain))
    assert "live verdict" not in text and ANY_TIME not in text
    assert fold_verdict(plain[0]).text in text


def test_an_undecided_live_verdict_is_shown_too(records):
    record = copy.deepcopy(next(r for r in last_comparisons(records)
                                if r["measure"] == "accuracy"))
    record["sequential"].update(verdict=UNDECIDED, lower=-0.01, upper=0.02)
    text = text_of(comparisons_table([record]))
    assert live_text(record) in text
    assert "undecided over the whole stream" in live_text(record)
    assert "(models, any time: error(ht) - error(prior) in [-0.0100, 0.0200])" in live_text(record)


# ---------------------------------------------------------------------------------- watch
def test_watch_renders_the_verdict_records_and_the_live_column(records):
    state = WatchState(["accuracy"])
    for record in records:
        state.update(record)
    assert state.unknown == 0  # verdict records are known
    view = state.streams["sea"]
    verdicts = [r for r in records if r["type"] == "verdict"]
    latest = {r.get("scope", "stream"): r for r in verdicts}
    assert view.verdicts == {("ht", "prior", scope): r for scope, r in latest.items()}
    assert set(latest) == {"stream", "regime"}
    text = text_of(state.render())
    for last in latest.values():  # one line per scope, saying what the verdict covers
        line = (f"live verdict as of position {last['position']:,}: "
                + live_verdict_text(last, "ht", "prior"))
        assert line in text
    accuracy = next(r for r in last_comparisons(records) if r["measure"] == "accuracy")
    assert live_text(accuracy) in text  # the comparisons table's live column


def test_watch_keeps_the_latest_change_per_pair():
    state = WatchState()
    base = {"schema": 1, "type": "verdict", "stream": "s", "a": "ht", "b": "nb",
            "measure": "accuracy", "n": 0, "alpha": 0.05}
    state.update({**base, "position": 300, "verdict": "a_better", "previous": "undecided",
                  "lower": -0.3, "upper": -0.02})
    state.update({**base, "position": 700, "verdict": "undecided", "previous": "a_better",
                  "lower": -0.1, "upper": 0.01})
    text = text_of(state.render())
    assert ("live verdict as of position 700: undecided over the whole stream (0 examples) "
            "(models, any time: error(ht) - error(nb) in [-0.1000, 0.0100])") in text
    assert "as of position 300" not in text


def test_watch_of_the_run_file_shows_the_verdict(run, tmp_path):
    records, _ = run
    path = _write(records, tmp_path / "m.jsonl")
    console = Console(file=io.StringIO(), width=240, color_system=None)
    state = watch(str(path), ["accuracy"], follow=False, console=console)
    assert state.unknown == 0 and state.streams["sea"].verdicts
    assert "live verdict as of position" in console.file.getvalue()


# ----------------------------------------------------------------------------------- plot
def test_the_verdicts_figure_draws_the_band_the_zero_line_and_the_first_decision(records):
    data = group_by_stream(records)["sea"]
    first = next(r for r in records if r["type"] == "verdict" and r["verdict"] != UNDECIDED)
    assert first_decided(data, "accuracy", "ht", "prior") == first["position"]
    figure = verdicts_figure(data)
    ax, = figure.axes  # one pair: one axes
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 1
    series = [r for r in records if r["type"] == "comparison" and r["measure"] == "accuracy"]
    vertices = bands[0].get_paths()[0].vertices
    assert vertices[:, 1].min() == pytest.approx(min(r["sequential"]["lower"] for r in series))
    assert vertices[:, 1].max() == pytest.approx(max(r["sequential"]["upper"] for r in series))
    lines = {line.get_label(): line for line in ax.lines if isinstance(line, Line2D)}
    assert len(lines) == 3
    estimate = lines["observed mean difference"]
    x, y = estimate.get_data()
    assert list(x) == [r["position"] for r in series]
    assert list(y) == pytest.approx([r["sequential"]["sum"] / r["sequential"]["n"]
                                     for r in series])
    assert list(lines["no difference"].get_ydata()) == [0, 0]
    mark = lines[f"first decided at position {first['position']:,}"]
    assert list(mark.get_xdata()) == [first["position"]] * 2
    assert live_text(series[-1]) in " ".join(ax.get_title(loc="left").split())  # wrapped


def test_the_first_decision_comes_from_the_comparisons_without_verdict_records(records):
    data = group_by_stream([r for r in records if r["type"] != "verdict"])["sea"]
    first = next(r["position"] for r in records
                 if r["type"] == "comparison" and r.get("sequential", {}).get("verdict")
                 not in (None, UNDECIDED))
    assert first_decided(data, "accuracy", "ht", "prior") == first
    assert first_decided(data, "kappa_m", "ht", "prior") is None


def test_plot_writes_the_verdicts_figure_only_with_live_verdicts(records, tmp_path):
    out = tmp_path / "plots"
    assert cli.main(["plot", str(_write(records, tmp_path / "m.jsonl")), "--out", str(out)]) == 0
    assert (out / "sea-verdicts.png").read_bytes().startswith(PNG)
    plain = [{k: v for k, v in r.items() if k != "sequential"} for r in records
             if r["type"] != "verdict"]
    data = group_by_stream(plain)["sea"]
    assert verdicts_figure(data) is None
    assert "sea-verdicts" not in stream_figures(data, ["accuracy"])


def _write(records: list[dict], path):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path

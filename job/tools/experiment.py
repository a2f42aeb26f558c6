"""``foldstream experiment``: how often each test is wrong, measured (docs/method.md §14).

foldstream calls its tests sound; Bifet et al. (KDD 2015, Table 2) earned that word for the
fold tests by measuring them, and this command lets anyone rerun that evidence. An experiment
repeats ordinary evaluations, each one a run of the same stages as ``foldstream run``
(:func:`foldstream.job.api.run`, in-process engine), and counts how often each test rejects
"A and B are equally good":

* **one run per (dataset, mode, replication)** holds every condition at once: learners ``A``
  and ``B`` (the design under test, two seeds: no change), ``B_noise_<p>`` (``B`` inside a
  seeded :class:`~foldstream.operators.noise.NoiseFilter`: a real change) and ``E1``/``E2``
  (two noise filters with independent draws around one deterministic learner: the exact null
  of the live verdict). The aggregator compares every pair; only the pairs of the conditions
  are read. The verdicts use ``correction: none``, so each pair is tested at ``alpha``
  (docs/method.md §12), like the fold tests.
* **tests**: McNemar (pooled over folds), the sign and Wilcoxon tests over folds (§6) on
  ``accuracy``, and the §12 verdict (a decided verdict is a rejection). Each is read at the
  final report and at every report ("any": what a reader who watches sees).
* **seeds**: replication ``r`` has the seed :func:`replication_seed` ``(seed, r)``: it seeds a
  generator's data, the evaluation (bootstrap weights, fold assignment: a file's only source of
  variation) and, through :func:`role_seed`, every learner. So a replication's result depends
  on nothing else, and the table does not depend on the number of worker processes.
* **resumable**: each finished replication is one JSON line of the results file, written at
  once; a restart skips the lines it finds (of the same configuration: a line carries the
  configuration's :func:`fingerprint`, which leaves out ``replications``, so more replications
  can be added later).
* **rates**: per (dataset, mode, condition, test, look) the fraction of replications that
  reject, with a 95% Wilson score interval (:func:`wilson`), and ``dataset: "all"`` pooling
  the datasets; a Markdown table in the layout of Bifet et al.'s Table 2 (rows tests, columns
  mode x condition), ``rates.json`` and a figure.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, \
    model_validator

from foldstream.job import exitcodes
from foldstream.job.config import Config, ConfigError, FileSource, GeneratorSource, LearnerConfig, \
    WindowConfig, apply_overrides, check_unique, format_errors, read_yaml
from foldstream.job.tools.plot import literal
from foldstream.job.tools.records import of_type
from foldstream.job.tools.tables import typed
from foldstream.operators.sequential import UNDECIDED
from foldstream.operators.weights import derive_seed

#: The tests measured, in the table's order.
TESTS = ("mcnemar", "sign", "wilcoxon", "verdict")
#: The looks: the final report, and any report (the final one included).
LOOKS = ("final", "any")
#: The validation modes an experiment compares.
MODES = ("bootstrap", "cv", "split")
#: The compared measure whose comparison records the fold tests and the verdict are read from.
MEASURE = "accuracy"
#: The confidence of the binomial intervals.
CONFIDENCE = 0.95
#: The noise filter (docs/method.md §14).
NOISE_FILTER = "foldstream.operators.noise.NoiseFilter"

_TEST_NAMES = {"mcnemar": "McNemar", "sign": "sign test", "wilcoxon": "Wilcoxon",
               "verdict": "verdict (§12)"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ------------------------------------------------------------------------------ configuration
class DatasetConfig(_Strict):
    """A dataset: a file (a different evaluation seed per replication) or a generator (a
    different data seed too). ``limit`` and a generator's ``seed`` are set per replication."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$", description="the dataset's name in the "
                                                                  "tables (and its stream)")
    source: Annotated[Union[FileSource, GeneratorSource], Field(discriminator="kind")]

    @field_validator("name")
    @classmethod
    def _not_all(cls, value: str) -> str:
        if value == "all":
            raise ValueError("'all' names the rows that pool the datasets; choose another name")
        return value


class ExactNullConfig(_Strict):
    """The exact null of the live verdict: two noise filters of rate ``p_noise``, independent
    draws, around two copies of one deterministic learner (``model``, ``params``)."""

    model: str = Field("river.tree.HoeffdingTreeClassifier",
                       description="a deterministic river classifier by dotted path")
    params: dict[str, Any] = Field(default_factory=dict)
    p_noise: float = Field(0.1, gt=0, le=1, description="the rate of both filters")

    @model_validator(mode="after")
    def _builds(self) -> "ExactNullConfig":
        try:
            LearnerConfig(name="E", model=self.model, params=self.params)
        except ValidationError as error:
            raise ValueError(format_errors(error).strip().removeprefix("(top level): ")) from None
        return self


class ConditionsConfig(_Strict):
    no_change: bool = Field(True, description="A against B: one design, two seeds (Type I)")
    noise: list[Annotated[float, Field(gt=0, le=1)]] = Field(
        default_factory=lambda: [0.05, 0.10],
        description="A against B inside a noise filter of each rate (power)")
    exact_null: ExactNullConfig | None = Field(
        default_factory=ExactNullConfig, description="E1 against E2 (null: the verdict's Type "
                                                     "I error); null: left out")

    @field_validator("noise")
    @classmethod
    def _distinct(cls, value: list[float]) -> list[float]:
        names = [noise_condition(p) for p in value]
        if len(set(names)) != len(names):
            raise ValueError(f"rates must differ; they name the conditions {', '.join(names)}")
        return value

    def names(self) -> list[str]:
        """The conditions, in the table's order.

        >>> ConditionsConfig().names()
        ['no_change', 'noise_0.05', 'noise_0.10', 'exact_null']
        """
        return ((["no_change"] if self.no_change else [])
                + [noise_condition(p) for p in self.noise]
                + (["exact_null"] if self.exact_null is not None else []))


class ExperimentConfig(_Strict):
    """An experiment (docs/method.md §14), one YAML file; a bad key fails at start, named."""

    datasets: list[DatasetConfig] = Field(min_length=1)
    learner: LearnerConfig = Field(description="the design under test: A, B and the noisy B's "
                                               "are copies of it; its `seed` parameters (nested "
                                               "ones too) are set per replication and learner, "
                                               "and `fold_seeds` is always on")
    conditions: ConditionsConfig = Field(default_factory=ConditionsConfig)
    modes: list[Literal["bootstrap", "cv", "split"]] = Field(default_factory=lambda: list(MODES),
                                                             min_length=1)
    folds: int = Field(10, ge=2)
    n: int = Field(ge=1, description="examples per run")
    report_every: int = Field(ge=1)
    replications: int = Field(ge=1)
    alpha: float = Field(0.05, gt=0, lt=1)
    seed: int = Field(1, description="the replications' seeds derive from it")
    prequential: bool = True
    window: WindowConfig = Field(default_factory=lambda: WindowConfig(kind="cumulative"),
                                 description="the evaluators' window (default: the whole stream, "
                                             "as Bifet et al.)")

    @model_validator(mode="before")
    @classmethod
    def _limits(cls, data: Any) -> Any:
        """Every source reads ``n`` examples: its ``limit`` is ``n``, not a key of its own; a
        generator's seeds are the replication's."""
        if not isinstance(data, dict) or not isinstance(data.get("datasets"), list):
            return data
        datasets = []
        for i, dataset in enumerate(data["datasets"]):
            source = dataset.get("source") if isinstance(dataset, dict) else None
            if isinstance(source, dict):
                if "limit" in source:
                    raise ValueError(f"datasets.{i}.source.limit: set by `n` for every dataset; "
                                     f"leave it out")
                params = source.get("params")
                seeds = [k for k in params if str(k).startswith("seed")] \
                    if isinstance(params, dict) else []
                if seeds:
                    raise ValueError(f"datasets.{i}.source.params.{seeds[0]}: set per "
                                     f"replication (from the experiment's seed); leave it out")
                dataset = {**dataset, "source": {**source, "limit": data.get("n")}}
            datasets.append(dataset)
        return {**data, "datasets": datasets}

    @field_validator("datasets")
    @classmethod
    def _unique(cls, value: list[DatasetConfig]) -> list[DatasetConfig]:
        check_unique([d.name for d in value], "dataset")
        return value

    @field_validator("modes")
    @classmethod
    def _unique_modes(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a mode is listed twice")
        return value

    @model_validator(mode="after")
    def _randomised(self) -> "ExperimentConfig":
        compared = self.conditions.no_change or self.conditions.noise
        if compared and not has_seed([self.learner.params, self.learner.args]):
            raise ValueError(f"learner: {self.learner.model} has no `seed` parameter (nor a "
                             f"nested model), so A and B would be one model; the design under "
                             f"test must be randomised (e.g. river.ensemble.BaggingClassifier "
                             f"with seed: 1)")
        if not self.conditions.names():
            raise ValueError("conditions: every condition is off; nothing to measure")
        return self


def load_experiment(path: str | Path, overrides: Sequence[str] = ()) -> ExperimentConfig:
    """Read, override (``--set key=value``) and validate an experiment file.

    Raises
    ------
    ConfigError
        Naming every offending key.
    """
    data, _ = read_yaml(path, "experiment")
    data = apply_overrides(data, list(overrides))
    try:
        return ExperimentConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(f"invalid experiment ({path}):\n{format_errors(error)}") from None


# ------------------------------------------------------------------------------ seeds, names
def noise_condition(p_noise: float) -> str:
    """The condition of a noise rate: two decimals at least.

    >>> noise_condition(0.05), noise_condition(0.1), noise_condition(0.125)
    ('noise_0.05', 'noise_0.10', 'noise_0.125')
    """
    text = f"{p_noise:.2f}"
    return f"noise_{text if float(text) == p_noise else repr(float(p_noise))}"


def replication_seed(seed: int, replication: int) -> int:
    """The seed of replication ``replication`` (from 0): a hash of both, as a fold's learner
    seed is (:func:`~foldstream.operators.weights.derive_seed`).

    >>> replication_seed(1, 0) != replication_seed(1, 1), replication_seed(1, 2) == replication_seed(1, 2)
    (True, True)
    """
    return derive_seed(seed, replication)


def role_seed(seed: int, role: str) -> int:
    """The seed of one learner (``role``: ``A``, ``B``, a noise filter...) in a replication of
    seed ``seed``.

    >>> role_seed(5, "A") != role_seed(5, "B"), 0 <= role_seed(5, "A") < 2**31
    (True, True)
    """
    digest = hashlib.blake2b(f"role:{seed}:{role}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") >> 1


def has_seed(value: Any) -> bool:
    """Whether a ``seed`` key appears anywhere in parameters, arguments and nested models.

    >>> has_seed({"model": {"model": "m", "params": {"seed": 1}}}), has_seed([{"n": 1}])
    (True, False)
    """
    if isinstance(value, dict):
        return "seed" in value or any(has_seed(v) for v in value.values())
    if isinstance(value, list):
        return any(has_seed(v) for v in value)
    return False


def with_seed(value: Any, seed: int) -> Any:
    """``value`` with every ``seed`` key set to ``seed``, nested models' too.

    >>> with_seed({"seed": 1, "model": {"model": "m", "params": {"seed": 2}}}, 7)
    {'seed': 7, 'model': {'model': 'm', 'params': {'seed': 7}}}
    """
    if isinstance(value, dict):
        return {k: seed if k == "seed" else with_seed(v, seed) for k, v in value.items()}
    if isinstance(value, list):
        return [with_seed(v, seed) for v in value]
    return value


def fingerprint(experiment: ExperimentConfig) -> str:
    """What a results line was measured under: the configuration without ``replications``
    (adding replications keeps the lines already measured).

    >>> e = ExperimentConfig.model_validate({"datasets": [{"name": "sea", "source": {
    ...     "kind": "generator", "model": "river.datasets.synth.SEA"}}],
    ...     "learner": {"name": "bag", "model": "river.ensemble.BaggingClassifier",
    ...                 "params": {"model": {"model": "river.naive_bayes.GaussianNB"}, "seed": 1}},
    ...     "n": 100, "report_every": 50, "replications": 2})
    >>> fingerprint(e) == fingerprint(e.model_copy(update={"replications": 9})) != \\
    ...     fingerprint(e.model_copy(update={"n": 99}))
    True
    """
    what = experiment.model_dump_json(exclude={"replications"})
    return hashlib.sha256(what.encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------ one replication
@dataclass(frozen=True)
class Task:
    """One run: a dataset, a mode, a replication (from 0)."""

    dataset: str
    mode: str
    replication: int

    @property
    def key(self) -> tuple[str, str, int]:
        return self.dataset, self.mode, self.replication


@dataclass(frozen=True)
class Pair:
    """The two learners a condition compares."""

    condition: str
    a: str
    b: str


def tasks(experiment: ExperimentConfig) -> list[Task]:
    """Every run of the experiment, replication by replication (so a partial results file
    covers every dataset and mode)."""
    return [Task(d.name, mode, r) for r in range(experiment.replications)
            for d in experiment.datasets for mode in experiment.modes]


def pairs(experiment: ExperimentConfig) -> list[Pair]:
    """The compared pairs, one per condition.

    >>> [(p.condition, p.a, p.b) for p in pairs(ExperimentConfig.model_construct(
    ...     conditions=ConditionsConfig()))]  # doctest: +NORMALIZE_WHITESPACE
    [('no_change', 'A', 'B'), ('noise_0.05', 'A', 'B_noise_0.05'),
     ('noise_0.10', 'A', 'B_noise_0.10'), ('exact_null', 'E1', 'E2')]
    """
    c = experiment.conditions
    out = [Pair("no_change", "A", "B")] if c.no_change else []
    out += [Pair(noise_condition(p), "A", f"B_{noise_condition(p)}") for p in c.noise]
    if c.exact_null is not None:
        out.append(Pair("exact_null", "E1", "E2"))
    return out


def run_configs(experiment: ExperimentConfig, task: Task) -> list[Config]:
    """The configurations of one (dataset, mode, replication), seeded for the replication:
    one run of the design's learners (``A``, ``B``, ``B_noise_<p>``) and one of the exact
    null's (``E1``, ``E2``), over the same examples with the same folds.

    ``A`` and ``B`` are the design with every ``seed`` set to their own :func:`role_seed`;
    ``B_noise_<p>`` is ``B`` (the same model seeds) inside a noise filter of its own seed;
    ``E1`` and ``E2`` are noise filters of their own seeds around one learner (its seeds, if
    any, the same for both). Every learner has ``fold_seeds``: its folds are independent
    replicas.

    Two runs rather than one: the aggregator compares every pair of a run's learners at every
    report, and on 10 folds the Wilcoxon test of a pair with tied or zero differences is a
    permutation test over 2**10 sign patterns (scipy's ``method="auto"``), the dearest part of
    a report. One run of six learners computes 15 pairs to read 4; these two compute 7
    (docs/experiments/README.md gives the measurement).
    """
    seed = replication_seed(experiment.seed, task.replication)
    dataset = next(d for d in experiment.datasets if d.name == task.dataset)
    design = experiment.learner
    c = experiment.conditions

    def copy(role: str) -> dict[str, Any]:
        return {"model": design.model, "lags": design.lags,
                "params": with_seed(dict(design.params), role_seed(seed, role)),
                "args": with_seed(list(design.args), role_seed(seed, role))}

    def noisy(name: str, inner: dict[str, Any], p_noise: float) -> dict[str, Any]:
        return {"name": name, "model": NOISE_FILTER, "fold_seeds": True, "params": {
            "model": inner, "p_noise": p_noise, "seed": role_seed(seed, name)}}

    groups: list[list[dict[str, Any]]] = []
    if c.no_change or c.noise:
        designs = [{"name": "A", "fold_seeds": True, **copy("A")}]
        if c.no_change:
            designs.append({"name": "B", "fold_seeds": True, **copy("B")})
        for p in c.noise:
            inner = copy("B")
            lags = inner.pop("lags")
            designs.append({**noisy(f"B_{noise_condition(p)}", inner, p), "lags": lags})
        groups.append(designs)
    if c.exact_null is not None:
        e = c.exact_null
        inner = {"model": e.model, "params": with_seed(dict(e.params), role_seed(seed, "E"))}
        groups.append([noisy("E1", inner, e.p_noise), noisy("E2", inner, e.p_noise)])
    source = dataset.source.model_dump()
    source.update(limit=experiment.n, stream=dataset.name)
    if source["kind"] == "generator":
        source["seed"] = seed
    evaluation = {
        "mode": task.mode, "folds": experiment.folds, "prequential": experiment.prequential,
        "seed": seed, "window": experiment.window.model_dump(),
        "report_every": experiment.report_every, "alpha": experiment.alpha,
        "compare": [MEASURE], "alarms": {"page_hinkley": None, "adwin": False},
        "verdicts": {"enabled": True, "correction": "none"},
    }
    return [Config.model_validate({"source": source, "learners": learners,
                                   "evaluation": evaluation, "engine": {"kind": "inprocess"}})
            for learners in groups]


@dataclass(frozen=True)
class Outcome:
    """One test of one condition in one run: did it reject at the final report, at any
    report, and at which position first."""

    final: bool
    any: bool
    first: int | None


@dataclass(frozen=True)
class ReplicationResult:
    """One line of the results file: a (dataset, mode, replication) run's outcomes.

    ``outcomes[condition][test]``; ``accuracy``: each learner's mean accuracy over the folds
    at the final report (how large the difference of each condition was).
    """

    experiment: str
    dataset: str
    mode: str
    replication: int
    seed: int
    examples: int
    reports: int
    outcomes: dict[str, dict[str, Outcome]]
    accuracy: dict[str, float | None] = field(default_factory=dict)
    wall_time_s: float = 0.0

    @property
    def key(self) -> tuple[str, str, int]:
        return self.dataset, self.mode, self.replication

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ReplicationResult":
        """A results line back; ``ValueError``/``KeyError``/``TypeError`` if it is not one."""
        outcomes = {c: {t: Outcome(bool(o["final"]), bool(o["any"]), o["first"])
                        for t, o in tests.items()} for c, tests in data["outcomes"].items()}
        return cls(str(data["experiment"]), str(data["dataset"]), str(data["mode"]),
                   int(data["replication"]), int(data["seed"]), int(data["examples"]),
                   int(data["reports"]), outcomes, dict(data.get("accuracy", {})),
                   float(data.get("wall_time_s", 0.0)))


def rejects(record: dict[str, Any], test: str) -> bool:
    """Whether a ``comparison`` record's test rejects; for ``verdict``, whether its live
    verdict is decided (docs/method.md §12: any decided verdict on a true null is false).

    >>> rejects({"sign": {"reject": True}}, "sign")
    True
    >>> rejects({"sequential": {"verdict": "undecided"}}, "verdict")
    False
    """
    if test == "verdict":
        return (record.get("sequential") or {}).get("verdict", UNDECIDED) != UNDECIDED
    return bool(record[test]["reject"])


def outcomes_of(records: Iterable[dict[str, Any]], wanted: Sequence[Pair]
                ) -> tuple[dict[str, dict[str, Outcome]], int, int]:
    """Per condition and test, the :class:`Outcome` read from a run's records (the
    ``comparison`` records of ``accuracy``, in order); also the number of reports and the last
    position."""
    by_pair = {(p.a, p.b): p.condition for p in wanted}
    rejected: dict[str, dict[str, list[bool]]] = {p.condition: {t: [] for t in TESTS} for p in wanted}
    positions: dict[str, list[int]] = {p.condition: [] for p in wanted}
    for record in of_type(records, "comparison"):
        if record.get("measure") != MEASURE:
            continue
        condition = by_pair.get((record["a"], record["b"]))
        if condition is None:
            continue
        positions[condition].append(record["position"])
        for test in TESTS:
            rejected[condition][test].append(rejects(record, test))
    outcomes = {}
    for condition, tests in rejected.items():
        where = positions[condition]
        if not where:
            raise ValueError(f"the run has no {MEASURE} comparison of {condition}: no report")
        outcomes[condition] = {
            test: Outcome(final=flags[-1], any=any(flags),
                          first=next((pos for pos, f in zip(where, flags) if f), None))
            for test, flags in tests.items()}
    reports = {len(v) for v in positions.values()}
    last = max(max(v) for v in positions.values())
    return outcomes, max(reports), last


def final_accuracy(records: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Each learner's mean accuracy at its last ``measures`` record."""
    out: dict[str, float | None] = {}
    for record in of_type(records, "measures"):
        if MEASURE in record.get("values", {}):
            out[record["learner"]] = record["values"][MEASURE]["mean"]
    return out


def run_replication(experiment: ExperimentConfig, task: Task) -> ReplicationResult:
    """Evaluate one (dataset, mode, replication) through the stages of ``foldstream run``."""
    from foldstream.job.api import run

    started = time.perf_counter()
    records: list[dict[str, Any]] = []
    configs = run_configs(experiment, task)
    for config in configs:
        records += run(config).records
    outcomes, reports, last = outcomes_of(records, pairs(experiment))
    return ReplicationResult(
        experiment=fingerprint(experiment), dataset=task.dataset, mode=task.mode,
        replication=task.replication, seed=configs[0].evaluation.seed, examples=last,
        reports=reports, outcomes=outcomes, accuracy=final_accuracy(records),
        wall_time_s=round(time.perf_counter() - started, 3))


# ---------------------------------------------------------------------------- results file
class ResultsMismatch(ConfigError):
    """The results file holds lines of another experiment configuration."""


def read_results(path: str | Path, experiment: ExperimentConfig | None = None
                 ) -> tuple[list[ReplicationResult], int]:
    """The complete lines of a results file (none if it does not exist) and how many lines
    were not (a line cut by a kill).

    With ``experiment``, a line of another configuration is a :class:`ResultsMismatch`, and
    lines beyond its replications are left out (a smaller rerun of a larger experiment).
    """
    path = Path(path)
    if not path.exists():
        return [], 0
    if not path.is_file() and not path.samefile(os.devnull):  # /dev/zero: read for ever
        raise ConfigError(f"{path} is not a regular file, so not a results file; give another "
                          f"--results file or --out folder")
    kept: dict[tuple[str, str, int], ReplicationResult] = {}
    broken_at: int | None = None  # the line a kill cut (only the last can be)
    mine = fingerprint(experiment) if experiment is not None else None
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:  # not a line cut by a kill: another file
                raise ConfigError(f"{path}, line {number}: not text (bytes that are not UTF-8), "
                                  f"so not a results file; give another --results file or "
                                  f"--out folder") from None
            if not line.strip():
                continue
            if broken_at is not None:  # only the last line can be cut by a kill: damaged
                raise ConfigError(f"{path}, line {broken_at}: not a results line, and more "
                                  f"follow; repair or remove the file")
            try:
                result = ReplicationResult.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError):
                if raw.endswith(b"\n"):  # a kill cuts a line before its newline: another file
                    raise ConfigError(f"{path}, line {number}: not a results line (a whole "
                                      f"line, not one cut by a kill), so not a results file; "
                                      f"give another --results file or --out folder") from None
                broken_at = number
                continue
            if mine is not None and result.experiment != mine:
                raise ResultsMismatch(
                    f"{path}: written by another experiment configuration (fingerprint "
                    f"{result.experiment}, this one is {mine}); give another --results file or "
                    f"--out folder")
            if experiment is not None and result.replication >= experiment.replications:
                continue
            kept[result.key] = result
    return list(kept.values()), int(broken_at is not None)


def _repair(path: Path) -> None:
    """Rewrite a results file without its broken lines (so an append starts on a new line)."""
    good = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                ReplicationResult.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            good.append(line if line.endswith("\n") else line + "\n")
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text("".join(good), encoding="utf-8")
    os.replace(temporary, path)


# ----------------------------------------------------------------------------------- rates
def wilson(successes: int, trials: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion.

    Unlike the normal ("Wald") interval it stays inside ``[0, 1]`` and is not empty at 0 or
    ``trials`` successes, which is where rejection rates sit.

    >>> [round(v, 4) for v in wilson(0, 20)]
    [0.0, 0.1611]
    >>> [round(v, 4) for v in wilson(8, 20)]
    [0.2188, 0.6134]
    >>> wilson(0, 0)
    (0.0, 1.0)
    """
    if trials == 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact ends, not 1e-17
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class Rate:
    """A rejection rate, as ``rates.json`` holds it."""

    dataset: str
    mode: str
    condition: str
    test: str
    look: str
    rate: float
    low: float
    high: float
    replications: int


def rejection_rates(results: Iterable[ReplicationResult], datasets: Sequence[str] | None = None,
                    modes: Sequence[str] | None = None,
                    conditions: Sequence[str] | None = None) -> list[Rate]:
    """Per (dataset, mode, condition, test, look) the fraction of replications that rejected,
    with its :func:`wilson` interval; then the rows of ``dataset: "all"``, pooling the
    replications of every dataset. The orders default to the order of first appearance.

    >>> r = [ReplicationResult("x", d, "cv", i, 0, 10, 1, {"no_change": {
    ...     t: Outcome(final=(i == 0 and t == "mcnemar"), any=(t == "mcnemar"), first=None)
    ...     for t in TESTS}}) for d in ("sea", "elec") for i in range(2)]
    >>> [(x.dataset, x.look, x.rate, x.replications) for x in rejection_rates(r)
    ...  if x.test == "mcnemar"]  # doctest: +NORMALIZE_WHITESPACE
    [('sea', 'final', 0.5, 2), ('sea', 'any', 1.0, 2), ('elec', 'final', 0.5, 2),
     ('elec', 'any', 1.0, 2), ('all', 'final', 0.5, 4), ('all', 'any', 1.0, 4)]
    """
    results = list(results)
    datasets = list(datasets or dict.fromkeys(r.dataset for r in results))
    modes = list(modes or dict.fromkeys(r.mode for r in results))
    conditions = list(conditions or dict.fromkeys(c for r in results for c in r.outcomes))
    counts: dict[tuple[str, str, str, str, str], list[int]] = {}
    for r in results:
        for condition, tests in r.outcomes.items():
            for test, outcome in tests.items():
                for look in LOOKS:
                    hit = int(getattr(outcome, look))
                    for dataset in (r.dataset, "all"):
                        count = counts.setdefault((dataset, r.mode, condition, test, look), [0, 0])
                        count[0] += hit
                        count[1] += 1
    rates = []
    for dataset in datasets + ["all"]:
        for mode in modes:
            for condition in conditions:
                for test in TESTS:
                    for look in LOOKS:
                        hits, n = counts.get((dataset, mode, condition, test, look), (0, 0))
                        if n == 0:
                            continue
                        low, high = wilson(hits, n)
                        rates.append(Rate(dataset, mode, condition, test, look, hits / n, low,
                                          high, n))
    return rates


# ------------------------------------------------------------------------------------ table
@dataclass(frozen=True)
class RateTable:
    """Bifet et al.'s Table 2 layout for one dataset (or ``all``): a row per test and look,
    a column per (condition, mode); a cell is a :class:`Rate` or ``None``."""

    dataset: str
    columns: list[tuple[str, str]]
    rows: list[tuple[str, str, list[Rate | None]]]
    replications: int


def rate_table(rates: Sequence[Rate], dataset: str = "all") -> RateTable:
    """The table of one dataset's rates."""
    mine = [r for r in rates if r.dataset == dataset]
    conditions = list(dict.fromkeys(r.condition for r in mine))
    modes = list(dict.fromkeys(r.mode for r in mine))
    columns = [(c, m) for c in conditions for m in modes]
    cell = {(r.test, r.look, r.condition, r.mode): r for r in mine}
    rows = [(test, look, [cell.get((test, look, c, m)) for c, m in columns])
            for test in TESTS for look in LOOKS
            if any((test, look, c, m) in cell for c, m in columns)]
    return RateTable(dataset, columns, rows, max((r.replications for r in mine), default=0))


def _row_name(test: str, look: str) -> str:
    return f"{_TEST_NAMES[test]}, {'final report' if look == 'final' else 'any report'}"


def markdown_table(table: RateTable) -> str:
    """The table in Markdown: a cell is the rate and its 95% interval.

    >>> rate = Rate("all", "cv", "no_change", "sign", "final", 0.1, 0.03, 0.3, 20)
    >>> print(markdown_table(RateTable("all", [("no_change", "cv")],
    ...                                [("sign", "final", [rate])], 20)))
    | test | no_change<br>cv |
    |---|---|
    | sign test, final report | 0.10 (0.03–0.30) |
    """
    head = "| test | " + " | ".join(f"{c}<br>{m}" for c, m in table.columns) + " |"
    lines = [head, "|---|" + "---|" * len(table.columns)]
    for test, look, cells in table.rows:
        text = [f"{r.rate:.2f} ({r.low:.2f}–{r.high:.2f})" if r else "—" for r in cells]
        lines.append(f"| {_row_name(test, look)} | " + " | ".join(text) + " |")
    return "\n".join(lines)


def markdown_report(rates: Sequence[Rate], experiment: ExperimentConfig) -> str:
    """``table.md``: the pooled table, then one per dataset."""
    parts = [f"# Rejection rates ({experiment.replications} replications, n = {experiment.n}, "
             f"{experiment.folds} folds, alpha = {experiment.alpha})", "",
             "Each cell: the fraction of replications that rejected, and its 95% Wilson score "
             "interval. no_change and exact_null: a rejection is a Type I error; noise_*: a "
             "detection (power). docs/method.md §14.", ""]
    for dataset in ["all"] + [d.name for d in experiment.datasets]:
        table = rate_table(rates, dataset)
        if not table.rows:
            continue
        title = "pooled over the datasets" if dataset == "all" else dataset
        parts += [f"## {title} ({table.replications} runs per cell)", "", markdown_table(table), ""]
    return "\n".join(parts)


def rich_table(table: RateTable):
    """The table for the terminal: the rate, its interval below."""
    from rich.table import Table

    out = Table(title=f"rejection rates, {'pooled' if table.dataset == 'all' else typed(table.dataset)}"
                      f" ({table.replications} runs per cell; 95% Wilson intervals)")
    out.add_column("test, look", style="bold", no_wrap=True)
    for condition, mode in table.columns:
        out.add_column(f"{condition}\n{mode}", justify="right", min_width=10)
    for test, look, cells in table.rows:
        out.add_row(f"{test}, {look}",
                    *[f"{r.rate:.2f}\n[dim]{r.low:.2f}–{r.high:.2f}[/]" if r else "—"
                      for r in cells])
    return out


def rates_figure(rates: Sequence[Rate], alpha: float, dataset: str = "all"):
    """Rejection rate per test with its interval, one panel per condition, one colour per
    mode; filled: the final report, hollow: any report; the dashed line is ``alpha``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mine = [r for r in rates if r.dataset == dataset]
    conditions = list(dict.fromkeys(r.condition for r in mine))
    modes = list(dict.fromkeys(r.mode for r in mine))
    figure, axes = plt.subplots(1, len(conditions), figsize=(3.6 * len(conditions) + 0.6, 3.8),
                                sharey=True, squeeze=False)
    colours = plt.get_cmap("tab10")
    cell = {(r.condition, r.mode, r.test, r.look): r for r in mine}
    width = 0.8 / max(len(modes), 1)
    for ax, condition in zip(axes[0], conditions):
        for j, mode in enumerate(modes):
            for i, test in enumerate(TESTS):
                for look, offset, face in (("final", -0.12, None), ("any", 0.12, "white")):
                    r = cell.get((condition, mode, test, look))
                    if r is None:
                        continue
                    x = i - 0.4 + width * (j + 0.5) + offset * width
                    ax.errorbar([x], [r.rate], yerr=[[r.rate - r.low], [r.high - r.rate]],
                                fmt="o", color=colours(j), markerfacecolor=face or colours(j),
                                markersize=4.5, capsize=2, linewidth=1,
                                label=f"{mode}, {look}" if i == 0 else None)
        ax.axhline(alpha, color="grey", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(TESTS)), [_TEST_NAMES[t].replace(" (§12)", "") for t in TESTS],
                      fontsize=8)
        ax.set_title(condition, fontsize=10)
        ax.set_ylim(-0.03, 1.03)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("rejection rate (95% interval)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=max(len(labels), 1), fontsize=7,
                  frameon=False)
    n = max((r.replications for r in mine), default=0)
    figure.suptitle(f"rejection rates ({'pooled over the datasets' if dataset == 'all' else literal(dataset)}"
                    f", {n} runs per point); dashed: alpha = {alpha}", fontsize=10)
    figure.tight_layout(rect=(0, 0.08, 1, 1))
    return figure


def write_outputs(rates: Sequence[Rate], experiment: ExperimentConfig, out: str | Path) -> Path:
    """``rates.json``, ``table.md`` and ``rates.png`` in ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rates.json").write_text(json.dumps([asdict(r) for r in rates], indent=1) + "\n",
                                    encoding="utf-8")
    (out / "table.md").write_text(markdown_report(rates, experiment) + "\n", encoding="utf-8")
    import matplotlib.pyplot as plt

    figure = rates_figure(rates, experiment.alpha)
    figure.savefig(out / "rates.png", dpi=130)
    plt.close(figure)
    return out


# ------------------------------------------------------------------------------------ running
def _quiet_worker() -> None:
    """A worker leaves Ctrl-C to the parent, which stops the pool (by SIGTERM)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


class ReplicationFailed(RuntimeError):
    """A replication raised: names it (the results so far are kept)."""


def _run_one(job: tuple[ExperimentConfig, Task]) -> ReplicationResult:
    experiment, task = job
    try:
        return run_replication(experiment, task)
    except Exception as error:  # noqa: BLE001 - named, with its task, for the command line
        raise ReplicationFailed(f"replication {task.replication} of {task.dataset} ({task.mode}) "
                                f"failed: {type(error).__name__}: {error}") from None


class Stopped(KeyboardInterrupt):
    """SIGTERM, raised where the experiment waits: carries its exit code."""

    exit_code = exitcodes.TERMINATED


class _Runner:
    """Runs tasks in ``workers`` processes (1: in this one) and yields their results in the
    order they finish. The pool is made on entering, before any progress bar draws from a
    thread of its own, and ended (terminated, if need be) on leaving."""

    def __init__(self, experiment: ExperimentConfig, todo: Sequence[Task], workers: int):
        self.experiment, self.todo = experiment, list(todo)
        self.workers = min(workers, len(self.todo))
        self.pool = None

    def __enter__(self) -> "_Runner":
        if self.workers > 1:
            import multiprocessing

            # the stages, imported once here: every worker forks with the same code
            import foldstream.job.api  # noqa: F401
            import foldstream.job.engines.inprocess  # noqa: F401
            import foldstream.job.plans  # noqa: F401

            context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
            self.pool = context.Pool(self.workers, initializer=_quiet_worker)
        return self

    def __iter__(self) -> Iterator[ReplicationResult]:
        if self.pool is None:
            for task in self.todo:
                yield _run_one((self.experiment, task))
        else:
            yield from self.pool.imap_unordered(_run_one,
                                                [(self.experiment, t) for t in self.todo])

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()


@dataclass
class ExperimentRun:
    """What :func:`run_experiment` did."""

    results: list[ReplicationResult]
    rates: list[Rate]
    ran: int
    skipped: int
    wall_time_s: float
    interrupted: int | None = None  # the exit code of the signal that stopped it


def run_experiment(experiment: ExperimentConfig, results_path: str | Path, *, workers: int = 1,
                   progress: bool = False, console=None) -> ExperimentRun:
    """Run the replications missing from ``results_path`` (appending a line as each finishes),
    then compute the rates of every replication in the file.

    A Ctrl-C or SIGTERM stops it: the lines written stay, ``interrupted`` holds the exit code,
    and the rates cover the replications done.
    """
    import threading

    started = time.perf_counter()
    path = Path(results_path)
    done, broken = read_results(path, experiment)
    if broken:
        _repair(path)
    finished = {r.key for r in done}
    todo = [t for t in tasks(experiment) if t.key not in finished]
    results = list(done)
    interrupted = None
    path.parent.mkdir(parents=True, exist_ok=True)
    main_thread = threading.current_thread() is threading.main_thread()

    def stop(signum, frame):
        raise Stopped()

    with path.open("a", encoding="utf-8") as handle, _Runner(experiment, todo, workers) as runner, \
            _progress(len(done) + len(todo), len(done), progress, console) as advance:
        previous = signal.signal(signal.SIGTERM, stop) if main_thread else None
        try:
            for result in runner:
                handle.write(result.to_json() + "\n")
                handle.flush()
                results.append(result)
                advance(result)
        except KeyboardInterrupt as error:
            interrupted = getattr(error, "exit_code", exitcodes.INTERRUPTED)
        finally:
            if main_thread:
                signal.signal(signal.SIGTERM, previous)
    rates = rejection_rates(results, [d.name for d in experiment.datasets], experiment.modes,
                            experiment.conditions.names())
    return ExperimentRun(results, rates, len(results) - len(done), len(done),
                         time.perf_counter() - started, interrupted)


@contextmanager
def _progress(total: int, completed: int, enabled: bool, console
              ) -> Iterator[Callable[[ReplicationResult], None]]:
    """Yield ``advance(result)``: a bar over replications in the style of ``foldstream run``'s
    bar; to a log or a pipe (no terminal), a line per finished replication instead."""
    if not enabled:
        yield lambda result: None
        return
    if console is not None and not console.is_terminal:
        done = [completed]

        def line(result: ReplicationResult) -> None:
            done[0] += 1
            console.print(f"{done[0]}/{total} replications: {typed(result.dataset)} {result.mode} "
                          f"#{result.replication} in {result.wall_time_s:.1f} s", soft_wrap=True,
                          highlight=False)

        yield line
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, \
        TextColumn, TimeElapsedColumn, TimeRemainingColumn

    with Progress(SpinnerColumn(), TextColumn("[bold]experiment"), BarColumn(),
                  MofNCompleteColumn(), TextColumn("replications"), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console, transient=False) as bar:
        task = bar.add_task("experiment", total=total, completed=completed)
        yield lambda result: bar.advance(task)


# ------------------------------------------------------------------------------ command line
def add_parser(commands) -> None:
    """The ``experiment`` subcommand's arguments (``foldstream experiment --help``)."""
    parser = commands.add_parser(
        "experiment", help="how often each test rejects: Type I and II errors over replications "
                           "(docs/method.md §14)")
    parser.add_argument("config", help="an experiment YAML file (conf/experiments/)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="processes running replications (default: the number of cores)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="folder of rates.json, table.md, rates.png (default: "
                             "out/experiments/<config name>)")
    parser.add_argument("--results", default=None, metavar="FILE",
                        help="the resumable results file, one JSON line per replication "
                             "(default: DIR/results.jsonl)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="override a key, e.g. --set replications=5")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no table")


def main(args) -> int:
    from rich.console import Console

    from foldstream.connectors.sinks import writable_reason

    err = Console(stderr=True)
    try:
        experiment = load_experiment(args.config, args.overrides)
        workers = args.workers if args.workers is not None else (os.cpu_count() or 1)
        if workers < 1:
            raise ConfigError(f"--workers: expected at least 1, got {workers}")
        out = Path(args.out) if args.out else Path("out/experiments") / Path(args.config).stem
        results = Path(args.results) if args.results else out / "results.jsonl"
        for key, target in (("--out", out / "rates.json"), ("--results", results)):
            reason = writable_reason(target)
            if reason:
                raise ConfigError(f"{key}: cannot write {target}: {reason}")
        done = run_experiment(experiment, results, workers=workers, progress=not args.quiet,
                              console=err)
    except ConfigError as error:
        err.print(f"[red]error:[/] {typed(error)}", highlight=False)
        return exitcodes.UNUSABLE
    except ReplicationFailed as error:
        err.print(f"[red]error:[/] {typed(error)}; the replications done are kept in {typed(results)}",
                  highlight=False, soft_wrap=True)
        return exitcodes.FAILED
    if done.results:
        write_outputs(done.rates, experiment, out)
    if not args.quiet and done.results:
        Console(width=max(Console().width, 160)).print(rich_table(rate_table(done.rates)))
    total = len(tasks(experiment))
    if done.interrupted is not None:
        err.print(f"stopped: {len(done.results)} of {total} replications are in {typed(results)}; "
                  f"the same command continues from there", highlight=False, soft_wrap=True)
        return done.interrupted
    if not args.quiet:
        err.print(f"{done.ran} replications run, {done.skipped} found in {typed(results)}; "
                  f"{time.strftime('%H:%M:%S', time.gmtime(done.wall_time_s))} wall; "
                  f"rates.json, table.md, rates.png in {typed(out)}", highlight=False, soft_wrap=True)
    return exitcodes.OK

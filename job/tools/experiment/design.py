"""An experiment's design (docs/method.md §14): its configuration, the seeds, the runs it makes
(:func:`tasks`, :func:`run_configs`) and what is read from a run's records (:func:`outcomes_of`).

Pure functions of the configuration: every replication is fixed by the experiment's seed and its
number, whichever process runs it (:mod:`.run`), and the rates (:mod:`.rates`) read only the
:class:`ReplicationResult` lines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, \
    model_validator

from foldstream.job.config import Config, ConfigError, FileSource, GeneratorSource, LearnerConfig, \
    WindowConfig, apply_overrides, check_unique, format_errors, read_yaml
from foldstream.job.tools.records import of_type
from foldstream.operators.stats.sequential import UNDECIDED
from foldstream.operators.stats.weights import derive_seed

#: The tests measured, in the table's order.
TESTS = ("mcnemar", "sign", "wilcoxon", "verdict", "regime")
#: The looks: the final report, and any report (the final one included).
LOOKS = ("final", "any")
#: The validation modes an experiment compares.
MODES = ("bootstrap", "cv", "split")
#: The compared measure whose comparison records the fold tests and the verdict are read from.
MEASURE = "accuracy"
#: The noise filter (docs/method.md §14).
NOISE_FILTER = "foldstream.operators.learners.noise.NoiseFilter"


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
                       description="a deterministic classifier: river's by dotted path, or MOA's")
    params: dict[str, Any] = Field(default_factory=dict)
    options: str = Field("", description="a MOA classifier's options")
    p_noise: float = Field(0.1, gt=0, le=1, description="the rate of both filters")

    @model_validator(mode="after")
    def _builds(self) -> "ExactNullConfig":
        try:
            LearnerConfig(name="E", model=self.model, params=self.params, options=self.options)
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
                             f"with seed: 1, or moa.classifiers.meta.OzaBag with params: "
                             f"{{seed: 1}})")
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
    seed is (:func:`~foldstream.operators.stats.weights.derive_seed`).

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


def iter_tasks(experiment: ExperimentConfig) -> Iterator[Task]:
    """Every run of the experiment, replication by replication (so a partial results file
    covers every dataset and mode), made as they are asked for: the memory of an experiment
    does not grow with ``replications``, however large."""
    return (Task(d.name, mode, r) for r in range(experiment.replications)
            for d in experiment.datasets for mode in experiment.modes)


def task_count(experiment: ExperimentConfig) -> int:
    """How many runs :func:`iter_tasks` yields."""
    return experiment.replications * len(experiment.datasets) * len(experiment.modes)


def tasks(experiment: ExperimentConfig) -> list[Task]:
    """:func:`iter_tasks` as a list, for a small experiment."""
    return list(iter_tasks(experiment))


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
                "args": with_seed(list(design.args), role_seed(seed, role)),
                **({"options": design.options} if design.options else {})}

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
        inner = {"model": e.model, "params": with_seed(dict(e.params), role_seed(seed, "E")),
                 **({"options": e.options} if e.options else {})}
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
    at the final report (how large the difference of each condition was); ``cpu_time_s``: the
    CPU seconds of the process that ran it, every thread (a MOA learner's JVM too, and its
    start in a process's first MOA run), ``None`` on a line written before it was measured.
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
    cpu_time_s: float | None = None

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
                   float(data.get("wall_time_s", 0.0)),
                   None if data.get("cpu_time_s") is None else float(data["cpu_time_s"]))


def rejects(record: dict[str, Any], test: str) -> bool:
    """Whether a ``comparison`` record's test rejects; for ``verdict``, whether its live
    verdict is decided (docs/method.md §12: any decided verdict on a true null is false), and
    for ``regime`` its regime verdict (§15; none recorded: not decided).

    >>> rejects({"sign": {"reject": True}}, "sign")
    True
    >>> rejects({"sequential": {"verdict": "undecided"}}, "verdict")
    False
    >>> rejects({"sequential": {"verdict": "undecided", "regime": {"verdict": "b_better"}}},
    ...         "regime")
    True
    """
    if test in ("verdict", "regime"):
        live = record.get("sequential") or {}
        if test == "regime":
            live = live.get("regime") or {}
        return live.get("verdict", UNDECIDED) != UNDECIDED
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

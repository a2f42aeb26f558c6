"""The run configuration (docs/method.md §11) as a pydantic model: a bad key fails at start, named.

``load_config`` reads a YAML file (or the embedded default), applies ``--set dotted.key=value``
overrides and validates everything, learners included (each is built once, so a wrong dotted
path or parameter is reported with its key before any data is read).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from foldstream.operators.measures import MEASURES
from foldstream.operators.normalization import NORMALIZABLE

PACKAGE_PREFIX = "package://"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ------------------------------------------------------------------------------------ source
class FileSource(_Strict):
    kind: Literal["file"] = "file"
    path: str = Field(description="CSV with a header row, ARFF or JSON Lines; .gz allowed; "
                                  "package://elec.csv.gz is the packaged Electricity")
    label: str = Field("target", description="the label column or field")
    stream: str | None = Field(None, description="the stream's name (default: the file's stem)")
    limit: int | None = Field(None, ge=1, description="read at most this many examples")
    nominal: list[str] = Field(default_factory=list, description="columns holding categories")
    id_field: str | None = Field(None, description="column holding each example's key")
    format: Literal["csv", "arff", "jsonl"] | None = Field(None, description="default: by suffix")

    def resolved_path(self) -> Path:
        if self.path.startswith(PACKAGE_PREFIX):
            name = self.path[len(PACKAGE_PREFIX):]
            return Path(str(resources.files("foldstream.connectors") / "data" / name))
        return Path(self.path)

    @model_validator(mode="after")
    def _exists(self) -> "FileSource":
        if not self.resolved_path().is_file():
            raise ValueError(f"source.path: no such file: {self.path}")
        return self


class GeneratorSource(_Strict):
    kind: Literal["generator"]
    model: str = Field(description="a river.datasets.synth generator by dotted path")
    params: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = 1
    limit: int = Field(ge=1, description="examples to generate")
    stream: str | None = None


class KafkaSource(_Strict):
    kind: Literal["kafka"]
    bootstrap_servers: str = "localhost:9092"
    topic: str = "examples"
    group_id: str = "foldstream"
    start: Literal["earliest", "latest", "committed"] = "earliest"
    bounded: bool = Field(False, description="stop at the end offsets found at start")
    label: str = "target"
    stream: str | None = Field(None, description="the stream of messages without a key "
                                                 "(default: such messages are rejected)")
    streams: list[str] | None = Field(None, description="accept only these stream names (keys)")
    nominal: list[str] = Field(default_factory=list)
    id_field: str | None = None
    properties: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Kafka consumer properties (security.protocol, "
                                          "sasl.*, fetch.max.wait.ms, ...)")


Source = Annotated[Union[FileSource, GeneratorSource, KafkaSource], Field(discriminator="kind")]


# -------------------------------------------------------------------------------- evaluation
class WindowConfig(_Strict):
    kind: Literal["cumulative", "sliding", "fading", "adwin"] = "adwin"
    size: int | None = Field(None, ge=1, description="sliding: the number of examples")
    alpha: float | None = Field(None, gt=0, le=1, description="fading: the factor")
    delta: float | None = Field(None, gt=0, lt=1, description="adwin: the confidence")

    @model_validator(mode="after")
    def _parameters(self) -> "WindowConfig":
        wanted = {"sliding": "size", "fading": "alpha", "adwin": "delta", "cumulative": None}[self.kind]
        for name in ("size", "alpha", "delta"):
            if name != wanted and getattr(self, name) is not None:
                raise ValueError(f"{name} does not apply to a window of kind {self.kind}")
        defaults = {"size": 1000, "alpha": 0.999, "delta": 0.002}
        if wanted and getattr(self, wanted) is None:
            object.__setattr__(self, wanted, defaults[wanted])
        return self

    def as_items(self) -> tuple[tuple[str, Any], ...]:
        return tuple((k, v) for k, v in self.model_dump().items() if v is not None)


class PageHinkleyConfig(_Strict):
    """river.drift.PageHinkley's parameters; ``mode: up`` watches for a rising loss."""

    min_instances: int = Field(30, ge=1)
    delta: float = Field(0.005, ge=0)
    threshold: float = Field(50.0, gt=0)
    alpha: float = Field(0.9999, gt=0, le=1)
    mode: Literal["up", "down", "both"] = "up"


class AlarmsConfig(_Strict):
    page_hinkley: PageHinkleyConfig | None = Field(default_factory=PageHinkleyConfig)
    adwin: bool = Field(True, description="ADWIN's own alarms (the window's ADWIN when it has one)")
    adwin_delta: float = Field(0.002, gt=0, lt=1)
    quantity: Literal["loss"] = "loss"


class EvaluationConfig(_Strict):
    mode: Literal["bootstrap", "cv", "split", "single"] = "bootstrap"
    folds: int = Field(10, ge=1)
    prequential: bool = True
    seed: int = 1
    fold_choice: Literal["random", "round_robin"] = "random"
    window: WindowConfig = Field(default_factory=WindowConfig)
    report_every: int = Field(1000, ge=1)
    alpha: float = Field(0.05, gt=0, lt=1)
    compare: list[str] = Field(default_factory=lambda: ["accuracy", "kappa_m"])
    positive_class: str | int | bool | None = Field(
        None, description="positive class of precision, recall, f1 (default: the first seen)")
    normalize: list[str] = Field(default_factory=list,
                                 description=f"measures to normalise (Brzezinski): {', '.join(NORMALIZABLE)}")
    max_matrices: int = Field(40_000, ge=4, description="normalisation: enumerate at most this many matrices")
    q_fading: float = Field(0.999, gt=0, le=1, description="fading factor of the Q statistic")
    alarms: AlarmsConfig = Field(default_factory=AlarmsConfig)

    @field_validator("compare")
    @classmethod
    def _known_measures(cls, value: list[str]) -> list[str]:
        for name in value:
            if name not in MEASURES:
                raise ValueError(f"unknown measure {name!r}; choose from {', '.join(MEASURES)}")
        return value

    @field_validator("normalize")
    @classmethod
    def _normalizable(cls, value: list[str]) -> list[str]:
        for name in value:
            if name not in NORMALIZABLE:
                raise ValueError(f"{name!r} cannot be normalised; choose from {', '.join(NORMALIZABLE)}")
        return value

    @model_validator(mode="after")
    def _folds(self) -> "EvaluationConfig":
        if self.mode == "single":
            object.__setattr__(self, "folds", 1)
        elif self.folds < 2:
            raise ValueError(f"folds: mode {self.mode} needs at least 2 folds")
        return self


class LearnerConfig(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    model: str = Field(description="a river classifier by dotted path")
    params: dict[str, Any] = Field(default_factory=dict)
    args: list[Any] = Field(default_factory=list, description="positional arguments (e.g. pipeline steps)")
    lags: int = Field(0, ge=0, description="previous labels added as features (temporal wrapper)")

    @model_validator(mode="after")
    def _builds(self) -> "LearnerConfig":
        from foldstream.operators.learners import build_model

        try:
            model = build_model(self.model, self.params, self.args)
        except ValueError as error:
            raise ValueError(f"model {self.model}: {error}") from None
        for method in ("predict_one", "learn_one", "clone"):
            if not callable(getattr(model, method, None)):
                raise ValueError(f"{self.model} has no {method}(): not a river classifier")
        return self


# -------------------------------------------------------------------------------------- sink
class FileSink(_Strict):
    kind: Literal["file"] = "file"
    path: str = "out/metrics.jsonl"
    dead_letter_path: str | None = Field(None, description="default: <path stem>.rejected.jsonl")

    def dead_letters(self) -> Path:
        if self.dead_letter_path:
            return Path(self.dead_letter_path)
        path = Path(self.path)
        return path.with_name(path.name.split(".")[0] + ".rejected.jsonl")


class StdoutSink(_Strict):
    kind: Literal["stdout"]
    dead_letter_path: str = "rejected.jsonl"

    def dead_letters(self) -> Path:
        return Path(self.dead_letter_path)


class KafkaSink(_Strict):
    kind: Literal["kafka"]
    bootstrap_servers: str = "localhost:9092"
    topic: str = "metrics"
    dead_letter_topic: str = "metrics-rejected"
    delivery_guarantee: Literal["at-least-once", "exactly-once"] = Field(
        "at-least-once", description="exactly-once: Kafka transactions committed at checkpoints; "
                                     "readers must use read_committed")
    properties: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Kafka producer properties (security.protocol, "
                                          "sasl.*, linger.ms, ...)")


Sink = Annotated[Union[FileSink, StdoutSink, KafkaSink], Field(discriminator="kind")]


class EngineConfig(_Strict):
    kind: Literal["inprocess", "flink"] = "inprocess"
    parallelism: int = Field(2, ge=1, description="flink: parallel subtasks of the learner tasks")
    batch_size: int = Field(500, ge=1, description="examples per micro-batch (never changes results)")
    flush_ms: int = Field(50, ge=10, description="flink, unbounded input: flush a partial batch "
                                                 "after this long, so a quiet stream still reports")
    checkpoint_interval_ms: int | None = Field(
        None, ge=100, description="flink: checkpoint interval; default 10000 for an unbounded "
                                  "Kafka source, off otherwise")
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
    keying: Literal["fold", "learner_fold"] = Field(
        "fold", description="flink: one key per fold hosting every learner and the evaluator, "
                            "or one key per learner and fold (bench/README.md compares them)")

    @property
    def task_slots(self) -> int:
        """The task slots a Flink job takes: one set per slot sharing group."""
        return (2 if self.learner_slots == "own" else 1) * self.parallelism


class Config(_Strict):
    source: Source
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    learners: list[LearnerConfig] = Field(min_length=1)
    sink: Sink = Field(default_factory=FileSink)
    engine: EngineConfig = Field(default_factory=EngineConfig)

    @field_validator("learners")
    @classmethod
    def _unique_names(cls, value: list[LearnerConfig]) -> list[LearnerConfig]:
        names = [learner.name for learner in value]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"learner names must be unique; repeated: {', '.join(duplicates)}")
        return value

    @model_validator(mode="after")
    def _kafka_needs_flink(self) -> "Config":
        for section in ("source", "sink"):
            if getattr(self, section).kind == "kafka" and self.engine.kind != "flink":
                raise ValueError(f"{section}.kind: kafka needs engine.kind: flink")
        if self.sink.kind == "kafka" and self.sink.delivery_guarantee == "exactly-once" \
                and self.checkpoint_interval_ms is None:
            raise ValueError("sink.delivery_guarantee: exactly-once needs checkpoints: "
                             "set engine.checkpoint_interval_ms or use an unbounded Kafka source")
        return self

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


def _parse_override(item: str) -> tuple[list[str], Any]:
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {item!r}: expected dotted.key=value")
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError as error:
        raise ConfigError(f"--set {key}: the value is not valid YAML: {error}") from None
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
    lines = []
    for item in error.errors():
        key = ".".join(str(p) for p in item["loc"] if not str(p).startswith(("function-", "tagged-union")))
        message = item["msg"].removeprefix("Value error, ")
        lines.append(f"  {key or '(top level)'}: {message}")
    return "\n".join(lines)


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> Config:
    """Read, override and validate a configuration; ``path=None`` takes the embedded default."""
    if path is None:
        text, origin = default_config_text(), "the embedded default"
    else:
        try:
            text, origin = Path(path).read_text(encoding="utf-8"), str(path)
        except OSError as error:
            raise ConfigError(f"cannot read the configuration {path}: {error.strerror}") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as error:
        raise ConfigError(f"{origin} is not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: the top level must be a mapping of sections")
    data = apply_overrides(data, overrides or [])
    try:
        return Config.model_validate(data)
    except ValidationError as error:
        raise ConfigError(f"invalid configuration ({origin}):\n{format_errors(error)}") from None


# ------------------------------------------------------------------------ config reference
_SECTIONS = (
    ("source (kind: file)", FileSource), ("source (kind: generator)", GeneratorSource),
    ("source (kind: kafka)", KafkaSource), ("evaluation", EvaluationConfig),
    ("evaluation.window", WindowConfig), ("evaluation.alarms", AlarmsConfig),
    ("evaluation.alarms.page_hinkley", PageHinkleyConfig), ("learners[]", LearnerConfig),
    ("sink (kind: file)", FileSink), ("sink (kind: stdout)", StdoutSink),
    ("sink (kind: kafka)", KafkaSink), ("engine", EngineConfig),
)


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if not getattr(annotation, "__args__", None) else None
    text = text or str(annotation).replace("typing.", "")
    text = text.replace("NoneType", "null").replace("Literal", "one of ").replace(" | ", " or ")
    return text.replace("Optional[", "null or [")


def config_reference() -> str:
    """The configuration keys as Markdown tables, generated from the model so it cannot drift.

    ``python -m foldstream.job.config`` prints it; the README holds a copy that a test compares.
    """
    from pydantic_core import PydanticUndefined

    lines: list[str] = []
    for title, model in _SECTIONS:
        lines += [f"**{title}**", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        for name, info in model.model_fields.items():
            if info.default is not PydanticUndefined:
                default = info.default
            elif info.default_factory is not None:
                default = info.default_factory()
            else:
                default = "(required)"
            if isinstance(default, BaseModel):
                default = "see below"
            shown = f"`{default!r}`" if default not in ("(required)", "see below") else default
            lines.append(f"| `{name}` | {_type_name(info.annotation)} | {shown} | "
                         f"{(info.description or '').replace('|', '/')} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(config_reference())

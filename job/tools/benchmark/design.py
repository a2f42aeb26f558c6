"""A benchmark's design: its configuration, its grid of cells (one stream, one learner) and the
line each cell leaves in the results file.

A cell is an ordinary run of :func:`~foldstream.job.runner.run_configuration`: the stream's
source, the one learner, the benchmark's evaluation. A learner's records do not depend on the
other learners of a run (each fold's weights come from the evaluation's seed alone), so a
cell's ``measures`` records are those of ``foldstream run`` on that stream with all the
learners, byte for byte; one learner a run measures its cost (CPU seconds) alone, and a
finished cell is never run again, whichever cells are added later.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, \
    model_validator

from foldstream.connectors.files import default_stream
from foldstream.job.checks import check_choices
from foldstream.job.config import Config, ConfigError, EngineConfig, EvaluationConfig, \
    FileSource, GeneratorSource, LearnerConfig, apply_overrides, check_unique, format_errors, \
    jvm_options_first, read_yaml
from foldstream.operators.stages.aggregator import COMPARE
from foldstream.operators.stats.measures import MEASURES

#: The measures of the comparison table unless ``measures`` names others: the ones every run
#: compares across learners (``evaluation.compare``'s default).
TABLE_MEASURES = COMPARE


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


StreamSource = Annotated[Union[FileSource, GeneratorSource], Field(discriminator="kind")]


def stream_name(source: FileSource | GeneratorSource) -> str:
    """The name of a stream in the tables: its ``stream`` key, else the file's name or the
    generator's class, lower-cased (as a run names it).

    >>> stream_name(GeneratorSource(kind="generator", model="river.datasets.synth.SEA", limit=5))
    'sea'
    """
    if source.stream:
        return source.stream
    if source.kind == "file":
        return default_stream(source.resolved_path())
    return source.model.rsplit(".", 1)[-1].lower()


class BenchmarkConfig(_Strict):
    """A benchmark (``foldstream benchmark``): several learners on many streams, one evaluation.
    Its keys are ``run``'s with ``streams`` in place of ``source``; a bad key fails at start,
    named."""

    streams: list[StreamSource] = Field(
        min_length=1, description="the streams, each a `source` section of kind file or "
                                  "generator; each named by its `stream` key (default: the "
                                  "file's name, the generator's class)")
    learners: list[LearnerConfig] = Field(min_length=2, description="the learners compared on "
                                                                    "every stream")
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig,
                                         description="the evaluation of every cell")
    engine: EngineConfig = Field(default_factory=EngineConfig,
                                 description="the in-process engine's settings (batch size, "
                                             "MOA's JVM options)")
    limit: int | None = Field(None, ge=1, description="the examples read from each stream that "
                                                      "has no `limit` of its own")
    measures: list[str] = Field(default_factory=lambda: list(TABLE_MEASURES),
                                description="the measures of the comparison table; the first "
                                            "is ranked")

    @model_validator(mode="before")
    @classmethod
    def _prepare(cls, data: Any) -> Any:
        """The JVM's options before any MOA learner is checked; ``limit`` into each stream."""
        try:
            data = jvm_options_first(data)
        except ConfigError as error:
            raise ValueError(f".{error}") from None
        if not isinstance(data, dict) or not isinstance(data.get("streams"), list):
            return data
        limit = data.get("limit")
        streams = [{**s, "limit": limit} if isinstance(s, dict) and s.get("limit") is None
                   and limit is not None else s for s in data["streams"]]
        return {**data, "streams": streams}

    @field_validator("learners")
    @classmethod
    def _unique_learners(cls, value: list[LearnerConfig]) -> list[LearnerConfig]:
        check_unique([learner.name for learner in value], "learner")
        return value

    @field_validator("measures")
    @classmethod
    def _known_measures(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("name at least one measure")
        check_choices(value, MEASURES, "measure")
        return value

    @field_validator("engine")
    @classmethod
    def _in_process(cls, value: EngineConfig) -> EngineConfig:
        if value.kind != "inprocess":
            raise ValueError("kind: a benchmark runs its cells in-process (--workers N "
                             "processes); flink is for one run")
        return value

    @model_validator(mode="after")
    def _unique_streams(self) -> "BenchmarkConfig":
        names = [stream_name(s) for s in self.streams]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"streams: two streams are named {repeated[0]}; give each a "
                             f"`stream` key of its own")
        return self

    @property
    def stream_names(self) -> list[str]:
        return [stream_name(s) for s in self.streams]

    @property
    def learner_names(self) -> list[str]:
        return [learner.name for learner in self.learners]


def load_benchmark(path: str | Path, overrides: Sequence[str] = ()) -> BenchmarkConfig:
    """Read, override (``--set key=value``) and validate a benchmark file.

    Raises
    ------
    ConfigError
        Naming every offending key.
    """
    data, origin = read_yaml(path, "benchmark")
    data = apply_overrides(data, list(overrides))
    return validate_benchmark(data, origin)


def validate_benchmark(data: dict[str, Any], origin: str = "the benchmark") -> BenchmarkConfig:
    """A benchmark's mapping validated; :class:`ConfigError` naming every bad key."""
    try:
        return BenchmarkConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(f"invalid benchmark ({origin}):\n{format_errors(error)}") from None


# ----------------------------------------------------------------------------------- cells
@dataclass(frozen=True)
class Cell:
    """One run of the grid: a stream and a learner."""

    stream: str
    learner: str

    @property
    def key(self) -> tuple[str, str]:
        return self.stream, self.learner


def cells(benchmark: BenchmarkConfig) -> list[Cell]:
    """The grid, stream by stream (a partial results file covers whole streams first)."""
    return [Cell(s, learner) for s in benchmark.stream_names for learner in benchmark.learner_names]


def _parts(benchmark: BenchmarkConfig, cell: Cell) -> dict[str, Any]:
    source = benchmark.streams[benchmark.stream_names.index(cell.stream)]
    learner = benchmark.learners[benchmark.learner_names.index(cell.learner)]
    return {"source": {**source.model_dump(), "stream": cell.stream},
            "learners": [learner.model_dump()],
            "evaluation": benchmark.evaluation.model_dump()}


def cell_config(benchmark: BenchmarkConfig, cell: Cell) -> Config:
    """The configuration of one cell: ``foldstream run`` of the stream with that learner."""
    data = {**_parts(benchmark, cell), "engine": benchmark.engine.model_dump()}
    return Config.model_validate(data)


def run_config(benchmark: BenchmarkConfig, stream: str) -> dict[str, Any]:
    """The ``foldstream run`` configuration of one stream with every learner (a mapping, as
    YAML would hold it): the run whose measures records each of the stream's cells repeats."""
    first = _parts(benchmark, Cell(stream, benchmark.learner_names[0]))
    first["learners"] = [learner.model_dump() for learner in benchmark.learners]
    return {**first, "engine": benchmark.engine.model_dump()}


def cell_fingerprint(benchmark: BenchmarkConfig, cell: Cell) -> str:
    """What a cell's line was measured under: its source, learner and evaluation (not the
    other cells, nor the table's measures, nor the engine's batch size, which never changes a
    result). The keys set, not every default, as :meth:`~foldstream.job.config.Config.run_key`
    does: a version of foldstream that adds a key with a default still finds the cells
    measured before.

    >>> b = validate_benchmark({"streams": [{"kind": "generator", "model":
    ...     "river.datasets.synth.SEA", "limit": 100}], "learners": [
    ...     {"name": "nb", "model": "river.naive_bayes.GaussianNB"},
    ...     {"name": "ht", "model": "river.tree.HoeffdingTreeClassifier"}]})
    >>> c = Cell("sea", "nb")
    >>> cell_fingerprint(b, c) == cell_fingerprint(b.model_copy(update={"measures": ["f1"]}), c)
    True
    >>> cell_fingerprint(b, c) != cell_fingerprint(b, Cell("sea", "ht"))
    True
    """
    source = benchmark.streams[benchmark.stream_names.index(cell.stream)]
    learner = benchmark.learners[benchmark.learner_names.index(cell.learner)]
    what = {"source": {**source.model_dump(mode="json", exclude_defaults=True),
                       "kind": source.kind, "stream": cell.stream},
            "learner": learner.model_dump(mode="json", exclude_defaults=True),
            "evaluation": benchmark.evaluation.model_dump(mode="json", exclude_defaults=True)}
    text = json.dumps(what, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class CellResult:
    """One line of the results file: a finished cell.

    ``measures`` is the cell's last ``measures`` record, as the run wrote it; ``summary`` its
    ``summary`` record without the copy of the measures; ``cpu_time_s`` the CPU seconds of the
    process that ran it (reading the stream and evaluating included).
    """

    fingerprint: str
    stream: str
    learner: str
    examples: int
    wall_time_s: float
    cpu_time_s: float
    measures: dict[str, Any]
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return self.stream, self.learner

    @property
    def examples_per_second(self) -> float | None:
        return self.examples / self.wall_time_s if self.wall_time_s > 0 else None

    def to_json(self) -> str:
        from foldstream.operators.records.base import dumps

        return dumps(asdict(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "CellResult":
        """A results line back; ``ValueError``/``KeyError``/``TypeError`` if it is not one."""
        if not isinstance(data["measures"], dict) or not isinstance(data.get("summary", {}), dict):
            raise TypeError("not a cell's line")
        return cls(str(data["fingerprint"]), str(data["stream"]), str(data["learner"]),
                   int(data["examples"]), float(data["wall_time_s"]), float(data["cpu_time_s"]),
                   data["measures"], dict(data.get("summary", {})))


def iter_pending(benchmark: BenchmarkConfig, done: set[tuple[str, str]]) -> Iterator[Cell]:
    """The cells of the grid not in ``done``, in the grid's order."""
    return (c for c in cells(benchmark) if c.key not in done)

"""The researcher's Python API, installed as ``import foldstream``: evaluate, then read the results.

A notebook holds what a YAML file cannot: a river generator or dataset object, a list of
``(x, y)`` pairs, model objects built in the cell above. :func:`evaluate` takes those as they
are, and everything else as the configuration's own keys, so that a run from Python is a run of
``foldstream run``, record for record:

* the keywords become a :class:`~foldstream.job.config.Config` validated by the same pydantic
  models (a bad key fails as :class:`~foldstream.job.config.ConfigError` naming it);
* :func:`~foldstream.job.runner.run_configuration` runs it, the one function that runs a
  configuration for the command line too: the same engines, streams, sinks and summaries.

Python objects ride along without a new YAML kind. A learner given as a model object is an
:class:`ObjectLearner`: a learner entry that holds the object, which ``make_plans`` hands to
:class:`~foldstream.operators.stages.learner.LearnerSpec` as its ``prototype``, so every fold trains
``prototype.clone()`` and the object itself is never trained. A source given as an object is
read by :func:`~foldstream.connectors.generators.iter_dataset` and handed to the engine; the
configuration only describes it (:class:`ObjectSource`, ``kind: python``).

:class:`~foldstream.job.results.Results` holds the records in order and shows them as pandas
tables, the command line's summary tables and its figures; ``Results.to_jsonl`` writes the bytes
``foldstream run`` writes, and ``Results.from_jsonl`` reads a run's file back.
"""

from __future__ import annotations

import inspect
import os
import signal
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, SkipValidation, TypeAdapter, ValidationError, \
    model_validator

from foldstream.connectors.generators import dataset_stream
from foldstream.job.config import Config, ConfigError, EvaluationConfig, LearnerConfig, Source, \
    format_errors, jvm_options_first
from foldstream.job.results import Results, Summary
from foldstream.job.runner import run_configuration
from foldstream.operators.stages.learner import LearnerSpec, check_classifier

if TYPE_CHECKING:
    from foldstream.job.tools.benchmark.outputs import BenchmarkResults

__all__ = ["ApiConfig", "ObjectLearner", "ObjectSource", "Results", "Summary", "benchmark",
           "evaluate", "make_config", "run"]

#: The keywords of :func:`evaluate` that are not keys of the ``evaluation`` section.
RUN_KEYWORDS = ("limit", "stream", "engine", "sink", "progress")

_SOURCE_KINDS = ("file", "generator", "kafka")


# ------------------------------------------------------------------ what YAML cannot express
class ObjectSource(BaseModel):
    """A source given to :func:`evaluate` as a Python object, as the configuration records it.

    Not a YAML kind: the object itself is read by :func:`evaluate`, never by ``open_source``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["python"] = "python"
    stream: str = Field(min_length=1, description="the stream's name")
    limit: int | None = Field(None, ge=1, description="read at most this many examples")
    type: str = Field(description="the object's class, e.g. river.datasets.synth.SEA")


class ObjectLearner(LearnerConfig):
    """A learner given as a model object: ``model`` names its class, ``prototype`` is the object.

    Each fold trains ``prototype.clone()``; the object is never trained. It has no YAML form.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    prototype: Any = Field(exclude=True, description="the model object each fold clones")

    @model_validator(mode="after")
    def _builds(self) -> "ObjectLearner":  # replaces LearnerConfig's: an object, nothing to build
        check_classifier(self.prototype)
        return self


class ApiConfig(Config):
    """:class:`~foldstream.job.config.Config` whose source and learners may be Python objects.

    Both are validated one by one before (so an error names the learner), hence not again here.
    """

    source: SkipValidation[Union[Source, ObjectSource]]
    learners: list[SkipValidation[LearnerConfig]] = Field(min_length=1)


def _config_error(error: ValidationError, prefix: str = "") -> ConfigError:
    """One line per problem, each naming its key (``evaluation.folds: ...``)."""
    lines = []
    for line in format_errors(error).splitlines():
        key, _, message = line.strip().partition(": ")
        key = prefix if key == "(top level)" else ".".join(p for p in (prefix, key) if p)
        lines.append(f"{key}: {message}" if key else message)
    return ConfigError("\n".join(lines))


def _dotted(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


# ------------------------------------------------------------------------------- arguments
def _source(source: Any, limit: int | None, stream: str | None) -> tuple[Any, Iterable | None]:
    """The configuration's source section, and the object to read when it is one."""
    overrides = {k: v for k, v in (("limit", limit), ("stream", stream)) if v is not None}
    if isinstance(source, (str, os.PathLike)):
        data: Any = {"kind": "file", "path": os.fspath(source), **overrides}
    elif isinstance(source, Mapping):
        data = {**({"kind": "file"} if "path" in source else {}), **source, **overrides}
    elif isinstance(source, BaseModel):  # a model iterates over its fields: not a stream
        if getattr(source, "kind", None) not in _SOURCE_KINDS:
            raise ConfigError(f"source: a {type(source).__name__} is not a source section")
        data = {**source.model_dump(), **overrides}
    elif hasattr(source, "iterrows"):  # a DataFrame iterates over its column names
        raise ConfigError("source: a DataFrame is not a stream of examples; pass "
                          "river.stream.iter_pandas(X, y)")
    elif isinstance(source, Iterable):
        return _object_source(source, limit, stream), source
    else:
        raise ConfigError(f"source: expected a file path, a source mapping, a river dataset or "
                          f"an iterable of (x, y) pairs, got {type(source).__name__}")
    try:
        return TypeAdapter(Source).validate_python(data), None
    except ValidationError as error:
        raise _config_error(error, "source") from None


def _object_source(source: Iterable, limit: int | None, stream: str | None) -> ObjectSource:
    if limit is None and getattr(source, "n_samples", 0) is None:  # a river synthetic generator
        raise ConfigError(f"limit: {type(source).__name__} never ends; pass limit=N")
    try:
        return ObjectSource(stream=stream or dataset_stream(source), limit=limit,
                            type=_dotted(source))
    except ValidationError as error:
        raise _config_error(error, "source") from None


def _learners(learners: Any) -> list[LearnerConfig]:
    """Each learner validated on its own, so that an error names it (``learners.ht: ...``)."""
    if isinstance(learners, Mapping):
        items = [(str(name), value) for name, value in learners.items()]
    elif isinstance(learners, (list, tuple)):
        items = [(None, value) for value in learners]
    else:
        raise ConfigError(f"learners: expected a dict of name -> model (a river model object, a "
                          f"LearnerSpec or a learner mapping) or a list of LearnerSpecs or "
                          f"learner mappings, got {type(learners).__name__}")
    entries = []
    for i, (name, value) in enumerate(items):
        where = f"learners.{name if name is not None else i}"
        if isinstance(value, LearnerConfig):
            entry, given = value, value.name
        else:
            if isinstance(value, LearnerSpec):
                data = {"name": value.name, "model": value.model, "lags": value.lags,
                        **({"params": value.params, "args": value.args}
                           if value.prototype is None else {"prototype": value.prototype})}
            elif isinstance(value, Mapping):
                data = {**({"name": name} if name is not None else {}), **value}
            elif name is None:
                raise ConfigError(f"{where}: a model object needs a name; pass a dict "
                                  f"{{name: model}}")
            else:
                data = {"name": name, "model": _dotted(value), "prototype": value}
            cls = ObjectLearner if "prototype" in data else LearnerConfig
            try:
                entry = cls.model_validate(data)
            except ValidationError as error:
                raise _config_error(error, where) from None
            given = entry.name
        if name is not None and given != name:
            raise ConfigError(f"{where}: the learner is named {given!r}; use one name")
        entries.append(entry)
    return entries


def _evaluation_keywords(evaluation: dict[str, Any], function: str, takes: str) -> None:
    """Refuse the keywords of ``foldstream.<function>`` that are no key of ``evaluation``
    (``takes``: its other keywords, named in the message), and turn a window given by its
    kind's name into its section, in place."""
    unknown = [k for k in evaluation if k not in EvaluationConfig.model_fields]
    if unknown:
        raise ConfigError(f"{', '.join(unknown)}: not a keyword of foldstream.{function}; it "
                          f"takes {takes} and the keys of evaluation: "
                          f"{', '.join(EvaluationConfig.model_fields)}")
    if isinstance(evaluation.get("window"), str):
        evaluation["window"] = _section(evaluation["window"])


def _section(value: Any, kind: str | None = None) -> Any:
    """A section given by its kind alone (``engine="flink"``) or in the configuration's form;
    ``kind``: the one a mapping without a kind gets (a sink with a ``path`` is a file)."""
    if isinstance(value, str):
        return {"kind": value}
    if kind is not None and isinstance(value, Mapping) and "kind" not in value:
        return {"kind": kind, **value}
    return value


def make_config(source: Any, learners: Any, *, limit: int | None = None,
                stream: str | None = None, engine: Any = None, sink: Any = None,
                **evaluation: Any) -> tuple[Config, Iterable | None]:
    """The validated configuration of an :func:`evaluate` call, and its source object if any.

    The arguments are those of :func:`evaluate`. ``sink=None`` leaves the configuration's
    default sink, which :func:`evaluate` then does not open.

    Raises
    ------
    ConfigError
        Naming every offending key, as ``foldstream validate`` does.
    """
    _evaluation_keywords(evaluation, "evaluate", ", ".join(RUN_KEYWORDS))
    config_source, source_object = _source(source, limit, stream)
    if engine is not None:  # before the learners: a MOA learner's check starts the JVM
        jvm_options_first({"engine": _section(engine)})
    data: dict[str, Any] = {"source": config_source, "learners": _learners(learners),
                            "evaluation": evaluation}
    if engine is not None:
        data["engine"] = _section(engine)
    if sink is not None:
        data["sink"] = _section(sink, "file")
    try:
        return ApiConfig.model_validate(data), source_object
    except ValidationError as error:
        raise _config_error(error) from None


# ---------------------------------------------------------------------------------- running
def evaluate(source: Any, learners: Any, *, limit: int | None = None, stream: str | None = None,
             engine: Any = None, sink: Any = None, progress: bool = False,
             **evaluation: Any) -> Results:
    """Evaluate learners on a stream, k folds each, as ``foldstream run`` does (docs/method.md).

    Parameters
    ----------
    source : path, mapping, source model, river dataset or iterable of (x, y)
        A CSV, ARFF or JSON Lines file (``.gz`` too; label column ``target``, the file's name
        as the stream); a mapping or model of the configuration's ``source`` section
        (``{"path": "data.csv", "label": "class"}``, ``{"kind": "generator", ...}``); a river
        dataset or generator object (``river.datasets.synth.SEA(seed=1)``: stream ``sea``);
        or any iterable of ``(x, y)`` pairs (stream ``stream``), where an item that is not
        such a pair, or has the label ``None``, becomes a rejected record.
    learners : dict or list
        ``{name: model}`` where a model is a river model object (each fold trains a
        ``clone()``; the object is left untouched), a
        :class:`~foldstream.operators.stages.learner.LearnerSpec` or a learner mapping of the
        configuration (``{"model": "river.tree.HoeffdingTreeClassifier", "params": {...}}``);
        or a list of LearnerSpecs or learner mappings with their ``name``.
    limit : int, optional
        Read at most this many examples (the source's ``limit``); required for a generator.
    stream : str, optional
        The stream's name (the source's ``stream``).
    engine : str or mapping, optional
        The ``engine`` section, or its kind alone: ``"inprocess"`` (default) or ``"flink"``.
    sink : str or mapping, optional
        The ``sink`` section, or its kind: also write the records there as ``foldstream run``
        does (``{"kind": "file", "path": "out/m.jsonl"}``). Default: nowhere, they are returned.
    progress : bool
        Draw the command line's progress bar (on standard error).
    **evaluation
        Any key of the configuration's ``evaluation`` section, in its form there (the signature
        shows them with their defaults): ``mode``, ``folds``, ``seed``, ``report_every``,
        ``compare``, ``alarms={...}``, ... ``window`` also takes a kind alone (``"cumulative"``).

    Returns
    -------
    Results
        Every record, in the order the command line writes them.

    Raises
    ------
    ConfigError
        Before anything is read, naming the offending key (``evaluation.folds: ...``).
    KeyboardInterrupt
        On Ctrl-C (in-process engine, main thread): after the records so far and an interrupted
        summary are written to ``sink``; a second Ctrl-C does not wait for a stuck learner
        (job/engines/stopping.py). Its ``exit_code`` is 130.

    Examples
    --------
    >>> import foldstream
    >>> from river import naive_bayes, tree
    >>> from river.datasets import synth
    >>> nb = naive_bayes.GaussianNB()
    >>> results = foldstream.evaluate(synth.SEA(seed=1), {"nb": nb, "ht": tree.HoeffdingTreeClassifier()},
    ...                               limit=600, folds=3, report_every=300)
    >>> results
    Results(10 records, 0 rejected; stream sea; learners nb, ht)
    >>> results.measures("accuracy")[["position", "learner", "mean"]].round(3)
       position learner   mean
    0       300      nb  0.893
    1       300      ht  0.923
    2       600      nb  0.904
    3       600      ht  0.908
    >>> len(nb.gaussians)  # the object given was never trained: each fold trained a clone
    0
    >>> foldstream.evaluate(synth.SEA(), {"nb": nb}, limit=10, folds=0)
    Traceback (most recent call last):
    foldstream.job.config.ConfigError: evaluation.folds: Input should be greater than or equal to 1
    """
    config, source_object = make_config(source, learners, limit=limit, stream=stream,
                                        engine=engine, sink=sink, **evaluation)
    return run(config, source_object, write=sink is not None, progress=progress)


def run(config: Config, source: Iterable | None = None, *, write: bool = False,
        progress: bool = False) -> Results:
    """Run a validated configuration and keep its records; :func:`evaluate` without keywords.

    Parameters
    ----------
    config : Config
        E.g. from :func:`~foldstream.job.config.load_config` or :func:`make_config`.
    source : iterable, optional
        The source object of an ``ObjectSource`` (its ``limit`` and ``stream`` applied here);
        ``None``: the configured source, opened by ``open_source``.
    write : bool
        Also write the records to the configured sink, as ``foldstream run`` does.
    progress : bool
        Draw the progress bar on standard error.

    Raises
    ------
    Interrupted
        Ctrl-C (a ``KeyboardInterrupt``): after the records so far and an interrupted summary.
    """
    # Ctrl-C stops the run (its records so far, an interrupted summary), then raises; SIGTERM
    # is left to Python (a notebook's kernel is ended by it)
    outcome = run_configuration(config, source, write=write, keep=True, progress=progress,
                                signals=(signal.SIGINT,))
    outcome.raise_if_interrupted()
    return Results(outcome.records, outcome.rejected, config=config)


def _signature() -> inspect.Signature:
    """:func:`evaluate`'s signature with the ``evaluation`` keys and their defaults, from the
    model, for ``help()`` and a notebook's completion."""
    base = inspect.signature(evaluate)
    params = [p for p in base.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    keys = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                              default=info.get_default(call_default_factory=True))
            for name, info in EvaluationConfig.model_fields.items()]
    return base.replace(parameters=params[:2] + keys + params[2:])


evaluate.__signature__ = _signature()  # type: ignore[attr-defined]


# -------------------------------------------------------------------------------- benchmark
def benchmark(streams: Any, learners: Any, *, limit: int | None = None,
              measures: Sequence[str] | None = None, engine: Any = None, workers: int = 1,
              results: str | os.PathLike | None = None, progress: bool = False,
              **evaluation: Any) -> "BenchmarkResults":
    """Several learners on many streams with one evaluation, as ``foldstream benchmark`` runs
    them (docs/benchmark.md): each (stream, learner) an ordinary run, compared over the streams.

    Parameters
    ----------
    streams : list or dict
        Source sections (a file path, a mapping or model of the configuration's ``source``
        section, of kind file or generator), or ``{name: source}`` (the name becomes the
        stream's ``stream``).
    learners : dict or list
        As :func:`evaluate` takes them, but for model objects (a benchmark's cells run in
        processes of their own, from the configuration): ``{name: learner mapping}``, a list
        of learner mappings or :class:`~foldstream.operators.stages.learner.LearnerSpec`.
    limit : int, optional
        The examples read from each stream that has no ``limit`` of its own.
    measures : list of str, optional
        The measures of the tables (default ``accuracy`` and ``kappa_m``); the first is ranked.
    engine : str or mapping, optional
        The in-process engine's section (batch size, MOA's JVM options).
    workers : int
        Processes running the cells.
    results : path, optional
        The resumable results file (a cell found there is not run again); default: none kept.
    progress : bool
        A progress bar over the cells, on standard error.
    **evaluation
        Any key of the ``evaluation`` section, as :func:`evaluate` takes them.

    Returns
    -------
    BenchmarkResults
        The tables as pandas (``comparison``, ``ranks``, ``tests``, ``holm``, ``cost``), the
        figures (``cd_figure()``, ``streams_figure()``) and the files (``write(out)``).

    Raises
    ------
    ConfigError
        Before anything runs, naming the offending key.
    KeyboardInterrupt
        On Ctrl-C, after the cells finished so far were written to ``results``.

    Examples
    --------
    >>> import foldstream
    >>> sea = {"kind": "generator", "model": "river.datasets.synth.SEA"}
    >>> b = foldstream.benchmark({"sea1": {**sea, "seed": 1}, "sea2": {**sea, "seed": 2},
    ...                           "sea3": {**sea, "seed": 3}},
    ...                          {"nb": {"model": "river.naive_bayes.GaussianNB"},
    ...                           "ht": {"model": "river.tree.HoeffdingTreeClassifier"}},
    ...                          limit=300, folds=3, report_every=300)
    >>> b
    BenchmarkResults(6 of 6 cells; streams sea1, sea2, sea3; learners nb, ht)
    >>> list(b.comparison.columns[:4])
    ['stream', 'learner', 'accuracy_mean', 'accuracy_sd']
    >>> b.ranks.index.tolist(), b.tests.loc["accuracy", "streams"]
    (['nb', 'ht'], np.int64(3))
    """
    import tempfile

    from foldstream.job.tools.benchmark import run_benchmark, validate_benchmark
    from foldstream.job.tools.benchmark.outputs import Provenance, results_of

    _evaluation_keywords(evaluation, "benchmark",
                         "limit, measures, engine, workers, results, progress")
    named = streams.items() if isinstance(streams, Mapping) else \
        ((None, s) for s in streams) if isinstance(streams, (list, tuple)) else None
    if named is None:
        raise ConfigError(f"streams: expected a list of sources or a dict of name -> source, "
                          f"got {type(streams).__name__}")
    sections = []
    for i, (name, stream) in enumerate(named):
        where = f"streams.{name if name is not None else i}"
        own = stream.get("limit") if isinstance(stream, Mapping) else getattr(stream, "limit", None)
        try:
            source, source_object = _source(stream, limit if own is None else None,
                                            None if name is None else str(name))
        except ConfigError as error:
            raise ConfigError("\n".join(where + line.removeprefix("source")
                                         if line.startswith("source") else line
                                         for line in str(error).splitlines())) from None
        if source_object is not None:
            raise ConfigError(f"{where}: a benchmark reads "
                              f"its streams in processes of their own; give a file path or a "
                              f"source mapping (kind file or generator)")
        sections.append(source.model_dump(exclude_unset=True)
                        | {"kind": source.kind, **({"stream": str(name)} if name else {})})
    entries = _learners(learners)
    for entry in entries:
        if isinstance(entry, ObjectLearner):
            raise ConfigError(f"learners.{entry.name}: a benchmark builds its learners in "
                              f"processes of their own; give a learner mapping ({{'model': "
                              f"'{entry.model}', 'params': {{...}}}})")
    data: dict[str, Any] = {"streams": sections,
                            "learners": [e.model_dump(exclude_unset=True) for e in entries],
                            "evaluation": evaluation, "limit": limit}
    if measures is not None:
        data["measures"] = list(measures)
    if engine is not None:
        data["engine"] = _section(engine)
    config = validate_benchmark(data, "foldstream.benchmark")
    with tempfile.TemporaryDirectory(prefix="foldstream-benchmark-") as scratch:
        path = results if results is not None else os.path.join(scratch, "results.jsonl")
        done = run_benchmark(config, path, workers=workers, progress=progress)
    if done.interrupted is not None:
        from foldstream.job.engines.stopping import Interrupted

        raise Interrupted(signal.SIGINT)
    return results_of(config, done.results,
                      Provenance.now(config, "foldstream.benchmark(...)", done.results))

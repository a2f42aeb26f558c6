"""The researcher's Python API, installed as ``import foldstream``: evaluate, then read the results.

A notebook holds what a YAML file cannot: a river generator or dataset object, a list of
``(x, y)`` pairs, model objects built in the cell above. :func:`evaluate` takes those as they
are, and everything else as the configuration's own keys, so that a run from Python is a run of
``foldstream run``, record for record:

* the keywords become a :class:`~foldstream.job.config.Config` validated by the same pydantic
  models (a bad key fails as :class:`~foldstream.job.config.ConfigError` naming it);
* the stages come from :func:`~foldstream.job.plans.make_plans`, a configured source is opened
  by :func:`~foldstream.job.plans.open_source`, and the in-process engine or the Flink job runs
  them, as the command line does.

Python objects ride along without a new YAML kind. A learner given as a model object is an
:class:`ObjectLearner`: a learner entry that holds the object, which ``make_plans`` hands to
:class:`~foldstream.operators.learners.LearnerSpec` as its ``prototype``, so every fold trains
``prototype.clone()`` and the object itself is never trained. A source given as an object is
read by :func:`~foldstream.connectors.generators.iter_dataset` and handed to the engine; the
configuration only describes it (:class:`ObjectSource`, ``kind: python``).

:class:`Results` holds the records in order and shows them as pandas tables, the command
line's summary tables (:mod:`foldstream.job.tools.tables`) and its figures
(:mod:`foldstream.job.tools.plot`); :meth:`Results.to_jsonl` writes the bytes ``foldstream run``
writes, and :meth:`Results.from_jsonl` reads a run's file back.
"""

from __future__ import annotations

import inspect
import io
import os
import signal
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, SkipValidation, TypeAdapter, ValidationError, \
    model_validator

from foldstream.job.config import Config, ConfigError, EvaluationConfig, LearnerConfig, Source, \
    format_errors, jvm_options_first
from foldstream.operators.learners import LearnerSpec, check_classifier
from foldstream.operators.records import Record

#: The keywords of :func:`evaluate` that are not keys of the ``evaluation`` section.
RUN_KEYWORDS = ("limit", "stream", "engine", "sink", "progress")

_SOURCE_KINDS = ("file", "generator", "kafka")
_SUMMARY_TIMING = ("wall_time_s", "examples_per_second")


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
    from foldstream.connectors.generators import dataset_stream

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
    unknown = [k for k in evaluation if k not in EvaluationConfig.model_fields]
    if unknown:
        raise ConfigError(f"{', '.join(unknown)}: not a keyword of foldstream.evaluate; it takes "
                          f"{', '.join(RUN_KEYWORDS)} and the keys of evaluation: "
                          f"{', '.join(EvaluationConfig.model_fields)}")
    if isinstance(evaluation.get("window"), str):
        evaluation["window"] = _section(evaluation["window"])
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
             **evaluation: Any) -> "Results":
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
        :class:`~foldstream.operators.learners.LearnerSpec` or a learner mapping of the
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
        progress: bool = False) -> "Results":
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
    """
    from rich.console import Console

    from foldstream.connectors.sinks import MemorySink
    from foldstream.job.plans import expected_examples, make_plans, open_source
    from foldstream.job.tools.tables import progress_bar

    if source is not None:
        from foldstream.connectors.generators import iter_dataset

        from foldstream.job.plans import with_delay

        items = with_delay(config, iter_dataset(source, config.source.limit, config.source.stream))
        total = config.source.limit or getattr(source, "n_samples", None) or _length(source)
    else:
        items, total = None, expected_examples(config)
    kept, kept_rejected = MemorySink(), MemorySink()  # the records as JSON holds them
    sinks = [kept]
    dead_sinks = [kept_rejected]
    if write:
        from foldstream.job.cli import _open_sinks  # the command line's sinks, the same way

        written, written_rejected = _open_sinks(config)
        sinks.append(written)
        dead_sinks.append(written_rejected)

    def emit(record: Record) -> None:
        for sink in sinks:
            sink.write(record)

    def dead_letter(record: Record) -> None:
        for sink in dead_sinks:
            sink.write(record)

    try:
        with progress_bar(total, progress, Console(stderr=True)) as update:
            if config.engine.kind == "flink":
                from foldstream.job.engines.flink import job as flink_job

                flink_job.run(config, emit, dead_letter, update, source=items)
            else:
                from foldstream.job.engines.inprocess import evaluate as run_inprocess

                # Ctrl-C stops the run (its records so far, an interrupted summary), then raises
                result = run_inprocess(make_plans(config),
                                       items if items is not None else open_source(config),
                                       emit, dead_letter, update, stop_on_signals=True,
                                       signals=(signal.SIGINT,))
                if result.interrupted is not None:
                    from foldstream.job.engines.stopping import Interrupted

                    raise Interrupted(result.interrupted)
    finally:
        for sink in sinks[1:] + dead_sinks[1:]:
            sink.close()
    return Results(kept.records, kept_rejected.records, config=config)


def _length(source: Any) -> int | None:
    try:
        return len(source)
    except TypeError:
        return None


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


# ---------------------------------------------------------------------------------- results
@dataclass(repr=False)
class Summary:
    """The command line's final tables (:func:`foldstream.job.tools.tables.print_summary`).

    It prints with rich in a terminal (``rich.print(summary)``), as plain text with ``print``,
    and as HTML in Jupyter.
    """

    summaries: list[Record]
    last_comparisons: dict[str, list[Record]]

    def _console(self, width: int, **options: Any):
        from rich.console import Console

        from foldstream.job.tools.tables import print_summary

        console = Console(file=io.StringIO(), width=width, record=True, **options)
        if self.summaries:
            print_summary(console, self.summaries, self.last_comparisons)
        else:
            console.print("no summary record: the run has not ended")
        return console

    def __rich_console__(self, console, options):
        from rich.text import Text

        rendered = self._console(options.max_width, force_terminal=True,
                                 color_system=console.color_system or "standard")
        yield Text.from_ansi(rendered.file.getvalue())

    def __str__(self) -> str:
        return self._console(120, color_system=None).export_text()

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return self._console(120).export_html(inline_styles=True, code_format=(
            '<pre style="font-family:Menlo,\'DejaVu Sans Mono\',monospace;font-size:90%">'
            "<code>{code}</code></pre>"))


@dataclass(repr=False)
class Results:
    """The records of a run, in order, with tables and figures made from them.

    Attributes
    ----------
    records : list of dict
        The output records (docs/method.md §10) as the command line writes them, JSON values.
    rejected : list of dict
        The ``rejected`` records (dead letters): input that could not become an example.
    skipped : int
        :meth:`from_jsonl`: lines that were not records of the contract, left out.
    config : Config or None
        The configuration of the run (``None`` when read back from a file).
    """

    records: list[Record]
    rejected: list[Record] = field(default_factory=list)
    skipped: int = 0
    config: Config | None = None

    def __repr__(self) -> str:
        streams = list(dict.fromkeys(str(r.get("stream")) for r in self.records))
        learners = list(dict.fromkeys(r.get("learner") for r in self._of("measures")))
        skipped = f", {self.skipped} skipped" if self.skipped else ""
        return (f"Results({len(self.records)} records, {len(self.rejected)} rejected{skipped}; "
                f"stream{'s' if len(streams) != 1 else ''} {', '.join(streams) or '-'}; "
                f"learners {', '.join(learners) or '-'})")

    def _of(self, kind: str) -> list[Record]:
        from foldstream.job.tools.records import of_type

        return list(of_type(self.records, kind))

    # -- tables
    def measures(self, measure: str | Sequence[str] | None = None):
        """The ``measures`` records as a tidy table: one row per stream, position, learner and
        measure.

        Parameters
        ----------
        measure : str or sequence of str, optional
            Keep these measures only (default: all, e.g. ``accuracy``, ``kappa_m``,
            ``recall[<label>]``).

        Returns
        -------
        pandas.DataFrame
            Columns ``stream``, ``position``, ``learner``, ``measure``, ``mean``, ``std``
            (over folds, ``NaN`` where undefined) and ``fold_0`` ... ``fold_<k-1>``, the value
            of each fold.

        Raises
        ------
        ValueError
            When no record holds a measure asked for.
        """
        import pandas as pd

        wanted = [measure] if isinstance(measure, str) else None if measure is None else list(measure)
        rows, folds, seen = [], 0, set()
        for record in self._of("measures"):
            for name, value in record["values"].items():
                seen.add(name)
                if wanted is not None and name not in wanted:
                    continue
                folds = max(folds, len(value["folds"]))
                rows.append({"stream": record["stream"], "position": record["position"],
                             "learner": record["learner"], "measure": name, "mean": value["mean"],
                             "std": value["std"],
                             **{f"fold_{i}": v for i, v in enumerate(value["folds"])}})
        missing = [m for m in wanted or () if m not in seen]
        if missing:
            raise ValueError(f"no measure {', '.join(map(repr, missing))} in the records; they "
                             f"hold {', '.join(sorted(seen)) or 'no measures record'}")
        fold_columns = [f"fold_{i}" for i in range(folds)]
        columns = ["stream", "position", "learner", "measure", "mean", "std"]
        return _frame(pd, rows, columns + fold_columns, ["mean", "std", *fold_columns])

    def comparisons(self):
        """The ``comparison`` records as a table: one row per stream, position, measure and
        pair of learners.

        Returns
        -------
        pandas.DataFrame
            ``stream``, ``position``, ``measure``, ``a``, ``b``, ``alpha``; the Wilcoxon
            signed-rank test over folds (``wilcoxon_statistic``, ``wilcoxon_p``,
            ``wilcoxon_reject``); the sign test (``wins_a``, ``wins_b``, ``ties``, ``sign_p``,
            ``sign_reject``); McNemar's example-based test (``mcnemar_statistic``,
            ``mcnemar_p``, ``mcnemar_reject``); the Q statistic (``q``, ``< 0`` favours a);
            and the verdict of the fold tests as the summary tables word it (``better``: the
            better learner or ``None``, ``verdict``: the text), by
            :func:`foldstream.operators.verdicts.fold_verdict`. With live verdicts on
            (docs/method.md §12), the ``accuracy`` rows add the confidence sequence:
            ``sequential_lower``, ``sequential_upper`` (an interval for error(a) - error(b),
            valid at every report at once), ``sequential_alpha`` and ``sequential_verdict``
            (``a_better``, ``b_better``, ``undecided``); other rows leave them empty. With
            regime verdicts on (§15) they add ``regime_segment``, ``regime_since``, ``regime_n``,
            ``regime_lower``, ``regime_upper``, ``regime_alpha``, ``regime_verdict``: the same
            over the examples since the comparison last changed. What each covers, in words:
            ``scope`` (the fold tests), ``sequential_scope`` and ``regime_scope``; and
            ``disagreement``, one sentence when these point different ways (else ``None``).
            Older files without these fields leave them empty.
        """
        import pandas as pd

        from foldstream.operators.verdicts import fold_scope_text, fold_verdict, \
            live_scope_text, scope_disagreement

        latest: dict[tuple[Any, str], Record] = {}  # (stream, learner) -> its last measures
        rows = []
        for record in self.records:
            if record.get("type") == "measures":
                latest[record["stream"], record["learner"]] = record
            if record.get("type") != "comparison":
                continue
            w, s, m = record["wilcoxon"], record["sign"], record["mcnemar"]
            measures = {learner: measures for (stream, learner), measures in latest.items()
                        if stream == record["stream"]}
            verdict = fold_verdict(record, measures)
            sequential = record.get("sequential") or {}
            regime = sequential.get("regime") or {}
            rows.append({
                "stream": record["stream"], "position": record["position"],
                "measure": record["measure"], "a": record["a"], "b": record["b"],
                "alpha": record["alpha"], "wilcoxon_statistic": w["statistic"],
                "wilcoxon_p": w["p_value"], "wilcoxon_reject": w["reject"],
                "wins_a": s["wins_a"], "wins_b": s["wins_b"], "ties": s["ties"],
                "sign_p": s["p_value"], "sign_reject": s["reject"],
                "mcnemar_statistic": m["statistic"], "mcnemar_p": m["p_value"],
                "mcnemar_reject": m["reject"], "q": record["q"]["value"],
                "better": verdict.better, "verdict": verdict.text,
                **{f"sequential_{key}": sequential.get(key) for key in _SEQUENTIAL},
                **{f"regime_{key}": regime.get(key) for key in _REGIME},
                "scope": fold_scope_text(record.get("scope")),
                "sequential_scope": live_scope_text(sequential.get("n")),
                "regime_scope": live_scope_text(regime.get("n"), regime.get("since"),
                                                regime.get("segment"), "regime"),
                "disagreement": scope_disagreement(record, measures),
            })
        columns = ["stream", "position", "measure", "a", "b", "alpha", "wilcoxon_statistic",
                   "wilcoxon_p", "wilcoxon_reject", "wins_a", "wins_b", "ties", "sign_p",
                   "sign_reject", "mcnemar_statistic", "mcnemar_p", "mcnemar_reject", "q",
                   "better", "verdict", *(f"sequential_{key}" for key in _SEQUENTIAL),
                   *(f"regime_{key}" for key in _REGIME), "scope", "sequential_scope",
                   "regime_scope", "disagreement"]
        return _frame(pd, rows, columns, ["wilcoxon_statistic", "wilcoxon_p", "sign_p",
                                          "mcnemar_statistic", "mcnemar_p", "q",
                                          "sequential_lower", "sequential_upper",
                                          "sequential_alpha", "regime_lower", "regime_upper",
                                          "regime_alpha"])

    def verdicts(self):
        """The ``verdict`` records as a table: each change of a pair's live verdict
        (docs/method.md §12, §15).

        Returns
        -------
        pandas.DataFrame
            ``stream``, ``position``, ``a``, ``b``, ``measure``, ``verdict``, ``previous``,
            ``lower``, ``upper``, ``n``, ``alpha``: the first report at which the verdict
            became ``verdict`` (valid however often the reports were read); ``scope``
            (``stream``: every example so far; ``regime``: since the comparison last changed;
            older files: ``stream``), ``since`` (the first position covered), ``segment``
            (of a regime verdict) and ``covers``, the scope in words.
        """
        import pandas as pd

        from foldstream.operators.verdicts import live_scope_text

        columns = ["stream", "position", "a", "b", "measure", "verdict", "previous", "lower",
                   "upper", "n", "alpha", "scope", "since", "segment", "covers"]
        rows = []
        for r in self._of("verdict"):
            row = {c: r.get(c) for c in columns}
            row["scope"] = r.get("scope", "stream")
            row["covers"] = live_scope_text(r.get("n"), r.get("since"), r.get("segment"),
                                            row["scope"])
            rows.append(row)
        return _frame(pd, rows, columns, ["lower", "upper", "alpha"])

    def drifts(self):
        """The ``drift`` records as a table: changes the folds agree on (docs/method.md §16).

        Returns
        -------
        pandas.DataFrame
            ``stream``, ``position``, ``learner``, ``detector``, ``quantity``, ``folds`` (the
            agreeing folds), ``first`` (the earliest of their alarms); empty for a file
            without drift records.
        """
        import pandas as pd

        columns = ["stream", "position", "learner", "detector", "quantity", "folds", "first"]
        return _frame(pd, [{c: r[c] for c in columns} for r in self._of("drift")], columns, [])

    def alarms(self):
        """The ``alarm`` records as a table.

        Returns
        -------
        pandas.DataFrame
            ``stream``, ``position``, ``learner``, ``fold`` (from 0), ``detector``
            (``adwin``, ``page_hinkley``) and ``quantity`` (the watched loss).
        """
        import pandas as pd

        columns = ["stream", "position", "learner", "fold", "detector", "quantity"]
        return _frame(pd, [{c: r[c] for c in columns} for r in self._of("alarm")], columns, [])

    def summary(self) -> Summary:
        """The command line's final tables: per stream, the headline measures at the end and the
        paired tests of the last report (:mod:`foldstream.job.tools.tables`)."""
        last: dict[str, list[Record]] = {}
        for record in self._of("comparison"):  # the comparisons of each stream's last report
            kept = last.setdefault(record["stream"], [])
            if kept and kept[0]["position"] != record["position"]:
                kept.clear()
            kept.append(record)
        return Summary(self._of("summary"), last)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    # -- figures
    def plot(self, measures: Sequence[str] | str = ("accuracy", "kappa_m"), out=None,
             formats: Sequence[str] = ("png",)) -> dict[str, Any]:
        """The figures of ``foldstream plot``, per stream (:mod:`foldstream.job.tools.plot`).

        Parameters
        ----------
        measures : sequence of str
            The measures that get a figure of their own (along the stream, mean over folds
            with the folds' band, alarms below).
        out : path, optional
            Also write every figure there as ``<stem>.<format>``, as ``foldstream plot`` does.
        formats : sequence of str
            ``png``, ``svg``, ``pdf``.

        Returns
        -------
        dict of str to matplotlib.figure.Figure
            By file stem: ``<stream>-<measure>``, ``<stream>-window_size``,
            ``<stream>-pvalues`` (two or more learners), ``<stream>-verdicts`` (live verdicts
            on), ``<stream>-cd-<measure>`` (three or more). In Jupyter, ``display(figure)`` shows one.

        Raises
        ------
        ValueError
            Without ``measures`` records, or on an unknown format.
        """
        from foldstream.job.tools.plot import save_figures, stream_figures
        from foldstream.job.tools.records import group_by_stream

        measures = [measures] if isinstance(measures, str) else list(measures)
        streams = group_by_stream(self.records)
        if not streams:
            raise ValueError("no measures records to plot")
        figures = {stem: figure for data in streams.values()
                   for stem, figure in stream_figures(data, measures).items()}
        if out is not None:
            save_figures(figures, out, formats)
        return figures

    # -- files
    def to_jsonl(self, path, rejected=None) -> Path:
        """Write the records as ``foldstream run`` writes its metrics file, byte for byte
        (:func:`foldstream.operators.records.dumps`); ``rejected``: also the dead letters there.
        Returns the path."""
        from foldstream.connectors.sinks import JsonLinesSink

        for target, records in ((path, self.records), (rejected, self.rejected)):
            if target is not None:
                with JsonLinesSink(target) as sink:
                    for record in records:
                        sink.write(record)
        return Path(path)

    @classmethod
    def from_jsonl(cls, path) -> "Results":
        """Read a run's records back: a metrics file (``.gz`` too), or ``kafka://HOST:PORT/TOPIC``.

        A line that is not a record of the contract (not JSON, or not valid against the JSON
        Schema of ``foldstream schema``) is left out and counted in :attr:`skipped`;
        ``rejected`` records go to :attr:`rejected`.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     metrics = Path(folder) / "m.jsonl"
        ...     _ = metrics.write_text('not json\\n{"type": "alarm"}\\n{"schema":1,"type":"alarm",'
        ...         '"stream":"s","position":3,"learner":"ht","fold":0,"detector":"adwin",'
        ...         '"quantity":"loss"}\\n')
        ...     results = Results.from_jsonl(metrics)
        >>> results.skipped, results.alarms()[["position", "learner", "detector"]].values.tolist()
        (2, [[3, 'ht', 'adwin']])
        """
        from foldstream.job.tools.records import RecordError, RecordReader
        from foldstream.job.tools.schema import validate_record

        reader = RecordReader(path)
        decoded = list(reader)
        skipped = reader.skipped
        records: list[Record] = []
        rejected: list[Record] = []
        for record in decoded:
            try:
                validate_record(record)
            except RecordError:
                skipped += 1
                continue
            (rejected if record["type"] == "rejected" else records).append(record)
        return cls(records, rejected, skipped=skipped)


_SEQUENTIAL = ("lower", "upper", "alpha", "verdict")
_REGIME = ("segment", "since", "n", "lower", "upper", "alpha", "verdict")


def _frame(pd, rows: list[dict[str, Any]], columns: list[str], numeric: list[str]):
    """A DataFrame of ``rows`` with these columns (also when empty); JSON ``null`` in the
    numeric ones becomes ``NaN``."""
    frame = pd.DataFrame(rows, columns=columns)
    for column in numeric:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    return frame

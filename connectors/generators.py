"""Synthetic streams from river's generators (docs/method.md §11, ``source.kind: generator``).

A generator is named by its dotted path and built with keyword parameters, e.g.
``river.datasets.synth.SEA`` with ``{"variant": 1}``. A parameter given as a mapping with a
``model`` key is built the same way, which is how ``ConceptDriftStream`` gets its two streams::

    params = {"stream": {"model": "river.datasets.synth.SEA", "params": {"variant": 0}},
              "drift_stream": {"model": "river.datasets.synth.SEA", "params": {"variant": 1}},
              "position": 5000, "width": 1000}
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from foldstream.connectors.rows import Reject, unexpected
from foldstream.operators.stats.measures import positive_code
from foldstream.operators.learners.models import (
    DATASET, ModelKind, Parameter, Spec, SpecError, check_param, join_key, resolve_at, signature
)
from foldstream.operators.records.base import Example, Rejected, plain

# river's task names of the generators that have class labels (river.datasets.base).
_CLASSIFICATION_TASKS = ("Binary classification", "Multi-class classification")
_NESTED_KEYS = {"model", "params", "seed"}


def iter_generator(model: str, params: Mapping[str, Any] | None, seed: int | None, limit: int,
                   stream: str | None = None, class_ratio: "ClassRatio | None" = None
                   ) -> Iterator[Example]:
    """Yield ``limit`` examples of a river synthetic generator.

    Parameters
    ----------
    model : str
        Dotted path of the generator class, e.g. ``river.datasets.synth.SEA``.
    params : mapping or None
        Keyword arguments of the class; a value that is a mapping with a ``model`` key (and
        optional ``params``, ``seed``) is itself built as a generator.
    seed : int or None
        Passed as every ``seed`` or ``seed_*`` parameter (``RandomRBF`` has ``seed_model`` and
        ``seed_sample``) not already in ``params``; nested generators inherit it unless they
        give their own. Ignored by a class that has no seed parameter.
    limit : int
        Number of examples; required, since the generators never end.
    stream : str, optional
        Stream name; default the class name lower-cased (``sea``).
    class_ratio : ClassRatio, optional
        A schedule of class ratios the examples are drawn to (:func:`with_class_ratio`).

    Yields
    ------
    Example
        Feature names are turned into ``str`` (river numbers them ``0, 1, ...``); values and
        labels are kept as river yields them, numpy scalars turned into Python ones. ``key`` is
        left ``None`` (the position) and ``location`` is ``"<stream>#<n>"``.

    Raises
    ------
    ValueError
        On a missing or negative ``limit``, an unknown class, bad parameters, or a generator
        that is not a classification stream. Raised at call time, before the first example.
    """
    if limit is None or isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"a generator never ends: `limit` must be an integer >= 0, got {limit!r}")
    dataset = make_generator(model, params, seed)
    if class_ratio is None:
        return iter_dataset(dataset, limit, stream)
    return _examples(with_class_ratio(dataset, class_ratio, seed), stream or
                     dataset_stream(dataset), limit)


class ClassRatio(NamedTuple):
    """A schedule of class ratios (``source.class_ratio``): ``ratios[0]`` from the first
    example, ``ratios[i]`` from example ``positions[i - 1]`` on (positions increasing, from 1),
    each a weight per label of ``classes``; ``seed`` draws the classes (``None``: the source's);
    at most ``max_draws`` items of the generator are read for one example."""

    classes: tuple
    ratios: tuple[tuple[float, ...], ...]
    positions: tuple[int, ...] = ()
    seed: int | None = None
    max_draws: int = 100_000


def with_class_ratio(dataset: Iterable, schedule: ClassRatio, seed: int | None = None
                     ) -> Iterator[tuple[Any, Any]]:
    """The items of ``dataset`` with their classes in the ratios of ``schedule``, by rejection
    sampling (docs/method.md §19).

    For the ``n``-th example, the ratios in force at ``n`` give a probability per class; a
    class is drawn from them (numpy's PCG64, seeded by ``schedule.seed``, else ``seed``, else
    0: the same draws every run), then the generator's items are read in order, and those of
    another class discarded, until one of that class comes. Within a segment the examples are
    those of the generator conditioned on their class, in the chosen proportions. A class the
    generator does not yield within ``max_draws`` items ends the stream with an error naming it.

    >>> items = [({"i": i}, i % 2) for i in range(1000)]
    >>> drawn = list(itertools.islice(with_class_ratio(items, ClassRatio((0, 1), ((1, 0),))), 5))
    >>> [y for _, y in drawn], [x["i"] for x, _ in drawn]
    ([0, 0, 0, 0, 0], [0, 2, 4, 6, 8])
    """
    labels = list(schedule.classes)
    weights = np.asarray(schedule.ratios, dtype=np.float64)
    probabilities = weights / weights.sum(axis=1, keepdims=True)
    draw_seed = schedule.seed if schedule.seed is not None else (seed if seed is not None else 0)
    rng = np.random.Generator(np.random.PCG64(int(draw_seed) & 0xFFFFFFFFFFFFFFFF))
    items = iter(dataset)
    segment = 0
    for n in itertools.count(1):
        while segment < len(schedule.positions) and n >= schedule.positions[segment]:
            segment += 1
        wanted = int(rng.choice(len(labels), p=probabilities[segment]))
        for _ in range(schedule.max_draws):
            item = next(items, None)
            if item is None:
                return
            if _same_label(item[1], labels[wanted]):
                yield item
                break
        else:
            raise ValueError(f"source.class_ratio: no example of class {labels[wanted]!r} in "
                             f"{schedule.max_draws} items of the generator (example {n})")


def _same_label(y: Any, label: Any) -> bool:
    """A generator's label is a configured class as ``evaluation.positive_class`` finds its
    label (:func:`~foldstream.operators.stats.measures.positive_code`): equal to it (SEA's ``True``
    is ``1``), else read as YAML reads the configuration."""
    return positive_code([plain(y)], label) == 0


def known_changes(model: str, params: Mapping[str, Any] | None) -> list[int]:
    """The positions where a generator's concept changes, as far as they are known: the
    ``position`` of each ``ConceptDriftStream`` (the centre of its sigmoid, where half of the
    examples come from the new concept), a nested one's in its ``drift_stream`` counted from
    the outer position (where that stream starts to be read, on average), one in its
    ``stream`` kept when before the outer position.

    >>> sea = {"model": "river.datasets.synth.SEA"}
    >>> inner = {"model": "river.datasets.synth.ConceptDriftStream",
    ...          "params": {"stream": sea, "drift_stream": sea, "position": 3000}}
    >>> known_changes("river.datasets.synth.ConceptDriftStream",
    ...               {"stream": sea, "drift_stream": inner, "position": 5000})
    [5000, 8000]
    """
    if model.rsplit(".", 1)[-1] != "ConceptDriftStream":
        return []
    params = params or {}
    cls = resolve_at(model, DATASET, "", params)
    default = inspect.signature(cls).parameters["position"].default
    position = int(params.get("position", default))
    before, after = [], []
    for name, out, offset in (("stream", before, 0), ("drift_stream", after, position)):
        nested = params.get(name)
        if isinstance(nested, Mapping) and "model" in nested:
            out += [offset + c for c in known_changes(nested["model"], nested.get("params"))]
    return [c for c in before if c < position] + [position] + after


def iter_dataset(dataset: Iterable, limit: int | None = None,
                 stream: str | None = None) -> Iterator[Example | Rejected]:
    """The examples of a river dataset or generator object, or of any iterable of ``(x, y)``.

    It reads what :func:`iter_generator` builds, and the sources the Python API
    (``foldstream.evaluate``) is given as objects, so both turn pairs into examples alike.

    Parameters
    ----------
    dataset : iterable of (dict, label)
        E.g. ``river.datasets.synth.SEA(seed=1)``, ``river.datasets.Phishing()``, a list.
    limit : int, optional
        Read at most this many items (default: to the end; a synthetic generator never ends).
    stream : str, optional
        The stream's name; default :func:`dataset_stream`.

    Yields
    ------
    Example or Rejected
        As :func:`iter_generator` describes; an item that is not a pair of a mapping and a
        label (``None`` is none) is a :class:`Rejected` record naming it, not an error.

    Raises
    ------
    ValueError
        On a bad ``limit``, or a dataset whose ``task`` is not classification.

    Examples
    --------
    >>> items = list(iter_dataset([({"a": 1}, "x"), ({"a": 2}, None)], stream="s"))
    >>> items[0]
    Example(stream='s', x={'a': 1}, y='x', key=None, location='s#1')
    >>> items[1].reason
    'item 2: the label is None'
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"`limit` must be an integer >= 0 or None, got {limit!r}")
    _check_task(dataset, type(dataset).__name__)
    return _examples(dataset, stream or dataset_stream(dataset), limit)


def dataset_stream(dataset: Iterable) -> str:
    """The default stream of a dataset object: its class name lower-cased; ``stream`` for a
    Python container or generator, whose class name says nothing of the data.

    >>> from river.datasets.synth import SEA
    >>> dataset_stream(SEA()), dataset_stream([]), dataset_stream(x for x in ())
    ('sea', 'stream', 'stream')
    """
    cls = type(dataset)
    return "stream" if cls.__module__ == "builtins" else cls.__name__.lower()


def make_generator(model: str, params: Mapping[str, Any] | None, seed: int | None,
                   key: str = "") -> Iterable:
    """Build ``model(**params)`` with the seed filled in, as :func:`iter_generator` describes.

    Checked first, then built (:mod:`foldstream.operators.learners.models`): ``model`` and every nested
    ``model`` must be river dataset classes and the parameters of the types their constructor
    admits; an error is a :class:`~foldstream.operators.learners.models.SpecError` naming its key
    (relative to ``key``), whatever the constructor raised.

    >>> make_generator("os.system", {}, 1)
    Traceback (most recent call last):
    foldstream.operators.learners.models.SpecError: model: 'os.system' is in Python's standard library; expected a river dataset class
    """
    dataset = check_generator(model, params, seed, DATASET, key).build()
    _check_task(dataset, model)
    if not isinstance(dataset, Iterable):
        raise ValueError(f"{model} did not build an iterable of (x, y) pairs")
    return dataset


def check_generator(model: str, params: Mapping[str, Any] | None, seed: int | None,
                    kind: ModelKind = DATASET, key: str = "") -> Spec:
    """The checked :class:`~foldstream.operators.learners.models.Spec` of a generator (nothing called)."""
    cls = resolve_at(model, kind, key, params)
    named = signature(cls).named
    kwargs = {}
    for name, value in (params or {}).items():
        where = join_key(key, f"params.{name}")
        parameter = named.get(name, Parameter(name, None))
        check_param(parameter, value, where)
        kwargs[name] = _nested(value, parameter, seed, model, where)
    try:
        kwargs = _with_seed(cls, kwargs, seed, model)
    except ValueError as error:
        raise SpecError(join_key(key, "seed"), str(error)) from None
    return Spec(cls, model, kwargs, (), key)


def _check_task(dataset: Any, name: str) -> None:
    task = getattr(dataset, "task", None)
    if isinstance(task, str) and task not in _CLASSIFICATION_TASKS:
        raise ValueError(f"{name} is a {task.lower()} generator; foldstream evaluates classifiers")


def _nested(value: Any, parameter: Parameter, seed: int | None, model: str, key: str) -> Any:
    if not parameter.takes_spec(value):
        return value
    unknown = set(value) - _NESTED_KEYS
    if unknown:
        raise SpecError(key, f"{model}: parameter {parameter.name!r} has unknown keys "
                             f"{sorted(unknown)}; a nested generator takes {sorted(_NESTED_KEYS)}")
    return check_generator(value["model"], value.get("params"), value.get("seed", seed),
                           parameter.kind(DATASET), key)


def _with_seed(cls: Any, kwargs: dict[str, Any], seed: int | None, model: str) -> dict[str, Any]:
    if seed is None:
        return kwargs
    try:
        names = inspect.signature(cls).parameters
    except (TypeError, ValueError):  # builtins without a signature take no seed we can see
        return kwargs
    seeded = dict(kwargs)
    for name in names:
        if name != "seed" and not name.startswith("seed_"):
            continue
        if name in seeded and seeded[name] != seed:
            # Two different seeds for one parameter: refuse rather than pick one silently.
            raise ValueError(f"{model}: seed given twice, {name}={seeded[name]!r} in params "
                             f"and seed={seed!r}")
        seeded[name] = seed
    return seeded


def _examples(dataset: Iterable, stream: str, limit: int | None) -> Iterator[Example | Rejected]:
    items = iter(itertools.islice(dataset, limit))
    for n in itertools.count(1):
        location = f"{stream}#{n}"
        try:
            item = next(items)
        except StopIteration:
            return
        except Exception as exc:  # the dataset itself fails: it ends here, as a damaged file
            yield Rejected(stream, f"item {n}: the dataset raised {type(exc).__name__}: {exc}; "
                                   f"it ends here", "", location)
            return
        try:
            yield _example(item, n, stream, location)
        except Exception as exc:  # Reject, or anything else Python raises on this item
            why = exc if isinstance(exc, Reject) else unexpected(exc)
            yield Rejected(stream, f"item {n}: {why}", _text(item), location)


def _example(item: Any, n: int, stream: str, location: str) -> Example:
    """The example of one ``(x, y)`` item, or :class:`~foldstream.connectors.rows.Reject`."""
    if not (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], Mapping)):
        raise Reject("not a pair (x: a mapping of features, y: the label)")
    x, y = item
    if y is None:
        raise Reject("the label is None")
    y = plain(y)
    if isinstance(y, float) and y != y:
        raise Reject("the label is NaN")
    try:
        hash(y)
    except TypeError:
        raise Reject(f"the label is a {type(y).__name__}, not a class (not hashable)") from None
    # numpy scalars pickle bigger and slower than Python ones and are not JSON serialisable
    features = {str(name): plain(value) for name, value in x.items()}
    return Example(stream, features, y, location=location)


def _text(item: Any) -> str:
    """An item as text for its dead letter (``repr``, which may itself fail)."""
    try:
        return repr(item)
    except Exception as exc:
        return f"(an item whose repr() fails: {unexpected(exc)})"


"""Check, then build: what a configuration names as a model is checked before anything is called.

Configurations travel (shared files, ``--set`` strings, a compose stack), so a dotted path in
one is not trusted: ``model: os.system, args: ['rm -rf ~']`` must not run a shell, in
``foldstream validate`` least of all. The rule, for every ``model:`` of a configuration:

1. The path is resolved by its prefix (:data:`RESOLVERS`; ``moa.`` is MOA's), or else
   imported; a path into Python's standard library or a ``__main__`` module is refused before
   it is imported (no classifier lives there, and such modules may act when imported).
2. What it names must be a class of the kind the key promises (:class:`ModelKind`): a learner's
   a river classifier class, a generator source's a river dataset class. A ``{model: ...}``
   nested in ``params`` or ``args`` must be a class of what its parameter expects: the classes
   the constructor's annotation names (``model: base.Classifier`` of a bagging ensemble), or
   else any river class (``river.base.Base``; a dataset for a generator). Never a function.
3. Every parameter's value must have a type its annotation or default admits (a list where a
   number is due is refused), lists and mappings included.

Only a :class:`Spec` (whose classes and values passed all three) is ever called, and a
constructor that raises, whatever it raises, is a :class:`SpecError` naming the key.

>>> spec = check("river.ensemble.BaggingClassifier",
...              {"model": {"model": "river.naive_bayes.GaussianNB"}, "n_models": 2}, kind=CLASSIFIER)
>>> type(spec.build()).__name__, type(spec.build().model).__name__
('BaggingClassifier', 'GaussianNB')
>>> check("os.system", args=["echo hi"], kind=CLASSIFIER)
Traceback (most recent call last):
foldstream.operators.learners.models.SpecError: model: 'os.system' is in Python's standard library; expected a river classifier class
>>> check("river.tree.HoeffdingTreeClassifier", {"grace_period": [1]}, kind=CLASSIFIER)
Traceback (most recent call last):
foldstream.operators.learners.models.SpecError: params.grace_period: expected a number, got a list: [1]
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import logging
import numbers
import re
import sys
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from foldstream.operators.learners.imports import import_object, loaded
from foldstream.operators.learners.moa import MoaClassifier, is_moa, nested

log = logging.getLogger(__name__)

#: The keys of a ``{model: ...}`` value nested in a learner's ``params`` or ``args``
#: (``options``: a MOA classifier's only).
NESTED_KEYS = ("model", "params", "args", "options")


class SpecError(ValueError):
    """A model spec that is not what its key promises; ``key`` is relative to the spec's owner
    (``params.model.params.grace_period``; ``""``: the spec as a whole)."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}" if key else message)
        self.key, self.message = key, message


@dataclass(frozen=True)
class ModelKind:
    """What a ``model:`` key may name: a class that is a subclass of one of ``bases`` (dotted
    paths, imported when first needed), described to the user as ``what``."""

    what: str
    bases: tuple[str | type, ...]
    nested: "ModelKind | None" = None  # the kind of a nested spec whose parameter says nothing
    refused: tuple[tuple[str, str], ...] = ()  # (base, why): subclasses refused all the same

    def classes(self, bases: tuple[str | type, ...] | None = None) -> tuple[type, ...]:
        """The classes of ``bases`` (default: :attr:`bases`) that exist: a base whose module
        was never imported has no subclass yet (:func:`~.imports.loaded`), and importing it
        to find none can cost a quarter of a second (``river.compose``: pandas)."""
        found = (loaded(base) if isinstance(base, str) else base
                 for base in (self.bases if bases is None else bases))
        return tuple(cls for cls in found if cls is not None)

    def accepts(self, cls: Any) -> bool:
        return (inspect.isclass(cls) and issubclass(cls, self.classes())
                and not any(issubclass(cls, self.classes((base,))) for base, _ in self.refused))

    def inner(self) -> "ModelKind":
        return self.nested or self


RIVER_OBJECT = ModelKind("a river class (river.base.Base)", ("river.base.Base",))
PIPELINE = "river.compose.Pipeline"
CLASSIFIER = ModelKind("a river classifier class", ("river.base.Classifier", PIPELINE),
                       RIVER_OBJECT)
DATASET = ModelKind("a river dataset class", ("river.datasets.base.Dataset",), refused=(
    ("river.datasets.base.RemoteDataset", "it downloads its data; download it yourself and name "
                                          "the file as a file source's path"),))


def _moa_nested(dotted: str, kind: ModelKind) -> Any:
    """A MOA classifier where a parameter's annotation names
    :class:`~foldstream.operators.learners.moa.MoaClassifier` (a noise filter's ``model``):
    :func:`foldstream.operators.learners.moa.nested` for it, which checks it with MOA when built.
    River's own models (an ensemble's ``model``) call a MOA classifier example by example and
    expect river's whole interface, so they do not take one."""
    if not any(issubclass(c, MoaClassifier) for c in kind.classes()):
        raise ValueError(f"{dotted!r}: a MOA classifier is a learner's own model (with its "
                         f"`options`) or a noise filter's, not a parameter of a river model")
    return functools.partial(nested, dotted)


#: Resolvers of a model path by its prefix, tried before a Python import: each takes the path and
#: the :class:`ModelKind` asked for and returns the class (or factory) to build, having checked
#: it, or raises ``ValueError`` saying why not. A second kind of learner plugs in here.
RESOLVERS: dict[str, Callable[[str, ModelKind], Any]] = {
    "moa.": _moa_nested,  # MOA classifiers: a learner's own model only (operators/learners/moa/)
}


def resolve(dotted: Any, kind: ModelKind) -> Any:
    """The class ``dotted`` names, once known to be of ``kind``; nothing of it is called.

    >>> resolve("river.tree.HoeffdingTreeClassifier", CLASSIFIER).__name__
    'HoeffdingTreeClassifier'
    >>> resolve("river.preprocessing.StandardScaler", CLASSIFIER)
    Traceback (most recent call last):
    ValueError: 'river.preprocessing.StandardScaler' is not a river classifier class
    """
    if not isinstance(dotted, str):
        raise ValueError(f"expected the dotted path of {kind.what}, got {dotted!r}")
    for prefix, resolver in RESOLVERS.items():
        if dotted.startswith(prefix):
            return resolver(dotted, kind)
    parts = dotted.split(".")
    if parts[0] in sys.stdlib_module_names:
        raise ValueError(f"{dotted!r} is in Python's standard library; expected {kind.what}")
    if "__main__" in parts:  # a package's __main__ may run its program when imported
        raise ValueError(f"{dotted!r} names a __main__ module; expected {kind.what}")
    obj = import_object(dotted)
    if not kind.accepts(obj):
        raise ValueError(f"{dotted!r} is not {kind.what}{_what_it_is(obj, kind)}")
    return obj


def _what_it_is(obj: Any, kind: ModelKind) -> str:
    """What a refused object is, when that helps the user."""
    if not inspect.isclass(obj):
        return f": it is a {type(obj).__name__}"
    for base_path, why in kind.refused:
        if issubclass(obj, kind.classes((base_path,))):
            return f": {why}"
    from river import base

    if issubclass(obj, base.Regressor) and not issubclass(obj, base.Classifier):
        return ": it is a regressor (it predicts numbers, and foldstream evaluates classifiers)"
    return ""


# ------------------------------------------------------------------------------ value types
def _shape(value: Any) -> str | None:
    """The YAML-level type of a configured value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, numbers.Number):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, Mapping):
        return "model" if "model" in value else "mapping"
    return None  # a Python object (the Python API): not checked here


_SHAPE_NAMES = {"null": "null", "bool": "true or false", "number": "a number", "text": "a text",
                "list": "a list", "mapping": "a mapping", "model": "a {model: ...} spec"}
_LISTS = (list, tuple, set, frozenset)
_MAPPINGS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


def _admits(annotation: Any) -> tuple[frozenset[str], tuple[type, ...], Any] | None:
    """What an annotation admits: (shapes, model classes, list element annotation), or None
    when it says nothing checkable (no annotation, ``Any``, a callable, a type variable)."""
    if annotation is inspect.Parameter.empty or annotation is Any or annotation is object:
        return None
    if annotation is None or annotation is type(None):
        return frozenset({"null"}), (), None
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        shapes, classes, element = set(), (), None
        for arg in typing.get_args(annotation):
            admitted = _admits(arg)
            if admitted is None:
                return None
            shapes |= admitted[0]
            classes += admitted[1]
            element = element if admitted[2] is None else admitted[2]
        return frozenset(shapes), classes, element
    if origin is typing.Literal:
        return frozenset(_shape(v) for v in typing.get_args(annotation)), (), None
    if origin is not None:  # list[X], dict[K, V], Sequence[X], ...
        if origin in _LISTS:
            args = typing.get_args(annotation)
            return frozenset({"list"}), (), args[0] if len(args) == 1 else None
        if origin in _MAPPINGS:
            return frozenset({"mapping"}), (), None
        return None
    if not inspect.isclass(annotation):
        return None
    if annotation is bool:
        return frozenset({"bool", "number"}), (), None  # 0 and 1 are taken for booleans
    if issubclass(annotation, numbers.Number) or annotation in (int, float, complex):
        return frozenset({"number"}), (), None
    if annotation is str:
        return frozenset({"text"}), (), None
    if issubclass(annotation, _LISTS):
        return frozenset({"list"}), (), None
    if issubclass(annotation, _MAPPINGS):
        return frozenset({"mapping"}), (), None
    if issubclass(annotation, RIVER_OBJECT.classes() + DATASET.classes() + (MoaClassifier,)):
        return frozenset({"model"}), (annotation,), None
    return None  # another class (numpy's, ...): what YAML gives it is not ours to judge


@dataclass(frozen=True)
class Parameter:
    """What one constructor parameter admits, from its annotation and its default."""

    name: str
    shapes: frozenset[str] | None  # None: anything
    classes: tuple[type, ...] = ()  # the classes a nested spec must be of (empty: the fallback)
    element: Any = None  # the annotation of a list's items
    default: Any = inspect.Parameter.empty

    @classmethod
    def of(cls, parameter: inspect.Parameter, hint: Any) -> "Parameter":
        admitted = _admits(hint)
        default = parameter.default
        if default is not inspect.Parameter.empty:
            shape = "model" if _is_model_object(default) else _shape(default)
            if admitted is None and shape not in (None, "null"):
                admitted = (frozenset({shape} | ({"number"} if shape == "bool" else set())),
                            (), None)
            elif admitted is not None:
                admitted = (admitted[0] | {shape} if shape else admitted[0],
                            admitted[1], admitted[2])
        if admitted is None:
            return Parameter(parameter.name, None, default=default)
        return Parameter(parameter.name, admitted[0], admitted[1], admitted[2], default)

    def kind(self, fallback: ModelKind) -> ModelKind:
        """The kind a nested ``{model: ...}`` of this parameter must be."""
        if not self.classes:
            return fallback
        names = " or ".join(f"{c.__module__}.{c.__qualname__}" for c in self.classes)
        return ModelKind(f"a subclass of {names}", self.classes)

    def takes_spec(self, value: Any) -> bool:
        """Whether ``value`` is a ``{model: ...}`` spec to build: a mapping with a ``model`` key,
        unless this parameter takes mappings and no models (``desired_dist: {model: 0.5}``)."""
        return _shape(value) == "model" and not (
            self.shapes is not None and "mapping" in self.shapes and "model" not in self.shapes)

    def check(self, value: Any) -> None:
        """Raise ``ValueError`` unless this parameter admits ``value``'s type."""
        shape = _shape(value)
        if shape == "model" and not self.takes_spec(value):
            shape = "mapping"
        if self.shapes is None or shape is None or shape in self.shapes:
            return
        order = list(_SHAPE_NAMES)
        expected = " or ".join(_SHAPE_NAMES[s] for s in sorted(self.shapes, key=order.index))
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise ValueError(f"expected {expected}, got {_SHAPE_NAMES[shape]}: {shown}")


def _is_model_object(value: Any) -> bool:
    return isinstance(value, RIVER_OBJECT.classes() + DATASET.classes())


class Signature(typing.NamedTuple):
    """A constructor's parameters as :class:`Parameter` objects."""

    named: dict[str, Parameter]  # every parameter a keyword can give
    positional: tuple[Parameter, ...]  # those a positional argument can give, in order
    star: Parameter | None  # ``*args``


@functools.lru_cache(maxsize=None)
def signature(cls: Any) -> Signature:
    """The constructor's parameters; annotations that cannot be evaluated count as absent.

    >>> from river.compose import Pipeline
    >>> signature(Pipeline).star.shapes is None, signature(Pipeline).positional
    (True, ())
    """
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return Signature({}, (), Parameter("args", None))
    try:
        hints = typing.get_type_hints(cls.__init__ if inspect.isclass(cls) else cls)
    except Exception as error:  # noqa: BLE001 - an unresolvable forward reference: no annotations
        log.debug("%s: its annotations cannot be evaluated (%s: %s): its parameters are checked "
                  "without types", getattr(cls, "__qualname__", cls), type(error).__name__, error)
        hints = {}
    named, positional, star = {}, [], None
    for p in sig.parameters.values():
        hint = hints.get(p.name, p.annotation if not isinstance(p.annotation, str) else
                         inspect.Parameter.empty)
        if p.kind is p.VAR_POSITIONAL:
            star = Parameter.of(p, hint)
        elif p.kind is not p.VAR_KEYWORD:
            parameter = Parameter.of(p, hint)
            if p.kind is not p.POSITIONAL_ONLY:
                named[p.name] = parameter
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                positional.append(parameter)
    return Signature(named, tuple(positional), star)


def _positional(cls: Any, index: int) -> Parameter:
    sig = signature(cls)
    if index < len(sig.positional):
        return sig.positional[index]
    return sig.star or Parameter(f"args.{index}", None)


# ---------------------------------------------------------------------------------- the spec
@dataclass(frozen=True)
class Spec:
    """A model whose class and every value passed :func:`check`: the only thing ever called.

    ``params`` and ``args`` hold plain values and nested :class:`Spec` objects."""

    cls: Any
    dotted: str
    params: dict[str, Any] = field(default_factory=dict)
    args: tuple[Any, ...] = ()
    key: str = ""

    def build(self) -> Any:
        """The object; a constructor that raises (anything) is a :class:`SpecError` naming the
        parameter its message names, or else the spec."""
        args = [_built(a) for a in self.args]
        params = {name: _built(value) for name, value in self.params.items()}
        try:
            return self.cls(*args, **params)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - any constructor error, named
            raise SpecError(self._blame(exc), f"cannot build {self.dotted}: "
                                              f"{type(exc).__name__}: {exc}") from None

    def _blame(self, exc: BaseException) -> str:
        text = str(exc)
        named = [name for name in self.params if re.search(rf"\b{re.escape(name)}\b", text)]
        if len(named) == 1:
            return join_key(self.key, f"params.{named[0]}")
        return self.key


def _built(value: Any) -> Any:
    if isinstance(value, Spec):
        return value.build()
    if isinstance(value, list):
        return [_built(v) for v in value]
    return value


def join_key(key: str, sub: str) -> str:
    return f"{key}.{sub}" if key else sub


def check(model: Any, params: Mapping[str, Any] | None = None, args: list[Any] | None = None,
          kind: ModelKind = CLASSIFIER, key: str = "") -> Spec:
    """Resolve ``model`` as ``kind`` and check its ``params`` and ``args``, nested specs
    included, calling nothing; raise :class:`SpecError` naming the key (relative to ``key``)."""
    cls = resolve_at(model, kind, key, params, args)
    named = signature(cls).named
    checked_params = {
        name: _value(value, named.get(name, Parameter(name, None)), kind.inner(),
                     join_key(key, f"params.{name}"))
        for name, value in (params or {}).items()}
    checked_args = tuple(
        _value(value, _positional(cls, i), kind.inner(), join_key(key, f"args.{i}"))
        for i, value in enumerate(args or ()))
    return Spec(cls, model, checked_params, checked_args, key)


def resolve_at(model: Any, kind: ModelKind, key: str, params: Any = None, args: Any = None) -> Any:
    """:func:`resolve` of a spec at ``key``, whose ``params`` must be a mapping and ``args`` a
    list; the errors are :class:`SpecError` naming the key."""
    try:
        cls = resolve(model, kind)
    except ValueError as error:
        raise SpecError(join_key(key, "model"), str(error)) from None
    if params is not None and not isinstance(params, Mapping):
        raise SpecError(join_key(key, "params"),
                        f"expected a mapping of parameters, got {params!r}")
    if args is not None and not isinstance(args, (list, tuple)):
        raise SpecError(join_key(key, "args"), f"expected a list of arguments, got {args!r}")
    return cls


def check_param(parameter: Parameter, value: Any, key: str) -> None:
    """:meth:`Parameter.check` with the error naming ``key``."""
    try:
        parameter.check(value)
    except ValueError as error:
        raise SpecError(key, str(error)) from None


def _value(value: Any, parameter: Parameter, fallback: ModelKind, key: str) -> Any:
    check_param(parameter, value, key)
    if parameter.takes_spec(value):
        unknown = sorted(set(value) - set(NESTED_KEYS))
        if unknown:
            raise SpecError(key, f"unknown keys {unknown}; a nested model takes "
                                 f"{list(NESTED_KEYS)}")
        params = value.get("params")
        if "options" in value:  # MOA's option string: an argument of its factory
            if not is_moa(str(value["model"])):
                raise SpecError(join_key(key, "options"), "only a MOA classifier "
                                "(moa.classifiers....) takes options")
            if params is not None and not isinstance(params, Mapping):
                raise SpecError(join_key(key, "params"),
                                f"expected a mapping of parameters, got {params!r}")
            params = {**(params or {}), "options": value["options"]}
        return check(value["model"], params, value.get("args"), parameter.kind(fallback), key)
    if isinstance(value, (list, tuple)):
        element = Parameter.of(inspect.Parameter(parameter.name, inspect.Parameter.KEYWORD_ONLY),
                               parameter.element if parameter.element is not None
                               else inspect.Parameter.empty)
        return [_value(v, element, fallback, f"{key}.{i}") for i, v in enumerate(value)]
    return value


def is_pipeline(model: Any) -> bool:
    """Whether ``model`` is a river :data:`PIPELINE`, asked without importing
    ``river.compose`` (:func:`~.imports.loaded`).

    >>> is_pipeline(object())
    False
    """
    pipeline = loaded(PIPELINE)
    return pipeline is not None and isinstance(model, pipeline)


__all__ = ["CLASSIFIER", "DATASET", "NESTED_KEYS", "PIPELINE", "RESOLVERS", "RIVER_OBJECT",
           "ModelKind", "Parameter", "Signature", "Spec", "SpecError", "check", "check_param",
           "is_pipeline", "join_key", "resolve", "resolve_at", "signature"]

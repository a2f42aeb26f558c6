"""Learner specs that passed their check, remembered on disk, so that ``foldstream validate``
passes them again without importing the library their classes come from (importing river's
trees, pipelines and naive Bayes takes more than a second; the check itself, milliseconds).

What is remembered is a verdict, never a shortcut through the check: a spec (its ``model``,
``params`` and ``args``, exactly as configured) is remembered only after it passed the whole
check of :func:`~foldstream.operators.stages.learner.build_model` and
:func:`~foldstream.operators.stages.learner.check_classifier` (classes resolved, values of the
types their parameters admit, the constructor called, a clone made). So a spec that fails is
never found here and is always checked in full: the same error, naming the same key.

An entry counts only while everything it was checked against is unchanged:

* the same Python (version, environment) and the same :data:`FORMAT`;
* every loaded module file of the packages the spec's classes come from (``river``, a user's
  own package) and of foldstream: the same modification time and size (an upgrade, a
  reinstall or an edited file makes the entry stale);
* the top module of every other package loaded when it was checked (numpy, scipy, ...): the
  same modification time and size;
* each of those packages still found where it was (a ``river`` folder in the working
  directory that would shadow the installed one makes the entry stale).

A missing, stale, unreadable or malformed entry is no entry: the spec is checked in full and
remembered anew. A cache that cannot be written is skipped without a word. The entries live in
``checked/`` of the project's cache folder
(:func:`~foldstream.operators.downloads.default_cache_dir`), one small JSON file per spec;
deleting the folder is always safe.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> recall("river.dummy.NoChangeClassifier", {}, [], folder) is None
True
>>> import river.dummy
>>> remember("river.dummy.NoChangeClassifier", {}, [], Passed(gives_scores=True), folder)
>>> recall("river.dummy.NoChangeClassifier", {}, [], folder)
Passed(gives_scores=True)
>>> recall("river.dummy.NoChangeClassifier", {"x": 1}, [], folder) is None  # another spec
True
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from foldstream.operators.downloads import default_cache_dir

log = logging.getLogger(__name__)

#: The layout of an entry; a change of it (or of what a verdict holds) makes every entry stale.
FORMAT = 1
#: The folder of the entries inside the project's cache folder.
FOLDER = "checked"


class Passed(NamedTuple):
    """What validation needs of a spec that passed, besides that it passed."""

    gives_scores: bool  # its model gives class scores (evaluation.scores needs them)


def cache_folder(given: str | os.PathLike[str] | None = None) -> Path:
    """Where the entries live: ``given``, else ``checked/`` of
    :func:`~foldstream.operators.downloads.default_cache_dir`."""
    return Path(given) if given is not None else default_cache_dir() / FOLDER


def spec_key(model: Any, params: Any, args: Any) -> str | None:
    """The text that names a spec: its values as canonical JSON; ``None`` for a spec holding
    anything but YAML's plain values (a Python object: never remembered).

    >>> spec_key("m.C", {"b": 1, "a": [True, None]}, [])
    '{"args":[],"model":"m.C","params":{"a":[true,null],"b":1}}'
    >>> spec_key("m.C", {"a": object()}, []) is None, spec_key("m.C", {1: 2}, []) is None
    (True, True)
    """
    spec = {"model": model, "params": params, "args": args}
    if not _plain(spec):
        return None
    return json.dumps(spec, sort_keys=True, separators=(",", ":"))


def _plain(value: Any) -> bool:
    """Whether ``value`` is made of what JSON writes back as it was (text keys only)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def _models(value: Any) -> set[str]:
    """The dotted paths a spec names as models, nested ones included."""
    if isinstance(value, dict):
        found = {value["model"]} if isinstance(value.get("model"), str) else set()
        for v in value.values():
            found |= _models(v)
        return found
    if isinstance(value, list):
        return set().union(*(_models(v) for v in value)) if value else set()
    return set()


def _entry_path(folder: Path, key: str) -> Path:
    return folder / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def _environment() -> dict[str, Any]:
    return {"format": FORMAT, "python": sys.version, "prefix": sys.prefix,
            "base_prefix": sys.base_prefix}


def _stat(path: str) -> list[int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_mtime_ns, found.st_size]


def _origin(top: str) -> list[Any] | None:
    """Where the top-level package ``top`` is found (imported, or else looked up on
    ``sys.path`` without importing it): its file and folders."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    return [spec.origin, sorted(spec.submodule_search_locations or ())]


def _tops(model: Any, params: Any, args: Any) -> set[str]:
    """The top-level packages whose every loaded file an entry records."""
    return {m.split(".")[0] for m in _models({"model": model, "params": params, "args": args})
            } | {"foldstream"}


def _fingerprint(tops: set[str]) -> dict[str, list[int]]:
    """The files an entry is checked against: every loaded module file of ``tops``, and the
    top module of every other package outside Python's standard library."""
    files = {}
    for name, module in list(sys.modules.items()):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top == "__main__" \
                or (name != top and top not in tops):
            continue
        path = getattr(module, "__file__", None)
        found = _stat(path) if isinstance(path, str) else None
        if found is not None:
            files[path] = found
    return files


def recall(model: Any, params: Any, args: Any,
           folder: str | os.PathLike[str] | None = None) -> Passed | None:
    """The remembered verdict of this spec, or ``None`` when there is none that counts (see the
    module's rules); never raises."""
    key = spec_key(model, params, args)
    if key is None:
        return None
    path = _entry_path(cache_folder(folder), key)
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        if entry["key"] != key or entry["environment"] != _environment():
            return None
        stale = next((file for file, recorded in entry["files"].items()
                      if _stat(file) != recorded), None)
        stale = stale or next((top for top, origin in entry["origins"].items()
                               if _origin(top) != origin), None)
        if stale is not None:
            log.debug("%s: the remembered check of %s is stale (%s changed)", path, model, stale)
            return None
        return Passed(*(bool(v) for v in entry["passed"]))
    except FileNotFoundError:
        return None
    except Exception as error:  # noqa: BLE001 - an unreadable or malformed entry is no entry
        log.debug("%s: not a remembered check (%s: %s)", path, type(error).__name__, error)
        return None


def remember(model: Any, params: Any, args: Any, passed: Passed,
             folder: str | os.PathLike[str] | None = None) -> None:
    """Remember that this spec passed its check, against the files loaded now (call it right
    after the check, in the process that made it); a cache that cannot be written is
    skipped."""
    key = spec_key(model, params, args)
    if key is None:
        return
    tops = _tops(model, params, args)
    entry = {"key": key, "environment": _environment(), "passed": list(passed),
             "origins": {top: _origin(top) for top in sorted(tops)},
             "files": _fingerprint(tops)}
    where = cache_folder(folder)
    try:
        where.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=where, suffix=".tmp", delete=False,
                                         encoding="utf-8") as file:
            json.dump(entry, file)
        os.replace(file.name, _entry_path(where, key))
    except OSError as error:
        log.debug("%s: cannot remember the check of %s (%s)", where, model, error)
        try:
            os.unlink(file.name)
        except (OSError, NameError):
            pass


__all__ = ["FOLDER", "FORMAT", "Passed", "cache_folder", "recall", "remember", "spec_key"]

"""Import an object named by a dotted path, as configuration files name generators and learners."""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def import_object(dotted: str) -> Any:
    """Return the object named by a dotted path such as ``river.datasets.synth.SEA``.

    The longest prefix that is a module is imported and the rest is looked up as attributes,
    so nested names (``package.module.Class.attribute``) work too.

    Parameters
    ----------
    dotted : str
        ``module.name`` or ``package.module.name``.

    Returns
    -------
    object
        The module attribute.

    Raises
    ------
    ValueError
        If the path is malformed, no prefix of it is a module, or an attribute is missing.
        The message names the path; the original error is chained.
    """
    if not isinstance(dotted, str) or not _DOTTED.fullmatch(dotted):
        raise ValueError(f"{dotted!r} is not a dotted path such as 'river.datasets.synth.SEA'")
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:split])
        try:
            obj = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            # Only "this prefix is not a module" means "try a shorter one"; a module that exists
            # but fails on a missing dependency of its own must surface, not be skipped.
            if exc.name is not None and _is_prefix(exc.name, module_name):
                continue
            raise ValueError(f"cannot import {dotted!r}: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - any import-time failure, reported with the path
            raise ValueError(f"cannot import {dotted!r}: importing {module_name!r} failed: "
                             f"{type(exc).__name__}: {exc}") from exc
        return _get_attributes(obj, parts[split:], module_name, dotted)
    raise ValueError(f"cannot import {dotted!r}: there is no module named {parts[0]!r}")


def _is_prefix(name: str, module_name: str) -> bool:
    return module_name == name or module_name.startswith(name + ".")


def _get_attributes(obj: Any, names: list[str], owner: str, dotted: str) -> Any:
    for name in names:
        try:
            obj = getattr(obj, name)
        except AttributeError as exc:
            raise ValueError(
                f"cannot import {dotted!r}: {owner!r} has no attribute {name!r}") from exc
        owner = f"{owner}.{name}"
    return obj


def loaded(dotted: str) -> Any:
    """The object a dotted path ``module.name`` names if that module is imported already, else
    ``None``, importing nothing. No object of a class exists before its module is imported, so
    an ``isinstance`` or ``issubclass`` test against a class found this way needs no import
    (``river.compose`` imports pandas, a quarter of a second, for a run with no pipeline).

    >>> loaded("sys.maxsize") == sys.maxsize, loaded("foldstream_no_such.Module")
    (True, None)
    """
    module, _, name = dotted.rpartition(".")
    found = sys.modules.get(module)
    return None if found is None else getattr(found, name, None)

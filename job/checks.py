"""Small checks of what a user wrote, shared by the configuration, the tools and the command
line, so that each rule and its wording exist once.

They are kept apart from :mod:`.config` because that module imports the stages and their
libraries (seconds): a tool checking an option such as ``--format`` must not pay for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def check_choices(values: Iterable[Any], choices: Sequence[Any], what: str) -> None:
    """Each of ``values`` must be one of ``choices``; the first that is not is a
    :class:`ValueError` naming it and every choice.

    >>> check_choices(["png", "svg"], ("png", "svg", "pdf"), "format")
    >>> check_choices(["accuracy", "acc"], ("accuracy", "kappa"), "measure")
    Traceback (most recent call last):
    ValueError: unknown measure 'acc'; choose from accuracy, kappa
    """
    for value in values:
        if value not in choices:
            raise ValueError(f"unknown {what} {value!r}; choose from "
                             f"{', '.join(map(str, choices))}")

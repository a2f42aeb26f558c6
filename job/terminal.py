"""Text that reaches a terminal is shown, never executed.

A name, a path, a reason or a value read from a file or a Kafka topic can hold bytes that a
terminal acts on rather than shows: ``ESC [`` (colours, cursor moves, clearing the screen),
``ESC ]`` (OSC 0 sets the window title, OSC 52 writes the user's clipboard), the 8-bit forms
of the same (``0x9b`` is CSI, ``0x9d`` is OSC), NUL, BEL, backspace and carriage return (which
overwrite what is already shown). :func:`inert` is the one function every command passes such
text through before it prints it: each of these characters is written as the escape a Python
string literal would use (``\\x1b``), so the text stays readable and nothing in it acts.
:func:`~foldstream.job.tools.tables.typed` puts it under rich's markup escaping, for the
tables and messages drawn with rich; :func:`guard_warnings` applies it to Python's warnings.

What is made visible
    * the C0 controls (``U+0000`` to ``U+001F``) and DEL (``U+007F``); a newline is kept
      where it is structure (``lines=True``: a message of several lines), never in a name;
    * the C1 controls (``U+0080`` to ``U+009F``), CSI and OSC among them;
    * the bidirectional overrides and isolates (``U+202A`` to ``U+202E``, ``U+2066`` to
      ``U+2069``, and the marks ``U+200E``, ``U+200F``, ``U+061C``), which reorder the rest
      of a line, and the line and paragraph separators ``U+2028``, ``U+2029``;
    * lone surrogates (``U+D800`` to ``U+DFFF``), which is how Python holds the bytes of a
      command-line argument or a file name that are not UTF-8: ``U+DC80`` to ``U+DCFF`` are
      shown as the byte they stand for (``\\x9b``), since written back they would be that
      raw byte.

Every other character, letters of any script and emoji included, is shown as typed. A
backslash is not doubled, so a name holding the four characters ``\\x1b`` looks like one
holding an escape: the aim is that nothing acts, not that every string can be told apart.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

#: every character :func:`inert` makes visible (module docstring)
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                    "\u2066-\u2069\ud800-\udfff]")
#: the same, newline aside (``lines=True``)
_UNSAFE_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                                 "\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(value: Any, lines: bool = False) -> str:
    """``str(value)`` with every character a terminal would act on written as a visible
    escape (module docstring).

    Parameters
    ----------
    value : Any
        The text (or anything: ``str`` is taken).
    lines : bool
        Keep newlines: the text is a message of several lines, its newlines are structure.

    Examples
    --------
    >>> inert("stream\\x1b[31mred\\x1b]52;c;cm0gLXJmIH4=\\x07\\x9b2J\\x00")
    'stream\\\\x1b[31mred\\\\x1b]52;c;cm0gLXJmIH4=\\\\x07\\\\x9b2J\\\\x00'
    >>> print(inert("a\\nb\\tc\\x7f"), inert("a\\nb", lines=True), sep=" | ")
    a\\nb\\tc\\x7f | a
    b
    >>> print(inert("name\\udc9b"), inert("\\u202eevil"), inert("Zürich 🌧 ě"))
    name\\x9b \\u202eevil Zürich 🌧 ě
    """
    text = str(value)
    return (_UNSAFE_BUT_NEWLINE if lines else UNSAFE).sub(_visible, text)


def guard_warnings() -> None:
    """Show Python's warnings (a library's, naming a glyph or a value of the user's) through
    :func:`inert`, newlines kept. Calling it again changes nothing."""
    shown = warnings.formatwarning
    if getattr(shown, "inert", False):
        return

    def formatwarning(*args: Any, **kwargs: Any) -> str:
        return inert(shown(*args, **kwargs), lines=True)

    formatwarning.inert = True  # type: ignore[attr-defined]
    warnings.formatwarning = formatwarning

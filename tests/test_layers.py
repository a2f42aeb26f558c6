"""The rooms of the house and what each may import, checked over every module.

Each package's ``__init__.py`` says in its docstring what the room is for and, in a literal
block that starts with the line ``Imports (the rule tests/test_layers.py checks)::``, what
its modules may import::

    may import:     foldstream.operators, foldstream.job.config
    never imports:  pyflink
    cluster may also import:  foldstream.job.engines.flink

* ``may import``: the modules of ``foldstream`` a module of the room may import besides its own
  room (the package and everything below it); ``(none)`` for no other. A name covers the
  modules below it (``foldstream.job.engines`` covers ``foldstream.job.engines.inprocess``).
* ``never imports``: other names (a library such as ``pyflink``) no module of the room imports.
* ``NAME may also import``: more for the module ``NAME`` of the room (and, when it is a
  package, the modules below it) only: an exception the docstring gives a reason for.

A module follows the rule of the nearest package above it whose ``__init__`` has one; every
package must have one. Every ``import`` counts, the ones inside a function or under
``if TYPE_CHECKING:`` too: a function-local import is a dependency all the same.
The folders and the packages they are installed as come from ``pyproject.toml``
(``[tool.setuptools.package-dir]``), so a moved folder needs no change here.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEADER = "Imports (the rule tests/test_layers.py checks)::"


@dataclass(frozen=True)
class Rule:
    """One room's rule, as its ``__init__`` docstring states it."""

    room: str  #: the package, e.g. ``foldstream.job.tools``
    may: tuple[str, ...]
    never: tuple[str, ...]
    also: dict[str, tuple[str, ...]] = field(default_factory=dict)  #: module -> more names


@dataclass(frozen=True)
class Violation:
    module: str
    imported: str
    line: int
    why: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.imported}: {self.why}"


def modules() -> dict[str, Path]:
    """Every module of the installed tree, by dotted name (packages by their own name)."""
    dirs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    found: dict[str, Path] = {}
    # the deepest folder first: job/public (the package foldstream) is not foldstream.job.public
    folders = sorted(dirs.items(), key=lambda item: -len(item[1]))
    claimed: set[Path] = set()
    for package, folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path in claimed:
                continue
            claimed.add(path)
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def _names(text: str) -> tuple[str, ...]:
    return tuple(n for n in re.split(r"[\s,]+", text.strip()) if n and n != "(none)")


def parse_rule(room: str, docstring: str | None) -> Rule | None:
    """The rule of a package's docstring, or None when it states none.

    >>> parse_rule("foldstream.x", "Doc.\\n\\n" + HEADER + "\\n\\n    may import: foldstream.y\\n"
    ...            "    never imports: pyflink\\n    tool may also import: foldstream.z\\n")
    ... # doctest: +NORMALIZE_WHITESPACE
    Rule(room='foldstream.x', may=('foldstream.y',), never=('pyflink',),
         also={'foldstream.x.tool': ('foldstream.z',)})
    """
    if not docstring or HEADER not in docstring:
        return None
    block = docstring.split(HEADER, 1)[1].lstrip("\n")
    lines: dict[str, str] = {}  # key -> its names, continuation lines (indented deeper) joined
    indent = None
    key = ""
    for line in block.splitlines():
        if not line.strip():
            if lines:
                break  # the literal block ends at its first blank line after a rule line
            continue
        depth = len(line) - len(line.lstrip())
        if not depth:
            break
        indent = depth if indent is None else indent
        if depth > indent and key:
            lines[key] += " " + line.strip()
            continue
        key, colon, value = line.strip().partition(":")
        if not colon:
            raise ValueError(f"{room}: a rule line without a colon: {line.strip()!r}")
        lines[key] = value
    also = {}
    for key, value in lines.items():
        if key.endswith(" may also import"):
            also[f"{room}.{key.removesuffix(' may also import')}"] = _names(value)
        elif key not in ("may import", "never imports"):
            raise ValueError(f"{room}: unknown rule line {key!r}")
    return Rule(room, _names(lines.get("may import", "")), _names(lines.get("never imports", "")),
                also)


def rules(found: dict[str, Path]) -> dict[str, Rule | None]:
    out = {}
    for name, path in found.items():
        if path.name == "__init__.py":
            out[name] = parse_rule(name, ast.get_docstring(ast.parse(path.read_text())))
    return out


def imports(name: str, path: Path, known: set[str]):
    """(imported name, line) of every import of a module, relative ones resolved; ``from p import
    m`` counts as ``p.m`` when ``p.m`` is a module."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                yield (sub if sub in known else module), node.lineno


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def check(found: dict[str, Path], stated: dict[str, Rule | None]) -> list[Violation]:
    """Every import that breaks the rule of its module's room."""
    known = set(found)
    out = []
    for name, path in found.items():
        rooms = [r for r in stated if _under(name, r) and stated[r] is not None]
        rule = stated[max(rooms, key=len)]
        allowed = rule.may + tuple(
            n for module, more in rule.also.items() if _under(name, module) for n in more)
        for imported, line in imports(name, path, known):
            if any(_under(imported, n) for n in rule.never):
                out.append(Violation(name, imported, line, f"{rule.room} never imports it"))
            elif _under(imported, "foldstream") and not _under(imported, rule.room) \
                    and not any(_under(imported, n) for n in allowed):
                out.append(Violation(name, imported, line,
                                     f"not in what {rule.room} may import"))
    return out


FOUND = modules()
STATED = rules(FOUND)


def test_every_package_states_its_rule():
    missing = [room for room, rule in STATED.items() if rule is None]
    assert not missing, (f"these packages' __init__ docstrings state no import rule "
                         f"(a literal block after {HEADER!r}): {missing}")


def test_the_rules_name_what_exists():
    """A rule naming a module that is not there is stale (a typo, or a module that moved)."""
    for rule in filter(None, STATED.values()):
        for name in (*rule.may, *(n for more in rule.also.values() for n in more), *rule.also):
            if name.startswith("foldstream"):
                assert any(_under(m, name) for m in FOUND), f"{rule.room}: no module {name}"


def test_the_imports_obey_the_rules():
    assert not any(rule is None for rule in STATED.values())
    violations = check(FOUND, STATED)
    assert not violations, "\n".join(map(str, violations))


@pytest.mark.parametrize("room, imported", [
    ("foldstream.operators", "foldstream.job.config"),
    ("foldstream.operators", "pyflink.datastream"),
    ("foldstream.connectors", "foldstream.job"),
    ("foldstream.job.tools", "foldstream.job.engines.inprocess"),
])
def test_a_forbidden_import_is_found(tmp_path, room, imported):
    """The check can fail: a module of the room that imports, inside a function, what the room
    must not import is reported with its line."""
    module = tmp_path / "intruder.py"
    module.write_text(f"def f():\n    import {imported}\n")
    found = {**FOUND, f"{room}.intruder": module}
    (violation,) = check(found, STATED)
    assert (violation.module, violation.imported, violation.line) == \
        (f"{room}.intruder", imported, 2)


def test_operators_and_connectors_never_import_job():
    """The house's first rule, whatever the docstrings say, in every room of both."""
    rooms = [r for r in STATED
             if _under(r, "foldstream.operators") or _under(r, "foldstream.connectors")]
    assert len(rooms) > 2
    for room in rooms:
        assert not any(_under(n, "foldstream.job") for n in STATED[room].may), room
        assert "pyflink" in STATED[room].never, room


def test_operators_has_rooms_by_concern():
    """operators/ is rooms (subpackages), each with its own rule; the stages import the math,
    the models and the records, and none of those imports a stage."""
    rooms = {r for r in STATED if r.startswith("foldstream.operators.")}
    assert {"foldstream.operators.stages", "foldstream.operators.stats",
            "foldstream.operators.learners", "foldstream.operators.records"} <= rooms
    for room in rooms - {"foldstream.operators.stages"}:
        rule = STATED[room]
        assert not any(_under(n, "foldstream.operators.stages")
                       for n in (*rule.may, *(m for more in rule.also.values() for m in more)))


def local_imports(path: Path) -> list[tuple[str, int]]:
    """(module, line) of each import of a ``foldstream`` module (or a relative one) made inside
    a function: a dependency hidden from the reader, most often one that breaks a cycle."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Import):
                out += [(a.name, inner.lineno) for a in inner.names
                        if _under(a.name, "foldstream")]
            elif isinstance(inner, ast.ImportFrom) and (
                    inner.level or _under(inner.module or "", "foldstream")):
                out.append(("." * inner.level + (inner.module or ""), inner.lineno))
    return out


def test_operators_import_nothing_of_foldstream_inside_a_function():
    """A cycle between modules of operators/ is removed, not hidden in a function."""
    found = {name: (path, local_imports(path)) for name, path in FOUND.items()
             if _under(name, "foldstream.operators")}
    hidden = [f"{name}:{line} imports {module}" for name, (path, lines) in found.items()
              for module, line in lines]
    assert not hidden, "\n".join(hidden)


def test_a_local_import_is_found(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import math\n\ndef f():\n    import math\n"
                      "    from foldstream.operators.stages import learner\n")
    assert local_imports(module) == [("foldstream.operators.stages", 5)]


def _top_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def stale_imports(name: str, path: Path) -> list[str]:
    """Each import of a ``foldstream`` module that does not exist (an old path, kept alive
    only for pickles by :mod:`foldstream.operators.moved`) and each ``from package import x``
    whose ``x`` is neither a module of the package nor a name its ``__init__`` defines."""
    out = []
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [f"{name}:{node.lineno} {a.name}" for a in node.names
                    if _under(a.name, "foldstream") and a.name not in FOUND]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not _under(module, "foldstream"):
                continue
            if module not in FOUND:
                out.append(f"{name}:{node.lineno} {module}")
            elif FOUND[module].name == "__init__.py":
                defined = _top_names(FOUND[module])
                out += [f"{name}:{node.lineno} {module}.{a.name}" for a in node.names
                        if f"{module}.{a.name}" not in FOUND and a.name not in defined
                        and a.name != "*"]
    return out


def test_every_import_names_what_exists():
    """After a move, no import holds on to an old path (which the pickles' aliases would
    otherwise keep working in silence)."""
    stale = [line for name, path in FOUND.items() for line in stale_imports(name, path)]
    tests = ROOT / "tests"
    stale += [line for path in sorted(tests.rglob("*.py"))
              for line in stale_imports(f"tests.{path.stem}", path)]
    assert not stale, "imports of modules or names that do not exist:\n" + "\n".join(stale)


def test_a_stale_import_is_found(tmp_path):
    """Old paths on purpose (move_imports: leave)."""
    module = tmp_path / "m.py"
    module.write_text("from foldstream.operators.evaluator import FoldEvaluator\n"
                      "from foldstream.operators.stats import wilcoxon, windows\n")
    assert stale_imports("x.m", module) == ["x.m:1 foldstream.operators.evaluator",
                                            "x.m:2 foldstream.operators.stats.wilcoxon"]

"""The documentation: README.md, CONTRIBUTING.md and the site of docs/ (mkdocs.yml).

The site is built strictly (``mkdocs build --strict``): a page of docs/ missing from the nav, a
link to a page or an anchor that does not exist each fail the build, so a page that moves or a
heading that is renamed fails here. The README stays short, its links resolve, and its commands
are the ones CI runs. CONTRIBUTING.md names modules that exist, so a module that moves fails
here until the newcomer's path is updated.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
DOCS = ROOT / "docs"
#: a Markdown link or image: its target, up to a ``#anchor``
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s#]*)(#[^)\s]*)?\)")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.fail("mkdocs is not installed: pip install -e '.[test]' (the docs extra)")
    environment = dict(os.environ, NO_MKDOCS_2_WARNING="1")  # Material's notice, not ours
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(config), "--site-dir", str(site)], capture_output=True, text=True,
                          timeout=300, env=environment, cwd=config.parent)


def _section(text: str, title: str) -> str:
    start = text.index(f"\n{title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def _code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


# ------------------------------------------------------------------------------- the site
def test_the_site_builds_strictly(tmp_path):
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    reference = (tmp_path / "site" / "configuration" / "index.html").read_text(encoding="utf-8")
    assert "evaluation.alarms.page_hinkley" in reference  # the generated reference is a page


def _small_site(folder: Path) -> Path:
    """A site of two pages under the repository's mkdocs.yml (its theme and validation)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = folder / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n## A heading\n\n[the other](other.md)\n",
                                   encoding="utf-8")
    (docs / "other.md").write_text("# Other\n\n[home](index.md#a-heading)\n", encoding="utf-8")
    config.update(docs_dir="docs", nav=[{"Home": "index.md"}, {"Other": "other.md"}])
    config_file = folder / "mkdocs.yml"
    config_file.write_text(yaml.safe_dump(config), encoding="utf-8")
    return config_file


def test_the_small_site_builds(tmp_path):
    done = _build(_small_site(tmp_path), tmp_path / "site")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("page, text, named", [
    ("orphan.md", "# A page not in the nav\n", "orphan.md"),
    ("other.md", "# Other\n\n[gone](gone.md)\n", "'gone.md'"),
    ("other.md", "# Other\n\n[home](index.md#no-heading)\n", "#no-heading"),
], ids=["page missing from the nav", "broken link", "broken anchor"])
def test_a_page_missing_from_the_nav_or_a_broken_link_fails_the_build(tmp_path, page, text,
                                                                      named):
    config_file = _small_site(tmp_path)
    (tmp_path / "docs" / page).write_text(text, encoding="utf-8")
    done = _build(config_file, tmp_path / "site")
    assert done.returncode != 0 and named in done.stderr, done.stderr


def test_every_page_of_docs_is_in_the_nav():
    """Also checked by the strict build; said here by name, for a reader of a failure."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(nav) -> list[str]:
        found = []
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            found += pages(value) if isinstance(value, list) else [value]
        return found

    in_nav = pages(config["nav"])
    assert sorted(in_nav) == sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    for page in ("trust.md", "delivery.md", "memory.md", "bad-input.md", "configuration.md"):
        assert page in in_nav


# ------------------------------------------------------------------------------ the README
def test_the_readme_is_short_and_its_links_resolve():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    targets = [m.group(1) for m in LINK.finditer(text) if "://" not in m.group(1)]
    assert "docs/plots/elec-kappa_m.png" in targets or "docs/dashboard.png" in targets
    missing = [t for t in targets if t and not (ROOT / t).exists()]
    assert missing == []


def test_the_readme_test_command_is_the_one_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = ci.strip().splitlines()[-1].replace(" -q ", " ")  # CI's pip is quiet, that is all
    assert command.startswith("python3 -m venv .venv")
    quick_start = "".join(_code_blocks(_section(README.read_text(encoding="utf-8"),
                                                "## Quick start"), "bash"))
    assert command in quick_start.splitlines()
    assert "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/foldstream run" \
        in quick_start.splitlines()


def test_the_readme_python_example_is_the_one_of_the_docs():
    readme = _code_blocks(_section(README.read_text(encoding="utf-8"), "## From Python"),
                          "python")
    assert len(readme) == 1
    assert readme[0] in _code_blocks((DOCS / "python.md").read_text(encoding="utf-8"), "python")


def test_no_page_points_beside_the_repository():
    pages = [README, CONTRIBUTING, *DOCS.rglob("*.md")]
    assert [p.name for p in pages if "../shared" in p.read_text(encoding="utf-8")] == []


# ------------------------------------------------------------------------ CONTRIBUTING.md
def test_contributing_names_files_that_exist():
    text = CONTRIBUTING.read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:job|operators|connectors|tests|conf|docs|bench)/[\w/.-]*)`",
                           text))
    assert len(named) > 20
    missing = sorted(path for path in named if not (ROOT / path).exists())
    assert missing == [], "CONTRIBUTING.md names files that are not there: update it"


def test_contributing_gives_the_quick_loop_and_the_full_suite():
    text = CONTRIBUTING.read_text(encoding="utf-8")
    assert "pytest -m 'not slow'" in text or 'pytest -m "not slow"' in text
    assert ".venv/bin/python -m pytest\n" in text
    assert "72" in text  # the commit subject's length


def test_contributing_follows_one_example_in_under_a_page():
    text = CONTRIBUTING.read_text(encoding="utf-8")
    path = _section(text, "## From `foldstream run` to the sink")
    assert len(path.splitlines()) < 50
    steps = [Path(m).stem for m in re.findall(r"^\d+\. `([\w/.]+)`", path, re.M)]
    assert steps[0] == "cli" and steps[-1] == "sinks"  # the modules by name: a move keeps them
    assert steps.index("fanout") < steps.index("learner") < steps.index("evaluator") \
        < steps.index("aggregator")

"""A quick start: the command line imports what a command uses when it runs it.

``foldstream --help`` and the import of the command line load no numerical library, engine or
JVM bridge (each costs from a tenth of a second to seconds at start); a command's own help loads
its tool. Checked in a fresh interpreter through ``sys.modules``, never by a timing.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "scipy", "numba", "pandas", "river", "pyflink", "jpype", "pyarrow")


def _loaded_after(code: str) -> list[str]:
    """The top-level packages of :data:`HEAVY` and the foldstream modules loaded by ``code``
    in a fresh interpreter."""
    probe = (f"import contextlib, io, json, sys\n{code}\n"
             f"print(json.dumps(sorted(m for m in sys.modules "
             f"if m.split('.')[0] in {HEAVY!r} or m.startswith('foldstream.'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.splitlines()[-1])


def _heavy(modules: list[str]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY})


def test_importing_the_command_line_loads_no_heavy_library():
    assert _heavy(_loaded_after("import foldstream.job.cli")) == []


@pytest.mark.parametrize("argv", [["--help"], ["--log-level", "debug", "--help"],
                                  ["run", "--help"], ["validate", "--help"]])
def test_help_loads_no_heavy_library_and_no_tool(argv):
    loaded = _loaded_after(
        "from foldstream.job.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass")
    assert _heavy(loaded) == []
    assert not [m for m in loaded if m.startswith(("foldstream.job.tools.report",
                                                   "foldstream.job.tools.experiment",
                                                   "foldstream.job.tools.dashboard.",
                                                   "foldstream.job.config",
                                                   "foldstream.job.runner"))]


def test_a_tools_help_still_shows_its_defaults():
    """The tools whose defaults live in their modules get their arguments when named."""
    for command, default in (("report", "--figures"), ("dashboard", "--history"),
                             ("experiment", "--workers")):
        done = subprocess.run([sys.executable, "-m", "foldstream.job.cli", "--log-level",
                               "warning", command, "--help"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert default in done.stdout


def test_a_run_without_a_pipeline_loads_no_pandas(tmp_path):
    """Checking a learner that is no river pipeline imports neither ``river.compose`` nor
    pandas, which it imports (a quarter of a second of a short run's start)."""
    loaded = _loaded_after(
        "from foldstream.job.cli import main\n"
        f"main(['run', '--quiet', '--set', 'source.limit=300', '--set',\n"
        f"      'sink.path={tmp_path / 'm.jsonl'}',\n"
        "      '--set', 'learners=[{name: nc, model: river.dummy.NoChangeClassifier}]'])")
    assert "river" in _heavy(loaded) and "pandas" not in _heavy(loaded)


def test_validate_of_remembered_learners_loads_no_river(tmp_path):
    """A second ``foldstream validate`` of the embedded default passes its three river learners
    from their remembered checks (operators/learners/checked.py): river, pandas and scipy,
    more than a second of importing, are not loaded."""
    code = ("import os\n"
            f"os.environ['FOLDSTREAM_CACHE'] = {str(tmp_path)!r}\n"
            "from foldstream.job.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['validate']) == 0")
    assert "river" in _heavy(_loaded_after(code))  # the first checks them in full
    assert [m for m in _heavy(_loaded_after(code)) if m in ("river", "pandas", "scipy")] == []

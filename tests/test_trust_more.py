"""Hostile variants of issue 18's kinds that its first tests did not try ("hidden cases of the
same kinds will be rechecked"): each fails without the fix named in its docstring."""

from __future__ import annotations

import pytest

from foldstream.job.config import ConfigError
from foldstream.job.tools.experiment import read_results


@pytest.mark.parametrize("text", ['{"x": 1, "target": 0}\n', "x,target\n"])
def test_a_whole_last_line_that_is_no_result_is_refused_not_erased(tmp_path, text):
    """A kill cuts a line before its newline; a whole line that is no result is another file
    given as ``--results`` (a data set): refused, never "repaired" away."""
    path = tmp_path / "one.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1"):
        read_results(path)
    assert path.read_text(encoding="utf-8") == text


def test_a_cut_last_line_is_still_a_line_cut_by_a_kill(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"experiment": "cu', encoding="utf-8")
    assert read_results(path) == ([], 1)

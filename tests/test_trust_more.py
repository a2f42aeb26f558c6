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


# ------------------------------------------------------------------ kind 5: delayed labels
def _delayed(tmp_path, rows):
    import json

    import foldstream
    from river import dummy

    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return foldstream.evaluate({"path": str(path), "id_field": "id", "label": "y",
                                "stream": "s"}, {"nc": dummy.NoChangeClassifier()},
                               mode="single", report_every=1000, delay={})


@pytest.mark.parametrize("ids", [("007", "7"), ("1_000", "1000"), ("+5", "5"),
                                 ("\u0661\u0662", "12")])
def test_text_ids_that_spell_a_number_otherwise_are_other_ids(tmp_path, ids):
    """``"007"`` and ``"7"`` are two ids: a label of one never joins the other's example (the
    text of an id is an integer key only when it is the integer's own decimal form)."""
    first, second = ids
    results = _delayed(tmp_path, [{"id": first, "a": 1.0}, {"id": second, "a": 2.0},
                                  {"id": second, "y": "v"}, {"id": first, "y": "u"}])
    assert results.rejected == []
    last = [r for r in results.records if r["type"] == "measures"][-1]
    assert (last["position"], last["labelled"], last["pending"]) == (2, 2, 0)


def test_an_integer_id_and_its_decimal_text_are_one_id(tmp_path):
    """Kafka keys are text: ``1`` and ``"1"`` stay one id."""
    results = _delayed(tmp_path, [{"id": 1, "a": 1.0}, {"id": "1", "y": "u"}])
    assert results.rejected == []
    last = [r for r in results.records if r["type"] == "measures"][-1]
    assert (last["labelled"], last["pending"]) == (1, 0)


def test_a_text_id_of_5000_digits_is_a_text_id(tmp_path):
    """Longer than Python converts to an integer: kept as text, never an error."""
    key = "9" * 5000
    results = _delayed(tmp_path, [{"id": key, "a": 1.0}, {"id": key, "y": "u"}])
    assert results.rejected == []


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/full"])
def test_a_results_file_that_is_a_device_is_refused_at_once(device):
    """Reading ``/dev/zero`` (or ``/dev/full``) never ends: a results file must be a file."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(read_results, device)
        try:
            error = future.exception(timeout=20)
        except concurrent.futures.TimeoutError:
            pytest.fail(f"read_results({device}) never ended")  # the thread stays: test ends
        assert isinstance(error, ConfigError) and "not a regular file" in str(error)


def test_results_into_dev_null_still_read_as_none():
    assert read_results("/dev/null") == ([], 0)

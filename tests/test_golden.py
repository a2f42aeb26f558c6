"""The embedded default's records, byte for byte, against a golden file.

``tests/golden/default-run.jsonl.gz`` holds every record of ``foldstream run`` with the embedded
default (Electricity, three learners, 10-fold bootstrap, ADWIN) except the two timing fields of
the ``summary`` record. It was written before the layout of ``job/`` changed, so any refactor that
moves a byte of the output fails here. A deliberate change of the records (a new field, a new
record type) regenerates it:

    python tests/test_golden.py --write
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from foldstream.operators.records.outputs import SummaryRecord

GOLDEN = Path(__file__).resolve().parent / "golden" / "default-run.jsonl.gz"
TIMING = SummaryRecord.TIMING_FIELDS  # the one list of the fields that vary from run to run


def without_timing(lines) -> list[str]:
    kept = []
    for line in lines:
        record = json.loads(line)
        if record["type"] == "summary":
            for key in TIMING:
                record.pop(key)
        kept.append(json.dumps(record, separators=(",", ":"), ensure_ascii=False))
    return kept


def default_run(folder: Path) -> list[str]:
    from foldstream.job import cli

    path = folder / "metrics.jsonl"
    assert cli.main(["run", "--quiet", "--set", f"sink.path={path}"]) == 0
    return without_timing(path.read_text(encoding="utf-8").splitlines())


@pytest.mark.slow
def test_default_run_equals_the_golden_file(tmp_path):
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as handle:
        golden = handle.read().splitlines()
    records = default_run(tmp_path)
    assert len(records) == len(golden)
    for i, (line, expected) in enumerate(zip(records, golden)):
        assert line == expected, f"record {i + 1} differs"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        lines = default_run(Path(folder))
    with gzip.GzipFile(GOLDEN, "wb", mtime=0) as handle:
        handle.write(("\n".join(lines) + "\n").encode("utf-8"))
    print(f"wrote {len(lines)} records to {GOLDEN}")

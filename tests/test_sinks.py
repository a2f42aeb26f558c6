"""The sinks (connectors/sinks.py) and the checks of their paths: an output never hurts an input
or another output, and a write that fails leaves whole lines and one clear message.

* ``sink.path`` equal to ``source.path`` (or a link to it), or to the configuration file, is
  refused by ``validate`` and ``run``; so is a dead-letter path equal to the records path, and
  an unwritable sink location;
* a second run on a file that another run writes is refused, naming the holder;
* a full disk under the records sink ends the run in one line, the file cut back to its last
  whole line; a closed standard output (``| head``) ends the run quietly.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from foldstream.connectors.sinks import JsonLinesSink, MemorySink, SinkUnavailable, \
    SinkWriteFailed, StdoutSink, check_outputs, Named
from foldstream.job import exitcodes
from foldstream.job.cli import main
from foldstream.operators.records.base import dumps

LEARNER = "learners=[{name: nb, model: river.naive_bayes.GaussianNB}]"


@pytest.fixture
def stream(tmp_path: Path) -> Path:
    path = tmp_path / "s.csv"
    rows = "".join(f"{i % 7 / 7:.3f},{(i // 3) % 2}\n" for i in range(400))
    path.write_text("x,target\n" + rows, encoding="utf-8")
    return path


def tiny(stream: Path, *more: str) -> list[str]:
    """The ``--set`` arguments of a small run of ``stream``, then ``more``."""
    sets = [f"source.path={stream}", "source.stream=s", LEARNER, "evaluation.folds=2",
            "evaluation.report_every=5", *more]
    return [arg for item in sets for arg in ("--set", item)]


def foldstream(*args: str, **options) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "foldstream.job.cli", *args],
                          capture_output=True, text=True, timeout=300, **options)


def one_line(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------- a sink is not an input
def _spellings(stream: Path) -> dict[str, Path]:
    link = stream.with_name("link.csv")
    link.symlink_to(stream.name)
    hard = stream.with_name("hard.csv")
    os.link(stream, hard)
    return {"same": stream, "dotted": stream.parent / "." / ".." / stream.parent.name / stream.name,
            "symlink": link, "hard-link": hard}


@pytest.mark.parametrize("spelling", ["same", "dotted", "symlink", "hard-link"])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_sink_that_is_the_source_is_refused_and_the_input_kept(stream, capsys, spelling,
                                                                 command):
    before = stream.read_bytes()
    sink = _spellings(stream)[spelling]
    assert main([command, *tiny(stream, f"sink.path={sink}")]) == exitcodes.UNUSABLE
    err = one_line(capsys.readouterr().err)
    assert f"sink.path: {sink} is the file of source.path" in err
    assert stream.read_bytes() == before


def test_dead_letters_that_are_the_source_are_refused(stream, capsys):
    code = main(["validate", *tiny(stream, "sink={kind: stdout, dead_letter_path: "
                                           f"'{stream.parent}/./{stream.name}'}}")])
    assert code == exitcodes.UNUSABLE
    assert "sink.dead_letter_path:" in capsys.readouterr().err


@pytest.mark.parametrize("dead", ["{out}", "{tmp}/./x/../m.jsonl", "{tmp}/m.rejected.jsonl"])
def test_two_outputs_in_one_file_are_refused(stream, tmp_path, capsys, dead):
    """The records and dead letters in one file, spelt the same, otherwise, or by default (the
    dead letters of ``m.rejected.jsonl`` are ``m.rejected.jsonl``)."""
    out = tmp_path / ("m.rejected.jsonl" if "rejected" in dead else "m.jsonl")
    sets = [f"sink.path={out}"]
    if "rejected" not in dead:
        sets.append(f"sink.dead_letter_path={dead.format(out=out, tmp=tmp_path)}")
    assert main(["validate", *tiny(stream, *sets)]) == exitcodes.UNUSABLE
    assert "each output needs a file of its own" in one_line(capsys.readouterr().err)


def test_devices_may_take_both_outputs(stream, capsys):
    assert main(["validate", *tiny(stream, "sink.path=/dev/null",
                                   "sink.dead_letter_path=/dev/null")]) == exitcodes.OK


def test_a_kafka_sink_never_writes_into_its_input_topic(capsys):
    kafka = ["--set", "source={kind: kafka, topic: examples, bounded: true}",
             "--set", "engine.kind=flink"]
    assert main(["validate", *kafka, "--set", "sink={kind: kafka, topic: examples}"]) == 2
    assert "sink.topic: 'examples' is also source.topic" in one_line(capsys.readouterr().err)
    assert main(["validate", *kafka, "--set",
                 "sink={kind: kafka, topic: m, dead_letter_topic: m}"]) == 2
    assert "sink.dead_letter_topic: 'm' is also sink.topic" in one_line(capsys.readouterr().err)
    other_cluster = "sink={kind: kafka, topic: examples, bootstrap_servers: 'elsewhere:9092'}"
    assert main(["validate", *kafka, "--set", other_cluster]) == exitcodes.OK


# ------------------------------------------------------------------------ unwritable sinks
@pytest.mark.parametrize("command", ["validate", "run"])
def test_an_unwritable_sink_location_is_refused_with_the_reason(stream, tmp_path, capsys,
                                                                command):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code = main([command, *tiny(stream, f"sink.path={blocker}/deep/m.jsonl")])
    assert code == exitcodes.UNUSABLE
    assert f"sink.path: cannot write {blocker}/deep/m.jsonl: Not a directory: {blocker}" \
        in one_line(capsys.readouterr().err)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any folder")
def test_a_folder_without_write_permission_is_refused(stream, tmp_path, capsys):
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o500)
    assert main(["validate", *tiny(stream, f"sink.dead_letter_path={closed}/d.jsonl")]) == 2
    assert "sink.dead_letter_path: cannot write" in one_line(capsys.readouterr().err)
    assert "Permission denied" in one_line(capsys.readouterr().err)


def test_check_outputs_compares_files_not_spellings(tmp_path):
    existing = tmp_path / "a.jsonl"
    existing.write_text("")
    with pytest.raises(SinkUnavailable, match="sink.path: .* is the file of source.path"):
        check_outputs([Named("sink.path", tmp_path / "x" / ".." / "a.jsonl")],
                      [Named("source.path", existing)])
    check_outputs([Named("sink.path", tmp_path / "b.jsonl")], [Named("source.path", existing)])


# ------------------------------------------------------------------------------ the lock
HOLD = ("import sys; from foldstream.connectors.sinks import JsonLinesSink; "
        "sink = JsonLinesSink(sys.argv[1], append=True); print('held', flush=True); "
        "sys.stdin.read()")


def test_a_second_run_on_a_locked_sink_is_refused_naming_the_holder(stream, tmp_path, capsys):
    out = tmp_path / "m.jsonl"
    out.write_text('{"kept": true}\n')
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        code = main(["run", "--quiet", *tiny(stream, f"sink.path={out}")])
        assert code == exitcodes.UNUSABLE
        assert f"sink.path: {out} is being written by process {holder.pid}" \
            in one_line(capsys.readouterr().err)
        assert out.read_text() == '{"kept": true}\n'  # not truncated by the refused run
    finally:
        holder.kill()  # as a crash: no chance to unlock
        holder.wait()
    # the lock went with the process: no stale lock blocks the next run
    assert main(["run", "--quiet", *tiny(stream, f"sink.path={out}")]) == exitcodes.OK
    assert json.loads(out.read_text().splitlines()[-1])["type"] == "summary"


def test_the_dead_letter_file_is_locked_too(stream, tmp_path, capsys):
    dead = tmp_path / "d.jsonl"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(dead)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        code = main(["run", "--quiet", *tiny(stream, f"sink.path={tmp_path}/m.jsonl",
                                             f"sink.dead_letter_path={dead}")])
        assert code == exitcodes.UNUSABLE
        assert f"sink.dead_letter_path: {dead} is being written by process {holder.pid}" \
            in one_line(capsys.readouterr().err)
    finally:
        holder.stdin.close()
        holder.wait()


# ------------------------------------------------------------------------- refused writes
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_under_the_records_ends_the_run_in_one_line(stream, tmp_path, capsys):
    code = main(["run", *tiny(stream, "sink.path=/dev/full",
                              f"sink.dead_letter_path={tmp_path}/d.jsonl")])
    assert code == exitcodes.WRITE_FAILED
    assert one_line(capsys.readouterr().err).endswith(
        "error: cannot write /dev/full: No space left on device; the run stopped")


def _file_size_limit(limit: int):
    def apply() -> None:  # in the child: a write past the limit fails with EFBIG, no signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_refused_write_leaves_only_whole_lines(stream, tmp_path):
    """A file size limit refuses a write in the middle of a line, as a full disk does."""
    out = tmp_path / "m.jsonl"
    done = foldstream("run", "--quiet", *tiny(stream, f"sink.path={out}"),
                      preexec_fn=_file_size_limit(100_000))
    assert done.returncode == exitcodes.WRITE_FAILED, done.stderr
    assert "Traceback" not in done.stderr
    lines = out.read_bytes().split(b"\n")
    assert lines[-1] == b""  # ends with a newline
    records = [json.loads(line) for line in lines[:-1]]  # every line whole
    assert records and records[-1]["type"] == "measures"  # the run stopped before its summary
    assert f"error: cannot write {out}: File too large; the run stopped; it holds the first " \
           f"{len(records)} records, each line whole" in one_line(done.stderr)


def test_the_sink_cuts_a_partial_write_back_to_its_last_whole_line(tmp_path):
    """In a child process: the limit would also stop pytest's own files."""
    out = tmp_path / "m.jsonl"
    script = (
        "import sys; from foldstream.connectors.sinks import JsonLinesSink, SinkWriteFailed\n"
        "sink = JsonLinesSink(sys.argv[1])\n"
        "try:\n"
        "    for i in range(1000): sink.write({'i': i, 'pad': 'x' * 50})\n"
        "    sink.close()\n"
        "except SinkWriteFailed as e: print(e.lines, e.strerror)\n")
    done = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True,
                          text=True, preexec_fn=_file_size_limit(10_000), timeout=120)
    kept, reason = done.stdout.split(" ", 1)
    assert reason.strip() == os.strerror(27)  # EFBIG
    lines = out.read_text().splitlines(keepends=True)
    assert len(lines) == int(kept) > 0 and all(line.endswith("}\n") for line in lines)
    assert [json.loads(line)["i"] for line in lines] == list(range(len(lines)))
    assert out.stat().st_size <= 10_000


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_the_sink_raises_a_named_error_on_a_device_that_refuses(tmp_path):
    sink = JsonLinesSink("/dev/full")
    sink.write({"a": 1})
    with pytest.raises(SinkWriteFailed) as failed:
        sink.close()
    assert (failed.value.filename, failed.value.strerror, failed.value.lines) == (
        "/dev/full", "No space left on device", None)


def test_a_reader_that_goes_away_ends_the_run_quietly(stream, tmp_path):
    """``foldstream run ... | head -1``: exit 141 (128 + SIGPIPE), nothing on standard error."""
    command = [sys.executable, "-m", "foldstream.job.cli", "run", "--quiet",
               *tiny(stream, f"sink={{kind: stdout, dead_letter_path: '{tmp_path}/d.jsonl'}}")]
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert json.loads(run.stdout.readline())["type"] == "measures"
    run.stdout.close()  # as head does after its line
    err = run.stderr.read().decode()
    assert run.wait(timeout=300) == exitcodes.BROKEN_PIPE
    assert err == ""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_standard_output_on_a_full_disk_is_one_line(stream, tmp_path):
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "foldstream.job.cli", "run", "--quiet",
             *tiny(stream, f"sink={{kind: stdout, dead_letter_path: '{tmp_path}/d.jsonl'}}")],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    assert done.returncode == exitcodes.WRITE_FAILED
    assert one_line(done.stderr) == ("error: cannot write standard output: No space left on "
                                     "device; the run stopped")


# ------------------------------------------- the configuration file and the experiment's files
"""Outputs that cannot hurt, everywhere: a ``sink.path`` naming the run's own configuration file
is refused (it would overwrite the configuration with records), and a second run replaces the
records file, as the configuration reference says (a file holds one run)."""


@pytest.mark.parametrize("key", ["sink.path", "sink.dead_letter_path"])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_sink_that_is_the_configuration_file_is_refused(stream, tmp_path, capsys, key,
                                                          command):
    config = tmp_path / "run.yaml"
    config.write_text(f"source: {{kind: file, path: {stream}, stream: s}}\n"
                      f"learners: [{{name: nb, model: river.naive_bayes.GaussianNB}}]\n"
                      f"evaluation: {{folds: 2, report_every: 50}}\n"
                      f"sink: {{kind: file, path: {tmp_path}/m.jsonl}}\n", encoding="utf-8")
    before = config.read_bytes()
    link = tmp_path / "link.yaml"
    link.symlink_to(config.name)
    spelt = f"{tmp_path}/./run.yaml"
    assert main([command, str(link), "--set", f"{key}={spelt}"]) == exitcodes.UNUSABLE
    err = one_line(capsys.readouterr().err)
    assert f"error: {key}: " in err and f"is the file of the configuration ({link})" in err
    assert config.read_bytes() == before


def test_a_second_run_replaces_the_records_file_as_the_reference_says(stream, tmp_path):
    from foldstream.job.config import FileSink

    out = tmp_path / "m.jsonl"
    for _ in range(2):
        assert main(["run", "--quiet", *tiny(stream, f"sink.path={out}")]) == exitcodes.OK
    kinds = [json.loads(line)["type"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert kinds.count("summary") == 1  # one run's records, not two
    words = FileSink.model_fields["path"].description
    assert "replaced" in words and "append" not in words


# The sinks themselves: JSON Lines, standard output, memory.

RECORDS = [{"schema": 1, "type": "x", "v": 0.5}, {"schema": 1, "type": "y", "v": float("nan"),
                                                  "w": np.float64(2.0), "s": "é"}]


def test_json_lines_sink(tmp_path):
    path = tmp_path / "out" / "deep" / "m.jsonl"
    with JsonLinesSink(path) as sink:
        for record in RECORDS:
            sink.write(record)
    assert path.read_bytes().decode("utf-8") == "".join(dumps(r) + "\n" for r in RECORDS)
    assert [json.loads(line) for line in path.read_text("utf-8").splitlines()][1] == {
        "schema": 1, "type": "y", "v": None, "w": 2.0, "s": "é"}
    with pytest.raises(ValueError, match="closed"):
        sink.write(RECORDS[0])
    sink.close()  # twice is harmless


def test_stdout_sink(capsys):
    with StdoutSink() as sink:
        for record in RECORDS:
            sink.write(record)
    assert capsys.readouterr().out == "".join(dumps(r) + "\n" for r in RECORDS)


def test_memory_sink():
    sink = MemorySink()
    for record in RECORDS:
        sink.write(record)
    sink.close()
    assert sink.records == [json.loads(dumps(r)) for r in RECORDS]
    assert sink.records[1]["v"] is None and type(sink.records[1]["w"]) is float
    with pytest.raises(ValueError):
        sink.write(RECORDS[0])

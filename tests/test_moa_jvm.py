"""MOA's JVM (operators/learners/moa/jvm.py): what may start it, and that it cannot hang a run (docs/trust.md).

``engine.jvm_options`` takes only sizes and the garbage collector: an option that runs a
command, loads code or reads more options is refused at start (``validate``, ``run``,
``--set``, the Python API), exit 2 naming the key, and no marker file appears. A JVM that
cannot start is exit 2 naming the key and the JVM's reason. MOA's option strings cannot name a
serialised object (``file:``, nested too), and a MOA learner whose votes are not class scores
(a regressor) is refused. A Java OutOfMemoryError, or a heap that leaves the JVM collecting
garbage, quarantines the replica; signals stay with foldstream while the JVM runs.

Tests that start a JVM (in a child ``foldstream``, or this process's) are marked ``jvm``, which
tests/conftest.py makes slow.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foldstream.job.config import ConfigError, load_config
from foldstream.operators.learners.moa import JvmOptionsError, check_jvm_options

FOLDSTREAM = str(Path(sys.executable).parent / "foldstream")
SEA = "source: {kind: generator, model: river.datasets.synth.SEA, limit: 400}\n"
NB = "{name: a, model: moa.classifiers.bayes.NaiveBayes}"
HUGE_BAG = "{name: a, model: moa.classifiers.meta.OzaBag, options: '-s 100000000'}"
UNKNOWN = "{name: a, model: moa.classifiers.trees.Nope}"


def _variants(marker: Path, tmp: Path) -> dict[str, tuple[list[str], str]]:
    """Hostile ``engine.jvm_options`` (each with the learner that would set it off) by name."""
    flags = tmp / "flags"
    flags.write_text("+UnlockDiagnosticVMOptions\n"
                     "AbortVMOnException=java.lang.ClassNotFoundException\n"
                     f"OnError=touch {marker}\n")
    return {
        "on-oom": (["-Xmx24m", f"-XX:OnOutOfMemoryError=touch {marker}"], HUGE_BAG),
        "on-error": (["-XX:+UnlockDiagnosticVMOptions",
                      "-XX:AbortVMOnException=java.lang.ClassNotFoundException",
                      f"-XX:OnError=touch {marker}"], UNKNOWN),
        "flags-file": ([f"-XX:Flags={flags}"], UNKNOWN),
        "javaagent": ([f"-javaagent:{tmp / 'agent.jar'}"], NB),
        "agentpath": ([f"-agentpath:{tmp / 'agent.so'}"], NB),
        "agentlib": (["-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=0"], NB),
        "argfile": ([f"@{flags}"], NB),
        "property": ([f"-Djava.util.logging.config.file={flags}"], NB),
    }


def _foldstream(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([FOLDSTREAM, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def _config(tmp: Path, learner: str, options: list[str] | None = None,
            extra: str = "") -> Path:
    path = tmp / "c.yaml"
    engine = "" if options is None else f"engine: {{jvm_options: {json.dumps(options)}}}\n"
    path.write_text(f"{SEA}learners:\n  - {learner}\n{engine}"
                    f"sink: {{kind: file, path: {tmp / 'm.jsonl'}}}\n{extra}")
    return path


@pytest.mark.parametrize("option", [
    "-XX:OnError=sh", "-XX:OnOutOfMemoryError=touch x", "-javaagent:a.jar", "-agentpath:/a.so",
    "-agentlib:jdwp=transport=dt_socket", "-XX:Flags=f", "@argfile", "-XX:VMOptionsFile=f",
    "-XX:+UnlockDiagnosticVMOptions", "-XX:+HeapDumpOnOutOfMemoryError", "-Xlog:gc:file=x",
    "-verbose:gc", "-Dx=y", "-cp", "-Xmx1g -XX:OnError=sh", "-Xmx", "-Xmx1g\n", " -Xmx1g",
    "-XX:+ExitOnOutOfMemoryError", "-XX:MaxRAMPercentage=50;sh",
])
def test_jvm_options_outside_the_allow_list_are_refused(option):
    with pytest.raises(JvmOptionsError, match="engine.jvm_options") as error:
        check_jvm_options(["-Xmx1g", option])
    assert repr(option) in str(error.value)


def test_sizes_and_collectors_are_allowed():
    allowed = ["-Xmx2g", "-Xms512m", "-Xss4m", "-Xmn64M", "-XX:MaxRAMPercentage=75.5",
               "-XX:+UseSerialGC", "-XX:+UseParallelGC", "-XX:+UseG1GC", "-XX:+UseZGC",
               "-XX:ParallelGCThreads=2", "-XX:MaxMetaspaceSize=256m"]
    assert check_jvm_options(allowed) == tuple(allowed)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["on-oom", "on-error", "flags-file", "javaagent",
                                     "agentpath", "agentlib", "argfile", "property"])
def test_hostile_jvm_options_are_refused_everywhere_and_run_nothing(tmp_path, variant):
    """YAML with ``validate`` and ``run``, ``--set``, and the Python API: exit 2 naming the key
    and the option, and the marker file of the option's command never appears."""
    marker = tmp_path / "marker"
    options, learner = _variants(marker, tmp_path)[variant]
    config = _config(tmp_path, learner, options)
    refused = [o for o in options if o.startswith(("-XX:On", "-XX:+Unlock", "-XX:Flags", "-java",
                                                    "-agent", "@", "-D"))][0]
    for args in (["validate", str(config)], ["run", str(config), "--no-progress"],
                 ["validate", "--set", f"learners=[{learner}]",
                  "--set", f"engine.jvm_options={json.dumps(options)}"]):
        proc = _foldstream(*args, cwd=tmp_path)
        text = " ".join(proc.stderr.split())
        assert proc.returncode == 2, (args, proc.stdout, text)
        assert "engine.jvm_options" in text and refused in text, text
        assert not marker.exists(), args
    model = "moa.classifiers." + learner.split("moa.classifiers.")[1].split(",")[0].split("}")[0]
    code = ("import sys, foldstream\nfrom river.datasets import synth\n"
            "try:\n"
            f"    foldstream.evaluate(synth.SEA(seed=1), [{{'name': 'a', 'model': {model!r}, "
            f"'options': {('-s 100000000' if 'OzaBag' in model else '')!r}}}], limit=300, "
            f"folds=2, engine={{'jvm_options': {options!r}}})\n"
            "except foldstream.ConfigError as error:\n"
            "    print(error); sys.exit(2)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "engine.jvm_options" in proc.stdout and refused in proc.stdout, proc.stdout
    assert not marker.exists()


@pytest.mark.jvm
@pytest.mark.parametrize("option, reason", [
    ("-Xmx1k", "Too small maximum heap"),
    ("-Xmx100000g", "Could not reserve enough space"),
])
def test_a_jvm_that_cannot_start_is_exit_2_naming_the_key_and_the_jvms_reason(tmp_path, option,
                                                                             reason):
    config = _config(tmp_path, NB, [option])
    for args in (["validate", str(config)], ["run", str(config), "--no-progress"]):
        proc = _foldstream(*args, cwd=tmp_path)
        text = " ".join(proc.stderr.split())
        assert proc.returncode == 2, (args, text)
        assert "engine.jvm_options" in text and reason in text, text
        assert "no check foresaw" not in text and "fatal" not in proc.stdout + text


@pytest.mark.jvm
def test_allowed_options_start_the_jvm(tmp_path):
    config = _config(tmp_path, NB, ["-Xmx300m", "-Xss2m", "-XX:+UseSerialGC"])
    proc = _foldstream("validate", str(config), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


# ------------------------------------------------------------------- MOA's option strings
@pytest.mark.jvm
@pytest.mark.parametrize("options", [
    "-l file:{path}",
    "-l (meta.OzaBag -l file:{path})",
    "-l (meta.OzaBag -s 3 -l (meta.OzaBag -l (file:{path})))",
    "-l inmem:model",
    "-l FILE:{path}",
])
def test_moa_options_naming_a_serialised_object_are_refused(tmp_path, options):
    """``validate`` and a run both refuse, exit 2 naming the learner, before MOA reads the
    file (MOA reading it would fail the run with an error no check foresaw)."""
    learner = (f"{{name: bag, model: moa.classifiers.meta.OzaBag, "
               f"options: '{options.format(path='/etc/passwd')}'}}")
    config = _config(tmp_path, learner)
    for args in (["validate", str(config)], ["run", str(config), "--no-progress"]):
        proc = _foldstream(*args, cwd=tmp_path)
        text = " ".join(proc.stderr.split())
        assert proc.returncode == 2, (args, text)
        assert "learners.0" in text and "deserialise" in text, text
    assert not (tmp_path / "m.jsonl").exists()


@pytest.mark.jvm
def test_moa_itself_refuses_a_path_to_an_object_the_text_check_missed():
    """``FoldLearner.parse`` walks the parsed options: an option whose value MOA holds as a
    file (or a name, or a task) is refused, whatever the text looked like."""
    import jpype

    from foldstream.operators.learners.moa import start_jvm

    learner = start_jvm()
    for cli in ("moa.classifiers.meta.OzaBag -l (meta.OzaBag -l file:/etc/passwd)",
                "moa.classifiers.meta.OzaBag -l inmem:x"):
        with pytest.raises(jpype.JException, match="deserialise"):
            learner.parse(cli)


@pytest.mark.jvm
@pytest.mark.parametrize("learner, words", [
    ("{name: r, model: moa.classifiers.trees.FIMTDD}", "trees.FIMTDD is a regressor"),
    ("{name: r, model: moa.classifiers.rules.AMRulesRegressor}", "AMRulesRegressor is a regressor"),
    ("{name: r, model: moa.classifiers.trees.ORTO}", "ORTO is a regressor"),
    ("{name: r, model: moa.classifiers.meta.AdaptiveRandomForestRegressor}", "is a regressor"),
    ("{name: r, model: moa.classifiers.meta.OzaBag, options: '-l trees.FIMTDD'}",
     "option -l is moa.classifiers.trees.FIMTDD, a regressor"),
    ("{name: r, model: moa.classifiers.meta.WeightedMajorityAlgorithm, "
     "options: '-l trees.HoeffdingTree,rules.AMRulesRegressor'}", "option -l[1]"),
])
def test_a_moa_learner_whose_votes_are_not_class_scores_is_refused(learner, words):
    with pytest.raises(ConfigError) as error:
        load_config(None, [f"learners=[{learner}]"])
    text = " ".join(str(error.value).split())
    assert "learners.0" in text and words in text, text


@pytest.mark.jvm
@pytest.mark.parametrize("learner", [
    "{name: c, model: moa.classifiers.meta.OzaBag}",
    "{name: c, model: moa.classifiers.functions.SGD}",  # a classifier and a regressor
    "{name: c, model: moa.classifiers.meta.StreamingGradientBoostedTrees}",  # regressors inside
])
def test_classifiers_that_can_also_regress_are_kept(learner):
    assert load_config(None, [f"learners=[{learner}]"]).learners[0].name == "c"


# ----------------------------------------------------------------------- the JVM's heap
def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.jvm
def test_an_out_of_memory_error_quarantines_the_replica_and_the_run_goes_on(tmp_path):
    """A MOA learner that cannot be made in the heap (an ensemble of 10^8 members in 64 MB):
    each replica is a ``learner_error`` naming the error and the key, the river learner beside
    it runs to the end, exit 0."""
    config = _config(tmp_path, HUGE_BAG, ["-Xmx64m"])
    config.write_text(config.read_text().replace(
        "learners:\n", "learners:\n  - {name: nb, model: river.naive_bayes.GaussianNB}\n")
        + "evaluation: {folds: 2, report_every: 200}\n")
    proc = _foldstream("run", str(config), "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    records = _records(tmp_path / "m.jsonl")
    errors = [r for r in records if r["type"] == "learner_error"]
    assert sorted(r["fold"] for r in errors) == [0, 1] and {r["learner"] for r in errors} == {"a"}
    assert all("OutOfMemoryError" in r["error"] and "engine.jvm_options" in r["error"]
               for r in errors), errors
    summary = [r for r in records if r["type"] == "summary"]
    assert summary and summary[0]["position"] == 400 and not summary[0].get("interrupted")


@pytest.mark.jvm
def test_a_heap_that_leaves_the_jvm_collecting_garbage_quarantines_the_replica(tmp_path):
    """Trees that grow until a 40 MB heap is full: G1 would collect garbage nearly without end
    before an OutOfMemoryError; the learner's watch quarantines the replica after seconds of
    it, and the run ends with its records."""
    config = tmp_path / "c.yaml"
    config.write_text(
        "source: {kind: generator, model: river.datasets.synth.RandomRBF, "
        "params: {n_features: 50}, limit: 1500}\n"
        "evaluation: {folds: 2, report_every: 500}\n"
        "learners:\n"
        "  - {name: bag, model: moa.classifiers.meta.OzaBag, "
        "options: '-s 30 -l (trees.HoeffdingTree -g 10 -c 0.99 -t 1)'}\n"
        "engine: {jvm_options: [-Xmx40m]}\n"
        f"sink: {{kind: file, path: {tmp_path / 'm.jsonl'}}}\n")
    proc = _foldstream("run", str(config), "--no-progress", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    records = _records(tmp_path / "m.jsonl")
    errors = [r for r in records if r["type"] == "learner_error"]
    assert errors and all("OutOfMemoryError" in r["error"] for r in errors), errors
    assert [r for r in records if r["type"] == "summary"]


# ------------------------------------------------------------------------------ signals
@pytest.mark.jvm
def test_a_jvm_started_after_the_stop_handlers_leaves_sigterm_to_them():
    """A JVM installs its own SIGTERM handler, which ends the process at once (exit 143, no
    summary), unless started with ``-Xrs``: foldstream's handler must still get the signal."""
    code = ("import os, signal, time\n"
            "got = []\n"
            "signal.signal(signal.SIGTERM, lambda s, f: got.append(s))\n"
            "from foldstream.operators.learners.moa import start_jvm\n"
            "start_jvm()\n"
            "os.kill(os.getpid(), signal.SIGTERM)\n"
            "time.sleep(1)\n"
            "print('handled', got)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "handled [15]" in proc.stdout, (proc.returncode, proc.stderr)


def _stopped_while_in_java(tmp_path: Path, signals: list[int]) -> tuple[float, int, list[dict]]:
    """A run whose MOA learner spends its time inside Java (a large ensemble on a small
    heap), stopped by ``signals`` once its first records are written: seconds from the first
    signal to the end, the exit code, the records."""
    config = tmp_path / "c.yaml"
    config.write_text(
        "source: {kind: generator, model: river.datasets.synth.RandomRBF, "
        "params: {n_features: 50}, limit: 200000}\n"
        "evaluation: {folds: 2, report_every: 100}\n"
        "learners:\n"
        "  - {name: bag, model: moa.classifiers.meta.OzaBag, options: '-s 200'}\n"
        "  - {name: nb, model: river.naive_bayes.GaussianNB}\n"
        "engine: {jvm_options: [-Xmx48m]}\n"
        f"sink: {{kind: file, path: {tmp_path / 'm.jsonl'}}}\n")
    proc = subprocess.Popen([FOLDSTREAM, "run", str(config), "--no-progress"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    out = tmp_path / "m.jsonl"
    deadline = time.monotonic() + 300
    while not (out.exists() and out.stat().st_size) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.5)
    started = time.monotonic()
    for signum in signals:
        proc.send_signal(signum)
        time.sleep(0.3)
    try:
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return time.monotonic() - started, code, _records(out)


@pytest.mark.jvm
@pytest.mark.parametrize("signals, code", [
    ([signal.SIGTERM], 143), ([signal.SIGINT, signal.SIGINT], 130)])
def test_sigterm_and_a_second_ctrl_c_end_a_run_inside_java_within_seconds(tmp_path, signals,
                                                                          code):
    took, exit_code, records = _stopped_while_in_java(tmp_path, signals)
    assert exit_code == code
    assert took < 20, took  # SIGTERM: its 5 s grace, then at once; the machine may be busy
    assert [r for r in records if r["type"] == "summary" and r.get("interrupted")]



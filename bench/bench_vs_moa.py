"""foldstream against MOA's own ``EvaluatePrequentialCV``, in the same run (bench/README.md).

* ``--whole`` (what a user waits for, the headline of bench/README.md): ``foldstream run`` as
  a fresh process each time, its whole wall time (interpreter start, imports, the JVM, reading
  the file, the evaluation, the records) and the CPU time of the process and its children,
  beside the summary's job clock; alternating, in the same minute, with MOA's own task run the
  same way (``java ... moa.DoTask EvaluatePrequentialCV``, its wall and CPU time and the
  evaluation CPU time it reports), on the same ARFF file: Electricity and all of Forest
  Covertype (``--data``), 10-fold bootstrap, cumulative window, no detectors, MOA's
  ``NoChange`` against river's ``NoChangeClassifier`` and each ``--learners`` MOA learner
  through foldstream against itself in MOA. ``uptime``'s load is printed beside each round
  (the machine may be shared).
* ``--startup``: what a start costs: ``foldstream --help`` and ``foldstream validate`` (a
  configuration without learners to build: a MOA learner is checked in the JVM), a
  1,000-example run, whole process each, and of the default's 1,000-example run the learners'
  own CPU (its summary's ``cpu_predict_s`` + ``cpu_learn_s``); numba's compiled loops on first
  use with an empty cache against the cache on disk; the JVM's start and MOA's first learner.

Other measurements, inside one process (warm: the second run of a process on):

* ``paths``: the per-example cost of driving one MOA learner on one fold from Python, by each
  path tried: per example through JPype (``predict_one`` + ``learn_one`` of
  :class:`~foldstream.operators.learners.moa.MoaClassifier`, two boundary crossings per example), and per
  batch (:class:`~foldstream.operators.stages.learner.LearnerTask` on fold batches of ``--batch``
  examples: one crossing per batch). Electricity, one fold, weight 1.
* ``--memory N``: RSS (the process's, JVM included) and the JVM's used heap after a GC at
  100,000, N/2 and N examples of SEA, 10-fold bootstrap of MOA's Hoeffding tree, ADWIN windows.
* ``cv`` (the default mode, the published speed figure): all of Electricity, 10-fold bootstrap,
  MOA's learner: MOA's task (the evaluation CPU time it reports) against ``foldstream run`` in
  process with the default ADWIN windows and alarms, by the job clock (the summary's
  ``wall_time_s``), exactly as ``--nochange`` measures: the first run of each learner in the
  process apart ("cold": the JVM's start for the first, MOA's classes loaded and not yet
  compiled by the JIT, numba's cache), then ``--repeat`` rounds alternating with MOA's task,
  the best of each. ``--profile`` adds a cProfile of one more warm run: which part limits
  (the crossing into Java, ``operators/learners/moa/`` ``run``; the evaluator; the rows).

* ``--nochange``: the evaluation path alone: MOA's task with MOA's ``NoChange``
  against ``foldstream run`` in process with river's ``NoChangeClassifier``, all of Electricity,
  10-fold bootstrap, cumulative and ADWIN windows, alarms (Page-Hinkley and ADWIN on the loss)
  off and on. foldstream by the job clock (the summary's ``wall_time_s``: reading the rows
  included); MOA by the evaluation CPU time it reports. The first foldstream run of the process
  also loads the compiled kernels from numba's cache (reported apart as "cold"); the others
  alternate with MOA's runs, ``--repeat`` times, and the best of each counts. Also the
  sliding (size 1000) and fading windows, delayed labels (``evaluation.delay.examples=500``)
  and three learners (McNemar's pair counts); ``--only`` picks runs by name.

MOA's jar is the one :func:`foldstream.operators.learners.moa.ensure_moa_jar` fetches (the same module
the learners use)::

    .venv/bin/python bench/bench_vs_moa.py --learners trees.HoeffdingTree,bayes.NaiveBayes \
        --repeat 3 --profile
    .venv/bin/python bench/bench_vs_moa.py --nochange --repeat 3
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple, Sequence

from foldstream.connectors.files import packaged_elec_path
from foldstream.operators.stages.fanout import FanOut, FanOutPlan
from foldstream.operators.stages.learner import LearnerSpec, LearnerTask
from foldstream.operators.learners.moa import MOA_VERSION, ensure_moa_jar, split_learner
from foldstream.operators.records.base import ExampleBatch


def elec_rows() -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(gzip.open(packaged_elec_path(), "rt")))
    return rows[0], rows[1:]


def write_arff(path: Path) -> None:
    """Electricity as ARFF, its classes in foldstream's order (first appearance)."""
    header, data = elec_rows()
    classes = list(dict.fromkeys(r[-1] for r in data))
    with path.open("w") as fh:
        fh.write("@relation elec\n")
        fh.writelines(f"@attribute {name} numeric\n" for name in header[:-1])
        fh.write(f"@attribute {header[-1]} {{{','.join(classes)}}}\n@data\n")
        fh.writelines(",".join(r) + "\n" for r in data)


def moa_cv(arff: Path, learner: str, folds: int) -> tuple[float, float, float, float]:
    """MOA's EvaluatePrequentialCV (bootstrap): (its evaluation CPU s, the java command's CPU
    s of all its threads, wall s, accuracy)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cv.csv"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(["java", "-Xmx1g", "-cp", str(ensure_moa_jar()), "moa.DoTask",
                        f"EvaluatePrequentialCV -l ({learner}) -s (ArffFileStream -f {arff}) "
                        f"-e BasicClassificationPerformanceEvaluator -w {folds} "
                        f"-a Bootstrap-Validation -f 1000000 -d {out}"],
                       check=True, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        last = list(csv.DictReader(out.open()))[-1]
    process_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return (float(last["evaluation time (cpu seconds)"]), process_cpu, wall,
            float(last["[avg] classifications correct (percent)"]) / 100)


def paths(learner: str, batch: int) -> dict[str, float]:
    """µs per example (predict + learn, one fold) of each path from Python into MOA."""
    header, data = elec_rows()
    xs = [{name: float(v) for name, v in zip(header[:-1], row[:-1])} for row in data]
    ys = [row[-1] for row in data]
    model, options = split_learner(learner)
    spec = LearnerSpec("m", model, options=options)
    result = {}

    one = spec.build(0)
    start = time.process_time()
    for x, y in zip(xs, ys):
        one.predict_one(x)
        one.learn_one(x, y)
    result["per example (JPype, 2 calls)"] = (time.process_time() - start) / len(xs) * 1e6

    fanout = FanOut("elec", FanOutPlan("single"))
    batches = [b for i in range(0, len(xs), batch)
               for b in fanout.process(ExampleBatch("elec", i // batch, i,
                                                    list(range(i + 1, i + 1 + len(xs[i:i + batch]))),
                                                    xs[i:i + batch], ys[i:i + batch]))]
    task = LearnerTask(spec, 0)
    start = time.process_time()
    for b in batches:
        task.process(b)
    result[f"per batch of {batch} (one call)"] = (time.process_time() - start) / len(xs) * 1e6
    return result


def memory(limit: int, learner: str) -> None:
    """RSS and the JVM's heap over a long generated stream (bench_memory.py's marks)."""
    from bench_memory import rss_mb

    from foldstream.job.config import load_config
    from foldstream.job.runner import run_configuration

    model, options = split_learner(learner)
    config = load_config(None, [
        f"source={{kind: generator, model: river.datasets.synth.SEA, limit: {limit}, seed: 1}}",
        f"learners=[{{name: m, model: {model}, options: '{options}'}}]",
        "evaluation.window={kind: adwin, delta: 0.002}", "evaluation.folds=10",
    ])
    marks = {100_000: None, limit // 2: None, limit: None}
    started = time.perf_counter()

    def heap_mb() -> float:
        import jpype

        runtime = jpype.JClass("java.lang.Runtime").getRuntime()
        jpype.JClass("java.lang.System").gc()
        return (runtime.totalMemory() - runtime.freeMemory()) / 2**20

    def progress(n: int) -> None:
        for mark in marks:
            if marks[mark] is None and n >= mark:
                marks[mark] = rss_mb()
                print(f"{n:>9} examples: RSS {marks[mark]:.1f} MB, JVM heap used {heap_mb():.1f} MB "
                      f"({time.perf_counter() - started:.0f} s)", flush=True)

    run_configuration(config, write=False, on_progress=progress)
    print(f"{learner}: RSS growth from 100k to {limit}: {marks[limit] - marks[100_000]:+.1f} MB")


NOCHANGE_RUNS = {  # name: the overrides of `foldstream run`
    f"{window}, alarms {alarms}": [
        "learners=[{name: nc, model: river.dummy.NoChangeClassifier}]",
        f"evaluation.window={{kind: {window}}}",
        *(["evaluation.alarms.page_hinkley=null", "evaluation.alarms.adwin=false"]
          if alarms == "off" else [])]
    for window in ("cumulative", "adwin") for alarms in ("off", "on")}
_NC, _OFF = NOCHANGE_RUNS["cumulative, alarms off"][0], NOCHANGE_RUNS["cumulative, alarms off"][2:]
NOCHANGE_RUNS.update({  # the other windows, and delayed labels (the delayed path, docs/method.md §13)
    "sliding 1000, alarms off": [_NC, "evaluation.window={kind: sliding, size: 1000}", *_OFF],
    "fading, alarms off": [_NC, "evaluation.window={kind: fading}", *_OFF],
    "cumulative, delay 500, alarms off": [*NOCHANGE_RUNS["cumulative, alarms off"],
                                          "evaluation.delay={examples: 500}"],
    "adwin, delay 500, alarms on": [*NOCHANGE_RUNS["adwin, alarms on"],
                                    "evaluation.delay={examples: 500}"],
})
_THREE = ("learners=[{name: nc, model: river.dummy.NoChangeClassifier}, "
          "{name: prior, model: river.dummy.PriorClassifier}, "
          "{name: nc2, model: river.dummy.NoChangeClassifier}]")
NOCHANGE_RUNS.update({  # McNemar's pair counts: three learners, three pairs (no live verdicts)
    f"{name}, three learners": [_THREE, *overrides[1:], "evaluation.verdicts.enabled=false"]
    for name, overrides in
    [("sliding 1000, alarms off", NOCHANGE_RUNS["sliding 1000, alarms off"]),
     ("adwin, alarms on", NOCHANGE_RUNS["adwin, alarms on"])]})


def foldstream_job_clock(overrides: list[str], folds: int) -> tuple[float, float]:
    """``foldstream run`` in process: the summary record's ``wall_time_s`` (the job clock), and
    the CPU time of the process's threads over the whole call (configuration and sink
    included), which a busy machine inflates less than the wall time."""
    from foldstream.job import cli

    with tempfile.TemporaryDirectory() as tmp:
        sink = Path(tmp) / "metrics.jsonl"
        sets = [*overrides, "evaluation.mode=bootstrap", f"evaluation.folds={folds}",
                f"sink.path={sink}"]
        cpu = time.process_time()
        assert cli.main(["run", "--quiet", *(a for o in sets for a in ("--set", o))]) == 0
        cpu = time.process_time() - cpu
        summary = [json.loads(line) for line in sink.read_text().splitlines()][-1]
    assert summary["type"] == "summary"
    return float(summary["wall_time_s"]), cpu


def alternate(arff: Path, moa_learner: str, runs: dict[str, list[str]], folds: int,
              repeat: int) -> tuple[tuple[float, float], float, dict[str, list[float]]]:
    """The first run of ``runs`` alone (cold), then ``repeat`` rounds of MOA's task with
    ``moa_learner`` followed by every run: (the cold (job clock, CPU), MOA's best evaluation
    CPU, each run's best [job clock, CPU])."""
    cold = foldstream_job_clock(next(iter(runs.values())), folds)
    moa_best = float("inf")
    best = {name: [float("inf"), float("inf")] for name in runs}
    for round_ in range(repeat):
        moa_cpu = moa_cv(arff, moa_learner, folds)[0]
        moa_best = min(moa_best, moa_cpu)
        line = [f"round {round_ + 1}: MOA {moa_cpu:.3f} s"]
        for name, overrides in runs.items():
            wall, cpu = foldstream_job_clock(overrides, folds)
            best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
            line.append(f"{name} {wall:.3f} s (cpu {cpu:.3f} s)")
        print("; ".join(line), flush=True)
    return cold, moa_best, best


def table(n: int, moa_best: float, best: dict[str, list[float]]) -> None:
    """The best runs against MOA's best, by the job clock and by the call's CPU."""
    print("| foldstream run | job clock | examples/s | x MOA | CPU of the call | x MOA by CPU |")
    print("|---|---|---|---|---|---|")
    for name, (wall, cpu) in best.items():
        print(f"| {name} | {wall:.3f} s | {n / wall:,.0f} | {moa_best / wall:.2f} | "
              f"{cpu:.3f} s | {moa_best / cpu:.2f} |")


def nochange(arff: Path, folds: int, repeat: int, only: str | None = None) -> None:
    """MOA's NoChange task against foldstream's evaluation path (see the module docstring);
    ``only``: the runs whose name contains one of these parts (separated by ``|``)."""
    n = len(elec_rows()[1])
    runs = {name: o for name, o in NOCHANGE_RUNS.items()
            if only is None or any(part in name for part in only.split("|"))}
    (cold, cold_cpu), moa_best, best = alternate(arff, "functions.NoChange", runs, folds, repeat)
    print(f"cold (first run in the process, the kernels loaded from numba's cache): "
          f"{next(iter(runs))} {cold:.3f} s job clock, {cold_cpu:.3f} s CPU")
    print(f"MOA EvaluatePrequentialCV, NoChange, {folds} folds: {moa_best:.3f} s of its "
          f"evaluation CPU, {n / moa_best:,.0f} ex/s")
    table(n, moa_best, best)
    for window in ("cumulative", "adwin"):
        if f"{window}, alarms off" not in best or f"{window}, alarms on" not in best:
            continue
        (off, off_cpu), (on, on_cpu) = best[f"{window}, alarms off"], best[f"{window}, alarms on"]
        print(f"{window}: alarms on cost {on / off - 1:+.1%} over off by the job clock, "
              f"{on_cpu / off_cpu - 1:+.1%} by CPU")


def learner_overrides(learner: str) -> list[str]:
    """``foldstream run``'s overrides for one MOA learner (default windows and alarms)."""
    model, options = split_learner(learner)
    return [f"learners=[{{name: m, model: {model}, options: '{options}'}}]"]


def learners(arff: Path, names: list[str], folds: int, repeat: int, profile: bool) -> None:
    """Each MOA learner through foldstream against MOA's task (see the module docstring)."""
    n = len(elec_rows()[1])
    for learner in names:
        runs = {learner: learner_overrides(learner)}
        (cold, cold_cpu), moa_best, best = alternate(arff, learner, runs, folds, repeat)
        wall = best[learner][0]
        print(f"{learner}: MOA EvaluatePrequentialCV {folds} folds: {moa_best:.3f} s of its "
              f"evaluation CPU, {n / moa_best:,.0f} ex/s")
        print(f"{learner}: foldstream cold (first run of it in the process) {cold:.3f} s job "
              f"clock ({n / cold:,.0f} ex/s, x{moa_best / cold:.2f} MOA; {cold_cpu:.3f} s CPU), "
              f"best of {repeat} {wall:.3f} s ({n / wall:,.0f} ex/s, x{moa_best / wall:.2f} "
              f"MOA)")
        table(n, moa_best, best)
        if profile:
            profile_run(runs[learner], folds)


PARTS = {  # what a warm run's profile is read for: the cumulative time of these functions
    "the crossing into Java and MOA's learning (operators/learners/moa/ run)": ("classifier.py", "run"),
    "the rest of the learner task (learners.py process, less the above)": ("learners.py",
                                                                         "process"),
    "the evaluators (evaluator.py add)": ("evaluator.py", "add"),
    "the aggregator (aggregator.py add)": ("aggregator.py", "add"),
    "the fan-out (fanout.py process)": ("fanout.py", "process"),
    "reading the rows (files.py _read_examples)": ("files.py", "_read_examples"),
}


def profile_run(overrides: list[str], folds: int) -> None:
    """One more warm run under cProfile (in a thread of its own, where the in-process engine
    runs the stages inline, so the profile sees them), its time by part."""
    import cProfile
    import pstats
    import threading

    profiler = cProfile.Profile()

    def work() -> None:
        profiler.enable()
        try:
            foldstream_job_clock(overrides, folds)
        finally:
            profiler.disable()

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    stats = pstats.Stats(profiler).stats
    total = max(ct for (_, _, name), (_, _, _, ct, _) in stats.items() if name == "foldstream_job_clock")
    found = {part: sum(ct for (file, _, name), (_, _, _, ct, _) in stats.items()
                       if file.endswith("/" + where[0]) and name == where[1])
             for part, where in PARTS.items()}
    java = found[next(iter(PARTS))]
    found[list(PARTS)[1]] -= java
    print(f"  profile of a warm run ({total:.2f} profiled s):")
    found["everything else (configuration, records, sink, summary)"] = total - sum(found.values())
    for part, seconds in found.items():
        print(f"    {part}: {seconds:.2f} s, {seconds / total:.0%}")


# --------------------------------------------------------------------------- whole process
WHOLE_OVERRIDES = ["evaluation.mode=bootstrap", "evaluation.window={kind: cumulative}",
                   "evaluation.alarms.page_hinkley=null", "evaluation.alarms.adwin=false"]
NOCHANGE = ("functions.NoChange", "learners=[{name: nc, model: river.dummy.NoChangeClassifier}]")


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes), as ``uptime`` shows them."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def write_covtype_arff(path: Path, rows: int | None = None) -> int:
    """All of Forest Covertype (``dataset://covtype``) as ARFF, or its first ``rows``
    examples, its classes in foldstream's order (first appearance); returns its examples."""
    import itertools

    from foldstream.connectors.datasets import dataset_path

    with gzip.open(dataset_path("covtype"), "rt", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        data = list(itertools.islice(reader, rows))
    classes = list(dict.fromkeys(r[-1] for r in data))
    with path.open("w") as fh:
        fh.write("@relation covtype\n")
        fh.writelines(f"@attribute {name} numeric\n" for name in header[:-1])
        fh.write(f"@attribute {header[-1]} {{{','.join(classes)}}}\n@data\n")
        fh.writelines(",".join(r) + "\n" for r in data)
    return len(data)


class Whole(NamedTuple):
    """One fresh process: its wall time, the CPU time of it and its children, and the job
    clock it reports (foldstream: the summary's ``wall_time_s``; MOA: its evaluation CPU)."""

    wall: float
    cpu: float
    clock: float


def timed(command: list[str]) -> tuple[float, float]:
    """Run ``command`` to its end: (wall s, CPU s of it and its children)."""
    wall, cpu, _ = timed_output(command)
    return wall, cpu


def timed_output(command: list[str]) -> tuple[float, float, str]:
    """:func:`timed`, and what ``command`` wrote to its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, done.stdout


def foldstream_whole(arff: Path, label: str, learner: str, folds: int,
                     more: Sequence[str] = (), exe: str | None = None) -> Whole:
    """``foldstream run`` on ``arff`` in a fresh process (``exe``, by default the
    ``foldstream`` beside this interpreter), with ``more`` overrides (``engine.threads=1``,
    ``engine.kind=flink``)."""
    with tempfile.TemporaryDirectory() as tmp:
        sink = Path(tmp) / "metrics.jsonl"
        sets = [f"source={{kind: file, path: {arff}, label: {label}}}", learner, *WHOLE_OVERRIDES,
                f"evaluation.folds={folds}", f"sink.path={sink}", *more]
        command = [exe or str(Path(sys.executable).with_name("foldstream")), "run", "--quiet",
                   *(a for o in sets for a in ("--set", o))]
        wall, cpu = timed(command)
        summary = json.loads(sink.read_text().splitlines()[-1])
    assert summary["type"] == "summary", summary
    return Whole(wall, cpu, float(summary["wall_time_s"]))


def moa_whole(arff: Path, learner: str, folds: int) -> Whole:
    """MOA's ``EvaluatePrequentialCV`` (bootstrap) on ``arff`` in a fresh JVM."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cv.csv"
        wall, cpu = timed(["java", "-Xmx2g", "-cp", str(ensure_moa_jar()), "moa.DoTask",
                           f"EvaluatePrequentialCV -l ({learner}) -s (ArffFileStream -f {arff}) "
                           f"-e BasicClassificationPerformanceEvaluator -w {folds} "
                           f"-a Bootstrap-Validation -f 100000000 -d {out}"])
        last = list(csv.DictReader(out.open()))[-1]
    return Whole(wall, cpu, float(last["evaluation time (cpu seconds)"]))


def whole(data: list[str], moa_learners: list[str], folds: int, repeat: int,
          more: Sequence[str] = (), nochange: bool = True, rows: int | None = None,
          others: Sequence[str] = (), nochange_learner: str = NOCHANGE[1]) -> None:
    """The ``--whole`` table (see the module docstring): the best of ``repeat`` rounds, each
    round MOA's task then foldstream's run (with the ``more`` overrides), one after the other,
    fresh processes; ``nochange``: the no-change pair too, foldstream's side with
    ``nochange_learner`` (an override of ``learners``); ``rows``: Covertype's first ``rows``
    examples only; ``others``: more ``foldstream`` executables (another checkout's, to compare
    two versions), each run after foldstream's in every round, printed on the round's line."""
    print("| data | learner | MOA whole process | foldstream whole process | x MOA (whole) "
          "| MOA CPU | foldstream CPU | MOA's evaluation CPU | foldstream job clock | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in data:
            arff = Path(tmp) / f"{name}.arff"
            if name == "elec":
                write_arff(arff)
                label = "target"
            else:
                write_covtype_arff(arff, rows)
                label = "Cover_Type"
            pairs = [*([(NOCHANGE[0], nochange_learner)] if nochange else []),
                     *((m, learner_overrides(m)[0]) for m in moa_learners)]
            for moa_learner, overrides in pairs:
                best_moa = best_fs = Whole(*[float("inf")] * 3)
                loads = []
                for round_ in range(repeat):
                    moa = moa_whole(arff, moa_learner, folds)
                    ours = foldstream_whole(arff, label, overrides, folds, more)
                    loads.append(load())
                    other = [f"; {exe}: {o.wall:.2f} s (cpu {o.cpu:.2f}, job clock {o.clock:.2f})"
                             for exe in others
                             for o in [foldstream_whole(arff, label, overrides, folds, more, exe)]]
                    print(f"# {name} {moa_learner} round {round_ + 1}: MOA {moa.wall:.2f} s "
                          f"(cpu {moa.cpu:.2f}), foldstream {ours.wall:.2f} s (cpu {ours.cpu:.2f},"
                          f" job clock {ours.clock:.2f}); load {loads[-1]}{''.join(other)}",
                          flush=True)
                    best_moa = min(best_moa, moa)
                    best_fs = min(best_fs, ours)
                print(f"| {name} | {moa_learner} | {best_moa.wall:.2f} s | {best_fs.wall:.2f} s | "
                      f"{best_moa.wall / best_fs.wall:.2f} | {best_moa.cpu:.2f} s | "
                      f"{best_fs.cpu:.2f} s | {best_moa.clock:.2f} s | {best_fs.clock:.2f} s | "
                      f"{'; '.join(loads)} |", flush=True)


def startup(repeat: int) -> None:
    """The ``--startup`` figures (see the module docstring), the best of ``repeat`` each."""
    exe = str(Path(sys.executable).with_name("foldstream"))
    elec = packaged_elec_path()
    no_learner_check = ["--set", "learners=[{name: nc, model: river.dummy.NoChangeClassifier}]"]
    runs = {
        "foldstream --help": [exe, "--help"],
        "foldstream validate (a river NoChange learner)": [exe, "validate", *no_learner_check],
        "foldstream validate (the embedded default: three river trees)": [exe, "validate"],
        "foldstream run, 1,000 examples, the default's learners": [
            exe, "run", "--quiet", "--set", "source.limit=1000", "--set", "sink={kind: stdout}"],
        "foldstream run, 1,000 examples, NoChange, no detectors": [
            exe, "run", "--quiet", "--set", "source.limit=1000", "--set", "sink={kind: stdout}",
            *no_learner_check, "--set", "evaluation.alarms.page_hinkley=null",
            "--set", "evaluation.alarms.adwin=false"],
    }
    for name, command in runs.items():
        times = [timed_output(command) for _ in range(repeat)]
        print(f"{name}: best {min(t[0] for t in times):.2f} s wall, "
              f"{min(t[1] for t in times):.2f} s CPU (load {load()})", flush=True)
        if name.endswith("the default's learners"):
            summaries = [json.loads(line) for _, _, out in times for line in out.splitlines()
                         if '"summary"' in line]
            learners = [sum(s["cpu_predict_s"].values()) + sum(s["cpu_learn_s"].values())
                        for s in summaries]
            print(f"  of which the learners' own predict and learn (10 folds): best "
                  f"{min(learners):.2f} s CPU", flush=True)
    probe = ("import time; t = time.process_time(); import numpy as np; "
             "from foldstream.operators.stats import detectors; "
             "a = detectors.Adwin(0.002); a.update_many(np.ones(1000)); "
             "print(time.process_time() - t)")
    with tempfile.TemporaryDirectory() as empty:
        cold = [float(subprocess.run([sys.executable, "-c", probe], capture_output=True,
                                     text=True, check=True, env={**os.environ,
                                     "NUMBA_CACHE_DIR": f"{empty}/{i}"}).stdout)
                for i in range(repeat)]
    warm = [float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(repeat)]
    print(f"numba, ADWIN's first batch in a fresh process, CPU: empty cache (compiled) best "
          f"{min(cold):.2f} s, cache on disk best {min(warm):.2f} s (load {load()})")
    jvm = ("import time; t = time.perf_counter(); "
           "from foldstream.operators.learners.moa import start_jvm; start_jvm(); s = time.perf_counter(); "
           "from foldstream.operators.learners import LearnerSpec; "
           "m = LearnerSpec('m', 'moa.classifiers.trees.HoeffdingTree').build(0); "
           "m.learn_one({'a': 1.0}, 'u'); m.predict_one({'a': 1.0}); "
           "print(s - t, time.perf_counter() - s)")
    times = [tuple(map(float, subprocess.run([sys.executable, "-c", jvm], capture_output=True,
                                             text=True, check=True).stdout.split()))
             for _ in range(repeat)]
    print(f"JVM: start (MOA's jar cached) best {min(t[0] for t in times):.2f} s, then MOA's "
          f"first Hoeffding tree built, one example learnt and predicted best "
          f"{min(t[1] for t in times):.2f} s (load {load()})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", default="trees.HoeffdingTree,bayes.NaiveBayes")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--skip-paths", action="store_true")
    parser.add_argument("--memory", type=int, default=0, help="only the memory run, N examples")
    parser.add_argument("--nochange", action="store_true",
                        help="only the evaluation path: NoChange, windows and alarms")
    parser.add_argument("--repeat", type=int, default=3, help="rounds with MOA, best counts")
    parser.add_argument("--only", help="--nochange: only the runs whose name contains one of these "
                        "(separated by |)")
    parser.add_argument("--profile", action="store_true",
                        help="a cProfile of one more warm run of each learner, by part")
    parser.add_argument("--whole", action="store_true",
                        help="fresh processes, whole wall time, alternating with MOA's task")
    parser.add_argument("--data", default="elec,covtype", help="--whole: elec and/or covtype")
    parser.add_argument("--startup", action="store_true", help="what a start costs")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="--whole: more overrides of foldstream's runs (engine.threads=1, "
                             "engine.kind=flink, engine.parallelism=2)")
    parser.add_argument("--no-nochange", action="store_true",
                        help="--whole: leave out the no-change pair")
    parser.add_argument("--rows", type=int, default=None,
                        help="--whole: Covertype's first ROWS examples only")
    parser.add_argument("--other", action="append", default=[], metavar="FOLDSTREAM",
                        help="--whole: another foldstream executable run in each round too")
    parser.add_argument("--nochange-learner", default=NOCHANGE[1],
                        help="--whole: foldstream's no-change learner (a learners= override)")
    args = parser.parse_args(argv)
    if args.whole:
        moa_learners = [m for m in args.learners.split(",") if m]
        whole(args.data.split(","), moa_learners, args.folds, args.repeat, args.set,
              not args.no_nochange, args.rows, args.other, args.nochange_learner)
        return 0
    if args.startup:
        startup(args.repeat)
        return 0
    if args.memory:
        memory(args.memory, args.learners.split(",")[0])
        return 0
    import jpype

    print(f"python {platform.python_version()}, MOA {MOA_VERSION}, jpype {jpype.__version__}, "
          f"{platform.machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        arff = Path(tmp) / "elec.arff"
        write_arff(arff)
        if args.nochange:
            nochange(arff, args.folds, args.repeat, args.only)
            return 0
        names = args.learners.split(",")
        learners(arff, names, args.folds, args.repeat, args.profile)
        if not args.skip_paths:
            for learner in names:
                for path, us in paths(learner, args.batch).items():
                    print(f"{learner}: {path}: {us:.1f} µs per example")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""foldstream against MOA's own ``EvaluatePrequentialCV``, in the same run (bench/README.md).

Two measurements:

* ``paths``: the per-example cost of driving one MOA learner on one fold from Python, by each
  path tried: per example through JPype (``predict_one`` + ``learn_one`` of
  :class:`~foldstream.operators.moa.MoaClassifier`, two boundary crossings per example), and per
  batch (:class:`~foldstream.operators.learners.LearnerTask` on fold batches of ``--batch``
  examples: one crossing per batch). Electricity, one fold, weight 1.
* ``--memory N``: RSS (the process's, JVM included) and the JVM's used heap after a GC at
  100,000, N/2 and N examples of SEA, 10-fold bootstrap of MOA's Hoeffding tree, ADWIN windows.
* ``cv`` (the default mode, issue 21's speed figure): all of Electricity, 10-fold bootstrap,
  MOA's learner: MOA's task (the evaluation CPU time it reports) against ``foldstream run`` in
  process with the default ADWIN windows and alarms, by the job clock (the summary's
  ``wall_time_s``), exactly as ``--nochange`` measures: the first run of each learner in the
  process apart ("cold": the JVM's start for the first, MOA's classes loaded and not yet
  compiled by the JIT, numba's cache), then ``--repeat`` rounds alternating with MOA's task,
  the best of each. ``--profile`` adds a cProfile of one more warm run: which part limits
  (the crossing into Java, ``operators/moa.py`` ``run``; the evaluator; the rows).

* ``--nochange``: the evaluation path alone (issue 20): MOA's task with MOA's ``NoChange``
  against ``foldstream run`` in process with river's ``NoChangeClassifier``, all of Electricity,
  10-fold bootstrap, cumulative and ADWIN windows, alarms (Page-Hinkley and ADWIN on the loss)
  off and on. foldstream by the job clock (the summary's ``wall_time_s``: reading the rows
  included); MOA by the evaluation CPU time it reports. The first foldstream run of the process
  also loads the compiled kernels from numba's cache (reported apart as "cold"); the others
  alternate with MOA's runs, ``--repeat`` times, and the best of each counts. Also the
  sliding (size 1000) and fading windows, delayed labels (``evaluation.delay.examples=500``)
  and three learners (McNemar's pair counts); ``--only`` picks runs by name.

MOA's jar is the one :func:`foldstream.operators.moa.ensure_moa_jar` fetches (the same module
the learners use)::

    .venv/bin/python bench/bench_vs_moa.py --learners trees.HoeffdingTree,bayes.NaiveBayes \
        --repeat 3 --profile
    .venv/bin/python bench/bench_vs_moa.py --nochange --repeat 3
"""

from __future__ import annotations

import argparse
import csv
import gzip
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from foldstream.connectors.files import packaged_elec_path
from foldstream.operators.fanout import FanOut, FanOutPlan
from foldstream.operators.learners import LearnerSpec, LearnerTask
from foldstream.operators.moa import MOA_VERSION, ensure_moa_jar, split_learner
from foldstream.operators.records import ExampleBatch


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
    import json

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
    "the crossing into Java and MOA's learning (operators/moa.py run)": ("moa.py", "run"),
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
    args = parser.parse_args(argv)
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

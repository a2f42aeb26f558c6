"""The Flink job against the in-process engine and the plain learner loop, and parallelism 2
against 1, in one run.

    .venv/bin/python bench/bench_flink.py [--limit N] [--batch-size 500] [--repeat 2]
        [--learners pair|nochange] [--cpu] [--subtract SMALL]
        [--checkpoints | --keying | --slots]
    .venv/bin/python bench/bench_flink.py --whole [--repeat 2] [--covertype [PATH]] [--set k=v]
    .venv/bin/python bench/bench_flink.py --records [--covertype [PATH]]
    .venv/bin/python bench/bench_flink.py --start [--repeat 3] [--limit N]

Electricity, 10-fold bootstrap, GaussianNB + HoeffdingTree (``--learners nochange``: river's
``NoChangeClassifier``, so that what is timed is the engines' own work). Start-up is excluded:
each engine's ``summary`` record times its run from the first example it received to the end
(the job's clock, :class:`Clock`).

The plain learner loop (``bench_inprocess.plain_loop``) does only each fold's ``predict_one``
and ``learn_one`` with the fold's weights over the same examples: no engine, no evaluation. It
is what one core can do at best, so parallelism 2 is held against twice its rate (the bar: P=1
at least 0.9 of the in-process engine, P=2 at least 0.8 of twice the plain loop, both by the
job's clock). ``--cpu`` adds where the cores went during each Flink run's clock: the CPU of
the client, the JVM and each Python worker, from ``/proc``.

``--whole`` measures what a user waits for instead: ``foldstream run`` as a fresh process,
in-process and Flink at parallelism 2 in turn, ``--repeat`` times, its whole wall time (start-up
included) beside the CPU time of the process tree and the job's clock; the default
configuration is the embedded one (``foldstream run`` with no file), ``--covertype`` runs Forest
Covertype with MOA's Hoeffding tree (10-fold bootstrap, cumulative window, no detectors)
instead. Each pair's record files are compared, timing fields excepted
(``SummaryRecord.TIMING_FIELDS``), rejected records too: a difference fails the benchmark.

``--start`` measures the Flink run's start with the JVM's class-data archive and without
(:func:`start`), and the first run's cost of writing it.

``--records`` times what the fan-out's output costs to pickle and unpickle per example batch
of 500: one record per fold (the folds' shared feature dicts written once per fold) against one
record per subtask at parallelism 2 (written once per subtask), on Electricity or Covertype.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from typing import NamedTuple

from foldstream.job.config import load_config
from foldstream.job.runner import run_configuration
from foldstream.operators.records.base import dumps
from foldstream.operators.records.outputs import SummaryRecord

LEARNERS = ("learners=[{name: nb, model: river.naive_bayes.GaussianNB}, "
            "{name: ht, model: river.tree.HoeffdingTreeClassifier}]")
NOCHANGE = "learners=[{name: nc, model: river.dummy.NoChangeClassifier}]"
PLAIN = "plain loop"


class Clock:
    """The job's own examples per second, from the summary record: its wall time runs from the
    first example the fan-out receives to the end, so start-up is excluded. (Timing records as
    they reach the client would not do: the collect sink hands them over in bursts.)"""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.summary: dict | None = None
        self.ended = 0.0

    def __call__(self, record: dict) -> None:
        if record["type"] == "summary":
            self.summary = record
            self.ended = time.perf_counter()

    def rate(self) -> float:
        return self.summary["position"] / self.summary["wall_time_s"]

    def startup(self) -> float:
        return (self.ended - self.started) - self.summary["wall_time_s"]


class CheckpointWatch:
    """Polls the mini-cluster's REST API while a job runs: the completed checkpoints' sizes and
    durations (``/jobs/<id>/checkpoints``)."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.completed: dict[int, dict] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _get(self, path: str) -> dict:
        with urllib.request.urlopen(self.url + path, timeout=2) as response:
            return json.load(response)

    def _poll(self) -> None:
        while not self.stop.wait(0.5):
            try:
                for job in self._get("/jobs/overview")["jobs"]:
                    for c in self._get(f"/jobs/{job['jid']}/checkpoints").get("history", []):
                        if c.get("status") == "COMPLETED":
                            self.completed[c["id"]] = c
            except (OSError, ValueError, KeyError):
                pass  # not up yet, or gone

    def close(self) -> list[dict]:
        self.stop.set()
        self.thread.join()
        return [self.completed[i] for i in sorted(self.completed)]


class ProcessCpu:
    """The CPU this process and its descendants (the JVM of the local mini-cluster, its Python
    workers) use while a run goes on, sampled from ``/proc`` every ``interval`` seconds.
    :meth:`cores` gives each process's cores over the last ``seconds`` of the run (the job's
    clock). A sample reads every process's ``/proc`` entries, which costs CPU of its own: on a
    machine the run keeps busy, the sampler takes it from the run."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.samples: list[tuple[float, dict[int, tuple[str, float]]]] = []
        self.stop = threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK")
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _children(self) -> dict[int, list[int]]:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                children.setdefault(ppid, []).append(int(entry))
        return children

    def _sample(self) -> dict[int, tuple[str, float]]:
        children, out, todo = self._children(), {}, [os.getpid()]
        mine = set()
        while todo:  # the client and the JVM it started
            pid = todo.pop()
            mine.add(pid)
            todo += children.get(pid, [])
        for pid in [int(e) for e in os.listdir("/proc") if e.isdigit()]:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().decode(errors="replace")
                if pid not in mine and not ("beam_boot" in cmd and sys.prefix in cmd):
                    continue  # the Python workers are not the JVM's children (a shell between)
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            kind = ("client" if pid == os.getpid() else "JVM" if "java" in cmd.split("\0")[0]
                    else "Python worker" if "beam_boot" in cmd or "flink.forkserver" in cmd
                    else "")  # (a fork server's workers show its command line)
            if not kind and pid in mine:
                kind = "process"  # a child: ``foldstream run`` in --whole
            if kind:
                out[pid] = (kind, (int(fields[11]) + int(fields[12])) / self.tick)
        return out

    def _poll(self) -> None:
        while True:
            self.samples.append((time.perf_counter(), self._sample()))
            if self.stop.wait(self.interval):
                return

    def cores(self, seconds: float) -> list[tuple[str, float]]:
        """(process kind, cores) over the last ``seconds`` before :meth:`close`, busiest first;
        a process that ended before (a Python worker whose tasks finished) counts up to its
        last sample."""
        self.stop.set()
        self.thread.join()
        end_t = self.samples[-1][0]
        start_t, start = min(self.samples, key=lambda s: abs(s[0] - (end_t - seconds)))
        span = max(end_t - start_t, 1e-9)
        last: dict[int, tuple[str, float]] = {}
        for _, sample in self.samples:
            last.update(sample)
        rows = [(kind, (cpu - start.get(pid, (kind, cpu))[1]) / span)
                for pid, (kind, cpu) in last.items() if pid in start]
        return sorted(rows, key=lambda r: -r[1])

    def total(self) -> float:
        """The CPU seconds of every process seen but this one (a ``foldstream run`` started
        as a child, its JVM and Python workers), each up to its last sample."""
        self.stop.set()
        self.thread.join()
        last: dict[int, tuple[str, float]] = {}
        for _, sample in self.samples:
            last.update(sample)
        return sum(cpu for pid, (_, cpu) in last.items() if pid != os.getpid())


def kafka_jars() -> list[str]:
    from foldstream.job.engines.flink.deps import ensure_kafka_jars
    return [str(p) for p in ensure_kafka_jars()]


ROOT = Path(__file__).resolve().parents[1]


def kafka_broker():
    """An Apache Kafka broker (tests/broker.py), not yet started."""
    spec = importlib.util.spec_from_file_location("broker", ROOT / "tests" / "broker.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.KafkaBroker()


def rows(n: int) -> list[dict]:
    """The first ``n`` rows of the packaged Electricity, features as floats."""
    lines = gzip.decompress((ROOT / "connectors" / "data" / "elec.csv.gz").read_bytes()).decode().splitlines()
    header = lines[0].split(",")
    out = []
    for line in lines[1: n + 1]:
        row = dict(zip(header, line.split(",")))
        out.append({k: (v if k == "target" else float(v)) for k, v in row.items()})
    return out


def kafka_examples(n: int):
    """An Apache Kafka broker holding the first ``n`` Electricity rows in the topic ``examples`` (one
    message per row, keyed ``elec``); returns the broker and the source override reading them."""
    from foldstream.connectors.kafka import create_topics, produce_jsonl

    broker = kafka_broker().__enter__()
    create_topics(broker.bootstrap, ["examples"])
    started = time.perf_counter()
    produce_jsonl(broker.bootstrap, "examples", "elec", rows(n))
    print(f"{n} examples in Kafka after {time.perf_counter() - started:.1f} s", flush=True)
    return broker, (f"source={{kind: kafka, bootstrap_servers: '{broker.bootstrap}', "
                    f"topic: examples, bounded: true, label: target}}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def plain_rate(base: list[str]) -> float:
    """Examples per second of the plain learner loop over the run's examples (module doc)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_inprocess import plain_loop

    from foldstream.job.plans import make_plans, open_source
    from foldstream.operators.records.base import Example

    config = load_config(None, base)
    examples = [e for e in open_source(config) if isinstance(e, Example)]
    rate = len(examples) / plain_loop(make_plans(config), examples)
    print(f"{PLAIN:22} {rate:7.1f} examples/s, {len(examples)} examples ({load()})", flush=True)
    return rate


def run_once(name: str, overrides: list[str], base: list[str],
             cpu: bool = False) -> tuple[float, float]:
    """One run: (examples per second by the job's clock, seconds outside that clock)."""
    if name == PLAIN:
        return plain_rate(base + overrides), 0.0
    config = load_config(None, base + overrides)
    clock = Clock()
    watch = ProcessCpu() if cpu else None
    run_configuration(config, write=False, on_record=clock)
    print(f"{name:22} {clock.rate():7.1f} examples/s from the first example to the end "
          f"(+ {clock.startup():.1f} s before the first example and after the end; {load()})",
          flush=True)
    if watch is not None:
        print(" " * 23 + "cores during the job's clock: " + ", ".join(
            f"{kind} {c:.2f}" for kind, c in watch.cores(clock.summary["wall_time_s"])),
            flush=True)
    return clock.rate(), clock.startup()


def marginal_rate(name: str, overrides: list[str], base: list[str], small: int, large: int) -> float:
    """Examples per second between a run of ``small`` and one of ``large`` examples, by the
    client's clock: start-up, pipeline fill and drain cancel out (time a tiny run and
    subtract)."""
    elapsed = {}
    for n in (small, large):
        started = time.perf_counter()
        run_once(f"{name} ({n})", overrides, base + [f"source.limit={n}"])
        elapsed[n] = time.perf_counter() - started
    rate = (large - small) / (elapsed[large] - elapsed[small])
    print(f"{name:22} {rate:7.1f} examples/s between {small} and {large} examples "
          f"({elapsed[small]:.1f} s and {elapsed[large]:.1f} s in all)", flush=True)
    return rate


# --------------------------------------------------------------------------- whole process
#: Forest Covertype with MOA's Hoeffding tree, as issue 31 measures it against MOA's task.
COVERTYPE = ["source.label=Cover_Type", "source.stream=covtype",
             "learners=[{name: ht, model: moa.classifiers.trees.HoeffdingTree}]",
             "evaluation.mode=bootstrap", "evaluation.folds=10",
             "evaluation.window={kind: cumulative}", "evaluation.alarms.page_hinkley=null",
             "evaluation.alarms.adwin=false"]
WHOLE_ENGINES = {"inprocess": [], "flink P=2": ["engine.kind=flink", "engine.parallelism=2"]}


class WholeRun(NamedTuple):
    """One ``foldstream run`` as a fresh process: its wall time, the CPU time of its processes
    (the client, and on Flink the JVM and the Python workers; sampled from ``/proc``), the
    summary's job clock and examples, and where it wrote its records."""

    wall: float
    cpu: float
    clock: float
    position: int
    records: Path


def run_whole(overrides: list[str], sink: Path, env: dict[str, str] | None = None) -> WholeRun:
    """``foldstream run --quiet`` (the one beside this interpreter) with ``overrides``, its
    records into ``sink`` (rejected ones beside it); ``env``: its environment, if not this
    process's."""
    sets = [*overrides, f"sink.path={sink}"]
    command = [str(Path(sys.executable).with_name("foldstream")), "run", "--quiet",
               *(a for o in sets for a in ("--set", o))]
    # a sample a second: a Flink run keeps both cores busy, and a sampler five times a second
    # took about 2 s of CPU from it (a process's last second of CPU may go uncounted)
    watch = ProcessCpu(interval=1.0)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    cpu = watch.total()
    if done.returncode != 0:
        raise RuntimeError(f"foldstream run failed ({done.returncode}): {done.stderr[-3000:]}")
    (summary,) = [r for r in map(json.loads, sink.read_text().splitlines())
                  if r["type"] == "summary"]
    return WholeRun(wall, cpu, summary["wall_time_s"], summary["position"], sink)


def comparable_file(path: Path) -> list[str]:
    """A record file's records as exact bytes, sorted, timing fields excepted (the engines
    interleave streams and record kinds differently; their bytes are what must agree)."""
    if not path.exists():
        return []
    return sorted(dumps({k: v for k, v in json.loads(line).items()
                         if k not in SummaryRecord.TIMING_FIELDS})
                  for line in path.read_text().splitlines())


def same_records(a: Path, b: Path) -> tuple[bool, int]:
    """Whether two runs wrote the same records and rejected records (timing fields excepted);
    and how many records they wrote."""
    ok = True
    for left, right in ((a, b), (a.with_suffix(".rejected.jsonl"), b.with_suffix(".rejected.jsonl"))):
        x, y = comparable_file(left), comparable_file(right)
        if x != y:
            ok = False
            print(f"DIFFERENT: {left.name} ({len(x)} records) and {right.name} ({len(y)}): "
                  f"first difference {next((p for p in zip(x, y) if p[0] != p[1]), None)}",
                  flush=True)
    return ok, len(comparable_file(a))


def whole(base: list[str], repeat: int, keep: Path | None) -> None:
    """In-process and Flink P=2 in turn, ``repeat`` rounds; each round's records compared."""
    out = keep or Path(tempfile.mkdtemp(prefix="bench-flink-"))
    out.mkdir(parents=True, exist_ok=True)
    best: dict[str, float] = {}
    ratios: list[float] = []  # each round's in-process / Flink, the two run in the same minute
    identical = True
    for round_ in range(1, repeat + 1):
        runs = {}
        for name, engine in WHOLE_ENGINES.items():
            sink = out / f"{name.replace(' ', '-').replace('=', '')}-{round_}.jsonl"
            loads = load()
            run = runs[name] = run_whole(base + engine, sink)
            best[name] = min(best.get(name, float("inf")), run.wall)
            print(f"round {round_} {name:10} whole {run.wall:7.1f} s, CPU {run.cpu:7.1f} s, "
                  f"job clock {run.clock:7.1f} s ({run.position / run.clock:7.1f} examples/s), "
                  f"{run.position} examples; {loads} -> {load()}", flush=True)
        same, n = same_records(*(r.records for r in runs.values()))
        identical &= same
        ratios.append(runs['inprocess'].wall / runs['flink P=2'].wall)
        print(f"round {round_}: in-process / Flink P=2 whole {ratios[-1]:.3f}x; "
              f"records {'identical' if same else 'DIFFERENT'} ({n} records)", flush=True)
    print(f"best of each: " + ", ".join(f"{n} {w:.1f} s" for n, w in best.items())
          + f"; Flink P=2 is {best['inprocess'] / best['flink P=2']:.3f}x in-process "
            "(target >= 1.4, goal 1.8)")
    print(f"rounds: in-process / Flink P=2 median {statistics.median(ratios):.3f}x, "
          f"{min(ratios):.3f}x to {max(ratios):.3f}x")
    if not identical:
        raise SystemExit("the engines wrote different records")


def start(base: list[str], repeat: int) -> None:
    """The Flink engine's start with the JVM's classes kept in Java's class-data archive
    (``job/engines/flink/jvm.py``) and without: ``foldstream run`` at parallelism 2 as a fresh
    process (3,000 examples unless ``--limit``), in a cache folder of its own (the learner
    checks copied in). First the run that writes the archive (its first-use cost), then
    ``repeat`` rounds of a run without it and a run with it, in turn."""
    from foldstream.job.engines.flink.jvm import LOCAL_JVM_ARGS
    from foldstream.operators.downloads import default_cache_dir

    out = Path(tempfile.mkdtemp(prefix="bench-start-"))
    cache = out / "cache"
    cache.mkdir()
    if (default_cache_dir() / "checked").is_dir():
        shutil.copytree(default_cache_dir() / "checked", cache / "checked")
    overrides = [*base, "engine.kind=flink", "engine.parallelism=2"]
    if not any(o.startswith("source.limit=") for o in overrides):
        overrides.append("source.limit=3000")
    kept = {k: v for k, v in os.environ.items() if k != "JVM_ARGS"}
    kept["FOLDSTREAM_CACHE"] = str(cache)
    envs = {"without the archive": {**kept, "JVM_ARGS": LOCAL_JVM_ARGS}, "with the archive": kept}
    first = run_whole(overrides, out / "first.jsonl", kept)
    archive = [p.stat().st_size for p in cache.glob("flink-jvm-*.jsa")]
    print(f"first run, writing the archive ({archive[0] / 2**20:.0f} MiB): whole "
          f"{first.wall:.1f} s, CPU {first.cpu:.1f} s, job clock {first.clock:.1f} s", flush=True)
    walls: dict[str, list[float]] = {name: [] for name in envs}
    for round_ in range(1, repeat + 1):
        for name, env in envs.items():
            run = run_whole(overrides, out / f"{name.replace(' ', '-')}-{round_}.jsonl", env)
            walls[name].append(run.wall)
            same, n = same_records(first.records, run.records)
            print(f"round {round_} {name:20} whole {run.wall:6.1f} s, CPU {run.cpu:6.1f} s, "
                  f"job clock {run.clock:6.1f} s; records {'identical' if same else 'DIFFERENT'} "
                  f"({n}); {load()}", flush=True)
            if not same:
                raise SystemExit("the runs wrote different records")
    print("median whole: " + ", ".join(f"{name} {statistics.median(w):.1f} s"
                                       for name, w in walls.items()))


def record_cost(path: str, label: str, folds: int = 10, parallelism: int = 2,
                repeat: int = 20) -> None:
    """The fan-out's output of one example batch of 500, pickled and unpickled as one record
    per fold and as one record per subtask (module doc)."""
    import pickle

    from foldstream.connectors.files import iter_file
    from foldstream.job.engines.flink.job import RoutedBatches
    from foldstream.operators.records.base import ExampleBatch
    from foldstream.operators.stages.fanout import FanOut, FanOutPlan

    examples = []
    for item in iter_file(Path(path), label=label):
        examples.append(item)
        if len(examples) == 500:
            break
    batch = ExampleBatch("s", 0, 0, list(range(500)), [e.x for e in examples],
                         [e.y for e in examples])
    fold_batches = FanOut("s", FanOutPlan("bootstrap", folds=folds)).process(batch)
    layouts = {"one record per fold": [RoutedBatches(f"s|{b.fold}", [(None, b)])
                                       for b in fold_batches],
               f"one per subtask (P={parallelism})": [
                   RoutedBatches(f"s|{i}", [(None, b) for b in fold_batches[i::parallelism]])
                   for i in range(parallelism)]}
    for name, records in layouts.items():
        started = time.perf_counter()
        for _ in range(repeat):
            texts = [pickle.dumps(r) for r in records]
        dumped = time.perf_counter()
        for _ in range(repeat):
            for text in texts:
                pickle.loads(text)
        loaded = time.perf_counter()
        print(f"{Path(path).name}, {name:26}: {len(texts):2} records, "
              f"{sum(map(len, texts)) / 2**10:7.0f} KiB, pickled in "
              f"{(dumped - started) / repeat * 1e3:6.1f} ms, unpickled in "
              f"{(loaded - dumped) / repeat * 1e3:6.1f} ms per 500 examples ({load()})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=1,
                        help="run the engines in turn this many times; the best run of each counts "
                             "(the machine's speed drifts by 10-15%% between minutes)")
    parser.add_argument("--subtract", type=int, default=None, metavar="SMALL",
                        help="time a run of SMALL examples and one of --limit, and rate the "
                             "difference (start-up, fill and drain excluded)")
    parser.add_argument("--checkpoints", action="store_true",
                        help="P=2 without and with checkpoints every 10 s (the default interval "
                             "of a live source) instead; report their sizes and durations")
    parser.add_argument("--kafka-checkpoints", action="store_true",
                        help="as --checkpoints, reading the examples from a Kafka topic (Apache Kafka) "
                             "produced beforehand")
    parser.add_argument("--aligned", action="store_true",
                        help="with --checkpoints or --kafka-checkpoints: also a run with aligned "
                             "checkpoints (engine.unaligned_checkpoints=false)")
    parser.add_argument("--keying", action="store_true",
                        help="compare the two keyings of the learner tasks at P=2 instead")
    parser.add_argument("--slots", action="store_true",
                        help="compare engine.learner_slots own and shared at P=1 and P=2 instead")
    parser.add_argument("--learners", choices=["pair", "nochange"], default="pair",
                        help="GaussianNB + HoeffdingTree (pair, the default) or river's "
                             "NoChangeClassifier alone (the engines' own work)")
    parser.add_argument("--cpu", action="store_true",
                        help="print each process's cores during every run's clock (/proc)")
    parser.add_argument("--only", default=None, metavar="NAME",
                        help="run only the engines whose name contains NAME (e.g. 'P=1')")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="one more configuration override for every run "
                             "(e.g. engine.bundle_time_ms=50)")
    parser.add_argument("--whole", action="store_true",
                        help="fresh processes, whole wall time: in-process and Flink P=2 in "
                             "turn on the embedded default (or --covertype), records compared")
    parser.add_argument("--covertype", nargs="?", const="dataset://covtype", default=None,
                        metavar="PATH", help="--whole: Forest Covertype (this file) with MOA's "
                        "Hoeffding tree instead of the embedded default; --limit takes a prefix")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="--whole: write the record files here (default: a temporary folder)")
    parser.add_argument("--records", action="store_true",
                        help="the cost of pickling the fan-out's output, per fold and per subtask")
    parser.add_argument("--start", action="store_true",
                        help="Flink P=2 as a fresh process with the JVM's class-data archive and "
                        "without, in turn (3,000 examples unless --limit)")
    args = parser.parse_args()
    if args.start:
        start(([f"source.limit={args.limit}"] if args.limit else []) + args.set, args.repeat)
        return
    if args.records:
        record_cost(args.covertype or str(ROOT / "connectors" / "data" / "elec.csv.gz"),
                    "Cover_Type" if args.covertype else "target")
        return
    if args.whole:
        base = ([f"source.path={args.covertype}", *COVERTYPE] if args.covertype else [])
        base += ([f"source.limit={args.limit}"] if args.limit else []) + args.set
        whole(base, args.repeat, args.keep)
        return
    learners = LEARNERS if args.learners == "pair" else NOCHANGE
    base = [learners, "evaluation.folds=10", f"engine.batch_size={args.batch_size}", *args.set]
    if args.subtract and not args.limit:
        parser.error("--subtract needs --limit")
    if args.limit and not args.subtract:
        base.append(f"source.limit={args.limit}")
    flink = ["engine.kind=flink"]
    runs = [(PLAIN, []),
            ("inprocess", []),
            ("flink P=1", flink + ["engine.parallelism=1"]),
            ("flink P=2", flink + ["engine.parallelism=2"])]
    watch_port = None
    broker = None
    if args.checkpoints or args.kafka_checkpoints:
        watch_port = free_port()
        base.append(f"engine.flink_config={{rest.port: '{watch_port}'}}")
        settings = flink + ["engine.parallelism=2"]
        if args.kafka_checkpoints:
            broker, source = kafka_examples(args.limit or 20_000)
            base = [b for b in base if not b.startswith("source.limit")] + [source]
            settings.append(f"engine.jars={json.dumps(kafka_jars())}")
        every_10s = settings + ["engine.checkpoint_interval_ms=10000"]
        runs = [("P=2 no checkpoints", settings), ("P=2 checkpoints 10 s", every_10s)]
        if args.aligned:
            runs.append(("P=2 aligned 10 s", every_10s + ["engine.unaligned_checkpoints=false"]))
    if args.keying:
        runs = [(f"P=2 {k}", flink + ["engine.parallelism=2", f"engine.keying={k}"])
                for k in ("fold", "learner_fold")]
    if args.slots:
        runs = [(f"P={p} {s}", flink + [f"engine.parallelism={p}", f"engine.learner_slots={s}"])
                for p in (1, 2) for s in ("own", "shared")]
    if args.only:
        runs = [(name, overrides) for name, overrides in runs if args.only in name]
    best: dict[str, float] = {}
    checkpoints: list[dict] = []
    for _ in range(args.repeat):
        for name, overrides in runs:
            watch = CheckpointWatch(watch_port) if watch_port and "10 s" in name else None
            if args.subtract and name == PLAIN:
                rate, _ = run_once(name, [f"source.limit={args.limit}"], base)
            elif args.subtract:
                rate = marginal_rate(name, overrides, base, args.subtract, args.limit)
            else:
                rate, _ = run_once(name, overrides, base, cpu=args.cpu)
            best[name] = max(best.get(name, 0.0), rate)
            if watch is not None:
                checkpoints += [{**c, "run": name} for c in watch.close()]
    print("best of each:", ", ".join(f"{n} {r:.1f}" for n, r in best.items()))
    if broker is not None:
        broker.__exit__(None, None, None)
    if args.checkpoints or args.kafka_checkpoints:
        for name in best:
            if "10 s" in name:
                print(f"{name} / without: {best[name] / best['P=2 no checkpoints']:.3f}")
        for c in checkpoints:
            print(f"{c['run']}, checkpoint {c['id']}: {c.get('state_size', 0) / 2**20:.1f} MB state, "
                  f"{c.get('checkpointed_size', 0) / 2**20:.1f} MB written, "
                  f"{c.get('end_to_end_duration', 0)} ms end to end")
    elif args.keying:
        print(f"learner_fold / fold: {best['P=2 learner_fold'] / best['P=2 fold']:.3f}")
    elif args.slots:
        for p in (1, 2):
            print(f"P={p}: own / shared {best[f'P={p} own'] / best[f'P={p} shared']:.3f}")
    elif not args.only:
        print(f"flink P=1 / in-process: {best['flink P=1'] / best['inprocess']:.3f} "
              f"(target >= 0.9)")
        print(f"flink P=2 / flink P=1:  {best['flink P=2'] / best['flink P=1']:.3f}")
        print(f"in-process / plain loop: {best['inprocess'] / best[PLAIN]:.3f}")
        print(f"flink P=2 / (2 x plain loop): {best['flink P=2'] / (2 * best[PLAIN]):.3f} "
              f"(target >= 0.8)")


if __name__ == "__main__":
    main()

"""A soak run: does a live job hold steady over a million examples?

    .venv/bin/python bench/bench_soak.py [--examples 1000000] [--rate 1000]
        [--checkpoint-ms 10000] [--sample-every 100000] [--json PATH]

Starts an Apache Kafka broker (tests/broker.py), starts `foldstream run` with an unbounded Kafka source, a Kafka sink and
checkpoints (retained in a temporary ``engine.checkpoint_dir``) in a child process, then produces
river's SEA generator at a steady rate. A slow leak, a queue that grows or state that piles up
in the checkpoints shows only after many examples, so at 100,000 examples, every
``--sample-every`` examples and at the end it records:

- the resident memory (RSS, ``/proc/<pid>/status``) of every process: the `foldstream` client,
  the JVM it starts, the Python workers the JVM starts, the broker and this benchmark (the producer
  and the metrics consumer);
- the lag: examples produced minus the position of the last ``measures`` record read from the
  metrics topic, and how long after its example was in Kafka that record was read;
- the latest completed checkpoint's size and duration (the mini-cluster's REST API), and the
  size on disk of the checkpoint folder.

It prints a table and writes the samples as JSON. Everything listens on loopback only, and
every process it started is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from bench_flink import free_port, kafka_broker  # noqa: E402

#: Seconds to wait for the job's first report, and for it to catch up at the end.
START_TIMEOUT_S = 180
DRAIN_TIMEOUT_S = 120


@dataclass
class Checkpoint:
    """The latest completed checkpoint, from ``/jobs/<id>/checkpoints``."""
    id: int | None = None
    state_mb: float | None = None
    written_mb: float | None = None
    duration_ms: int | None = None
    completed: int | None = None  # checkpoints completed so far
    failed: int | None = None
    on_disk_mb: float | None = None  # the checkpoint folder, as `du` would count it
    last_failure: str | None = None  # why the latest failed checkpoint failed


@dataclass
class Sample:
    """One measurement during the run."""
    label: str
    produced: int
    elapsed_s: float
    reported: int  # position of the last `measures` record read for the live stream
    lag: int  # produced - reported
    delay_s: float | None  # that record's arrival - when its example was in Kafka
    load1: float  # the machine's 1-minute load average (2 cores, shared)
    rss_mb: dict[str, float] = field(default_factory=dict)  # process name -> RSS
    pids: dict[str, int] = field(default_factory=dict)
    checkpoint: Checkpoint = field(default_factory=Checkpoint)


# ------------------------------------------------------------------------------ processes
def _status(pid: int) -> dict[str, str]:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)


def rss_mb(pid: int) -> float | None:
    """Resident memory of ``pid`` in MiB (``VmRSS``), or None once it is gone."""
    value = _status(pid).get("VmRSS")
    return int(value.split()[0]) / 1024 if value else None


def children(pid: int) -> list[int]:
    """The direct children of ``pid``, from ``/proc/<pid>/task/*/children``."""
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out.update(int(c) for c in (task / "children").read_text().split())
        except OSError:
            pass
    return sorted(out)


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            out.append(child)
            todo.append(child)
    return out


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def processes(client: int, broker: int) -> dict[str, int]:
    """Name -> pid of the processes of the run. The JVM is the client's ``java`` descendant; the
    workers are the Python processes below the JVM (PyFlink starts each through a shell), named
    ``worker1, worker2, ...`` by pid. Shells and other helpers are left out."""
    named = {"client": client, "broker": broker, "bench": os.getpid()}
    below = descendants(client)
    jvms = [p for p in below if _status(p).get("Name", "").strip() == "java"]
    if jvms:
        named["jvm"] = jvms[0]
        workers = [p for p in descendants(jvms[0]) if "python" in _status(p).get("Name", "")]
        for i, p in enumerate(sorted(workers), start=1):
            named[f"worker{i}"] = p
    return named


# ---------------------------------------------------------------------------- checkpoints
def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def du_mb(path: Path) -> float:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass  # a checkpoint being discarded
    return total / 2**20


def latest_checkpoint(rest_port: int, folder: Path) -> Checkpoint:
    """One look at the REST API (no polling thread: the job has the two cores to itself)."""
    out = Checkpoint(on_disk_mb=round(du_mb(folder), 2))
    base = f"http://127.0.0.1:{rest_port}"
    try:
        for job in _get(base + "/jobs/overview")["jobs"]:
            if job.get("state") != "RUNNING":
                continue
            stats = _get(f"{base}/jobs/{job['jid']}/checkpoints")
            counts = stats.get("counts", {})
            out.completed, out.failed = counts.get("completed"), counts.get("failed")
            latest = (stats.get("latest") or {}).get("completed") or {}
            if latest:
                out.id = latest.get("id")
                out.state_mb = round(latest.get("state_size", 0) / 2**20, 2)
                out.written_mb = round(latest.get("checkpointed_size", 0) / 2**20, 2)
                out.duration_ms = latest.get("end_to_end_duration")
            failed = (stats.get("latest") or {}).get("failed") or {}
            if failed:
                out.last_failure = f"{failed.get('id')}: {failed.get('failure_message')}"
    except (OSError, ValueError, KeyError):
        pass  # not up, or gone
    return out


# ------------------------------------------------------------------------------- reports
class Reports:
    """Reads the metrics topic in a thread: the last ``measures`` position of each stream and
    when it was read."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.last: dict[str, tuple[int, float]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        from kafka import KafkaConsumer, TopicPartition

        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False,
                                 fetch_max_wait_ms=100)
        consumer.assign([TopicPartition("metrics", 0)])
        consumer.seek_to_beginning()
        while not self.stop.is_set():
            for records in consumer.poll(timeout_ms=100).values():
                now = time.time()
                for record in records:
                    r = json.loads(record.value)
                    if r["type"] == "measures" and r["position"] > self.position(r["stream"]):
                        self.last[r["stream"]] = (r["position"], now)
        consumer.close()

    def position(self, stream: str) -> int:
        return self.last.get(stream, (0, 0.0))[0]

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


# ----------------------------------------------------------------------------------- run
def config_text(bs: str, rest_port: int, checkpoint_dir: Path, checkpoint_ms: int,
                report_every: int) -> str:
    return f"""
source: {{kind: kafka, bootstrap_servers: "{bs}", topic: examples, bounded: false, label: target}}
sink: {{kind: kafka, bootstrap_servers: "{bs}", topic: metrics, dead_letter_topic: metrics-rejected}}
evaluation: {{mode: bootstrap, folds: 5, report_every: {report_every}}}
learners:
  - {{name: nb, model: river.naive_bayes.GaussianNB}}
  - {{name: prior, model: river.dummy.PriorClassifier}}
engine: {{kind: flink, parallelism: 2, batch_size: 500, checkpoint_interval_ms: {checkpoint_ms}, checkpoint_dir: "{checkpoint_dir}", flink_config: {{rest.port: '{rest_port}', rest.address: 127.0.0.1, rest.bind-address: 127.0.0.1}}}}
"""


def examples(n: int, seed: int):
    """``n`` rows of river's SEA generator, made as they are sent (a million would not fit in a
    list cheaply)."""
    from river.datasets.synth import SEA

    for x, y in SEA(seed=seed).take(n):
        yield json.dumps({**{f"x{k}": v for k, v in x.items()}, "target": int(y)}).encode()


def sample_points(n: int, every: int) -> set[int]:
    """At 100,000 examples, every ``every`` examples, and at the last.

    >>> sorted(sample_points(250_000, 100_000))
    [100000, 200000, 250000]
    >>> sorted(sample_points(20_000, 5_000))
    [5000, 10000, 15000, 20000]
    """
    return {p for p in range(every, n + 1, every)} | ({100_000} & set(range(n + 1))) | {n}


def print_table(samples: list[Sample]) -> None:
    """One row per sample: lag, delay, every process's RSS (MiB), the latest checkpoint."""
    names = list(dict.fromkeys(name for s in samples for name in s.rss_mb))
    head = (f"{'sample':>8} {'produced':>9} {'time s':>7} {'load':>5} {'lag':>6} {'delay s':>7} "
            + " ".join(f"{n:>8}" for n in names)
            + f" {'ckpt':>5} {'state MB':>8} {'ckpt ms':>7} {'disk MB':>7} {'ok/fail':>8}")
    print(head)
    for s in samples:
        c = s.checkpoint
        delay = f"{s.delay_s:7.2f}" if s.delay_s is not None else f"{'-':>7}"
        rss = " ".join(f"{s.rss_mb[n]:8.0f}" if n in s.rss_mb else f"{'-':>8}" for n in names)
        print(f"{s.label:>8} {s.produced:9d} {s.elapsed_s:7.0f} {s.load1:5.1f} {s.lag:6d} {delay} {rss} "
              f"{c.id if c.id is not None else '-':>5} "
              f"{c.state_mb if c.state_mb is not None else '-':>8} "
              f"{c.duration_ms if c.duration_ms is not None else '-':>7} "
              f"{c.on_disk_mb:7.1f} {f'{c.completed}/{c.failed}':>8}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1_000_000)
    parser.add_argument("--rate", type=float, default=1000.0, help="examples per second")
    parser.add_argument("--checkpoint-ms", type=int, default=10_000)
    parser.add_argument("--sample-every", type=int, default=100_000, metavar="EXAMPLES")
    parser.add_argument("--report-every", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", type=Path, default=Path(tempfile.gettempdir()) / "bench_soak.json")
    args = parser.parse_args()

    from kafka import KafkaProducer

    from foldstream.connectors.kafka import create_topics

    work = Path(tempfile.mkdtemp(prefix="soak-"))
    broker = kafka_broker().__enter__()
    job = None
    reports = producer = None
    samples: list[Sample] = []
    sent: dict[int, float] = {}  # position -> when its example was in Kafka (each report's)
    t0 = time.time()

    def sample(label: str, produced: int) -> None:
        named = processes(job.pid, broker.proc.pid)
        reported, read_at = reports.last.get("live", (0, 0.0))
        s = Sample(label, produced, time.time() - t0, reported, produced - reported,
                   round(read_at - sent[reported], 3) if reported in sent else None,
                   float(Path("/proc/loadavg").read_text().split()[0]),
                   {n: round(r, 1) for n, p in named.items() if (r := rss_mb(p)) is not None},
                   named, latest_checkpoint(rest_port, work / "checkpoints"))
        samples.append(s)
        print(f"{label}: {s.elapsed_s:.0f} s, lag {s.lag}, delay {s.delay_s} s, RSS MiB {s.rss_mb}, "
              f"checkpoint {asdict(s.checkpoint)}", flush=True)

    try:
        bs = broker.bootstrap
        create_topics(bs, ["examples", "metrics", "metrics-rejected"])
        rest_port = free_port()
        config = work / "soak.yaml"
        config.write_text(config_text(bs, rest_port, work / "checkpoints", args.checkpoint_ms,
                                      args.report_every))
        log = work / "job.log"
        job = subprocess.Popen([sys.executable, "-m", "foldstream.job.cli", "run", "--quiet", str(config)],
                               stdout=subprocess.DEVNULL, stderr=open(log, "w"),
                               stdin=subprocess.DEVNULL, start_new_session=True)
        print(f"job log {log}, checkpoints under {work / 'checkpoints'}", flush=True)
        reports = Reports(bs)
        # batches of up to 5 ms, as bench_latency.py: one request per message costs a core
        producer = KafkaProducer(bootstrap_servers=bs, linger_ms=5)
        # warm-up: a stream of its own until the job reports once (start-up is not the soak)
        for value in examples(args.report_every, args.seed + 1):
            producer.send("examples", key=b"warmup", value=value)
        producer.flush()
        while reports.position("warmup") < args.report_every:
            if job.poll() is not None or time.time() - t0 > START_TIMEOUT_S:
                raise SystemExit(f"the job did not report within {START_TIMEOUT_S} s; its log: {log}")
            time.sleep(0.2)
        print(f"job reporting {time.time() - t0:.1f} s after start", flush=True)

        points = sample_points(args.examples, args.sample_every)
        t0 = time.time()
        for i, value in enumerate(examples(args.examples, args.seed), start=1):
            due = t0 + i / args.rate
            while (wait := due - time.time()) > 0:
                time.sleep(wait)
            producer.send("examples", key=b"live", value=value)
            if i % args.report_every == 0:
                producer.flush()  # the send time is then when the example is in Kafka
                sent[i] = time.time()
            if i in points:
                if job.poll() is not None:
                    raise SystemExit(f"the job stopped (exit {job.returncode}); its log: {log}")
                sample(f"{i // 1000}k", i)
        producer.flush()
        deadline = time.time() + DRAIN_TIMEOUT_S
        last = args.examples - args.examples % args.report_every
        while reports.position("live") < last and time.time() < deadline:
            time.sleep(0.2)
        sample("drained", args.examples)
    finally:
        if reports is not None:
            reports.close()
        if producer is not None:
            producer.close(timeout=10)
        if job is not None and (killed := stop_job(job)):
            print(f"killed {killed}: still running 30 s after the client stopped")
        broker.__exit__(None, None, None)
    args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                     "samples": [asdict(s) for s in samples]}, indent=1))
    print("RSS in MiB; lag in examples; delay: the last report read, seconds after its example "
          "was in Kafka; ckpt: latest completed checkpoint")
    print_table(samples)
    print(f"results in {args.json}")


def _started(pid: int) -> str | None:
    """When ``pid`` started (``/proc/<pid>/stat`` field 22): tells a process from a later one
    that reuses its pid."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def stop_job(job: subprocess.Popen) -> list[int]:
    """SIGTERM to the client; then SIGKILL, by pid, to whatever it started that outlived it by
    30 s. Returns the pids that had to be killed."""
    started = {p: _started(p) for p in descendants(job.pid)}
    job.terminate()
    try:
        job.wait(timeout=30)
    except subprocess.TimeoutExpired:
        job.kill()
        job.wait(timeout=10)
    deadline = time.time() + 30
    while time.time() < deadline and any(_started(p) == s for p, s in started.items()):
        time.sleep(0.5)
    killed = []
    for pid, when in started.items():
        if when is not None and _started(pid) == when:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError:
                pass
    return killed


if __name__ == "__main__":
    main()

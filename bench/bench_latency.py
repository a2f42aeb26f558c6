"""Live operation: how long after example p arrives is the report for position p in Kafka?

    .venv/bin/python bench/bench_latency.py [--rate 2000] [--examples 20000] [--bootstrap HOST:PORT]
        [--guarantee exactly-once] [--checkpoint-ms 10000] [--backlog 20000]

Starts an Apache Kafka broker (tests/broker.py; unless --bootstrap names one), starts
`foldstream run` with an unbounded Kafka source and a Kafka sink (``sink.delivery_guarantee``
from --guarantee) in a child process, waits for it to report on a warm-up stream, then produces
Electricity at a steady rate, stamping the send time of every example, while a consumer stamps
the arrival of each `measures` record. Latency = arrival(report p) - send(p). The consumer reads
``read_committed`` under exactly-once (a report is there once its checkpoint committed it).

``--backlog N`` measures throughput instead: N examples are sent at once (after the warm-up),
and the job's rate is N over the time from the send of the first to the arrival of the report
at N, for the same reader.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from bench_flink import CheckpointWatch, free_port, kafka_broker, rows  # noqa: E402


STAGES = ("fan-in", "fan-out", "learners-in", "learners-out", "aggregator")


def print_stages(trace_file: Path, sent: dict[int, float], arrivals: dict[int, float]) -> None:
    """For each report: ms after the example was sent when it first passed each stage
    (``foldstream.job.engines.flink.trace``; the learners' columns follow fold 0), and when it was read."""
    passed: dict[str, list[tuple[float, int]]] = {s: [] for s in STAGES}
    for line in trace_file.read_text().splitlines():
        name, stream, position, at = line.split()
        if stream == "live" and name in passed:
            passed[name].append((float(at), int(position)))

    def first(name: str, p: int) -> str:
        at = min((t for t, pos in passed[name] if pos >= p), default=None)
        return f"{(at - sent[p]) * 1000:8.0f}" if at is not None else f"{'-':>8}"

    print("ms after example p was sent, when it passed each stage:")
    print(f"{'p':>6} " + " ".join(f"{s:>12}" for s in STAGES) + f" {'in Kafka':>12}")
    for p in sorted(sent):
        read = f"{(arrivals[p] - sent[p]) * 1000:12.0f}" if p in arrivals else f"{'-':>12}"
        print(f"{p:6d} " + " ".join(f"{first(s, p):>12}" for s in STAGES) + f" {read}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=float, default=2000.0)
    parser.add_argument("--examples", type=int, default=20_000)
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--report-every", type=int, default=1000)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--flush-ms", type=int, default=50)
    parser.add_argument("--bundle-ms", type=int, default=None, help="engine.bundle_time_ms")
    parser.add_argument("--learner-slots", default="own", choices=["own", "shared"])
    parser.add_argument("--checkpoint-ms", type=int, default=None,
                        help="engine.checkpoint_interval_ms (default: a live source's 10 s)")
    parser.add_argument("--aligned", action="store_true",
                        help="aligned checkpoints (engine.unaligned_checkpoints: false)")
    parser.add_argument("--checkpoint-stats", action="store_true",
                        help="poll the mini-cluster's REST API for the checkpoints' sizes and "
                             "durations (the polling itself costs the job some CPU)")
    parser.add_argument("--guarantee", default="at-least-once",
                        choices=["at-least-once", "exactly-once"],
                        help="sink.delivery_guarantee (exactly-once: read_committed reader)")
    parser.add_argument("--backlog", type=int, default=None, metavar="N",
                        help="throughput: send N examples at once and time the report at N")
    parser.add_argument("--start-timeout", type=float, default=300.0, metavar="S",
                        help="seconds the job may take to report on the warm-up stream")
    parser.add_argument("--stages", action="store_true",
                        help="also print when each report's example passed each stage")
    args = parser.parse_args()

    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    from foldstream.connectors.kafka import create_topics

    broker = None
    if args.bootstrap is None:
        broker = kafka_broker().__enter__()
        bs = broker.bootstrap
    else:
        bs = args.bootstrap
    create_topics(bs, ["examples", "metrics", "metrics-rejected"])
    config = Path(tempfile.mkdtemp()) / "live.yaml"
    engine = f", bundle_time_ms: {args.bundle_ms}" if args.bundle_ms else ""
    if args.checkpoint_ms:
        engine += f", checkpoint_interval_ms: {args.checkpoint_ms}"
    if args.aligned:
        engine += ", unaligned_checkpoints: false"
    rest_port = free_port()  # the mini-cluster's REST API, for --checkpoint-stats
    trace_file = Path(tempfile.mkdtemp()) / "stages.txt"
    env = {**os.environ, "FOLDSTREAM_TRACE": str(trace_file)} if args.stages else None
    config.write_text(f"""
source: {{kind: kafka, bootstrap_servers: "{bs}", topic: examples, bounded: false, label: target}}
sink: {{kind: kafka, bootstrap_servers: "{bs}", topic: metrics, dead_letter_topic: metrics-rejected,
        delivery_guarantee: {args.guarantee}}}
evaluation: {{mode: bootstrap, folds: {args.folds}, report_every: {args.report_every}}}
learners:
  - {{name: hoeffding_tree, model: river.tree.HoeffdingTreeClassifier}}
  - {{name: prior, model: river.dummy.PriorClassifier}}
engine: {{kind: flink, parallelism: 2, batch_size: 500, flush_ms: {args.flush_ms}{engine}, learner_slots: {args.learner_slots}, flink_config: {{rest.port: '{rest_port}'}}}}
""")
    job = subprocess.Popen([sys.executable, "-m", "foldstream.job.cli", "run", "--quiet", str(config)],
                           stdout=subprocess.DEVNULL, stderr=open(config.with_suffix(".log"), "w"),
                           env=env)
    checkpoints = CheckpointWatch(rest_port) if args.checkpoint_stats else None
    arrivals: dict[tuple[str, int], float] = {}
    stop = threading.Event()

    def consume() -> None:
        isolation = "read_committed" if args.guarantee == "exactly-once" else "read_uncommitted"
        consumer = KafkaConsumer(bootstrap_servers=bs, enable_auto_commit=False,
                                 isolation_level=isolation)
        consumer.assign([TopicPartition("metrics", 0)])
        consumer.seek_to_beginning()
        while not stop.is_set():
            for records in consumer.poll(timeout_ms=50).values():
                now = time.time()
                for record in records:
                    r = json.loads(record.value)
                    if r["type"] == "measures":
                        arrivals.setdefault((r["stream"], r["position"]), now)
        consumer.close()

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    # batches of up to 5 ms (Kafka 4's default linger): one request per message would make the
    # broker and this process, on the same two cores as the job, the busiest programs here
    producer = KafkaProducer(bootstrap_servers=bs, linger_ms=5)
    data = rows(args.examples)
    try:
        # warm-up: a stream of its own, until the job has reported once (start-up excluded)
        started = time.time()
        for row in data[: args.report_every]:
            producer.send("examples", key=b"warmup", value=json.dumps(row).encode())
        producer.flush()
        while ("warmup", args.report_every) not in arrivals:
            if job.poll() is not None or time.time() - started > args.start_timeout:
                raise SystemExit(f"the job did not report within {args.start_timeout} s; "
                                 f"its log: {config.with_suffix('.log')}")
            time.sleep(0.1)
        print(f"job reporting {time.time() - started:.1f} s after start ({args.guarantee})",
              flush=True)
        if args.backlog:
            backlog = rows(args.backlog)
            t0 = time.time()
            for row in backlog:
                producer.send("examples", key=b"backlog", value=json.dumps(row).encode())
            producer.flush()
            last = args.backlog - args.backlog % args.report_every
            while ("backlog", last) not in arrivals:
                if job.poll() is not None or time.time() - t0 > 600:
                    raise SystemExit("the job did not report the backlog within 600 s")
                time.sleep(0.05)
            took = arrivals[("backlog", last)] - t0
            print(f"backlog {args.backlog} examples: report {last} read after {took:.1f} s, "
                  f"{last / took:,.0f} examples/s", flush=True)
            return
        sent: dict[int, float] = {}
        t0 = time.time()
        for i, row in enumerate(data, start=1):
            due = t0 + i / args.rate
            while time.time() < due:
                time.sleep(max(0.0, due - time.time()))
            producer.send("examples", key=b"live", value=json.dumps(row).encode())
            if i % args.report_every == 0:
                producer.flush()  # so the send time is the time the example is in Kafka
                sent[i] = time.time()
        producer.flush()
        deadline = time.time() + 30
        while len([p for p in sent if ("live", p) in arrivals]) < len(sent) and time.time() < deadline:
            time.sleep(0.1)
        latencies = [arrivals[("live", p)] - sent[p] for p in sorted(sent) if ("live", p) in arrivals]
        print(f"rate {args.rate:.0f} examples/s, {len(sent)} reports, received {len(latencies)}")
        print("per report (ms):", " ".join(f"{x * 1000:.0f}" for x in latencies))
        if latencies:
            q = statistics.quantiles(latencies, n=20)
            print(f"latency: median {statistics.median(latencies) * 1000:.0f} ms, "
                  f"p95 {q[-1] * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms")
        for c in checkpoints.close() if checkpoints else []:
            print(f"checkpoint {c['id']}: {c.get('state_size', 0) / 2**20:.1f} MB, "
                  f"{c.get('end_to_end_duration', 0)} ms end to end")
        if args.stages:
            print_stages(trace_file, sent, {p: t for (s, p), t in arrivals.items() if s == "live"})
    finally:
        stop.set()
        job.terminate()
        job.wait(timeout=30)
        producer.close()
        if broker is not None:
            broker.__exit__(None, None, None)


if __name__ == "__main__":
    main()

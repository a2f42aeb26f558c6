"""The dashboard over a long stream: the server's RSS must stay flat once its curves are full.

    .venv/bin/python bench/bench_dashboard.py [--records 100000] [--history 500 2000]

For each ``--history``, ``foldstream dashboard FILE --history N`` runs in a process of its own
with one page's worth of server-sent events attached (a client reading ``/events`` as a browser
would), while this script appends ``--records`` records to FILE: reports of one stream with
three learners, ten folds and every measure, three pairs compared on two measures with live
verdicts, rankings and a few alarms, shaped after a real run's records (positions 100 apart,
values jittered). It samples the server's RSS when it has read 10,000 records and at the end,
and a few times between; then it appends one more report and times how long until the events
carry it.

Also measures :class:`~foldstream.job.tools.dashboard.state.DashboardState` on its own, in this
process: records folded per second, and its memory as tracemalloc sees it at the same marks.
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from foldstream.job import cli
from foldstream.job.tools.dashboard.state import Cursor, DashboardState
from foldstream.job.tools.records import read_records

MARKS = (10_000, 25_000, 50_000, 75_000)


def marks_for(count: int) -> list[int]:
    """Where RSS is sampled: :data:`MARKS`, every 100,000 records, and the end."""
    return sorted({m for m in MARKS if m < count} | set(range(100_000, count, 100_000)) | {count})


def template(folder: Path) -> list[dict]:
    """The records of one report of a real run (SEA, three learners, 10 folds, verdicts on)."""
    path = folder / "template.jsonl"
    assert cli.main(["run", "--quiet", "--set",
                     "source={kind: generator, model: river.datasets.synth.SEA, limit: 300}",
                     "--set", f"sink.path={path}", "--set", "evaluation.report_every=100",
                     "--set", "evaluation.verdicts.enabled=true"]) == 0
    records = read_records(path)
    last = max(r["position"] for r in records if r["type"] == "measures")
    report = [r for r in records if r["position"] == last and r["type"] != "summary"]
    alarm = next((r for r in records if r["type"] == "alarm"), None)
    return report + ([alarm] if alarm else [])


def jitter(value, rng: random.Random):
    if isinstance(value, float):
        return value * (1 + 0.02 * (rng.random() - 0.5))
    if isinstance(value, list):
        return [jitter(v, rng) for v in value]
    if isinstance(value, dict):
        return {k: jitter(v, rng) for k, v in value.items()}
    return value


def records(report: list[dict], count: int, seed: int = 1):
    """``count`` records: the template report again and again, 100 positions apart."""
    rng = random.Random(seed)
    made, position = 0, 0
    while made < count:
        position += 100
        for record in report:
            if record["type"] == "alarm" and rng.random() > 0.2:
                continue
            out = jitter(copy.deepcopy(record), rng)
            out["position"] = position - (7 if record["type"] == "alarm" else 0)
            if "sequential" in out:
                out["sequential"]["n"] = position
            if out["type"] == "verdict":
                out["n"] = position
            yield out
            made += 1
            if made == count:
                return


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EventClient(threading.Thread):
    """Reads /events as a page does; keeps the highest position the events carried."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.port = port
        self.position = 0
        self.messages = 0
        self.bytes = 0
        self.seen = threading.Condition()

    def run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        connection.request("GET", "/events?measure=kappa_m")
        response = connection.getresponse()
        event = None
        while True:
            line = response.readline()
            if not line:
                return
            self.bytes += len(line)
            text = line.decode("utf-8").rstrip("\n")
            if text.startswith("event: "):
                event = text[7:]
            elif text.startswith("data: ") and event == "stream":
                message = json.loads(text[6:])
                with self.seen:
                    self.messages += 1
                    self.position = max(self.position, message["meta"]["position"])
                    self.seen.notify_all()

    def wait_for(self, position: int, timeout: float) -> bool:
        with self.seen:
            return self.seen.wait_for(lambda: self.position >= position, timeout)


def overview(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/overview", timeout=10) as r:
        return json.load(r)


def server_run(report: list[dict], count: int, history: int, folder: Path) -> dict:
    path = folder / f"metrics-{history}.jsonl"
    path.write_text("")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "foldstream.job.cli", "dashboard", str(path),
                             "--port", str(port), "--history", str(history),
                             "--interval", "0.1"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                overview(port)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        client = EventClient(port)
        client.start()
        rss = {"start": rss_mb(proc.pid)}
        written = 0
        started = time.perf_counter()
        marks = marks_for(count)
        stream = records(report, count)
        with path.open("a", encoding="utf-8") as handle:
            for mark in marks:
                for record in stream:
                    handle.write(json.dumps(record, separators=(",", ":")) + "\n")
                    written += 1
                    if written == mark:
                        break
                handle.flush()
                while overview(port)["sources"][0]["records"] < written:  # read them all
                    time.sleep(0.2)
                rss[mark] = rss_mb(proc.pid)
                print(f"  history {history}: {written:>7,} records read, RSS {rss[mark]:.1f} MB "
                      f"({time.perf_counter() - started:.0f} s)", flush=True)
        elapsed = time.perf_counter() - started
        last = overview(port)["streams"][0]["position"]
        client.wait_for(last, 30)
        # one more report: how long until the events carry it
        extra = [dict(r, position=last + 100) for r in report if r["type"] != "alarm"]
        for r in extra:
            if "sequential" in r:
                r["sequential"] = dict(r["sequential"], n=last + 100)
        with path.open("a", encoding="utf-8") as handle:
            for r in extra:
                handle.write(json.dumps(r) + "\n")
        written_at = time.perf_counter()
        client.wait_for(last + 100, 10)
        latency = time.perf_counter() - written_at
        return {"history": history, "rss": rss, "elapsed": elapsed, "latency": latency,
                "events": client.messages, "event_mb": client.bytes / 2**20,
                "size_mb": path.stat().st_size / 2**20}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def state_speed(report: list[dict], count: int, history: int) -> float:
    state = DashboardState(history=history)
    batch = list(records(report, count))
    started = time.perf_counter()
    state.update_many(batch)
    rate = count / (time.perf_counter() - started)
    assert state.stream_message(None, "kappa_m", Cursor()) is not None
    return rate


def state_memory(report: list[dict], count: int, history: int) -> dict[int, float]:
    """The state's own memory (tracemalloc, after a collection) at the marks: what RSS shows
    plus the allocator's and the web stack's share."""
    import gc
    import tracemalloc

    state = DashboardState(history=history)
    cursor = Cursor()
    traced = {}
    marks = set(marks_for(count))
    tracemalloc.start()
    try:
        for n, record in enumerate(records(report, count), 1):
            state.update(record)
            if n % 1000 == 0:  # a page asks now and then, as the events do
                state.stream_message(None, "kappa_m", cursor)
            if n in marks:
                gc.collect()
                traced[n] = tracemalloc.get_traced_memory()[0] / 2**20
    finally:
        tracemalloc.stop()
    return traced


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--history", type=int, nargs="+", default=[500, 2000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        report = template(folder)
        print(f"template: {len(report)} records per report "
              f"({', '.join(sorted({r['type'] for r in report}))})")
        print(f"DashboardState alone: {state_speed(report, 20_000, args.history[0]):,.0f} "
              f"records/s")
        for history in args.history:
            traced = state_memory(report, args.records, history)
            print(f"DashboardState alone, history {history}: traced memory "
                  + ", ".join(f"{traced[m]:.1f} MB at {m:,}" for m in sorted(traced)), flush=True)
        results = [server_run(report, args.records, h, folder) for h in args.history]
    middle = marks_for(args.records)[1:-1]
    columns = (["--history", "RSS at start", "RSS at 10,000 records"]
               + [f"at {m:,}" for m in middle]
               + [f"at {args.records:,}", "growth from 10k to the end", "read rate",
                  "a new report on the events after"])
    print()
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")
    for r in results:
        rss = r["rss"]
        cells = ([str(r["history"]), f"{rss['start']:.1f} MB", f"{rss[10_000]:.1f} MB"]
                 + [f"{rss[m]:.1f} MB" for m in middle]
                 + [f"{rss[args.records]:.1f} MB", f"{rss[args.records] - rss[10_000]:+.1f} MB",
                    f"{args.records / r['elapsed']:,.0f} records/s",
                    f"{r['latency'] * 1000:.0f} ms"])
        print("| " + " | ".join(cells) + " |")
    for r in results:
        print(f"history {r['history']}: file {r['size_mb']:.0f} MB; {r['events']} stream events, "
              f"{r['event_mb']:.1f} MB of events to one page")


if __name__ == "__main__":
    main()

"""``foldstream produce``: send a file or generator source into a Kafka topic, as a job reads it.

Each example becomes one message keyed by its stream's name, whose value is a flat JSON object
of the features plus the label under ``source.label`` (and the example's id under
``source.id_field`` when set): exactly what a ``source.kind: kafka`` job parses (docs/method.md §1,
``connectors/messages.py``). Rows the source rejects are reported, counted and skipped.

Messages are sent in batches for speed, except the last message of every stream, which is sent
alone once everything before it is acknowledged. So the last batch of every partition holds
one message, and a broker that reports a partition's end as the first offset of its last batch
plus one (Tansu, PLATFORM.md) still reports the true end: a job bounded by the end offsets
then reads every example.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, \
    TimeElapsedColumn

from foldstream.job.config import Config
from foldstream.operators.records import Example, Rejected

FLUSH_EVERY = 500  # messages between flushes: bounds memory and keeps the progress bar honest
SHOWN_REJECTED = 5  # rejected rows printed in full; the rest are only counted
DEFAULT_LABEL = "target"  # a generator source has no label name; a Kafka source's default


@dataclass
class ProduceResult:
    """What :func:`produce` sent."""

    sent: int = 0
    rejected: int = 0
    per_stream: Counter = field(default_factory=Counter)
    end_offsets: dict[int, int] = field(default_factory=dict)
    seconds: float = 0.0
    interrupted: bool = False


def message_value(example: Example, label: str, id_field: str | None = None) -> dict[str, Any]:
    """The JSON object a job parses back into ``example``: id, features, label.

    >>> message_value(Example("elec", {"a": 0.5, "day": "2"}, "UP", key=7), "target", "id")
    {'id': 7, 'a': 0.5, 'day': '2', 'target': 'UP'}
    """
    value: dict[str, Any] = {}
    if id_field and example.key is not None:
        value[id_field] = example.key
    value.update(example.x)
    value[label] = example.y
    return value


class _Sender:
    """A kafka-python producer that batches, except for the last message of each stream."""

    def __init__(self, bootstrap: str, topic: str, timeout_s: float = 30.0):
        from kafka import KafkaProducer

        self.topic = topic
        self.timeout_s = timeout_s
        self.producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all",
                                      linger_ms=5, client_id="foldstream-produce",
                                      request_timeout_ms=int(timeout_s * 1000))
        self.held: dict[str, bytes] = {}  # per stream, its latest message, not sent yet
        self.futures: list = []

    def add(self, stream: str, value: bytes) -> None:
        previous = self.held.get(stream)
        self.held[stream] = value
        if previous is not None:
            self._send(stream, previous)
            if len(self.futures) >= FLUSH_EVERY:
                self.flush()

    def _send(self, stream: str, value: bytes):
        future = self.producer.send(self.topic, key=stream.encode("utf-8"), value=value)
        self.futures.append(future)
        return future

    def flush(self) -> None:
        """Wait until every message sent so far is acknowledged; raise the first error."""
        self.producer.flush(timeout=self.timeout_s)
        for future in self.futures:
            future.get(timeout=self.timeout_s)
        self.futures.clear()

    def finish(self) -> None:
        """Send the held-back last message of every stream, each alone in its batch."""
        self.flush()
        for stream, value in self.held.items():
            self._send(stream, value).get(timeout=self.timeout_s)
        self.held.clear()
        self.futures.clear()

    def close(self) -> None:
        self.producer.close(timeout=self.timeout_s)


def _progress(total: int | None, topic: str, console: Console) -> Progress:
    columns = [SpinnerColumn(), TextColumn(f"[bold]producing to {topic}"), BarColumn(),
               MofNCompleteColumn(), TextColumn("examples"), TimeElapsedColumn()]
    return Progress(*columns, console=console, transient=False)


def _report_rejected(rejected: Rejected, count: int, err: Console) -> None:
    if count <= SHOWN_REJECTED:
        where = f"{rejected.location}: " if rejected.location else ""
        err.print(f"[yellow]skipped[/] {where}{rejected.reason}", highlight=False)
    elif count == SHOWN_REJECTED + 1:
        err.print("[yellow]skipped[/] more rejected rows (counted, not shown)", highlight=False)


def _pace(rate: float | None, started: float, sent: int) -> None:
    """Sleep until the ``sent``-th example is due at ``rate`` examples per second."""
    if rate:
        delay = started + sent / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)


def produce(config: Config, bootstrap: str, topic: str, *, rate: float | None = None,
            limit: int | None = None, progress: bool = True,
            err: Console | None = None) -> ProduceResult:
    """Send the configured source into ``topic``.

    Parameters
    ----------
    config : Config
        A validated configuration; only its ``source`` (file or generator) is used.
    bootstrap : str
        Kafka bootstrap servers, ``HOST:PORT[,HOST:PORT...]``.
    topic : str
        Created (one partition) if it does not exist.
    rate : float, optional
        Examples per second; default as fast as possible.
    limit : int, optional
        Send at most this many examples (rejected rows do not count).
    progress : bool
        Show a progress bar on standard error.
    err : Console, optional
        Where the progress bar and rejected rows go (default: standard error).

    Returns
    -------
    ProduceResult
        Counts per stream, rejected rows, the topic's end offsets after sending. Ctrl-C stops
        the sending; what was read is still delivered and ``interrupted`` is set.

    Raises
    ------
    foldstream.connectors.kafka.KafkaUnavailable
        Within seconds, naming the bootstrap servers, when no broker answers.
    ValueError
        When the source is not a file or a generator.
    """
    from foldstream.connectors.kafka import check_bootstrap, create_topics, end_offsets
    from foldstream.job.plans import expected_examples, open_source

    err = err or Console(stderr=True)
    if config.source.kind not in ("file", "generator"):
        raise ValueError(f"produce sends a file or generator source, not source.kind "
                         f"{config.source.kind}")
    check_bootstrap(bootstrap)
    create_topics(bootstrap, [topic])
    label = getattr(config.source, "label", DEFAULT_LABEL)
    id_field = getattr(config.source, "id_field", None)
    total = expected_examples(config)
    if limit is not None:
        total = min(total, limit) if total else limit
    result = ProduceResult()
    sender = _Sender(bootstrap, topic)
    started = time.perf_counter()
    try:
        with _progress(total, topic, err) if progress else _NoProgress() as bar:
            task = bar.add_task("produce", total=total)
            try:
                for item in open_source(config):
                    if isinstance(item, Rejected):
                        result.rejected += 1
                        _report_rejected(item, result.rejected, err)
                        continue
                    if limit is not None and result.sent >= limit:
                        break
                    _pace(rate, started, result.sent)
                    value = message_value(item, label, id_field)
                    sender.add(item.stream, json.dumps(value, separators=(",", ":"),
                                                       ensure_ascii=False).encode("utf-8"))
                    result.sent += 1
                    result.per_stream[item.stream] += 1
                    bar.update(task, completed=result.sent)
            except KeyboardInterrupt:
                result.interrupted = True
            sender.finish()
    finally:
        sender.close()
    result.seconds = time.perf_counter() - started
    result.end_offsets = end_offsets(bootstrap, topic, exact=True)
    return result


class _NoProgress:
    """Stands in for a :class:`Progress` when none is wanted."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def add_task(self, *args, **kwargs) -> int:
        return 0

    def update(self, *args, **kwargs) -> None:
        return None


def summary_text(result: ProduceResult, bootstrap: str, topic: str) -> str:
    """What ``foldstream produce`` prints at the end."""
    streams = ", ".join(f"{n} of {s}" for s, n in result.per_stream.items()) or "none"
    speed = result.sent / result.seconds if result.seconds > 0 else 0.0
    offsets = ", ".join(f"partition {p}: {o}" for p, o in sorted(result.end_offsets.items()))
    lines = [f"sent {result.sent} examples ({streams}) to topic {topic} at {bootstrap} "
             f"in {result.seconds:.1f} s ({speed:,.0f} examples/s)",
             f"rejected rows skipped: {result.rejected}",
             f"end offsets of {topic}: {offsets or 'none'}"]
    if result.interrupted:
        lines.insert(0, "interrupted: what was read before Ctrl-C was sent")
    return "\n".join(lines)


def main(args) -> int:
    """``foldstream produce [CONFIG] --bootstrap-servers H:P --topic T [--rate N] [--limit N]``."""
    from foldstream.connectors.kafka import KafkaUnavailable
    from foldstream.job.config import ConfigError, load_config

    err = Console(stderr=True)
    if args.rate is not None and args.rate <= 0:
        err.print("[red]error:[/] --rate must be positive", highlight=False)
        return 2
    if args.limit is not None and args.limit < 1:
        err.print("[red]error:[/] --limit must be at least 1", highlight=False)
        return 2
    try:
        config = load_config(args.config, args.overrides)
        result = produce(config, args.bootstrap_servers, args.topic, rate=args.rate,
                         limit=args.limit, progress=not args.quiet, err=err)
    except (ConfigError, ValueError, KafkaUnavailable) as error:
        err.print(f"[red]error:[/] {error}", highlight=False)
        return 2
    print(summary_text(result, args.bootstrap_servers, args.topic))
    sys.stdout.flush()
    return 130 if result.interrupted else 0

"""``foldstream produce``: send a file or generator source into a Kafka topic, as a job reads it.

Each example becomes one message keyed by its stream's name, whose value is a flat JSON object
of the features plus the label under ``source.label`` (and the example's id under
``source.id_field`` when set): exactly what a ``source.kind: kafka`` job parses (docs/method.md §1,
``connectors/messages.py``). Rows the source rejects are reported, counted and skipped.

Messages are sent in batches for speed; the command returns once every one is acknowledged, so
that a job bounded by the end offsets then reads every example.

Delayed labels (docs/method.md §13, ``evaluation.delay``): the stream is sent as a delayed
Kafka job reads it, in the event order of
:func:`~foldstream.operators.stages.delay.simulate_delay`: each example without its label (an
arrival: its id and features) and, ``k`` examples later, its label as a label-only row
``{id: key, label: y}``, on the same topic or on a labels topic of its own (``source.labels_topic``
of the job). The id is ``source.id_field`` of the file, or the example's position in its stream
under the name ``--id-field`` gives.
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

from foldstream.job import exitcodes
from foldstream.job.config import Config
from foldstream.job.engines.stopping import exit_code, interruptible, signal_of, stop_text
from foldstream.job.terminal import inert
from foldstream.job.tools.tables import typed
from foldstream.operators.stages.delay import LabelOnly
from foldstream.operators.records.base import Example, Rejected

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
    interrupted: int | None = None  # the signal that stopped the sending (Ctrl-C, SIGTERM)
    labels: int = 0  # delayed labels: the label-only rows sent
    labels_topic: str | None = None  # where they went, when not to the examples' topic
    labels_end_offsets: dict[int, int] = field(default_factory=dict)


def message_value(example: Example, label: str, id_field: str | None = None,
                  key: int | str | None = None) -> dict[str, Any]:
    """The JSON object a job parses back into ``example``: id (``key`` if given, else the
    example's), features, label (none for an example whose label comes later).

    >>> message_value(Example("elec", {"a": 0.5, "day": "2"}, "UP", key=7), "target", "id")
    {'id': 7, 'a': 0.5, 'day': '2', 'target': 'UP'}
    >>> message_value(Example("elec", {"a": 0.5}, None), "target", "id", key=3)
    {'id': 3, 'a': 0.5}
    """
    value: dict[str, Any] = {}
    key = example.key if key is None else key
    if id_field and key is not None:
        value[id_field] = key
    value.update(example.x)
    if example.y is not None:
        value[label] = example.y
    return value


def label_value(item: LabelOnly, label: str, id_field: str) -> dict[str, Any]:
    """The label-only row a delayed job joins to the example with the same id (docs/method.md §13).

    >>> label_value(LabelOnly("elec", 7, "UP"), "target", "id")
    {'id': 7, 'target': 'UP'}
    """
    return {id_field: item.key, label: item.y}


def _encode(value: dict[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class _Sender:
    """A kafka-python producer that batches, and waits for the acknowledgements every
    :data:`FLUSH_EVERY` messages and at the end."""

    def __init__(self, bootstrap: str, topic: str, timeout_s: float = 30.0):
        from kafka import KafkaProducer

        self.topic = topic
        self.timeout_s = timeout_s
        self.producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all",
                                      linger_ms=5, client_id="foldstream-produce",
                                      request_timeout_ms=int(timeout_s * 1000))
        self.futures: list = []

    def add(self, stream: str, value: bytes) -> None:
        self.futures.append(self.producer.send(self.topic, key=stream.encode("utf-8"),
                                               value=value))
        if len(self.futures) >= FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        """Wait until every message sent so far is acknowledged; raise the first error."""
        self.producer.flush(timeout=self.timeout_s)
        for future in self.futures:
            future.get(timeout=self.timeout_s)
        self.futures.clear()

    def finish(self) -> None:
        """Wait until every message is acknowledged."""
        self.flush()

    def close(self) -> None:
        self.producer.close(timeout=self.timeout_s)


def _progress(total: int | None, topic: str, console: Console) -> Progress:
    columns = [SpinnerColumn(), TextColumn(f"[bold]producing to {typed(topic)}"), BarColumn(),
               MofNCompleteColumn(), TextColumn("examples"), TimeElapsedColumn()]
    return Progress(*columns, console=console, transient=False)


def _report_rejected(rejected: Rejected, count: int, err: Console) -> None:
    if count <= SHOWN_REJECTED:
        where = f"{rejected.location}: " if rejected.location else ""
        err.print(f"[yellow]skipped[/] {typed(where)}{typed(rejected.reason)}", highlight=False)
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
            err: Console | None = None, labels_topic: str | None = None,
            id_field: str | None = None) -> ProduceResult:
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
        Send at most this many examples (rejected rows do not count; with delayed labels, the
        labels of these examples are all sent).
    progress : bool
        Show a progress bar on standard error.
    err : Console, optional
        Where the progress bar and rejected rows go (default: standard error).
    labels_topic : str, optional
        Delayed labels: send the label-only rows to this topic (created if need be) instead of
        ``topic``.
    id_field : str, optional
        Delayed labels: the field of the messages holding each example's id (default:
        ``source.id_field``); without an id column in the source, the ids are the examples'
        positions in their stream.

    Returns
    -------
    ProduceResult
        Counts per stream, rejected rows, the topic's end offsets after sending. Ctrl-C stops
        the sending (and SIGTERM, run by the command, :func:`main`); what was read is still
        delivered and ``interrupted`` holds the signal.

    Raises
    ------
    foldstream.connectors.kafka.KafkaUnavailable
        Within seconds, naming the bootstrap servers, when no broker answers.
    ValueError
        When the source is not a file or a generator, or a delayed stream has no id field (or
        ``labels_topic`` is given without delayed labels).
    """
    from foldstream.connectors.kafka import check_bootstrap, create_topics, end_offsets
    from foldstream.job.plans import expected_examples, open_source

    err = err or Console(stderr=True)
    if config.source.kind not in ("file", "generator"):
        raise ValueError(f"produce sends a file or generator source, not source.kind "
                         f"{config.source.kind}")
    label = getattr(config.source, "label", DEFAULT_LABEL)
    id_field = id_field or getattr(config.source, "id_field", None)
    if config.delayed and not id_field:
        raise ValueError("a delayed stream (evaluation.delay) needs an id in every message, to "
                         "join each label to its example: set source.id_field (a column of the "
                         "source) or --id-field NAME (the examples' positions as ids)")
    if labels_topic is not None and not config.delayed:
        raise ValueError("--labels-topic: labels on a topic of their own need delayed labels "
                         "(evaluation.delay)")
    if labels_topic == topic:
        labels_topic = None  # the same topic: one sender keeps the order of the events
    if limit is not None and config.delayed:
        # The limit applies before the delay, so that every example sent has its label sent.
        source = config.source
        config = config.model_copy(update={"source": source.model_copy(
            update={"limit": min(limit, source.limit or limit)})})
    check_bootstrap(bootstrap)
    create_topics(bootstrap, [topic] + ([labels_topic] if labels_topic else []))
    total = expected_examples(config)
    if limit is not None:
        total = min(total, limit) if total else limit
    result = ProduceResult(labels_topic=labels_topic)
    sender = _Sender(bootstrap, topic)
    labels = _Sender(bootstrap, labels_topic) if labels_topic else sender
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
                    if isinstance(item, LabelOnly):  # delayed labels: a label, k examples later
                        labels.add(item.stream, _encode(label_value(item, label, id_field)))
                        result.labels += 1
                        continue
                    if limit is not None and result.sent >= limit:
                        break
                    _pace(rate, started, result.sent)
                    # Delayed, an example without an id is known by its position in its
                    # stream (as simulate_delay's labels know it).
                    position = result.per_stream[item.stream] + 1
                    key = position if config.delayed and item.key is None else None
                    sender.add(item.stream, _encode(message_value(item, label, id_field, key)))
                    result.sent += 1
                    result.per_stream[item.stream] += 1
                    bar.update(task, completed=result.sent)
            except KeyboardInterrupt as stop:
                result.interrupted = signal_of(stop)
            sender.finish()
            if labels is not sender:
                labels.finish()
    finally:
        sender.close()
        if labels is not sender:
            labels.close()
    result.seconds = time.perf_counter() - started
    result.end_offsets = end_offsets(bootstrap, topic)
    if labels_topic:
        result.labels_end_offsets = end_offsets(bootstrap, labels_topic)
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
    if result.labels:
        where = result.labels_topic or topic
        lines.insert(1, f"sent {result.labels} delayed labels (label-only rows) to topic {where}")
        if result.labels_topic:
            label_offsets = ", ".join(f"partition {p}: {o}"
                                      for p, o in sorted(result.labels_end_offsets.items()))
            lines.append(f"end offsets of {where}: {label_offsets or 'none'}")
    if result.interrupted:
        lines.insert(0, f"interrupted: what was read before {stop_text(result.interrupted)} "
                        "was sent")
    return "\n".join(lines)


def main(args) -> int:
    """``foldstream produce [CONFIG] --bootstrap-servers H:P --topic T [--rate N] [--limit N]
    [--labels-topic T] [--id-field NAME]``."""
    from foldstream.connectors.kafka import KafkaUnavailable
    from foldstream.job.config import ConfigError, load_config

    err = Console(stderr=True)
    if args.rate is not None and args.rate <= 0:
        err.print("[red]error:[/] --rate must be positive", highlight=False)
        return exitcodes.UNUSABLE
    if args.limit is not None and args.limit < 1:
        err.print("[red]error:[/] --limit must be at least 1", highlight=False)
        return exitcodes.UNUSABLE
    try:
        # the first signal stops the sending and what was read is delivered; a second one
        # (or one before the sending) ends the command at once
        with interruptible():
            config = load_config(args.config, args.overrides)
            result = produce(config, args.bootstrap_servers, args.topic, rate=args.rate,
                             limit=args.limit, progress=not args.quiet, err=err,
                             labels_topic=getattr(args, "labels_topic", None),
                             id_field=getattr(args, "id_field", None))
    except (ConfigError, ValueError, KafkaUnavailable) as error:
        err.print(f"[red]error:[/] {typed(error, lines=True)}", highlight=False)
        return exitcodes.UNUSABLE
    except KeyboardInterrupt as stop:
        err.print(f"stopped ({stop_text(stop)})", highlight=False)
        return exit_code(stop)
    print(inert(summary_text(result, args.bootstrap_servers, args.topic), lines=True))
    sys.stdout.flush()
    return exitcodes.OK if result.interrupted is None else exit_code(result.interrupted)

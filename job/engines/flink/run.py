"""A Flink run on the local mini-cluster, from the client's side: the checks before it, the run,
and the delivery of the records it collects.

The checks come first so that a mistake fails in seconds with one line and exit code 2, before
Flink starts (which takes seconds, and then retries for minutes): a ``--resume`` without a
checkpoint, ``source.start: committed`` without one, a Kafka broker that does not answer or a
topic that is missing, an input too large to ship inside the job graph. :func:`run` then makes
the environment (:mod:`~foldstream.job.engines.flink.env`), builds the job
(:mod:`~foldstream.job.engines.flink.job`), and either lets it write to Kafka or collects its
records and hands them on (:func:`deliver`). A signal stops it as every long-running command
stops (:func:`~foldstream.job.engines.stopping.interruptible`): the job is cancelled, and each
stream gets a summary marked ``interrupted`` built from the records delivered.
"""

from __future__ import annotations

import contextlib
import json
from typing import Iterable, Iterator

from pyflink.common import Types

from foldstream.job.config import Config, ConfigError
from foldstream.job.engines.flink import env as flink_env
from foldstream.job.engines.flink import kafka as flink_kafka
from foldstream.job.engines.flink import files as flink_files
from foldstream.job.engines.flink import forkserver
from foldstream.job.engines.flink.job import Rejoined, build, head_parallelism
from foldstream.job.engines.stopping import Delivered, interruptible
from foldstream.job.plans import open_source

#: The loggers of the Flink client that a stop silences: py4j's, whose calls the signal cuts.
CLIENT_LOGGERS = ("py4j",)

def check_start(config: Config, restore: str | None) -> None:
    """Refuse ``source.start: committed`` without a checkpoint to restore: the learners would
    start afresh at position 0 while the offsets go on, so the records would repeat the
    identities (stream, position) of earlier ones with different values. A file source's line
    format is compiled here, if it has not been, while the JVM starts, so that a machine without
    ``javac`` is told before the job is built
    (:func:`~foldstream.job.engines.flink.files.line_blocks_jar`)."""
    if config.source.kind == "file":
        flink_files.line_blocks_jar()
    if config.source.kind == "kafka" and config.source.start == "committed" and not restore:
        raise ConfigError("source.start: committed restarts the positions at 0 with fresh "
                          "learners (records would collide with the earlier run's); resume the "
                          "run with `foldstream run CONFIG --resume` instead, or start from "
                          "earliest")


def check_kafka(config: Config) -> None:
    """Raise :class:`~foldstream.connectors.kafka.KafkaUnavailable`, naming the bootstrap servers
    or the missing topic, unless the Kafka source's and sink's brokers answer and their topics
    exist. Both entry points call it before Flink starts (and before the end offsets of a
    bounded source are asked for), so a broker that is down fails in seconds, the same way.
    """
    from foldstream.connectors.kafka import check_bootstrap

    source, sink = config.source, config.sink
    if source.kind == "kafka":
        check_bootstrap(source.bootstrap_servers, flink_kafka.PREFLIGHT_TIMEOUT_S,
                        topics=[source.topic] + ([source.labels_topic] if source.labels_topic
                                                 else []))
    if sink.kind == "kafka":
        check_bootstrap(sink.bootstrap_servers, flink_kafka.PREFLIGHT_TIMEOUT_S,
                        topics=[sink.topic, sink.dead_letter_topic])


def run(config: Config, emit, dead_letter, on_progress=None, source=None,
        resume: str | None = None) -> None:
    """Run the job on the local mini-cluster (file/stdout sinks: records come back here).

    ``source``: the examples (and rejected records) to evaluate instead of the configured
    source's: the Python API's sources given as objects, which YAML cannot express.

    ``emit(record)`` and ``dead_letter(record)`` receive the records as the client collects
    them; ``on_progress(n)``, when given, the number of source records evaluated so far
    (see :func:`deliver`), as the in-process engine reports it. With a Kafka sink nothing comes
    back, so neither is called. Stopped by a signal, it emits a summary marked ``interrupted``
    for each stream (:class:`~foldstream.job.engines.stopping.Delivered`) and raises
    :class:`~foldstream.job.engines.stopping.Interrupted`. ``resume``: ``"latest"`` or a
    checkpoint to resume from (:func:`~foldstream.job.engines.flink.env.resume_point`).
    """
    restore = flink_env.resume_point(config, resume) if resume else None
    check_start(config, restore)
    check_kafka(config)
    labels: dict[str, dict] = {}  # per stream, the labels the client saw (staged items)
    with interruptible(silence=CLIENT_LOGGERS) as stopped, flink_files.workdir(config) as where, \
            _workers(config) as python:
        env = flink_env.make_environment(config, restore, config.checkpoint_dir, python)
        items = _input(env, config, source, labels, where)
        if items is not None and not items.streams:
            return  # an empty input: no stream, no record (as in the in-process engine)
        collected = config.sink.kind != "kafka"
        # a local job without checkpoints has no snapshot to write its stage objects to
        snapshots = bool(restore) or env.get_checkpoint_config().is_checkpointing_enabled()
        records, dead_letters = build(env, config, items, joined=collected, snapshots=snapshots)
        if not collected:
            flink_kafka.to_kafka(env, config, records, dead_letters)
            env.execute("foldstream")
            return
        # tagged beside the operators they come from: a subtask more would start a Python
        # worker of its own
        heads = head_parallelism(config.engine.parallelism, items.streams if items else None)
        tagged = records.map(lambda r: "M" + r, Types.STRING()).set_parallelism(heads).union(
            dead_letters.map(lambda r: "D" + r, Types.STRING()).set_parallelism(heads))
        delivered = Delivered(positive_class=config.evaluation.positive_class,
                              classes={stream: list(seen) for stream, seen in labels.items()})
        try:
            with tagged.execute_and_collect("foldstream") as results:
                deliver(_texts(results), emit, dead_letter, on_progress, delivered,
                        stopped.held)
        except BaseException:
            if stopped:  # a signal (whatever the teardown raised after it)
                stopped.holding = True  # a further signal does not cut the summaries
                for summary in delivered.interrupted_summaries(items.streams if items else ()):
                    emit(summary)
            raise


@contextlib.contextmanager
def _workers(config: Config) -> Iterator[str | None]:
    """The Python the local workers start with: a fork server's launcher, ended with the run
    (:mod:`~foldstream.job.engines.flink.forkserver`); ``None``: the configured one."""
    server = forkserver.start(config)
    try:
        yield None if server is None else str(server.executable)
    finally:
        if server is not None:
            server.close()


def _texts(results) -> Iterator[str]:
    """The texts of PyFlink's collected ``results``, straight from Flink's Java iterator.

    PyFlink's own iterator passes each text back into the JVM to be pickled and returned: two
    more crossings of the Py4J socket. Flink's Py4J server writes a reply in pieces of 8,192
    characters, and on Linux each further piece waits for the client's delayed ACK (40 ms): a
    text of 7,000 characters took 44 ms that way and one of 16,000 or more 88 ms, against
    0.2 ms and 44 ms straight (bench/README.md). Py4J hands a Java string over as a Python
    ``str`` itself. A PyFlink whose iterator hides the Java one is read as it reads itself."""
    java = getattr(results, "_j_closeable_iterator", None)
    if java is None:
        yield from results
        return
    while java.hasNext():
        yield java.next()


def _input(env, config: Config, source, labels: dict[str, dict], where):
    """The job's file or generator input (:mod:`~foldstream.job.engines.flink.files`), or
    ``None`` for a Kafka source: the configured file or generator, read inside the job; a
    source given as objects, or one whose labels the client holds back (``evaluation.delay``),
    staged into a file by the client, its labels noted in ``labels``; ``where``: the folder for
    the client's files (:func:`~foldstream.job.engines.flink.files.workdir`)."""
    from foldstream.job.plans import simulates_delay

    if source is None and config.source.kind == "kafka":
        return None
    if source is None and not simulates_delay(config):
        return flink_files.configured_input(env, config, where)
    items = open_source(config) if source is None else source
    return flink_files.staged_input(env, _noting_labels(items, labels), where)


def _noting_labels(source: Iterable, labels: dict[str, dict]) -> Iterator:
    """The items of ``source``, their labels noted per stream in ``labels`` (the client's
    knowledge of a stream's labels, for an interrupted summary: the job's is not reachable).

    >>> from foldstream.operators.records import Example
    >>> seen = {}
    >>> _ = list(_noting_labels([Example("s", {}, "b"), Example("s", {}, None),
    ...                          Example("s", {}, "a"), Example("s", {}, "b")], seen))
    >>> {stream: list(labels) for stream, labels in seen.items()}
    {'s': ['b', 'a']}
    """
    for item in source:
        y = getattr(item, "y", None)
        if y is not None:
            labels.setdefault(item.stream, {}).setdefault(y, None)
        yield item


def deliver(tagged: Iterable[str], emit, dead_letter, on_progress=None,
            delivered: Delivered | None = None, held=contextlib.nullcontext) -> None:
    r"""Hand the collected texts (``"M"`` + records as
    :func:`~foldstream.job.engines.flink.job.joined_records` joins or cuts them; ``"D"`` + a
    rejected record) on, and report progress: per stream, the position of its latest ``measures``
    record (the examples evaluated; with delayed labels several reports share a position, and
    progress moves once), then its summary's ``examples_read`` (rejected records included, as
    the progress bar's total counts them); ``on_progress`` gets the sum over the streams.
    ``held()`` wraps the handing on of each record and its note in ``delivered``
    (:meth:`~foldstream.job.engines.stopping.Stop.held`: a signal does not come between them).

    >>> seen = []
    >>> records = []
    >>> deliver(['M{"type":"measures","stream":"a","position":500}', 'D{"type":"rejected"}',
    ...          'M{"type":"measures","stream":"b","position":200,"labelled":100}\n'
    ...          '{"type":"measures","stream":"b","position":200,"labelled":150}',
    ...          'M{"type":"summary","stream":"a","position":900,"examples_read":901}'],
    ...         records.append, lambda r: None, seen.append)
    >>> seen, [r.get("labelled") for r in records]
    ([500, 700, 1101], [None, 100, 150, None])
    """
    positions: dict[str | None, int] = {}
    rejoined = Rejoined()
    for text in tagged:
        tag, body = text[0], text[1:]
        for line in rejoined(body) if tag == "M" else [body]:
            record = json.loads(line)
            with held():
                if delivered is not None:
                    delivered.take(record)
                (emit if tag == "M" else dead_letter)(record)
            if tag != "M":
                continue
            kind = record.get("type")
            if on_progress is not None and kind in ("measures", "summary"):
                stream = record.get("stream")
                position = record["examples_read"] if kind == "summary" else record["position"]
                if position != positions.get(stream):
                    positions[stream] = position
                    on_progress(sum(positions.values()))

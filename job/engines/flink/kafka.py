"""The job's Kafka ends: sources and sinks of keyed string records, and the Kafka source's
rows of a run (:func:`kafka_rows`) and its sinks (:func:`to_kafka`).

**Keys.** A Kafka message's key is the stream name (docs/method.md §1) and must reach the Python
operators. PyFlink's DataStream ``KafkaSource`` offers only ``set_value_only_deserializer`` (a
``KafkaRecordDeserializationSchema`` cannot be written in Python, and the connector ships none that
gives a raw key: ``JSONKeyValueDeserializationSchema`` parses the key as JSON and yields a Jackson
``ObjectNode``); the DataStream ``KafkaSink`` can set a key serializer, but none of the schemas
reachable from Python serializes one field of a ``Row`` as raw bytes (``CsvRowSerializationSchema``
checks the row's arity; with a topic selector PyFlink hands key and value serializer the same
record). So :func:`kafka_source` and :func:`kafka_sink` use the Kafka *table* connector (same jar,
public SQL options) with the ``raw`` format for key and value, bridged to the DataStream API with
``to_data_stream`` / ``from_data_stream`` + ``StatementSet.attach_as_datastream()``: the job stays
one DataStream job started by ``env.execute()``, and records arrive in Python as
``Row(key, value, topic, partition, offset)``.
"""


from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence

from pyflink.common import Row, Types
from pyflink.datastream import DataStream, StreamExecutionEnvironment

from foldstream.job.config import Config
from foldstream.job.engines.flink.env import properties_text, table_env
from foldstream.job.engines.flink.keying import key_by_first_field

_TABLE_IDS = itertools.count()

START_MODES = ("earliest", "latest", "committed")
DELIVERY_GUARANTEES = ("none", "at-least-once", "exactly-once")

#: The columns (and Python ``Row`` fields) of a record read by :func:`kafka_source`.
SOURCE_FIELDS = ("key", "value", "topic", "partition", "offset")


def _source_type(value_bytes: bool):
    """The type of a record read by :func:`kafka_source` (``value`` as bytes or text)."""
    value = Types.PRIMITIVE_ARRAY(Types.BYTE()) if value_bytes else Types.STRING()
    return Types.ROW_NAMED(list(SOURCE_FIELDS), [Types.STRING(), value, Types.STRING(),
                                                 Types.INT(), Types.LONG()])


#: The type of a keyed record read by :func:`kafka_source`.
SOURCE_TYPE = _source_type(value_bytes=False)
#: The type that :func:`kafka_sink` expects: ``Row(key, value)``, both strings.
KEYED_TYPE = Types.ROW_NAMED(["key", "value"], [Types.STRING(), Types.STRING()])


# ---------------------------------------------------------------- helpers

def _keyed_table_options(topic: str, bootstrap_servers: str) -> dict[str, str]:
    """The Kafka table connector's options for raw UTF-8 keys and values (see the module doc)."""
    return {
        "connector": "kafka",
        "topic": topic,
        "properties.bootstrap.servers": bootstrap_servers,
        "key.format": "raw",
        "key.fields": "key",
        "value.format": "raw",
        "value.fields-include": "EXCEPT_KEY",
    }


def _create_table(t_env, role: str, columns: str, opts: dict[str, str],
                  properties: Mapping[str, str] | None) -> str:
    """Create a temporary Kafka table with these columns and options (plus the consumer or
    producer ``properties``); return its name."""
    opts = {**opts, **{f"properties.{k}": v for k, v in properties_text(properties).items()}}
    table = f"foldstream_{role}_{next(_TABLE_IDS)}"
    with_clause = ",\n  ".join(f"{sql_literal(k)} = {sql_literal(v)}" for k, v in opts.items())
    t_env.execute_sql(f"""
        CREATE TEMPORARY TABLE `{table}` ({columns}
        ) WITH (
          {with_clause}
        )""")
    return table


def sql_literal(s: object) -> str:
    """A SQL string literal."""
    return "'" + str(s).replace("'", "''") + "'"


def _offsets_spec(offsets: Mapping[int, int]) -> str:
    return ";".join(f"partition:{int(p)},offset:{int(o)}" for p, o in sorted(offsets.items()))


def _servers(bootstrap_servers: str | Iterable[str]) -> str:
    if isinstance(bootstrap_servers, str):
        return bootstrap_servers
    return ",".join(bootstrap_servers)


def _preflight(bootstrap_servers: str, topics: Iterable[str], timeout_s: float) -> None:
    from foldstream.connectors.kafka import check_bootstrap
    check_bootstrap(bootstrap_servers, timeout_s=timeout_s, topics=topics)


def _check_start(start: str, group_id: str | None) -> None:
    if start not in START_MODES:
        raise ValueError(f"start must be one of {START_MODES}, not {start!r}")
    if start == "committed" and not group_id:
        raise ValueError("start: committed needs a group_id")


def _check_guarantee(env: StreamExecutionEnvironment | None, guarantee: str,
                     transactional_id_prefix: str | None) -> None:
    if guarantee not in DELIVERY_GUARANTEES:
        raise ValueError(f"delivery_guarantee must be one of {DELIVERY_GUARANTEES}, "
                         f"not {guarantee!r}")
    if guarantee == "exactly-once":
        if not transactional_id_prefix:
            raise ValueError("delivery_guarantee exactly-once needs a transactional_id_prefix "
                             "(stable across restarts, unique per job)")
        if env is not None and not env.get_checkpoint_config().is_checkpointing_enabled():
            raise ValueError("delivery_guarantee exactly-once commits at checkpoints: enable "
                             "checkpointing (execution.checkpointing.interval)")


# ---------------------------------------------------------------- keyed (table connector)

def kafka_source(env: StreamExecutionEnvironment, bootstrap_servers: str,
                 topic: str | Sequence[str],
                 group_id: str | None = None, start: str = "earliest", bounded: bool = False,
                 stop_offsets: Mapping[int, int] | Mapping[str, Mapping[int, int]] | None = None,
                 start_offsets: Mapping[int, int] | Mapping[str, Mapping[int, int]] | None = None,
                 properties: Mapping[str, str] | None = None,
                 value_bytes: bool = False,
                 key_sql: str | None = None,
                 preflight_timeout_s: float | None = 10.0) -> DataStream:
    """A stream of ``Row(key, value, topic, partition, offset)`` (:data:`SOURCE_TYPE`) read from
    ``topic``: key and value decoded as UTF-8 (a missing key or value is ``None``, an empty one
    ``""``; bytes that are not UTF-8 become U+FFFD). ``value_bytes=True`` hands the value over as
    ``bytes`` instead, for a caller that wants to reject undecodable values with their raw text.

    ``topic``: one topic, or a list of topics (e.g. the examples and the labels of a delayed
    run, docs/method.md §13), each read by a source of its own, with the same options, and
    unioned (keyed as one stream with ``key_sql``). ``stop_offsets`` and ``start_offsets`` may
    be given per topic: ``{topic: {partition: offset}}``. A bounded union ends when every topic
    has reached its stop offsets.

    ``start``: ``earliest`` | ``latest`` | ``committed`` (the group's committed offsets; where the
    group has none, ``properties['auto.offset.reset']``, default earliest), or explicit
    ``start_offsets`` ``{partition: offset}``. ``bounded``: stop at the end offsets the broker
    reports at start (``latest``), or at explicit ``stop_offsets`` ``{partition: offset}``
    (exclusive; every partition must be listed). Offsets are committed to Kafka (for
    ``committed``) only when checkpoints complete.

    ``key_sql``: an SQL expression over the columns (e.g. ``COALESCE(`key`, '')``); with it the
    result is a ``KeyedStream`` keyed by that expression, computed in Java (see
    :func:`_keyed_in_java`).

    ``preflight_timeout_s`` (default 10 s; ``None`` skips it): check with kafka-python that a
    broker answers and the topics exist, and raise :class:`~foldstream.connectors.kafka.KafkaUnavailable`
    naming the bootstrap servers (or the missing topic) within that time, instead of a job that
    retries for minutes.
    """
    bootstrap_servers = _servers(bootstrap_servers)
    _check_start(start, group_id)
    topics = [topic] if isinstance(topic, str) else list(topic)
    if not topics:
        raise ValueError("kafka_source needs a topic")
    if preflight_timeout_s is not None:
        _preflight(bootstrap_servers, topics, preflight_timeout_s)
    t_env = table_env(env)
    tables = [_source_table(t_env, bootstrap_servers, t, group_id, start, bounded,
                            _of_topic(stop_offsets, t), _of_topic(start_offsets, t),
                            properties, value_bytes)
              for t in topics]
    if key_sql is None:
        # No .name(): the stream a table converts to is no operator, and has none to name.
        table = t_env.from_path(tables[0])
        for other in tables[1:]:
            table = table.union_all(t_env.from_path(other))
        return t_env.to_data_stream(table)
    return _keyed_in_java(t_env, tables, key_sql, value_bytes)


def _of_topic(offsets: Mapping | None, topic: str) -> Mapping[int, int] | None:
    """The ``{partition: offset}`` of ``topic`` in ``offsets``: ``{partition: offset}`` (one
    topic) or ``{topic: {partition: offset}}`` (topic names are text, partitions numbers).

    >>> _of_topic({0: 5}, "a"), _of_topic({"a": {0: 5}, "b": {0: 2}}, "b"), _of_topic(None, "a")
    ({0: 5}, {0: 2}, None)
    """
    if offsets and all(isinstance(k, str) for k in offsets):
        return offsets.get(topic)
    return offsets


def _source_table(t_env, bootstrap_servers: str, topic: str, group_id: str | None, start: str,
                  bounded: bool, stop_offsets: Mapping[int, int] | None,
                  start_offsets: Mapping[int, int] | None, properties: Mapping[str, str] | None,
                  value_bytes: bool) -> str:
    """The temporary table that reads ``topic`` (see :func:`kafka_source`); its name."""
    opts = _keyed_table_options(topic, bootstrap_servers)
    if group_id:
        opts["properties.group.id"] = group_id
    if start_offsets:
        opts["scan.startup.mode"] = "specific-offsets"
        opts["scan.startup.specific-offsets"] = _offsets_spec(start_offsets)
    else:
        opts["scan.startup.mode"] = {"earliest": "earliest-offset", "latest": "latest-offset",
                                     "committed": "group-offsets"}[start]
        if start == "committed" and "auto.offset.reset" not in (properties or {}):
            opts["properties.auto.offset.reset"] = "earliest"
    if stop_offsets:
        opts["scan.bounded.mode"] = "specific-offsets"
        opts["scan.bounded.specific-offsets"] = _offsets_spec(stop_offsets)
    elif bounded:
        opts["scan.bounded.mode"] = "latest-offset"
    return _create_table(t_env, "src", f"""
          `key` STRING,
          `value` {"BYTES" if value_bytes else "STRING"},
          `topic` STRING METADATA FROM 'topic' VIRTUAL,
          `partition` INT METADATA FROM 'partition' VIRTUAL,
          `offset` BIGINT METADATA FROM 'offset' VIRTUAL""", opts, properties)


def _keyed_in_java(t_env, tables: list[str], key_sql: str, value_bytes: bool):
    """The rows of ``tables`` (unioned) as a ``KeyedStream`` keyed by the SQL expression
    ``key_sql``, computed by the planner (see :func:`key_by_first_field`)."""
    columns = ", ".join(f"`{c}`" for c in SOURCE_FIELDS)
    keyed = t_env.sql_query(" UNION ALL ".join(
        f"SELECT CAST({key_sql} AS STRING), ROW({columns}) FROM `{table}`" for table in tables))
    record_type = _source_type(value_bytes)
    return key_by_first_field(t_env.to_append_stream(keyed, Types.ROW([Types.STRING(), record_type])),
                              record_type)


def kafka_sink(env: StreamExecutionEnvironment, ds: DataStream, bootstrap_servers: str,
               topic: str, delivery_guarantee: str = "at-least-once",
               transactional_id_prefix: str | None = None,
               properties: Mapping[str, str] | None = None,
               preflight_timeout_s: float | None = 10.0) -> None:
    """Write ``ds``, a stream of ``Row(key, value)`` of two strings (:data:`KEYED_TYPE`; any
    two-field string row type will do, by position), to ``topic``: the key as the message key,
    the value as the message value, both UTF-8. The insert is attached to ``env``; it runs with
    ``env.execute()``.

    ``delivery_guarantee``: ``at-least-once`` (default: flushes at every checkpoint and at the
    end), ``none``, or ``exactly-once`` (Kafka transactions committed at checkpoints: needs
    checkpointing and a ``transactional_id_prefix``; readers must use ``read_committed``).
    """
    bootstrap_servers = _servers(bootstrap_servers)
    _check_guarantee(env, delivery_guarantee, transactional_id_prefix)
    if preflight_timeout_s is not None:
        _preflight(bootstrap_servers, [topic], preflight_timeout_s)
    t_env = table_env(env)
    opts = {**_keyed_table_options(topic, bootstrap_servers),
            "sink.delivery-guarantee": delivery_guarantee}
    if transactional_id_prefix:
        opts["sink.transactional-id-prefix"] = transactional_id_prefix
    table = _create_table(t_env, "sink", """
          `key` STRING,
          `value` STRING""", opts, properties)
    rows = t_env.from_data_stream(ds)
    n_fields = len(rows.get_schema().get_field_names())
    if n_fields != 2:
        raise TypeError(f"kafka_sink expects Row(key, value) records, got {n_fields} fields "
                        f"({ds.get_type()}); map to KEYED_TYPE first")
    statements = t_env.create_statement_set()
    statements.add_insert(table, rows.alias("key", "value"))
    statements.attach_as_datastream()


# ---------------------------------------------------------------- the job's Kafka ends

#: How long the client waits for a Kafka broker to answer before it gives up (seconds).
PREFLIGHT_TIMEOUT_S = 5.0


def kafka_rows(env, config: Config):
    """The Kafka source's rows keyed by stream (in Java: see :func:`_keyed_in_java`), and the
    parser of their messages (:class:`~foldstream.connectors.messages.MessageParser`), which the
    job's fan-out runs: an example crosses from Java into Python once before it is batched."""
    from foldstream.connectors.kafka import end_offsets
    from foldstream.connectors.messages import ByTopic, LabelParser, MessageParser

    source = config.source
    # Delayed labels (docs/method.md §13) may come on a topic of their own: a second source,
    # unioned with the first and keyed by stream the same way; bounded, both stop at their ends.
    topics = [source.topic] + ([source.labels_topic] if source.labels_topic else [])
    stop = {t: end_offsets(source.bootstrap_servers, t) for t in topics} \
        if source.bounded else None
    rows = kafka_source(env, source.bootstrap_servers, topics, group_id=source.group_id,
                        start=source.start, bounded=source.bounded, stop_offsets=stop,
                        value_bytes=True, key_sql=stream_key_sql(source.stream, source.streams),
                        properties=consumer_properties(config))
    parser = MessageParser(label=source.label, nominal=source.nominal, id_field=source.id_field,
                           stream=source.stream, streams=source.streams,
                           labels_later=config.delayed)
    if source.labels_topic:
        parser = ByTopic(parser, {source.labels_topic: LabelParser(
            label=source.label, id_field=source.id_field, stream=source.stream,
            streams=source.streams)})
    return rows, parser


def consumer_properties(config: Config) -> dict[str, str]:
    """``source.properties``, with a short fetch wait for a live source unless it sets one: a
    broker holds a fetch that finds too few bytes for up to ``fetch.max.wait.ms`` (Kafka's
    default 500 ms)."""
    source = config.source
    properties = properties_text(source.properties)
    if not source.bounded:
        properties.setdefault("fetch.max.wait.ms", "100")
    return properties


def stream_key_sql(stream: str | None, streams: list[str] | None) -> str:
    """SQL for the stream of a Kafka message by its key, as
    :class:`~foldstream.connectors.messages.MessageParser` assigns it (``stream`` for a message
    without a key), or ``''`` for one the parser rejects for its key (none and no default
    stream, or not in ``streams``): the fan-out's key, computed in Java.

    >>> stream_key_sql(None, None)
    "CASE WHEN `key` IS NULL OR `key` = '' THEN '' ELSE `key` END"
    >>> stream_key_sql("s", ["a", "b'c"])
    "CASE WHEN `key` IS NULL OR `key` = '' THEN 's' WHEN `key` IN ('a', 'b''c') THEN `key` ELSE '' END"
    """
    default = sql_literal(stream or "")
    if streams is None:
        return f"CASE WHEN `key` IS NULL OR `key` = '' THEN {default} ELSE `key` END"
    known = f"`key` IN ({', '.join(map(sql_literal, streams))})" if streams else "FALSE"
    return f"CASE WHEN `key` IS NULL OR `key` = '' THEN {default} WHEN {known} THEN `key` ELSE '' END"


def to_kafka(env, config: Config, records, dead_letters) -> None:
    """Attach Kafka sinks: records to ``sink.topic``, rejected input to ``sink.dead_letter_topic``,
    each message keyed by its record's stream. A record larger than the topic's message limit
    (:func:`foldstream.connectors.kafka.message_limit`, found here at start) is written in
    ``part`` records that readers put together again (:mod:`foldstream.connectors.parts`):
    the producer would refuse it, and that failed the whole job."""
    from foldstream.connectors.kafka import message_limit
    from foldstream.connectors.parts import check_limit, kafka_messages
    from foldstream.job.config import KAFKA_MAX_REQUEST_BYTES, ConfigError

    sink = config.sink
    guarantee = sink.delivery_guarantee
    prefix = f"foldstream-{sink.topic}" if guarantee == "exactly-once" else None

    for stream, topic in ((records, sink.topic), (dead_letters, sink.dead_letter_topic)):
        limit = message_limit(sink.bootstrap_servers, topic, sink.properties,
                              KAFKA_MAX_REQUEST_BYTES, PREFLIGHT_TIMEOUT_S)
        try:
            check_limit(limit)
        except ValueError as error:
            raise ConfigError(f"sink.properties.max.request.size (topic {topic}): "
                              f"{error}") from None

        def messages(text: str, limit: int = limit) -> Iterator[Row]:
            for key, value in kafka_messages(text, limit):
                yield Row(key, value)

        kafka_sink(env, stream.flat_map(messages, output_type=KEYED_TYPE),
                   sink.bootstrap_servers, topic, delivery_guarantee=guarantee,
                   transactional_id_prefix=f"{prefix}-{topic}" if prefix else None,
                   properties=sink.properties)

"""Kafka helpers on kafka-python (no pyflink): topics, test data, reading a topic back, probes.

Messages follow docs/method.md §1: the key is the stream name (UTF-8), the value one JSON row (or a
JSON array of rows). These helpers serve tests, benchmarks and the pre-flight check of a job:

* :func:`check_bootstrap` fails within seconds, naming the bootstrap servers, when no broker
  answers (a Flink job would otherwise retry for minutes);
* :func:`read_topic` uses ``assign``, not a consumer group (a reader of a whole topic needs no
  group and commits nothing), and reads every partition from its beginning to its current end,
  as a ``read_uncommitted`` (default) or ``read_committed`` reader.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

_CLIENT_ID = "foldstream"
log = logging.getLogger(__name__)

#: How foldstream's readers of records (``watch``, ``dashboard``, ``plot``, ``report``) read a
#: topic: committed messages only. A topic written exactly-once is then read once (neither the
#: records of a transaction still open nor those of an aborted one); on a topic written without
#: transactions every message is committed, so nothing changes there.
RECORDS_ISOLATION = "read_committed"


class KafkaUnavailable(RuntimeError):
    """No Kafka broker answered at the configured bootstrap servers."""


def _servers(bootstrap: str | Sequence[str]) -> list[str]:
    if isinstance(bootstrap, str):
        return [s.strip() for s in bootstrap.split(",") if s.strip()]
    return list(bootstrap)


def _encode(v: Any) -> bytes | None:
    if v is None or isinstance(v, bytes):
        return v
    return str(v).encode("utf-8")


def check_bootstrap(bootstrap: str | Sequence[str], timeout_s: float = 5.0,
                    topics: Iterable[str] = ()) -> dict[str, int]:
    """Connect to the cluster and fetch metadata, or raise :class:`KafkaUnavailable` within about
    ``timeout_s`` seconds. With ``topics``, also check that they exist and return their partition
    counts (``{topic: partitions}``); a missing topic raises :class:`KafkaUnavailable` too."""
    from kafka import KafkaConsumer
    from kafka.errors import KafkaConfigurationError, KafkaError

    servers = _servers(bootstrap)
    where = ",".join(servers)
    timeout_ms = max(500, int(timeout_s * 1000))
    consumer = None
    t0 = time.monotonic()
    try:
        consumer = KafkaConsumer(bootstrap_servers=servers, client_id=f"{_CLIENT_ID}-probe",
                                 enable_auto_commit=False, request_timeout_ms=timeout_ms,
                                 bootstrap_timeout_ms=timeout_ms, reconnect_backoff_max_ms=500)
        consumer.bootstrap(timeout_ms=timeout_ms)
        found: dict[str, int] = {}
        wanted = list(topics)
        if wanted:
            existing = consumer.topics()
            missing = [t for t in wanted if t not in existing]
            if missing:
                raise KafkaUnavailable(
                    f"Kafka at {where}: topic(s) {', '.join(missing)} do not exist")
            for t in wanted:
                found[t] = len(consumer.partitions_for_topic(t) or ())
        return found
    except (KafkaUnavailable, KafkaConfigurationError):
        raise
    except (KafkaError, OSError) as exc:
        raise KafkaUnavailable(
            f"no Kafka broker reachable at bootstrap servers {where} "
            f"(gave up after {time.monotonic() - t0:.1f}s: {type(exc).__name__}: {exc})") from exc
    finally:
        if consumer is not None:
            try:
                consumer.close(autocommit=False, timeout_ms=1000)
            except Exception as error:  # noqa: BLE001 - the probe's answer is known already
                log.debug("closing the probe of %s failed: %s: %s", where,
                          type(error).__name__, error, exc_info=True)


def create_topics(bootstrap: str | Sequence[str], names: Iterable[str], partitions: int = 1,
                  replication: int = 1, timeout_s: float = 15.0,
                  configs: dict[str, str] | None = None) -> None:
    """Create topics, with the topic settings ``configs`` (e.g. ``{"max.message.bytes":
    "8388608"}``); ones that already exist are left as they are."""
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError

    admin = KafkaAdminClient(bootstrap_servers=_servers(bootstrap), client_id=f"{_CLIENT_ID}-admin",
                             request_timeout_ms=int(timeout_s * 1000))
    try:
        for name in names:  # one at a time, so that one existing topic does not hide the others
            try:
                admin.create_topics([NewTopic(name=name, num_partitions=partitions,
                                              replication_factor=replication,
                                              topic_configs=dict(configs or {}))],
                                    timeout_ms=int(timeout_s * 1000))
            except TopicAlreadyExistsError:
                log.debug("topic %s exists already: left as it is", name)
    finally:
        admin.close()


def produce_jsonl(bootstrap: str | Sequence[str], topic: str, key: str | bytes | None,
                  rows: Iterable[Any], partition: int | None = None,
                  timeout_s: float = 30.0) -> int:
    """Send each row as one message keyed ``key``; dicts and lists become JSON, strings and bytes
    go as they are. Returns once every message is acknowledged, with their number."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=_servers(bootstrap), client_id=f"{_CLIENT_ID}-producer",
                             acks="all", linger_ms=5,
                             request_timeout_ms=int(timeout_s * 1000))
    k = _encode(key)
    n = 0
    try:
        futures = []
        for row in rows:
            value = row if isinstance(row, (str, bytes)) else json.dumps(row, separators=(",", ":"))
            futures.append(producer.send(topic, key=k, value=_encode(value), partition=partition))
            n += 1
        producer.flush(timeout=timeout_s)
        for fut in futures:
            fut.get(timeout=timeout_s)
    finally:
        producer.close(timeout=timeout_s)
    return n


def end_offsets(bootstrap: str | Sequence[str], topic: str,
                timeout_s: float = 10.0) -> dict[int, int]:
    """``{partition: end offset}`` (the offset after the last message: ``ListOffsets`` latest) of
    every partition."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=_servers(bootstrap), enable_auto_commit=False,
                             client_id=f"{_CLIENT_ID}-offsets", group_id=None)
    try:
        tps = [TopicPartition(topic, p) for p in _partitions(consumer, topic, timeout_s)]
        return {tp.partition: off for tp, off in
                consumer.end_offsets(tps, timeout_ms=int(timeout_s * 1000)).items()}
    finally:
        consumer.close(autocommit=False)


def _partitions(consumer, topic: str, timeout_s: float) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while True:
        parts = consumer.partitions_for_topic(topic)
        if parts:
            return sorted(parts)
        if time.monotonic() > deadline:
            raise KafkaUnavailable(f"topic {topic!r} has no partitions (does it exist?)")
        time.sleep(0.1)


def read_topic(bootstrap: str | Sequence[str], topic: str, timeout_s: float = 30.0,
               decode: bool = True, isolation_level: str = "read_uncommitted",
               with_offsets: bool = False) -> list[tuple]:
    """Every message of ``topic`` from the beginning to the end offsets found at the start, as
    ``(key, value)`` (``(partition, offset, key, value)`` with ``with_offsets``), partition by
    partition in offset order. Keys and values are decoded as UTF-8 unless ``decode=False``.
    A ``read_committed`` reader ends at the last stable offset (before the first transaction
    still open) and skips the messages of aborted transactions.

    Raises ``TimeoutError`` when the end is not reached within ``timeout_s``."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=_servers(bootstrap), enable_auto_commit=False,
                             client_id=f"{_CLIENT_ID}-reader", group_id=None,
                             auto_offset_reset="earliest", isolation_level=isolation_level)
    try:
        deadline = time.monotonic() + timeout_s
        tps = [TopicPartition(topic, p) for p in _partitions(consumer, topic, timeout_s)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps, timeout_ms=int(timeout_s * 1000))
        got: dict[int, list] = {tp.partition: [] for tp in tps}

        def _take(batch) -> int:
            n = 0
            for tp, records in batch.items():
                for r in records:
                    k, v = r.key, r.value
                    if decode:
                        k = None if k is None else k.decode("utf-8")
                        v = None if v is None else v.decode("utf-8")
                    got[tp.partition].append((r.partition, r.offset, k, v))
                    n += 1
            return n

        while any(consumer.position(tp) < ends[tp] for tp in tps if ends[tp] > 0):
            if time.monotonic() > deadline:
                short = {tp.partition: (consumer.position(tp), ends[tp]) for tp in tps}
                raise TimeoutError(f"read_topic({topic!r}): end not reached in {timeout_s}s "
                                   f"(partition: (position, end) = {short})")
            _take(consumer.poll(timeout_ms=200))
        # Records fetched beyond the end offsets (a whole last batch) are kept too.
        while _take(consumer.poll(timeout_ms=100)):
            pass
    finally:
        consumer.close(autocommit=False)
    out = []
    for p in sorted(got):
        for part, off, k, v in got[p]:
            out.append((part, off, k, v) if with_offsets else (k, v))
    return out


def topic_max_message_bytes(bootstrap: str | Sequence[str], topic: str,
                            timeout_s: float = 5.0) -> int | None:
    """The topic's ``max.message.bytes`` as the broker reports it (its own setting or the
    broker's default), or ``None`` when the broker does not tell (no ``DescribeConfigs``, no
    such entry, no permission, no such topic)."""
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = None
    found = None
    try:
        admin = KafkaAdminClient(bootstrap_servers=_servers(bootstrap),
                                 client_id=f"{_CLIENT_ID}-admin",
                                 request_timeout_ms=max(500, int(timeout_s * 1000)))
        resource = ConfigResource(ConfigResourceType.TOPIC, topic)
        try:  # every value, the broker's defaults too (kafka-python 3 lists only the modified)
            answer = admin.describe_configs([resource], config_filter="all")
        except TypeError:  # an older kafka-python: every value is its default
            answer = admin.describe_configs([resource])
        found = _find_config(answer, "max.message.bytes")
        why = "it reports none"
    except Exception as error:  # noqa: BLE001 - an answer we cannot read is no answer
        why = f"{type(error).__name__}: {error}"
    finally:
        if admin is not None:
            try:
                admin.close()
            except Exception as error:  # noqa: BLE001 - the answer is read already
                log.debug("closing the admin client failed: %s: %s", type(error).__name__,
                          error, exc_info=True)
    if found is None:
        log.debug("the broker at %s did not tell topic %s's max.message.bytes (%s): the "
                  "producer's max.request.size is the limit", ",".join(_servers(bootstrap)),
                  topic, why)
    return found


def _find_config(answer: Any, name: str) -> int | None:
    """The integer value of config ``name`` anywhere in a ``describe_configs`` answer, whose
    shape differs between kafka-python versions (response objects, or nested dicts).

    >>> _find_config({"topic": {"t": {"max.message.bytes": "2000"}}}, "max.message.bytes")
    2000
    >>> _find_config({"topic": {"t": {}}}, "max.message.bytes") is None
    True
    """
    if isinstance(answer, dict):
        if name in answer:
            value = answer[name]
            value = value.get("value", value) if isinstance(value, dict) else value
            try:
                return int(value)
            except (TypeError, ValueError):
                return None
        items = answer.values()
    elif isinstance(answer, (list, tuple)):
        if len(answer) >= 2 and answer[0] == name and isinstance(answer[1], (str, int)):
            try:  # a config entry tuple: (name, value, read_only, ...)
                return int(answer[1])
            except ValueError:
                return None
        items = answer
    elif hasattr(answer, "to_object"):
        items = [answer.to_object()]
    elif hasattr(answer, "resources"):
        items = [answer.resources]
    else:
        return None
    for item in items:
        found = _find_config(item, name)
        if found is not None:
            return found
    return None


def message_limit(bootstrap: str | Sequence[str], topic: str, properties: dict[str, Any],
                  default_request_bytes: int, timeout_s: float = 5.0) -> int:
    """The largest message (key, value and overhead) a producer with these ``properties`` can
    write to ``topic``: its ``max.request.size`` (``default_request_bytes`` when not set), or
    the topic's ``max.message.bytes`` when the broker reports a smaller one."""
    limit = int(properties.get("max.request.size", default_request_bytes))
    broker = topic_max_message_bytes(bootstrap, topic, timeout_s)
    return limit if broker is None else min(limit, broker)

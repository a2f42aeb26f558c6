"""The plain DataStream ``KafkaSource`` and ``KafkaSink`` of PyFlink (message values only, the
key is lost), for tests/test_flink_kafka_smoke.py: the job itself reads and writes keyed records
with job/engines/flink/env.py's ``kafka_source`` and ``kafka_sink``.

tests/ is no package: conftest.py loads this file by path (the ``kafka_values`` fixture).
"""

from __future__ import annotations

from collections.abc import Mapping

from foldstream.job.engines.flink.kafka import _check_guarantee, _check_start, _servers
from foldstream.job.engines.flink.env import patch_pyflink_kafka


def _offsets_initializer(topic: str, offsets: Mapping[int, int]):
    from pyflink.datastream.connectors.kafka import KafkaOffsetsInitializer, KafkaTopicPartition
    patch_pyflink_kafka()
    return KafkaOffsetsInitializer.offsets(
        {KafkaTopicPartition(topic, int(p)): int(o) for p, o in offsets.items()})


def kafka_value_source(bootstrap_servers: str, topic: str, group_id: str | None = None,
                       start: str = "earliest", bounded: bool = False,
                       stop_offsets: Mapping[int, int] | None = None,
                       start_offsets: Mapping[int, int] | None = None,
                       properties: Mapping[str, str] | None = None):
    """A DataStream ``KafkaSource`` of message values as strings; the key is NOT available.

    Use it with ``env.from_source(src, WatermarkStrategy.no_watermarks(), "kafka")``. Options as
    in env.py's ``kafka_source``.
    """
    from pyflink.common.serialization import SimpleStringSchema
    from pyflink.datastream.connectors.kafka import (KafkaOffsetResetStrategy,
                                                     KafkaOffsetsInitializer, KafkaSource)
    patch_pyflink_kafka()
    _check_start(start, group_id)
    b = (KafkaSource.builder().set_bootstrap_servers(_servers(bootstrap_servers))
         .set_topics(topic).set_value_only_deserializer(SimpleStringSchema()))
    if group_id:
        b.set_group_id(group_id)
    if start_offsets:
        b.set_starting_offsets(_offsets_initializer(topic, start_offsets))
    elif start == "earliest":
        b.set_starting_offsets(KafkaOffsetsInitializer.earliest())
    elif start == "latest":
        b.set_starting_offsets(KafkaOffsetsInitializer.latest())
    else:
        b.set_starting_offsets(KafkaOffsetsInitializer.committed_offsets(
            KafkaOffsetResetStrategy.EARLIEST))
    if stop_offsets:
        b.set_bounded(_offsets_initializer(topic, stop_offsets))
    elif bounded:
        b.set_bounded(KafkaOffsetsInitializer.latest())
    for k, v in (properties or {}).items():
        b.set_property(k, str(v))
    return b.build()


def kafka_value_sink(bootstrap_servers: str, topic: str,
                     delivery_guarantee: str = "at-least-once",
                     transactional_id_prefix: str | None = None,
                     properties: Mapping[str, str] | None = None):
    """A DataStream ``KafkaSink`` of string records as message values (no key): ``ds.sink_to(...)``.
    Options as in env.py's ``kafka_sink``."""
    from pyflink.common.serialization import SimpleStringSchema
    from pyflink.datastream.connectors.base import DeliveryGuarantee
    from pyflink.datastream.connectors.kafka import KafkaRecordSerializationSchema, KafkaSink
    _check_guarantee(None, delivery_guarantee, transactional_id_prefix)
    guarantee = {"none": DeliveryGuarantee.NONE, "at-least-once": DeliveryGuarantee.AT_LEAST_ONCE,
                 "exactly-once": DeliveryGuarantee.EXACTLY_ONCE}[delivery_guarantee]
    serializer = (KafkaRecordSerializationSchema.builder().set_topic(topic)
                  .set_value_serialization_schema(SimpleStringSchema()).build())
    b = (KafkaSink.builder().set_bootstrap_servers(_servers(bootstrap_servers))
         .set_record_serializer(serializer).set_delivery_guarantee(guarantee))
    if transactional_id_prefix:
        b.set_transactional_id_prefix(transactional_id_prefix)
    for k, v in (properties or {}).items():
        b.set_property(k, str(v))
    return b.build()

"""The test broker itself (tests/broker.py): Apache Kafka answers, transactions are on, a stop
leaves no process, and a machine without Java says what to install."""

from __future__ import annotations

import pytest


def test_without_java_the_broker_says_what_to_install(broker_module, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no java, no mvn
    with pytest.raises(broker_module.BrokerUnavailable, match="Java 17 or newer JDK") as error:
        broker_module.ensure_broker_jars(tmp_path)
    assert "mvn" in str(error.value)


def test_the_session_broker_is_apache_kafka_with_transactions(broker_module, kafka_broker):
    """The session's broker runs kafka.Kafka from the pom's version, and its transaction
    coordinator answers (the exactly-once sink needs it)."""
    from kafka import KafkaProducer

    ours = broker_module.descendants(kafka_broker.proc.pid) + [
        p for p in broker_module.processes() if p.pid == kafka_broker.proc.pid]
    assert any("kafka.Kafka" in p.command and f"kafka-{kafka_broker.version}" in p.command
               for p in ours)
    producer = KafkaProducer(bootstrap_servers=kafka_broker.bootstrap,
                             transactional_id="foldstream-broker-test")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send("broker-txn", b"x")
        producer.commit_transaction()
    finally:
        producer.close()


@pytest.mark.kafka
def test_a_stopped_broker_leaves_no_process(broker_module):
    broker = broker_module.KafkaBroker()
    try:
        broker.start()
    except broker_module.BrokerUnavailable as error:
        pytest.skip(f"no Apache Kafka broker: {error}")
    pid, folder = broker.proc.pid, broker.folder
    assert pid in [p.pid for p in broker_module.processes()]
    broker.stop()
    assert pid not in [p.pid for p in broker_module.processes()]
    assert not [p for p in broker_module.leftover_services() if "kafka.Kafka" in p.command
                and str(folder) in p.command]
    assert not folder.exists()


def test_a_cluster_id_that_begins_with_a_dash_formats_the_folder(broker_module, kafka_broker,
                                                               monkeypatch):
    """One random cluster id in 64 begins with ``-`` (URL-safe base64), which Kafka's storage
    tool read as an option: the whole session's Kafka tests then failed to start a broker.
    (``kafka_broker``: skipped where no broker can run.)"""
    monkeypatch.setattr(broker_module, "_cluster_id", lambda: "-" + "A" * 21)
    broker = broker_module.KafkaBroker().start()
    broker.stop()

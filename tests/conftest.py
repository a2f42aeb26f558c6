"""Shared fixtures: Electricity, the Kafka connector jars, and a real Kafka-protocol broker."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ELEC = HERE.parents[1] / "shared" / "data" / "elec.csv.gz"
if not ELEC.exists():  # a checkout without ../shared: the packaged copy is the same file
    ELEC = HERE.parent / "connectors" / "data" / "elec.csv.gz"


def load_broker_module():
    """tests/ is no package and --import-mode=importlib puts nothing on sys.path: load by path."""
    name = "foldstream_tests_broker"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "broker.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def elec_path() -> Path:
    return ELEC


@pytest.fixture(scope="session")
def kafka_jars():
    from foldstream.job.engines.flink.deps import ensure_kafka_jars

    return ensure_kafka_jars()


@pytest.fixture(scope="session")
def tansu():
    """One Tansu broker for the session (in-memory storage, a free loopback port)."""
    with load_broker_module().TansuBroker() as broker:
        yield broker


@pytest.fixture(scope="session")
def free_port():
    """A function returning a TCP port that was free a moment ago (for "broker down" tests)."""
    return load_broker_module().free_port

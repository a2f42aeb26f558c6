"""Shared fixtures: Electricity, the Kafka connector jars, and a real Kafka-protocol broker."""

from __future__ import annotations

import importlib.util
import signal
import sys
from pathlib import Path

import pytest

# A suite started in the background by a non-interactive shell (`cmd &`, as a CI runner may)
# inherits SIGINT ignored, and an ignored signal stays ignored through exec: the Ctrl-C tests
# would then send a Ctrl-C that nothing hears. A handler, unlike SIG_IGN, is reset to the
# default at exec, so this one line gives Ctrl-C back to this process and every child it starts.
signal.signal(signal.SIGINT, signal.default_int_handler)

HERE = Path(__file__).resolve().parent
ELEC = HERE.parent / "connectors" / "data" / "elec.csv.gz"  # the packaged copy: nothing outside the clone


#: Fixtures that start a Kafka-protocol broker or fetch the Kafka connector jars.
KAFKA_FIXTURES = frozenset({"tansu", "kafka_jars"})


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    """Every Flink and Kafka test is slow: a mini-cluster or a broker takes seconds to start.

    So ``pytest -m "not slow"`` leaves them out without each file having to say so twice.
    """
    for item in items:
        kafka = KAFKA_FIXTURES & set(getattr(item, "fixturenames", ()))
        if kafka or item.get_closest_marker("flink") or item.get_closest_marker("kafka"):
            item.add_marker(pytest.mark.slow)


def load_helper(filename: str):
    """tests/ is no package and --import-mode=importlib puts nothing on sys.path: load a helper
    module of tests/ by path."""
    name = f"foldstream_tests_{Path(filename).stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / filename)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def load_broker_module():
    return load_helper("broker.py")


@pytest.fixture(scope="session")
def flink_runs():
    """The Flink tests' shared run-and-compare helpers (tests/flink_runs.py; needs pyflink)."""
    return load_helper("flink_runs.py")


@pytest.fixture(scope="session")
def elec_path() -> Path:
    return ELEC


@pytest.fixture(scope="session")
def kafka_values():
    """The value-only DataStream Kafka source and sink (tests/kafka_values.py; needs pyflink)."""
    return load_helper("kafka_values.py")


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

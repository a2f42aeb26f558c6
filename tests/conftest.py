"""Shared fixtures: Electricity, the Kafka connector jars, and a real Apache Kafka broker."""

from __future__ import annotations

import importlib.util
import os
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


#: Fixtures that start the Kafka broker or fetch the Kafka connector jars.
KAFKA_FIXTURES = frozenset({"kafka_broker", "kafka_jars"})
#: Set (to anything but "" or 0) where the Kafka tests must run: a broker that cannot start then
#: fails them instead of skipping them. `.ci/run` sets it.
REQUIRE_KAFKA = "FOLDSTREAM_REQUIRE_KAFKA"


#: Markers of tests that start a service of seconds: a Flink mini-cluster (``flink``), the
#: Kafka broker (``kafka``), a Java virtual machine for MOA's learners (``jvm``).
SLOW_MARKERS = ("flink", "kafka", "jvm")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    """Every test marked ``flink``, ``kafka`` or ``jvm`` is slow: a mini-cluster, a broker or
    a JVM takes seconds to start. Every test that uses the broker is a ``kafka`` test.

    So ``pytest -m "not slow"`` leaves them out, and ``pytest -m kafka`` selects every test on
    the broker, without each file having to say so twice: a test file marks what its tests
    start, and this is the one place that says what is slow.
    """
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "kafka_broker" in fixtures:
            item.add_marker(pytest.mark.kafka)
        if KAFKA_FIXTURES & fixtures or any(item.get_closest_marker(m) for m in SLOW_MARKERS):
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


#: Seconds the end of the session waits for the broker and Flink processes to end.
LEFTOVER_WAIT_S = 20.0


def pytest_sessionfinish(session, exitstatus):
    """After every fixture ended: no broker and no Flink process may be left below the suite
    (the process table, children of this process and theirs). PyFlink's gateway JVM, a child
    that ends with this interpreter, is the one exception; what runs under it is not. One
    left fails the session, listed."""
    import time

    if not Path("/proc").is_dir():  # no process table to read (not Linux)
        return
    broker = load_broker_module()
    deadline = time.monotonic() + LEFTOVER_WAIT_S
    while True:
        left = [p for p in broker.leftover_services() if not _pyflink_gateway(p)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("processes of the suite left running after it: "
                                + "; ".join(map(str, left)), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _pyflink_gateway(process) -> bool:
    return process.parent == os.getpid() and "PythonGatewayServer" in process.command


@pytest.fixture(scope="session")
def flink_runs():
    """The Flink tests' shared run-and-compare helpers (tests/flink_runs.py; needs pyflink)."""
    return load_helper("flink_runs.py")


@pytest.fixture(scope="session")
def stage_driver():
    """One stream's stages driven a step at a time (tests/stage_driver.py)."""
    return load_helper("stage_driver.py")


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


def _required(name: str) -> bool:
    return os.environ.get(name, "").strip() not in ("", "0")


@pytest.fixture(scope="session")
def broker_module():
    """tests/broker.py (the broker, and the process table helpers)."""
    return load_broker_module()


@pytest.fixture(scope="session")
def kafka_broker():
    """One Apache Kafka broker for the session (tests/broker.py: KRaft, free loopback ports, a
    temporary log folder). Without Java 17 or Maven the Kafka tests skip, saying what to
    install, unless ``$FOLDSTREAM_REQUIRE_KAFKA`` is set: then they fail."""
    module = load_broker_module()
    try:
        broker = module.KafkaBroker().start()
    except module.BrokerUnavailable as error:
        if _required(REQUIRE_KAFKA):
            pytest.fail(f"{REQUIRE_KAFKA} is set and the Kafka broker cannot run: {error}")
        pytest.skip(f"no Apache Kafka broker: {error}")
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def free_port():
    """A function returning a TCP port that was free a moment ago (for "broker down" tests)."""
    return load_broker_module().free_port

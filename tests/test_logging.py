"""What is retried or given up on purpose is logged, and ``--log-level`` shows it.

The corners that carry on after an error (a Kafka client that cannot be closed, a broker that
does not describe a topic, a dashboard source read again) log the reason at DEBUG through
``logging.getLogger(__name__)``; :mod:`foldstream.job.logs` shows them on standard error at the
level of ``--log-level`` (default WARNING), with a traceback only at DEBUG.
"""

from __future__ import annotations

import io
import logging
import subprocess
import sys

import pytest

from foldstream.job import exitcodes, logs
from foldstream.job.cli import main


@pytest.fixture(autouse=True)
def quiet_again():
    yield
    logs.setup(logs.DEFAULT_LEVEL)


def _raise_and_log(logger: logging.Logger, level: int) -> None:
    try:
        raise ConnectionError("broker went away")
    except ConnectionError as error:
        logger.log(level, "gave up on purpose: %s", error, exc_info=True)


@pytest.mark.parametrize("option", [["--log-level", "debug", "validate"],
                                    ["validate", "--log-level", "DEBUG"]])
def test_the_option_sets_the_level_before_or_after_the_command(capsys, option):
    assert main(option) == exitcodes.OK
    _raise_and_log(logging.getLogger("foldstream.connectors.kafka"), logging.DEBUG)
    err = capsys.readouterr().err
    assert "foldstream: DEBUG foldstream.connectors.kafka: gave up on purpose: broker went away" \
        in err
    assert "Traceback" in err  # DEBUG, and only DEBUG, shows it


def test_by_default_debug_is_silent_and_a_warning_has_no_traceback(capsys):
    assert main(["validate"]) == exitcodes.OK
    logger = logging.getLogger("foldstream.job.tools.dashboard.app")
    _raise_and_log(logger, logging.DEBUG)
    assert "gave up" not in capsys.readouterr().err
    _raise_and_log(logger, logging.WARNING)
    err = capsys.readouterr().err
    assert err.strip() == ("foldstream: WARNING foldstream.job.tools.dashboard.app: gave up on "
                           "purpose: broker went away")


def test_a_second_setup_replaces_the_first():
    first, second = io.StringIO(), io.StringIO()
    logs.setup("info", stream=first)
    logs.setup("info", stream=second)
    logging.getLogger("foldstream.x").info("once")
    assert (first.getvalue(), second.getvalue()) == ("", "foldstream: INFO foldstream.x: once\n")


def test_a_bad_level_is_a_usage_error_naming_the_choices():
    done = subprocess.run([sys.executable, "-m", "foldstream.job.cli", "run", "--log-level",
                           "loud"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "unknown log level 'LOUD'; choose from DEBUG, INFO, WARNING, ERROR, CRITICAL" \
        in done.stderr
    assert "Traceback" not in done.stderr


def test_a_broker_that_does_not_describe_the_topic_is_logged(kafka_broker, caplog):
    """A topic the broker does not describe (here: none of that name): the limit is the
    producer's, and the log says why; a topic it describes has the broker's limit."""
    from foldstream.connectors.kafka import create_topics, topic_max_message_bytes

    create_topics(kafka_broker.bootstrap, ["log-limit"])
    assert topic_max_message_bytes(kafka_broker.bootstrap, "log-limit") == 1048588  # Kafka's
    with caplog.at_level(logging.DEBUG, logger="foldstream.connectors.kafka"):
        assert topic_max_message_bytes(kafka_broker.bootstrap, "log-missing") is None
    said = [r.getMessage() for r in caplog.records if r.name == "foldstream.connectors.kafka"]
    assert any("did not tell topic log-missing's max.message.bytes" in m for m in said), said


@pytest.mark.parametrize("level, shown", [("DEBUG", True), ("WARNING", False)])
def test_an_unforeseen_error_shows_its_traceback_only_at_debug(capsys, level, shown):
    from foldstream.job.cli import _ends_cleanly

    @_ends_cleanly
    def failing(argv):
        logs.setup(level)  # as main does from --log-level
        raise ZeroDivisionError("a bug")

    assert failing([]) == exitcodes.FAILED
    err = capsys.readouterr().err
    assert "error: ZeroDivisionError: a bug (the traceback is in " in err.replace("\n", " ")
    assert ("Traceback (most recent call last)" in err) is shown

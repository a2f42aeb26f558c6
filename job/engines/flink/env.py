"""Where the Flink job runs: the execution environment of a run, its Flink settings,
checkpoints and resume. :mod:`~foldstream.job.engines.flink.kafka` holds the job's Kafka ends,
:mod:`~foldstream.job.engines.flink.keying` the keying in Java, :mod:`~foldstream.job.engines.flink.job`
the job graph and its functions, :mod:`~foldstream.job.engines.flink.run` the checks before a
run, the run and the delivery of its records.

**Environment.** :func:`make_env` sets what docs/platform.md found necessary: Python workers in
separate processes and the JVM's options (:func:`~foldstream.job.engines.flink.jvm.prepare`),
``set_python_executable(sys.executable)`` (otherwise the workers start a ``python`` without
pyflink), the Kafka jars as ``file://`` URLs, and :func:`patch_pyflink_kafka`.
:func:`make_environment` is a run's: the settings a configuration asks for (parallelism, task
slots, bundle and buffer timeouts of a live source, checkpoints retained for ``--resume``, the
checkpoint to restore, ``engine.flink_config``); :func:`resume_point` finds that checkpoint.
"""


from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from pyflink.common import Configuration
from pyflink.datastream import StreamExecutionEnvironment

from foldstream.job.config import Config
from foldstream.job.engines.flink import jvm
from foldstream.job.engines.flink.routing import MAX_PARALLELISM

_PATCHED = False


# ---------------------------------------------------------------- environment

def properties_text(properties: Mapping[str, object] | None) -> dict[str, str]:
    """Flink or Kafka client properties as the text those read: YAML's booleans as ``true`` and
    ``false`` (not Python's ``True``), everything else as ``str()``.

    >>> properties_text({"check.crcs": True, "linger.ms": 5})
    {'check.crcs': 'true', 'linger.ms': '5'}
    """
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in (properties or {}).items()}


def patch_pyflink_kafka() -> None:
    """Point PyFlink's Kafka wrappers at the unshaded Kafka client classes (idempotent).

    PyFlink names ``org.apache.flink.kafka.shaded.org.apache.kafka...`` (the shaded SQL connector
    jar); the jars we ship are unshaded, so ``KafkaOffsetsInitializer.offsets(...)`` and
    ``committed_offsets(...)`` would fail with "Could not found the Java class".
    """
    global _PATCHED
    if _PATCHED:
        return
    from pyflink.datastream.connectors import kafka as pk
    from pyflink.java_gateway import get_gateway

    def _to_j_topic_partition(self):
        return get_gateway().jvm.org.apache.kafka.common.TopicPartition(
            self._topic, self._partition)

    def _to_j_offset_reset_strategy(self):
        j_strategy = get_gateway().jvm.org.apache.kafka.clients.consumer.OffsetResetStrategy
        return getattr(j_strategy, self.name)

    pk.KafkaTopicPartition._to_j_topic_partition = _to_j_topic_partition
    pk.KafkaOffsetResetStrategy._to_j_offset_reset_strategy = _to_j_offset_reset_strategy
    _PATCHED = True


def make_env(parallelism: int, jars: Iterable[Path | str] = (),
             config: Mapping[str, object] | None = None,
             python_executable: str | None = None) -> StreamExecutionEnvironment:
    """A local/remote ``StreamExecutionEnvironment`` with Python workers in separate processes.

    ``config`` holds Flink configuration keys (``python.fn-execution.bundle.size``,
    ``execution.checkpointing.interval``, ...), set before the environment is created.
    """
    if parallelism < 1:
        raise ValueError(f"parallelism must be >= 1, not {parallelism}")
    jvm.prepare()  # before PyFlink starts its JVM (unless start_early did) and the job
    # Each Python operator of the job imports PyFlink's runtime package, which imports Apache
    # Beam (about a second). Imported here, before the first call into the JVM, it overlaps
    # with the JVM's start rather than following it.
    import pyflink.fn_execution  # noqa: F401
    conf = Configuration()
    for k, v in properties_text(config).items():
        conf.set_string(k, v)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_python_executable(python_executable or sys.executable)
    urls = []
    for j in jars:
        p = Path(j).expanduser().resolve()
        if not p.is_file():
            raise FileNotFoundError(f"jar not found: {p}")
        urls.append(p.as_uri())
    if urls:
        env.add_jars(*urls)
    env.set_parallelism(parallelism)
    patch_pyflink_kafka()
    return env


def table_env(env: StreamExecutionEnvironment):
    """The ``StreamTableEnvironment`` bridged to ``env`` (one per environment, created lazily)."""
    t_env = getattr(env, "_foldstream_t_env", None)
    if t_env is None:
        from pyflink.table import StreamTableEnvironment
        t_env = StreamTableEnvironment.create(env)
        env._foldstream_t_env = t_env
    return t_env


# ---------------------------------------------------------------- a run's environment

def make_environment(config: Config, restore: str | None = None,
                     checkpoint_dir: Path | None = None,
                     python_executable: str | None = None) -> StreamExecutionEnvironment:
    """The environment of a run: ``restore``, a retained checkpoint to resume from
    (:func:`resume_point`); ``python_executable``, the workers' Python when the configuration
    names none (a local run's fork server: :mod:`~foldstream.job.engines.flink.forkserver`);
    ``checkpoint_dir``, where checkpoints are written and retained
    (``None``: Flink's configuration decides, as on a cluster)."""
    from foldstream.job.engines.flink.deps import DependencyError

    if not jvm.java_found():
        raise DependencyError("engine.kind: flink needs Java 17 (no `java` on PATH and no "
                                "JAVA_HOME); install it, or run with --set engine.kind=inprocess")

    jars: list[str] = []
    if config.source.kind == "kafka" or config.sink.kind == "kafka":
        if config.engine.jars is not None:
            jars = config.engine.jars
        else:
            from foldstream.job.engines.flink.deps import ensure_kafka_jars

            jars = [str(p) for p in ensure_kafka_jars()]
    settings = {"pipeline.max-parallelism": str(MAX_PARALLELISM)}
    # The local mini-cluster's slots (a cluster has its own).
    settings["taskmanager.numberOfTaskSlots"] = str(config.engine.task_slots)
    live = config.source.kind == "kafka" and not config.source.bounded
    bundle_ms = config.engine.bundle_time_ms or (50 if live else None)
    if bundle_ms:
        # Each Python operator passes its output on when its bundle closes, by default after
        # up to a second: four operators in a row would hold a live report for seconds.
        settings["python.fn-execution.bundle.time"] = str(bundle_ms)
    if live:
        # Flink flushes a network buffer that is not full every 100 ms by default; a report
        # crosses four such channels.
        settings["execution.buffer-timeout.interval"] = "10 ms"
    interval = config.checkpoint_interval_ms
    if interval:
        settings.update({
            "execution.checkpointing.interval": f"{interval} ms",
            # bench/README.md: aligned, a barrier waits behind every batch read ahead of the
            # learners (9 to 19 s on a backlog); unaligned, 1 to 4 s
            "execution.checkpointing.unaligned.enabled":
                "true" if config.engine.unaligned_checkpoints else "false",
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": str(config.engine.restart_attempts),
            "restart-strategy.fixed-delay.delay": "1 s",
        })
    if interval and checkpoint_dir is not None:
        settings.update({
            # kept after a crash or a cancel, for `foldstream run --resume` (Flink keeps the
            # latest completed one and deletes those it subsumes)
            "execution.checkpointing.dir": checkpoint_dir.as_uri(),
            "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
        })
    if restore:
        settings["execution.state-recovery.path"] = restore
    settings.update(config.engine.flink_config)  # make_env writes them as Flink reads them
    return make_env(config.engine.parallelism, jars, settings,
                    config.engine.python_executable or python_executable)


def latest_checkpoint(directory: Path) -> Path | None:
    """The newest completed checkpoint under ``directory`` (``<job id>/chk-N`` folders; a
    checkpoint is complete once its ``_metadata`` is written), or ``None``.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for job, n in (("a", 3), ("b", 7), ("b", 8)):
    ...     (root / job / f"chk-{n}").mkdir(parents=True)
    >>> _ = [(root / j / c / "_metadata").write_bytes(b"") for j, c in (("a", "chk-3"), ("b", "chk-7"))]
    >>> latest_checkpoint(root).relative_to(root).as_posix()  # b/chk-8 is not complete
    'b/chk-7'
    """
    done = [m.parent for m in Path(directory).glob("*/chk-*/_metadata")]
    return max(done, key=lambda c: (c.stat().st_mtime, int(c.name[4:])), default=None)


def resume_point(config: Config, resume: str) -> str:
    """The checkpoint a ``--resume`` restores: ``resume`` itself (a ``chk-N`` folder or its
    ``_metadata``), or for ``"latest"`` the newest retained checkpoint of this configuration
    (:attr:`~foldstream.job.config.Config.checkpoint_dir`); raise ``ConfigError`` if there is
    none."""
    from foldstream.job.config import ConfigError

    if resume != "latest":
        path = Path(resume).expanduser()
        if not path.exists():
            raise ConfigError(f"--resume {resume}: no such checkpoint")
        return str(path.resolve())
    directory = config.checkpoint_dir
    if directory is None:
        raise ConfigError("--resume: this run takes no checkpoints (a bounded or file source "
                          "without engine.checkpoint_interval_ms)")
    latest = latest_checkpoint(directory)
    if latest is None:
        raise ConfigError(f"--resume: no completed checkpoint of this configuration under "
                          f"{directory} (engine.checkpoint_dir); did the run reach one?")
    return str(latest)

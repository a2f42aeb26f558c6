"""The docker-compose stack, checked without a Docker engine.

docker-compose.yml, docker/Dockerfile, docker/submit.sh, conf/compose.yaml, conf/cluster.yaml and
docs/stack.md must agree with each other and with the installed PyFlink: service names, image
tags, the Flink version, Kafka's address, the submitted files, the published ports. When a
``docker-compose`` (1.29+) or ``docker compose`` command is available, it validates the file too.
"""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from foldstream.job.config import load_config

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "docker" / "Dockerfile"
SUBMIT_SCRIPT = ROOT / "docker" / "submit.sh"
STACK_DOC = ROOT / "docs" / "stack.md"
COMPOSE_CONF = ROOT / "conf" / "compose.yaml"
CLUSTER_CONF = ROOT / "conf" / "cluster.yaml"
SERVICES = ("kafka", "jobmanager", "taskmanager", "submit", "producer", "dashboard")
IMAGE_SRC = "/opt/foldstream/src/"  # where docker/Dockerfile copies the repository's files


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def dockerfile() -> str:
    return DOCKERFILE.read_text(encoding="utf-8")


def _command(service: dict) -> list[str]:
    command = service.get("command", [])
    return command.split() if isinstance(command, str) else [str(c) for c in command]


def _env(service: dict) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def _flink_properties(service: dict) -> dict[str, str]:
    lines = _env(service).get("FLINK_PROPERTIES", "").splitlines()
    return dict((k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in lines) if k.strip())


def _split_image(ref: str) -> tuple[str, str, str]:
    """``registry/name:tag@digest`` -> (name, tag, digest); a port in the registry is no tag."""
    name, _, digest = ref.partition("@")
    head, _, last = name.rpartition("/")
    last, _, tag = last.partition(":")
    return (f"{head}/{last}" if head else last), tag, digest


def _dockerfile_images(text: str) -> list[str]:
    stages = set(re.findall(r"^FROM\s+\S+\s+AS\s+(\S+)", text, re.M | re.I))
    refs = re.findall(r"^FROM\s+(\S+)", text, re.M | re.I)
    refs += re.findall(r"^COPY\s+--from=(\S+)", text, re.M | re.I)
    return [r for r in refs if r not in stages]


def _published_ports(compose: dict) -> dict[int, str]:
    ports: dict[int, str] = {}
    for name, service in compose["services"].items():
        for port in service.get("ports", []):
            if isinstance(port, dict):
                published = port["published"]
            else:  # "HOST:CONTAINER", "IP:HOST:CONTAINER" or "CONTAINER"
                parts = str(port).split("/")[0].split(":")
                published = parts[-2] if len(parts) > 1 else parts[-1]
            ports[int(published)] = name
    return ports


def _kafka_listeners(compose: dict) -> dict[str, str]:
    """Kafka's advertised listeners by name: ``{"PLAINTEXT": "kafka:9092", ...}``."""
    advertised = _env(compose["services"]["kafka"])["KAFKA_ADVERTISED_LISTENERS"]
    return dict(item.split("://", 1) for item in advertised.split(","))


# --------------------------------------------------------------------------- the services
def test_the_services_exist(compose):
    assert set(SERVICES) <= set(compose["services"])
    for name in ("jobmanager", "taskmanager"):
        assert _command(compose["services"][name]) == [name]


def test_every_image_is_pinned(compose, dockerfile):
    refs = [compose["services"][name].get("image") for name in compose["services"]]
    assert all(refs), "every service names its image (a built one too, so that all share it)"
    refs += _dockerfile_images(dockerfile)
    for ref in refs:
        name, tag, digest = _split_image(ref)
        assert tag or digest, f"{ref}: no tag"
        assert tag != "latest", f"{ref}: pinned to latest"
        assert "$" not in ref, f"{ref}: a variable is no pin"


def test_the_built_services_share_one_image(compose):
    built = {name: s for name, s in compose["services"].items() if "build" in s}
    assert set(built) == {"jobmanager", "taskmanager", "submit", "producer", "dashboard"}
    assert len({s["image"] for s in built.values()}) == 1
    for service in built.values():
        assert service["build"]["dockerfile"] == "docker/Dockerfile"
        assert (ROOT / service["build"]["context"] / service["build"]["dockerfile"]).is_file()


def test_the_flink_base_image_is_the_installed_pyflink(dockerfile):
    bases = [r for r in _dockerfile_images(dockerfile) if _split_image(r)[0] == "flink"]
    assert len(bases) == 1, bases
    tag = _split_image(bases[0])[1]
    assert re.fullmatch(r"\d+\.\d+\.\d+-java17", tag), f"flink:{tag}: pin the full version, Java 17"
    assert tag.split("-")[0] == importlib.metadata.version("apache-flink")


def test_the_dockerfile_sets_one_python_for_client_and_workers(dockerfile):
    executables = dict(re.findall(r"-Dpython\.(executable|client\.executable)=(\S+?)\"", dockerfile))
    assert set(executables) == {"executable", "client.executable"}
    assert executables["executable"] == executables["client.executable"]
    venv = re.search(r"VIRTUAL_ENV=(\S+)", dockerfile).group(1)
    assert executables["executable"] == f"{venv}/bin/python"
    assert "python -m foldstream.job.engines.flink.deps" in dockerfile and "/opt/flink/lib" in dockerfile
    assert "classloader.parent-first-patterns.additional=org.apache.kafka." in dockerfile


def test_healthchecks_and_start_order(compose):
    services = compose["services"]
    for name, service in services.items():
        for dependency, rule in (service.get("depends_on") or {}).items():
            assert dependency in services, f"{name} depends on an unknown service {dependency}"
            if rule["condition"] == "service_healthy":
                assert "healthcheck" in services[dependency], f"{dependency} has no healthcheck"
    assert services["submit"]["depends_on"]["kafka"]["condition"] == "service_healthy"
    assert services["submit"]["depends_on"]["jobmanager"]["condition"] == "service_healthy"
    assert services["producer"]["depends_on"]["submit"]["condition"] == "service_completed_successfully"
    assert "/overview" in " ".join(services["jobmanager"]["healthcheck"]["test"])


def test_flink_cluster_properties(compose):
    config = load_config(COMPOSE_CONF)
    slots = config.engine.task_slots  # learners in slots of their own: 2 x parallelism
    for name in ("jobmanager", "taskmanager"):
        props = _flink_properties(compose["services"][name])
        assert props["jobmanager.rpc.address"] == "jobmanager"
        assert int(props["taskmanager.numberOfTaskSlots"]) >= slots
        assert props["execution.checkpointing.dir"].startswith("file://")
        checkpoints = props["execution.checkpointing.dir"].removeprefix("file://")
        assert any(v.split(":")[1] == checkpoints for v in compose["services"][name]["volumes"]), \
            f"{name}: the checkpoint directory must be the shared volume"
    assert int(_env(compose["services"]["submit"])["SLOTS"]) == slots


# ---------------------------------------------------------------------- the job and Kafka
def test_compose_conf_points_at_the_compose_kafka(compose):
    config = load_config(COMPOSE_CONF)
    assert config.source.kind == config.sink.kind == "kafka"
    assert config.engine.kind == "flink"
    internal = _kafka_listeners(compose)[_env(compose["services"]["kafka"])["KAFKA_INTER_BROKER_LISTENER_NAME"]]
    host, port = internal.split(":")
    assert host == "kafka" and host in compose["services"]
    assert config.source.bootstrap_servers == config.sink.bootstrap_servers == internal
    assert not config.source.bounded  # a stream: the job runs on the cluster until cancelled


def test_compose_conf_evaluates_like_the_default():
    default, stack = load_config(), load_config(COMPOSE_CONF)
    assert stack.evaluation == default.evaluation
    assert stack.learners == default.learners


def test_cluster_conf_validates_and_differs_only_where_documented():
    kafka, cluster = load_config(ROOT / "conf" / "kafka.yaml"), load_config(CLUSTER_CONF)
    assert cluster.source.kind == cluster.sink.kind == "kafka"
    assert cluster.source.topic == kafka.source.topic and cluster.sink.topic == kafka.sink.topic
    assert cluster.evaluation == kafka.evaluation
    doc = STACK_DOC.read_text(encoding="utf-8")
    for key in ("source.bootstrap_servers", "sink.bootstrap_servers", "source.group_id",
                "engine.parallelism", "engine.checkpoint_interval_ms"):
        assert f"`{key}`" in doc, f"docs/stack.md does not name {key}"


def test_submit_runs_foldstream_submit_with_compose_conf(compose, dockerfile):
    """The stack submits by the project's own path (checks, then follows the job until it
    runs), with arguments that `foldstream submit` parses."""
    from foldstream.job.cli import _parser

    command = _command(compose["services"]["submit"])
    assert command[:2] == ["bash", f"{IMAGE_SRC}docker/submit.sh"]
    args = _parser().parse_args(command[3:])
    assert command[2] == "foldstream" and args.command == "submit"
    assert args.jobmanager == "jobmanager:8081"
    assert args.config == f"{IMAGE_SRC}conf/compose.yaml"
    for path in (p for p in command if p.startswith(IMAGE_SRC)):  # each one is in the image
        relative = path.removeprefix(IMAGE_SRC)
        assert (ROOT / relative).is_file(), path
        top = relative.split("/")[0]
        assert re.search(rf"^COPY\s+{re.escape(top)}\s+{re.escape(IMAGE_SRC + top)}\s*$",
                         dockerfile, re.M), f"docker/Dockerfile does not copy {top}/"


def test_submit_creates_the_topics_the_job_uses(compose):
    config = load_config(COMPOSE_CONF)
    env = _env(compose["services"]["submit"])
    assert set(env["TOPICS"].split()) == {config.source.topic, config.sink.topic,
                                          config.sink.dead_letter_topic}
    assert env["KAFKA_BOOTSTRAP"] == config.source.bootstrap_servers


def test_the_producer_feeds_the_job_topic(compose):
    config = load_config(COMPOSE_CONF)
    command = _command(compose["services"]["producer"])
    assert command[:2] == ["foldstream", "produce"]
    assert command[command.index("--bootstrap-servers") + 1] == config.source.bootstrap_servers
    assert command[command.index("--topic") + 1] == config.source.topic
    assert float(command[command.index("--rate") + 1]) > 0


def test_the_dashboard_shows_the_job_metrics_topic(compose):
    from foldstream.job.tools.dashboard import DEFAULT_PORT

    config = load_config(COMPOSE_CONF)
    service = compose["services"]["dashboard"]
    command = _command(service)
    assert command[:2] == ["foldstream", "dashboard"]
    assert command[2] == f"kafka://{config.sink.bootstrap_servers}/{config.sink.topic}"
    assert command[command.index("--host") + 1] == "0.0.0.0"  # reachable from the host
    port = int(command[command.index("--port") + 1]) if "--port" in command else DEFAULT_PORT
    assert [(p["target"], p["published"]) for p in service["ports"]] == [(port, 8050)]
    assert service["depends_on"]["kafka"]["condition"] == "service_healthy"
    assert f"localhost:{port}/healthz" in " ".join(service["healthcheck"]["test"])


def test_submit_script_is_valid_bash():
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    proc = subprocess.run(["bash", "-n", str(SUBMIT_SCRIPT)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------- flink_main
def test_flink_main_refuses_a_job_without_kafka(capsys):
    from foldstream.job.engines.flink import main as flink_main

    assert flink_main.main([str(ROOT / "conf" / "default.yaml")]) == 2
    err = capsys.readouterr().err
    assert "source.kind: kafka" in err and "sink.kind: kafka" in err
    assert "source.kind is 'file'" in err and "sink.kind is 'file'" in err


def test_flink_main_reads_the_arguments_after_the_separator():
    from foldstream.job.engines.flink.main import parse_args

    args = parse_args(["--", "conf/compose.yaml", "--set", "evaluation.folds=5"])
    assert args.config == "conf/compose.yaml" and args.overrides == ["evaluation.folds=5"]
    assert parse_args(["c.yaml"]).overrides == []


# ------------------------------------------------------------------------------- the docs
def test_the_documented_ports_are_the_published_ones(compose):
    doc = STACK_DOC.read_text(encoding="utf-8")
    rows = re.findall(r"^\|\s*(\d+)\s*\|\s*([\w-]+)\s*\|", doc, re.M)
    assert {int(port): service for port, service in rows} == _published_ports(compose)
    host = _kafka_listeners(compose)["HOST"]  # the listener advertised to the host
    assert host.split(":")[0] == "localhost"
    assert int(host.split(":")[1]) in _published_ports(compose)
    assert f"kafka://{host}/metrics" in doc
    assert "localhost:8081" in doc and 8081 in _published_ports(compose)
    assert "localhost:8050" in doc and _published_ports(compose)[8050] == "dashboard"


def test_the_documented_images_are_the_compose_ones(compose, dockerfile):
    doc_path = STACK_DOC
    doc = doc_path.read_text(encoding="utf-8")
    for name, service in compose["services"].items():
        assert f"`{service['image']}`" in doc, f"{doc_path.name} does not name {name}'s image"
    base = re.search(r"^FROM\s+(flink:\S+)", dockerfile, re.M).group(1)
    assert base in doc, f"{doc_path.name} does not name the Flink base image {base}"
    for port in _published_ports(compose):
        assert f"{port}" in doc, f"{doc_path.name} does not name the published port {port}"


# ------------------------------------------------------------------- compose itself
def _run_config(command: list[str]) -> None:
    proc = subprocess.run(command + ["-f", str(COMPOSE), "config", "-q"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{' '.join(command)} config -q:\n{proc.stdout}{proc.stderr}"


def test_docker_compose_v1_validates_the_file():
    if shutil.which("docker-compose") is None:
        pytest.skip("no docker-compose command (Debian: apt-get install docker-compose)")
    _run_config(["docker-compose"])


def test_docker_compose_v2_validates_the_file():
    if shutil.which("docker") is None:
        pytest.skip("no docker command")
    probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True,
                           timeout=60)
    if probe.returncode != 0:
        pytest.skip("docker has no compose plugin (docker compose)")
    _run_config(["docker", "compose"])


def test_the_image_has_a_jdk_of_the_flink_images_java_and_moas_jar(dockerfile):
    """MOA's learners compile operators/java/ with javac: the image's Java must be a JDK, the
    Flink image's vendor and major version in its place (one Java), and the jar and class
    are fetched and compiled at build time, readable by the flink user."""
    jdk = re.search(r"^FROM\s+eclipse-temurin:(\d+)-jdk\S*\s+AS\s+(\S+)", dockerfile, re.M)
    assert jdk, "a Temurin JDK stage"
    flink = next(r for r in _dockerfile_images(dockerfile) if _split_image(r)[0] == "flink")
    assert _split_image(flink)[1].endswith(f"-java{jdk.group(1)}")
    assert re.search(rf"^COPY\s+--from={jdk.group(2)}\s+/opt/java/openjdk\s+/opt/java/openjdk\s*$",
                     dockerfile, re.M)
    assert "javac\" -version" in dockerfile
    assert "ensure_classes(ensure_moa_jar())" in dockerfile
    assert "print(line_blocks_jar())" in dockerfile
    assert "chmod -R a+rX /opt/foldstream/jars" in dockerfile

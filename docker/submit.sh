#!/usr/bin/env bash
# The `submit` service of docker-compose.yml: make the stack ready for the job, then run the
# command it is given (the `foldstream submit .../conf/compose.yaml --jobmanager ...` line):
#
#   1. create the topics (those that exist are left alone);
#   2. if a job named $JOB_NAME is already running, submit nothing (a second `docker compose up`
#      must not start a second job that reads the same topic again);
#   3. wait until the cluster has $SLOTS free task slots, then exec the command.
#
# Settings (environment): KAFKA_BOOTSTRAP (kafka:9092), TOPICS ("examples metrics
# metrics-rejected"), FLINK_REST (http://jobmanager:8081), JOB_NAME (foldstream), SLOTS (4: engine.parallelism 2, learners in slots of their own),
# WAIT_S (180: how long to wait for the broker and the slots).
set -euo pipefail

export KAFKA_BOOTSTRAP="${KAFKA_BOOTSTRAP:-kafka:9092}"
export TOPICS="${TOPICS:-examples metrics metrics-rejected}"
export FLINK_REST="${FLINK_REST:-http://jobmanager:8081}"
export JOB_NAME="${JOB_NAME:-foldstream}"
export SLOTS="${SLOTS:-4}"
export WAIT_S="${WAIT_S:-180}"

if [ "$#" -eq 0 ]; then
    echo "usage: submit.sh foldstream submit ... (the command that submits the job)" >&2
    exit 2
fi

status=0
python - <<'PY' || status=$?
import json
import os
import sys
import time
import urllib.request

from foldstream.connectors.kafka import KafkaUnavailable, check_bootstrap, create_topics

bootstrap, topics = os.environ["KAFKA_BOOTSTRAP"], os.environ["TOPICS"].split()
rest, job, slots = os.environ["FLINK_REST"].rstrip("/"), os.environ["JOB_NAME"], int(os.environ["SLOTS"])
deadline = time.monotonic() + float(os.environ["WAIT_S"])


def wait(what, attempt):
    """Call attempt() until it returns a true value; its exceptions and falsy results retry."""
    last = None
    while time.monotonic() < deadline:
        try:
            result = attempt()
            if result:
                return result
        except (OSError, KafkaUnavailable, ValueError) as error:
            last = error
        time.sleep(2)
    sys.exit(f"submit: gave up waiting for {what} after {os.environ['WAIT_S']} s ({last})")


def get(path):
    with urllib.request.urlopen(rest + path, timeout=5) as response:
        return json.load(response)


wait(f"Kafka at {bootstrap}", lambda: check_bootstrap(bootstrap, timeout_s=5) is not None)
create_topics(bootstrap, topics)
print(f"submit: topics {', '.join(topics)} exist at {bootstrap}", flush=True)

running = [j for j in wait(f"Flink at {rest}", lambda: get("/jobs/overview"))["jobs"]
           if j.get("name") == job and j.get("state") in ("RUNNING", "CREATED", "INITIALIZING",
                                                          "RESTARTING")]
if running:
    print(f"submit: job {job!r} is already {running[0]['state']} ({running[0]['jid']}): "
          f"not submitted again", flush=True)
    sys.exit(10)

wait(f"{slots} free task slots at {rest}",
     lambda: get("/overview").get("slots-available", 0) >= slots)
print(f"submit: {slots} free task slots at {rest}", flush=True)
PY
if [ "$status" -eq 10 ]; then
    exit 0
elif [ "$status" -ne 0 ]; then
    exit "$status"
fi

echo "submit: $*"
exec "$@"

"""The four commands of docs/kafka.md ("stream into Kafka and watch it live"), end to end.

`foldstream produce` fills a topic of a real Apache Kafka broker from Electricity,
`foldstream run conf/kafka.yaml` evaluates it on Flink, `foldstream watch` and `foldstream plot`
read the metrics back from the topic. Every record read back validates against the schema.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldstream.job.cli import main
from foldstream.job.tools.schema import validate_record

pytestmark = [pytest.mark.kafka, pytest.mark.flink]

ROOT = Path(__file__).resolve().parents[1]


def test_produce_run_watch_plot_through_kafka(kafka_broker, kafka_jars, tmp_path, capsys):
    from foldstream.connectors.kafka import create_topics, read_topic

    bs = kafka_broker.bootstrap
    create_topics(bs, ["e2e-metrics", "e2e-rejected"])
    assert main(["produce", "--bootstrap-servers", bs, "--topic", "e2e-examples", "--limit", "1500",
                 "--quiet"]) == 0
    jars = json.dumps([str(j) for j in kafka_jars])
    assert main(["run", str(ROOT / "conf" / "kafka.yaml"), "--quiet",
                 "--set", f"source.bootstrap_servers={bs}", "--set", f"sink.bootstrap_servers={bs}",
                 "--set", "source.topic=e2e-examples", "--set", "sink.topic=e2e-metrics",
                 "--set", "sink.dead_letter_topic=e2e-rejected",
                 "--set", "source.bounded=true", "--set", "evaluation.folds=3",
                 "--set", "evaluation.report_every=500", "--set", f"engine.jars={jars}"]) == 0
    records = [json.loads(value) for _, value in read_topic(bs, "e2e-metrics", timeout_s=30)]
    for record in records:
        validate_record(record)
    measures = [r for r in records if r["type"] == "measures"]
    assert sorted({r["position"] for r in measures}) == [500, 1000, 1500]
    assert records[-1]["type"] == "summary" and records[-1]["position"] == 1500
    capsys.readouterr()

    assert main(["watch", f"kafka://{bs}/e2e-metrics", "--no-follow"]) == 0
    shown = capsys.readouterr().out
    assert "hoeffding_tree" in shown and "naive_bayes" in shown

    out = tmp_path / "plots"
    assert main(["plot", f"kafka://{bs}/e2e-metrics", "--out", str(out)]) == 0
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert any("kappa_m" in name for name in pngs) and all((out / p).stat().st_size > 0 for p in pngs)

"""Rows per second: Electricity read as CSV, as JSON Lines and as Kafka message values.

    .venv/bin/python bench/bench_rows.py [--repeat N] [--copies N] [--profile FILE]

Times (CPU seconds of this process, the best of ``--repeat``) the source side of a run, from the
file's bytes to :class:`~foldstream.operators.records.Example` records, on all of Electricity
(45,312 rows, repeated ``--copies`` times so that a measure lasts long enough):

- ``csv``: :func:`~foldstream.connectors.files.iter_file` on ``elec.csv``;
- ``jsonl``: the same rows written as JSON Lines (numbers as JSON numbers, the class a string);
- ``kafka, a row a message``: :class:`~foldstream.connectors.messages.MessageParser` on one
  JSON object per message value, as the Flink job's source calls it;
- ``kafka, 100 rows a message``: the same rows as JSON arrays of 100 rows.

Every kind is checked to give the same examples (features, label) as the CSV. ``--profile
FILE`` writes a cProfile of each kind to ``FILE.<kind>``.
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import json
import tempfile
import time
from pathlib import Path

from foldstream import connectors
from foldstream.connectors.files import iter_file
from foldstream.connectors.messages import MessageParser
from foldstream.operators.records import Example

ELEC = Path(connectors.__file__).parent / "data" / "elec.csv.gz"


def write_inputs(folder: Path, copies: int) -> tuple[Path, Path, list[bytes], list[bytes]]:
    """Electricity as a CSV file, a JSON Lines file, and message values (one row, 100 rows)."""
    lines = gzip.decompress(ELEC.read_bytes()).decode("utf-8").splitlines()
    header, body = lines[0], lines[1:] * copies
    names = header.split(",")
    csv_path = folder / "elec.csv"
    csv_path.write_text("\n".join([header, *body]) + "\n", encoding="utf-8")
    rows = [{name: (value if name == "target" else float(value))
             for name, value in zip(names, line.split(","))} for line in body]
    texts = [json.dumps(row, separators=(",", ":")) for row in rows]
    jsonl_path = folder / "elec.jsonl"
    jsonl_path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    single = [text.encode() for text in texts]
    batched = [("[" + ",".join(texts[i:i + 100]) + "]").encode()
               for i in range(0, len(texts), 100)]
    return csv_path, jsonl_path, single, batched


def read_file(path: Path) -> list:
    return list(iter_file(path, label="target", stream="elec"))


def read_messages(values: list[bytes]) -> list:
    parse = MessageParser(label="target")
    out: list = []
    for offset, value in enumerate(values):
        out.extend(parse(b"elec", value, f"elec@{offset}"))
    return out


def measure(run, repeat: int, profile: str | None) -> tuple[float, list]:
    """The best CPU time of ``repeat`` runs, and the last run's records."""
    best, records = float("inf"), []
    for _ in range(repeat):
        started = time.process_time()
        records = run()
        best = min(best, time.process_time() - started)
    if profile:
        cProfile.runctx("run()", {}, {"run": run}, profile)
    return best, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--profile", metavar="FILE")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        csv_path, jsonl_path, single, batched = write_inputs(Path(tmp), args.copies)
        kinds = {
            "csv": lambda: read_file(csv_path),
            "jsonl": lambda: read_file(jsonl_path),
            "kafka, a row a message": lambda: read_messages(single),
            "kafka, 100 rows a message": lambda: read_messages(batched),
        }
        reference = None
        print(f"{'kind':28} {'rows':>8} {'CPU s':>8} {'rows/s':>10}")
        for kind, run in kinds.items():
            profile = f"{args.profile}.{kind.split(',')[0]}{len(kind)}" if args.profile else None
            seconds, records = measure(run, args.repeat, profile)
            examples = [(r.x, r.y) for r in records if isinstance(r, Example)]
            if len(examples) != len(records):
                raise SystemExit(f"{kind}: {len(records) - len(examples)} rows rejected")
            if reference is None:
                reference = examples
            elif examples != reference:
                raise SystemExit(f"{kind}: not the examples of the CSV")
            print(f"{kind:28} {len(records):8d} {seconds:8.3f} {len(records) / seconds:10,.0f}")


if __name__ == "__main__":
    main()

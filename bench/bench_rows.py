"""Rows per second: Electricity read as CSV, ARFF, JSON Lines and Kafka message values.

    .venv/bin/python bench/bench_rows.py [--repeat N] [--copies N] [--profile FILE] [--before REV]
                                         [--data elec|covtype]

Times (CPU seconds of this process, the best of ``--repeat``) the source side of a run, from the
file's bytes to :class:`~foldstream.operators.records.base.Example` records, on all of Electricity
(45,312 rows, repeated ``--copies`` times so that a measure lasts long enough):

- ``csv``: :func:`~foldstream.connectors.files.iter_file` on ``elec.csv``;
- ``arff``: the same rows as ARFF (the class a declared nominal attribute);
- ``jsonl``: the same rows written as JSON Lines (numbers as JSON numbers, the class a string);
- ``kafka, a row a message``: :class:`~foldstream.connectors.messages.MessageParser` on one
  JSON object per message value, as the Flink job's source calls it;
- ``kafka, 100 rows a message``: the same rows as JSON arrays of 100 rows.

``--data covtype`` reads all of Forest Covertype (``dataset://covtype``, 581,012 rows of 54
features) instead, as CSV, ARFF and JSON Lines only.

Every kind is checked to give the same examples (features, label) as the CSV. ``--profile
FILE`` writes a cProfile of each kind to ``FILE.<kind>``. ``--before REV`` times the readers of
git revision ``REV`` instead (its ``connectors/rows.py``, ``files.py`` and ``messages.py``, read
with ``git show`` and run under their module names), for a before/after in turns.
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import json
import subprocess
import sys
import tempfile
import types
import time
from pathlib import Path

from foldstream import connectors
from foldstream.connectors.datasets import dataset_path
from foldstream.operators.records.base import Example

ELEC = Path(connectors.__file__).parent / "data" / "elec.csv.gz"
READERS = ("rows", "files", "messages")  # connectors/<name>.py, in the order they import


def use_revision(rev: str) -> None:
    """Put the readers of git revision ``rev`` in place of this checkout's."""
    root = Path(__file__).resolve().parents[1]
    for name in READERS:
        path = f"connectors/{name}.py"
        source = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=root, check=True,
                                capture_output=True, text=True).stdout
        module = types.ModuleType(f"foldstream.connectors.{name}")
        module.__file__, module.__package__ = str(root / path), "foldstream.connectors"
        sys.modules[module.__name__] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)


def write_inputs(folder: Path, copies: int, data: str = "elec",
                 ) -> tuple[dict[str, Path], list[bytes], list[bytes]]:
    """The rows of ``data`` as CSV, ARFF and JSON Lines files, and as message values (one row,
    100 rows); its label is ``target``."""
    source = ELEC if data == "elec" else dataset_path("covtype")
    lines = gzip.decompress(source.read_bytes()).decode("utf-8").splitlines()
    header, body = lines[0], lines[1:] * copies
    names = header.split(",")[:-1] + ["target"]  # the label, last, named alike
    paths = {fmt: folder / f"{data}.{fmt}" for fmt in ("csv", "arff", "jsonl")}
    paths["csv"].write_text("\n".join([",".join(names), *body]) + "\n", encoding="utf-8")
    classes = list(dict.fromkeys(line.rsplit(",", 1)[1] for line in body))
    paths["arff"].write_text("".join([f"@relation {data}\n",
                                      *(f"@attribute {name} numeric\n" for name in names[:-1]),
                                      f"@attribute target {{{','.join(classes)}}}\n@data\n",
                                      *(line + "\n" for line in body)]), encoding="utf-8")
    rows = [{name: (value if name == "target" else float(value))
             for name, value in zip(names, line.split(","))} for line in body]
    texts = [json.dumps(row, separators=(",", ":")) for row in rows]
    paths["jsonl"].write_text("\n".join(texts) + "\n", encoding="utf-8")
    single = [text.encode() for text in texts]
    batched = [("[" + ",".join(texts[i:i + 100]) + "]").encode()
               for i in range(0, len(texts), 100)]
    return paths, single, batched


def read_file(path: Path) -> list:
    from foldstream.connectors.files import iter_file

    return list(iter_file(path, label="target", stream="elec"))


def read_messages(values: list[bytes]) -> list:
    from foldstream.connectors.messages import MessageParser

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
    parser.add_argument("--before", metavar="REV", help="time the readers of this revision")
    parser.add_argument("--data", choices=("elec", "covtype"), default="elec")
    args = parser.parse_args()
    if args.before:
        use_revision(args.before)
    with tempfile.TemporaryDirectory() as tmp:
        paths, single, batched = write_inputs(Path(tmp), args.copies, args.data)
        kinds = {fmt: (lambda path=path: read_file(path)) for fmt, path in paths.items()}
        if args.data == "elec":
            kinds["kafka, a row a message"] = lambda: read_messages(single)
            kinds["kafka, 100 rows a message"] = lambda: read_messages(batched)
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

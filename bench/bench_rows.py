"""Rows per second: Electricity read as CSV, ARFF, JSON Lines and Kafka message values.

    .venv/bin/python bench/bench_rows.py [--repeat N] [--copies N] [--profile FILE] [--before REV]
                                         [--data elec|covtype] [--row-parser]
                                         [--blocks-from BYTES]

Times (CPU seconds of this process, the best of ``--repeat``) the source side of a run, from the
file's bytes to :class:`~foldstream.operators.records.base.Example` records, on all of Electricity
(45,312 rows, repeated ``--copies`` times so that a measure lasts long enough):

- ``csv``: :func:`~foldstream.connectors.files.iter_file` on ``elec.csv``;
- ``arff``: the same rows as ARFF (the class a declared nominal attribute);
- ``jsonl``: the same rows written as JSON Lines (numbers as JSON numbers, the class a string);
- ``kafka, a row a message``: :class:`~foldstream.connectors.messages.MessageParser` on one
  JSON object per message value, as the Flink job's source calls it;
- ``kafka, 100 rows a message``: the same rows as JSON arrays of 100 rows.

``--row-parser`` times each file with the row parser alone too (the block reader
set aside), next to the block reader; ``--blocks-from BYTES`` reads files from that size by
blocks (0: Electricity too). ``--data covtype`` reads all of Forest Covertype
(``dataset://covtype``, 581,012 rows of 54 features) instead, as CSV, ARFF and JSON Lines.

The records are consumed one after the other and dropped, as an engine takes them (none is
kept). Every kind is checked to give the same first 50,000 examples (features, label) as the
CSV, and to reject no row. ``--profile FILE`` writes a cProfile of each kind to
``FILE.<kind>``. ``--before REV`` times the readers of git revision ``REV`` instead (its
``connectors/rows.py``, ``files.py`` and ``messages.py``, read with ``git show`` and run under
their module names), for a before/after in turns.
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import itertools
import json
import subprocess
import sys
import tempfile
import types
import time
from collections.abc import Iterator
from pathlib import Path

from foldstream import connectors
from foldstream.connectors.datasets import dataset_path
from foldstream.operators.records.base import Example

ELEC = Path(connectors.__file__).parent / "data" / "elec.csv.gz"
READERS = ("rows", "files", "messages")
CHECKED = 50_000  # the first examples of each kind compared with the CSV's  # connectors/<name>.py, in the order they import


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


def read_file(path: Path) -> Iterator:
    from foldstream.connectors.files import iter_file

    return iter_file(path, label="target", stream="elec")


def row_parser_only(path: Path) -> Iterator:
    """:func:`read_file` with the row parser alone (no block reader)."""
    from foldstream.connectors import files

    block_reader, files._block_reader = files._block_reader, lambda schema: None
    try:
        yield from read_file(path)
    finally:
        files._block_reader = block_reader


def read_messages(values: list[bytes]) -> Iterator:
    from foldstream.connectors.messages import MessageParser

    parse = MessageParser(label="target")
    for offset, value in enumerate(values):
        yield from parse(b"elec", value, f"elec@{offset}")


def consume(records: Iterator) -> tuple[int, int]:
    """Read ``records`` as an engine does, one after the other, none kept: (examples, others)."""
    examples = others = 0
    for record in records:
        if isinstance(record, Example):
            examples += 1
        else:
            others += 1
    return examples, others


def measure(run, repeat: int, profile: str | None) -> tuple[float, tuple[int, int]]:
    """The best CPU time of ``repeat`` runs, and the last run's counts (:func:`consume`)."""
    best, counts = float("inf"), (0, 0)
    for _ in range(repeat):
        started = time.process_time()
        counts = consume(run())
        best = min(best, time.process_time() - started)
    if profile:
        cProfile.runctx("consume(run())", {"consume": consume}, {"run": run}, profile)
    return best, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--profile", metavar="FILE")
    parser.add_argument("--before", metavar="REV", help="time the readers of this revision")
    parser.add_argument("--data", choices=("elec", "covtype"), default="elec")
    parser.add_argument("--row-parser", action="store_true",
                        help="time each file with the row parser alone too, next to "
                             "the block reader (same process, same minute)")
    parser.add_argument("--blocks-from", type=int, metavar="BYTES",
                        help="the size from which a file is read by blocks (default 10 MB)")
    args = parser.parse_args()
    if args.before:
        use_revision(args.before)
    if args.blocks_from is not None:
        from foldstream.connectors import files

        files._BLOCK_BYTES = args.blocks_from
    with tempfile.TemporaryDirectory() as tmp:
        paths, single, batched = write_inputs(Path(tmp), args.copies, args.data)
        kinds = {}
        for fmt, path in paths.items():
            kinds[fmt] = lambda path=path: read_file(path)
            if args.row_parser:
                kinds[f"{fmt}, row parser only"] = lambda path=path: row_parser_only(path)
        if args.data == "elec":
            kinds["kafka, a row a message"] = lambda: read_messages(single)
            kinds["kafka, 100 rows a message"] = lambda: read_messages(batched)
        reference = None
        print(f"{'kind':28} {'rows':>8} {'CPU s':>8} {'rows/s':>10}")
        for kind, run in kinds.items():
            profile = f"{args.profile}.{kind.split(',')[0]}{len(kind)}" if args.profile else None
            seconds, (examples, others) = measure(run, args.repeat, profile)
            if others:
                raise SystemExit(f"{kind}: {others} rows rejected")
            check = [(r.x, r.y) for r in itertools.islice(run(), CHECKED)]
            if reference is None:
                reference = check
            elif check != reference:
                raise SystemExit(f"{kind}: not the examples of the CSV")
            print(f"{kind:28} {examples:8d} {seconds:8.3f} {examples / seconds:10,.0f}")


if __name__ == "__main__":
    main()

"""File and generator input of the Flink job, read inside the job: no size limit.

**Files.** A file source is read by Flink's own ``FileSource`` in the TaskManagers, with a line
format of foldstream's (``java/foldstream/flink/LineBlocks.java``, compiled on first use and
shipped with the job) whose records are blocks of up to :data:`BLOCK_LINES` lines: a line sent
to Python on its own costs more to cross than to parse (bench/README.md). A line format cannot
be split: one split per file, read at parallelism 1, so the lines come in file order; gzip is
decompressed by the file's extension (``.gz``), and a gzip file named otherwise (or a plain
file named ``.gz``) is read through a link whose name says what it holds (in-process, gzip is
told by the content). The source's position (the blocks read) is in every checkpoint: a restart
reads on from there. The lines are parsed by the in-process engine's readers
(:func:`foldstream.connectors.files.read_lines`: the row parser, or for a large file the block
reader) in the stream's fan-out, whose keyed state keeps the line number and the examples
accepted (:class:`SourceRead`): the same rows are accepted and rejected, for the same reasons,
at the same positions. The client reads the header only (CSV's first line, ARFF's header
section): it checks it at start, as in-process, and ships the file's schema with the job.

The lines are decoded as ISO-8859-1, which maps every byte to one character, and encoded back
to bytes in Python: a line that is not UTF-8 reaches the parser as the same bytes, and is
rejected as in-process. Java ends a line at ``\\n``, ``\\r\\n`` and also at a lone ``\\r``; the
in-process reader at ``\\n`` only: a file with lone carriage returns inside its lines is read
differently. A damaged gzip file fails the job (in-process, it ends the source with a rejected
record).

**Generators.** A generator source is a ``NumberSequenceSource`` of ``0 .. limit-1`` (its
position in the checkpoint), whose numbers are ticks: the fan-out takes the generator's next
item on each. The generator runs in the fan-out's Python worker; after a restart, the worker
builds it again from its seed and skips the items the restored state has taken, so that the
items go on exactly where the checkpoint stands.

**Other input** (a source given to the Python API as objects, labels whose delay is simulated
by the client): the client writes its items, encoded (:func:`encode_item`), one a line into a
file, which the ``FileSource`` reads as above.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

from pyflink.common import Row, Types, WatermarkStrategy

from foldstream.job.config import Config
from foldstream.job.engines.flink.keying import key_by_first_field
from foldstream.operators.downloads import JDK_INSTALL
from foldstream.operators.stages.delay import LabelOnly
from foldstream.operators.records.base import Example, Rejected

#: A source line on its way to the fan-out: ``Row(stream, text)``, keyed in Java by ``stream``.
RAW_ITEM_TYPE = Types.ROW([Types.STRING(), Types.STRING()])

#: How the line formats decode a file: one character per byte, so the bytes survive.
FILE_CHARSET = "ISO-8859-1"
#: The most lines, and about the most characters, in a block of a file's lines.
BLOCK_LINES, BLOCK_CHARS = 2048, 1 << 20
JAVA_SOURCE = Path(__file__).parent / "java" / "foldstream" / "flink" / "LineBlocks.java"
JDK_HINT = ("engine.kind: flink reads a file through a Java class compiled on first use, which "
            f"needs {JDK_INSTALL}")


@dataclass
class SourceRead:
    """How far the fan-out has read its stream's source, kept in its keyed state: ``lines``,
    the lines (file) or ticks (generator) taken; ``accepted``, the items that were not
    rejected, which ``source.limit`` counts."""

    lines: int = 0
    accepted: int = 0


def _read_of(head) -> SourceRead:
    if head.reader is None:
        head.reader = SourceRead()
    return head.reader


# ------------------------------------------------------------------------------------ decoders
def encode_item(item: Example | LabelOnly | Rejected) -> tuple[str, str]:
    """A source item as ``(stream, JSON text)``, the text in ASCII (no line ends).

    >>> decode_item(encode_item(LabelOnly("s", 7, "u", "f.jsonl:3", simulated=True))[1])
    LabelOnly(stream='s', key=7, y='u', location='f.jsonl:3', simulated=True, not_example=None)
    """
    if isinstance(item, Rejected):
        return item.stream or "", json.dumps(
            {"t": "r", "s": item.stream, "reason": item.reason, "raw": item.raw, "l": item.location})
    if isinstance(item, LabelOnly):
        return item.stream, json.dumps({"t": "l", "s": item.stream, "y": item.y, "k": item.key,
                                        "l": item.location, "sim": item.simulated,
                                        "u": item.not_example})
    return item.stream, json.dumps({"t": "e", "s": item.stream, "x": item.x, "y": item.y,
                                    "k": item.key, "l": item.location})


def decode_item(text: str) -> Example | LabelOnly | Rejected:
    d = json.loads(text)
    if d["t"] == "r":
        return Rejected(d["s"], d["reason"], d["raw"], d["l"])
    if d["t"] == "l":
        return LabelOnly(d["s"], d["k"], d["y"], d["l"], d["sim"], d["u"])
    return Example(d["s"], d["x"], d["y"], d["k"], d["l"])


class DecodeItem:
    """The fan-out's decoder of client items (:func:`encode_item`): the text -> the item."""

    def __call__(self, text: str, head) -> list[Example | LabelOnly | Rejected]:
        return [decode_item(text)]


class DecodeLines:
    """The fan-out's decoder of a block of a file's lines (:data:`BLOCK_LINES`, joined by
    ``\\n``): their items, as in-process (:func:`~foldstream.connectors.files.read_lines`),
    up to ``source.limit`` examples. The file's block reader, when it has one, is made in the
    worker, on the first block."""

    def __init__(self, reader):
        self.reader = reader  # a LineReader: the file's schema, stream, name and limit
        self._blocks: list = []  # [the file's block reader or None], once made in this worker

    def __getstate__(self):
        return {**self.__dict__, "_blocks": []}

    def __call__(self, block: str, head) -> Iterator[Example | LabelOnly | Rejected]:
        from foldstream.connectors.files import line_blocks, read_lines

        read, limit = _read_of(head), self.reader.limit
        lines = block.split("\n")
        first, read.lines = read.lines + 1, read.lines + len(lines)
        if limit is not None and read.accepted >= limit:
            return
        if not self._blocks:
            self._blocks.append(line_blocks(self.reader))
        numbered = [(n, line.encode(FILE_CHARSET)) for n, line in enumerate(lines, first)]
        for item in read_lines(self.reader, numbered, self._blocks[0]):
            yield item
            if not isinstance(item, Rejected):
                read.accepted += 1
                if read.accepted == limit:
                    return


class DecodeGenerated:
    """The fan-out's decoder of a generator's ticks: the generator's next item (none once it
    has ended). The generator lives in the worker, beside the keyed state that counts the
    items taken; a worker that finds it missing or behind (a restart) builds it again and
    skips what the state has taken."""

    def __init__(self, model: str, params, seed: int | None, limit: int, stream: str | None,
                 class_ratio=None):
        self.spec = (model, params, seed, limit, stream, class_ratio)
        self._live: tuple[Iterable, list[int]] | None = None  # (items, taken) in this worker

    def __getstate__(self):
        return {**self.__dict__, "_live": None}

    def __call__(self, tick: str, head) -> list[Example | Rejected]:
        from foldstream.connectors.generators import iter_generator

        read = _read_of(head)
        if self._live is None or self._live[1][0] != read.lines:
            items = iter_generator(*self.spec)
            next(itertools.islice(items, read.lines, read.lines), None)  # skip those taken
            self._live = (items, [read.lines])
        items, taken = self._live
        item = next(items, None)
        read.lines += 1
        taken[0] = read.lines
        return [] if item is None else [item]


# ------------------------------------------------------------------------------------ sources
class FileInput(NamedTuple):
    """A file or generator source as the job reads it: the lines or ticks keyed by stream, the
    fan-out's decoder of them, and the streams known before the run (for the summaries of an
    interrupted run)."""

    keyed: object  # a KeyedStream of the texts, keyed by stream
    decode: object
    streams: list[str]


class _Tag:
    """A line -> ``Row(stream, line)``."""

    def __init__(self, stream: str):
        self.stream = stream

    def __call__(self, line) -> Row:
        return Row(self.stream, str(line))


def _untag(line: str) -> Row:
    """A line of a staged file (``JSON stream <tab> item text``) -> ``Row(stream, text)``."""
    stream, _, text = line.partition("\t")
    return Row(json.loads(stream), text)


def line_blocks_jar(cache_dir: Path | None = None) -> Path:
    """The jar of :data:`JAVA_SOURCE`, compiled against this PyFlink's Flink once (in
    :func:`~foldstream.operators.downloads.default_cache_dir`)."""
    import pyflink

    from foldstream.operators.downloads import compiled_classes

    lib = sorted((Path(pyflink.__file__).parent / "lib").glob("*.jar"))
    classes = compiled_classes([JAVA_SOURCE], lib, "foldstream-flink-classes", JDK_HINT,
                               key=" ".join(jar.name for jar in lib), cache_dir=cache_dir)
    jar = classes / "line-blocks.jar"
    if not jar.is_file():
        part = classes / f"line-blocks.jar.{os.getpid()}"
        with zipfile.ZipFile(part, "w") as out:
            for member in sorted(classes.rglob("*.class")):
                out.write(member, member.relative_to(classes).as_posix())
        os.replace(part, jar)
    return jar


def _lines(env, path: Path, name: str, blocks: bool = False):
    """The lines of ``path`` in order, read by Flink's ``FileSource`` at parallelism 1: one a
    record, or in blocks (:data:`BLOCK_LINES`)."""
    from pyflink.datastream.connectors.file_system import FileSource, StreamFormat

    if blocks:
        from pyflink.java_gateway import get_gateway

        env.add_jars(line_blocks_jar().as_uri())
        lines = StreamFormat(get_gateway().jvm.foldstream.flink.LineBlocks(BLOCK_LINES,
                                                                           BLOCK_CHARS))
    else:
        lines = StreamFormat.text_line_format(FILE_CHARSET)
    source = FileSource.for_record_stream_format(lines, str(path)).build()
    return env.from_source(source, WatermarkStrategy.no_watermarks(), name).set_parallelism(1)


def _keyed(stream, tag, name: str):
    rows = stream.map(tag, output_type=RAW_ITEM_TYPE).set_parallelism(1).name(name)
    return key_by_first_field(rows, Types.STRING())


def _is_gzip(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(2) == b"\x1f\x8b"


def readable_path(path: Path, workdir: Path) -> Path:
    """``path``, or a link to it in ``workdir`` named so that Flink, which tells gzip by the
    extension, reads it as its content says (``.gz`` added or taken away).

    >>> import gzip, tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> (d / "a.csv").write_bytes(gzip.compress(b"x\\n")) and readable_path(d / "a.csv", d / "w").name
    'a.csv.gz'
    >>> (d / "b.csv").write_text("x\\n") and readable_path(d / "b.csv", d / "w").name
    'b.csv'
    """
    path = path.resolve()
    named = path.name.lower().endswith(".gz")
    if _is_gzip(path) == named:
        return path
    workdir.mkdir(parents=True, exist_ok=True)
    link = workdir / (path.name + ".gz" if not named else path.name[:-3])
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(path)
    return link


@contextlib.contextmanager
def workdir(config: Config) -> Iterator[Path]:
    """Where the client puts what the job reads besides the input (links, staged items): in the
    checkpoint folder when the run has one (a resumed run finds them again), else a temporary
    folder, removed when the run ends."""
    if config.checkpoint_dir is not None:
        yield config.checkpoint_dir / "input"
        return
    with tempfile.TemporaryDirectory(prefix="foldstream-input-") as where:
        yield Path(where)


def configured_input(env, config: Config, where: Path) -> FileInput:
    """The configured file or generator source, read inside the job (see the module doc)."""
    source = config.source
    if source.kind == "generator":
        from foldstream.connectors.generators import dataset_stream, make_generator
        from pyflink.datastream.connectors.number_seq import NumberSequenceSource

        stream = source.stream or dataset_stream(make_generator(source.model, source.params,
                                                                source.seed))
        ticks = env.from_source(NumberSequenceSource(0, source.limit - 1),
                                WatermarkStrategy.no_watermarks(), "ticks").set_parallelism(1)
        return FileInput(_keyed(ticks, _Tag(stream), "generator"),
                         DecodeGenerated(source.model, source.params, source.seed, source.limit,
                                         source.stream, source.class_ratio and
                                         source.class_ratio.schedule()), [stream])
    from foldstream.connectors.files import line_reader

    reader = line_reader(source.resolved_path(), label=source.label, stream=source.stream,
                         nominal=source.nominal, id_field=source.id_field, limit=source.limit,
                         fmt=source.format, labels_later=config.delayed)
    path = readable_path(source.resolved_path(), where)
    blocks = _lines(env, path, "file", blocks=True)
    return FileInput(_keyed(blocks, _Tag(reader.stream), "lines"),
                     DecodeLines(reader), [reader.stream])


def staged_input(env, items: Iterable, where: Path) -> FileInput:
    """``items`` written one a line into a file in ``where``, read by the job (see the module
    doc); with no stream if there are none (and nothing to read)."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / "items.txt"
    streams: dict[str, None] = {}
    with path.open("w", encoding="ascii") as out:
        for item in items:
            stream, text = encode_item(item)
            streams.setdefault(stream, None)
            out.write(f"{json.dumps(stream)}\t{text}\n")
    if not streams:
        return FileInput(None, None, [])
    return FileInput(_keyed(_lines(env, path, "items"), _untag, "items"), DecodeItem(),
                     list(streams))


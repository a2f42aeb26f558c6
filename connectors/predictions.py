"""``sink.predictions``: every example's prediction per learner and fold, in a Parquet file.

The aggregator hands each report's rows over as a ``predictions`` record
(:mod:`foldstream.operators.records.predictions`); this sink appends them to one Parquet file (pyarrow,
which the Flink wheel brings), one row group per record, compressed with zstd. Parquet, not
JSON Lines: the rows are many (one per example and fold) and alike, a columnar file stores them
in a fraction of the bytes and pandas reads them back typed and fast
(:meth:`foldstream.Results.predictions`); bench/README.md measures both.

The file is written to ``<path>.partial`` and renamed to ``path`` when the run ends, so a file
at ``path`` is always whole (a Parquet file is readable only once its footer is written).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from foldstream.connectors.sinks import Sink
from foldstream.operators.records.predictions import columns_of, prediction_column, score_column


def schema(learners: Sequence[str], scores: bool):
    """The Parquet schema of a run's predictions."""
    import pyarrow as pa

    fields = [pa.field("stream", pa.string()), pa.field("position", pa.int64()),
              pa.field("id", pa.string()), pa.field("fold", pa.int32()),
              pa.field("label", pa.string())]
    for name in learners:
        fields.append(pa.field(prediction_column(name), pa.string()))
        if scores:
            fields.append(pa.field(score_column(name), pa.list_(pa.float64())))
    return pa.schema(fields)


class PredictionsSink(Sink):
    """Append ``predictions`` records to a Parquet file at ``path`` (see the module)."""

    def __init__(self, path: str | Path, learners: Sequence[str], scores: bool):
        import pyarrow.parquet as pq

        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.columns = columns_of(learners, scores)
        self.schema = schema(learners, scores)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = pq.ParquetWriter(self.partial, self.schema, compression="zstd")
        self.rows = 0

    def write(self, record: dict[str, Any]) -> None:
        import pyarrow as pa

        self._check_open()
        columns = record["columns"]
        table = pa.Table.from_pydict({name: columns[name] for name in self.columns},
                                     schema=self.schema)
        self._writer.write_table(table)
        self.rows += table.num_rows

    def close(self) -> None:
        if self.closed:
            return
        self._writer.close()
        os.replace(self.partial, self.path)
        super().close()


def read_predictions(path: str | Path):
    """A predictions file as a pandas DataFrame, in the order it was written (stream, position,
    fold)."""
    import pandas as pd

    return pd.read_parquet(path)

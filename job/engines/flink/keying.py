"""Keying a stream in Java: a Python key selector costs a round trip per element."""

from __future__ import annotations

from pyflink.common import Types
from pyflink.datastream import DataStream


def key_by_first_field(rows: DataStream, record_type):
    """A stream of ``Row(key, record)`` (``key`` a string) as a ``KeyedStream`` of ``record``
    keyed by ``key``, with the keying done in Java.

    ``DataStream.key_by`` runs its key selector in Python: one more Java-Python round trip per
    element before the keyed operator, which cost throughput and a bundle's worth of latency.
    Here the stream is shaped as PyFlink's own ``key_by`` would shape it (``Row(key, record)``,
    keyed on field 0) and keyed by a Java selector, so a Python ``KeyedProcessFunction`` reads
    ``record`` and its key as usual.
    """
    from pyflink.datastream.data_stream import KeyedStream
    from pyflink.java_gateway import get_gateway

    j_keyed = rows._j_data_stream.keyBy(get_gateway().jvm.KeyByKeySelector(),
                                        Types.ROW([Types.STRING()]).get_java_type_info())
    return KeyedStream(j_keyed, record_type, rows)

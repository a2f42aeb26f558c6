"""How long a collected text takes to reach a Flink run's client, by its length and by how the
client reads it (bench/README.md).

    .venv/bin/python bench/bench_collect.py [--texts 24] [--lengths 1000,6000,7000,16000,35000]

One local Flink job per length collects ``--texts`` texts of that many characters through
``execute_and_collect``, as a Flink run's records reach its client. The texts are the job's
elements from the start (no Python operator), so the job has ended and they all wait in the
collect sink's buffer when the client reads them: what is timed is the reading alone. Each is
read twice, in turn: through PyFlink's iterator, which hands each text back into the JVM to be
pickled, and straight from the Java iterator, as
:func:`~foldstream.job.engines.flink.run._texts` reads them. Printed: the milliseconds per
text (the median of the gaps between texts).
"""

from __future__ import annotations

import argparse
import statistics
import time

from foldstream.job.engines.flink.env import make_env
from foldstream.job.engines.flink.run import _texts


def per_text_ms(length: int, texts: int, straight: bool) -> float:
    from pyflink.common import Types

    env = make_env(1, [], {})
    elements = [f"{i:06d}" + "x" * (length - 6) for i in range(texts)]
    stream = env.from_collection(elements, type_info=Types.STRING())
    seen = []
    with stream.execute_and_collect("collect") as results:
        for text in _texts(results) if straight else results:
            assert len(text) == length
            seen.append(time.perf_counter())
    assert len(seen) == texts
    return statistics.median(b - a for a, b in zip(seen, seen[1:])) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=24)
    parser.add_argument("--lengths", default="1000,6000,7000,8000,16000,35000,200000")
    args = parser.parse_args()
    print(f"{'characters':>10} {'PyFlink iterator':>17} {'straight':>9}  (ms per text, median)")
    for length in (int(n) for n in args.lengths.split(",")):
        pyflink = per_text_ms(length, args.texts, straight=False)
        straight = per_text_ms(length, args.texts, straight=True)
        print(f"{length:>10,} {pyflink:>17.1f} {straight:>9.1f}", flush=True)


if __name__ == "__main__":
    main()

"""The memory and time of remembering every done key of a delayed stream (docs/method.md §13).

    .venv/bin/python bench/bench_done_keys.py [--int-keys 5000000] [--text-keys 1000000]

A stream with delayed labels remembers every key labelled or expired
(:class:`foldstream.operators.stages.delay.DoneKeys`), so that a late label is rejected with its true
reason (``expired``, ``already labelled`` or ``unknown``) whatever its age. This is the one part
of the delayed state that grows with the stream. The benchmark sets ``--int-keys`` integer keys
and ``--text-keys`` text keys, then looks each up once and looks up as many keys never seen, and
prints the process's RSS growth per key and the time per operation. It exits with status 1 if a
lookup is wrong.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

from foldstream.operators.stages.delay import DoneKeys


def rss_mb() -> float:
    """This process's resident memory, in MiB."""
    with open(f"/proc/{os.getpid()}/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--int-keys", type=int, default=5_000_000)
    parser.add_argument("--text-keys", type=int, default=1_000_000)
    args = parser.parse_args()
    keys = [*range(1, args.int_keys + 1), *(f"order-{i}" for i in range(args.text_keys))]
    never = [*range(-args.int_keys, 0), *(f"never-{i}" for i in range(args.text_keys))]
    gc.collect()
    before = rss_mb()
    done = DoneKeys()
    t0 = time.perf_counter()
    for i, key in enumerate(keys):
        done.set(key, DoneKeys.EXPIRED if i % 4 else DoneKeys.LABELLED)
    t1 = time.perf_counter()
    wrong = sum(done.get(key) != (DoneKeys.EXPIRED if i % 4 else DoneKeys.LABELLED)
                for i, key in enumerate(keys))
    t2 = time.perf_counter()
    t3 = time.perf_counter()
    wrong += sum(done.get(key) != 0 for key in never)
    t4 = time.perf_counter()
    gc.collect()
    grown = rss_mb() - before
    n = len(keys)
    print(f"{args.int_keys:,} integer and {args.text_keys:,} text keys done")
    print(f"arrays {done.nbytes / n:.2f} bytes/key; RSS grown {grown:.1f} MiB = "
          f"{grown * 2**20 / n:.2f} bytes/key (the recent keys' dict included)")
    print(f"set {1e6 * (t1 - t0) / n:.2f} us, get (done) {1e6 * (t2 - t1) / n:.2f} us, "
          f"get (never seen) {1e6 * (t4 - t3) / len(never):.2f} us")
    print(f"wrong lookups: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

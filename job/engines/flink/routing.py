"""Which Flink subtask a key lands on, so the folds of a stream can be spread evenly.

Flink sends a keyed record to key group ``murmur(hash(key)) % max_parallelism`` and the key
group to subtask ``group * parallelism // max_parallelism``. Ten fold keys such as ``elec|0`` ..
``elec|9`` happen to fall 7 and 3 on two subtasks, which would leave one core half idle. So
:func:`fold_routes` makes keys ``stream|i|salt`` whose salt is picked to put key ``i`` on subtask
``(i + offset) % parallelism``: the learner tasks take one such key per subtask, over which the
folds are dealt (``job.learner_targets``), the evaluators apart (``learner_fold`` keying) one
per fold. This file mirrors Flink's hashing in plain Python;
``tests/test_flink_job.py`` checks it against the JVM's own ``KeyGroupRangeAssignment``.

PyFlink keys a stream by ``Row(key)``: its hash is the key's Java ``hashCode()`` plus 62.
"""

from __future__ import annotations

from functools import lru_cache

_MASK = 0xFFFFFFFF

#: Flink's ``pipeline.max-parallelism`` of every job, fixed so that the fold routes chosen here
#: land on the subtasks they were aimed at.
MAX_PARALLELISM = 128


def _int32(x: int) -> int:
    x &= _MASK
    return x - (1 << 32) if x >= 1 << 31 else x


def _rotl(x: int, r: int) -> int:
    x &= _MASK
    return _int32((x << r) | (x >> (32 - r)))


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` of Java (UTF-16 code units).

    >>> java_string_hash("elec|0")
    -1300574855
    """
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK
    return _int32(h)


def murmur_hash(code: int) -> int:
    """``org.apache.flink.util.MathUtils.murmurHash``."""
    code = _int32(code * 0xCC9E2D51)
    code = _rotl(code, 15)
    code = _int32(code * 0x1B873593)
    code = _rotl(code, 13)
    code = _int32(code * 5 + 0xE6546B64)
    code ^= 4
    h = code & _MASK
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    code = _int32(h)
    if code >= 0:
        return code
    return -code if code != -(1 << 31) else 0


def subtask_of(key: str, parallelism: int, max_parallelism: int = 128) -> int:
    """The subtask a ``key_by(..., key_type=Types.STRING())`` key is processed on."""
    row_hash = _int32(java_string_hash(key) + 62)
    return (murmur_hash(row_hash) % max_parallelism) * parallelism // max_parallelism


@lru_cache(maxsize=1024)
def fold_routes(stream: str, folds: int, parallelism: int, max_parallelism: int = 128) -> tuple[str, ...]:
    """``folds`` keys of ``stream``, spread round robin over the subtasks.

    >>> routes = fold_routes("elec", 10, 2)
    >>> sorted(subtask_of(r, 2) for r in routes)
    [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    """
    offset = murmur_hash(java_string_hash(stream)) % parallelism
    routes = []
    for fold in range(folds):
        want = (fold + offset) % parallelism
        salt = 0
        while subtask_of(f"{stream}|{fold}|{salt}", parallelism, max_parallelism) != want:
            salt += 1
        routes.append(f"{stream}|{fold}|{salt}")
    return tuple(routes)

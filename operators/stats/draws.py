"""Python's seeded draws, many at once: ``random.Random(text).random()`` and ``.choice``, compiled.

Why: the noise filter of docs/method.md §14 (:mod:`.noise`) makes every draw from a generator
of its own, seeded by a text (its seed, the weight learned so far and the number of predictions
made), so that a replay, the other engine and a rerun draw the same. Seeding CPython's Mersenne
Twister from a text costs about 7 µs of CPU (the text's SHA-512, an integer of its bytes,
MT19937's ``init_by_array`` over 624 words and a whole twist for the first word), a fifth of an
experiment replication's CPU with MOA's learners (bench/README.md). Here the same arithmetic runs as one ``numba`` loop over
a batch of texts, with the twist cut to the words the draws read: each draw's uniform and
choice are *exactly* those of ``random.Random(text)`` (CPython 3.11+: ``seed`` version 2,
``random``'s 53-bit ``genrand_res53``, ``choice`` by ``_randbelow_with_getrandbits``), checked
against ``random`` itself in tests/test_draws.py. Changing the draws would change every
published rate.

The compiled loop is cached on disk (``cache=True``) and imported on first use through
:func:`foldstream.operators.stats.detectors.compiled` (numba's import costs about half a second).
"""

from __future__ import annotations

from hashlib import sha512

import numpy as np
from numba import njit

_N, _M = 624, 397
_MATRIX_A = np.uint32(0x9908B0DF)
_UPPER, _LOWER = np.uint32(0x80000000), np.uint32(0x7FFFFFFF)


def _genrand_init(seed: int) -> np.ndarray:
    """MT19937's ``init_genrand(seed)``: the state ``init_by_array`` starts from (a constant)."""
    mt = np.zeros(_N, dtype=np.uint64)
    mt[0] = seed
    for i in range(1, _N):
        mt[i] = (1812433253 * (int(mt[i - 1]) ^ (int(mt[i - 1]) >> 30)) + i) & 0xFFFFFFFF
    return mt.astype(np.uint32)


_START = _genrand_init(19650218)


@njit(cache=True)
def _temper(y):
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return y


@njit(cache=True)
def _word(mt, k):
    """The ``k``-th output of the state ``mt`` right after seeding (its first twist): for
    ``k < N - M`` only words ``k``, ``k + 1`` and ``k + M`` of the seeded state take part."""
    y = (mt[k] & _UPPER) | (mt[k + 1] & _LOWER)
    v = mt[k + _M] ^ (y >> np.uint32(1))
    if y & np.uint32(1):
        v ^= _MATRIX_A
    return _temper(v)


@njit(cache=True)
def _twisted(mt):
    """The whole first twist of ``mt`` (only for a choice that needs more than N - M words)."""
    out = mt.copy()
    for kk in range(_N):
        y = (out[kk] & _UPPER) | (out[(kk + 1) % _N] & _LOWER)
        v = out[(kk + _M) % _N] ^ (y >> np.uint32(1))
        if y & np.uint32(1):
            v ^= _MATRIX_A
        out[kk] = v
    return out


_LANES = 16
"""Texts seeded side by side: ``init_by_array`` is a chain of 1,247 dependent steps, so one text
at a time waits on each multiply; 16 chains step together (and the compiler vectorises them)."""


@njit(cache=True)
def _keys(data, ends, lo, hi, count, ext):
    """Column ``t - lo`` of ``ext``: the key word and its index that step ``s`` of
    ``init_by_array``'s first loop adds, for the text ``t`` (``lo <= t < hi``)."""
    key = np.empty(count, dtype=np.uint32)
    for t in range(lo, hi):
        begin = ends[t - 1] if t > 0 else 0
        end = ends[t]
        first = begin
        while first < end and data[first] == 0:  # an integer has no leading zero bytes
            first += 1
        length = max(1, (end - first + 3) // 4)
        for j in range(length):  # little-endian 32-bit words of the big-endian integer
            w = np.uint32(0)
            for b in range(4):
                at = end - 4 * j - 4 + b
                w = (w << np.uint32(8)) | (np.uint32(data[at]) if at >= first else np.uint32(0))
            key[j] = w
        j = 0
        for s in range(count):
            ext[s, t - lo] = key[j] + np.uint32(j)
            j += 1
            if j >= length:
                j = 0


@njit(cache=True)
def _seed(start, ext, count, mt):
    """``init_by_array`` from ``init_genrand(19650218)`` (``start``) for every column of
    ``mt`` (N x lanes) at once; ``ext`` from :func:`_keys`."""
    for lane in range(mt.shape[1]):
        mt[:, lane] = start
    i = 1
    for s in range(count):
        for lane in range(mt.shape[1]):
            p = mt[i - 1, lane]
            mt[i, lane] = (mt[i, lane] ^ ((p ^ (p >> np.uint32(30))) * np.uint32(1664525))) \
                + ext[s, lane]
        i += 1
        if i >= _N:
            mt[0, :] = mt[_N - 1, :]
            i = 1
    for _ in range(_N - 1):
        for lane in range(mt.shape[1]):
            p = mt[i - 1, lane]
            mt[i, lane] = (mt[i, lane] ^ ((p ^ (p >> np.uint32(30))) * np.uint32(1566083941))) \
                - np.uint32(i)
        i += 1
        if i >= _N:
            mt[0, :] = mt[_N - 1, :]
            i = 1
    mt[0, :] = np.uint32(0x80000000)


@njit(cache=True)
def draws_run(data, ends, sizes, start, uniforms, choices):
    """Per text ``t`` (the bytes ``data[ends[t-1]:ends[t]]``: the text's and its SHA-512's,
    as ``random.seed`` joins them) the uniform and, when ``sizes[t] > 0``, the index of the
    choice among ``sizes[t]`` items that ``random.Random(text)`` gives."""
    texts = ends.shape[0]
    mt = np.empty((_N, _LANES), dtype=np.uint32)
    ext = np.empty((_N, _LANES), dtype=np.uint32)
    lo = 0
    while lo < texts:
        longest = (ends[lo] - (ends[lo - 1] if lo > 0 else 0) + 3) // 4
        if longest > _N:  # a text of more than 2,496 bytes: on its own, its own step count
            hi = lo + 1
            count = longest
            group = np.empty((_N, 1), dtype=np.uint32)
            steps = np.empty((count, 1), dtype=np.uint32)
        else:
            hi = lo
            while hi < texts and hi - lo < _LANES and \
                    (ends[hi] - (ends[hi - 1] if hi > 0 else 0) + 3) // 4 <= _N:
                hi += 1
            count = _N
            group = mt
            steps = ext
        _keys(data, ends, lo, hi, count, steps)
        _seed(start, steps, count, group)
        column = np.empty(_N, dtype=np.uint32)
        for t in range(lo, hi):
            column[:] = group[:, t - lo]
            a = _word(column, 0) >> np.uint32(5)
            b = _word(column, 1) >> np.uint32(6)
            uniforms[t] = (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)
            n = sizes[t]
            if n <= 0:
                choices[t] = -1
                continue
            bits = 0
            while (n >> bits) > 0:
                bits += 1
            shift = np.uint32(32 - bits)
            k = 2
            full = column  # the twisted state, once a choice reads past word N - M
            while True:
                if k < _N - _M:
                    r = np.int64(_word(column, k) >> shift)
                else:
                    if k == _N - _M:
                        full = _twisted(column)
                    if k >= _N:
                        raise ValueError("a choice needs more than one twist")
                    r = np.int64(_temper(full[k]) >> shift)
                k += 1
                if r < n:
                    break
            choices[t] = r
        lo = hi


def key_bytes(text: str) -> bytes:
    """The bytes whose big-endian integer ``random.seed(text)`` (version 2) seeds with.

    >>> import hashlib; key_bytes("a") == b"a" + hashlib.sha512(b"a").digest()
    True
    """
    raw = text.encode()
    return raw + sha512(raw).digest()


def draws(texts: list[str], sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per text, ``random.Random(text).random()`` and, when its size is positive, the index
    that ``random.Random(text)``'s ``choice`` takes after that ``random()`` from a sequence of
    that size (else -1).

    >>> import random
    >>> u, c = draws(["1:0.0:0", "1:3.0:1"], [2, 3])
    >>> r = random.Random("1:3.0:1"); (float(u[1]), int(c[1])) == (r.random(), r.choice(range(3)))
    True
    """
    if any(size >= 2**32 for size in sizes):  # getrandbits of more than one word
        raise ValueError("a choice among 2**32 items or more is not drawn here")
    keys = [key_bytes(text) for text in texts]
    data = np.frombuffer(b"".join(keys), dtype=np.uint8)
    ends = np.cumsum([len(k) for k in keys], dtype=np.int64)
    uniforms = np.empty(len(texts), dtype=np.float64)
    choices = np.empty(len(texts), dtype=np.int64)
    if texts:
        draws_run(data, ends, np.asarray(sizes, dtype=np.int64), _START, uniforms, choices)
    return uniforms, choices

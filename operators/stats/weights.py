"""Fold weights as a pure function of ``(seed, stream, key, fold)`` (docs/method.md §2).

A counter-based generator: each weight is computed from a 64-bit hash of its coordinates, so a
replay after a failure, a rescaled Flink job and the in-process engine draw the very same
weights, whatever the batch size or the order in which folds are served. Vectorised over a batch
with numpy ``uint64`` arithmetic (which wraps, as the hash needs).
"""

from __future__ import annotations

import hashlib
import math
from typing import Sequence

import numpy as np

MODES = ("bootstrap", "cv", "split", "single")
FOLD_CHOICES = ("random", "round_robin")

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_CHOICE_DOMAIN = np.uint64(0xD1B54A32D192ED03)  # separates the cv/split fold choice from weights


def _mix(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser: a bijective avalanche mix of 64-bit integers."""
    z = z ^ (z >> np.uint64(30))
    z = z * _M1
    z = z ^ (z >> np.uint64(27))
    z = z * _M2
    return z ^ (z >> np.uint64(31))


def _hash64(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def derive_seed(seed: int | None, fold: int) -> int:
    """A learner seed for fold ``fold``, derived from a configured ``seed`` (docs/method.md §14).

    A pure function (the blake2b hash of both, as the weights' stream hash), so every engine and
    every replay gives a fold the same seed; in ``[0, 2**31)``, which every river model accepts.
    ``None`` (an unseeded learner) derives from 0.

    >>> derive_seed(1, 0) == derive_seed(1, 0), derive_seed(1, 0) != derive_seed(1, 1)
    (True, True)
    """
    return _hash64(f"fold-seed:{0 if seed is None else seed}:{fold}") >> 33


def key_codes(keys: Sequence[int | str]) -> np.ndarray:
    """Example keys as uint64: integers as themselves (mod 2**64), anything else hashed."""
    return np.array([key_code(k) for k in keys], dtype=np.uint64)


def key_code(key: int | str) -> int:
    """One example key as :func:`key_codes` codes it."""
    return key % (1 << 64) if isinstance(key, int) else _hash64(f"k:{key}")


def uniforms(seed: int, stream: str, keys: Sequence[int | str], lanes: np.ndarray) -> np.ndarray:
    """Uniform numbers in [0, 1), one per (key, lane): an ``len(keys) x len(lanes)`` array."""
    base = np.uint64(_hash64(f"s:{seed}:{stream}"))
    k = key_codes(keys)[:, None]
    with np.errstate(over="ignore"):
        h = _mix(_mix(k * _GOLDEN + base) + lanes[None, :].astype(np.uint64) * _GOLDEN)
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


# P(X <= j) for X ~ Poisson(1), j = 0..19; the tail beyond is below 1e-17.
_POISSON1_CDF = np.cumsum([math.exp(-1.0) / math.factorial(j) for j in range(20)])


def fold_weights(
    mode: str,
    folds: int,
    seed: int,
    stream: str,
    keys: Sequence[int | str],
    positions: np.ndarray | None = None,
    fold_choice: str = "random",
) -> np.ndarray:
    """The ``len(keys) x folds`` integer weights of a batch.

    Parameters
    ----------
    mode
        ``bootstrap`` (Poisson(1) per fold), ``cv`` (one fold 0, others 1), ``split`` (one fold 1,
        others 0) or ``single`` (one fold, weight 1).
    folds
        k, the number of folds.
    seed, stream, keys
        The coordinates the weights are a function of.
    positions
        1-based positions of the examples in their stream; used by ``fold_choice='round_robin'``,
        which picks fold ``(position - 1) mod k`` as MOA's EvaluatePrequentialCV does.

    Examples
    --------
    >>> w = fold_weights("cv", 4, seed=1, stream="s", keys=[1, 2, 3])
    >>> (w.sum(axis=1) == 3).all(), w.shape
    (np.True_, (3, 4))
    >>> fold_weights("split", 3, 1, "s", [1, 2, 3, 4], np.array([1, 2, 3, 4]), "round_robin")
    array([[1, 0, 0],
           [0, 1, 0],
           [0, 0, 1],
           [1, 0, 0]])
    """
    n = len(keys)
    if mode == "single":
        return np.ones((n, 1), dtype=np.int64)
    if mode == "bootstrap":
        u = uniforms(seed, stream, keys, np.arange(folds))
        return np.searchsorted(_POISSON1_CDF, u, side="right").astype(np.int64)
    if mode not in ("cv", "split"):
        raise ValueError(f"unknown validation mode {mode!r}; expected one of {MODES}")
    if fold_choice == "round_robin":
        if positions is None:
            raise ValueError("round_robin fold choice needs the examples' positions")
        chosen = (np.asarray(positions, dtype=np.int64) - 1) % folds
    elif fold_choice == "random":
        u = uniforms(seed, stream, keys, np.array([_CHOICE_DOMAIN], dtype=np.uint64))[:, 0]
        chosen = np.minimum((u * folds).astype(np.int64), folds - 1)
    else:
        raise ValueError(f"unknown fold_choice {fold_choice!r}; expected one of {FOLD_CHOICES}")
    hit = np.arange(folds)[None, :] == chosen[:, None]
    if mode == "cv":
        return (~hit).astype(np.int64)
    return hit.astype(np.int64)

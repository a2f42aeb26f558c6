"""Imbalance-aware, histogram-based normalisation of binary measures (docs/method.md §8).

Brzezinski et al. (§III-B) normalise the value ``x`` of a measure ``M`` on a window with ``P``
positives and ``N`` negatives by the fraction of all ``(P+1)(N+1)`` binary confusion matrices
with those class totals whose value of ``M`` is ``<= x``::

    N(M, P:N, x) = #{(tp, fp) : M(tp, P - tp, fp, N - fp) <= x} / ((P+1)(N+1))

with ``tp`` in ``0..P`` and ``fp`` in ``0..N``. A matrix on which ``M`` is undefined (0/0)
counts as the lowest value, so it is always counted. The result is the probability that a
confusion matrix drawn uniformly at random is no better than the observed one: the higher,
the less room for improvement at this class ratio.

>>> x, info = normalize("precision", 150, 10, 0.9)
>>> x == 506 / 1661, info
(True, {'positives': 150, 'negatives': 10, 'scaled': False})
>>> normalize("precision", 10, 150, 0.9)[0] == 1650 / 1661
True

Everything here is vectorised with numpy over the ``tp x fp`` grid, and the sorted grid
values are cached per ``(measure, P, N)``, so a normalisation is one binary search.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from foldstream.operators.stats import measures

__all__ = ["NORMALIZABLE", "MAX_MATRICES", "binary_measure", "normalize", "scale_counts"]

#: The binary measures :func:`binary_measure` computes and :func:`normalize` accepts. Measures
#: that need more than the confusion matrix (``kappa_m``, ``kappa_per``, ``kappa_plus``: they
#: depend on a baseline's predictions) cannot be normalised this way.
NORMALIZABLE = (
    "accuracy",
    "precision",
    "recall",
    "f1",
    "kappa",
    "mcc",
    "geometric_mean",
    "balanced_accuracy",
)

MAX_MATRICES = 40_000
"""Default largest grid of confusion matrices a normalisation enumerates (``evaluation.max_matrices``)."""

#: Grid values within this distance of the value being normalised count as equal to it, so
#: that the same fraction computed by two formulas (rounding differently) is counted alike.
#: Distinct grid values are much further apart (at least about ``1/(P+N)**2``).
_TOLERANCE = 1e-12


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, NaN where ``den == 0`` (the measure is undefined there)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)


def binary_measure(name: str, tp, fn, fp, tn):
    """A binary measure from the cells of a confusion matrix, vectorised.

    The matrix has rows = true class, the positive class first: ``tp`` true positives (true +,
    predicted +), ``fn`` false negatives (true +, predicted -), ``fp`` false positives (true -,
    predicted +), ``tn`` true negatives. Counts may be weighted (non-integer). The formulas are
    those of :mod:`foldstream.operators.stats.measures` (the same code), on the matrix's row and
    column totals; the table gives them in the four cells.

    ===================== ===================================================================
    name                  definition
    ===================== ===================================================================
    ``accuracy``          ``(tp + tn) / n``
    ``precision``         ``tp / (tp + fp)``
    ``recall``            ``tp / (tp + fn)``
    ``f1``                ``2 tp / (2 tp + fp + fn)``
    ``kappa``             Cohen's ``(p0 - pc) / (1 - pc)``, computed as
                          ``2 (tp tn - fn fp) / ((tp + fp)(fp + tn) + (tp + fn)(fn + tn))``
    ``mcc``               ``(tp tn - fp fn) / sqrt((tp + fp)(tp + fn)(tn + fp)(tn + fn))``
    ``geometric_mean``    ``sqrt(recall_+ * recall_-)``, ``recall_- = tn / (tn + fp)``
    ``balanced_accuracy`` ``(recall_+ + recall_-) / 2``
    ===================== ===================================================================

    Parameters
    ----------
    name : str
        One of :data:`NORMALIZABLE`.
    tp, fn, fp, tn : array_like
        The four cells; they are broadcast against each other.

    Returns
    -------
    numpy.ndarray or float
        The measure, ``NaN`` where a denominator is 0 (undefined). A plain ``float`` when all
        four inputs are scalars.

    Examples
    --------
    Table 5 of Bifet et al. (docs/method.md §5): true ``+``: 40 predicted ``+``, 30 predicted ``-``;
    true ``-``: 5 predicted ``+``, 25 predicted ``-``.

    >>> [round(binary_measure(m, 40, 30, 5, 25), 6)
    ...  for m in ("accuracy", "kappa", "mcc", "geometric_mean", "balanced_accuracy")]
    [0.65, 0.326923, 0.372839, 0.690066, 0.702381]
    >>> binary_measure("precision", [0, 1, 3], [1, 1, 1], [0, 1, 1], [5, 5, 5])
    array([ nan, 0.5 , 0.75])
    """
    scalar = all(np.ndim(c) == 0 for c in (tp, fn, fp, tn))
    # at least 1-d: numpy's array arithmetic for scalars too (its ** 0.5 is np.sqrt, a scalar's is pow)
    tp, fn, fp, tn = np.broadcast_arrays(*(np.atleast_1d(np.asarray(c, dtype=float))
                                           for c in (tp, fn, fp, tn)))
    n, correct = tp + fn + fp + tn, tp + tn
    rows, cols = (tp + fn, fp + tn), (tp + fp, fn + tn)  # true +, true -; predicted +, predicted -
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "accuracy":
            out = _div(correct, n)
        elif name == "precision":
            out = _div(tp, cols[0])
        elif name == "recall":
            out = _div(tp, rows[0])
        elif name == "f1":
            out = _div(*measures.f1_terms(tp, fp, fn))
        elif name == "kappa":
            # The 2x2 closed form of measures.compute's (p0 - pc) / (1 - pc): on integer counts
            # its numerator and denominator are exact, so equal kappas are equal floats
            # (p0 - pc cancels: up to 1e-7 off near pc = 1, far beyond _TOLERANCE).
            out = _div(2.0 * (tp * tn - fn * fp), cols[0] * rows[1] + rows[0] * cols[1])
        elif name == "mcc":
            # The 2x2 closed form of measures.compute's, exact on integer counts and without
            # n^2 - sum(totals^2), which cancels on weighted counts of an unbalanced window.
            out = _div(tp * tn - fp * fn, np.sqrt(cols[0] * rows[0] * rows[1] * cols[1]))
        elif name == "geometric_mean":
            out = measures.geometric_mean([_div(tp, rows[0]), _div(tn, rows[1])])
        elif name == "balanced_accuracy":
            out = measures.arithmetic_mean([_div(tp, rows[0]), _div(tn, rows[1])])
        else:
            raise ValueError(f"unknown or non-normalisable binary measure {name!r}; "
                             f"expected one of {', '.join(NORMALIZABLE)}")
    if scalar:
        return float(out[0])
    return out


# ----------------------------------------------------------------------------------------------
# scaling a large P:N down
# ----------------------------------------------------------------------------------------------


def _ratio_error(p: int, n: int, positives: int, negatives: int) -> float:
    return abs(math.log(p / n) - math.log(positives / negatives))


def scale_counts(positives: int, negatives: int, max_matrices: int) -> tuple[int, int, bool]:
    """Scale ``P`` and ``N`` down in proportion so that ``(P+1)(N+1) <= max_matrices``.

    Nothing changes when the grid is small enough already. Otherwise both counts are multiplied
    by the largest common factor that fits, then rounded so as to keep the ratio ``P:N`` as
    well as possible (a non-zero count stays at least 1; a zero count stays 0).

    Parameters
    ----------
    positives, negatives : int
        The class totals ``P`` and ``N`` (non-negative).
    max_matrices : int
        The largest grid allowed, at least 4.

    Returns
    -------
    tuple of (int, int, bool)
        ``(P_used, N_used, scaled)``.

    Examples
    --------
    >>> scale_counts(150, 10, 40_000)
    (150, 10, False)
    >>> scale_counts(1000, 100, 40_000)
    (620, 62, True)
    >>> scale_counts(0, 100_000, 40_000)
    (0, 39999, True)
    """
    p_orig, n_orig, limit = int(positives), int(negatives), int(max_matrices)
    if p_orig < 0 or n_orig < 0:
        raise ValueError(f"class totals must be non-negative, got P={p_orig}, N={n_orig}")
    if limit < 4:
        raise ValueError(f"max_matrices must be at least 4, got {limit}")
    if (p_orig + 1) * (n_orig + 1) <= limit:
        return p_orig, n_orig, False
    if p_orig == 0:
        return 0, limit - 1, True
    if n_orig == 0:
        return limit - 1, 0, True

    # the largest s with (sP + 1)(sN + 1) <= limit
    total, product = p_orig + n_orig, p_orig * n_orig
    s = (-total + math.sqrt(total * total + 4.0 * product * (limit - 1))) / (2.0 * product)

    # choose the smaller side among a few candidates, fit the larger one to it
    small, large = (p_orig, n_orig) if p_orig <= n_orig else (n_orig, p_orig)
    centre = s * small
    candidates = {max(1, c) for c in (math.floor(centre) - 1, math.floor(centre), math.ceil(centre))}
    best: tuple[float, int, int, int] | None = None
    for c_small in sorted(candidates):
        c_large = min(max(1, round(c_small * large / small)), limit // (c_small + 1) - 1)
        if c_large < 1:
            continue
        p, n = (c_small, c_large) if p_orig <= n_orig else (c_large, c_small)
        key = (_ratio_error(p, n, p_orig, n_orig), -(p + 1) * (n + 1), p, n)
        if best is None or key < best:
            best = key
    if best is None:  # only when limit is tiny; (1, 1) always fits a limit >= 4
        return 1, 1, True
    return best[2], best[3], True


# ----------------------------------------------------------------------------------------------
# normalisation
# ----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=32)
def _sorted_grid(name: str, positives: int, negatives: int) -> np.ndarray:
    """The values of ``name`` on every matrix with these totals, ascending; undefined = -inf."""
    tp = np.arange(positives + 1, dtype=float)[:, None]
    fp = np.arange(negatives + 1, dtype=float)[None, :]
    values = binary_measure(name, tp, positives - tp, fp, negatives - fp)
    values = np.where(np.isnan(values), -np.inf, values).ravel()
    values.sort()
    values.setflags(write=False)
    return values


def normalize(
    name: str,
    positives: int,
    negatives: int,
    value: float | None,
    max_matrices: int = MAX_MATRICES,
) -> tuple[float | None, dict]:
    """Normalise a binary measure's value by its distribution over all confusion matrices.

    Returns the fraction of the ``(P+1)(N+1)`` binary confusion matrices with ``P`` positives
    and ``N`` negatives whose value of the measure is ``<= value``; a matrix where the measure
    is undefined counts as the lowest value (always counted). When the grid would exceed
    ``max_matrices``, ``P`` and ``N`` are scaled down in proportion first
    (:func:`scale_counts`), and the returned dict says so.

    Parameters
    ----------
    name : str
        One of :data:`NORMALIZABLE`.
    positives, negatives : int
        The class totals ``P`` and ``N`` of the window the value was measured on.
    value : float or None
        The measured value; ``None`` (or ``NaN``: undefined) gives ``None``.
    max_matrices : int, default MAX_MATRICES
        The largest grid to enumerate.

    Returns
    -------
    normalized : float or None
        In ``[0, 1]``; ``None`` when ``value`` is undefined.
    info : dict
        ``{"positives": P_used, "negatives": N_used, "scaled": bool}``.

    Examples
    --------
    The worked example of Brzezinski et al. (docs/method.md §8):

    >>> x, info = normalize("precision", 150, 10, 0.9)
    >>> round(x * 1661), info
    (506, {'positives': 150, 'negatives': 10, 'scaled': False})
    >>> x, info = normalize("precision", 10, 150, 0.9)
    >>> round(x * 1661), info["scaled"]
    (1650, False)
    >>> normalize("kappa", 5000, 400, 0.5)[1]
    {'positives': 700, 'negatives': 56, 'scaled': True}
    >>> normalize("f1", 10, 10, None)
    (None, {'positives': 10, 'negatives': 10, 'scaled': False})
    """
    if name not in NORMALIZABLE:
        raise ValueError(f"cannot normalise {name!r}; expected one of {', '.join(NORMALIZABLE)}")
    p, n, scaled = scale_counts(positives, negatives, max_matrices)
    info = {"positives": p, "negatives": n, "scaled": scaled}
    if value is None:
        return None, info
    x = float(value)
    if math.isnan(x):
        return None, info
    grid = _sorted_grid(name, p, n)
    count = int(np.searchsorted(grid, x + _TOLERANCE, side="right"))
    return count / grid.size, info

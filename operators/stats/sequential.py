"""Live verdicts: a confidence sequence for two learners' loss difference (docs/method.md §12).

The rolling fold tests of :mod:`.significance` (Wilcoxon, sign test, ...) are recomputed at every
report. Each of them controls its error at one fixed, planned sample size; a reader who watches
the reports and stops as soon as one says "significant" looks many times and so loses that
guarantee (the chance of ever seeing a false rejection grows towards one as the stream goes
on). This module gives instead a *confidence sequence*: a sequence of intervals that contain
the target at **every** ``n`` at once, with probability at least ``1 - alpha``, so the verdict
may be read at any time, as often as one likes, and acted upon when it is read. The guarantee
comes from Ville's inequality for a nonnegative supermartingale (Howard, Ramdas, McAuliffe and
Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49(2),
2021); comparing two forecasters this way is the setting of Choe and Ramdas, "Comparing
sequential forecasters", Operations Research, 2023.

The sequence
------------
For a pair of learners (A, B) and every scored example ``t``, in scored order,

    d_t = (1/k) sum_f (loss_A,f,t - loss_B,f,t)

over the ``k`` folds, with 0/1 loss; a fold that did not score ``t`` (holdout) contributes 0.
So ``d_t`` lies in ``[-1, 1]``, is a multiple of ``1/k``, and is positive when B did better. After
``n`` scored examples, ``S_n = sum_t d_t`` and the target is the running average of the
conditional means, ``Delta_n = (1/n) sum_t E[d_t | past]`` (for i.i.d. examples, simply the
expected difference of the two error rates).

The interval is the empirical-Bernstein confidence sequence of Howard et al. (2021, Thm. 4
with the polynomial stitching boundary of Thm. 1): with the predictable estimate ``m_{t-1}``,
the mean of ``d_1 .. d_{t-1}`` (0 for ``t = 1``), the variance process is
``V_n = sum_t (d_t - m_{t-1})^2`` and, with scale ``c = 2`` (the width of ``[-1, 1]``),

    l(v) = s log(log(eta v' / m)) + log(zeta(s) / (a (log eta)^s)),   v' = max(v, m)
    u(v) = sqrt(k1^2 v' l(v) + (k2 c l(v))^2) + k2 c l(v)
    k1 = (eta^(1/4) + eta^(-1/4)) / sqrt(2),   k2 = (sqrt(eta) + 1) / 2

(natural logarithms, ``zeta`` Riemann's), with ``eta = 2``, ``s = 1.4``, ``m = v_min = 100`` and
``a = alpha / 2`` per side, so that ``P(exists n: |S_n - n Delta_n| >= u(V_n)) <= alpha``. The
interval is ``[(S_n - u(V_n)) / n, (S_n + u(V_n)) / n]`` clipped to ``[-1, 1]`` (``[-1, 1]`` when
``n = 0``), and the verdict is ``"b_better"`` while its lower end is above 0, ``"a_better"`` while
its upper end is below 0, and ``"undecided"`` otherwise.

>>> f"{boundary(0, 0.05):.7f}", f"{boundary(1_000, 0.05):.7f}", f"{boundary(10**6, 0.05):.6f}"
('45.2449172', '136.7323272', '4216.966410')

Regime verdicts (docs/method.md §15)
------------------------------------
The sequence above is about the whole stream so far; under drift the learner that is better
*now* may stay "worse" over the stream for longer than the stream lasts. :class:`RegimeSequence`
answers "which is better since the comparison last changed": ADWIN (the project's one ADWIN,
``delta`` = ``evaluation.verdicts.regime_delta``) watches ``x_t = (d_t + 1) / 2`` and, after
each change it signals, a new *segment* starts with a fresh ``n``, ``S_n``, ``V_n`` and
predictable mean. Segment ``j`` runs at level ``alpha_j = alpha_v 6 / (pi^2 j^2)``
(:func:`segment_alpha`; the levels sum to ``alpha_v``) with the same :func:`boundary`, ``a =
alpha_j / 2`` per side. Each segment starts at a stopping time, so the argument above holds from
there on, and a union bound over the segments keeps the chance that any segment's interval ever
misses its own target at most ``alpha_v``. The worked values of §15:

>>> f"{segment_alpha(0.05, 1):.7f}", f"{segment_alpha(0.05, 2):.7f}"
('0.0303964', '0.0075991')
>>> [f"{boundary(v, segment_alpha(0.05, 1)):.4f}" for v in (100, 10_000)]
['48.3560', '430.4335']
>>> [f"{boundary(v, segment_alpha(0.05, 2)):.4f}" for v in (100, 10_000)]
['56.7362', '467.3589']

Exactness
---------
:class:`PairSequence` carries the integer sum of the numerators ``k d_t`` (exact at any length)
and adds each variance term as the correctly rounded square of an exact rational, one example
at a time in scored order. Its state after a sequence is therefore bit-for-bit the same however
the sequence was cut into calls, which the byte-identity of the output across batch sizes
relies on.

Why one module: the whole-stream sequence (:class:`PairSequence`) and the
regime sequence (:class:`RegimeSequence`, restarted when the comparison changes, at a level
spent by :func:`segment_alpha`) are one boundary, one interval and one verdict rule applied
to two spans of the stream; most of the module is the derivation above, which both follow.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

# The one ADWIN of the project (the windows of §4 and the alarms of §7 use it too): river's
# algorithm compiled, with the same decisions (operators/stats/detectors.py).
from foldstream.operators.stats.detectors import Adwin as ADWIN
from foldstream.operators.stats.windows import ADWIN_DELTA
from foldstream.operators.stats.significance import check_level as _check_alpha

__all__ = [
    "ETA",
    "S",
    "SCALE_C",
    "V_MIN",
    "A_BETTER",
    "B_BETTER",
    "UNDECIDED",
    "boundary",
    "boundary_array",
    "interval",
    "verdict_of",
    "result",
    "SequentialResult",
    "PairSequence",
    "fold_differences",
    "REGIME_DELTA",
    "segment_alpha",
    "RegimeResult",
    "RegimeSequence",
]

ETA = 2.0
"""Geometric spacing of the stitched epochs (``eta``)."""
S = 1.4
"""Exponent of the polynomial weights over the epochs (``s``, > 1)."""
SCALE_C = 2.0
"""Sub-exponential scale ``c``: the width of the range ``[-1, 1]`` of ``d_t``."""
V_MIN = 100.0
"""Default ``v_min`` (``m``): the intrinsic time below which the boundary stays at ``u(m)``."""

A_BETTER = "a_better"
B_BETTER = "b_better"
UNDECIDED = "undecided"

_K1 = (ETA**0.25 + ETA**-0.25) / math.sqrt(2.0)
_K2 = (math.sqrt(ETA) + 1.0) / 2.0
_LOG_ETA = math.log(ETA)
_TOLERANCE = 1e-6  # how far k * d may be from an integer numerator (float noise only)


@functools.cache
def _zeta_s() -> float:
    """Riemann's zeta at ``S``, computed on first use, so that importing this module
    does not import scipy (a command that needs no test starts without it)."""
    import scipy.special

    return float(scipy.special.zeta(S))


# ----------------------------------------------------------------------------------------------
# the boundary and the interval
# ----------------------------------------------------------------------------------------------


def _check_v_min(v_min: float) -> float:
    v_min = float(v_min)
    if not (v_min > 0.0 and math.isfinite(v_min)):
        raise ValueError(f"v_min must be a positive finite number, got {v_min}")
    return v_min


def boundary(variance: float, alpha: float, v_min: float = V_MIN) -> float:
    """The two-sided empirical-Bernstein boundary ``u(V)`` (polynomial stitching).

    Parameters
    ----------
    variance : float
        The variance process ``V_n >= 0`` (sum of squared deviations from the predictable
        mean).
    alpha : float
        The two-sided level in ``(0, 1)``; each side gets ``a = alpha / 2``.
    v_min : float, default V_MIN
        ``m``: below it the boundary is constant, ``u(V) = u(m)``.

    Returns
    -------
    float
        ``u(V)``: with probability at least ``1 - alpha``, ``|S_n - n Delta_n| < u(V_n)`` for
        every ``n`` at once.

    Examples
    --------
    The worked values of docs/method.md §12 (``alpha = 0.05``, ``c = 2``, ``m = 100``):

    >>> from foldstream.operators.stats.sequential import boundary
    >>> f"{boundary(0, 0.05):.7f}", f"{boundary(100, 0.05):.7f}"
    ('45.2449172', '45.2449172')
    >>> f"{boundary(1_000, 0.05):.7f}", f"{boundary(10_000, 0.05):.7f}"
    ('136.7323272', '416.4930746')
    >>> f"{boundary(10**6, 0.05):.6f}"
    '4216.966410'

    It grows like ``sqrt(V log log V)``, so ``u(V) / V`` shrinks:

    >>> boundary(10**6, 0.05) / 10**6 < boundary(10**4, 0.05) / 10**4
    True
    """
    alpha = _check_alpha(alpha)
    v_min = _check_v_min(v_min)
    variance = float(variance)
    if not (variance >= 0.0 and math.isfinite(variance)):
        raise ValueError(f"variance must be a nonnegative finite number, got {variance}")
    v = max(variance, v_min)
    a = alpha / 2.0
    ell = S * math.log(math.log(ETA * v / v_min)) + math.log(_zeta_s() / (a * _LOG_ETA**S))
    lin = _K2 * SCALE_C * ell
    return math.sqrt(_K1 * _K1 * v * ell + lin * lin) + lin


def boundary_array(variance: Any, alpha: float, v_min: float = V_MIN) -> np.ndarray:
    """:func:`boundary` for an array of variances (same formula, numpy; for curves and
    simulations).

    Examples
    --------
    >>> import numpy as np
    >>> from foldstream.operators.stats.sequential import boundary_array
    >>> np.round(boundary_array([0.0, 1_000.0, 10_000.0], 0.05), 4)
    array([ 45.2449, 136.7323, 416.4931])
    """
    alpha = _check_alpha(alpha)
    v_min = _check_v_min(v_min)
    variance = np.asarray(variance, dtype=np.float64)
    if not np.all(np.isfinite(variance) & (variance >= 0.0)):
        raise ValueError("variances must be nonnegative finite numbers")
    v = np.maximum(variance, v_min)
    a = alpha / 2.0
    ell = S * np.log(np.log(ETA * v / v_min)) + math.log(_zeta_s() / (a * _LOG_ETA**S))
    lin = _K2 * SCALE_C * ell
    return np.sqrt(_K1 * _K1 * v * ell + lin * lin) + lin


def interval(
    n: int, total: float, variance: float, alpha: float, v_min: float = V_MIN
) -> tuple[float, float]:
    """The confidence interval for ``Delta_n`` after ``n`` scored examples.

    Parameters
    ----------
    n : int
        The number of scored examples in the sequence.
    total : float
        ``S_n``, the sum of the ``d_t``.
    variance : float
        ``V_n``, the variance process.
    alpha : float
        Two-sided level of the whole sequence.
    v_min : float, default V_MIN
        ``m`` of :func:`boundary`.

    Returns
    -------
    lower, upper : float
        ``(S_n -+ u(V_n)) / n`` clipped to ``[-1, 1]``; ``(-1.0, 1.0)`` when ``n = 0``.

    Examples
    --------
    >>> from foldstream.operators.stats.sequential import interval
    >>> interval(0, 0.0, 0.0, 0.05)
    (-1.0, 1.0)
    >>> interval(10, 2.0, 5.0, 0.05)    # too few examples: the whole range
    (-1.0, 1.0)
    >>> lower, upper = interval(20_000, 400.0, 4_000.0, 0.05)
    >>> round(lower, 4), round(upper, 4)
    (0.0067, 0.0333)
    """
    n = int(n)
    if n < 0:
        raise ValueError(f"n must be nonnegative, got {n}")
    u = boundary(variance, alpha, v_min)
    if n == 0:
        return -1.0, 1.0
    total = float(total)
    lower = min(max((total - u) / n, -1.0), 1.0)
    upper = min(max((total + u) / n, -1.0), 1.0)
    return lower, upper


def verdict_of(lower: float, upper: float) -> str:
    """The live verdict of an interval: :data:`B_BETTER` while ``lower > 0``,
    :data:`A_BETTER` while ``upper < 0``, :data:`UNDECIDED` otherwise.

    Examples
    --------
    >>> from foldstream.operators.stats.sequential import verdict_of
    >>> verdict_of(0.01, 0.03), verdict_of(-0.03, -0.01), verdict_of(-0.01, 0.01)
    ('b_better', 'a_better', 'undecided')
    >>> verdict_of(0.0, 0.02)            # touching 0 is not excluding it
    'undecided'
    """
    if lower > 0.0:
        return B_BETTER
    if upper < 0.0:
        return A_BETTER
    return UNDECIDED


@dataclass(frozen=True, slots=True)
class SequentialResult:
    """The state of one pair's confidence sequence at one report.

    Attributes
    ----------
    n : int
        Scored examples so far.
    sum : float
        ``S_n``; ``sum / n`` is the observed mean difference (positive: B did better).
    variance : float
        ``V_n``.
    lower, upper : float
        The interval for ``Delta_n``.
    alpha : float
        The two-sided level ``alpha_v`` of this pair (after any Bonferroni correction).
    verdict : str
        :data:`A_BETTER`, :data:`B_BETTER` or :data:`UNDECIDED`.
    """

    n: int
    sum: float
    variance: float
    lower: float
    upper: float
    alpha: float
    verdict: str

    def as_record(self) -> dict[str, Any]:
        """The result as a JSON-ready dict of plain ``int``, ``float`` and ``str``.

        Examples
        --------
        >>> from foldstream.operators.stats.sequential import result
        >>> result(0, 0.0, 0.0, 0.05).as_record()  # doctest: +NORMALIZE_WHITESPACE
        {'n': 0, 'sum': 0.0, 'variance': 0.0, 'lower': -1.0, 'upper': 1.0, 'alpha': 0.05,
         'verdict': 'undecided'}
        """
        return {
            "n": int(self.n),
            "sum": float(self.sum),
            "variance": float(self.variance),
            "lower": float(self.lower),
            "upper": float(self.upper),
            "alpha": float(self.alpha),
            "verdict": str(self.verdict),
        }


def result(
    n: int, total: float, variance: float, alpha: float, v_min: float = V_MIN
) -> SequentialResult:
    """:func:`interval` and :func:`verdict_of` together, as a :class:`SequentialResult`.

    Examples
    --------
    >>> from foldstream.operators.stats.sequential import result
    >>> r = result(20_000, 400.0, 4_000.0, 0.05)
    >>> r.verdict, round(r.lower, 4), round(r.upper, 4)
    ('b_better', 0.0067, 0.0333)
    >>> result(20_000, -400.0, 4_000.0, 0.05).verdict
    'a_better'
    """
    lower, upper = interval(n, total, variance, alpha, v_min)
    return SequentialResult(
        n=int(n),
        sum=float(total),
        variance=float(variance),
        lower=lower,
        upper=upper,
        alpha=float(alpha),
        verdict=verdict_of(lower, upper),
    )


# ----------------------------------------------------------------------------------------------
# the accumulator
# ----------------------------------------------------------------------------------------------


def _advance(
    n: int, int_total: int, variance: float, kk: int, numerators: Iterable[int]
) -> tuple[int, int, float]:
    """The one place the state moves: one example at a time, in order.

    With ``T = int_total`` after ``n`` examples, ``d - m_n = (D n - T) / (k n)`` exactly, so
    each term is ``(D n - T)^2 / (k^2 n^2)``: an exact integer ratio that Python's true
    division rounds correctly (for ``n = 0``, ``m_0 = 0`` and the term is ``D^2 / k^2``, which
    the same expression gives with ``n`` replaced by 1).
    """
    for d in numerators:
        w = n if n else 1
        e = d * w - int_total
        variance += (e * e) / (kk * w * w)
        int_total += d
        n += 1
    return n, int_total, variance


@dataclass(slots=True)
class PairSequence:
    """The running state of one pair's confidence sequence: O(1), exact, picklable.

    The differences are fed as integer *numerators* ``D_t = k d_t`` in ``[-k, k]``
    (:meth:`update_numerator`, :meth:`extend_numerators`, and :func:`fold_differences` makes
    them from per-fold losses), or as the differences ``d_t`` themselves (:meth:`update`,
    :meth:`extend`), which must then be multiples of ``1/k`` (up to float noise) and are
    turned into numerators first. The state is three numbers and ``k``:

    * ``n``, the number of examples;
    * ``int_total = sum_t D_t``, an exact Python integer (``sum = int_total / k`` is ``S_n``,
      correctly rounded);
    * ``variance``, ``V_n``, a float to which each term ``(d_t - m_{t-1})^2`` is added as the
      correctly rounded value of an exact rational.

    Every entry point updates the state one example at a time in order through the same code,
    so the state after a sequence is bit-for-bit the same however the sequence is cut into
    calls. A call that is given an invalid value raises ``ValueError`` and leaves the state
    untouched.

    Parameters
    ----------
    k : int, default 1
        The number of folds: the denominator of the differences.

    Examples
    --------
    >>> from foldstream.operators.stats.sequential import PairSequence
    >>> seq = PairSequence(k=2)
    >>> for numerator in [1, 2, 0, -1, 1]:      # d = 0.5, 1, 0, -0.5, 0.5
    ...     seq.update_numerator(numerator)
    >>> seq.n, seq.int_total, seq.sum, seq.variance
    (5, 3, 1.5, 2.125)

    Cutting the stream differently, or feeding the differences, gives the same state:

    >>> other = PairSequence(k=2)
    >>> other.extend([0.5, 1.0])
    >>> other.extend_numerators([0, -1, 1])
    >>> other == seq
    True

    Five examples say nothing yet; the verdict waits for evidence:

    >>> seq.result(0.05).verdict
    'undecided'
    >>> seq.extend_numerators([1] * 2_000)     # B better on half the folds, 2,000 times
    >>> r = seq.result(0.05)
    >>> r.verdict, r.n, round(r.lower, 3), round(r.upper, 3)
    ('b_better', 2005, 0.477, 0.522)
    """

    k: int = 1
    n: int = 0
    int_total: int = 0
    variance: float = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int | np.integer) or self.k < 1:
            raise ValueError(f"k must be a positive integer, got {self.k!r}")
        self.k = int(self.k)
        if int(self.n) < 0:
            raise ValueError(f"n must be nonnegative, got {self.n}")
        self.n = int(self.n)
        self.int_total = int(self.int_total)
        self.variance = float(self.variance)

    # -- feeding ---------------------------------------------------------------------------

    def _numerator(self, d: float) -> int:
        x = float(d) * self.k
        if not math.isfinite(x):
            raise ValueError(f"difference must be finite, got {d!r}")
        numerator = round(x)
        if abs(x - numerator) > _TOLERANCE or abs(numerator) > self.k:
            raise ValueError(f"difference {d!r} is not a multiple of 1/{self.k} in [-1, 1]")
        return numerator

    def _check_numerators(self, numerators: Any) -> list[int]:
        arr = np.asarray(numerators)
        if arr.size == 0:
            return []
        if arr.ndim != 1:
            raise ValueError(f"numerators must be one-dimensional, got shape {arr.shape}")
        if arr.dtype.kind not in "iu":
            raise ValueError(f"numerators must be integers, got dtype {arr.dtype}")
        values = arr.tolist()  # Python ints: no overflow in the exact arithmetic
        if min(values) < -self.k or max(values) > self.k:
            raise ValueError(f"numerators must lie in [-{self.k}, {self.k}]")
        return values

    def _feed(self, numerators: Iterable[int]) -> None:
        self.n, self.int_total, self.variance = _advance(
            self.n, self.int_total, self.variance, self.k * self.k, numerators
        )

    def update_numerator(self, numerator: int) -> None:
        """Add one example with ``d_t = numerator / k``."""
        if isinstance(numerator, bool) or not isinstance(numerator, int | np.integer):
            raise ValueError(f"numerator must be an integer, got {numerator!r}")
        numerator = int(numerator)
        if abs(numerator) > self.k:
            raise ValueError(f"numerator must lie in [-{self.k}, {self.k}], got {numerator}")
        self._feed((numerator,))

    def extend_numerators(self, numerators: Iterable[int] | np.ndarray) -> None:
        """Add examples in order, ``d_t = numerator / k`` (integers, list or numpy array)."""
        if not isinstance(numerators, np.ndarray):
            numerators = list(numerators)
        self._feed(self._check_numerators(numerators))

    def update(self, d: float) -> None:
        """Add one example with difference ``d`` (a multiple of ``1/k`` in ``[-1, 1]``)."""
        self._feed((self._numerator(d),))

    def extend(self, values: Iterable[float] | np.ndarray) -> None:
        """Add examples in order, given as differences (multiples of ``1/k`` in ``[-1, 1]``)."""
        x = np.asarray(values if isinstance(values, np.ndarray) else list(values), np.float64)
        if x.size == 0:
            return
        if x.ndim != 1:
            raise ValueError(f"differences must be one-dimensional, got shape {x.shape}")
        scaled = x * self.k
        numerators = np.rint(scaled)
        if not np.all(np.isfinite(scaled)):
            raise ValueError("differences must be finite")
        if np.any(np.abs(scaled - numerators) > _TOLERANCE) or np.any(np.abs(numerators) > self.k):
            raise ValueError(f"differences must be multiples of 1/{self.k} in [-1, 1]")
        self._feed(numerators.astype(np.int64).tolist())

    # -- reading ---------------------------------------------------------------------------

    @property
    def sum(self) -> float:
        """``S_n = int_total / k`` (correctly rounded)."""
        return self.int_total / self.k

    def interval(self, alpha: float, v_min: float = V_MIN) -> tuple[float, float]:
        """:func:`interval` of the current state."""
        return interval(self.n, self.sum, self.variance, alpha, v_min)

    def result(self, alpha: float, v_min: float = V_MIN) -> SequentialResult:
        """:func:`result` of the current state."""
        return result(self.n, self.sum, self.variance, alpha, v_min)


# ----------------------------------------------------------------------------------------------
# from per-fold losses
# ----------------------------------------------------------------------------------------------


def fold_differences(
    losses_a: Any, losses_b: Any, scored: Any, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The integer numerators ``D_t = k d_t`` of a block of examples, from per-fold losses.

    Parameters
    ----------
    losses_a, losses_b : array of shape (k, T)
        0/1 losses (e.g. ``int8``) of learners A and B per fold and example. Entries where the
        fold did not score the example are ignored (any value).
    scored : bool array of shape (k, T)
        Whether the fold scored the example. A fold that did not score an example contributes
        0 to its difference (holdout), the divisor staying ``k``.
    k : int
        The number of folds (``shape[0]``).

    Returns
    -------
    numerators : int64 array of shape (T,)
        ``D_t = sum_f scored[f, t] * (losses_a[f, t] - losses_b[f, t])``, in ``[-k, k]``.
    mask : bool array of shape (T,)
        The examples scored by at least one fold. Only these belong to the sequence: feed
        ``numerators[mask]`` to :meth:`PairSequence.extend_numerators`. An example that no
        fold scored carries no evidence about the two learners; counting it as ``d_t = 0``
        would still add one to ``n`` (pulling the estimate towards 0 and shrinking the
        interval as if something had been observed) and a term ``m_{t-1}^2`` to ``V_n``, and
        would make the sequence depend on how many unscored examples the stream happened to
        hold.

    Examples
    --------
    >>> import numpy as np
    >>> from foldstream.operators.stats.sequential import fold_differences
    >>> a = np.array([[1, 0, 1, 1], [1, 1, 0, 0]], dtype=np.int8)
    >>> b = np.array([[0, 0, 1, 0], [0, 1, 1, 1]], dtype=np.int8)
    >>> scored = np.array([[1, 1, 0, 1], [1, 0, 0, 1]], dtype=bool)
    >>> numerators, mask = fold_differences(a, b, scored, 2)
    >>> numerators.tolist(), mask.tolist()
    ([2, 0, 0, 0], [True, True, False, True])
    """
    k = int(k)
    a = np.asarray(losses_a)
    b = np.asarray(losses_b)
    s = np.asarray(scored)
    if s.dtype != np.bool_:
        raise ValueError(f"scored must be a bool array, got dtype {s.dtype}")
    if a.ndim != 2 or a.shape != b.shape or a.shape != s.shape or a.shape[0] != k:
        raise ValueError(
            f"losses and scored must have the same shape (k={k}, T), got "
            f"{a.shape}, {b.shape} and {s.shape}"
        )
    a = a.astype(np.int64)
    b = b.astype(np.int64)
    if np.any(s & (a != 0) & (a != 1)) or np.any(s & (b != 0) & (b != 1)):
        raise ValueError("scored losses must be 0 or 1")
    numerators = np.where(s, a - b, 0).sum(axis=0, dtype=np.int64)
    return numerators, s.any(axis=0)


# ----------------------------------------------------------------------------------------------
# regime verdicts (docs/method.md §15)
# ----------------------------------------------------------------------------------------------

REGIME_DELTA = ADWIN_DELTA
"""Default ``delta`` of the ADWIN that cuts a pair's differences into segments
(``evaluation.verdicts.regime_delta``): the same default as every ADWIN of the project."""


def segment_alpha(alpha: float, segment: int) -> float:
    """``alpha_j = alpha 6 / (pi^2 j^2)``: the level of segment ``j`` (the levels sum to ``alpha``).

    Parameters
    ----------
    alpha : float
        The pair's level ``alpha_v`` (after any Bonferroni correction).
    segment : int
        ``j >= 1``.

    Examples
    --------
    >>> from foldstream.operators.stats.sequential import segment_alpha
    >>> round(segment_alpha(0.05, 1), 7), round(segment_alpha(0.05, 2), 7)
    (0.0303964, 0.0075991)
    >>> round(sum(segment_alpha(0.05, j) for j in range(1, 100_000)), 6)
    0.05
    """
    alpha = _check_alpha(alpha)
    segment = int(segment)
    if segment < 1:
        raise ValueError(f"segment must be a positive integer, got {segment}")
    return alpha * 6.0 / (math.pi**2 * segment * segment)


@dataclass(frozen=True, slots=True)
class RegimeResult:
    """The current segment's confidence sequence of one pair at one report (§15).

    Attributes
    ----------
    segment : int
        ``j``, the number of the current segment (1 until the first change).
    since : int or None
        The position of the segment's first example; ``None`` while it has none (no example
        scored yet, or a change detected at the last example so far).
    result : SequentialResult
        The segment's ``n``, ``sum``, ``variance``, interval, level ``alpha_j`` and verdict.
    """

    segment: int
    since: int | None
    result: SequentialResult

    @property
    def verdict(self) -> str:
        """The regime verdict: the current segment's (a new segment starts undecided)."""
        return self.result.verdict

    def as_record(self) -> dict[str, Any]:
        """``{segment, since, n, sum, variance, lower, upper, alpha, verdict}`` (§15).

        Examples
        --------
        >>> from foldstream.operators.stats.sequential import RegimeSequence
        >>> RegimeSequence(k=1).result(0.05).as_record()  # doctest: +NORMALIZE_WHITESPACE
        {'segment': 1, 'since': None, 'n': 0, 'sum': 0.0, 'variance': 0.0, 'lower': -1.0,
         'upper': 1.0, 'alpha': 0.03039635509270134, 'verdict': 'undecided'}
        """
        since = None if self.since is None else int(self.since)
        return {"segment": int(self.segment), "since": since, **self.result.as_record()}


class RegimeSequence:
    """One pair's regime sequence: ADWIN on ``(d_t + 1) / 2`` and the current segment's
    :class:`PairSequence` (docs/method.md §15).

    The detector sees every scored example and is never reset; when it signals after an
    example, the next scored example opens a new segment whose sequence starts from zero. The
    examples are fed, as for :class:`PairSequence`, as integer numerators ``D_t = k d_t`` in
    order, each with its stream position (for ``since``); the state after a sequence does not
    depend on how it was cut into calls (ADWIN checks for change every ``clock`` updates of its
    own count).

    Parameters
    ----------
    k : int, default 1
        The number of folds.
    delta : float, default REGIME_DELTA
        ADWIN's confidence parameter.

    Examples
    --------
    B better by a half for 3,000 examples, then A better by a half: ADWIN cuts, the new segment
    turns to A while the whole-stream sequence (fed the same examples) goes back to undecided.

    >>> from foldstream.operators.stats.sequential import PairSequence, RegimeSequence
    >>> regime, stream = RegimeSequence(k=2), PairSequence(k=2)
    >>> numerators = [1] * 3_000 + [-1] * 3_000
    >>> regime.extend_numerators(numerators[:2_500], range(1, 2_501))
    >>> regime.extend_numerators(numerators[2_500:], range(2_501, 6_001))
    >>> stream.extend_numerators(numerators)
    >>> r = regime.result(0.05)
    >>> r.segment > 1, 3_000 < r.since < 3_200, r.verdict, stream.result(0.05).verdict
    (True, True, 'a_better', 'undecided')
    """

    __slots__ = ("k", "delta", "detector", "segment", "since", "current")

    def __init__(self, k: int = 1, delta: float = REGIME_DELTA):
        self.current = PairSequence(k)
        self.k = self.current.k
        delta = float(delta)
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must lie in (0, 1), got {delta}")
        self.delta = delta
        self.detector = ADWIN(delta=delta)
        self.segment = 1
        self.since: int | None = None

    def extend_numerators(self, numerators: Iterable[int] | np.ndarray,
                          positions: Iterable[int] | np.ndarray) -> None:
        """Add examples in order: ``d_t = numerator / k`` at stream position ``positions[i]``."""
        if not isinstance(numerators, np.ndarray):
            numerators = list(numerators)
        values = self.current._check_numerators(numerators)
        where = [int(p) for p in (positions.tolist() if isinstance(positions, np.ndarray)
                                  else positions)]
        if len(where) != len(values):
            raise ValueError(f"{len(values)} numerators but {len(where)} positions")
        start = 0
        for cut in self.detect(values) + [len(values)]:
            if start < len(values) and self.since is None:
                self.since = where[start]
            self.current._feed(values[start:cut + 1])
            if cut < len(values):  # the detector signalled after example `cut`
                self.segment += 1
                self.current = PairSequence(self.k)
                self.since = None
            start = cut + 1

    def detect(self, numerators: list[int]) -> list[int]:
        """Feed the detector only; return the indices after which it signalled a change.

        :meth:`extend_numerators` cuts the segments there; simulations call it to run the one
        detector and recompute the segments' sums with numpy.
        """
        # (d_t + 1) / 2, one compiled call for all (a float division and addition round as
        # Python's do, so the detector sees the same values)
        values = (np.asarray(numerators, dtype=np.float64) / self.k + 1.0) / 2.0
        return np.flatnonzero(self.detector.update_many(values)).tolist()

    def result(self, alpha: float, v_min: float = V_MIN) -> RegimeResult:
        """The current segment's state at level ``segment_alpha(alpha, segment)``."""
        return RegimeResult(self.segment, self.since,
                            self.current.result(segment_alpha(alpha, self.segment), v_min))

"""Windows over one evaluator's scored examples (docs/method.md §3, §4).

A window keeps the weighted confusion counts of the examples it covers, together with how many
of them the two label-only baselines got right, so that ``p0``, ``pc``, ``pm`` and ``pper`` are
always measured over the same examples. Each example is a triple of class codes: the true class
``t``, the prediction ``p`` (-1: none) and the stream's previous label ``prev`` (-1: none),
which is the persistent baseline's prediction. The majority baseline predicts the most frequent
true class of the window *before* the example; ties go to the smallest code, the class seen
first in the stream.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from river.drift import ADWIN

#: The kinds of window, each with the name of its one parameter (``None``: it has none).
WINDOW_KINDS = {"cumulative": None, "sliding": "size", "fading": "alpha", "adwin": "delta"}
SLIDING_SIZE = 1000
"""Default ``size`` of a sliding window: the last this many scored examples."""
FADING_ALPHA = 0.999
"""Default fading factor (Gama et al. 2009): of a fading window, and of the Q statistic."""
ADWIN_DELTA = 0.002
"""Default ADWIN confidence ``delta`` (river's): of an ADWIN window, and of ADWIN alarms."""
_DEFAULTS = {"size": SLIDING_SIZE, "alpha": FADING_ALPHA, "delta": ADWIN_DELTA}


@dataclass(slots=True)
class Counts:
    """A read-only view of a window's counts (fading already applied).

    ``cm[(t, p)]`` is the weight of true class ``t`` predicted as ``p``; ``rows[t]`` the weight of
    true class ``t``; ``maj`` and ``per`` the weight the majority and persistent baselines got
    right; ``n`` the total weight.
    """

    n: float
    cm: dict[tuple[int, int], float]
    rows: dict[int, float]
    maj: float
    per: float


class Window:
    """Base class: exact integer counts with add and remove; subclasses decide what leaves."""

    kind = "cumulative"

    def __init__(self) -> None:
        self._cm: dict[tuple[int, int], int] = {}
        self._rows: dict[int, int] = {}
        self._maj = 0
        self._per = 0
        self._n = 0
        self._majority = -1  # the majority baseline's current prediction
        self.drift = False  # set by windows that detect change (ADWIN)

    @property
    def size(self) -> float:
        """The number of examples (fading: their total weight) in the window."""
        return self._n

    def majority(self) -> int:
        return self._majority

    def _add(self, t: int, p: int, maj_ok: int, per_ok: int) -> None:
        cm, rows = self._cm, self._rows
        cm[t, p] = cm.get((t, p), 0) + 1
        rt = rows[t] = rows.get(t, 0) + 1
        self._maj += maj_ok
        self._per += per_ok
        self._n += 1
        m = self._majority
        if m < 0 or rt > rows[m] or (rt == rows[m] and t < m):
            self._majority = t

    def _remove(self, cm: dict[tuple[int, int], int], maj: int, per: int, n: int) -> None:
        own, rows = self._cm, self._rows
        for (t, p), c in cm.items():
            left = own[t, p] - c
            if left:
                own[t, p] = left
            else:
                del own[t, p]
            left = rows[t] - c
            if left:
                rows[t] = left
            else:
                del rows[t]
        self._maj -= maj
        self._per -= per
        self._n -= n
        # Ties go to the class seen first in the stream, the smallest code.
        self._majority = min(rows, key=lambda c: (-rows[c], c)) if rows else -1

    def update(self, t: int, p: int, prev: int, maj: int | None = None) -> None:
        """Score one example: the baselines first (from the window before it), then add it.

        ``maj`` is the majority baseline's prediction when it was made earlier than now (a
        delayed label, docs/method.md §13: the window's majority when the example arrived);
        ``None``: the window's majority now.
        """
        self._add(t, p, int((self._majority if maj is None else maj) == t), int(prev == t))

    def counts(self) -> Counts:
        return Counts(float(self._n), {k: float(v) for k, v in self._cm.items()},
                      {k: float(v) for k, v in self._rows.items()}, float(self._maj),
                      float(self._per))



class CumulativeWindow(Window):
    """Every scored example since the start.

    >>> w = CumulativeWindow()
    >>> for t, p, prev in [(0, 0, -1), (1, 0, 0), (1, 1, 1)]:
    ...     w.update(t, p, prev)
    >>> c = w.counts(); (c.n, c.maj, c.per, w.majority())
    (3.0, 0.0, 1.0, 1)
    """


class SlidingWindow(Window):
    """The last ``size`` scored examples.

    >>> w = SlidingWindow(2)
    >>> for t, p, prev in [(0, 0, -1), (1, 0, 0), (1, 1, 1)]:
    ...     w.update(t, p, prev)
    >>> c = w.counts(); (c.n, c.cm, w.majority())
    (2.0, {(1, 0): 1.0, (1, 1): 1.0}, 1)
    """

    kind = "sliding"

    def __init__(self, size: int):
        super().__init__()
        self.width = check_size(size)
        self._buffer: deque[tuple[int, int, int, int]] = deque()

    def update(self, t: int, p: int, prev: int, maj: int | None = None) -> None:
        maj_ok, per_ok = int((self._majority if maj is None else maj) == t), int(prev == t)
        if len(self._buffer) == self.width:
            ot, op, omaj, oper = self._buffer.popleft()
            self._remove({(ot, op): 1}, omaj, oper, 1)
        self._buffer.append((t, p, maj_ok, per_ok))
        self._add(t, p, maj_ok, per_ok)



class FadingWindow(Window):
    """Every count is multiplied by ``alpha`` before each new example is added (Gama et al.).

    Fading is applied lazily: counts are stored divided by a running scale ``alpha**t`` and
    multiplied back when read, so an update costs O(1) rather than one multiply per count.

    >>> w = FadingWindow(0.5)
    >>> for t, p, prev in [(0, 0, -1), (1, 0, 0), (1, 1, 1)]:
    ...     w.update(t, p, prev)
    >>> c = w.counts(); (c.n, c.cm, c.per)
    (1.75, {(0, 0): 0.25, (1, 0): 0.5, (1, 1): 1.0}, 1.0)
    """

    kind = "fading"
    _RESCALE_BELOW = 1e-150

    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = check_alpha(alpha)
        self._scale = 1.0  # stored value * scale = faded value
        self._cm: dict[tuple[int, int], float] = {}  # type: ignore[assignment]

    @property
    def size(self) -> float:
        return self._n * self._scale

    def update(self, t: int, p: int, prev: int, maj: int | None = None) -> None:
        maj_ok, per_ok = int((self._majority if maj is None else maj) == t), int(prev == t)
        self._scale *= self.alpha
        if self._scale < self._RESCALE_BELOW:
            self._rescale()
        inc = 1.0 / self._scale
        cm, rows = self._cm, self._rows
        cm[t, p] = cm.get((t, p), 0.0) + inc
        rt = rows[t] = rows.get(t, 0.0) + inc
        self._maj += maj_ok * inc
        self._per += per_ok * inc
        self._n += inc
        m = self._majority
        if m < 0 or rt > rows[m] or (rt == rows[m] and t < m):
            self._majority = t

    def _rescale(self) -> None:
        s = self._scale
        self._cm = {k: v * s for k, v in self._cm.items()}
        self._rows = {k: v * s for k, v in self._rows.items()}
        self._maj *= s
        self._per *= s
        self._n *= s
        self._scale = 1.0

    def counts(self) -> Counts:
        s = self._scale
        return Counts(self._n * s, {k: v * s for k, v in self._cm.items()},
                      {k: v * s for k, v in self._rows.items()}, self._maj * s, self._per * s)



class AdwinWindow(Window):
    """ADWIN's current window over the 0/1 loss, in O(log W) memory.

    ``river.drift.ADWIN`` decides the window. Its exponential histogram is mirrored here bucket
    for bucket (same sizes, same merges, ``max_buckets`` per level), each bucket holding the
    confusion counts of its examples, so that when ADWIN drops its oldest buckets the same
    examples leave these counts. river's ADWIN also restarts from an empty window on the update
    after it detects a change; the mirror restarts with it.

    >>> w = AdwinWindow(delta=0.002)
    >>> for i in range(2000):
    ...     w.update(0, 0 if i < 1000 else 1, 0)
    >>> w.size < 1000, w.size == w.adwin.width
    (True, True)
    """

    kind = "adwin"

    def __init__(self, delta: float = ADWIN_DELTA, max_buckets: int = 5, clock: int = 32):
        super().__init__()
        self.delta = check_delta(delta)
        self.adwin = ADWIN(delta=self.delta, clock=clock, max_buckets=max_buckets)
        self._max_buckets = max_buckets
        # _levels[i]: buckets of 2**i examples, oldest first: [n, maj, per, {(t, p): count}]
        self._levels: list[list[list[Any]]] = [[]]

    def update(self, t: int, p: int, prev: int, maj: int | None = None) -> None:
        adwin = self.adwin
        if adwin.drift_detected:  # river restarts ADWIN from scratch on this update
            Window.__init__(self)
            self._levels = [[]]
        maj_ok, per_ok = int((self._majority if maj is None else maj) == t), int(prev == t)
        self._add(t, p, maj_ok, per_ok)
        self._insert([1, maj_ok, per_ok, {(t, p): 1}])
        adwin.update(0.0 if t == p else 1.0)
        self.drift = adwin.drift_detected
        width = adwin.width
        while self._n > width:
            n, maj, per, cm = self._pop_oldest()
            self._remove(cm, maj, per, n)
        if self._n != width:  # the mirror is exact by construction; never guess silently
            raise RuntimeError(f"ADWIN window mirror out of step: {self._n} != {width}")

    def _insert(self, bucket: list[Any]) -> None:
        levels, limit = self._levels, self._max_buckets + 1
        levels[0].append(bucket)
        i = 0
        while len(levels[i]) == limit:
            if i + 1 == len(levels):
                levels.append([])
            a, b = levels[i][0], levels[i][1]
            cm = dict(a[3])
            for key, c in b[3].items():
                cm[key] = cm.get(key, 0) + c
            del levels[i][:2]
            levels[i + 1].append([a[0] + b[0], a[1] + b[1], a[2] + b[2], cm])
            i += 1

    def _pop_oldest(self) -> list[Any]:
        top = self._levels[-1]
        bucket = top.pop(0)
        if not top:
            self._levels.pop()
        return bucket

    @property
    def buckets(self) -> int:
        """How many summaries the window holds: O(log W)."""
        return sum(len(level) for level in self._levels)



# ------------------------------------------------------------------------------------ the spec
def check_size(size: Any) -> int:
    """A sliding window's ``size``: an integer >= 1 (:class:`ValueError` otherwise)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"a sliding window's size must be an integer >= 1, got {size!r}")
    return size


def check_alpha(alpha: Any) -> float:
    """A fading factor: a number in (0, 1] (:class:`ValueError` otherwise)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < alpha <= 1.0:
        raise ValueError(f"a fading factor must be a number in (0, 1], got {alpha!r}")
    return float(alpha)


def check_delta(delta: Any) -> float:
    """An ADWIN confidence: a number in (0, 1) (:class:`ValueError` otherwise)."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0.0 < delta < 1.0:
        raise ValueError(f"an ADWIN delta must be a number in (0, 1), got {delta!r}")
    return float(delta)


#: The check of each window parameter, by name.
PARAMETER_CHECKS = {"size": check_size, "alpha": check_alpha, "delta": check_delta}


@dataclass(frozen=True, slots=True)
class WindowSpec:
    """Which window an evaluator keeps (docs/method.md §4): its kind and its one parameter.

    The parameter of the kind defaults to :data:`SLIDING_SIZE`, :data:`FADING_ALPHA` or
    :data:`ADWIN_DELTA`; a parameter out of range, or one the kind does not take, is a
    :class:`ValueError`. Frozen, so that plans holding it pickle and hash.

    Examples
    --------
    >>> WindowSpec()
    WindowSpec(kind='adwin', size=None, alpha=None, delta=0.002)
    >>> WindowSpec("sliding", size=500).items()
    (('kind', 'sliding'), ('size', 500))
    >>> WindowSpec("fading").make().alpha
    0.999
    >>> WindowSpec("sliding", size=0)
    Traceback (most recent call last):
    ...
    ValueError: a sliding window's size must be an integer >= 1, got 0
    """

    kind: str = "adwin"
    size: int | None = None
    alpha: float | None = None
    delta: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in WINDOW_KINDS:
            raise ValueError(f"unknown window kind {self.kind!r}; "
                             f"expected one of {', '.join(WINDOW_KINDS)}")
        wanted = WINDOW_KINDS[self.kind]
        for name, check in PARAMETER_CHECKS.items():
            value = getattr(self, name)
            if value is None:
                continue
            if name != wanted:
                raise ValueError(f"{name} does not apply to a window of kind {self.kind}")
            object.__setattr__(self, name, check(value))
        if wanted is not None and getattr(self, wanted) is None:
            object.__setattr__(self, wanted, _DEFAULTS[wanted])

    @property
    def parameter(self) -> int | float | None:
        """The value of the kind's parameter (``None`` for a cumulative window)."""
        wanted = WINDOW_KINDS[self.kind]
        return None if wanted is None else getattr(self, wanted)

    def items(self) -> tuple[tuple[str, Any], ...]:
        """``(("kind", kind), (parameter, value))``: the ``window`` of the output records."""
        wanted = WINDOW_KINDS[self.kind]
        return (("kind", self.kind),) + (() if wanted is None else ((wanted, self.parameter),))

    def make(self) -> Window:
        """A fresh, empty window of this spec."""
        if self.kind == "sliding":
            return SlidingWindow(self.size)
        if self.kind == "fading":
            return FadingWindow(self.alpha)
        if self.kind == "adwin":
            return AdwinWindow(self.delta)
        return CumulativeWindow()


def make_window(kind: str, *, size: int | None = None, alpha: float | None = None,
                delta: float | None = None) -> Window:
    """A fresh window of the configured kind (docs/method.md §4): ``WindowSpec(...).make()``.

    >>> make_window("sliding", size=3).width, make_window("sliding").width
    (3, 1000)
    >>> make_window("adwin", delta=1.0)
    Traceback (most recent call last):
    ...
    ValueError: an ADWIN delta must be a number in (0, 1), got 1.0
    """
    return WindowSpec(kind, size, alpha, delta).make()

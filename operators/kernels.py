"""The compiled loops of :mod:`.detectors` and :mod:`.windows` (``numba``, cached on disk).

Kept apart so that importing the project does not import numba (see
:func:`foldstream.operators.detectors._kernels`): each loop is river's algorithm, or the
project's window arithmetic, operation for operation, as :mod:`.detectors` explains.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from foldstream.operators.detectors import _DETECTIONS, _DRIFT, _LEVELS, _MAJ_SLOT, _MAX_DEC, \
    _MEAN, _MIN_INC, _N, _N_SLOT, _PER_SLOT, _PH_DRIFT, _ROWS, _SUM_DEC, _SUM_INC, _TICK, \
    _TOTAL, _VARIANCE, _WIDTH, NO_MAJORITY


@njit(cache=True)
def _adwin_reset(tot, var, cnt, fs, ints, mir):
    tot[:] = 0.0
    var[:] = 0.0
    cnt[:] = 0
    fs[:] = 0.0
    ints[_TICK] = 0
    ints[_DETECTIONS] = 0
    ints[_LEVELS] = 1  # river's deque starts with one empty bucket row
    ints[_DRIFT] = 0
    mir[:] = 0


@njit(cache=True)
def _compress(tot, var, cnt, mir, row, n):
    """river's ``Bucket.compress(n)``: the row's first ``n`` buckets leave (the rest shift left,
    the freed places are cleared), with their mirrored stats."""
    size = tot.shape[1]
    stats = mir.shape[2]
    for i in range(n, size):
        tot[row, i - n] = tot[row, i]
        var[row, i - n] = var[row, i]
        for j in range(stats):
            mir[row, i - n, j] = mir[row, i, j]
    for i in range(size - n, size):
        tot[row, i] = 0.0
        var[row, i] = 0.0
        for j in range(stats):
            mir[row, i, j] = 0
    cnt[row] -= n


@njit(cache=True)
def _adwin_step(value, tot, var, cnt, fs, ints, delta, clock, max_buckets, mwl, grace,
                mir, item, agg):
    """One ``AdaptiveWindowing.update(value)`` (river's adwin_c.pyx), in its order of operations.

    ``mir`` (levels x buckets x stats) mirrors the buckets with integer stats of their
    examples, ``item`` the stats of this example, ``agg`` the sum of the stats over the
    window: what a deleted bucket takes away. Zero-sized stats: no mirror."""
    # _insert_element(value, 0.0)
    c0 = cnt[0]
    tot[0, c0] = value
    var[0, c0] = 0.0
    for j in range(item.shape[0]):
        mir[0, c0, j] = item[j]
    cnt[0] = c0 + 1
    fs[_WIDTH] += 1
    width = fs[_WIDTH]
    incremental_variance = 0.0
    if width > 1.0:
        total = fs[_TOTAL]
        incremental_variance = ((width - 1.0) * (value - total / (width - 1.0))
                                * (value - total / (width - 1.0)) / width)
    fs[_VARIANCE] += incremental_variance
    fs[_TOTAL] += value
    # _compress_buckets
    stats = mir.shape[2]
    idx = 0
    while idx < ints[_LEVELS]:
        if cnt[idx] != max_buckets + 1:
            break
        if idx + 1 == ints[_LEVELS]:
            ints[_LEVELS] += 1  # a new, empty row of buckets (rows beyond are all zero)
        n1 = 2.0 ** idx
        n2 = 2.0 ** idx
        mu1 = tot[idx, 0] / n1
        mu2 = tot[idx, 1] / n2
        total12 = tot[idx, 0] + tot[idx, 1]
        temp = n1 * n2 * (mu1 - mu2) * (mu1 - mu2) / (n1 + n2)
        v12 = var[idx, 0] + var[idx, 1] + temp
        cn = cnt[idx + 1]
        tot[idx + 1, cn] = total12
        var[idx + 1, cn] = v12
        for j in range(stats):
            mir[idx + 1, cn, j] = mir[idx, 0, j] + mir[idx, 1, j]
        cnt[idx + 1] = cn + 1
        _compress(tot, var, cnt, mir, idx, 2)
        if cnt[idx + 1] <= max_buckets:
            break
        idx += 1
    # _detect_change
    change = False
    ints[_TICK] += 1
    if ints[_TICK] % clock == 0 and fs[_WIDTH] > grace:
        reduce_width = True
        while reduce_width:
            reduce_width = False
            exit_flag = False
            n0 = 0.0
            n1 = fs[_WIDTH]
            u0 = 0.0
            u1 = fs[_TOTAL]
            # the same for every cut of this pass (a deletion ends the pass)
            w = fs[_WIDTH]
            delta_prime = math.log(2 * math.log(w) / delta)
            variance_in_window = fs[_VARIANCE] / w
            idx = ints[_LEVELS] - 1
            while idx >= 0:
                if exit_flag:
                    break
                n2 = 2.0 ** idx
                stop = cnt[idx]
                for k in range(stop):
                    # (river also updates the two halves' variances here; they decide nothing)
                    n0 += n2
                    n1 -= n2
                    u0 += tot[idx, k]
                    u1 -= tot[idx, k]
                    if idx == 0 and k == cnt[idx] - 1:
                        exit_flag = True
                        break
                    if n1 >= mwl and n0 >= mwl:
                        delta_mean = (u0 / n0) - (u1 / n1)
                        m_recip = (1.0 / (n0 - mwl + 1)) + (1.0 / (n1 - mwl + 1))
                        epsilon = (math.sqrt(2 * m_recip * variance_in_window * delta_prime)
                                   + 2 / 3 * delta_prime * m_recip)
                        if abs(delta_mean) > epsilon:
                            reduce_width = True
                            change = True
                            if fs[_WIDTH] > 0:
                                n0 -= _adwin_delete(tot, var, cnt, fs, ints, max_buckets, mir,
                                                    agg)
                                exit_flag = True
                                break
                idx -= 1
    if change:
        ints[_DETECTIONS] += 1
    return change


@njit(cache=True)
def _adwin_delete(tot, var, cnt, fs, ints, max_buckets, mir, agg):
    """river's ``_delete_element``: drop the oldest bucket; its stats leave ``agg``."""
    last = ints[_LEVELS] - 1
    n = 2.0 ** last
    u = tot[last, 0]
    mu = u / n
    v = var[last, 0]
    fs[_WIDTH] -= n
    fs[_TOTAL] -= u
    width = fs[_WIDTH]
    mu_window = fs[_TOTAL] / width
    incremental_variance = v + n * width * (mu - mu_window) * (mu - mu_window) / (n + width)
    fs[_VARIANCE] -= incremental_variance
    stats = mir.shape[2]
    for j in range(stats):
        agg[j] -= mir[last, 0, j]
    _compress(tot, var, cnt, mir, last, 1)
    if cnt[last] == 0:
        ints[_LEVELS] -= 1
    return n


@njit(cache=True)
def adwin_run(values, tot, var, cnt, fs, ints, delta, clock, max_buckets, mwl, grace,
               mir, item, agg, detected, widths):
    """``ADWIN.update`` for each of ``values``: ``detected[i]`` and ``widths[i]`` after it."""
    for i in range(values.shape[0]):
        if ints[_DRIFT]:
            _adwin_reset(tot, var, cnt, fs, ints, mir)
        ints[_DRIFT] = _adwin_step(values[i], tot, var, cnt, fs, ints, delta, clock,
                                   max_buckets, mwl, grace, mir, item, agg)
        detected[i] = ints[_DRIFT]
        widths[i] = fs[_WIDTH]


@njit(cache=True)
def page_hinkley_run(values, s, min_instances, delta, threshold, alpha, mode, detected):
    for i in range(values.shape[0]):
        x = values[i]
        if s[_PH_DRIFT] != 0.0:  # river resets on the update after a detection
            s[_N] = 0.0
            s[_MEAN] = 0.0
            s[_SUM_INC] = 0.0
            s[_SUM_DEC] = 0.0
            s[_MIN_INC] = np.inf
            s[_MAX_DEC] = -1.0
            s[_PH_DRIFT] = 0.0
        s[_N] += 1.0
        s[_MEAN] += (1.0 / s[_N]) * (x - s[_MEAN])
        dev = x - s[_MEAN]
        s[_SUM_INC] = alpha * s[_SUM_INC] + dev - delta
        s[_SUM_DEC] = alpha * s[_SUM_DEC] + dev + delta
        if s[_SUM_INC] < s[_MIN_INC]:
            s[_MIN_INC] = s[_SUM_INC]
        if s[_SUM_DEC] > s[_MAX_DEC]:
            s[_MAX_DEC] = s[_SUM_DEC]
        if s[_N] >= min_instances:
            up = s[_SUM_INC] - s[_MIN_INC] > threshold
            down = s[_MAX_DEC] - s[_SUM_DEC] > threshold
            drift = up if mode == 0 else down if mode == 1 else (up or down)
            s[_PH_DRIFT] = 1.0 if drift else 0.0
        detected[i] = s[_PH_DRIFT] != 0.0


@njit(cache=True)
def _majority_of(agg, C):
    best, best_rows = -1, 0
    for c in range(C):
        r = agg[_ROWS + c]
        if r > best_rows:
            best, best_rows = c, r
    return best


@njit(cache=True)
def _baselines(ti, prev_i, maj_i, majority):
    """Whether the majority baseline (the window's before the example, or ``maj_i`` when it
    was made earlier) and the persistent one (``prev_i``) get true class ``ti`` right."""
    m = majority[0] if maj_i == NO_MAJORITY else maj_i
    return (1 if m == ti else 0), (1 if prev_i == ti else 0)


@njit(cache=True)
def _majority_added(agg, majority, ti, rt):
    """The majority after class ``ti``'s row grew to ``rt``: ``ti`` if it is now the most
    frequent, ties to the smallest code (only that row grew, so no other class can win)."""
    mj = majority[0]
    if mj < 0 or rt > agg[_ROWS + mj] or (rt == agg[_ROWS + mj] and ti < mj):
        majority[0] = ti


@njit(cache=True)
def window_run(t, p, prev, majs, C, agg, majority, use_adwin, tot, var, cnt, fs, ints, delta,
               clock, max_buckets, mwl, grace, mir, sizes, drifts, after):
    """Score each example into a cumulative or ADWIN window's counts, one after the other.

    The majority baseline's prediction is the window's before the example (``majority[0]``,
    ties to the smallest code); with ``use_adwin`` the window is ADWIN's over the 0/1 loss,
    its buckets mirrored in ``mir`` (river restarts ADWIN, and the window, on the update after
    a detection). ``sizes[i]``/``drifts[i]``/``after[i]``: the window's size, ADWIN's
    detection and the window's majority after example ``i``."""
    stats = agg.shape[0]
    item = np.zeros(stats if use_adwin else 0, dtype=np.int64)
    cm0 = _ROWS + C
    for i in range(t.shape[0]):
        if use_adwin and ints[_DRIFT]:
            _adwin_reset(tot, var, cnt, fs, ints, mir)
            agg[:] = 0
            majority[0] = -1
        ti, pi = t[i], p[i]
        maj_ok, per_ok = _baselines(ti, prev[i], majs[i], majority)
        slot = cm0 + ti * (C + 1) + pi + 1
        agg[_N_SLOT] += 1
        agg[_MAJ_SLOT] += maj_ok
        agg[_PER_SLOT] += per_ok
        agg[_ROWS + ti] += 1
        agg[slot] += 1
        rt = agg[_ROWS + ti]
        _majority_added(agg, majority, ti, rt)
        if use_adwin:
            item[_N_SLOT] = 1
            item[_MAJ_SLOT] = maj_ok
            item[_PER_SLOT] = per_ok
            item[_ROWS + ti] = 1
            item[slot] = 1
            n_before = agg[_N_SLOT]
            ints[_DRIFT] = _adwin_step(0.0 if ti == pi else 1.0, tot, var, cnt, fs, ints,
                                       delta, clock, max_buckets, mwl, grace, mir, item, agg)
            item[_MAJ_SLOT] = 0
            item[_PER_SLOT] = 0
            item[_ROWS + ti] = 0
            item[slot] = 0
            drifts[i] = ints[_DRIFT]
            if agg[_N_SLOT] != n_before:
                majority[0] = _majority_of(agg, C)
        sizes[i] = agg[_N_SLOT]
        after[i] = majority[0]


@njit(cache=True)
def fade_run(values, alpha, start):
    out = start
    for i in range(values.shape[0]):
        out = values[i] + alpha * out
    return out


@njit(cache=True)
def _pack(t, p, maj_ok, per_ok):
    """An example of a sliding window in one integer: ``t`` (below 2**30), ``p + 1`` (below
    2**31), ``maj_ok``, ``per_ok``; 8 bytes a held example, in memory and in a checkpoint."""
    return (((t << 31) | (p + 1)) << 2) | (maj_ok << 1) | per_ok


@njit(cache=True)
def sliding_run(t, p, prev, majs, C, agg, majority, ring, ring_state, width, sizes, after):
    """Score each example into a sliding window's counts (the last ``width`` examples).

    ``ring`` holds the window's examples, each ``(t, p, maj_ok, per_ok)`` packed in one integer
    (:func:`_pack`), the oldest at ``ring_state[0]``, ``ring_state[1]`` of them; when it is full, the oldest leaves before
    the example comes in and the majority is recounted over the classes (ties to the smallest
    code); then the example is added as in :func:`window_run`. ``sizes[i]``/``after[i]``: the window's size and majority after
    example ``i``."""
    cm0 = _ROWS + C
    cap = ring.shape[0]
    for i in range(t.shape[0]):
        ti, pi = t[i], p[i]
        maj_ok, per_ok = _baselines(ti, prev[i], majs[i], majority)
        head, count = ring_state[0], ring_state[1]
        if count == width:
            packed = ring[head]
            cell = packed >> 2
            ot, op = cell >> 31, (cell & 0x7FFFFFFF) - 1
            agg[cm0 + ot * (C + 1) + op + 1] -= 1
            agg[_ROWS + ot] -= 1
            agg[_MAJ_SLOT] -= (packed >> 1) & 1
            agg[_PER_SLOT] -= packed & 1
            agg[_N_SLOT] -= 1
            majority[0] = _majority_of(agg, C)
            head += 1
            if head == cap:
                head = 0
            count -= 1
        end = head + count
        if end >= cap:
            end -= cap
        ring[end] = _pack(ti, pi, maj_ok, per_ok)
        ring_state[0] = head
        ring_state[1] = count + 1
        agg[cm0 + ti * (C + 1) + pi + 1] += 1
        agg[_ROWS + ti] += 1
        agg[_MAJ_SLOT] += maj_ok
        agg[_PER_SLOT] += per_ok
        agg[_N_SLOT] += 1
        rt = agg[_ROWS + ti]
        _majority_added(agg, majority, ti, rt)
        sizes[i] = agg[_N_SLOT]
        after[i] = majority[0]


@njit(cache=True)
def fading_run(t, p, prev, majs, C, agg, order, majority, fs, alpha, rescale_below, sizes,
               after):
    """Score each example into a fading window's stored counts, as ``windows.FadingWindow``'s
    example-by-example update did, operation for operation (so every float is the same).

    ``agg`` holds the counts divided by the scale ``fs[0]`` (``alpha`` to the number of
    examples, reset to 1 when it falls below ``rescale_below``, the counts multiplied by it);
    ``order[slot]`` numbers the slots in the order they were first touched (0: never;
    ``order[0]``, the slot of ``n``, which is always touched, holds the last number given), so
    that the counts read out in the order a dict filled the same way would have them. ``sizes[i]``/``after[i]``: the
    window's size (``n`` times the scale) and majority after example ``i``."""
    cm0 = _ROWS + C
    stats = agg.shape[0]
    for i in range(t.shape[0]):
        ti, pi = t[i], p[i]
        maj_ok, per_ok = _baselines(ti, prev[i], majs[i], majority)
        fs[0] *= alpha
        if fs[0] < rescale_below:
            s = fs[0]
            for j in range(stats):
                agg[j] = agg[j] * s
            fs[0] = 1.0
        inc = 1.0 / fs[0]
        slot = cm0 + ti * (C + 1) + pi + 1
        if order[slot] == 0:
            order[0] += 1
            order[slot] = order[0]
        row = _ROWS + ti
        if order[row] == 0:
            order[0] += 1
            order[row] = order[0]
        agg[slot] = agg[slot] + inc
        agg[row] = agg[row] + inc
        rt = agg[row]
        agg[_MAJ_SLOT] += maj_ok * inc
        agg[_PER_SLOT] += per_ok * inc
        agg[_N_SLOT] += inc
        _majority_added(agg, majority, ti, rt)
        sizes[i] = agg[_N_SLOT] * fs[0]
        after[i] = majority[0]


@njit(cache=True)
def pairs_run(codes, shared, fading, alpha, cap, ab, ring, ring_state):
    """McNemar's counts of a pair (``evaluator._PairCounts.update`` for each code in turn).

    ``ab`` holds ``a`` and ``b``; ``fading``: both are multiplied by ``alpha`` before each
    code. With a ``ring`` (sliding and ADWIN windows) the codes of the shared window are kept,
    the oldest at ``ring_state[0]``, ``ring_state[1]`` of them, and after each code the oldest
    leave until at most ``min(shared[i], cap)`` remain."""
    size = ring.shape[0]
    for i in range(codes.shape[0]):
        code = codes[i]
        if fading:
            ab[0] *= alpha
            ab[1] *= alpha
        if code == 1:
            ab[0] += 1
        elif code == 2:
            ab[1] += 1
        if size:
            head, count = ring_state[0], ring_state[1]
            end = head + count
            if end >= size:
                end -= size
            ring[end] = code
            count += 1
            keep = min(shared[i], cap)
            while count > keep:
                old = ring[head]
                if old == 1:
                    ab[0] -= 1
                elif old == 2:
                    ab[1] -= 1
                head += 1
                if head == size:
                    head = 0
                count -= 1
            ring_state[0] = head
            ring_state[1] = count

"""The compiled loops of :mod:`.detectors` and :mod:`.windows` (``numba``, cached on disk).

Kept apart so that importing the project does not import numba (see
:func:`foldstream.operators.stats.detectors._kernels`): each loop is river's algorithm, or the
project's window arithmetic, operation for operation, as :mod:`.detectors` explains.

Why one module: numba's on-disk cache checks only the source file of the
function it caches, so a compiled loop that called a compiled function of another file would
keep a stale copy of it after that file changed. The window loops call ADWIN's step and the
majority helpers, so every loop that calls another lives in this one file, and the cache stays
right.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from foldstream.operators.stats.detectors import (
    _BMAJ, _BPER, _DETECTIONS, _DRIFT, _LENGTH, _LEVELS, _MAJ_SLOT, _MAX_DEC, _MEAN, _MIN_INC, _N,
    _N_SLOT, _PER_SLOT, _PH_DRIFT, _ROWS, _START, _SUM_DEC, _SUM_INC, _TICK, _TOTAL, _VARIANCE,
    _WIDTH, EMPTY, NO_MAJORITY
)


#: The compiled helpers the loops call once an example (``_`` names): without numba's reference
#: counting, which they do not need (they take arrays, and never make or return one). Compiled
#: and cached apart from the loops that call them, they are not inlined, and counting costs
#: an atomic increment and decrement of every array passed at every call: several times the
#: arithmetic of an example.
_helper = njit(cache=True, _nrt=False)


# ------------------------------------------------------------------------- tables of cells
@_helper
def _place(keys, key):
    """The place of ``key`` in a table of cells (linear probing), or the empty place where it
    goes."""
    mask = keys.shape[0] - 1
    x = key * 2654435761
    i = (x ^ (x >> 29)) & mask
    while True:
        k = keys[i]
        if k == key or k == EMPTY:
            return i
        i = (i + 1) & mask


@njit(cache=True)
def cells_load(keys, vals, add_keys, add_vals, order, add_order):
    """Put cells (not in the table yet) into an empty table (``order``: their orders too, when
    it is not empty)."""
    for j in range(add_keys.shape[0]):
        i = _place(keys, add_keys[j])
        keys[i] = add_keys[j]
        vals[i] = add_vals[j]
        if order.shape[0]:
            order[i] = add_order[j]


@_helper
def _cell(keys, vals, used, key):
    """The place of cell ``key``, put in (with value 0) if it was not held; ``used[0]`` counts
    the places taken."""
    i = _place(keys, key)
    if keys[i] == EMPTY:
        keys[i] = key
        vals[i] = 0
        used[0] += 1
    return i


@_helper
def _full(keys, used):
    """Whether one more cell would leave the table more than half full."""
    return 2 * (used[0] + 1) > keys.shape[0]


@_helper
def _key(t, p):
    return (t << 32) | (p + 1)


# ---------------------------------------------------------------- an ADWIN window's mirror
@_helper
def _mirror_new(mir, pk, pv, pool, row, col, key, maj_ok, per_ok):
    """Bucket ``(row, col)`` holds one example, of cell ``key``."""
    top = pool[0]
    pk[top] = key
    pv[top] = 1
    mir[row, col, _START] = top
    mir[row, col, _LENGTH] = 1
    mir[row, col, _BMAJ] = maj_ok
    mir[row, col, _BPER] = per_ok
    pool[0] = top + 1
    pool[1] += 1


@_helper
def _mirror_merge(mir, pk, pv, pool, idx, cn):
    """Bucket ``(idx + 1, cn)`` holds the examples of buckets ``(idx, 0)`` and ``(idx, 1)``: their
    runs of cells merged (by key) at the pool's top."""
    a, la = mir[idx, 0, _START], mir[idx, 0, _LENGTH]
    b, lb = mir[idx, 1, _START], mir[idx, 1, _LENGTH]
    top = pool[0]
    out = top
    i, j = a, b
    while i < a + la or j < b + lb:
        if j == b + lb or (i < a + la and pk[i] < pk[j]):
            pk[out] = pk[i]
            pv[out] = pv[i]
            i += 1
        elif i == a + la or pk[j] < pk[i]:
            pk[out] = pk[j]
            pv[out] = pv[j]
            j += 1
        else:
            pk[out] = pk[i]
            pv[out] = pv[i] + pv[j]
            i += 1
            j += 1
        out += 1
    mir[idx + 1, cn, _START] = top
    mir[idx + 1, cn, _LENGTH] = out - top
    mir[idx + 1, cn, _BMAJ] = mir[idx, 0, _BMAJ] + mir[idx, 1, _BMAJ]
    mir[idx + 1, cn, _BPER] = mir[idx, 0, _BPER] + mir[idx, 1, _BPER]
    pool[0] = out
    pool[1] += out - top - la - lb


@_helper
def _mirror_drop(mir, pk, pv, pool, last, agg, keys, vals):
    """The examples of bucket ``(last, 0)`` leave the window's counts."""
    start, length = mir[last, 0, _START], mir[last, 0, _LENGTH]
    n = 0
    for j in range(start, start + length):
        key, c = pk[j], pv[j]
        vals[_place(keys, key)] -= c
        agg[_ROWS + (key >> 32)] -= c
        n += c
    agg[_N_SLOT] -= n
    agg[_MAJ_SLOT] -= mir[last, 0, _BMAJ]
    agg[_PER_SLOT] -= mir[last, 0, _BPER]
    pool[1] -= length


@njit(cache=True)
def pool_compact(mir, cnt, pk, pv, new_pk, new_pv, pool):
    """Copy the runs of the buckets held (``cnt[level]`` of each level) into a new pool."""
    top = 0
    for row in range(mir.shape[0]):
        for col in range(cnt[row]):
            start, length = mir[row, col, _START], mir[row, col, _LENGTH]
            for j in range(length):
                new_pk[top + j] = pk[start + j]
                new_pv[top + j] = pv[start + j]
            mir[row, col, _START] = top
            top += length
    pool[0] = top
    pool[1] = top


@_helper
def _adwin_reset(tot, var, cnt, fs, ints, mir, pool):
    tot[:] = 0.0
    var[:] = 0.0
    cnt[:] = 0
    fs[:] = 0.0
    ints[_TICK] = 0
    ints[_DETECTIONS] = 0
    ints[_LEVELS] = 1  # river's deque starts with one empty bucket row
    ints[_DRIFT] = 0
    mir[:] = 0
    pool[:] = 0


@_helper
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


@_helper
def _adwin_step(value, tot, var, cnt, fs, ints, delta, clock, max_buckets, mwl, grace,
                mir, pk, pv, pool, key, maj_ok, per_ok, agg, keys, vals):
    """One ``AdaptiveWindowing.update(value)`` (river's adwin_c.pyx), in its order of operations.

    ``mir`` (levels x buckets x fields) mirrors the buckets with the counts of their examples
    (their runs of cells in the pool ``pk``/``pv``; ``pool``: its top and live entries), this
    example of cell ``key``; a deleted bucket's counts leave ``agg`` and the table
    ``keys``/``vals``. Zero fields: no mirror."""
    mirrored = mir.shape[2] > 0
    # _insert_element(value, 0.0)
    c0 = cnt[0]
    tot[0, c0] = value
    var[0, c0] = 0.0
    if mirrored:
        _mirror_new(mir, pk, pv, pool, 0, c0, key, maj_ok, per_ok)
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
        if mirrored:
            _mirror_merge(mir, pk, pv, pool, idx, cn)
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
                                n0 -= _adwin_delete(tot, var, cnt, fs, ints, mir, pk, pv,
                                                    pool, agg, keys, vals)
                                exit_flag = True
                                break
                idx -= 1
    if change:
        ints[_DETECTIONS] += 1
    return change


@_helper
def _adwin_delete(tot, var, cnt, fs, ints, mir, pk, pv, pool, agg, keys, vals):
    """river's ``_delete_element``: drop the oldest bucket; its counts leave the window's."""
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
    if mir.shape[2] > 0:
        _mirror_drop(mir, pk, pv, pool, last, agg, keys, vals)
    _compress(tot, var, cnt, mir, last, 1)
    if cnt[last] == 0:
        ints[_LEVELS] -= 1
    return n


@njit(cache=True)
def adwin_run(values, tot, var, cnt, fs, ints, delta, clock, max_buckets, mwl, grace,
              detected, widths):
    """``ADWIN.update`` for each of ``values``: ``detected[i]`` and ``widths[i]`` after it."""
    mir = np.zeros((0, 0, 0), dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)
    for i in range(values.shape[0]):
        if ints[_DRIFT]:
            _adwin_reset(tot, var, cnt, fs, ints, mir, none)
        ints[_DRIFT] = _adwin_step(values[i], tot, var, cnt, fs, ints, delta, clock,
                                   max_buckets, mwl, grace, mir, none, none, none, 0, 0, 0,
                                   none, none, none)
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


@_helper
def _majority_of(agg, C):
    best, best_rows = -1, 0
    for c in range(C):
        r = agg[_ROWS + c]
        if r > best_rows:
            best, best_rows = c, r
    return best


@_helper
def _baselines(ti, prev_i, maj_i, majority):
    """Whether the majority baseline (the window's before the example, or ``maj_i`` when it
    was made earlier) and the persistent one (``prev_i``) get true class ``ti`` right."""
    m = majority[0] if maj_i == NO_MAJORITY else maj_i
    return (1 if m == ti else 0), (1 if prev_i == ti else 0)


@_helper
def _majority_added(agg, majority, ti, rt):
    """The majority after class ``ti``'s row grew to ``rt``: ``ti`` if it is now the most
    frequent, ties to the smallest code (only that row grew, so no other class can win)."""
    mj = majority[0]
    if mj < 0 or rt > agg[_ROWS + mj] or (rt == agg[_ROWS + mj] and ti < mj):
        majority[0] = ti


@njit(cache=True)
def window_run(t, p, prev, majs, C, agg, keys, vals, used, majority, use_adwin, tot, var, cnt,
               fs, ints, delta, clock, max_buckets, mwl, grace, mir, pk, pv, pool, sizes,
               drifts, after, start):
    """Score each example from ``start`` on into a cumulative or ADWIN window's counts, one
    after the other; return where it stopped: the number of examples, or the first one that
    needs more room (in the table of cells ``keys``/``vals``, ``used`` places taken, or in the
    mirror's pool), which the caller makes before it calls again from there.

    The majority baseline's prediction is the window's before the example (``majority[0]``,
    ties to the smallest code); with ``use_adwin`` the window is ADWIN's over the 0/1 loss,
    its buckets mirrored in ``mir`` (river restarts ADWIN, and the window, on the update after
    a detection). ``sizes[i]``/``drifts[i]``/``after[i]``: the window's size, ADWIN's
    detection and the window's majority after example ``i``."""
    # a step makes runs of at most the live entries and its own (with two or more buckets a
    # level a merged run is not merged again in the same step; with one, once a level)
    runs = 1 if max_buckets >= 2 else tot.shape[0] + 1
    for i in range(start, t.shape[0]):
        if _full(keys, used) or (use_adwin and pool[0] + runs * (pool[1] + 1) > pk.shape[0]):
            return i
        if use_adwin and ints[_DRIFT]:
            _adwin_reset(tot, var, cnt, fs, ints, mir, pool)
            agg[:] = 0
            keys[:] = EMPTY
            vals[:] = 0
            used[0] = 0
            majority[0] = -1
        ti, pi = t[i], p[i]
        maj_ok, per_ok = _baselines(ti, prev[i], majs[i], majority)
        key = _key(ti, pi)
        agg[_N_SLOT] += 1
        agg[_MAJ_SLOT] += maj_ok
        agg[_PER_SLOT] += per_ok
        agg[_ROWS + ti] += 1
        vals[_cell(keys, vals, used, key)] += 1
        rt = agg[_ROWS + ti]
        _majority_added(agg, majority, ti, rt)
        if use_adwin:
            n_before = agg[_N_SLOT]
            ints[_DRIFT] = _adwin_step(0.0 if ti == pi else 1.0, tot, var, cnt, fs, ints,
                                       delta, clock, max_buckets, mwl, grace, mir, pk, pv,
                                       pool, key, maj_ok, per_ok, agg, keys, vals)
            drifts[i] = ints[_DRIFT]
            if agg[_N_SLOT] != n_before:
                majority[0] = _majority_of(agg, C)
        sizes[i] = agg[_N_SLOT]
        after[i] = majority[0]
    return t.shape[0]


@njit(cache=True)
def fade_run(values, alpha, start):
    out = start
    for i in range(values.shape[0]):
        out = values[i] + alpha * out
    return out


@_helper
def _pack(t, p, maj_ok, per_ok):
    """An example of a sliding window in one integer: ``t`` (below 2**30), ``p + 1`` (below
    2**31), ``maj_ok``, ``per_ok``; 8 bytes a held example, in memory and in a checkpoint."""
    return (((t << 31) | (p + 1)) << 2) | (maj_ok << 1) | per_ok


@njit(cache=True)
def sliding_run(t, p, prev, majs, C, agg, keys, vals, used, majority, ring, ring_state, width,
                sizes, after, start):
    """Score each example from ``start`` on into a sliding window's counts (the last ``width``
    examples); return where it stopped, as :func:`window_run` does.

    ``ring`` holds the window's examples, each ``(t, p, maj_ok, per_ok)`` packed in one integer
    (:func:`_pack`), the oldest at ``ring_state[0]``, ``ring_state[1]`` of them; when it is full, the oldest leaves before
    the example comes in and the majority is recounted over the classes (ties to the smallest
    code); then the example is added as in :func:`window_run`. ``sizes[i]``/``after[i]``: the window's size and majority after
    example ``i``."""
    cap = ring.shape[0]
    for i in range(start, t.shape[0]):
        if _full(keys, used):
            return i
        ti, pi = t[i], p[i]
        maj_ok, per_ok = _baselines(ti, prev[i], majs[i], majority)
        head, count = ring_state[0], ring_state[1]
        if count == width:
            packed = ring[head]
            cell = packed >> 2
            ot, op = cell >> 31, (cell & 0x7FFFFFFF) - 1
            vals[_place(keys, _key(ot, op))] -= 1
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
        vals[_cell(keys, vals, used, _key(ti, pi))] += 1
        agg[_ROWS + ti] += 1
        agg[_MAJ_SLOT] += maj_ok
        agg[_PER_SLOT] += per_ok
        agg[_N_SLOT] += 1
        rt = agg[_ROWS + ti]
        _majority_added(agg, majority, ti, rt)
        sizes[i] = agg[_N_SLOT]
        after[i] = majority[0]
    return t.shape[0]


@njit(cache=True)
def fading_run(t, p, prev, majs, C, agg, order, keys, vals, cell_order, used, majority, fs,
               alpha, rescale_below, sizes, after, start):
    """Score each example from ``start`` on into a fading window's stored counts, as
    ``windows.FadingWindow``'s example-by-example update did, operation for operation (so every
    float is the same); return where it stopped, as :func:`window_run` does.

    ``agg`` and ``vals`` hold the counts divided by the scale ``fs[0]`` (``alpha`` to the number
    of examples, reset to 1 when it falls below ``rescale_below``, the counts multiplied by
    it); ``order[row]`` and ``cell_order[place]`` number the rows and cells in the order they
    were first touched (0: never; ``order[0]``, the slot of ``n``, which is always touched,
    holds the last number given), so that the counts read out in the order a dict filled the
    same way would have them. ``sizes[i]``/``after[i]``: the window's size (``n`` times the
    scale) and majority after example ``i``."""
    stats = agg.shape[0]
    places = keys.shape[0]
    for i in range(start, t.shape[0]):
        if _full(keys, used):
            return i
        ti, pi = t[i], p[i]
        maj_ok, per_ok = _baselines(ti, prev[i], majs[i], majority)
        fs[0] *= alpha
        if fs[0] < rescale_below:
            s = fs[0]
            for j in range(stats):
                agg[j] = agg[j] * s
            for j in range(places):
                vals[j] = vals[j] * s
            fs[0] = 1.0
        inc = 1.0 / fs[0]
        slot = _cell(keys, vals, used, _key(ti, pi))
        if cell_order[slot] == 0:
            order[0] += 1
            cell_order[slot] = order[0]
        row = _ROWS + ti
        if order[row] == 0:
            order[0] += 1
            order[row] = order[0]
        vals[slot] = vals[slot] + inc
        agg[row] = agg[row] + inc
        rt = agg[row]
        agg[_MAJ_SLOT] += maj_ok * inc
        agg[_PER_SLOT] += per_ok * inc
        agg[_N_SLOT] += inc
        _majority_added(agg, majority, ti, rt)
        sizes[i] = agg[_N_SLOT] * fs[0]
        after[i] = majority[0]
    return t.shape[0]


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

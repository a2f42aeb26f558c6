"""The compiled loop of :mod:`.auc` (``numba``, cached on disk): a treap of scores.

Kept apart so that importing the project does not import numba (:func:`.auc._kernel`). A
structure is a treap keyed by distinct score, each node holding how many positive and negative
examples of the window have that score and, for its subtree, the sums of both; beside it, a
ring of the window's examples (score, positive) in arrival order, so the oldest can be taken
out. The doubled Mann-Whitney count ``2 #(positive above negative) + #(ties)`` is kept up to
date as examples come and go, so the AUC is one division at any time. Every step walks one
path of the treap: O(log w) expected per example, for a window of w examples.
"""

from __future__ import annotations

from numba import njit

from foldstream.operators.stats.auc import COUNT, FREE, HEAD, LEFT, NEG, NNEG, NPOS, POS, PRIO, \
    RIGHT, RNG, ROOT, SNEG, SPOS, U2, USED


@njit(cache=True)
def _fix(nodes, x):
    """The subtree sums of node ``x`` from its children's."""
    left, right = nodes[x, LEFT], nodes[x, RIGHT]
    sp, sn = nodes[x, NPOS], nodes[x, NNEG]
    if left >= 0:
        sp += nodes[left, SPOS]
        sn += nodes[left, SNEG]
    if right >= 0:
        sp += nodes[right, SPOS]
        sn += nodes[right, SNEG]
    nodes[x, SPOS] = sp
    nodes[x, SNEG] = sn


@njit(cache=True)
def _relink(state, nodes, parent, old, new):
    """Put ``new`` where ``old`` hung under ``parent`` (-1: the root)."""
    if parent < 0:
        state[ROOT] = new
    elif nodes[parent, LEFT] == old:
        nodes[parent, LEFT] = new
    else:
        nodes[parent, RIGHT] = new


@njit(cache=True)
def _rotate_up(state, nodes, parent, x, grand):
    """Rotate child ``x`` of ``parent`` above it (``grand``: the parent's parent)."""
    if nodes[parent, LEFT] == x:
        nodes[parent, LEFT] = nodes[x, RIGHT]
        nodes[x, RIGHT] = parent
    else:
        nodes[parent, RIGHT] = nodes[x, LEFT]
        nodes[x, LEFT] = parent
    _relink(state, nodes, grand, parent, x)
    _fix(nodes, parent)
    _fix(nodes, x)


@njit(cache=True)
def _past(nodes, keys, x, s, positive):
    """One step of a walk towards score ``s`` past node ``x`` (whose score is not ``s``): the
    next node, and the examples of the other class than ``positive`` that ``x`` and its
    subtree off the path hold on the side of ``s`` that counts (negatives below ``s`` for a
    positive, positives above it for a negative)."""
    left, right = nodes[x, LEFT], nodes[x, RIGHT]
    count = 0
    if s < keys[x]:
        if not positive:
            count = nodes[x, NPOS] + (nodes[right, SPOS] if right >= 0 else 0)
        return left, count
    if positive:
        count = nodes[x, NNEG] + (nodes[left, SNEG] if left >= 0 else 0)
    return right, count


@njit(cache=True)
def _beside(nodes, x, positive):
    """At node ``x`` of the walk's score: the examples of the other class at that score, and
    those of its subtrees on the side that counts (as :func:`_past`)."""
    if positive:
        left = nodes[x, LEFT]
        return nodes[x, NNEG], nodes[left, SNEG] if left >= 0 else 0
    right = nodes[x, RIGHT]
    return nodes[x, NPOS], nodes[right, SPOS] if right >= 0 else 0


@njit(cache=True)
def _insert(state, nodes, keys, path, s, dpos, dneg):
    """Add ``dpos`` positives and ``dneg`` negatives of score ``s``; return the doubled
    Mann-Whitney count of one such example against the structure before, read on the same
    walk."""
    positive = dpos > 0
    count = 0
    depth = 0
    x = state[ROOT]
    while x >= 0:
        path[depth] = x
        depth += 1
        nodes[x, SPOS] += dpos
        nodes[x, SNEG] += dneg
        if s == keys[x]:
            at, side = _beside(nodes, x, positive)
            nodes[x, NPOS] += dpos
            nodes[x, NNEG] += dneg
            return 2 * (count + side) + at
        x, step = _past(nodes, keys, x, s, positive)
        count += step
    x = state[FREE]
    if x >= 0:
        state[FREE] = nodes[x, LEFT]
    else:
        x = state[USED]
        state[USED] += 1
    r = state[RNG] * 6364136223846793005 + 1442695040888963407  # an LCG: the same every run
    state[RNG] = r
    keys[x] = s
    nodes[x, LEFT] = -1
    nodes[x, RIGHT] = -1
    nodes[x, PRIO] = (r >> 33) & 0x7FFFFFFF
    nodes[x, NPOS] = dpos
    nodes[x, NNEG] = dneg
    nodes[x, SPOS] = dpos
    nodes[x, SNEG] = dneg
    pairs = 2 * count
    if depth == 0:
        state[ROOT] = x
        return pairs
    parent = path[depth - 1]
    if s < keys[parent]:
        nodes[parent, LEFT] = x
    else:
        nodes[parent, RIGHT] = x
    while depth > 0:  # up while its priority is higher than its parent's
        parent = path[depth - 1]
        if nodes[x, PRIO] <= nodes[parent, PRIO]:
            break
        grand = path[depth - 2] if depth >= 2 else -1
        _rotate_up(state, nodes, parent, x, grand)
        depth -= 1
    return pairs


@njit(cache=True)
def _remove(state, nodes, keys, s, dpos, dneg):
    """Take out ``dpos`` positives and ``dneg`` negatives of score ``s`` (they are there); a
    node left with none goes down to a leaf and is freed. Returns the doubled Mann-Whitney
    count of one such example against the structure after, read on the same walk."""
    positive = dpos > 0
    count = 0
    parent = -1
    x = state[ROOT]
    while True:
        nodes[x, SPOS] -= dpos
        nodes[x, SNEG] -= dneg
        if s == keys[x]:
            break
        parent = x
        x, step = _past(nodes, keys, x, s, positive)
        count += step
    nodes[x, NPOS] -= dpos
    nodes[x, NNEG] -= dneg
    at, side = _beside(nodes, x, positive)
    pairs = 2 * (count + side) + at
    if nodes[x, NPOS] > 0 or nodes[x, NNEG] > 0:
        return pairs
    while True:
        left, right = nodes[x, LEFT], nodes[x, RIGHT]
        if left < 0 and right < 0:
            break
        if right < 0 or (left >= 0 and nodes[left, PRIO] > nodes[right, PRIO]):
            child = left
        else:
            child = right
        _rotate_up(state, nodes, x, child, parent)
        parent = child
    _relink(state, nodes, parent, x, -1)
    nodes[x, LEFT] = state[FREE]
    state[FREE] = x
    return pairs


@njit(cache=True)
def auc_run(state, nodes, keys, path, ring_s, ring_p, scores, positive, sizes):
    """Add examples in turn (``scores``, ``positive``); after each, take out the oldest until
    the window holds ``sizes[i]`` of them (``sizes`` empty: none ever leaves, and the ring is
    not used)."""
    cap = ring_s.shape[0]
    windowed = sizes.shape[0] > 0
    for i in range(scores.shape[0]):
        s = scores[i]
        if s != s:  # NaN, as MOA's evaluators take it
            s = 0.0
        p = positive[i]
        state[U2] += _insert(state, nodes, keys, path, s, 1 if p else 0, 0 if p else 1)
        if p:
            state[POS] += 1
        else:
            state[NEG] += 1
        if not windowed:
            continue
        tail = (state[HEAD] + state[COUNT]) % cap
        ring_s[tail] = s
        ring_p[tail] = p
        state[COUNT] += 1
        while state[COUNT] > sizes[i]:
            h = state[HEAD]
            old, op = ring_s[h], ring_p[h]
            state[U2] -= _remove(state, nodes, keys, old, 1 if op else 0, 0 if op else 1)
            if op:
                state[POS] -= 1
            else:
                state[NEG] -= 1
            state[HEAD] = (h + 1) % cap
            state[COUNT] -= 1


@njit(cache=True)
def auc_backfill(state, nodes, keys, path, ring_s, ring_p, count):
    """``count`` negatives of score 0 that came before any example of the structure: the
    examples of the window before its class was known, whose scores for it are 0."""
    if count <= 0:
        return
    state[U2] += count * _insert(state, nodes, keys, path, 0.0, 0, count)
    state[NEG] += count
    cap = ring_s.shape[0]
    if cap:
        for _ in range(count):
            tail = (state[HEAD] + state[COUNT]) % cap
            ring_s[tail] = 0.0
            ring_p[tail] = False
            state[COUNT] += 1


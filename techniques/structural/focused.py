"""The descents of an iterated search after its kicks: the moves at the steps a kick changed first.

A double-bridge kick of a local optimum of the cost matrix ``C`` changes three of its steps (item to
next item).  For a symmetric ``C`` every 2-opt and or-opt move that removes none of those steps and
reverses none of them has the change it had before the kick, so it still does not improve: the
improving moves remove a changed step.  :func:`focused_descent` scores those moves alone (the moves
whose removed or reversed steps touch an item whose neighbours changed, ``O(k n)`` changes for ``k``
changed steps, against the ``7 n²`` of :func:`~.tours.move_table`), applies the best while one
improves, adds the steps each move changes, and when none improves scores the whole neighbourhood
once (:func:`~.tours._best_move`): on an asymmetric ``C`` (direction weights), and where the changed
steps were not a local optimum's, a move elsewhere can improve; the descent goes on from that move's
changes.  So it ends, as :func:`~.tours.local_search`, at a local optimum of the whole neighbourhood,
reached in fewer whole-table passes.

Called by :func:`kicked_search` (the structural techniques' searches on a sampled or embedded model).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional, Tuple

import numpy as np

from .tours import EPS, _apply, _best_move, _kinds, _masks, descend, double_bridge, tour_value

#: the share of the steps above which a focused pass is not cheaper than the whole table: beyond
#: ``n / FOCUS_SHARE`` changed steps the descent scores the whole neighbourhood
FOCUS_SHARE = 12


def changed_items(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Mask over items: the items whose two neighbours (in either direction) differ between the
    permutations ``before`` and ``after`` (the ends of each step one has and the other lacks)."""
    return (_neighbour_pairs(before) != _neighbour_pairs(after)).any(axis=1)


def _neighbour_pairs(t: np.ndarray) -> np.ndarray:
    """Per item, its previous and next item in ``t`` (cyclic), the lower first."""
    n = t.size
    pairs = np.empty((n, 2), dtype=np.intp)
    pairs[t, 0] = np.roll(t, 1)
    pairs[t, 1] = np.roll(t, -1)
    pairs.sort(axis=1)
    return pairs


@lru_cache(maxsize=16)
def _penalties(n: int) -> np.ndarray:
    """``inf`` at the illegal entries of the ``(7, n, n)`` move table of ``n`` items, else 0."""
    return np.where(_masks(n), np.inf, 0.0)


@lru_cache(maxsize=16)
def _kind_layout(n: int) -> Tuple[np.ndarray, ...]:
    """Per move kind ``m`` of :func:`~.tours.move_table` that ``n`` items make (2-opt first, then
    or-opt without the single-item reversal), in the terms of :func:`_focused_tables`: ``m``; the
    offsets of a row's ``i`` from a step ``p`` (2-opt: ``p``; or-opt: the section after ``p``
    and the one ending at ``p``); the positions after ``i`` of the two steps a row reads (``a1``,
    ``a2``) and whether the first is read from ``C``'s transpose; a column's offsets ``o1``, ``o2``;
    its row ``g`` of ``G``; and whether the first read of a column is from the transpose."""
    m = np.array([k for k in range(_kinds(n)) if k != 2], dtype=np.intp)
    s, rev, two = (m + 1) // 2, (m % 2 == 0) & (m > 0), m == 0
    off = [np.zeros(1, np.intp) if m_ == 0 else np.array([1, 1 - s_]) for m_, s_ in zip(m.tolist(), s.tolist())]
    a1 = np.where(rev, s - 1, 0)
    a2 = np.where(two, 1, np.where(rev, 0, s - 1))
    o1, o2 = np.where(rev, s, 1), np.where(two, 2, np.where(rev, 1, s))
    g = np.where(two, 0, np.where(rev, 3 + s, s))
    return m, off, a1, a2, (~two).astype(np.intp), o1, o2, g, two.astype(np.intp)


#: positions, relative to a changed step's, of the items whose rows (of ``C`` and of its transpose)
#: the focused entries read
_READ = np.arange(-2, 4)


@lru_cache(maxsize=256)
def _plan(n: int, steps: int) -> Tuple[np.ndarray, ...]:
    """The index arrays of :func:`_focused_tables` for ``n`` items and ``steps`` changed steps: per
    row, its kind ``m``, its row of ``G``, the offset of its ``i`` from its step and its two reads'
    rows of ``Z``; per column, its ``m``, its row of ``G`` and the flat indices of its two reads.
    ``Z``'s row ``(z * 6 + d + 2) * steps + j`` is the item at ``E[j] + d``'s row of ``C``
    (``z = 0``) or of its transpose (``z = 1``), over the positions ``-1..n+2``."""
    m, off, a1, a2, z1, o1, o2, g, two = _kind_layout(n)
    per = np.array([o.size for o in off]) * steps            # rows per kind
    mr, gr = np.repeat(m, per), np.repeat(g, per)
    offr = np.concatenate([np.repeat(o, steps) for o in off])
    j = np.tile(np.arange(steps), offr.size // steps)
    at_row = (np.repeat(z1, per) * _READ.size + offr + np.repeat(a1, per) + 2) * steps + j
    at_row2 = (offr + np.repeat(a2, per) + 2) * steps + j
    mc, gc = np.repeat(m, steps), np.repeat(g, steps)
    jc = np.tile(np.arange(steps), m.size)
    width, every = n + 4, np.arange(n)
    read1 = (((np.repeat(two, steps) * _READ.size + 2) * steps + jc) * width + np.repeat(o1, steps))[:, None] + every
    read2 = (((_READ.size + 3) * steps + jc) * width + np.repeat(o2, steps))[:, None] + every
    return mr, gr, offr, at_row, at_row2, mc, gc, read1, read2


@lru_cache(maxsize=16)
def _gains(n: int) -> Tuple[np.ndarray, ...]:
    """Index arrays of :func:`_focused_tables`' ``G`` for ``n`` items, per section length ``s`` =
    1, 2, 3 and start ``i``: the step out of the section (``i + s - 1``), the positions ``i - 1`` and
    ``i + s`` bridged (as indices into the positions ``-1..n+2``), and the prefix sum's end."""
    every, s = np.arange(n), np.arange(1, 4)[:, None]
    return (every + s - 1) % n, np.broadcast_to(every, (3, n)), every + s + 1, np.minimum(every + s - 1, n)


def _focused_tables(t: np.ndarray, CC: np.ndarray, E: np.ndarray) -> Tuple[Tuple[np.ndarray, ...], ...]:
    """The entries of :func:`~.tours.move_table` (``inf`` where illegal) of the moves that remove a
    step at a position of ``E`` (2-opt: either removed step; or-opt: the gap's step or the section's
    first or last removed step), from ``CC``, ``C`` over its transpose: a block with a row per move
    kind and 2-opt step or or-opt section at ``E`` (every gap ``k``), one with a row per move kind and
    ``k`` in ``E`` (every ``i``).  Returns ``(entries, m, i, k)`` per block, broadcastable.

    ``Z`` holds rows of ``CC[:, at]``, ``at[p + 1]`` the item at position ``p`` (``-1..n+2``,
    cyclic), so the step from position ``p`` to ``q`` costs ``A[p, q] = C[at[p + 1], at[q + 1]]``,
    a row of ``C`` or of its transpose; each entry is two such steps less the removed steps ``e``
    and, for 2-opt, the prefix sums ``S`` of the reversed-minus-forward steps (``G`` holds the per-``i``
    parts: 2-opt's, then per section length what removing the section saves, kept and reversed)."""
    n, steps = t.size, E.size
    mr, gr, offr, at_row, at_row2, mc, gc, read1, read2 = _plan(n, steps)
    out, bridged, after, end = _gains(n)
    every = np.arange(n)
    at = t[np.arange(-1, n + 3) % n]
    flat = CC.ravel()
    e = flat[t * n + at[2:n + 2]]
    S = np.zeros(n + 1)
    np.cumsum(flat[at[2:n + 2] * n + t] - e, out=S[1:])
    gain = e[out] - flat[at[bridged] * n + at[after]]
    gain += e[every - 1]
    G = np.concatenate(((e + S[1:n + 1])[None, :], gain, gain - (S[end] - S[:n])))
    pen = _penalties(n)
    i = (np.tile(E, offr.size // steps) + offr) % n
    k = np.tile(E, mc.size // steps)
    items = t[(E[None, :] + _READ[:, None]) % n].ravel()
    Z = CC[np.concatenate((items, items + n))][:, at]
    by_row = Z[at_row, 1:n + 1] + Z[at_row2, 2:n + 2]
    by_row -= e
    by_row[:steps] += S[:n]                           # the 2-opt rows come first
    by_row -= G[gr, i][:, None]
    by_row += pen[mr, i]
    by_col = np.take(Z, read1)
    by_col += np.take(Z, read2)
    by_col -= G[gc]
    by_col -= e[k][:, None]
    by_col[:steps] += S[E][:, None]                   # the 2-opt columns come first
    by_col += pen[mc, :, k]
    return (by_row, mr[:, None], i[:, None], every[None, :]), (by_col, mc[:, None], every[None, :], k[:, None])


def _focused_best(t: np.ndarray, CC: np.ndarray, E: np.ndarray) -> Tuple[float, Optional[np.ndarray]]:
    """The lowest change of :func:`_focused_tables` and the tour after its move, or ``(0.0, None)``
    when it is not finite."""
    n = t.size
    best, move = np.inf, (0, 0, 0)
    for values, m, i, k in _focused_tables(t, CC, E):
        at = int(values.argmin())
        value = float(values.flat[at])
        if value != value:
            return 0.0, None
        if value < best:
            r, c = divmod(at, values.shape[1])
            best, move = value, tuple(int(np.broadcast_to(a, values.shape)[r, c]) for a in (m, i, k))
    if not np.isfinite(best):
        return 0.0, None
    return best, _apply(t, move[0] * n * n + move[1] * n + move[2])


def focused_descent(t: np.ndarray, C: np.ndarray, changed: np.ndarray, max_moves: Optional[int] = None) -> np.ndarray:
    """Best-improvement 2-opt + or-opt on ``C`` from ``t``, the moves at the items of the mask
    ``changed`` first (see the module docstring); ends at a local optimum of the whole neighbourhood
    or after ``max_moves`` moves (``4 n`` by default), as :func:`~.tours.local_search`."""
    n = t.size
    if n < 4:
        return t
    tol = EPS * (float(np.abs(C).mean()) + 1e-12)
    changed, CC = changed.copy(), np.concatenate((C, C.T))
    for _ in range(max_moves or 4 * n):
        at = changed[t]
        E = np.flatnonzero(at & np.roll(at, -1))
        delta, moved = 0.0, None
        if 0 < E.size <= n // FOCUS_SHARE:
            delta, moved = _focused_best(t, CC, E)
        if moved is None or delta >= -tol:
            delta, moved = _best_move(t, C)
            if moved is None or delta >= -tol:
                break
            changed[:] = False
        changed |= changed_items(t, moved)
        t = moved
    return t


def kicked_search(t: np.ndarray, C: np.ndarray, rng: np.random.Generator, kicks: int,
                  P: Optional[np.ndarray] = None,
                  max_moves: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray, bool]:
    """:func:`~.tours.iterated_search` (the same kicks, drawn alike from ``rng``) whose descents
    after a kick are :func:`focused_descent` from the kick's changed steps (with precedence weights
    ``P``, :func:`~.tours.order_search` as there).  Returns (best tour, last kicked tour, whether any
    kick improved on the first descent)."""
    best = last = descend(t, C, P, max_moves)
    value, improved = tour_value(best, C, P), False
    for _ in range(kicks):
        kicked = double_bridge(best, rng)
        if P is None:
            last = focused_descent(kicked, C, changed_items(best, kicked), max_moves)
        else:
            last = descend(kicked, C, P, max_moves)
        last_value = tour_value(last, C, P)
        if last_value < value:
            best, value, improved = last, last_value, True
    return best, last, improved

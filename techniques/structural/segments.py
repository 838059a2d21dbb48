"""Orientation-keeping segment insertions of a tour, ranked together with its 2-opt and or-opt moves.

A 2-opt move reverses a section: on a directed cost (``C[a, b] != C[b, a]``) it changes every step
inside the section, so a model's predicted change of it sums the errors of all those steps.  Moving a
section into another gap *without* reversing it (the orientation-keeping 3-opt move, "or-3opt": a
tour ``A B D`` becomes ``A D B``) removes three steps and adds three whatever the section's length,
so its change is predicted from six step costs.  :func:`segment_table` scores every such move of
sections of 4 up to ``longest`` items (1-3 are :func:`~.tours.move_table`'s or-opt kinds); each
orientation-keeping 3-opt move cuts the tour into three pieces and moving any one of them makes it,
so sections of up to a third of the tour reach all of them.

Called by :class:`~.metric.MetricStructuralSurrogate` when it ranks the incumbent's measured moves.
"""
from __future__ import annotations

from typing import List

import numpy as np

from .tours import REVERSING, apply_move, apply_or_opt, legal_table

#: the shortest section :func:`segment_table` moves (shorter ones are :func:`~.tours.move_table`'s)
SHORTEST = 4


def longest_section(n: int) -> int:
    """The longest section moved for a tour of ``n`` items: a third of it (every orientation-keeping
    3-opt move has a piece that short), none below ``3 * SHORTEST`` items."""
    return n // 3 if n >= 3 * SHORTEST else 0


def segment_table(t: np.ndarray, C: np.ndarray, longest: int) -> np.ndarray:
    """The value change under ``C`` of moving the ``s`` items from position ``i`` (cyclically) into the
    gap after position ``k``, orientation kept, for ``s`` = :data:`SHORTEST` .. ``longest``: an array
    ``(longest - SHORTEST + 1, n, n)`` indexed ``[s - SHORTEST, i, k]``, ``inf`` where the gap touches
    the section (empty when ``longest < SHORTEST``)."""
    n = t.size
    sizes = np.arange(SHORTEST, longest + 1)
    out = np.full((sizes.size, n, n), np.inf)
    if sizes.size == 0:
        return out
    A = C[np.ix_(t, t)]                                 # A[p, q] = C[t_p, t_q]
    idx = np.arange(n)
    before, after = (idx - 1) % n, (idx + 1) % n
    e = A[idx, after]                                   # the step out of each position
    into = A[before, idx]                               # the step into each position
    for m, s in enumerate(sizes):
        last, nxt = (idx + s - 1) % n, (idx + s) % n
        gain = into + A[last, nxt] - A[before, nxt]      # what closing the section's gap saves
        table = A.T + A[last][:, after] - e[None, :] - gain[:, None]
        table[((idx[None, :] - before[:, None]) % n) <= s] = np.inf
        out[m] = table
    return out


def ranked_directed_moves(t: np.ndarray, C: np.ndarray, limit: int, reversals: bool = True) -> List[np.ndarray]:
    """The tours of the ``limit`` moves of ``t`` whose value change under ``C`` is lowest, lowest first,
    among its or-opt moves, its orientation-keeping section moves (:func:`segment_table`) and, when
    ``reversals``, its 2-opt moves and reversed or-opt moves; a tour reached by several moves is
    listed once."""
    n = t.size
    if n < 4:
        return []
    table = legal_table(t, C)
    if not reversals:
        table[list(REVERSING)] = np.inf
    flat = np.concatenate((table.ravel(), segment_table(t, C, longest_section(n)).ravel()))
    finite = int(np.isfinite(flat).sum())
    k = min(3 * limit, finite)
    if k == 0:
        return []
    chosen = np.argpartition(flat, k - 1)[:k]
    chosen = chosen[np.argsort(flat[chosen], kind="stable")]
    out, seen, size = [], set(), table.size
    for f in chosen.tolist():
        if f < size:
            moved = apply_move(t, f)
        else:
            m, rest = divmod(f - size, n * n)
            moved = apply_or_opt(t, rest // n, SHORTEST + m, rest % n, False)
        key = np.roll(moved, -int(np.argmin(moved))).tobytes()
        if key not in seen:
            seen.add(key)
            out.append(moved)
            if len(out) == limit:
                break
    return out

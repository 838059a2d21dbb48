"""Local search for a permutation under a learned additive cost: 2-opt and or-opt on a cost matrix.

The model of :mod:`.model` gives each ordered neighbour pair ``a → b`` a cost ``C[a, b]`` (its
adjacency weight plus its direction weight; the last item is followed by the first) and, for small
permutations, each pair a precedence weight ``P[a, b]`` (paid when ``a`` comes anywhere before ``b``).
These functions minimise ``value(t) = Σ C[t_k, t_k+1] + Σ_{i<j} P[t_i, t_j]`` from a start permutation by
best-improvement moves.  Without precedence weights every move is scored in O(1) from prefix sums, all
of them at once with numpy (O(n²) per pass); with them, the whole neighbourhood is scored in a batch.

Called by ``StructuralSurrogate`` once per suggestion; pure functions of arrays of item indices.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterator, List, Optional, Tuple

import numpy as np

#: improvements smaller than this (relative to the mean edge cost) end the search
EPS = 1e-9


def tour_value(t: np.ndarray, C: np.ndarray, P: Optional[np.ndarray] = None) -> float:
    """``value(t)`` for one permutation ``t`` of item indices."""
    return float(batch_values(t[None, :], C, P)[0])


def apply_two_opt(t: np.ndarray, i: int, j: int) -> np.ndarray:
    out = t.copy()
    out[i + 1:j + 1] = t[i + 1:j + 1][::-1]
    return out


def apply_or_opt(t: np.ndarray, i: int, s: int, k: int, reverse: bool) -> np.ndarray:
    """Move the ``s`` items from position ``i`` (cyclically) into the gap after position ``k``."""
    n = t.size
    pos = (i + np.arange(s)) % n
    section = t[pos][::-1] if reverse else t[pos]
    keep = np.ones(n, dtype=bool)
    keep[pos] = False
    rest = t[keep]
    at = k - int(np.count_nonzero(pos < k)) + 1     # the gap's item keeps its place among the others
    return np.concatenate((rest[:at], section, rest[at:]))


@lru_cache(maxsize=64)
def _masks(n: int) -> np.ndarray:
    """Illegal entries of the ``(7, n, n)`` move table for ``n`` items: 2-opt ``j <= i + 1``, then per
    section length ``s`` = 1, 2, 3 the gaps touching the section (and, for reversal, sections that wrap)."""
    i, k = np.arange(n)[:, None], np.arange(n)[None, :]
    masks = [k <= i + 1]
    for s in (1, 2, 3):
        touching = ((k - (i - 1)) % n) <= s
        masks.append(touching)
        masks.append(touching | (i + s > n) | (s == 1))
    return np.stack(masks)


@lru_cache(maxsize=64)
def _layout(n: int) -> Tuple[np.ndarray, ...]:
    """Index arrays of :func:`_tables` for ``n`` items: positions ``0..n+1`` taken cyclically, each
    position's predecessor, then per ``s`` = 1, 2, 3 the cyclic positions ``i + s - 1``, then ``i + s``,
    then the flat indices of the illegal entries of each table (few but in the 2-opt table and the
    never-legal single-item reversal, which are masked otherwise)."""
    idx = np.arange(n)
    return (np.arange(n + 2) % n, (idx - 1) % n, *((idx + s - 1) % n for s in (1, 2, 3)),
            *((idx + s) % n for s in (1, 2, 3)), *(np.flatnonzero(mask) for mask in _masks(n)))


def _tables(t: np.ndarray, C: np.ndarray, out: np.ndarray, kinds: int = 7) -> Iterator[Tuple[int, np.ndarray]]:
    """The move tables of :func:`move_table` one kind ``m`` at a time (``m < kinds``; the never-legal
    ``[2]`` is not yielded), illegal entries ``inf``: yields ``(m, table)``, the table written to
    ``out[m]`` when ``out`` is ``(7, n, n)``, else into the ``(n, n)`` buffer ``out`` (read it before
    the next).  From one gather of ``C`` in tour order (positions ``0..n+1``, cyclic), each table in
    place; each entry is the same sequence of additions whatever ``out``."""
    n = t.size
    wrap, before, *rest = _layout(n)
    last, nxt, illegal = rest[:3], rest[3:6], rest[6:]
    order = t[wrap]
    BT = np.take(C, order, axis=0).T.take(order, axis=0)   # BT[p, q] = B[q, p]: rows gathered twice
    B = BT.T.copy()                                    # B[p, q] = A[p % n, q % n], A = C[t][:, t]
    idx = wrap[:n]
    e = B[idx, idx + 1]                                # e_i = A[i, i+1]
    S = np.zeros(n + 1)                                # reversed minus forward, prefix sums
    np.cumsum(B[idx + 1, idx] - e, out=S[1:])
    whole = out.ndim == 3
    table = out[0] if whole else out
    np.add(B[:n, :n], B[1:n + 1, 1:n + 1], out=table)
    table -= e[:, None]
    table -= e[None, :]
    table += S[None, :n]
    table -= S[1:n + 1][:, None]
    np.copyto(table, np.inf, where=_masks(n)[0])
    yield 0, table
    if whole:
        out[2].fill(np.inf)
    base, into = np.empty((n, n)), B[before, idx]
    for s in (1, 2, 3):
        if 2 * s - 1 >= kinds:
            return
        gain = into + B[last[s - 1], nxt[s - 1]] - B[before, nxt[s - 1]]
        np.subtract(-e[None, :], gain[:, None], out=base)
        table = out[2 * s - 1] if whole else out
        np.add(BT[:n, :n], B[s - 1:s - 1 + n, 1:n + 1], out=table)
        table += base
        table.ravel()[illegal[2 * s - 1]] = np.inf
        yield 2 * s - 1, table
        if s == 1 or 2 * s >= kinds:
            continue
        table = out[2 * s] if whole else out
        np.add(BT[s - 1:s - 1 + n, :n], B[:n, 1:n + 1], out=table)
        table += base
        table += (S[np.minimum(idx + s - 1, n)] - S[idx])[:, None]
        table.ravel()[illegal[2 * s]] = np.inf
        yield 2 * s, table


#: the kinds of :func:`move_table` that reverse a section: 2-opt and the reversed or-opt moves
REVERSING = (0, 2, 4, 6)


def move_table(t: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Every 2-opt and or-opt move of ``t`` scored at once: ``(7, n, n)`` value changes (``inf`` where
    illegal): ``[0]`` reverses ``t[i+1..j]``; ``[2s-1]`` / ``[2s]`` move the ``s`` items from ``i``
    into the gap after ``k`` kept / reversed (``s`` = 1, 2, 3; sections reversed only when they do not
    wrap, so never a single item), computed by :func:`_tables`."""
    n = t.size
    out = np.empty((7, n, n))
    for _ in _tables(t, C, out):
        pass
    return out


def _kinds(n: int) -> int:
    """The move kinds of :func:`move_table` a tour of ``n`` items can make: sections of 2-3 items need
    at least 3 others, any or-opt move at least 5 items."""
    return 1 if n < 5 else 5 if n < 6 else 7


def legal_table(t: np.ndarray, C: np.ndarray) -> np.ndarray:
    """:func:`move_table` with the moves that need more items than ``t`` has set to ``inf``."""
    table = move_table(t, C)
    table[_kinds(t.size):] = np.inf
    return table


def apply_move(t: np.ndarray, flat: int) -> np.ndarray:
    """``t`` after the move at index ``flat`` of its (flattened) move table."""
    n = t.size
    m, rest = divmod(flat, n * n)
    i, k = divmod(rest, n)
    if m == 0:
        return apply_two_opt(t, i, k)
    s, reverse = (m + 1) // 2, m % 2 == 0
    return apply_or_opt(t, i, s, k, reverse)


def _best_move(t: np.ndarray, C: np.ndarray) -> Tuple[float, Optional[np.ndarray]]:
    """The lowest change of :func:`legal_table` and the tour after its move (the first of equal ones
    in the table's flat order, as its argmin), or ``(0.0, None)`` when it is not finite.  Each kind's
    table is scored in turn in one ``(n, n)`` buffer, so that the working set stays in cache."""
    n = t.size
    buffer = np.empty((n, n))
    best, flat = np.inf, -1
    for m, table in _tables(t, C, buffer, _kinds(n)):
        k = int(table.argmin())
        value = float(table.flat[k])
        if value != value:                 # NaN: the whole table's argmin is its first NaN
            return 0.0, None
        if value < best:
            best, flat = value, m * n * n + k
    if flat < 0 or not np.isfinite(best):
        return 0.0, None
    return best, apply_move(t, flat)


def ranked_moves(t: np.ndarray, C: np.ndarray, limit: int) -> List[np.ndarray]:
    """The tours of the ``limit`` 2-opt and or-opt moves of ``t`` whose value change under ``C`` is
    lowest, lowest first (shortening or not: from a local optimum of ``C`` they are the moves an
    error in ``C`` most likely hides)."""
    if t.size < 4:
        return []
    table = legal_table(t, C).ravel()
    k = min(limit, int(np.isfinite(table).sum()))
    if k == 0:
        return []
    chosen = np.argpartition(table, k - 1)[:k]
    chosen = chosen[np.argsort(table[chosen], kind="stable")]
    return [apply_move(t, int(f)) for f in chosen]


def local_search(t: np.ndarray, C: np.ndarray, max_moves: Optional[int] = None) -> np.ndarray:
    """Best-improvement 2-opt + or-opt (sections of 1-3, either orientation) on cost matrix ``C``."""
    n = t.size
    if n < 4:
        return t
    tol = EPS * (float(np.abs(C).mean()) + 1e-12)
    for _ in range(max_moves or 4 * n):
        delta, moved = _best_move(t, C)
        if moved is None or delta >= -tol:
            break
        t = moved
    return t


def double_bridge(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The classic kick out of a 2-opt/or-opt optimum: cut into four parts A B C D, reconnect as A C B D."""
    cuts = np.sort(rng.choice(np.arange(1, t.size), 3, replace=False))
    a, b, c = (int(x) for x in cuts)
    return np.concatenate((t[:a], t[b:c], t[a:b], t[c:]))


def descend(t: np.ndarray, C: np.ndarray, P: Optional[np.ndarray] = None,
            max_moves: Optional[int] = None) -> np.ndarray:
    """:func:`local_search` on neighbour costs alone, :func:`order_search` with precedence weights."""
    return local_search(t, C, max_moves) if P is None else order_search(t, C, P, max_moves)


def iterated_search(t: np.ndarray, C: np.ndarray, rng: np.random.Generator, kicks: int,
                    P: Optional[np.ndarray] = None,
                    max_moves: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray, bool]:
    """Iterated local search: descend from ``t``, then ``kicks`` double-bridge kicks each followed by a
    descent, a kicked tour kept when its value is lower.  Returns (best tour, last kicked tour, whether
    any kick improved on the first descent)."""
    best = last = descend(t, C, P, max_moves)
    value, improved = tour_value(best, C, P), False
    for _ in range(kicks):
        last = descend(double_bridge(best, rng), C, P, max_moves)
        last_value = tour_value(last, C, P)
        if last_value < value:
            best, value, improved = last, last_value, True
    return best, last, improved


@lru_cache(maxsize=32)
def _neighbour_sources(n: int) -> np.ndarray:
    """Rows of source positions: ``t[rows]`` is every insertion move (item at ``i`` put at ``j``) and
    every swap of a permutation ``t`` of ``n`` items (built once per ``n``)."""
    k = np.arange(n)
    rows = []
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            src = k.copy()
            if i < j:
                src[i:j] = k[i + 1:j + 1]
            else:
                src[j + 1:i + 1] = k[j:i]
            src[j] = i
            rows.append(src)
    for i in range(n):
        for j in range(i + 2, n):  # adjacent swaps are insertions already
            src = k.copy()
            src[i], src[j] = j, i
            rows.append(src)
    return np.array(rows)


def _neighbourhood(t: np.ndarray) -> np.ndarray:
    """Every insertion move and every swap of ``t``, as rows (for the batch search)."""
    return t[_neighbour_sources(t.size)]


@lru_cache(maxsize=32)
def _pair_positions(n: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(next position of each position, cyclic), and the position pairs ``i < j``, for ``n`` items."""
    iu = np.triu_indices(n, 1)
    return np.roll(np.arange(n), -1), iu[0], iu[1]


def batch_values(T: np.ndarray, C: np.ndarray, P: Optional[np.ndarray] = None) -> np.ndarray:
    """``value`` of each row of ``T`` (permutations as rows)."""
    nxt, first, second = _pair_positions(T.shape[1])
    values = C[T, T[:, nxt]].sum(axis=1)
    return values if P is None else values + P[T[:, first], T[:, second]].sum(axis=1)


@lru_cache(maxsize=32)
def _move_positions(n: int) -> Tuple[np.ndarray, ...]:
    """(i, j) of the insertion moves with ``i < j``, with ``i > j``, and of the swaps, each as a mask over
    the rows of :func:`_neighbour_sources` (insertions first, then swaps, in its order)."""
    ins = [(i, j) for i in range(n) for j in range(n) if i != j]
    swaps = [(i, j) for i in range(n) for j in range(i + 2, n)]
    i = np.array([a for a, _ in ins + swaps], dtype=np.intp)
    j = np.array([b for _, b in ins + swaps], dtype=np.intp)
    swap = np.arange(i.size) >= len(ins)
    return i, j, (i < j) & ~swap, (i > j) & ~swap, swap


def precedence_changes(t: np.ndarray, P: np.ndarray) -> np.ndarray:
    """The change of ``Σ_{a before b} P[a, b]`` made by each move of :func:`_neighbourhood` (same row
    order), from prefix sums in O(n²) instead of re-summing the n²/2 pairs of every neighbour.

    With ``D[b, a] = P[b, a] - P[a, b]`` (the change when ``b`` passes in front of ``a``) and
    ``F[i, m] = Σ_{k<m} D[t_k, t_i]``: moving ``t_i`` right to ``j`` changes the value by
    ``F[i, j+1] - F[i, i+1]``, moving it left to ``j`` by ``F[i, j] - F[i, i]``, and swapping ``t_i``
    and ``t_j`` (``i < j``) by ``D[t_j, t_i] + (F[i, j] - F[i, i+1]) - (F[j, j] - F[j, i+1])``."""
    n = t.size
    i, j, right, left, swap = _move_positions(n)
    D = P - P.T
    E = D[t[None, :], t[:, None]]                 # E[i, k] = D[t_k, t_i]
    F = np.zeros((n, n + 1))
    np.cumsum(E, axis=1, out=F[:, 1:])
    out = np.empty(i.size)
    a, b = i[right], j[right]
    out[right] = F[a, b + 1] - F[a, a + 1]
    a, b = i[left], j[left]
    out[left] = F[a, b] - F[a, a]
    a, b = i[swap], j[swap]
    out[swap] = E[a, b] + (F[a, b] - F[a, a + 1]) - (F[b, b] - F[b, a + 1])
    return out


def order_search(t: np.ndarray, C: np.ndarray, P: np.ndarray, max_moves: Optional[int] = None) -> np.ndarray:
    """Best-improvement insertion/swap search on adjacency and precedence weights (small permutations):
    each pass scores the whole neighbourhood, its adjacency part in a batch and its precedence part by
    :func:`precedence_changes`."""
    if t.size < 2:
        return t
    value = tour_value(t, C, P)
    tol = EPS * (float(np.abs(C).mean() + np.abs(P).mean()) + 1e-12)
    nxt = _pair_positions(t.size)[0]
    for _ in range(max_moves or 2 * t.size):
        T = _neighbourhood(t)
        vals = C[T, T[:, nxt]].sum(axis=1) + (value - float(C[t, t[nxt]].sum())) + precedence_changes(t, P)
        k = int(np.argmin(vals))
        if vals[k] >= value - tol:
            break
        t, value = T[k], tour_value(T[k], C, P)
    return t

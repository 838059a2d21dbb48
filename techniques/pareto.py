"""Pareto dominance, non-dominated sorting, crowding distance and exact hypervolume.

Every objective is minimised (callers orient maximised metrics first).  Points are sequences of
floats of one length ``d``; the functions take lists, tuples or 2-D numpy arrays.

The hypervolume is exact: a sweep for ``d <= 2`` and the "hypervolume by slicing objectives" (HSO)
recursion for ``d >= 3``, which is exponential in ``d`` in the worst case but fast for the fronts of
a tuning run (tens to a few hundred points, two to five objectives).  Points that do not strictly
dominate the reference point contribute nothing.
"""
from __future__ import annotations

from typing import List, Sequence, Union

import numpy as np

__all__ = ["crowding_distance", "dominates", "hypervolume", "hypervolume_improvement", "non_dominated",
           "non_dominated_sort"]

#: comparisons (rows x points x objectives) held at once by :func:`non_dominated`
BLOCK_CELLS = 1 << 20
#: objective vectors, one per point: nested sequences or an array of shape (points, objectives)
Points = Union[Sequence[Sequence[float]], np.ndarray]


def _array(points: Points) -> np.ndarray:
    arr = np.asarray(points, dtype=float)
    if arr.size == 0:
        return arr.reshape(0, 0)
    if arr.ndim != 2:
        raise ValueError(f"points must be a list of objective vectors, got shape {arr.shape}")
    return arr


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """True when ``a`` is no worse than ``b`` in every objective and better in at least one."""
    if len(a) != len(b):
        raise ValueError(f"objective vectors of different lengths: {len(a)} and {len(b)}")
    better = False
    for x, y in zip(a, b):
        if x > y:
            return False
        if x < y:
            better = True
    return better


def non_dominated(points: Points) -> List[int]:
    """Indices (ascending) of the points that no other point dominates.

    Duplicates of a non-dominated point are all kept (none dominates another); a point containing
    NaN is treated as dominated by every point without NaN.  Two objectives without NaN: one sort
    (``n log n``); otherwise compared in blocks of rows against all points at once (``BLOCK_CELLS``
    comparisons per block).
    """
    arr = _array(points)
    n = len(arr)
    if n == 0:
        return []
    finite = ~np.isnan(arr).any(axis=1)
    if not finite.any():
        return list(range(n))
    if arr.shape[1] == 2 and finite.all():
        return _non_dominated_2d(arr)
    others = arr[finite]
    keep = np.zeros(n, dtype=bool)
    step = max(1, BLOCK_CELLS // max(others.size, 1))
    for start in range(0, n, step):
        rows = arr[start:start + step, None, :]
        dominated = (np.all(others[None] <= rows, axis=2) & np.any(others[None] < rows, axis=2)).any(axis=1)
        keep[start:start + step] = ~dominated
    return [int(i) for i in np.flatnonzero(keep & finite)]


def _non_dominated_2d(arr: np.ndarray) -> List[int]:
    """:func:`non_dominated` of two objectives without NaN by one sort: in lexicographic order a
    point is dominated when a point before it, other than its duplicates, has no larger second value."""
    order = np.lexsort((arr[:, 1], arr[:, 0]))
    ranked = arr[order]
    n = len(arr)
    fresh = np.ones(n, dtype=bool)
    fresh[1:] = np.any(ranked[1:] != ranked[:-1], axis=1)
    group_start = np.maximum.accumulate(np.where(fresh, np.arange(n), 0))
    lowest_before = np.concatenate([[np.inf], np.minimum.accumulate(ranked[:, 1])])
    keep = np.zeros(n, dtype=bool)
    keep[order] = (group_start == 0) | (lowest_before[group_start] > ranked[:, 1])
    return [int(i) for i in np.flatnonzero(keep)]


def non_dominated_sort(points: Points) -> List[List[int]]:
    """Fronts of the points, best first: front 0 is :func:`non_dominated`, front 1 is the
    non-dominated set of what remains, and so on.  Every index appears in exactly one front."""
    arr = _array(points)
    n = len(arr)
    if n == 0:
        return []
    # Deb's fast non-dominated sort: dominated-by counts and dominated sets
    leq = np.all(arr[:, None, :] <= arr[None, :, :], axis=2)
    lt = np.any(arr[:, None, :] < arr[None, :, :], axis=2)
    dom = leq & lt                                   # dom[i, j]: i dominates j
    count = dom.sum(axis=0).astype(int)              # how many points dominate j
    fronts: List[List[int]] = []
    current = [int(j) for j in np.flatnonzero(count == 0)]
    while current:
        fronts.append(current)
        nxt: List[int] = []
        for i in current:
            for j in np.flatnonzero(dom[i]):
                count[j] -= 1
                if count[j] == 0:
                    nxt.append(int(j))
        current = sorted(nxt)
    placed = sum(len(f) for f in fronts)
    if placed < n:  # NaN rows compare false both ways: put them last
        seen = {i for f in fronts for i in f}
        fronts.append([i for i in range(n) if i not in seen])
    return fronts


def crowding_distance(points: Points) -> np.ndarray:
    """NSGA-II crowding distance of each point within its set (larger = more isolated).

    The extreme points of every objective get ``inf``; an objective whose values are all equal
    adds nothing.  Sets of one or two points are all ``inf``.
    """
    arr = _array(points)
    n = len(arr)
    dist = np.zeros(n)
    if n <= 2:
        dist[:] = np.inf
        return dist
    for k in range(arr.shape[1]):
        order = np.argsort(arr[:, k], kind="stable")
        col = arr[order, k]
        span = col[-1] - col[0]
        dist[order[0]] = dist[order[-1]] = np.inf
        if not span > 0:
            continue
        dist[order[1:-1]] += (col[2:] - col[:-2]) / span
    return dist


def _hv2(arr: np.ndarray, ref: np.ndarray) -> float:
    order = np.lexsort((arr[:, 1], arr[:, 0]))
    total, best_y = 0.0, ref[1]
    for x, y in arr[order]:
        if y < best_y:
            total += (ref[0] - x) * (best_y - y)
            best_y = y
    return float(total)


def _hso(arr: np.ndarray, ref: np.ndarray) -> float:
    """Slice along the last objective: the volume is a sum of slabs, each the (d-1)-dimensional
    hypervolume of the points already below the slab times its thickness."""
    d = arr.shape[1]
    if len(arr) == 0:
        return 0.0
    if d == 1:
        return float(ref[0] - arr[:, 0].min())
    if d == 2:
        return _hv2(arr, ref)
    order = np.argsort(arr[:, -1], kind="stable")
    arr = arr[order]
    total = 0.0
    for i in range(len(arr)):
        upper = arr[i + 1, -1] if i + 1 < len(arr) else ref[-1]
        depth = upper - arr[i, -1]
        if depth <= 0:
            continue
        below = arr[: i + 1, :-1]
        below = below[non_dominated(below)]
        total += depth * _hso(below, ref[:-1])
    return float(total)


def hypervolume(points: Points, reference: Sequence[float] | np.ndarray) -> float:
    """Volume of the region dominated by ``points`` and bounded by ``reference`` (minimisation).

    Points that are not strictly better than the reference in every objective are ignored, so an
    empty or entirely out-of-box set has hypervolume 0.
    """
    ref = np.asarray(reference, dtype=float)
    arr = _array(points)
    if arr.size == 0:
        return 0.0
    if arr.shape[1] != len(ref):
        raise ValueError(f"reference has {len(ref)} objectives, points have {arr.shape[1]}")
    arr = arr[np.all(arr < ref, axis=1)]
    if len(arr) == 0:
        return 0.0
    arr = arr[non_dominated(arr)]
    arr = np.unique(arr, axis=0)
    return _hso(arr, ref)


def hypervolume_improvement(front: Points, point: Sequence[float],
                            reference: Sequence[float]) -> float:
    """How much adding ``point`` to ``front`` grows the hypervolume (0 when it is dominated,
    duplicated or outside the reference box)."""
    arr = _array(front)
    p = np.asarray(point, dtype=float)[None, :]
    if arr.size == 0:
        return hypervolume(p, reference)
    before = hypervolume(arr, reference)
    after = hypervolume(np.vstack([arr, p]), reference)
    return max(0.0, after - before)

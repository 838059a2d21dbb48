"""Candidates of MultiObjectiveBO aimed at the gaps of the observed front (``gap_moves``).

The expected hypervolume improvement weighs each gap of the front by how much it can still gain,
but it can only choose among the candidates it is shown: random draws of the whole space, one-
parameter steps of the local search, crossovers of random pairs of good configurations and moves
around single front members.  Where two neighbours of the front lie far apart (on the HPVM2FPGA
model: a design of 3 ms at a resource share of 1.5 and the next one at 7 ms and 0.5), the designs
between them usually differ from both in many parameters at once, and few of those candidates land
there.

So the hypervolume proposals' candidates also include moves along the path between neighbouring
front members (path relinking): a member with a random share of the parameters in which it
differs from its neighbour set to the neighbour's values.  The pair of each move is drawn with
probability proportional to its gap's size, the volume of the box the two neighbours span in the
front's normalised units (in two objectives, the empty rectangle between consecutive points, whose
hypervolume is what a point between them can add at most), so the largest gaps get the most moves.

:func:`front_gaps` and :func:`gap_moves` are called once per hypervolume proposal on a space too
large to be scored whole; the moves join the local search's random pool and are scored by the same
acquisition, so one is proposed only when the model rates it above the other candidates.
"""
from __future__ import annotations

import random
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

Config = Dict[str, Any]

#: gap moves drawn per hypervolume proposal
GAP_MOVES = 256


def front_gaps(points: np.ndarray) -> List[Tuple[int, int, float]]:
    """The gaps of a front: ``(i, j, size)`` for neighbouring rows ``i`` and ``j`` of ``points``
    (non-dominated objective vectors, lower is better), ``size`` the volume of the box they span
    after scaling every objective to the front's range (0 for an objective the front does not
    spread).  With two objectives the neighbours are consecutive in the first objective; with more,
    each point is paired with its nearest other point.  Pairs of size 0 are left out; none for
    fewer than two points."""
    pts = np.asarray(points, dtype=float)
    extent = pts.max(axis=0) - pts.min(axis=0) if len(pts) else pts[:0]
    if len(pts) < 2 or not np.any(extent > 0):
        return []
    unit = np.where(extent > 0, (pts - pts.min(axis=0)) / np.where(extent > 0, extent, 1.0), 0.0)
    if pts.shape[1] == 2:
        order = np.lexsort((unit[:, 1], unit[:, 0]))
        pairs = {(int(a), int(b)) for a, b in zip(order[:-1], order[1:])}
    else:
        d2 = ((unit[:, None, :] - unit[None, :, :]) ** 2).sum(axis=2)
        np.fill_diagonal(d2, np.inf)
        pairs = {tuple(sorted((i, int(np.argmin(d2[i]))))) for i in range(len(pts))}  # type: ignore[misc]
    out = []
    for i, j in sorted(pairs):
        size = float(np.prod(np.abs(unit[i] - unit[j])[extent > 0]))
        if size > 0:
            out.append((i, j, size))
    return out


def gap_moves(configs: Sequence[Config], gaps: Sequence[Tuple[int, int, float]], names: Sequence[str],
              rng: random.Random, feasible: Callable[[Config], bool], count: int = GAP_MOVES) -> List[Config]:
    """Up to ``count`` feasible moves between the front members ``configs`` (rows of the points
    :func:`front_gaps` was given): for each, a gap drawn with probability proportional to its size,
    one of its two members at random as the start, and ``k`` of the parameters in which the start
    differs from the other member (among ``names``), ``k`` from 1 to one fewer than their number,
    set to the other's values.  Moves equal to either member are dropped; none without gaps."""
    usable = [(i, j, s) for i, j, s in gaps if sum(configs[i][n] != configs[j][n] for n in names) > 1]
    if not usable:
        return []
    sizes = [s for _, _, s in usable]
    out: List[Config] = []
    for _ in range(count):
        i, j, _ = rng.choices(usable, weights=sizes)[0]
        start, other = (configs[i], configs[j]) if rng.random() < 0.5 else (configs[j], configs[i])
        differ = [n for n in names if start[n] != other[n]]
        child = dict(start)
        for n in rng.sample(differ, rng.randint(1, len(differ) - 1)):
            child[n] = other[n]
        if child != start and child != other and feasible(child):
            out.append(child)
    return out


def with_gap_moves(extra: Optional[Callable[[], List[Config]]], configs: Sequence[Config], points: np.ndarray,
                   names: Sequence[str], rng: random.Random,
                   feasible: Callable[[Config], bool]) -> Callable[[], List[Config]]:
    """The local search's extra candidates ``extra`` (None: none) joined by :func:`gap_moves` between
    the front members ``configs`` at ``points``; drawn only when called (never on a space scored whole)."""
    def candidates() -> List[Config]:
        return (list(extra()) if extra is not None else []) + gap_moves(configs, front_gaps(points), names, rng,
                                                                          feasible)
    return candidates

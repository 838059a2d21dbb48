"""Expected hypervolume improvement (EHVI) of independent Gaussian predictions, computed exactly.

Every objective is minimised.  For a candidate whose objectives are independent normals
``N(mu_j, sigma_j**2)``, the expected growth of the hypervolume that ``front`` dominates up to the
reference point ``ref`` is the integral, over the region below ``ref`` that no front point
dominates, of ``prod_j P(Y_j <= z_j)`` (Fubini: the improvement is the volume of that region the
candidate dominates).  The region is cut into boxes: a grid over the first ``d - 1`` objectives at
the front's coordinates, each grid cell extended along the last objective from ``-inf`` up to the
lowest last coordinate of the front points that weakly dominate the cell's lower corner (or
``ref``).  Over a box ``[l, u]`` the integral factorises into
``prod_j sigma_j * (h((u_j - mu_j) / sigma_j) - h((l_j - mu_j) / sigma_j))`` with
``h(t) = phi(t) + t Phi(t)``, the integral of the normal CDF, and ``h(-inf) = 0``.

With two objectives the grid has ``n + 1`` boxes for a front of ``n`` points; with ``d`` objectives
at most ``(n + 1) ** (d - 1)``.  With one objective the result is the expected improvement over the
front's best.  :func:`expected_hypervolume_improvement` is called once per acquisition evaluation
(many candidates at once); :func:`box_decomposition` once per proposal.
"""
from __future__ import annotations

import itertools
import math
from typing import Sequence, Tuple

import numpy as np
from scipy.special import ndtr

from ..pareto import Points, non_dominated
from .acquisition import log_h

#: candidates scored per block (bounds the candidates x boxes matrices held at once)
BLOCK = 4096
SQRT_2PI = math.sqrt(2.0 * math.pi)


def h(t: np.ndarray) -> np.ndarray:
    """``phi(t) + t Phi(t)`` (the integral of the standard normal CDF up to ``t``); 0 at ``-inf``.
    Directly above ``t = -5``, through the asymptotic expansion of :func:`.acquisition.log_h` below."""
    t = np.asarray(t, dtype=float)
    direct = t > -5.0
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.where(direct, np.exp(-0.5 * t * t) / SQRT_2PI + t * ndtr(t), 0.0)
    deep = ~direct & np.isfinite(t)
    if deep.any():
        out[deep] = np.exp(log_h(t[deep]))
    out[np.isposinf(t)] = np.inf
    return out


def box_decomposition(front: Points, ref: Sequence[float] | np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Disjoint boxes covering the region below ``ref`` that no point of ``front`` weakly dominates.

    Returns ``(lower, upper)``, each of shape ``(boxes, d)``; ``lower[:, -1]`` is ``-inf`` and so are
    the lower bounds of the first grid cell of every objective.  Front points not strictly below
    ``ref`` in every objective are ignored."""
    r = np.asarray(ref, dtype=float)
    d = len(r)
    pts = np.asarray(front, dtype=float).reshape(-1, d)
    pts = pts[np.all(pts < r, axis=1)]
    if len(pts):
        pts = np.unique(pts[non_dominated(pts)], axis=0)
    grids = [np.concatenate([[-np.inf], np.unique(pts[:, j]), [r[j]]]) for j in range(d - 1)]
    lowers, uppers = [], []
    for cell in itertools.product(*(range(len(g) - 1) for g in grids)):
        lo = np.array([grids[j][i] for j, i in enumerate(cell)])
        hi = np.array([grids[j][i + 1] for j, i in enumerate(cell)])
        below = np.all(pts[:, : d - 1] <= lo, axis=1) if len(pts) else np.zeros(0, dtype=bool)
        top = min(r[-1], float(pts[below, -1].min())) if below.any() else r[-1]
        lowers.append(np.append(lo, -np.inf))
        uppers.append(np.append(hi, top))
    return np.array(lowers).reshape(-1, d), np.array(uppers).reshape(-1, d)


def expected_hypervolume_improvement(mean: np.ndarray, std: np.ndarray, lower: np.ndarray,
                                     upper: np.ndarray) -> np.ndarray:
    """EHVI of ``m`` candidates with independent normal objectives (``mean``, ``std``: shape
    ``(m, d)``) over the boxes of :func:`box_decomposition`; returns an array of length ``m``."""
    mean = np.atleast_2d(np.asarray(mean, dtype=float))
    std = np.maximum(np.atleast_2d(np.asarray(std, dtype=float)), 1e-12)
    out = np.empty(len(mean))
    for start in range(0, len(mean), BLOCK):
        mu, sd = mean[start:start + BLOCK], std[start:start + BLOCK]
        total = np.ones((len(mu), len(lower)))
        for j in range(mean.shape[1]):
            m, s = mu[:, j:j + 1], sd[:, j:j + 1]
            total *= s * (h((upper[None, :, j] - m) / s) - h((lower[None, :, j] - m) / s))
        out[start:start + BLOCK] = np.maximum(total, 0.0).sum(axis=1)
    return out


def hypervolume_improvements(points: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The hypervolume each point of ``points`` (shape ``(..., d)``) adds to the front whose
    :func:`box_decomposition` is ``(lower, upper)``: the volume of the boxes it dominates; shape
    ``points.shape[:-1]``.  Called on posterior samples by the Monte-Carlo EHVI of
    :class:`~.metric_ehvi.MetricUnits`."""
    pts = np.asarray(points, dtype=float)[..., None, :]          # (..., 1, d) against (boxes, d)
    sides = np.clip(upper - np.maximum(pts, lower), 0.0, None)
    return np.prod(sides, axis=-1).sum(axis=-1)

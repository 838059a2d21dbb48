"""Embeddings of a permutation's items whose distances model its pairwise (tour) weights.

An :class:`Embedding` models the weight of the *directed* step from item ``i`` to item ``j`` of each
permutation (one adjacency feature group, and its direction group) as

* symmetric: ``w_ij = mu + |x_i - x_j|``, one point ``x_i`` in ``R^d`` per item (``n·d + 1``
  unknowns), written on the adjacency features (direction weights 0);
* directed: ``w_ij = mu + |a_i - b_j|``, an out-point ``a_i`` and an in-point ``b_i`` per item
  (``2·n·d + 1`` unknowns; ``a = b`` is the symmetric model).  The symmetric part
  ``(w_ij + w_ji) / 2`` goes on the adjacency feature of ``{i, j}`` and the antisymmetric part
  ``(w_ij - w_ji) / 2`` on the direction feature of ``(i, j)``, so that a step's adjacency plus
  direction weight is ``w_ij``.  Road distances with one-way streets, detours and climbs (most
  asymmetric TSP instances) have this form far better than the symmetric one: the asymmetry is a
  difference between where a route leaves an item and where it arrives.

The fit is least squares of the values over ``theta`` (every block's ``mu`` and points), with ridge
:data:`RIDGE` per observation on the points, by L-BFGS with vectorised gradients.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from ...parameters.features import FeatureGroup

#: ridge on the positions, per observation (standardized values)
RIDGE = 1e-6

#: ridge on the difference of an item's out- and in-point, per observation (standardized values):
#: shrinks a directed embedding towards the symmetric one where few results determine it
ASYM_RIDGE = 1e-3

#: smoothing of the distance at 0 (keeps the gradient finite)
EPS = 1e-10


class Embedding:
    """Points of the items of the permutations in ``blocks`` (adjacency groups; ``directions`` their
    direction groups, needed when ``directed``), one ``mu`` each, packed in one vector ``theta``."""

    def __init__(self, blocks: List[FeatureGroup], dim: int, directed: bool = False,
                 directions: Optional[List[FeatureGroup]] = None) -> None:
        if directed and (directions is None or len(directions) != len(blocks)):
            raise ValueError("a directed embedding needs the direction group of every adjacency block")
        self.blocks, self.dim, self.directed = blocks, dim, directed
        self.directions = directions or []
        self.sets = 2 if directed else 1          # point sets per item: out and in, or one
        self.iu = [np.triu_indices(g.active, 1) for g in blocks]
        self.size = sum(1 + self.sets * g.active * dim for g in blocks)

    def start(self, rng: np.random.Generator) -> np.ndarray:
        """A random start: positions of spread 0.1, ``mu`` 0."""
        parts = []
        for g in self.blocks:
            parts += [np.zeros(1), 0.1 * rng.standard_normal(self.sets * g.active * self.dim)]
        return np.concatenate(parts)

    def lifted(self, symmetric: np.ndarray) -> np.ndarray:
        """The directed ``theta`` of a symmetric one of the same blocks and dimension: every item's
        out- and in-point at its symmetric position (the same weights)."""
        parts, at = [], 0
        for g in self.blocks:
            m = g.active * self.dim
            Z = symmetric[at + 1:at + 1 + m]
            parts += [symmetric[at:at + 1], Z, Z]
            at += 1 + m
        return np.concatenate(parts)

    def _split(self, theta: np.ndarray) -> List[Tuple[float, np.ndarray, np.ndarray, int]]:
        """Per block: ``mu``, out-points, in-points (the same array when symmetric), offset in ``theta``."""
        out, at = [], 0
        for g in self.blocks:
            m = g.active * self.dim
            A = theta[at + 1:at + 1 + m].reshape(g.active, self.dim)
            B = theta[at + 1 + m:at + 1 + 2 * m].reshape(g.active, self.dim) if self.directed else A
            out.append((float(theta[at]), A, B, at))
            at += 1 + self.sets * m
        return out

    @staticmethod
    def _distances(A: np.ndarray, B: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        diff = A[:, None, :] - B[None, :, :]
        return diff, np.sqrt((diff ** 2).sum(-1) + EPS)

    def weights(self, theta: np.ndarray, size: int) -> np.ndarray:
        """The weight vector (``size`` features) of ``theta`` (see the module docstring); 0 on the
        features of no block."""
        w = np.zeros(size)
        for k, (g, iu, (mu, A, B, _)) in enumerate(zip(self.blocks, self.iu, self._split(theta))):
            W = mu + self._distances(A, B)[1]
            if not self.directed:
                w[g.start:g.stop] = W[iu]
                continue
            w[g.start:g.stop] = (0.5 * (W + W.T))[iu]
            d = self.directions[k]
            w[d.start:d.stop] = (0.5 * (W - W.T)).ravel()
        return w

    def loss(self, theta: np.ndarray, X: sp.csr_matrix, y: np.ndarray) -> Tuple[float, np.ndarray]:
        """``½|X w(θ) - y|² + ½ λ |points|² + ½ λ_a |a - b|²`` (the last when directed) and its gradient."""
        r = X @ self.weights(theta, X.shape[1]) - y
        g = X.T @ r
        lam, lam_a = RIDGE * max(y.size, 1), ASYM_RIDGE * max(y.size, 1)
        grad = np.zeros_like(theta)
        value = 0.5 * float(r @ r)
        for k, (blk, iu, (_, A, B, at)) in enumerate(zip(self.blocks, self.iu, self._split(theta))):
            n, m = blk.active, blk.active * self.dim
            G = np.zeros((n, n))                   # d loss / d w_ij
            G[iu] = g[blk.start:blk.stop]
            grad[at] = G[iu].sum()
            diff, D = self._distances(A, B)
            if self.directed:
                d = self.directions[k]
                Gd = g[d.start:d.stop].reshape(n, n)
                Q = (0.5 * (G + G.T + Gd - Gd.T) / D)[:, :, None] * diff
                S = A - B
                grad[at + 1:at + 1 + m] = (Q.sum(1) + lam * A + lam_a * S).ravel()
                grad[at + 1 + m:at + 1 + 2 * m] = (-Q.sum(0) + lam * B - lam_a * S).ravel()
                value += 0.5 * lam * float((A * A).sum() + (B * B).sum()) + 0.5 * lam_a * float((S * S).sum())
            else:
                G = G + G.T
                grad[at + 1:at + 1 + m] = ((G / D)[:, :, None] * diff).sum(1).ravel() + lam * A.ravel()
                value += 0.5 * lam * float((A * A).sum())
        return value, grad

    def fit(self, X: sp.csr_matrix, y: np.ndarray, theta: np.ndarray, iterations: int) -> Tuple[np.ndarray, float]:
        """``theta`` refined by L-BFGS on ``X``, ``y``; returns it and its loss."""
        res = minimize(self.loss, theta, args=(X, y), jac=True, method="L-BFGS-B",
                       options={"maxiter": iterations, "maxfun": 2 * iterations})
        return np.asarray(res.x), float(res.fun)

    def r2(self, theta: np.ndarray, X: sp.csr_matrix, y: np.ndarray) -> float:
        """``1 - SSE / SST`` of ``theta``'s predictions of ``y``."""
        r = X @ self.weights(theta, X.shape[1]) - y
        sst = float(((y - y.mean()) ** 2).sum())
        return 1.0 - float(r @ r) / sst if sst > 0 else 0.0

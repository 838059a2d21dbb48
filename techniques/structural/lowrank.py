"""A low-rank prior mean for the pairwise weights of permutations, fitted to the observed values.

With ``n`` items a tour has about ``n²/2`` adjacency weights (and ``n²`` direction weights), far more
than a few thousand measurements determine; but in a tour, a loop order or a schedule the cost of a
pair comes from properties of its two items.  :class:`LowRankBayesLinear` models each permutation's
weights as

* adjacency ``{i, j}``: ``mu + (u_i·v_j + u_j·v_i) / 2`` (a symmetric matrix of rank at most ``2k``,
  indefinite, as a distance matrix is),
* direction ``i → j``: ``p_i·q_j`` (rank ``k``, asymmetric),

with ``n(4k) + 1`` unknowns per permutation (``n(2k) + 1`` without direction features) instead of
about ``1.5 n²``.  (Per-item terms ``b_i + b_j`` are left out: every item of a closed tour has exactly
two neighbours, one successor and one predecessor, so they add a constant to every tour.)  A
permutation whose factors at the starting rank are not fewer than the adjacency and direction weights
they centre (``1 + 8n >= n(n-1)/2 + n²`` at rank 2, which holds up to 5 items) gets no low-rank prior:
the factors could not be better determined than the weights themselves, and its weights stay free, as
in :class:`~.model.SparseBayesLinear` (:meth:`_Block.identifiable`).  Other features (one-hot, numbers,
precedence) enter the fit as free weights so that they do not bias it, but give no prior mean.  The
factors are fitted to the standardized values by L-BFGS on ``½|X w(θ) - y|² + ½ λ |θ|²`` (the direction
factors' ridge :data:`DIRECTION_PENALTY` times larger), warm-started from the previous fit, whenever the
data grew by a quarter or by :data:`REFIT_EVERY` results.  The rank starts at :data:`RANKS`\\[0] and,
each time the data doubled, grows to the next step if that lowers the squared error on every fifth
observation held out (the others fitted) by :data:`GAIN`.

The low-rank weights are the *centre* of the Gaussian prior of :class:`~.model.SparseBayesLinear`
(``w_j ~ N(m_j, s_g)``): an edge never measured is predicted from its items' factors instead of weighing
what a random edge weighs, while the full-rank posterior still fits every observation.  Once the
observations outnumber a permutation's features the data determine the weights themselves and the
factors are no longer refitted (the hand-over to the full-rank model).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from ...parameters.features import FeatureGroup
from ..options import Option
from .model import SparseBayesLinear
from .technique import StructuralSurrogate

#: ranks tried, in order (the rank grows to the next one while the held-out error falls)
RANKS = (2, 4, 8, 16)

#: L-BFGS iterations per refit (warm-started, so a few suffice)
ITERATIONS = 40

#: a larger rank is kept when it lowers the held-out squared error by at least this fraction
GAIN = 0.05

#: the direction factors' ridge relative to the adjacency factors'
DIRECTION_PENALTY = 4.0

#: the factors are refitted when the data grew by a quarter or by this many observations
REFIT_EVERY = 100


class _Block:
    """One permutation's adjacency and direction groups (feature offsets) and its factor slots in θ."""

    def __init__(self, adjacency: FeatureGroup, direction: Optional[FeatureGroup]) -> None:
        self.n = adjacency.active
        self.adj, self.dir = adjacency.start, (direction.start if direction is not None else None)
        self.iu = np.triu_indices(self.n, 1)
        self.centred = adjacency.size + (direction.size if direction is not None else 0)

    def identifiable(self, rank: int) -> bool:
        """Whether the factors at ``rank`` (``1 + n·2k`` unknowns, ``1 + n·4k`` with direction factors)
        are fewer than the full-rank weights they centre: otherwise the low-rank model cannot be better
        determined than the weights themselves, and the permutation gets no low-rank prior."""
        return 1 + (4 if self.dir is not None else 2) * self.n * rank < self.centred


def low_rank_blocks(groups: Sequence[FeatureGroup], rank: int) -> List[_Block]:
    """The permutations of ``groups`` (one block each) whose factors at ``rank`` are identifiable."""
    by_param: Dict[str, Dict[str, FeatureGroup]] = {}
    for g in groups:
        by_param.setdefault(g.parameter, {})[g.kind] = g
    blocks = [_Block(kinds["adjacency"], kinds.get("direction")) for kinds in by_param.values()
              if "adjacency" in kinds]
    return [b for b in blocks if b.identifiable(rank)]


class LowRankBayesLinear(SparseBayesLinear):
    """:class:`~.model.SparseBayesLinear` whose prior is centred on a fitted low-rank model of the
    permutations' pairwise weights (see the module docstring).  ``max_rank`` caps the rank; ``ridge``
    is λ (per observation)."""

    def __init__(self, size: int, groups: Sequence[FeatureGroup], cg_steps: int = 10,
                 fit_intercept: Optional[bool] = None, max_rank: int = 16, ridge: float = 1e-2,
                 seed: int = 0) -> None:
        super().__init__(size, groups, cg_steps, fit_intercept)
        self.ranks = self.rank_steps(max_rank)
        self.rank = self.ranks[0]
        self.blocks = low_rank_blocks(groups, self.rank)
        covered = np.zeros(size, dtype=bool)
        for b in self.blocks:
            covered[b.adj:b.adj + len(b.iu[0])] = True
            if b.dir is not None:
                covered[b.dir:b.dir + b.n * b.n] = True
        self.free = np.flatnonzero(~covered)        # features fitted as free weights
        self.handover = sum(b.centred for b in self.blocks)
        self.ridge = ridge
        self.rng = np.random.default_rng(seed)
        self.theta = self._initial(self.rank)
        self.low_rank_fits = 0                      # L-BFGS fits run (a count of the work done)
        self._factor_n = 0                          # observations at the last fit of the factors
        self._grow_n = 0                            # observations at the last rank check

    @staticmethod
    def rank_steps(max_rank: int) -> List[int]:
        """The ranks tried under the cap ``max_rank``, the starting rank first."""
        return [r for r in RANKS if r <= max_rank] or [max(1, max_rank)]

    # ---- parameterisation -----------------------------------------------------------------------
    def _initial(self, rank: int) -> np.ndarray:
        parts = [np.zeros(self.free.size)]
        for b in self.blocks:
            factors = 4 if b.dir is not None else 2
            parts.append(np.zeros(1))
            parts.append(0.01 * self.rng.standard_normal(factors * b.n * rank))
        return np.concatenate(parts)

    def _penalty(self, rank: int) -> np.ndarray:
        """The ridge of each entry of θ relative to λ: :data:`DIRECTION_PENALTY` for the direction
        factors (a correction to the undirected cost, as in the full-rank model's prior), 1 otherwise."""
        parts = [np.ones(self.free.size)]
        for b in self.blocks:
            parts.append(np.ones(1 + 2 * b.n * rank))
            if b.dir is not None:
                parts.append(np.full(2 * b.n * rank, DIRECTION_PENALTY))
        return np.concatenate(parts)

    def _unpack(self, theta: np.ndarray, rank: int) -> Tuple[np.ndarray, List[Tuple[float, List[np.ndarray]]]]:
        free, at = theta[:self.free.size], self.free.size
        out = []
        for b in self.blocks:
            mu = float(theta[at])
            at += 1
            mats = []
            for _ in range(4 if b.dir is not None else 2):
                mats.append(theta[at:at + b.n * rank].reshape(b.n, rank))
                at += b.n * rank
            out.append((mu, mats))
        return free, out

    def weights(self, theta: np.ndarray, rank: int) -> np.ndarray:
        """The full weight vector of ``theta`` (free features included)."""
        w = np.zeros(self.size)
        free, blocks = self._unpack(theta, rank)
        w[self.free] = free
        for b, (mu, mats) in zip(self.blocks, blocks):
            U, V = mats[0], mats[1]
            S = U @ V.T
            w[b.adj:b.adj + len(b.iu[0])] = mu + 0.5 * (S + S.T)[b.iu]
            if b.dir is not None:
                w[b.dir:b.dir + b.n * b.n] = (mats[2] @ mats[3].T).ravel()
        return w

    def _loss(self, theta: np.ndarray, rank: int, X: sp.csr_matrix, y: np.ndarray) -> Tuple[float, np.ndarray]:
        r = X @ self.weights(theta, rank) - y
        lam = self.ridge * max(y.size, 1)
        g = X.T @ r
        grad = np.empty_like(theta)
        grad[:self.free.size] = g[self.free]
        at = self.free.size
        _, blocks = self._unpack(theta, rank)
        for b, (_, mats) in zip(self.blocks, blocks):
            G = np.zeros((b.n, b.n))
            G[b.iu] = g[b.adj:b.adj + len(b.iu[0])]
            G = G + G.T
            grad[at] = G[b.iu].sum()
            at += 1
            U, V = mats[0], mats[1]
            size = b.n * rank
            grad[at:at + size] = (0.5 * G @ V).ravel()
            grad[at + size:at + 2 * size] = (0.5 * G @ U).ravel()
            at += 2 * size
            if b.dir is not None:
                D = g[b.dir:b.dir + b.n * b.n].reshape(b.n, b.n)
                grad[at:at + size] = (D @ mats[3]).ravel()
                grad[at + size:at + 2 * size] = (D.T @ mats[2]).ravel()
                at += 2 * size
        pen = lam * self._penalty(rank)
        value = 0.5 * float(r @ r) + 0.5 * float(theta @ (pen * theta))
        grad += pen * theta
        return value, grad

    def fit(self, X: sp.csr_matrix, y: np.ndarray, theta: np.ndarray, rank: int,
            iterations: int = ITERATIONS) -> np.ndarray:
        """``theta`` refined by L-BFGS on the data ``X``, ``y`` (standardized)."""
        self.low_rank_fits += 1
        res = minimize(self._loss, theta, args=(rank, X, y), jac=True, method="L-BFGS-B",
                       options={"maxiter": iterations, "maxfun": 4 * iterations})
        return np.asarray(res.x)

    def _grown(self, theta: np.ndarray, rank: int, new: int) -> np.ndarray:
        """``theta`` at rank ``new``: the old factors, new columns small random."""
        grown = self._initial(new)
        grown[:self.free.size] = theta[:self.free.size]
        _, old = self._unpack(theta, rank)
        free, fresh = self._unpack(grown, new)
        for (_, mats), (_, target) in zip(old, fresh):
            for a, t in zip(mats, target):
                t[:, :rank] = a
        at = self.free.size
        for b, (mu, _) in zip(self.blocks, old):
            grown[at] = mu
            at += 1 + (4 if b.dir is not None else 2) * b.n * new
        return grown

    # ---- the schedule -----------------------------------------------------------------------------
    def _refit_low_rank(self) -> None:
        """Refit the factors (and maybe grow the rank) on all data, then centre the prior on them."""
        X, y = self.rows.matrix(), self._target()
        if self.rank != self.ranks[-1] and self.n >= max(40, 2 * self._grow_n):
            self._grow_n = self.n
            self._maybe_grow(X, y)
        self.theta = self.fit(X, y, self.theta, self.rank)
        w = self.weights(self.theta, self.rank)
        w[self.free] = 0.0
        self.prior_mean = w

    def _maybe_grow(self, X: sp.csr_matrix, y: np.ndarray) -> None:
        """Move to the next rank when, fitted on four fifths of the data (both ranks from the current
        factors, twice the usual steps), it predicts the held-out fifth better by :data:`GAIN`."""
        hold = np.arange(self.n) % 5 == 0
        train = np.flatnonzero(~hold)
        test = np.flatnonzero(hold)
        Xt, Xh = X[train], X[test]
        new = self.ranks[self.ranks.index(self.rank) + 1]
        small = self.fit(Xt, y[train], self.theta, self.rank, 2 * ITERATIONS)
        big = self.fit(Xt, y[train], self._grown(self.theta, self.rank, new), new, 2 * ITERATIONS)

        def err(theta: np.ndarray, rank: int) -> float:
            r = Xh @ self.weights(theta, rank) - y[test]
            return float(r @ r)
        if err(big, new) < (1.0 - GAIN) * err(small, self.rank):
            self.theta, self.rank = self._grown(self.theta, self.rank, new), new

    def _restandardize(self) -> None:
        old = self.scale
        super()._restandardize()
        self.prior_mean = self.prior_mean * (old / self.scale)

    def refresh(self) -> None:
        """As :meth:`SparseBayesLinear.refresh`; first, when the data grew by a quarter or by
        :data:`REFIT_EVERY` observations since the last fit, the low-rank factors are refitted (on the
        renewed standardization) and the prior re-centred on them."""
        if self.blocks and 8 <= self.n <= self.handover \
                and self.n >= min(1.25 * self._factor_n, self._factor_n + REFIT_EVERY):
            self._restandardize()
            self._refit_low_rank()
            self._factor_n = self.n
            self._noise_n = 0    # a whole re-solve around the new centre
        super().refresh()


class LowRankStructuralSurrogate(StructuralSurrogate):
    """:class:`~.technique.StructuralSurrogate` whose model centres its prior on a low-rank model of the
    permutations' pairwise weights (:class:`LowRankBayesLinear`).  On spaces without a permutation it is
    StructuralSurrogate, and so it is on spaces where no permutation's factors are fewer than the
    weights they centre (:func:`low_rank_blocks`; its model, value transform and random stream).
    Options: StructuralSurrogate's, plus ``max_rank`` (the largest rank the fit grows to) and
    ``rank_ridge`` (λ per observation).  By default it fits the raw values on every space with a
    permutation that gets a low-rank prior (:meth:`_raw_default`), not their logarithm where the
    permutation shares the space with other parameters (docs/benchmarks/structural.md)."""

    description = ("StructuralSurrogate with a low-rank prior over the pairwise weights of permutations "
                   "(learns tours and orders from fewer evaluations than pairs)")

    OPTIONS = StructuralSurrogate.OPTIONS + (
        Option("max_rank", int, 16, 1, 64, 4, 16, "largest rank of the pairwise-weight factors"),
        Option("rank_ridge", float, 1e-2, 0.0, 100.0, 1e-3, 1e-1, "ridge on the factors, per observation"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    max_rank: int
    rank_ridge: float

    def _low_rank(self) -> bool:
        """Whether some permutation of this run's layout gets a low-rank prior (identifiable factors at
        the starting rank, :meth:`_Block.identifiable`)."""
        return bool(low_rank_blocks(self.layout.groups, LowRankBayesLinear.rank_steps(self.max_rank)[0]))

    def _raw_default(self) -> bool:
        """The raw values on every space with a permutation that gets a low-rank prior; elsewhere
        StructuralSurrogate's default (called at bind)."""
        return self._low_rank() or super()._raw_default()

    def _new_model(self) -> SparseBayesLinear:
        """A :class:`LowRankBayesLinear` of this run's layout, its factors seeded from the run's stream,
        when some permutation gets a low-rank prior; otherwise StructuralSurrogate's model (and the
        stream untouched, so that the runs are StructuralSurrogate's)."""
        if not self._low_rank():
            return super()._new_model()
        return LowRankBayesLinear(self.layout.size, self.layout.groups, self.cg_steps, self.intercept,
                                  self.max_rank, self.rank_ridge, self.rng.getrandbits(32))

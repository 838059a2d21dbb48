"""A metric-embedding prior for the pairwise weights of tours, identified from random tours.

In a tour the cost of a pair often comes from properties of its two items; the strongest such
structure is a *metric* one: items are points and a pair weighs their distance.
:class:`MetricBayesLinear` models the adjacency weight of items ``i`` and ``j`` of each permutation
of at least :data:`MIN_ITEMS` items as

    ``w_ij = mu + |x_i - x_j|``,  ``x_i`` in ``R^d``,

``n·d + 1`` unknowns instead of ``n(n-1)/2`` (per-item terms ``b_i + b_j`` add a constant to every
closed tour and are left out; precedence weights, and direction weights unless the embedding is
directed, keep a prior centred on 0).  A tour's value is a sum of its ``n`` pair weights, so the fit
is nonlinear least squares over the positions (L-BFGS, vectorised gradients), ridge :data:`~.embedding.RIDGE`
per observation.

The fit is not convex and needs diverse data: from tours near an incumbent (a local search's
results) it finds embeddings that fit every result and predict nothing else, while from about five
uniformly random tours per item it recovers a Euclidean instance's distances (rank correlation 0.999
at 100 cities).  So the measurements are chosen: the technique
(:class:`~.metric.MetricStructuralSurrogate`) first proposes uniformly random configurations and, at
each checkpoint of :data:`CHECKPOINTS` items' worth of them, :meth:`MetricBayesLinear.identify` fits
``d`` in :data:`DIMS` to four fifths of the data and predicts the held-out fifth (drawn from the random
results).  A dimension is fitted only once the training results number :data:`MIN_ROWS_PER_UNKNOWN`
per unknown (an under-determined fit finds embeddings that fit the training tours and predict held-out
ones worse than their mean); its first fit has :data:`RESTARTS` random starts, a later checkpoint's
the previous fit and :data:`WARM_RESTARTS` random ones.  When no symmetric embedding reaches
:data:`ACCEPT` and the permutation has direction features, the *directed* embedding ``w_ij = mu +
|a_i - b_j|`` (an out- and an in-point per item, :class:`~.embedding.Embedding`) is fitted too, from
the symmetric fit lifted (``a = b = x``) and :data:`DIRECTED_RESTARTS` random starts: asymmetric
instances whose costs are road distances with one-way streets have that form.  Once the best ``R²``
of those predictions reaches :data:`ACCEPT` the embedding is accepted (``d`` chosen by held-out
error): it is refitted to every result until L-BFGS converges, the prior of
:class:`~.model.SparseBayesLinear` is centred on it, and it is refitted so (warm) whenever the data
grew by a quarter (:attr:`MetricBayesLinear.fits` counts these fits; the technique searches the
embedding after each).  Under a known test limit the checkpoints from the first at or past
:data:`RANDOM_SHARE` of it accept from :data:`ACCEPT_LAST` (the hand-over stays at the last
checkpoint).  When no checkpoint accepts it (the weights are not a low-dimensional metric: loop
orders, ATSP with asymmetry that no out/in embedding explains) the model hands over: its prior stays
centred on 0, so it is StructuralSurrogate's model from then on.  It hands over before the last
checkpoint when the fits cannot explain even the results they were fitted to (:data:`UNFIT`, judged
from :data:`UNFIT_ROWS_PER_UNKNOWN` training results per unknown) and predict held-out ones worse than
their mean: step costs in clusters, cheap inside and thousands of times dearer between, with no
metric among them.

Once accepted, :meth:`MetricBayesLinear.local_weights` adds a residual fitted to the results since the
acceptance (:mod:`.residual`) to the embedding's weights: the ranking of the technique's measured
moves (:mod:`.measured`).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np
import scipy.sparse as sp

from ...parameters.features import FeatureGroup
from .embedding import Embedding
from .model import SparseBayesLinear
from .residual import local_residual

#: permutations of fewer items keep the plain full-rank model (the embedding's n·d + 1 unknowns are
#: then not much fewer than the n(n-1)/2 pairs)
MIN_ITEMS = 20

#: embedding dimensions tried
DIMS = (2, 3)

#: identification checkpoints: random results per item of the largest permutation
CHECKPOINTS = (3, 4, 5, 6.5, 8, 10)

#: held-out R² from which the embedding is accepted
ACCEPT = 0.9

#: held-out R² from which the last checkpoint accepts the embedding instead of handing over
ACCEPT_LAST = 0.6

#: the share of a known test limit from which the checkpoints accept from :data:`ACCEPT_LAST`: the
#: first checkpoint at or past it has the last one's bar (a 100-node run at 3,000 evaluations reaches
#: its last checkpoint, 10 per item, at a third of the limit); the hand-over stays at the last
RANDOM_SHARE = 1 / 3

#: random starts per dimension at its first fit, and at later checkpoints (the previous fit is one more)
RESTARTS, WARM_RESTARTS = 3, 1

#: a dimension is fitted only from this many training results per unknown (fewer leave the fit
#: under-determined: at 3 random tours per item of ftv170, d = 3, every fit predicted held-out tours
#: worse than their mean)
MIN_ROWS_PER_UNKNOWN = 1.5

#: a checkpoint whose fits all explain less than this share of the variance of the very results they
#: were fitted to (``R²`` adjusted for a fit's unknowns, :func:`adjusted_r2`), and whose best fit
#: predicts the held-out results worse than their mean, hands over at once: more random results bring a
#: fit's training and held-out ``R²`` together, so the last checkpoint would not accept it either, and
#: the random results it would wait for are taken from the search (a tour whose steps inside clusters
#: cost 0-20 and between them 30-10,000, not a low-dimensional metric: 0.34-0.40 and -0.8 to -1.0 at
#: 6.5 random results per item)
UNFIT = 0.5

#: fits judged by :data:`UNFIT` have this many training results per unknown (at d = 2, from the
#: checkpoint of 6.5 random results per item; at 5 per item, 1.99 per unknown, a road-like asymmetric
#: instance accepted at 6.5 was at an adjusted 0.56-0.72 and a held-out -0.06 to 0.40, the clustered
#: one above at 0.41-0.43)
UNFIT_ROWS_PER_UNKNOWN = 2.0

#: random starts of a directed fit besides the lifted symmetric fit and the previous directed one
DIRECTED_RESTARTS = 1

#: L-BFGS iterations of a checkpoint's fit from a start
ITERATIONS = 300

#: L-BFGS iterations of the accepted embedding's fits (at acceptance and at each refit), enough for
#: them to converge: the embedding's short distances, which decide its best tour, are the last to
#: settle (at 120 items and 780 random tours, d = 2, 300 iterations left a held-out R² of 0.93 and
#: an embedding whose best tour was 1.98 x the optimum, 2,000 iterations 0.975 and 1.29)
REFIT_ITERATIONS = 1000


def adjusted_r2(r2: float, rows: int, unknowns: int) -> float:
    """``r2`` of a fit of ``unknowns`` parameters to ``rows`` results, adjusted for the share of the
    variance the unknowns fit by chance: ``1 - (1 - r2) (rows - 1) / (rows - unknowns - 1)``."""
    return 1.0 - (1.0 - r2) * (rows - 1) / max(rows - unknowns - 1, 1)


def adjacency_blocks(groups: List[FeatureGroup]) -> List[FeatureGroup]:
    """The adjacency groups of ``groups`` whose permutation has at least :data:`MIN_ITEMS` items: those
    the embedding models (read when a model is made, and by the technique before it seeds one)."""
    return [g for g in groups if g.kind == "adjacency" and g.active >= MIN_ITEMS]


def _direction_groups(blocks: List[FeatureGroup], groups: List[FeatureGroup]) -> Optional[List[FeatureGroup]]:
    """The direction group of each adjacency block (same parameter), or None when one has none."""
    found = [next((d for d in groups if d.kind == "direction" and d.parameter == g.parameter), None)
             for g in blocks]
    return None if any(d is None for d in found) else found  # type: ignore[return-value]


#: a fit: (held-out R², dimension, directed, theta)
Fit = Tuple[float, int, bool, np.ndarray]


class MetricBayesLinear(SparseBayesLinear):
    """:class:`~.model.SparseBayesLinear` whose adjacency (and direction) prior is centred on an
    embedding of the items once :meth:`identify` accepted one (see the module docstring)."""

    def __init__(self, size: int, groups: List[FeatureGroup], cg_steps: int = 10,
                 fit_intercept: Optional[bool] = None, seed: int = 0) -> None:
        super().__init__(size, groups, cg_steps, fit_intercept)
        self.blocks = adjacency_blocks(list(groups))
        self.directions = _direction_groups(self.blocks, list(groups))
        self.rng = np.random.default_rng(seed)
        self.directed_rng = np.random.default_rng([seed, 1])   # the directed fits' starts
        self.status = "identifying" if self.blocks else "handed over"
        self.embedding: Optional[Embedding] = None
        self.theta: Dict[Tuple[int, bool], np.ndarray] = {}  # last fit per (dimension, directed)
        self.held_out_r2 = 0.0                      # the best held-out R² of the last checkpoint
        self.fitted_r2 = -np.inf                    # its fits' best adjusted R² on their training results
        self.random_rows: List[int] = []            # the rows of uniformly random configurations
        self.fit_starts = 0                         # L-BFGS fits from a start, over the checkpoints
        self.fits = 0                               # fits of the accepted embedding (acceptance, refits)
        self.accepted_at = 0                        # the results at the acceptance
        self._factor_n = 0
        self._theta_scale = 1.0                     # the values' scale the fitted theta is in
        self.test_limit: Optional[int] = None       # the run's test limit, when known

    @property
    def items(self) -> int:
        return max((g.active for g in self.blocks), default=0)

    def checkpoints(self) -> List[int]:
        """The random results at which the embedding is identified: :data:`CHECKPOINTS` items' worth."""
        return [int(c * self.items) for c in CHECKPOINTS]

    def lowered(self) -> int:
        """The random results from which a checkpoint accepts from :data:`ACCEPT_LAST`: the last
        checkpoint's, or, when :attr:`test_limit` is known, the first checkpoint's at or past
        :data:`RANDOM_SHARE` of it if that comes earlier."""
        rows = self.checkpoints()
        if not self.test_limit:
            return rows[-1]
        return next((r for r in rows if r >= RANDOM_SHARE * self.test_limit), rows[-1])

    def checkpoint(self, random_results: int) -> bool:
        """Whether ``random_results`` random results make an identification checkpoint."""
        return random_results in self.checkpoints()

    def mark_random(self) -> None:
        """Note that the last result added is of a uniformly random configuration (called by the
        technique after :meth:`add`): the held-out fifth of each checkpoint is drawn from these."""
        self.random_rows.append(self.n - 1)

    def _held_out(self, rows: int) -> np.ndarray:
        """Every fifth random result of the window (every fifth result when none was marked)."""
        marked = np.asarray(self.random_rows, dtype=np.intp) - self.first
        marked = marked[marked >= 0]
        hold = np.zeros(rows, dtype=bool)
        if marked.size >= 5:
            hold[marked[::5]] = True
        else:
            hold[::5] = True
        return hold

    def _embedding(self, dim: int, directed: bool) -> Embedding:
        return Embedding(self.blocks, dim, directed, self.directions if directed else None)

    def _fit_dims(self, X: sp.csr_matrix, y: np.ndarray, hold: np.ndarray, directed: bool) -> Fit:
        """Fit every dimension of :data:`DIMS` (symmetric, or directed) that the training rows
        determine (:data:`MIN_ROWS_PER_UNKNOWN`) to the rows outside ``hold`` from its starts, keep
        each best fit in :attr:`theta`; returns the best on the held-out rows.  Symmetric starts: the
        previous fit and :data:`WARM_RESTARTS` random ones, or :data:`RESTARTS` random ones at a first
        fit; directed: the symmetric fit lifted, :data:`DIRECTED_RESTARTS` random ones and the
        previous directed fit."""
        best: Fit = (-np.inf, 0, directed, np.zeros(0))
        for dim in DIMS:
            emb = self._embedding(dim, directed)
            previous = [self.theta[dim, directed]] if (dim, directed) in self.theta else []
            if emb.size * MIN_ROWS_PER_UNKNOWN > (~hold).sum() or (directed and (dim, False) not in self.theta):
                continue
            if directed:
                starts = [emb.lifted(self.theta[dim, False])]
                starts += [emb.start(self.directed_rng) for _ in range(DIRECTED_RESTARTS)]
            else:
                starts = [emb.start(self.rng) for _ in range(WARM_RESTARTS if previous else RESTARTS)]
            starts += previous
            self.fit_starts += len(starts)
            fits = [emb.fit(X[~hold], y[~hold], s, ITERATIONS) for s in starts]
            self.theta[dim, directed] = min(fits, key=lambda f: f[1])[0]
            score = emb.r2(self.theta[dim, directed], X[hold], y[hold])
            if (~hold).sum() >= UNFIT_ROWS_PER_UNKNOWN * emb.size:
                trained = emb.r2(self.theta[dim, directed], X[~hold], y[~hold])
                self.fitted_r2 = max(self.fitted_r2, adjusted_r2(trained, int((~hold).sum()), emb.size))
            if score > best[0]:
                best = (score, dim, directed, self.theta[dim, directed])
        return best

    def identify(self) -> str:
        """Fit the symmetric embeddings of every dimension of :data:`DIMS` to four fifths of the data
        and predict the rest; when none reaches :data:`ACCEPT` and the permutations have direction
        features, the directed ones too.  Accept the best when its held-out R² reaches
        :data:`ACCEPT`, hand over after the last checkpoint, or at this one when the fits are unfit
        (:data:`UNFIT`).  Called by the technique at each checkpoint; returns the status."""
        self._restandardize()
        X, y = self.rows.matrix(self.first), self._target()
        hold = self._held_out(y.size)
        self.fitted_r2 = -np.inf
        best = self._fit_dims(X, y, hold, False)
        if best[0] < ACCEPT and self.directions is not None:
            best = max(best, self._fit_dims(X, y, hold, True), key=lambda f: f[0])
        self.held_out_r2 = best[0]
        last, lowered = y.size >= self.checkpoints()[-1], y.size >= self.lowered()
        determined = all((dim, False) in self.theta for dim in DIMS)
        if best[0] >= (ACCEPT_LAST if lowered else ACCEPT) and (determined or lowered):
            self.embedding, self.status = self._embedding(best[1], best[2]), "accepted"
            self.accepted_at = self.n
            self.theta = {(best[1], best[2]): self.embedding.fit(X, y, best[3], REFIT_ITERATIONS)[0]}
            self._centre()
            self.fits += 1
        elif last or (self.fitted_r2 < UNFIT and best[0] < 0.0 and np.isfinite(self.fitted_r2)):
            self.status, self.theta = "handed over", {}
        return self.status

    def local_weights(self) -> np.ndarray:
        """The embedding's weights (the prior's centre) plus a residual fitted to the results added
        since the acceptance (:func:`~.residual.local_residual`): the ranking of the measured moves."""
        start = max(self.accepted_at, self.first)
        y = (np.asarray(self.y[start:]) - self.offset) / self.scale
        return self.prior_mean + local_residual(self.rows.matrix(start), y, self.prior_mean)

    @property
    def _key(self) -> Tuple[int, bool]:
        assert self.embedding is not None
        return self.embedding.dim, self.embedding.directed

    def _centre(self) -> None:
        assert self.embedding is not None
        self.prior_mean = self.embedding.weights(self.theta[self._key], self.size)
        self._theta_scale = self.scale
        self._factor_n = self.n
        self._noise_n = 0    # a whole re-solve around the new centre

    def _restandardize(self) -> None:
        old = self.scale
        super()._restandardize()
        self.prior_mean = self.prior_mean * (old / self.scale)

    def refresh(self) -> None:
        """As :meth:`SparseBayesLinear.refresh`; first, once accepted and when the data grew by a
        quarter, the embedding is refitted warm (on the renewed standardization)."""
        if self.embedding is not None and self.n >= 1.25 * self._factor_n:
            self._restandardize()
            X, y = self.rows.matrix(self.first), self._target()
            scaled = self.theta[self._key] * (self._theta_scale / self.scale)   # the weights follow the values' scale
            self.theta[self._key] = self.embedding.fit(X, y, scaled, REFIT_ITERATIONS)[0]
            self._centre()
            self.fits += 1
        super().refresh()

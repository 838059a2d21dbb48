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
at 100 cities).  So the measurements are chosen: :class:`MetricStructuralSurrogate` first proposes
uniformly random configurations and, at each checkpoint of :data:`CHECKPOINTS` items' worth of them,
fits ``d`` in :data:`DIMS` to four fifths of the data and predicts the held-out fifth (drawn from
the random results).  A dimension is fitted only once the training results number
:data:`MIN_ROWS_PER_UNKNOWN` per unknown (an under-determined fit finds embeddings that fit the
training tours and predict held-out ones worse than their mean); its first fit has :data:`RESTARTS`
random starts, a later checkpoint's the previous fit and :data:`WARM_RESTARTS` random ones.  When no symmetric embedding reaches
:data:`ACCEPT` and the permutation has direction features, the *directed* embedding ``w_ij = mu +
|a_i - b_j|`` (an out- and an in-point per item, :class:`~.embedding.Embedding`) is fitted too, from
the symmetric fit lifted (``a = b = x``) and :data:`DIRECTED_RESTARTS` random starts: asymmetric
instances whose costs are road distances with one-way streets have that form.  Once the best ``R²``
of those predictions reaches :data:`ACCEPT` the embedding is accepted (``d`` chosen by held-out
error): it is refitted to every result until L-BFGS converges, the prior of
:class:`~.model.SparseBayesLinear` is centred on it, it is refitted so (warm) whenever the data grew
by a quarter, and after the acceptance and each refit the next suggestion is an iterated local search
on the embedding from the incumbent.  Then a measured local search takes every suggestion while it has
moves (whatever the model's share, which the predictive gate caps: near the incumbent the results differ
little and the posterior's predictions rank them poorly, while these moves find most of the new bests): the
incumbent's 2-opt / or-opt moves whose change the embedding plus a residual fitted to the results
since the acceptance (:mod:`.residual`) puts lowest, measured in turn (a move's change, the steps it
removes and adds, once: a tour's value is the sum of its steps), the list renewed at each new
incumbent; the embedding's errors are largest on the short steps that decide the best tour, so from a
local optimum of the embedding these moves are where its errors hide (ftv170: 8 of the 10 moves it
ranks first from its searched tour shorten the tour, none of the posterior mean's 10), and the
measured tours, which differ in a few steps, pin those errors down.  Moves that change no common step
are measured together (:mod:`.compound`): the incumbent with several of them applied measures the sum
of their changes in one evaluation; the group's size doubles after a group shortens the tour and halves
after one does not, and a failed group's halves are measured in turn.  Before the first list the
incumbent reversed is measured once (:mod:`.direction`): when its value differs the cost is directed, and
the lists hold only moves that keep every section's orientation (or-opt and longer section moves,
:mod:`.segments`), each of which changes three steps.  Once a list is spent,
StructuralSurrogate's suggestions (the model's share of them its sampled minimum).  Under a known test limit the checkpoints from
the first at or past :data:`RANDOM_SHARE` of it accept from :data:`ACCEPT_LAST` (the hand-over stays
at the last checkpoint).  When no checkpoint accepts it (the weights are not a low-dimensional
metric: loop orders, ATSP with asymmetry that no out/in embedding explains) the model hands over: it
is StructuralSurrogate from then on, its prior centred on 0, and it has paid for the random tours.
It hands over before the last checkpoint when the fits cannot explain even the results they were
fitted to (:data:`UNFIT`, judged from :data:`UNFIT_ROWS_PER_UNKNOWN` training results per unknown) and
predict held-out ones worse than their mean: step costs in clusters, cheap inside and thousands of
times dearer between, with no metric among them.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Deque, Dict, FrozenSet, List, Optional, Set, Tuple

import numpy as np
import scipy.sparse as sp

from ...parameters.features import FeatureGroup, PermutationFeatures
from ..base import Config, Proposal
from ..blas import single_thread_blas
from .compound import CompoundMoves
from .embedding import Embedding
from .model import SparseBayesLinear
from .direction import directed
from .residual import local_residual
from .segments import ranked_directed_moves
from .technique import StructuralSurrogate
from .tours import iterated_search, ranked_moves

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

#: double-bridge kicks per item of the iterated local search made once the embedding is accepted
JUMP_KICKS = 0.5

#: moves of the incumbent, ranked by the accepted embedding and the residual, measured in turn (ftv170,
#: continued from an acceptance at 1,111 random results to 3,000: 64 moves, whose lists were often
#: spent, 1.390 x the optimum; 256 moves 1.261; 1,024, never spent, 1.257)
MOVES = 256


def adjusted_r2(r2: float, rows: int, unknowns: int) -> float:
    """``r2`` of a fit of ``unknowns`` parameters to ``rows`` results, adjusted for the share of the
    variance the unknowns fit by chance: ``1 - (1 - r2) (rows - 1) / (rows - unknowns - 1)``."""
    return 1.0 - (1.0 - r2) * (rows - 1) / max(rows - unknowns - 1, 1)


def _adjacency_blocks(groups: List[FeatureGroup]) -> List[FeatureGroup]:
    return [g for g in groups if g.kind == "adjacency" and g.active >= MIN_ITEMS]


def _direction_groups(blocks: List[FeatureGroup], groups: List[FeatureGroup]) -> Optional[List[FeatureGroup]]:
    """The direction group of each adjacency block (same parameter), or None when one has none."""
    found = [next((d for d in groups if d.kind == "direction" and d.parameter == g.parameter), None)
             for g in blocks]
    return None if any(d is None for d in found) else found  # type: ignore[return-value]


#: a move of one permutation: its parameter's name, the steps it removes and the steps it adds
Change = Tuple[str, Tuple[FrozenSet[Tuple[int, int]], FrozenSet[Tuple[int, int]]]]


def _change(t: np.ndarray, moved: np.ndarray) -> Tuple[FrozenSet[Tuple[int, int]], FrozenSet[Tuple[int, int]]]:
    """The steps (item to next item, the last to the first) of ``t`` that ``moved`` lacks, and those
    it adds."""
    before = set(zip(t.tolist(), np.roll(t, -1).tolist()))
    after = set(zip(moved.tolist(), np.roll(moved, -1).tolist()))
    return frozenset(before - after), frozenset(after - before)


def _set_tour(fmap: PermutationFeatures, cfg: Config, t: np.ndarray) -> None:
    """Set ``fmap``'s permutation in ``cfg`` to the item indices ``t``."""
    items = fmap.parameter.items
    fmap.parameter.set_value(cfg, fmap.parameter._repair([items[i] for i in t]))


#: a fit: (held-out R², dimension, directed, theta)
Fit = Tuple[float, int, bool, np.ndarray]


class MetricBayesLinear(SparseBayesLinear):
    """:class:`~.model.SparseBayesLinear` whose adjacency (and direction) prior is centred on an
    embedding of the items once :meth:`identify` accepted one (see the module docstring)."""

    def __init__(self, size: int, groups: List[FeatureGroup], cg_steps: int = 10,
                 fit_intercept: Optional[bool] = None, seed: int = 0) -> None:
        super().__init__(size, groups, cg_steps, fit_intercept)
        self.blocks = _adjacency_blocks(list(groups))
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


class MetricStructuralSurrogate(StructuralSurrogate):
    """:class:`~.technique.StructuralSurrogate` that first identifies a metric embedding of a
    permutation's items from uniformly random configurations and, when one predicts held-out results,
    centres its model's prior on it (:class:`MetricBayesLinear`); otherwise, and on spaces without a
    permutation of at least :data:`MIN_ITEMS` items, it is StructuralSurrogate."""

    description = ("StructuralSurrogate whose prior over a tour's pairwise weights is a metric embedding of the "
                   "items, identified from random tours (learns tours from fewer evaluations than pairs)")

    def _new_model(self) -> SparseBayesLinear:
        """A :class:`MetricBayesLinear` of this run's layout, seeded from the run's stream (drawn only
        when it has a permutation to embed, so that without one the stream is StructuralSurrogate's)."""
        embed = bool(_adjacency_blocks(list(self.layout.groups)))
        model = MetricBayesLinear(self.layout.size, self.layout.groups, self.cg_steps, self.intercept,
                                  self.rng.getrandbits(32) if embed else 0)
        model.test_limit = self.context.test_limit
        return model

    def bind(self, manipulator: Any, rng: Any, path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self.random_results = 0
        self.searched = 0     # the accepted embedding's fits the iterated search has run on
        self._moves_of: Optional[Tuple[str, int]] = None   # the incumbent and fit whose moves are in _moves
        self._moves: Deque[Tuple[Config, Change]] = deque()
        self._changes: Set[Change] = set()      # the changes of the moves proposed so far
        self.directed: Optional[bool] = None    # whether reversing the incumbent changed its value
        self._reversal: Optional[Tuple[str, float]] = None   # the reversal's key, the incumbent's value
        self.compound = CompoundMoves()         # the measured moves' groups (:mod:`.compound`)

    def propose(self) -> Optional[Proposal]:
        """Uniformly random configurations while the embedding is being identified (under
        ``<path>/identify``), an iterated search of the embedding right after it was accepted and after
        each refit (:attr:`MetricBayesLinear.fits`), then the incumbent's measured moves while its list
        has one (:meth:`_measured_move`, whatever the model's share), else StructuralSurrogate's
        proposals."""
        model = self.model
        if isinstance(model, MetricBayesLinear) and model.status == "identifying":
            assert self.manipulator is not None
            return Proposal(self.manipulator.random(self.rng), f"{self.path}/identify")
        if isinstance(model, MetricBayesLinear) and model.fits > self.searched and self.best_config is not None:
            self.searched = model.fits
            cfg = self._jump()
            if cfg is not None:
                return cfg
        if isinstance(model, MetricBayesLinear) and model.status == "accepted" and self.best_config is not None:
            if self._reversal is None:
                reversal = self._reversed()
                if reversal is not None:
                    return reversal
            with single_thread_blas():
                move = self._measured_move()
            if move is not None:
                return self._claim(move)
        return super().propose()

    def observe(self, feedback: Any) -> None:
        """As StructuralSurrogate; a random result is marked as such in the model (the checkpoints'
        held-out results are drawn from these), and at a checkpoint the model identifies the embedding."""
        model = self.model
        before = model.n
        super().observe(feedback)
        if feedback.requestor == f"{self.path}/identify" and isinstance(model, MetricBayesLinear) \
                and model is self.model and model.status == "identifying" and model.n > before:
            self.random_results += 1
            model.mark_random()
            if model.checkpoint(self.random_results):
                model.identify()
        self.compound.observe(feedback.key, feedback.ok, feedback.value)
        if self._reversal is not None and feedback.key == self._reversal[0]:
            self.directed = feedback.ok and directed(self._reversal[1], feedback.value)

    def _reversed(self) -> Optional[Proposal]:
        """The incumbent with each embedded permutation reversed, proposed once after the acceptance:
        its result says whether the tours' values depend on their direction (:mod:`.direction`,
        :attr:`directed`).  None when that configuration was measured or is awaited."""
        assert self.manipulator is not None and self.best_config is not None
        cfg = self.manipulator.copy(self.best_config)
        for fmap, _ in self._embedded():
            _set_tour(fmap, cfg, fmap.positions(fmap.parameter.get_value(cfg))[::-1])
        key = self.manipulator.hash_valid(cfg)
        self._reversal = (key, self.best_value)
        return self._claim_unseen(cfg, key)

    def _claim_unseen(self, cfg: Config, key: str) -> Optional[Proposal]:
        """``cfg`` (hashed to ``key``) as the model side's proposal, its key pending, or None when it was
        measured or is awaited; called by the one-off proposals (:meth:`_reversed`, :meth:`_jump`)."""
        return None if key in self.seen or key in self.pending else self._claim(cfg, key)

    def _jump(self) -> Optional[Proposal]:
        """An iterated local search on the embedding's weights (the prior's centre: the full-rank
        posterior's corrections from random tours blur the order of the short pairs) from the incumbent,
        for each embedded permutation (:data:`JUMP_KICKS` kicks per item)."""
        assert self.manipulator is not None and self.best_config is not None
        cfg = self.manipulator.copy(self.best_config)
        for fmap, C in self._embedded():
            t = fmap.positions(fmap.parameter.get_value(cfg))
            t = iterated_search(t, C, self.np_rng, int(JUMP_KICKS * fmap.n), None, 4 * fmap.n)[0]
            _set_tour(fmap, cfg, t)
        key = self.manipulator.hash_valid(cfg)
        return self._claim_unseen(cfg, key)

    def _embedded(self, weights: Optional[np.ndarray] = None) -> List[Tuple[PermutationFeatures, np.ndarray]]:
        """Each embedded permutation's map and its cost matrix under ``weights``, by default the
        embedding's (the prior's centre)."""
        w, out = self.model.prior_mean if weights is None else weights, []
        for fmap, offset in zip(self.layout.maps, self.layout.offsets):
            if isinstance(fmap, PermutationFeatures) and fmap.n >= MIN_ITEMS:
                n, pairs = fmap.n, fmap.pairs
                U = np.zeros((n, n))
                U[np.triu_indices(n, 1)] = w[offset:offset + pairs]
                out.append((fmap, U + U.T + w[offset + pairs:offset + pairs + n * n].reshape(n, n)))
        return out

    def _measured_move(self) -> Optional[Config]:
        """A measured local search ranked by the embedding and the residual of the results since its
        acceptance (:meth:`MetricBayesLinear.local_weights`): the :data:`MOVES` 2-opt / or-opt moves of
        the incumbent whose value change these weights put lowest (:func:`~.tours.ranked_moves`, per
        embedded permutation; from a local optimum of the embedding, the moves its errors most likely
        hide), proposed best first, each one whose result is not known or awaited and whose change
        (the steps it removes and adds) was not measured from an earlier incumbent: a tour's value is
        the sum of its steps, so that change is known; moves that change no common step are proposed
        together (:class:`~.compound.CompoundMoves`).  The list is renewed when the incumbent or the
        embedding (a refit) changes.  None once they are all measured."""
        assert self.manipulator is not None and self.best_config is not None
        model = self.model
        of = (self.best_key or "", getattr(model, "fits", 0))
        if of != self._moves_of:
            self._moves_of, self._moves = of, deque()
            weights = model.local_weights() if isinstance(model, MetricBayesLinear) else None
            for fmap, C in self._embedded(weights):
                t = np.asarray(fmap.positions(fmap.parameter.get_value(self.best_config)))
                ranked = ranked_directed_moves(t, C, MOVES, False) if self.directed else ranked_moves(t, C, MOVES)
                for moved in ranked:
                    cfg = self.manipulator.copy(self.best_config)
                    _set_tour(fmap, cfg, moved)
                    self._moves.append((cfg, (fmap.parameter.name, _change(t, moved))))
        made = self.compound.next(self._moves, self.best_config, self.best_value, self.layout.maps, self.manipulator,
                                  lambda key: key not in self.seen and key not in self.pending, self._changes)
        if made is not None:
            self.remember_key(*made)  # hashed once: the proposal carries it
        return None if made is None else made[0]

    def state_dict(self) -> Dict[str, Any]:
        state = super().state_dict()
        state["random_results"] = self.random_results
        state["compound"] = self.compound.state_dict()
        return state

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.random_results = int(state.get("random_results", 0))
        self.compound.load_state_dict(state.get("compound") or {})

"""MetricStructuralSurrogate: StructuralSurrogate whose model is first identified as a metric embedding.

On a space with a permutation of at least :data:`~.identification.MIN_ITEMS` items the technique's
model is a :class:`~.identification.MetricBayesLinear` (that module has the identification: the
checkpoints, the fits, the acceptance and the hand-over).  The suggestions are, in turn:

* while the model identifies the embedding, uniformly random configurations (under
  ``<path>/identify``; each is marked in the model, whose checkpoints' held-out results are drawn from
  them, and at each checkpoint the model identifies);
* after the acceptance and after each refit, one iterated local search on the embedding from the
  incumbent (:data:`JUMP_KICKS` double-bridge kicks per item);
* before the first measured move, the incumbent reversed, measured once (:mod:`.direction`): when its
  value differs the cost is directed;
* the measured local search (:mod:`.measured`): the incumbent's moves that the embedding plus a
  residual puts lowest, each change once, taking every suggestion while its list has one (whatever
  the model's share, which the predictive gate caps: near the incumbent the results differ little and
  the posterior's predictions rank them poorly, while these moves find most of the new bests);
* once a list is spent, StructuralSurrogate's suggestions (the model's share of them its sampled
  minimum).

When the model hands over (no embedding predicts the held-out random results) the technique is
StructuralSurrogate from then on, its prior centred on 0, and it has paid for the random tours.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ...parameters.features import PermutationFeatures
from ..base import Config, Proposal
from ..blas import single_thread_blas
from .direction import directed
from .identification import MIN_ITEMS, MetricBayesLinear, adjacency_blocks
from .measured import MeasuredMoves, set_tour
from .model import SparseBayesLinear
from .technique import StructuralSurrogate
from .tours import iterated_search

#: double-bridge kicks per item of the iterated local search made once the embedding is accepted
JUMP_KICKS = 0.5


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
        embed = bool(adjacency_blocks(list(self.layout.groups)))
        model = MetricBayesLinear(self.layout.size, self.layout.groups, self.cg_steps, self.intercept,
                                  self.rng.getrandbits(32) if embed else 0)
        model.test_limit = self.context.test_limit
        return model

    def bind(self, manipulator: Any, rng: Any, path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self.random_results = 0
        self.searched = 0     # the accepted embedding's fits the iterated search has run on
        self.moves = MeasuredMoves()   # the measured local search's list and its record of changes
        self.directed: Optional[bool] = None    # whether reversing the incumbent changed its value
        self._reversal: Optional[Tuple[str, float]] = None   # the reversal's key, the incumbent's value

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
        if self._reversal is not None and feedback.key == self._reversal[0]:
            self.directed = feedback.ok and directed(self._reversal[1], feedback.value)

    def _reversed(self) -> Optional[Proposal]:
        """The incumbent with each embedded permutation reversed, proposed once after the acceptance:
        its result says whether the tours' values depend on their direction (:mod:`.direction`,
        :attr:`directed`).  None when that configuration was measured or is awaited."""
        assert self.manipulator is not None and self.best_config is not None
        cfg = self.manipulator.copy(self.best_config)
        for fmap, _ in self._embedded():
            set_tour(fmap, cfg, fmap.positions(fmap.parameter.get_value(cfg))[::-1])
        key = self.manipulator.hash_valid(cfg)
        self._reversal = (key, self.best_value)
        return self._claim_unseen(cfg, key)

    def _claim_unseen(self, cfg: Config, key: str) -> Optional[Proposal]:
        """``cfg`` (hashed to ``key``) as the model side's proposal, its key pending, or None when it was
        measured or is awaited; called by the one-off proposals (:meth:`_reversed`, :meth:`_jump`)."""
        return None if self._known(key) else self._claim(cfg, key)

    def _jump(self) -> Optional[Proposal]:
        """An iterated local search on the embedding's weights (the prior's centre: the full-rank
        posterior's corrections from random tours blur the order of the short pairs) from the incumbent,
        for each embedded permutation (:data:`JUMP_KICKS` kicks per item)."""
        assert self.manipulator is not None and self.best_config is not None
        cfg = self.manipulator.copy(self.best_config)
        for fmap, C in self._embedded():
            t = fmap.positions(fmap.parameter.get_value(cfg))
            t = iterated_search(t, C, self.np_rng, int(JUMP_KICKS * fmap.n), None, 4 * fmap.n)[0]
            set_tour(fmap, cfg, t)
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
        """The measured local search's next move (:class:`~.measured.MeasuredMoves`), ranked by the
        embedding and the residual of the results since its acceptance
        (:meth:`MetricBayesLinear.local_weights`): of the incumbent's moves whose value change these
        weights put lowest (from a local optimum of the embedding, the moves its errors most likely
        hide), best first, the next one whose result is not known or awaited and whose change (the
        steps it removes and adds) was not measured from an earlier incumbent: a tour's value is the
        sum of its steps, so that change is known.  The list is renewed when the incumbent or the
        embedding (a refit) changes.  None once they are all measured."""
        assert self.manipulator is not None and self.best_config is not None
        model = self.model
        of = (self.best_key or "", getattr(model, "fits", 0))
        if of != self.moves.of:
            weights = model.local_weights() if isinstance(model, MetricBayesLinear) else None
            self.moves.renew(of, self.manipulator, self.best_config, self._embedded(weights), self.directed)
        found = self.moves.next(self.manipulator, self._known)
        if found is None:
            return None
        cfg, key = found
        self.remember_key(cfg, key)  # hashed once: the proposal carries it
        return cfg

    def state_dict(self) -> Dict[str, Any]:
        state = super().state_dict()
        state["random_results"] = self.random_results
        return state

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.random_results = int(state.get("random_results", 0))

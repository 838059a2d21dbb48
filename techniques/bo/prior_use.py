"""How Bayesian optimization uses a user prior beyond its random draws: the initial design starts at
the prior's mode and keeps one result inside the prior's high region (:class:`PriorDesign`), πBO
weighs the acquisition by the prior's region once the results confirm it (:func:`pibo_weight`), and
that weight is scaled by how far the results agree with the prior.

**Region** (:func:`pibo_weight`).  πBO multiplies the acquisition by the prior's density, which
peaks at its mode; a prior near a configuration, for instance, weighs the mode's nearest neighbours
above those two or three steps away by a factor of tens.  Once the results confirm the prior (those
inside its high region rank better than those outside, :func:`rank_score`), the design has measured
the mode and its region, so that peak tells the model nothing the results do not, and it holds the
search to the mode's nearest neighbours where the best configurations lie a few steps away.  A
confirmed prior's weight is therefore capped at the uniform one (:class:`PriorRegion`): flat over
its high region, falling outside it, so the prior says where to search and the model where inside.
An untested or contradicted prior keeps its own density, whose peak concentrates the first
proposals at the mode, where a wrong prior is measured and discounted soonest; a flat weight over a
wrong prior's broad region would spend more evaluations inside it.

**Agreement** (:func:`agreement`).  πBO multiplies the acquisition by ``weight(x) ** (beta / n)``;
the decay alone lets a wrong prior pull the search into its region for dozens of evaluations.  The
results say early whether the prior is right: a right prior's high region (where its weight is above
the uniform one) holds better results than the rest of the space, a wrong prior's holds worse ones.
When the inside ones rank worse, the agreement is the smaller of two two-sided p-values comparing
the results inside the high region with those outside it: the Mann-Whitney U test's (normal
approximation; failures count as the worst results) and Student's t test's on the log of the
values (:func:`magnitude_p`), and 1 otherwise.  The rank test sees only the order, so one result
inside against a few outside never makes it sure, however much worse the region measured; the t
test weighs by how much.  The technique multiplies πBO's exponent by the agreement: a prior whose
region holds clearly worse results stops steering the acquisition, while a confirmed one, or one
that has not been tested yet, keeps its full weight.

**Stalls** (:func:`pibo_exponent`).  A right prior brings the search near its mode quickly, and its
density then keeps the proposals on the mode's nearest neighbours; where the best configurations lie
a few steps away, that crawl is slow.  Once the search is stalled (``stall_after`` results without a
better one) the technique alternates trust-region steps around the best (``local_radius``) with
global ones (``global_every``).  An untested or contradicted prior's weight is suspended on the
trust-region steps: there the region is already set by the best result, and the density's peak would
hold the steps to the mode's nearest neighbours.  A confirmed prior's flat region weight has no peak,
so the trust-region steps keep it: it does not hold them near the mode, and it keeps them inside the
region the results confirmed instead of letting the model's uncertainty take them to configurations
two parameters away that leave it (with a prior, the design measures the mode first, so the search
counts as stalled from the second model proposal on when nothing has beaten it).  The global steps
keep the weight in every case, so that they explore the prior's region rather than leave a region
that was right for wherever the model is merely uncertain.
"""
from __future__ import annotations

import math
import random
from typing import Any, Dict, Optional, Sequence

import numpy as np
from scipy.stats import ttest_ind


def pibo_exponent(beta: float, log_weights: Sequence[float], values: Sequence[float],
                  trust_region: bool = False) -> float:
    """The exponent of the prior in the acquisition before a BO proposal: πBO's ``beta / n`` after
    ``n`` results (``log_weights`` and ``values`` as in :func:`agreement`), times their agreement with
    the prior.  On a ``trust_region`` step (a stalled search's step within ``local_radius`` of the
    best) it is 0 unless the results confirm the prior: an untested or contradicted prior weighs by
    its density, whose peak would hold the step to the mode's nearest neighbours, while a confirmed
    one weighs by its flat region (:func:`pibo_weight`), which only keeps the step inside the region
    the results confirmed.  A stalled search's global steps keep the weight."""
    if trust_region and not confirmed(log_weights, values):
        return 0.0
    return beta / max(len(values), 1) * agreement(log_weights, values)


def pibo_weight(prior: Any, log_weights: Sequence[float], values: Sequence[float]) -> Any:
    """What πBO weighs the acquisition by before a BO proposal (``Acquisition.weigh_by_prior``):
    :class:`PriorRegion` of ``prior`` once the results (``log_weights`` and ``values`` as in
    :func:`agreement`) confirm it -- those inside its high region rank better than those outside --
    and ``prior`` itself otherwise (no result on one side yet, or the inside ones rank worse)."""
    return PriorRegion(prior) if confirmed(log_weights, values) else prior


def confirmed(log_weights: Sequence[float], values: Sequence[float]) -> bool:
    """Whether the results (as in :func:`agreement`) confirm the prior: there are results inside
    and outside its high region, and those inside rank better (:func:`rank_score` above 0)."""
    z = rank_score(log_weights, values)
    return z is not None and z > 0.0


def agreement(log_weights: Sequence[float], values: Sequence[float]) -> float:
    """How far results agree with the prior, in [0, 1]; called before each BO proposal.

    ``log_weights``: the prior's log weight over uniform of each evaluated configuration;
    ``values``: their results, lower is better, ``inf`` for a failure.  Returns 1 when no result
    lies inside (log weight > 0) or none outside the prior's high region, or when the inside ones
    rank better; otherwise the smaller of the rank test's p-value and :func:`magnitude_p`'s.
    """
    z = rank_score(log_weights, values)
    if z is None or z >= 0.0:
        return 1.0
    return min(math.erfc(-z / math.sqrt(2.0)), magnitude_p(log_weights, values))


def magnitude_p(log_weights: Sequence[float], values: Sequence[float]) -> float:
    """The two-sided p-value of Student's t test (pooled variance) of the results inside the prior's
    high region against those outside it, when the inside ones measure worse on average; 1 when
    they do not, or when there are too few results for a variance (fewer than three, or no spread).

    The rank test sees only the order of the results: one result inside against one outside is
    never significant, whether the inside one is 10 % or a thousand times worse.  This test weighs
    how much worse: on the log scale when every finite value is positive (run times, where "k times
    slower" is the natural measure), on the values' own scale otherwise.  Failures count as the
    worst finite result: a failure says that a configuration is bad, not by how much.
    """
    w = np.asarray(log_weights, dtype=float)
    v = np.asarray(values, dtype=float)
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return 1.0
    v = np.where(np.isfinite(v), v, finite.max())
    if finite.min() > 0.0:
        v = np.log(v)
    inside, outside = v[w > 0.0], v[w <= 0.0]
    n1, n2 = inside.size, outside.size
    if n1 == 0 or n2 == 0 or n1 + n2 < 3:
        return 1.0
    gap = float(inside.mean() - outside.mean())
    ss = float(np.sum((inside - inside.mean()) ** 2) + np.sum((outside - outside.mean()) ** 2))
    if gap <= 0.0 or ss <= 0.0:
        return 1.0
    return float(ttest_ind(inside, outside).pvalue)


def rank_score(log_weights: Sequence[float], values: Sequence[float]) -> Optional[float]:
    """The Mann-Whitney z-score of the results inside the prior's high region against those
    outside it (positive: the inside ones rank better); None when either side has no result."""
    w = np.asarray(log_weights, dtype=float)
    v = np.asarray(values, dtype=float)
    inside, outside = v[w > 0.0], v[w <= 0.0]
    if inside.size == 0 or outside.size == 0:
        return None
    a, b = inside[:, None], outside[None, :]
    u = float(np.sum(a < b)) + 0.5 * float(np.sum(a == b))
    n1, n2 = inside.size, outside.size
    return (u - 0.5 * n1 * n2) / math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12.0)


class PriorRegion:
    """The weight of a confirmed prior in πBO (:func:`pibo_weight`): the space's prior (a
    ``SpacePrior``) capped at the uniform weight; one is made for each BO proposal that uses it."""

    def __init__(self, prior: Any) -> None:
        self.prior = prior

    def log_weights(self, configs: Sequence[Dict[str, Any]]) -> np.ndarray:
        """The log weight over uniform of each configuration: the prior's where it is below the
        uniform one, 0 inside the prior's high region."""
        return np.minimum(np.asarray(self.prior.log_weights(configs), dtype=float), 0.0)


def mode_configuration(manipulator: Any, space: Any, rng: random.Random, np_rng: np.random.Generator,
                       tries: int = 64) -> Optional[Dict[str, Any]]:
    """The prior's mode as a whole configuration: the mode's values (``SpacePrior.mode``) with the
    remaining parameters taken from random feasible configurations of ``space`` (a
    ``FeasibleSpace``), the first completion that satisfies the known constraints; None when the
    space has no prior or no completion among ``tries`` is feasible.  Called for the first
    configuration of the initial design."""
    prior = manipulator.prior
    if not prior:
        return None
    mode = prior.mode()
    for cfg in space.sample(rng, np_rng, tries):
        cfg.update(mode)
        if manipulator.is_valid(cfg) and space.is_feasible(cfg):
            return cfg
    return None


class PriorDesign:
    """What each draw of the initial design is when the space has priors; one per technique run.

    The design starts at the prior's mode and continues with uniform draws, so that the results
    compare the prior's high region with the rest of the space (:func:`agreement`).  That test needs
    a result inside the region: when none is measured or pending -- the mode was a gap in a recorded
    table (an unmeasured result) or lay outside the feasible space -- the next draw comes from the
    prior's concentrated part (``FeasibleSpace.sample(..., local=True)``) instead, until one is.
    Failed results count as evidence (the worst results), unmeasured ones do not.
    """

    def __init__(self, prior: Any) -> None:
        self.prior = prior
        self.mode_due = bool(prior)
        self._pending: Dict[Any, bool] = {}   # hash of a proposal in flight -> inside the high region
        self.inside = 0                        # measured results inside the high region

    def _is_inside(self, config: Dict[str, Any]) -> bool:
        return bool(self.prior.log_weights([config])[0] > 0.0)

    def proposed(self, key: Any, config: Dict[str, Any]) -> None:
        """Called for every configuration the technique proposes (``key``: its hash)."""
        if self.prior:
            self._pending[key] = self._is_inside(config)

    def observed(self, key: Any, config: Optional[Dict[str, Any]], evidence: bool) -> None:
        """Called for every result, whoever proposed it (``config``: the normalised configuration,
        None for a repeated or invalid one); ``evidence``: False for those and for an unmeasured
        result (a gap in a recording)."""
        was_inside = self._pending.pop(key, None)
        if self.prior and evidence and config is not None and (
                was_inside if was_inside is not None else self._is_inside(config)):
            self.inside += 1

    def next_draw(self) -> str:
        """The kind of the next design draw: ``"mode"`` (the first), ``"local"`` (no result inside
        the prior's high region is measured or pending), ``"uniform"`` (otherwise), or ``"prior"``
        for a space without priors (drawn as ever)."""
        if not self.prior:
            return "prior"
        if self.mode_due:
            self.mode_due = False
            return "mode"
        return "local" if self.inside == 0 and not any(self._pending.values()) else "uniform"

"""Proposals of MultiObjectiveBO aimed at one objective's own extreme (``extreme_every``).

The expected hypervolume improvement values a candidate by the gaps of the front found so far,
with the reference point just beyond that front's nadir.  A design better in one objective than
the whole front but worse than the nadir in another (on the HPVM2FPGA model: a design twice as fast
as the fastest found, using twice the resources) lies outside the region it measures and is worth
nothing to it, so the front's extremes are extended only by chance.  Where the extreme takes many
parameters changed together (every node of a pipeline unrolled far: the latency is set by its
slowest node), that chance is small and a front of 100 evaluations ends well short of what 1,000
random draws reach.

So every ``extreme_every``-th BO proposal maximises instead the expected improvement of one
objective alone over its best value (its own GP, times P(feasible)), the objectives taking turns,
with the local search started from the configurations best in that objective: ParEGO's weight
vectors at the corners, as a fixed share of the proposals.  Called once per BO proposal
(:func:`extreme_objective`) and, on an extreme turn, to build the acquisition and its starts
(:func:`extreme_acquisition`).

On a space too large to be scored whole, an extreme turn's candidates are trust-region moves
around the configurations best in that objective (:func:`perturbations`) and their recombinants,
instead of random draws of the whole space (``extreme_moves``): each move changes a
random set of up to ``radius`` parameters at once, so the model can rate a design that takes many
parameters changed together (one-parameter steps of the local search value each change alone).
The radius of each objective starts at :data:`START_RADIUS` of the parameters, doubles after an
extreme proposal that improved the objective and halves after a miss (TuRBO's rule, on the number
of parameters changed), and a proposal that improved its objective earns that objective the next
proposal too, outside the schedule: where an extreme takes many parameters changed together, each
step gains a little, and a fixed share of one proposal in ``every x objectives`` leaves most of
the way untravelled within a short budget.
"""
from __future__ import annotations

import random
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..base import Config
from .acquisition import Acquisition
from .gp import GaussianProcess
from .metric_ehvi import MetricImprovement

#: the trust region's first radius, as a share of the parameters
START_RADIUS = 0.25
#: trust-region moves drawn per extreme proposal
MOVES = 256


class ExtremeTurns:
    """Which BO proposals aim at an objective's extreme, and whether that objective still gains from it.

    Every ``every``-th proposal is an extreme turn, the objectives in turn (:func:`extreme_objective`);
    an objective whose last ``patience`` extreme proposals in a row did not improve its best value
    (failed designs included) gets no more of them: its turns go to the expected hypervolume
    improvement.  :meth:`aim` is called once per BO proposal, :meth:`proposed` for an extreme
    proposal, :meth:`observed` for every result."""

    def __init__(self, every: int, patience: int, follow_gains: bool = True) -> None:
        self.every, self.patience, self.follow_gains = every, patience, follow_gains
        self.turn = 0
        self.radius: Dict[int, float] = {}       # objective -> trust-region radius, a share of the parameters
        self.misses: Dict[int, int] = {}          # objective -> extreme proposals in a row without a gain
        self.aimed: Dict[str, int] = {}           # hash of an extreme proposal in flight -> its objective
        self.streak: Optional[int] = None         # objective whose last extreme proposal improved it

    def aim(self, objectives: int, dimension: Optional[int] = None) -> Optional[int]:
        """The objective this BO proposal aims at alone, or None (an EHVI proposal).  With
        ``dimension`` (the parameters, given where the turns draw trust-region moves) an objective
        keeps its turns after ``patience`` misses while its radius still spans more than one
        parameter: each miss halves it, so the turns end once moves of one parameter missed too.
        With ``dimension`` and ``follow_gains``, an extreme proposal that improved its objective also
        earns that objective the next proposal, outside the schedule (a trust region that keeps
        gaining is followed)."""
        if dimension is not None and self.streak is not None:
            followed, self.streak = self.streak, None
            return followed
        self.turn += 1
        j = extreme_objective(self.turn - 1, self.every, objectives)
        if j is None or (self.patience > 0 and self.misses.get(j, 0) >= self.patience
                         and (dimension is None or self.radius_of(j) * dimension <= 1)):
            return None
        return j

    def proposed(self, key: str, objective: int) -> None:
        """An extreme proposal for ``objective`` was made (its result is awaited)."""
        self.aimed[key] = objective

    def to_state(self) -> Dict[str, Any]:
        """The schedule's position, each objective's misses in a row and radius, and the objective
        whose last extreme proposal gained, for the technique's saved state (an extreme proposal
        still in flight is not kept: its result is replayed as any other)."""
        return {"turn": self.turn, "misses": {str(j): m for j, m in self.misses.items()},
                "radius": {str(j): r for j, r in self.radius.items()}, "streak": self.streak}

    def load_state(self, state: Dict[str, Any]) -> None:
        """Continue from :meth:`to_state`'s position (called when a run resumes)."""
        self.turn = int(state.get("turn", 0))
        self.misses = {int(j): int(m) for j, m in (state.get("misses") or {}).items()}
        self.radius = {int(j): float(r) for j, r in (state.get("radius") or {}).items()}
        self.streak = None if state.get("streak") is None else int(state["streak"])

    def observed(self, key: str, vector: Optional[Sequence[float]], best: Optional[Sequence[float]]) -> None:
        """A result arrived: ``vector`` (None: failed) and the best value of every objective before it
        (None: none yet).  Counts a gain or a miss for the objective an extreme proposal aimed at."""
        j = self.aimed.pop(key, None)
        if j is None:
            return
        gained = vector is not None and (best is None or vector[j] < best[j])
        self.streak = j if gained and self.follow_gains else None
        self.misses[j] = 0 if gained else self.misses.get(j, 0) + 1
        self.radius[j] = min(1.0, self.radius_of(j) * 2) if gained else self.radius_of(j) / 2

    def radius_of(self, objective: int) -> float:
        """The trust-region radius of ``objective``'s extreme turns, a share of the parameters (the
        number changed at most is this share of them, at least one)."""
        return self.radius.get(objective, START_RADIUS)


def extreme_objective(turn: int, every: int, objectives: int) -> Optional[int]:
    """The objective the BO proposal numbered ``turn`` (0, 1, ...) aims at alone, or None for an
    EHVI proposal: every ``every``-th proposal (the ``every - 1``-th, ``2 every - 1``-th, ...), the
    objectives in turn; never with ``every`` 0 or a single objective."""
    if every <= 0 or objectives < 2 or turn % every != every - 1:
        return None
    return (turn // every) % objectives


def extreme_acquisition(objective: int, gps: Sequence[GaussianProcess], train: List[np.ndarray], y: np.ndarray,
                        configs: Sequence[Config], starts: int, encoder: Any, feasibility: Any, eps_f: float,
                        feature_encoder: Any, metric_map: Any = None) -> Tuple[Acquisition, List[Config]]:
    """The expected improvement of ``objective`` alone over its best standardised value ``y`` (rows
    of the training ``configs``) x P(feasible), or with ``metric_map`` (the objective's
    :class:`.metric_ehvi.MetricMap`) over its best value in the metric's units
    (:class:`.metric_ehvi.MetricImprovement`), and the local search's starts: the ``starts``
    training configurations best in that objective, best first."""
    column = y[:, objective]
    if metric_map is not None:
        acq: Acquisition = MetricImprovement(encoder, gps[objective], train, metric_map, feasibility, eps_f,
                                             feature_encoder)
    else:
        acq = Acquisition(encoder, gps[objective], train, float(column.min()), feasibility, eps_f, feature_encoder)
    order = np.argsort(column, kind="stable")[:starts]
    return acq, [configs[i] for i in order]


def perturbations(centres: Sequence[Config], donors: Sequence[Config], names: Sequence[str], radius: float,
                  rng: random.Random, feasible: Callable[[Config], bool], count: int = MOVES) -> List[Config]:
    """Up to ``count`` feasible trust-region moves: a centre (the first, the best, for half of them;
    any of ``centres`` for the others) with ``k`` random parameters, ``k`` drawn from 1 to
    ``max(1, round(radius x len(names)))``, set to the values of a random donor (a random draw of
    the space, so each value follows the space's own distribution).  Moves equal to their centre
    are dropped; none without centres or donors."""
    if not centres or not donors or not names:
        return []
    most = max(1, int(round(radius * len(names))))
    out: List[Config] = []
    for _ in range(count):
        centre = centres[0] if rng.random() < 0.5 else centres[rng.randrange(len(centres))]
        donor = donors[rng.randrange(len(donors))]
        child = dict(centre)
        for n in rng.sample(list(names), rng.randint(1, min(most, len(names)))):
            child[n] = donor[n]
        if child != centre and feasible(child):
            out.append(child)
    return out

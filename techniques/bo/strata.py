"""Where BayesianOptimization's stratified initial design puts its uniform points (:class:`StrataDesign`).

``d + 1`` uniformly random points often leave a whole range of a parameter unmeasured, and the first
GP extrapolates into it.  The spread design (:class:`.design.SpreadDesign`) fixes that by maximin
distance, which pushes points to the ends of each range; where the ends are the worst configurations
(power-of-two sizes of a kernel, say) that costs evaluations.  The stratified design is a Latin-
hypercube-like alternative that covers each range without favouring its ends: every numeric or
ordinal parameter's unit range (its unit value, as the GP's distances read it) is cut into ``S``
equal strata (``S``: the design size), and each design point is the candidate, among a pool of new
feasible uniform random draws, that puts the most parameters into a stratum no earlier point
occupies (a categorical parameter counts when its level is one no earlier point has).  Ties go to
the earlier draw, so where no candidate gains anything the pick is the uniform design's own draw.
Permutations, arrays and selectors do not score.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Set

import numpy as np

from .distances import CategoryEncoder, SpaceEncoder, UnitEncoder

Config = Dict[str, Any]

#: fewest candidates a stratified design point is picked from
MIN_POOL = 16


class StrataDesign:
    """The strata the configurations so far occupy, and the pick of the next design point."""

    def __init__(self, encoder: SpaceEncoder, strata: int, pool: int, active: bool) -> None:
        self.active = active
        self.strata = max(1, int(strata))        #: strata per numeric parameter (the design size)
        self.pool = max(MIN_POOL, int(pool))     #: candidates per pick
        n = len(encoder.names)
        #: the primary encoder of each parameter that scores (unit values or categorical levels)
        self._scored = [e for e in encoder.encoders[:n] if isinstance(e, (UnitEncoder, CategoryEncoder))]
        self._units: List[List[float]] = [[] for _ in self._scored]   # unit values (levels) seen per parameter

    def note(self, config: Config) -> None:
        """Called for each configuration proposed or observed (by any technique): later picks avoid
        its strata.  Nothing is kept while the design is not stratified."""
        if not self.active:
            return
        for seen, enc in zip(self._units, self._scored):
            seen.append(float(enc.encode([config[enc.name]])[0, 0]))

    def _cells(self, enc: Any, units: np.ndarray) -> np.ndarray:
        """The stratum of each unit value (a categorical parameter's level index is its own cell)."""
        if isinstance(enc, CategoryEncoder):
            return units.astype(int)
        return np.minimum(np.floor(units * self.strata), self.strata - 1).astype(int)

    def scores(self, pool: Sequence[Config]) -> np.ndarray:
        """For each configuration of ``pool``, the number of parameters whose stratum (level) no
        configuration noted so far occupies."""
        score = np.zeros(len(pool), dtype=int)
        for seen, enc in zip(self._units, self._scored):
            covered: Set[int] = set(self._cells(enc, np.asarray(seen, dtype=float)).tolist())
            cells = self._cells(enc, enc.encode([c[enc.name] for c in pool])[:, 0])
            score += np.fromiter((c not in covered for c in cells.tolist()), int, len(pool))
        return score

    def pick(self, pool: Sequence[Config]) -> Optional[Config]:
        """The configuration of ``pool`` (new, feasible, uniformly random draws in their order) that
        covers the most unoccupied strata, the earliest of those tied; None for an empty pool."""
        if not pool:
            return None
        return pool[int(np.argmax(self.scores(pool)))]

"""What BayesianOptimization proposes without a model: where its initial design's points go, and the
guided draws made while fewer than two results are OK.

**Spread design** (:class:`SpreadDesign`).  ``d + 1`` uniformly random points in ``d`` dimensions often
leave a whole range of a parameter unmeasured (two or three of five draws land on the same half of
a power-of-two range), and the first GP, fitted on them, extrapolates into that range with a flat
posterior: its first proposals go to the corners farthest from the data instead of refining what
the design found.  Each design point is therefore the one of ``candidates`` uniformly random feasible
configurations farthest (largest smallest distance, in the GP's own distance channels) from every
configuration already evaluated or pending: Mitchell's best-candidate sampling, which stays random
(a fresh draw of candidates per point) but spreads the points over every parameter's range.  With
``candidates`` 1 the design is the uniform random one.
"""
from __future__ import annotations

import random
from typing import Any, Callable, Dict, Hashable, List, Optional, Sequence, Set

import numpy as np

from .distances import SpaceEncoder

Config = Dict[str, Any]


class SpreadDesign:
    """The configurations measured or pending so far, and the best-candidate pick of the next design point."""

    def __init__(self, encoder: SpaceEncoder, candidates: int) -> None:
        self.encoder = encoder
        self.candidates = max(1, int(candidates))
        self.points: List[Config] = []     # every configuration evaluated or proposed, in order
        self._keys: Set[Hashable] = set()

    def note(self, key: Hashable, config: Config) -> None:
        """Called for each configuration proposed or observed (by any technique): later picks keep away from it.
        With ``candidates`` 1 no pick reads the points, and none are kept."""
        if self.candidates > 1 and key not in self._keys:
            self._keys.add(key)
            self.points.append(config)

    def pick(self, pool: Sequence[Config]) -> Optional[Config]:
        """The configuration of ``pool`` (new, feasible, uniformly random: the first ``candidates`` are
        used) whose smallest summed squared distance to :attr:`points` is largest; the first one when
        nothing is measured yet or ``candidates`` is 1; None for an empty pool."""
        pool = list(pool[:self.candidates])
        if len(pool) <= 1 or not self.points:
            return pool[0] if pool else None
        d2 = self.encoder.sqdists(self.encoder.encode(pool), self.encoder.encode(self.points)).sum(axis=0)
        return pool[int(np.argmax(d2.min(axis=1)))]


def guided_pick(pool: List[Config], excluded: Callable[[Config], bool], probability: Callable[[List[Config]], Any],
                rng: random.Random) -> Optional[Config]:
    """The most probably feasible configuration of ``pool`` not ``excluded`` (ties in random order);
    None when none is left.  Used after the initial design while fewer than two results are OK and
    the feasibility classifier can be trained (one OK and one failed result)."""
    pool = [c for c in pool if not excluded(c)]
    if not pool:
        return None
    rng.shuffle(pool)
    return pool[int(np.argmax(probability(pool)))]

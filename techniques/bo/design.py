"""What BayesianOptimization proposes without a model: new random configurations and the initial design's
points (:class:`NewDraws`), where those points go, and the guided draws made while fewer than two results
are OK.

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
from typing import Any, Callable, Dict, Hashable, Iterable, List, Optional, Sequence, Set

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


class NewDraws:
    """Random feasible configurations not yet evaluated or pending (their keys are ``excluded``, the
    technique's own set, read as it grows), drawn from the chain of trees ``space`` with the technique's
    random streams: the fallback of every proposal the model cannot make, and the initial design's points."""

    def __init__(self, space: Any, key: Callable[[Config], Hashable], excluded: Set[Hashable],
                 spread: SpreadDesign, rng: random.Random, np_rng: np.random.Generator) -> None:
        self.space, self.key, self.excluded, self.spread = space, key, excluded, spread
        self.rng, self.np_rng = rng, np_rng

    def random(self, uniform: bool = False, local: bool = False) -> Optional[Config]:
        """A random feasible configuration not yet evaluated or pending, drawn from the priors (uniform
        with ``uniform``, from their concentrated part with ``local``: :class:`.prior_use.PriorDesign`);
        None when 320 draws found none."""
        for _ in range(20):
            for cfg in self.space.sample(self.rng, self.np_rng, 16, uniform, local):
                if self.key(cfg) not in self.excluded:
                    return cfg
        return None

    def design(self, draw: str) -> Optional[Config]:
        """A design point of kind ``draw`` (:meth:`.prior_use.PriorDesign.next_draw`: "uniform", "local" or
        "prior"): the best of ``design_candidates`` new random draws (:class:`SpreadDesign`)."""
        if self.spread.candidates == 1 or draw == "local":
            return self.random(uniform=draw == "uniform", local=draw == "local")
        pool = [c for c in self.space.sample(self.rng, self.np_rng, self.spread.candidates, draw == "uniform")
                if self.key(c) not in self.excluded]
        return self.spread.pick(pool) or self.random(uniform=draw == "uniform")

    def guided(self, probability: Callable[[List[Config]], Any], ok_configs: Iterable[Config], neighbours: Any,
               samples: int) -> Optional[Config]:
        """The most probably feasible (``probability``: the feasibility classifier's) of ``samples`` random
        draws and the neighbours of ``ok_configs`` (:func:`guided_pick`); a random new configuration when
        none of them is new.  Called while fewer than two results are OK and the classifier can be trained."""
        pool = list(self.space.sample(self.rng, self.np_rng, samples))
        for cfg in ok_configs:
            pool.extend(c for _, _, c in neighbours.neighbours(cfg, self.rng))
        picked = guided_pick(pool, lambda c: self.key(c) in self.excluded, probability, self.rng)
        return picked if picked is not None else self.random()

"""Feasible candidates for StructuralSurrogate on spaces with known constraints.

Minimising the sampled model one parameter at a time ignores constraints that link parameters
(``gs0 % ls0 == 0``, a table of recorded configurations), so on such spaces the model's minimum is
searched among feasible configurations only, drawn from BayesianOptimization's chain of trees:

* when the feasible space has at most ``limit`` configurations (Kernel Tuner caches, RISE spaces,
  ``@table`` spaces), every one of them is encoded once into a sparse feature matrix, and each
  proposal is the exact minimum of the sampled model over the unmeasured configurations within a
  Hamming radius (changed parameters) of the incumbent -- the whole space when none is left there;
* otherwise the minimum over uniformly random feasible configurations and the caller's own
  (per-parameter) minimum when that one is feasible.

Called by :class:`~.technique.StructuralSurrogate` only; it owns no results, only the marks of which
enumerated configurations were measured or are in flight.
"""
from __future__ import annotations

import random
from typing import Any, Dict, Hashable, List, Optional, Sequence

import numpy as np
from scipy import sparse

from ...parameters import ConfigurationManipulator, FeasibleSpace
from ...parameters.features import FeatureLayout

Config = Dict[str, Any]

#: most feasible configurations encoded and scored whole
ENUMERATION_LIMIT = 50_000
#: random feasible configurations scored per proposal on larger spaces
SAMPLES = 500


def has_known_constraints(manipulator: ConfigurationManipulator) -> bool:
    """True when some group of parameters is linked by a known constraint."""
    return any(manipulator.group_constraints(group) for group in manipulator.groups())


class FeasibleCandidates:
    """Feasible configurations scored under a sampled weight vector (see the module docstring)."""

    def __init__(self, manipulator: ConfigurationManipulator, layout: FeatureLayout,
                 limit: int = ENUMERATION_LIMIT) -> None:
        self.manipulator = manipulator
        self.layout = layout
        self.cot = FeasibleSpace(manipulator)
        configs = self.cot.enumerate_all(limit)
        self.configs: Optional[List[Config]] = configs
        if configs is not None:
            self.X = self._matrix(configs)
            self.codes = self._codes(configs)
            self.row_of: Dict[Hashable, int] = {manipulator.hash_config(c): i for i, c in enumerate(configs)}
            self.taken = np.zeros(len(configs), dtype=bool)

    @property
    def enumerated(self) -> bool:
        """True when the whole feasible space is held (exact minimisation)."""
        return self.configs is not None

    def _matrix(self, configs: Sequence[Config]) -> sparse.csr_matrix:
        rows = [self.layout.encode(c) for c in configs]
        indptr = np.cumsum([0] + [idx.size for idx, _ in rows])
        indices = np.concatenate([idx for idx, _ in rows]) if rows else np.zeros(0, dtype=np.int64)
        data = np.concatenate([val for _, val in rows]) if rows else np.zeros(0)
        return sparse.csr_matrix((data, indices, indptr), shape=(len(rows), self.layout.size))

    def _codes(self, configs: Sequence[Config]) -> np.ndarray:
        """Integer code of each parameter value per configuration (for Hamming distances)."""
        names = self.manipulator.names
        maps: List[Dict[str, int]] = [{} for _ in names]
        codes = np.empty((len(configs), len(names)), dtype=np.int64)
        for i, cfg in enumerate(configs):
            for j, name in enumerate(names):
                codes[i, j] = maps[j].setdefault(repr(cfg[name]), len(maps[j]))
        self._maps = maps
        return codes

    def mark(self, key: Hashable) -> None:
        """Record that the configuration with hash ``key`` was measured or is in flight."""
        if self.configs is not None:
            row = self.row_of.get(key)
            if row is not None:
                self.taken[row] = True

    def best(self, weights: np.ndarray, incumbent: Config, radius: int, excluded: Any,
             own: Optional[Config], rng: random.Random, np_rng: np.random.Generator) -> Optional[Config]:
        """The feasible configuration minimising ``X @ weights`` that is not ``excluded`` (a container
        of configuration hashes): within ``radius`` changed parameters of ``incumbent`` when the space
        is enumerated, else among random feasible samples and ``own``.  None when there is none."""
        if self.configs is not None:
            return self._best_enumerated(weights, incumbent, radius)
        pool = self.cot.sample(rng, np_rng, SAMPLES)
        if own is not None and self.cot.is_feasible(own):
            pool.append(own)
        pool = [c for c in pool if self.manipulator.hash_config(c) not in excluded]
        if not pool:
            return None
        X = self._matrix(pool)
        return dict(pool[int(np.argmin(X @ weights))])

    def _best_enumerated(self, weights: np.ndarray, incumbent: Config, radius: int) -> Optional[Config]:
        open_rows = ~self.taken
        if not open_rows.any():
            return None
        centre = np.array([m.get(repr(incumbent[n]), -1) for m, n in zip(self._maps, self.manipulator.names)])
        near = open_rows & (np.count_nonzero(self.codes != centre[None, :], axis=1) <= max(1, radius))
        rows = np.flatnonzero(near if near.any() else open_rows)
        scores = (self.X @ weights)[rows]
        return dict(self.configs[int(rows[int(np.argmin(scores))])])  # type: ignore[index]

"""NSGA-II (Deb et al. 2002), steady-state: non-dominated sorting and crowding over every parameter kind.

The population holds the ``population_size`` best results seen by the run (any technique's, OK ones
only), best meaning NSGA-II's environmental selection: successive non-dominated fronts
(:func:`~tunerlib.techniques.pareto.non_dominated_sort`), the last front that does not fit cut by
crowding distance (the most isolated points kept).  Each result updates the population at once (a
(μ+1) scheme), so several children may be in flight and results may arrive in any order.

A child: two binary tournaments on (front rank, larger crowding distance); with probability
``crossover_rate`` a parameter-wise crossover (:func:`~tunerlib.techniques.variation.cross_param`: the
named crossover for permutations, a segment for arrays, either parent's value otherwise); then each
parameter is mutated with probability ``mutation_rate`` (default one over the number of parameters, at
least one) by :func:`~tunerlib.techniques.variation.mutate_param` (local moves for permutations, Gaussian
steps of ``sigma`` with probability ``normal`` for numbers).  The first ``initial`` requests (the
initial design, default the population size) are random feasible configurations.

Objectives come from ``Feedback.values`` (several objectives) or ``Feedback.value`` (one: NSGA-II is then
an elitist steady-state GA with crowding).
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import numpy as np

from ..parameters import ConfigurationManipulator
from .base import Config, Feedback
from .evolutionary import EvolutionaryTechnique
from .variation import PERMUTATION_CROSSOVERS, cross_param, mutate_param
from .options import Option, configure
from .pareto import crowding_distance, non_dominated_sort


@dataclass
class Individual:
    """A population member: configuration, key, oriented objective vector, front rank, crowding."""

    config: Config
    key: str
    values: Tuple[float, ...]
    rank: int = 0
    crowding: float = 0.0


def select(population: List[Individual], size: int) -> List[Individual]:
    """NSGA-II environmental selection: the ``size`` best by front, then crowding; sets rank and crowding."""
    if not population:
        return []
    points = np.asarray([ind.values for ind in population], dtype=float)
    kept: List[Individual] = []
    for rank, front in enumerate(non_dominated_sort(points)):
        dist = crowding_distance(points[front])
        members = [population[i] for i in front]
        for ind, d in zip(members, dist):
            ind.rank, ind.crowding = rank, float(d)
        if len(kept) + len(members) <= size:
            kept.extend(members)
            continue
        order = sorted(range(len(members)), key=lambda i: -dist[i])   # stable: ties keep arrival order
        kept.extend(members[i] for i in order[:size - len(kept)])
        break
    # crowding within the kept set, as the next tournaments see it
    final = np.asarray([ind.values for ind in kept], dtype=float)
    for rank, front in enumerate(non_dominated_sort(final)):
        for i, d in zip(front, crowding_distance(final[front])):
            kept[i].rank, kept[i].crowding = rank, float(d)
    return kept


class NSGA2(EvolutionaryTechnique):
    """NSGA-II for one or several objectives (see the module docstring)."""

    description = "NSGA-II: non-dominated sorting and crowding (population 16), every parameter kind"
    multi_objective = True

    OPTIONS = (Option("population_size", int, 16, 2, 100000, 8, 40, "members in the population"),
               Option("crossover_rate", float, 0.9, 0.0, 1.0, 0.5, 1.0, "probability to cross two parents"),
               Option("mutation_rate", float, None, 0.0, 1.0, 0.05, 0.5, optional=True,
                      doc="probability to mutate a parameter (null: one over the number of parameters)"),
               Option("normal", float, 0.5, 0.0, 1.0, 0.0, 1.0, "probability of a Gaussian step for numbers"),
               Option("sigma", float, 0.1, 0.0, 10.0, 0.02, 0.3, "Gaussian step in unit space"),
               Option("crossover", str, "OX1", choices=PERMUTATION_CROSSOVERS, doc="permutation crossover"),
               Option("initial", int, None, 2, 100000, 4, 40, optional=True,
                      doc="random configurations before the first child (null: the population size)"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    population_size: int
    crossover_rate: float
    mutation_rate: Optional[float]
    normal: float
    sigma: float
    crossover: str
    initial: Optional[int]

    def __init__(self, name: Optional[str] = None, max_tries: int = 20, **options: Any) -> None:
        super().__init__(name, max_tries)
        configure(self, options)
        #: random configurations before the first child
        self.n_initial = self.population_size if self.initial is None else self.initial

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random, path: Optional[str] = None) -> None:
        """Called once before the first proposal; starts with an empty population."""
        super().bind(manipulator, rng, path)
        self.population: List[Individual] = []

    # ---- learning ------------------------------------------------------------------------------
    def on_result(self, feedback: Feedback) -> None:
        """Every OK result (any technique's) competes for a place in the population."""
        if not feedback.ok or feedback.duplicate:
            return
        values = tuple(feedback.values) if feedback.values else (feedback.value,)
        if not all(math.isfinite(v) for v in values) or any(i.key == feedback.key for i in self.population):
            return
        assert self.manipulator is not None
        self.population.append(Individual(self.manipulator.copy(feedback.config), feedback.key, values))
        self.population = select(self.population, self.population_size)

    # ---- proposing -----------------------------------------------------------------------------
    def desired_configuration(self) -> Optional[Config]:
        size = len(self.population)
        if size < 2 or size < self.n_initial and size + self.in_flight < self.n_initial:
            return self.finish(self.random_config)
        return self.finish(self._child)

    def _tournament(self) -> Individual:
        a, b = self.rng.choice(self.population), self.rng.choice(self.population)
        if (b.rank, -b.crowding) < (a.rank, -a.crowding):
            return b
        return a

    def _child(self) -> Config:
        m = self.manipulator
        assert m is not None
        first, second = self._tournament(), self._tournament()
        child = m.copy(first.config)
        params = m.parameters
        if second is not first and self.rng.random() < self.crossover_rate:
            for param in params:
                if self.rng.random() < 0.5:
                    cross_param(param, child, first.config, second.config, self.rng, self.crossover)
        rate = self.mutation_rate if self.mutation_rate is not None else 1.0 / max(1, len(params))
        picked = [p for p in params if self.rng.random() < rate] or ([self.rng.choice(params)] if params else [])
        for param in picked:
            mutate_param(param, child, self.rng, normal=self.rng.random() < self.normal, sigma=self.sigma)
        return child


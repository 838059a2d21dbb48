"""Genetic algorithms (OpenTuner's ``ga-*`` family; ``GGA`` is in :mod:`.global_ga`): the steady-state
:class:`GeneticAlgorithm`, built on the population bookkeeping of :mod:`.evolutionary` and the kind-aware
mutation and crossover of :mod:`.variation`.

Differences from OpenTuner 0.8.8 (whose ``ga-*`` always crossed the global best with itself, i.e.
never crossed, and mutated permutations by a full shuffle): :class:`GeneticAlgorithm` is a real
steady-state GA with a population, tournament selection, the named permutation crossover and
local-move mutation; ``ga-base`` is that GA with parameter-wise uniform crossover (OpenTuner
registered a plain UniformGreedyMutation under that name, which tunerlib already offers as
``UniformGreedyMutation``); ``GGA`` takes its second parent from an elite archive instead of the
global best again.
"""
from __future__ import annotations

import random
from typing import Any, List, Optional, Set

from ..parameters import ConfigurationManipulator
from .base import Config, Feedback
from .evolutionary import EvolutionaryTechnique, Member, member_value, tournament
from .options import Option, configure
from .variation import PERMUTATION_CROSSOVERS, cross_param, is_permutation, mutate_param


class GeneticAlgorithm(EvolutionaryTechnique):
    """Steady-state GA: tournament selection, crossover, kind-aware mutation, replace-worst.

    The population (``population_size`` members) first adopts the best results already seen from
    any technique (``adopt``), then fills with random feasible configurations.  Each later child's
    first parent is the global best with probability ``greedy`` (OpenTuner's ga-* always used the
    global best) and otherwise a tournament winner (size ``tournament_size``, the global best joins
    the pool ``sharing`` times); with probability ``crossover_rate`` it is crossed with a second
    tournament winner: permutations by the crossover ``crossover`` (a section of
    ``crossover_strength*n`` items, OpenTuner's d = n/3; ``None`` = whole order from one parent,
    ``ga-base``), every other parameter taken from either parent with probability 1/2 (arrays get a
    segment crossover).  Then at least ``must_mutate`` parameters, and every other one with
    probability ``mutation_rate``, are mutated by :func:`mutate_param`: local moves for
    permutations; numbers get a Gaussian step (``sigma`` in unit space) with probability
    ``normal`` and a uniform re-draw otherwise (OpenTuner's ga-* only re-drew; the mix halved the
    median on a 4-D sphere and on a mixed space at 300 evaluations).  A result -- own, or with
    ``adopt`` another technique's -- that beats the worst member replaces it; duplicates are never
    inserted.  Works on every parameter kind; several children may be in flight and results arrive
    in any order.

    Defaults chosen on att48 at 3000 evaluations (median of 10 seeds, OX1): population 6 with
    greedy 0.25 reaches 1.13x the optimum, population 10: 1.16-1.18x, population 30: 1.45x.
    """

    OPTIONS = (Option("crossover", str, "OX1", choices=PERMUTATION_CROSSOVERS, optional=True,
                      doc="permutation crossover (null: whole order from one parent)"),
               Option("population_size", int, 6, 2, 100000, 4, 30, "members in the population"),
               Option("crossover_rate", float, 0.8, 0.0, 1.0, 0.3, 1.0, "probability to cross two parents"),
               Option("mutation_rate", float, 0.1, 0.0, 1.0, 0.02, 0.3, "probability to mutate a parameter"),
               Option("must_mutate", int, 1, 0, 10000, 0, 2, "parameters mutated at least"),
               Option("tournament_size", int, 3, 1, 10000, 2, 5, "members per tournament"),
               Option("crossover_strength", float, 1.0 / 3.0, 0.0, 1.0, 0.1, 0.5, "share of a permutation crossed"),
               Option("sharing", int, 1, 0, 1000, doc="copies of the global best in tournaments"),
               Option("normal", float, 0.5, 0.0, 1.0, 0.0, 1.0, "probability of a Gaussian step for numbers"),
               Option("sigma", float, 0.1, 0.0, 10.0, 0.02, 0.3, "Gaussian step in unit space"),
               Option("greedy", float, 0.25, 0.0, 1.0, 0.0, 0.5, "probability to breed from the best"),
               Option("adopt", bool, True, doc="other techniques' better results replace the worst member"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    crossover: Optional[str]
    population_size: int
    crossover_rate: float
    mutation_rate: float
    must_mutate: int
    tournament_size: int
    crossover_strength: float
    sharing: int
    normal: float
    sigma: float
    greedy: float
    adopt: bool

    def __init__(self, name: Optional[str] = None, **options: Any) -> None:
        super().__init__(name)
        configure(self, options)
        self.elite_size = self.population_size if self.adopt else 0

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        """Called once before the first proposal; starts an empty population."""
        super().bind(manipulator, rng, path)
        self.members: List[Member] = []
        self.initial_made = 0
        self.adopted: Set[str] = set()

    def desired_configuration(self) -> Optional[Config]:
        """A random member while the population fills, then a child; None while nothing is evaluated."""
        if self.adopt:
            self._adopt_elite()
        if self.initial_made + len(self.adopted) < self.population_size:
            self.initial_made += 1
            return self.finish(self.random_config, tries=5, mutate_duplicates=False)
        if not self.members:
            return None if self.in_flight else self.finish(self.random_config, tries=5)
        return self.finish(self.make_child)

    def _adopt_elite(self) -> None:
        """While the population is not full, take in the best results seen (any technique's)."""
        keys = {mem.key for mem in self.members}
        for elite in self.elite:
            if len(self.members) >= self.population_size:
                return
            if elite.key not in keys and elite.key not in self.adopted:
                self.members.append(Member(elite.config, elite.key, elite.value))
                self.adopted.add(elite.key)
                keys.add(elite.key)

    def parent_pool(self) -> List[Member]:
        """Members plus the global best (``sharing`` times) for tournaments."""
        pool = list(self.members)
        if self.best_config is not None and self.sharing > 0:
            pool += [Member(self.best_config, "", self.best_value)] * self.sharing
        return pool

    def make_child(self) -> Config:
        """One offspring: selection, crossover with probability ``crossover_rate``, mutation."""
        m = self.manipulator
        assert m is not None
        pool = self.parent_pool()
        if self.best_config is not None and self.rng.random() < self.greedy:
            first = Member(self.best_config, "", self.best_value)
        else:
            first = tournament(self.rng, pool, self.tournament_size)
        child = m.copy(first.config)
        if self.rng.random() < self.crossover_rate and len(pool) > 1:
            second = tournament(self.rng, pool, self.tournament_size)
            self.crossover_into(child, first.config, second.config)
        self.mutate(child)
        return child

    def crossover_into(self, child: Config, base: Config, donor: Config) -> None:
        """Cross every parameter of ``base`` (already copied into ``child``) with ``donor``."""
        assert self.manipulator is not None
        for param in self.manipulator.parameters:
            if is_permutation(param) and self.crossover:
                cross_param(param, child, base, donor, self.rng, self.crossover, self.crossover_strength)
            elif self.rng.random() < 0.5:
                cross_param(param, child, base, donor, self.rng, None, 0.5)

    def mutate(self, child: Config) -> None:
        """Mutate at least ``must_mutate`` parameters, each other one with ``mutation_rate``."""
        assert self.manipulator is not None
        params = self.manipulator.parameters
        self.rng.shuffle(params)
        for i, param in enumerate(params):
            if i < self.must_mutate or self.rng.random() < self.mutation_rate:
                mutate_param(param, child, self.rng, self.rng.random() < float(self.normal), self.sigma)

    def on_result(self, feedback: Feedback) -> None:
        """With ``adopt``, another technique's OK result joins the population like an own child."""
        full = len(self.members) >= self.population_size
        if self.adopt and full and feedback.ok and not self.is_own(feedback):
            self.on_own_result(feedback)

    def on_own_result(self, feedback: Feedback) -> None:
        """Insert the child while the population fills, later only in place of a worse worst member."""
        if any(mem.key == feedback.key for mem in self.members):
            return
        assert self.manipulator is not None
        member = Member(self.manipulator.copy(feedback.config), feedback.key, feedback.value)
        if len(self.members) < self.population_size:
            self.members.append(member)
            return
        worst = max(range(len(self.members)), key=lambda i: (member_value(self.members[i]), -i))
        if feedback.value < member_value(self.members[worst]):
            self.members[worst] = member


def register(registry: Any) -> None:
    """Register ga-OX1, ga-OX3, ga-PX, ga-CX, ga-PMX, ga-base and GGA."""
    from .builtin import add_module
    add_module(registry, "genetic")

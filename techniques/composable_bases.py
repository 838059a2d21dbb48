"""The composable technique bases (DeepTuner thesis Table 4.1) and the table of bases by root name.

* :class:`GreedyComposableTechnique` -- each member in turn breeds with the global best;
* :class:`RandomThreeParentsComposableTechnique` -- the differential-evolution base: the oldest member
  plus three random parents;
* :data:`TECHNIQUE_BASES` and :func:`register_base` -- the bases generated names may start with
  (:mod:`.naming` parses and draws them; :mod:`.catalogue` keeps catalogue names off their roots).

Both bases are :class:`~.composable.ComposableEvolutionaryTechnique` subclasses; how a child is made
from a base's hooks and an operator map is in :mod:`.composable`.
"""
from __future__ import annotations

import random
from typing import Dict, List, Optional, Type

from ..parameters import ConfigurationManipulator, Parameter
from .base import TechniqueError
from .composable import POPULATION_SIZE, Child, ComposableEvolutionaryTechnique, Member
from .operator_map import OperatorChoice
from .options import Option


def _crossover_rate(default: float, high: float) -> Option:
    """The ``crossover_rate`` option of the greedy and DE bases (random values drawn in [0.1, high])."""
    return Option("crossover_rate", float, default, 0.0, 1.0, 0.1, high,
                          "probability that a parameter is operated on")


class _RateCrossoverReplaceIfBetter(ComposableEvolutionaryTechnique):
    """Shared by the greedy and DE bases: each parameter is operated on with probability
    ``crossover_rate`` (at least one), and the child replaces its primary parent when strictly
    better (and the parent is still in the population)."""

    def minimum_number_of_parents(self) -> int:
        return 4  # greedy: member, best, member, best; DE: the primary and three others

    def select_parameters(self, params: List[Parameter]) -> List[Parameter]:
        return self.select_by_rate(params, self.crossover_rate)  # type: ignore[attr-defined]

    def update_population(self, child: Child, population: List[Member]) -> None:
        primary = child.primary
        if any(m is primary for m in population) and child.value < primary.value:
            self.replace_member(primary, child)


class GreedyComposableTechnique(_RateCrossoverReplaceIfBetter):
    """Thesis Table 4.1 greedy base: each member in turn breeds with the global best.

    * ``get_parents``: cycles through the members (the next one after each proposed child) and
      returns ``[member, best, member, best]``: the member is primary, binary operators read the
      best, ternary ones cross best with member, ``op4_set_linear`` with ``a=1, b=F, c=-F`` gives
      ``best + F*(member - best)``; 4 configurations are guaranteed.
    * ``select_parameters``: each parameter with probability ``crossover_rate`` (at least one).
    * ``update_population``: the child replaces its member only when strictly better.
    * default operator: ``op1_randomize`` (as OpenTuner's greedy base), not ``op1_nop``.
    """

    OPTIONS = (POPULATION_SIZE,
                        _crossover_rate(0.5, 0.9))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    crossover_rate: float
    description = "composable greedy base: members cycle, each bred with the global best"

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self._cursor = 0

    def get_parents(self, population: List[Member]) -> List[Member]:
        member = population[self._cursor % len(population)]
        best = self.global_best()
        return [member, best, member, best]

    def child_proposed(self, primary: Member) -> None:
        self._cursor += 1  # the next child comes from the next member

    def default_operator(self, param: Parameter) -> OperatorChoice:
        return _RANDOMIZE


class RandomThreeParentsComposableTechnique(_RateCrossoverReplaceIfBetter):
    """Thesis Table 4.1 differential-evolution base: the oldest member plus three random parents.

    * ``get_parents``: the primary is the oldest member (touched, i.e. made the youngest, once its
      child is proposed, so requests in flight at once use different members); three other members
      are drawn at random (with replacement when fewer than three exist); with probability
      ``best_probability`` one of the three, at a random position, is replaced by the global best.
    * ``select_parameters``: each parameter with probability ``crossover_rate`` (at least one).
    * ``update_population``: the child replaces that (formerly oldest) member when strictly better
      -- OpenTuner's DE rule; the thesis table's "replaces the oldest member" without comparison
      would make the population a random walk.
    * default operator: ``op4_set_linear`` with ``a=1, b=F, c=-F`` (``A + F*(B - C)``), ``F``
      drawn uniformly in [0, 1) once per child, as in OpenTuner; ``op1_nop`` for kinds without it.
    """

    OPTIONS = (POPULATION_SIZE,
                        _crossover_rate(0.9, 1.0),
                        Option("best_probability", float, 0.2, 0.0, 1.0, 0.0, 0.5,
                                       "probability that the global best is one of the three parents"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    crossover_rate: float
    best_probability: float
    description = "composable DE base: oldest member plus three random parents"

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self._f = 0.5
        self._default = OperatorChoice("op4_set_linear", (), {"a": 1.0, "b": 0.5, "c": -0.5})

    def get_parents(self, population: List[Member]) -> List[Member]:
        self._f = self.rng.random()
        self._default = OperatorChoice("op4_set_linear", (), {"a": 1.0, "b": self._f, "c": -self._f})
        primary = min(population, key=lambda m: m.age)
        others = [m for m in population if m is not primary] or [primary]
        if len(others) >= 3:
            picks = self.rng.sample(others, 3)
        else:
            picks = [self.rng.choice(others) for _ in range(3)]
        if self.rng.random() < self.best_probability:
            picks[self.rng.randrange(3)] = self.global_best()
        return [primary] + picks

    def child_proposed(self, primary: Member) -> None:
        self.touch(primary)  # so requests in flight at once start from different members

    def default_operator(self, param: Parameter) -> OperatorChoice:
        if "op4_set_linear" in type(param).operators():
            return self._default
        return super().default_operator(param)


_RANDOMIZE = OperatorChoice("op1_randomize")

#: technique bases by root name (generated names start with one of these)
TECHNIQUE_BASES: Dict[str, Type[ComposableEvolutionaryTechnique]] = {}


def register_base(cls: Type[ComposableEvolutionaryTechnique]) -> None:
    """Make a technique base known to name parsing and random generation (by its root name)."""
    root = cls.root_name()
    if TECHNIQUE_BASES.get(root, cls) is not cls:
        raise TechniqueError(f"technique base root {root!r} is already registered; rename the class")
    TECHNIQUE_BASES[root] = cls


register_base(GreedyComposableTechnique)
register_base(RandomThreeParentsComposableTechnique)


__all__ = ["GreedyComposableTechnique", "RandomThreeParentsComposableTechnique", "TECHNIQUE_BASES", "register_base"]

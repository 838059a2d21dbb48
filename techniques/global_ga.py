"""OpenTuner's global GA (``GGA``): greedy global-best mutation with occasional crossover."""
from __future__ import annotations

from typing import Any, Optional

from .base import Config
from .evolutionary import EvolutionaryTechnique, member_value
from .variation import cross_param, mutate_param
from .options import Option, configure

__all__ = ["GlobalGA"]


class GlobalGA(EvolutionaryTechnique):
    """OpenTuner's ``GGA``: greedy global-best mutation with occasional crossover.

    Each request starts from the best configuration found by any technique (a random one before
    that).  With probability ``crossover_rate`` it is crossed with a second parent drawn from an
    archive of the ``elite`` best distinct configurations seen (OpenTuner crossed the best with
    itself, a no-op): ``int(crossover_strength * #params)`` random parameters (OpenTuner's count, so
    none in spaces of fewer than 5 parameters) come from that parent (permutations receive a section
    of ``crossover_strength*n`` items with OX1 instead of the whole order).  Then at least
    ``must_mutate`` parameters, each other one with probability ``mutation_rate``, get a mutation
    (Gaussian ``sigma`` in unit space for numbers when ``normal``, local moves for permutations,
    see :func:`mutate_param`).  Never waits.  On att48 (3000 evaluations, median of 6 seeds) it
    reaches 1.08x the optimum, like the best greedy mutations.
    """

    OPTIONS = (Option("mutation_rate", float, 0.1, 0.0, 1.0, 0.02, 0.3, "probability to mutate a parameter"),
               Option("crossover_rate", float, 0.5, 0.0, 1.0, 0.1, 0.9, "probability to cross with an elite"),
               Option("crossover_strength", float, 0.2, 0.0, 1.0, 0.1, 0.5, "share of the parameters crossed"),
               Option("must_mutate", int, 1, 0, 10000, 1, 3, "parameters mutated at least"),
               Option("normal", bool, True, doc="Gaussian steps instead of uniform re-draws for numbers"),
               Option("sigma", float, 0.1, 0.0, 10.0, 0.02, 0.3, "Gaussian step in unit space"),
               Option("elite", int, 10, 1, 100000, 2, 20, "elite configurations kept for crossover"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    mutation_rate: float
    crossover_rate: float
    crossover_strength: float
    must_mutate: int
    normal: bool
    sigma: float
    # the ``elite`` option is ``elite_size``; the attribute ``elite`` is the archive itself (set by bind)

    def __init__(self, name: Optional[str] = None, **options: Any) -> None:
        super().__init__(name)
        self.elite_size = configure(self, options)["elite"]

    def desired_configuration(self) -> Optional[Config]:
        """A mutated (and sometimes crossed) copy of the global best."""
        return self.finish(self.make_child)

    def make_child(self) -> Config:
        """The global best, maybe crossed with an elite configuration, then mutated."""
        m = self.manipulator
        assert m is not None
        if self.best_config is None:
            return self.random_config()
        child = m.copy(self.best_config)
        params = m.parameters
        others = [mem for mem in self.elite if member_value(mem) > self.best_value]
        can_cross = bool(others) and int(self.crossover_strength * len(params)) >= 1
        if can_cross and self.rng.random() < self.crossover_rate:
            self.crossover_into(child, self.rng.choice(others).config)
        self.rng.shuffle(params)
        for i, param in enumerate(params):
            if i < self.must_mutate or self.rng.random() < self.mutation_rate:
                mutate_param(param, child, self.rng, self.rng.random() < float(self.normal), self.sigma)
        return child

    def crossover_into(self, child: Config, donor: Config) -> None:
        """Take ``int(crossover_strength * #params)`` random parameters from ``donor``."""
        assert self.manipulator is not None
        params = self.manipulator.parameters
        self.rng.shuffle(params)
        count = int(self.crossover_strength * len(params))
        base = self.manipulator.copy(child)
        for param in params[:count]:
            cross_param(param, child, base, donor, self.rng, "OX1", self.crossover_strength)

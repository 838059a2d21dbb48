"""OpenTuner's ``BinaryGA``: a generational GA with tournament selection (asynchronous form)."""
from __future__ import annotations

import math
import random
from typing import Any, List, Optional

from ..parameters import ArrayParameter, ConfigurationManipulator
from .base import Config, Feedback
from .evolutionary import EvolutionaryTechnique, Member, tournament
from .variation import cross_param, is_permutation, mutate_param
from .options import Option, configure


class BinaryGA(EvolutionaryTechnique):
    """Generational GA: ``population`` children per generation, tournament selection, no elitism.

    Generation 0 is random.  Each child of the next generation has two parents chosen by
    tournaments of size ``tournament`` among the previous generation plus the global best of any
    technique (``sharing`` copies).  A random half of the parameters (rounded down) take the second
    parent's value; permutations and arrays not taken that way get a segment crossover (OX1 /
    array section of half the items) from it with probability 1/2, so single-parameter spaces are
    crossed too.  Then ``mutate`` random parameters are mutated (OpenTuner re-drew them uniformly,
    which shuffles a whole permutation; here booleans flip, categoricals change, numbers are
    re-drawn, permutations get a local move and arrays change one element -- see
    :func:`~.variation.mutate_param`).  OpenTuner crashed when ``mutate`` exceeded the number of
    parameters; here it is clipped.

    A generation's children are proposed one by one; when all are out, the technique proposes
    nothing (``None``) until every one of their results has arrived, then breeds the next
    generation from them.  Works on every parameter kind.
    """

    OPTIONS = (Option("population", int, 200, 2, 1000000, 20, 200, "members per generation"),
               Option("tournament", int, 5, 1, 100000, 2, 7, "members per tournament"),
               Option("mutate", int, 2, 0, 10000, 1, 4, "mutations per child"),
               Option("sharing", int, 1, 0, 1000, doc="copies of the global best among the parents"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    population: int
    tournament: int
    mutate: int
    sharing: int

    def __init__(self, name: Optional[str] = None, **options: Any) -> None:
        super().__init__(name)
        configure(self, options)

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        """Called once before the first proposal; generation 0 will be random."""
        super().bind(manipulator, rng, path)
        self.parents: List[Member] = []       # the previous generation, evaluated
        self.batch: List[Member] = []         # the generation being proposed / measured
        self.generation = 0

    def desired_configuration(self) -> Optional[Config]:
        """The next child of the current generation; None while the generation is being measured."""
        if len(self.batch) >= self.population:
            if any(mem.value is None for mem in self.batch):
                return None
            self.parents, self.batch = self.batch, []
            self.generation += 1
        cfg = self.finish(self.random_config if not self.parents else self.make_child, tries=10)
        self.batch.append(Member(cfg, self.key(cfg)))
        return cfg

    def select_parent(self) -> Member:
        pool = list(self.parents)
        if self.best_config is not None:
            pool += [Member(self.best_config, "", self.best_value)] * max(0, self.sharing)
        return tournament(self.rng, pool, self.tournament)

    def make_child(self) -> Config:
        """One child: two tournament parents, half-parameter crossover, ``mutate`` mutations."""
        m = self.manipulator
        assert m is not None
        first, second = self.select_parent().config, self.select_parent().config
        child = m.copy(first)
        params = m.parameters
        taken = set(p.name for p in self.rng.sample(params, k=len(params) // 2))
        for param in params:
            if param.name in taken:
                param.set_value(child, param.copy_value(param.get_value(second)))
            elif (is_permutation(param) or isinstance(param, ArrayParameter)) and self.rng.random() < 0.5:
                cross_param(param, child, first, second, self.rng, "OX1", 0.5)
        for param in self.rng.sample(params, k=min(self.mutate, len(params))):
            mutate_param(param, child, self.rng)
        return child

    def on_result(self, feedback: Feedback) -> None:
        """Record the value of any child of the current generation with this key."""
        for mem in self.batch:
            if mem.value is None and mem.key == feedback.key:
                mem.value = feedback.value if not math.isnan(feedback.value) else math.inf


def register(registry: Any) -> None:
    """Register BinaryGA."""
    from .builtin import add_module
    add_module(registry, "binary_ga")

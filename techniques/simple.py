"""Minimal techniques: PureRandom and the greedy-mutation family (OpenTuner's GreedyMutation)."""
from __future__ import annotations

from typing import Any, List, Optional

from ..parameters import Parameter
from .base import Config, Feedback, Technique
from .options import Option, configure


class PureRandom(Technique):
    """Uniformly random feasible configurations."""

    description = "uniform random sampling of feasible configurations"
    #: random sampling ignores the values, so it serves any number of objectives
    multi_objective = True

    def desired_configuration(self) -> Optional[Config]:
        assert self.manipulator is not None
        return self.manipulator.random(self.rng)


class GreedyMutation(Technique):
    """Mutate the best configuration seen so far (by any technique).

    Each parameter is mutated with probability ``mutation_rate`` (at least
    ``must_mutate`` of them).  Numeric parameters get a uniform re-draw, or a
    Gaussian step of ``sigma`` in unit space when ``normal`` is set; permutations get
    a random segment inversion (a 2-opt move), or with ``permutation_move="or-opt"`` a section of 1-3
    elements moved elsewhere (which keeps edge directions: asymmetric tours); everything else is
    re-drawn.  When its
    proposals keep landing on known configurations, it mutates more parameters, and each of them
    several times (a kick out of a local optimum).
    """

    OPTIONS = (Option("mutation_rate", float, 0.1, 0.0, 1.0, 0.02, 0.3, "probability to mutate a parameter"),
               Option("must_mutate", int, 1, 0, 10000, 1, 3, "parameters mutated at least"),
               Option("normal", bool, False, doc="Gaussian steps instead of uniform re-draws for numbers"),
               Option("sigma", float, 0.1, 0.0, 10.0, 0.02, 0.3, "Gaussian step in unit space"),
               Option("max_tries", int, 50, 1, 100000, doc="attempts at a feasible child"),
               Option("permutation_move", str, "invert", choices=("invert", "or-opt"), doc="permutation move"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    mutation_rate: float
    must_mutate: int
    normal: bool
    sigma: float
    max_tries: int
    permutation_move: str

    def __init__(self, name: Optional[str] = None, **options: Any) -> None:
        super().__init__(name)
        configure(self, options)
        self._escalate = 0  # extra parameters to mutate while proposals keep hitting known configs

    def observe(self, feedback: Feedback) -> None:
        super().observe(feedback)
        if self.is_own(feedback):
            self._escalate = min(self._escalate + 1, 64) if feedback.duplicate else 0

    def desired_configuration(self) -> Optional[Config]:
        m = self.manipulator
        assert m is not None
        if self.best_config is None:
            return m.random(self.rng)
        for _ in range(self.max_tries):
            child = m.copy(self.best_config)
            rounds = 1 + self._escalate // 8
            for param in self._choose(m.parameters):
                for _ in range(rounds):
                    self.mutate(param, child)
            if m.is_feasible(child):
                return child
        return m.random(self.rng)

    def _choose(self, params: List[Parameter]) -> List[Parameter]:
        chosen = [p for p in params if self.rng.random() < self.mutation_rate]
        need = self.must_mutate + self._escalate // 4
        if len(chosen) < need:
            chosen = self.rng.sample(params, min(need, len(params)))
        return chosen

    def mutate(self, param: Parameter, child: Config) -> None:
        """Apply one mutation operator suited to ``param``'s type to ``child``."""
        ops = param.operators()
        rng = self.rng
        if "op2_or_opt" in ops and self.permutation_move == "or-opt" and not self._escalate:
            param.apply_operator("op2_or_opt", child, [{param.name: param.copy_value(param.get_value(child))}], rng)
        elif "op2_random_invert" in ops:
            # a random segment inversion (2-opt move); measured on att48 it beats mixes with swaps
            # or segment moves (tools/compare.py), so swaps only come in kicks (see _choose)
            parent = {param.name: param.copy_value(param.get_value(child))}
            if self._escalate and rng.random() < 0.5:
                param.apply_operator("op2_random_swap", child, [parent], rng)
            else:
                # the section between two random positions: short sections are likelier
                # (P(length) ~ n - length), which on att48 reaches 1.07x vs 1.13x for uniform lengths
                param.apply_operator("op2_random_invert", child, [parent], rng,
                                     strength=abs(rng.random() - rng.random()))
        elif self.normal and "op1_normal_mutation" in ops:
            param.apply_operator("op1_normal_mutation", child, [], rng, sigma=self.sigma)
        else:
            param.op1_randomize(child, rng=rng)

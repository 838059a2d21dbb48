"""OpenTuner's AUCBanditMutationTechnique: an AUC bandit over (parameter, mutation operator) arms."""
from __future__ import annotations

import random
from typing import Any, Dict, List, Optional, Set, Tuple

from ..parameters import ConfigurationManipulator, Parameter, PrimitiveParameter
from .bandit import AUCBandit
from .base import Config, Feedback, Technique
from .options import Option, configure

#: mutation operators used as arms, when a parameter has them (see the class docstring)
ARM_OPERATORS = ("op1_randomize", "op1_normal_mutation", "op1_flip", "op1_flip_random",
                 "op1_small_random_change", "op2_random_invert", "op2_random_swap")


def arm_operators(param: Parameter) -> List[str]:
    """The mutation operators of ``param`` that become bandit arms, in ARM_OPERATORS order.

    Primitive parameters get exactly OpenTuner's pair (randomize, normal mutation); a boolean
    only its flip (randomizing it is a flip half of the time)."""
    ops = param.operators()
    if isinstance(param, PrimitiveParameter):
        return [o for o in ("op1_randomize", "op1_normal_mutation") if o in ops]
    if "op1_flip" in ops:
        return ["op1_flip"]
    return [o for o in ARM_OPERATORS if o in ops]


class AUCBanditMutationTechnique(Technique):
    """Mutate the best configuration with one operator chosen by an AUC bandit.

    Arms are ``(parameter, operator)`` pairs: numeric and ordinal parameters get uniform
    re-draw and Gaussian step (OpenTuner's pair); booleans a flip; permutations re-draw, small
    random change (OpenTuner's), plus random segment inversion with a uniform strength (a 2-opt
    move) and random swap; boolean arrays one-element flip and re-draw; numeric arrays Gaussian
    step and re-draw; enums, switches and selectors re-draw.  Each proposal applies arms in
    bandit order (ties broken at random, as OpenTuner does) to the best configuration seen (a
    random one before any result) until one changes it into a feasible configuration not seen
    before (arms giving a known or infeasible configuration are skipped, unrecorded, so the
    bandit's window holds real measurements only).  The arm is credited (``was_new_best``) when
    its result arrives.  After ``max_tries`` arms without a new configuration it proposes a
    random one.
    Bandit C=0.05, window 500 (OpenTuner's defaults).
    """

    description = "AUC bandit over per-parameter mutation operators applied to the best configuration"

    OPTIONS = (Option("C", float, 0.05, 0.0, 1000.0, 0.01, 0.5, "exploration constant"),
               Option("window", int, 500, 1, 10000000, 50, 1000, "sliding window of uses"),
               Option("max_tries", int, 20, 1, 100000, doc="attempts at a new feasible configuration"))
    #: the options: attributes set by :func:`~.options.configure` (test_option_schema checks the types)
    C: float
    window: int
    max_tries: int

    def __init__(self, name: Optional[str] = None, **options: Any) -> None:
        super().__init__(name)
        configure(self, options)

    def bind(self, manipulator: ConfigurationManipulator, rng: random.Random,
             path: Optional[str] = None) -> None:
        super().bind(manipulator, rng, path)
        self.arms: Dict[str, Tuple[Parameter, str]] = {}
        for i, param in enumerate(manipulator.parameters):
            for op in arm_operators(param):
                self.arms[f"{i}:{op}"] = (param, op)
        # a space without parameters has no arms: every proposal is then the (empty) random one
        self.bandit = AUCBandit(list(self.arms), self.C, self.window) if self.arms else None
        self.pending: Dict[str, List[str]] = {}   # key -> arms waiting for its result
        self.seen: Set[str] = set()

    def ordered_arms(self) -> List[str]:
        """Arms by decreasing bandit score, ties in random order."""
        if self.bandit is None:
            return []
        score = self.bandit.score
        keyed = [(-score(a), self.rng.random(), a) for a in self.bandit.arms]
        keyed.sort()
        return [a for _, _, a in keyed]

    def mutate(self, seed: Config, arm: str) -> Config:
        """A copy of ``seed`` with ``arm``'s operator applied."""
        param, op = self.arms[arm]
        assert self.manipulator is not None
        child = self.manipulator.copy(seed)
        if op.startswith("op2_"):
            parent = {param.name: param.copy_value(param.get_value(seed))}
            kw: Dict[str, Any] = {"strength": self.rng.random()} if op == "op2_random_invert" else {}
            param.apply_operator(op, child, [parent], self.rng, **kw)
        else:
            param.apply_operator(op, child, [], self.rng)
        return child

    def desired_configuration(self) -> Optional[Config]:
        m = self.manipulator
        assert m is not None
        seed = self.best_config if self.best_config is not None else m.random(self.rng)
        seed_key = m.hash_valid(seed)
        for arm in self.ordered_arms()[: self.max_tries]:
            child = self.mutate(seed, arm)
            key = m.hash_valid(child)
            if key == seed_key:
                continue
            if key in self.seen or key in self.pending or not m.is_feasible(child):
                continue
            self.pending.setdefault(key, []).append(arm)
            return child
        return m.random(self.rng)

    def observe(self, feedback: Feedback) -> None:
        super().observe(feedback)
        self.seen.add(feedback.key)
        arms = self.pending.get(feedback.key)
        if arms and self.is_own(feedback):
            assert self.bandit is not None  # pending arms were drawn from it
            self.bandit.record(arms.pop(0), feedback.was_new_best)
            if not arms:
                del self.pending[feedback.key]

    def state_dict(self) -> Dict[str, Any]:
        return {"bandit": self.bandit.state_dict() if self.bandit is not None else None}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        saved = state.get("bandit")
        if saved and self.bandit is not None and list(saved.get("arms", [])) == self.bandit.arms:
            self.bandit = AUCBandit.from_state(saved)


def register(registry: Any) -> None:
    """Register AUCBanditMutationTechnique."""
    from .builtin import add_module
    add_module(registry, "mutation_bandit")

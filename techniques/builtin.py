"""Registration of the built-in techniques (factories only; instances are made per run)."""
from __future__ import annotations

from typing import List

from .bandit import AUCBanditMetaTechnique
from .base import Technique
from .registry import TechniqueRegistry
from . import (annealing, binary_ga, bo, bundles, composable_presets, differential_evolution, genetic,
               mutation_bandit, nelder_mead, pattern_search, pso, recommendation, structural, torczon)
from .simple import GreedyMutation, PureRandom

#: the technique used when --technique is not given
DEFAULT_TECHNIQUE = "AUCBanditMetaTechniqueA"


def _greedy(rate: float, normal: bool) -> GreedyMutation:
    return GreedyMutation(mutation_rate=rate, normal=normal)


def _greedy_bandit() -> Technique:
    arms: List[Technique] = [
        GreedyMutation("UniformGreedyMutation", 0.1, normal=False),
        GreedyMutation("NormalGreedyMutation", 0.1, normal=True),
        GreedyMutation("NormalGreedyMutation20", 0.2, normal=True),
        PureRandom("PureRandom"),
    ]
    return AUCBanditMetaTechnique(arms)


def register_builtin(registry: TechniqueRegistry) -> None:
    """Add every built-in technique to ``registry``."""
    registry.register("PureRandom", PureRandom, PureRandom.description)
    for suffix, pct in (("", 10), ("05", 5), ("10", 10), ("20", 20), ("30", 30)):
        rate = pct / 100.0
        registry.register(f"UniformGreedyMutation{suffix}", lambda r=rate: _greedy(r, False),
                          f"mutate the best configuration, each parameter re-drawn with p={rate}")
        registry.register(f"NormalGreedyMutation{suffix}", lambda r=rate: _greedy(r, True),
                          f"mutate the best configuration with Gaussian steps (sigma 0.1), p={rate}")
    registry.register("OrOptGreedyMutation", lambda: GreedyMutation(mutation_rate=0.1, permutation_move="or-opt"),
                      "mutate the best configuration; permutations by moving a section of 1-3 elements "
                      "(or-opt: asymmetric tours, orders)")
    for module in (composable_presets, differential_evolution, pso, genetic, binary_ga, nelder_mead, torczon,
                   pattern_search, annealing, mutation_bandit, bo, structural):
        module.register(registry)
    registry.register("GreedyMutationBandit", _greedy_bandit,
                      "AUC bandit over uniform/normal greedy mutation and random search")
    bundles.register(registry)  # last: bundles refer to the techniques above by name
    recommendation.register(registry, {name: members for name, (members, _) in bundles.BUNDLES.items()})

"""Named composable techniques (OpenTuner's ComposableDiffEvolution family and two more): each is a
technique base from :mod:`.composable_bases` with a fixed operator map, registered under its name."""
from __future__ import annotations

from typing import Any, Dict, Tuple

from .base import Technique
from .composable_bases import GreedyComposableTechnique, RandomThreeParentsComposableTechnique
from .operator_map import OperatorChoice
from .builtin import MODULE_ROWS, add_module

__all__ = ["NAMED", "register"]

_NUMERIC = ("float", "int", "ordinal")   # "int"/"float" entries also cover log_int, pow2, log_float
_CATEGORICAL = ("bool", "enum", "selector", "switch")


_SWARM = {"c": 0.6, "c1": 1.2, "c2": 0.5}


def composable_diff_evolution() -> Technique:
    """OpenTuner's ComposableDiffEvolution: DE base, default operator everywhere (best ~ 3/30)."""
    return RandomThreeParentsComposableTechnique(population_size=30, crossover_rate=0.9, best_probability=0.1)


def composable_diff_evolution_cx() -> Technique:
    """OpenTuner's ComposableDiffEvolutionCX: as above with CX for permutations, crossover for float arrays."""
    op_map = {"permutation": OperatorChoice("op3_cross", (), {"xchoice": "op3_cross_CX"}),
              "float_array": OperatorChoice("op3_cross", (), {"strength": 0.4})}
    return RandomThreeParentsComposableTechnique(operator_map=op_map, population_size=30,
                                                 crossover_rate=0.9, best_probability=0.1)


def composable_greedy_ox1_swarm() -> Technique:
    """Greedy base: OX1 crossover for permutations, PSO steps for numeric, categorical and array kinds."""
    op_map: Dict[str, OperatorChoice] = {"permutation": OperatorChoice("op3_cross_OX1", (), {"strength": 0.3})}
    for kind in _NUMERIC + _CATEGORICAL + ("int_array",):
        op_map[kind] = OperatorChoice("op3_swarm", (), _SWARM)
    for kind in ("bool_array", "float_array"):
        op_map[kind] = OperatorChoice("op3_swarm_parallel", (), _SWARM)
    return GreedyComposableTechnique(operator_map=op_map, population_size=30, crossover_rate=0.5)


def composable_diff_evolution_pmx() -> Technique:
    """DE base with partially-mapped crossover for permutations and A+F(B-C) elsewhere."""
    op_map = {"permutation": OperatorChoice("op3_cross_PMX", (), {"strength": 0.3})}
    return RandomThreeParentsComposableTechnique(operator_map=op_map, population_size=20,
                                                 crossover_rate=0.9, best_probability=0.2)


#: name -> (factory, description), from the catalogue rows of :mod:`.builtin`
NAMED: Dict[str, Tuple[Any, str]] = {name: (globals()[target.split(":")[1]], description)
                                     for name, target, description, _ in MODULE_ROWS["composable_presets"]}


def register(registry: Any) -> None:
    """Register the named composable techniques (factories; a fresh instance per run)."""
    add_module(registry, "composable_presets")

"""Named meta-technique bundles (OpenTuner's, plus set D) and generated bandits.

Bundles are data: a meta-technique class and the *registered names* of their members, resolved
through the registry each time a bundle is created, so every run gets fresh instances.
"""
from __future__ import annotations

import random
from typing import Callable, Dict, List, Sequence, Tuple

from ..parameters import ConfigurationManipulator
from .bandit import AUCBanditMetaTechnique
from .base import Technique
from .meta import RecyclingMetaTechnique, RoundRobinMetaTechnique
from .naming import random_composable, technique_name
from .recommendation import approach_names
from .registry import TechniqueRegistry

#: name -> (members, description); every bundle is an AUC bandit unless listed in _OTHER_META
BUNDLES: Dict[str, Tuple[List[str], str]] = {
    "AUCBanditMetaTechniqueA": (
        ["DifferentialEvolutionAlt", "UniformGreedyMutation", "NormalGreedyMutation30", "RandomNelderMead"],
        "AUC bandit: DE (cr 0.2), uniform and normal (p 0.3) greedy mutation, random Nelder-Mead (default)"),
    "AUCBanditMetaTechniqueB": (["DifferentialEvolutionAlt", "UniformGreedyMutation"],
                                "AUC bandit: DE (cr 0.2) and uniform greedy mutation"),
    "AUCBanditMetaTechniqueC": (["DifferentialEvolutionAlt", "PatternSearch"],
                                "AUC bandit: DE (cr 0.2) and pattern search"),
    "AUCBanditMetaTechniqueD": (["RandomNelderMead", "DifferentialEvolution", "PatternSearch", "pso-OX1"],
                                "AUC bandit (set D): Nelder-Mead, DE, pattern search, PSO"),
    "PSO_GA_Bandit": (["pso-OX3", "pso-OX1", "pso-CX", "pso-PMX", "pso-PX", "ga-OX3", "ga-OX1", "ga-CX",
                       "ga-PX", "ga-PMX", "ga-base"],
                      "AUC bandit over PSO and GA with every permutation crossover"),
    "PSO_GA_DE": (["pso-OX1", "pso-PMX", "pso-PX", "ga-OX1", "ga-PMX", "ga-PX", "DifferentialEvolutionAlt",
                   "GGA"], "AUC bandit over PSO, GA, DE and global GA ('pgd')"),
    "RoundRobinMetaTechniqueA": (
        ["DifferentialEvolutionAlt", "UniformGreedyMutation", "NormalGreedyMutation30", "RandomNelderMead"],
        "round robin over the members of AUCBanditMetaTechniqueA"),
    "RecyclingMetaTechniqueA": (
        ["DifferentialEvolutionAlt", "UniformGreedyMutation", "NormalGreedyMutation30", "RandomNelderMead"],
        "members of AUCBanditMetaTechniqueA in turn; the worst is restarted every 100 requests"),
}

_OTHER_META = {"RoundRobinMetaTechniqueA": RoundRobinMetaTechnique,
               "RecyclingMetaTechniqueA": RecyclingMetaTechnique}


def _bundle_factory(registry: TechniqueRegistry, name: str, members: Sequence[str]) -> Callable[[], Technique]:
    def make() -> Technique:
        if name == "RecyclingMetaTechniqueA":
            return RecyclingMetaTechnique([lambda m=m: registry.create(m) for m in members], name=name)
        techniques = [registry.create(m) for m in members]
        meta = _OTHER_META.get(name, AUCBanditMetaTechnique)
        return meta(techniques, name=name)
    return make


def register(registry: TechniqueRegistry) -> None:
    """Register every bundle; its members must be registered already."""
    for name, (members, description) in BUNDLES.items():
        missing = [m for m in members if m not in registry]
        if missing:
            raise RuntimeError(f"bundle {name} needs unregistered techniques {missing}")
        registry.register(name, _bundle_factory(registry, name, members), description)


#: techniques a generated bandit never picks (bundles and meta-techniques would nest bandits)
_NOT_ARMS = set(BUNDLES) | set(approach_names()) | {"GreedyMutationBandit", "MultiNelderMead", "MultiTorczon",
                                                    "BayesianOptimization"}


def generate_bandit(registry: TechniqueRegistry, manipulator: ConfigurationManipulator,
                    rng: random.Random, arms: int = 5, C: float = 0.05, window: int = 500) -> AUCBanditMetaTechnique:
    """An AUC bandit (``C``, ``window``) over ``arms`` random techniques: each arm is, with equal chance,
    a random registered technique or a random composable technique for the kinds in ``manipulator``."""
    pool = [n for n in registry if n not in _NOT_ARMS]
    chosen: List[Technique] = []
    names = set()
    while len(chosen) < arms:
        if rng.random() < 0.5:
            tech = registry.create(rng.choice(pool))
        else:
            tech = random_composable(rng, manipulator)
            tech.name = technique_name(tech)
        if tech.name not in names:
            names.add(tech.name)
            chosen.append(tech)
    return AUCBanditMetaTechnique(chosen, name="GeneratedBandit", C=C, window=window)

"""Named meta-technique bundles (OpenTuner's, plus set D) and generated bandits.

Bundles are data: a meta-technique class and the *registered names* of their members, resolved
through the registry each time a bundle is created, so every run gets fresh instances.
"""
from __future__ import annotations

import random
from typing import Any, Dict, List, Tuple

from ..parameters import ConfigurationManipulator
from .bandit import AUCBanditMetaTechnique
from .base import Technique
from .naming import random_composable, technique_name
from .recommendation import approach_names
from .catalogue import Uses
from .catalogue import Catalogue
from .simple import GreedyMutation, PureRandom

#: name -> (members, description); every bundle is an AUC bandit unless listed in _OTHER_META
BUNDLES: Dict[str, Tuple[List[str], str]] = {
    "AUCBanditMetaTechniqueA": (
        ["DifferentialEvolutionAlt", "UniformGreedyMutation", "NormalGreedyMutation30", "RandomNelderMead"],
        "AUC bandit: DE (cr 0.2), uniform and normal (p 0.3) greedy mutation, random Nelder-Mead (OpenTuner's "
        "default)"),
    "AUCBanditMetaTechniqueG": (
        ["ga-base", "BanditTPE"],
        "AUC bandit: steady-state GA (uniform crossover) and a TPE model (from the 11th result on)"),
    "AUCBanditMetaTechniqueT": (
        ["DifferentialEvolutionAlt", "UniformGreedyMutation", "NormalGreedyMutation30", "RandomNelderMead",
         "BanditTPE"],
        "AUC bandit: AUCBanditMetaTechniqueA's four members and a TPE model (from the 11th result on)"),
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
    "BayesianOptimizationGA": (
        ["BayesianOptimization", "ga-base"],
        "BayesianOptimization; a steady-state GA (ga-base) takes every other turn while BO's last 10 results "
        "found no new best"),
    "RecyclingMetaTechniqueA": (
        ["DifferentialEvolutionAlt", "UniformGreedyMutation", "NormalGreedyMutation30", "RandomNelderMead"],
        "members of AUCBanditMetaTechniqueA in turn; the worst is restarted every 100 requests"),
}

#: bundles that are not AUC bandits: name -> ``module:class`` of their meta-technique
_OTHER_META = {"RoundRobinMetaTechniqueA": "meta:RoundRobinMetaTechnique",
               "BayesianOptimizationGA": "meta:StallPortfolioMetaTechnique",
               "RecyclingMetaTechniqueA": "meta:RecyclingMetaTechnique"}


def register(registry: Catalogue) -> None:
    """Register every bundle as a catalogue entry of its meta-technique over fresh members (each
    created through the catalogue when the bundle is); its members must be registered already."""
    for name, (members, description) in BUNDLES.items():
        missing = [m for m in members if m not in registry]
        if missing:
            raise RuntimeError(f"bundle {name} needs unregistered techniques {missing}")
        target = _OTHER_META.get(name, "bandit:AUCBanditMetaTechnique")
        arg = "factories" if name == "RecyclingMetaTechniqueA" else "techniques"
        registry.add(name, target, description, {arg: Uses(tuple(members), factories=arg == "factories"),
                                                 "name": name})


def greedy_mutation_bandit() -> Technique:
    """``GreedyMutationBandit``: an AUC bandit over uniform/normal greedy mutation and random search."""
    arms: List[Technique] = [
        GreedyMutation("UniformGreedyMutation", mutation_rate=0.1, normal=False),
        GreedyMutation("NormalGreedyMutation", mutation_rate=0.1, normal=True),
        GreedyMutation("NormalGreedyMutation20", mutation_rate=0.2, normal=True),
        PureRandom("PureRandom"),
    ]
    return AUCBanditMetaTechnique(arms)


#: techniques a generated bandit never picks (bundles and meta-techniques would nest bandits)
_NOT_ARMS = set(BUNDLES) | set(approach_names()) | {"GreedyMutationBandit", "MultiNelderMead", "MultiTorczon",
                                                    "BayesianOptimization", "auto"}


def generate_bandit(registry: Catalogue, manipulator: ConfigurationManipulator,
                    rng: random.Random, arms: int = 5, random_options: bool = False,
                    **bandit_options: Any) -> AUCBanditMetaTechnique:
    """An AUC bandit (``bandit_options``: its ``C`` and ``window``) over ``arms`` random techniques: each arm is, with equal chance,
    a random registered technique or a random composable technique for the kinds in ``manipulator``.
    With ``random_options`` a registered arm also gets random values for the options its entry does
    not preset (:meth:`~.catalogue.Catalogue.random_name`; off by default, so a seed draws the
    same bandit as before option schemas existed)."""
    pool = [n for n in registry if n not in _NOT_ARMS]
    chosen: List[Technique] = []
    names = set()
    while len(chosen) < arms:
        if rng.random() < 0.5:
            name = rng.choice(pool)
            tech = (registry.create_named(registry.random_name(name, rng)) if random_options
                    else registry.create(name))
        else:
            tech = random_composable(rng, manipulator)
            tech.name = technique_name(tech)
        if tech.name not in names:
            names.add(tech.name)
            chosen.append(tech)
    return AUCBanditMetaTechnique(chosen, name="GeneratedBandit", **bandit_options)

"""The built-in catalogue entries: names, ``module:attr`` targets, presets and descriptions as data.

Nothing here imports a technique module: each is imported when one of its names is first created
(see :mod:`.catalogue`).  A module's ``register(catalogue)`` adds its own rows (:func:`add_module`),
so a test can build a catalogue with only some modules.
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

from .catalogue import Catalogue, Use

#: the technique used when --technique is not given
DEFAULT_TECHNIQUE = "auto"

Row = Tuple[str, str, str, Dict[str, Any]]


def _greedy_rows() -> List[Row]:
    rows: List[Row] = [("PureRandom", "simple:PureRandom", "uniform random sampling of feasible configurations", {})]
    for suffix, pct in (("", 10), ("05", 5), ("10", 10), ("20", 20), ("30", 30)):
        rate = pct / 100.0
        rows.append((f"UniformGreedyMutation{suffix}", "simple:GreedyMutation",
                     f"mutate the best configuration, each parameter re-drawn with p={rate}",
                     {"mutation_rate": rate, "normal": False}))
        rows.append((f"NormalGreedyMutation{suffix}", "simple:GreedyMutation",
                     f"mutate the best configuration with Gaussian steps (sigma 0.1), p={rate}",
                     {"mutation_rate": rate, "normal": True}))
    rows.append(("OrOptGreedyMutation", "simple:GreedyMutation",
                 "mutate the best configuration; permutations by moving a section of 1-3 elements "
                 "(or-opt: asymmetric tours, orders)", {"mutation_rate": 0.1, "permutation_move": "or-opt"}))
    return rows


def _simplex_rows(module: str, cls: str, title: str) -> List[Row]:
    what = {"NelderMead": "Nelder-Mead simplex", "Torczon": "Torczon multi-directional search"}[cls]
    first = f"{what} on numeric parameters, random initial simplex"
    on = " on numeric parameters" if cls == "NelderMead" else ""
    return [(f"Random{title}", f"{module}:{cls}", first, {"initial": "random"}),
            (f"Regular{title}", f"{module}:{cls}", f"{what}{on}, regular initial simplex (edge 0.1)",
             {"initial": "regular"}),
            (f"Right{title}", f"{module}:{cls}", f"{what}{on}, right-angled initial simplex (edge 0.1)",
             {"initial": "right"}),
            (f"Multi{title}", f"{module}:multi_{module}",
             f"round robin of Right/Random/Regular {title.replace('NelderMead', 'Nelder-Mead')}, "
             "worst recycled from the best", {})]


_PRESETS = "composable_presets"
MODULE_ROWS: Dict[str, List[Row]] = {
    "simple": _greedy_rows(),
    _PRESETS: [
        ("ComposableDiffEvolution", f"{_PRESETS}:composable_diff_evolution",
         "composable DE base (oldest + 3 random parents), A+F(B-C) on every type", {}),
        ("ComposableDiffEvolutionCX", f"{_PRESETS}:composable_diff_evolution_cx",
         "composable DE base with cycle crossover for permutations", {}),
        ("ComposableGreedyOX1Swarm", f"{_PRESETS}:composable_greedy_ox1_swarm",
         "composable greedy base: OX1 for permutations, PSO steps elsewhere", {}),
        ("ComposableDiffEvolutionPMX", f"{_PRESETS}:composable_diff_evolution_pmx",
         "composable DE base with PMX crossover for permutations", {})],
    "differential_evolution": [
        ("DifferentialEvolution", "differential_evolution:DifferentialEvolution",
         "differential evolution (population 30, cr 0.9, global best shared)", {}),
        ("DifferentialEvolutionAlt", "differential_evolution:DifferentialEvolution",
         "differential evolution with crossover rate 0.2 (population 30)", {"cr": 0.2}),
        ("DifferentialEvolution_20_100", "differential_evolution:DifferentialEvolution",
         "differential evolution with population 100 and crossover rate 0.2", {"population_size": 100, "cr": 0.2})],
    "pso": [(f"pso-{xc}", "pso:PSO", f"particle swarm (30 particles; permutations cross toward the bests with {xc})",
             {"crossover": xc}) for xc in ("OX1", "OX3", "PMX", "PX", "CX")],
    "genetic": [(f"ga-{xc}", "genetic:GeneticAlgorithm",
                 f"steady-state GA (pop 6, crossover 0.8 with {xc} on permutations, mutation 0.1)", {"crossover": xc})
                for xc in ("OX1", "OX3", "PX", "CX", "PMX")] + [
        ("ga-base", "genetic:GeneticAlgorithm",
         "steady-state GA with parameter-wise uniform crossover (pop 6, rates 0.8/0.1)", {"crossover": None}),
        ("GGA", "global_ga:GlobalGA", "global GA: Gaussian mutation of the best, crossover 0.5 with an elite parent", {})],
    "nsga2": [("NSGA2", "nsga2:NSGA2",
               "NSGA-II: non-dominated sorting and crowding (population 16) for one or several objectives, "
               "every parameter kind", {})],
    "binary_ga": [("BinaryGA", "binary_ga:BinaryGA",
                   "generational GA (population 200, tournament 5, 2 mutations per child)", {})],
    "nelder_mead": _simplex_rows("nelder_mead", "NelderMead", "NelderMead"),
    "torczon": _simplex_rows("torczon", "Torczon", "Torczon"),
    "pattern_search": [("PatternSearch", "pattern_search:PatternSearch",
                        "compass pattern search (step 0.4 in unit space, halved when no point improves)", {})],
    "annealing": [("PseudoAnnealingSearch", "annealing:PseudoAnnealingSearch",
                   "pseudo simulated annealing: rank neighbours, accept worse ones with exp(-1/T)", {})],
    "mutation_bandit": [("AUCBanditMutationTechnique", "mutation_bandit:AUCBanditMutationTechnique",
                         "AUC bandit choosing which parameter mutation to apply to the best configuration", {})],
    "bo": [("BayesianOptimization", "bo.technique:BayesianOptimization",
            "Bayesian optimisation: Matérn GP, EI x RF feasibility, chain of trees (BaCO)", {}),
           ("MultiObjectiveBO", "bo.multiobjective:MultiObjectiveBO",
            "multi-objective Bayesian optimisation: a GP per objective, exact expected hypervolume improvement "
            "x RF feasibility", {})],
    "tpe": [("TPE", "tpe:TPE", "tree-structured Parzen estimator (multivariate kernels; learns from every result)",
             {}),
            ("BanditTPE", "tpe:TPE", "TPE as a bandit arm: waits for its siblings' first 10 results", {"defer": True})],
    "structural": [("StructuralSurrogate", "structural.technique:StructuralSurrogate",
                    "learns an additive model over structural features (tour edges, orders, one-hot, unit values) "
                    "and searches it: Thompson sampling + 2-opt/or-opt on the model; AUCBanditMetaTechniqueA takes "
                    "the other suggestions", {"fallback": Use("AUCBanditMetaTechniqueA")}),
                   ("LowRankStructuralSurrogate", "structural.lowrank:LowRankStructuralSurrogate",
                    "StructuralSurrogate whose prior over a permutation's pairwise weights is a low-rank model "
                    "fitted to the results (tours and orders from fewer evaluations than pairs)",
                    {"fallback": Use("AUCBanditMetaTechniqueA")}),
                   ("MetricStructuralSurrogate", "structural.metric:MetricStructuralSurrogate",
                    "StructuralSurrogate whose prior over a tour's pairwise weights is a metric embedding of the "
                    "items, identified from random tours first", {"fallback": Use("AUCBanditMetaTechniqueA")})],
    "auto": [("auto", "auto:AutoTechnique",
              "the default: BayesianOptimization, StructuralSurrogate or AUCBanditMetaTechniqueA, chosen from the "
              "space, the budget, measured costs and the store (each decision explained)", {})],
    "greedy_bandit": [("GreedyMutationBandit", "bundles:greedy_mutation_bandit",
                       "AUC bandit over uniform/normal greedy mutation and random search", {})],
}


#: duplicate aliases (the same technique as UniformGreedyMutation / NormalGreedyMutation): still
#: resolved, since stored runs name them, but neither listed nor drawn into generated bandits; and
#: BanditTPE, a member of AUCBanditMetaTechniqueG and T that waits for its siblings (a bandit of only
#: deferring arms would never start)
UNLISTED = frozenset({"UniformGreedyMutation10", "NormalGreedyMutation10", "BanditTPE"})


def add_module(catalogue: Catalogue, module: str) -> None:
    """Add the rows of ``module`` (a key of :data:`MODULE_ROWS`) to ``catalogue``."""
    for name, target, description, kwargs in MODULE_ROWS[module]:
        catalogue.add(name, target, description, kwargs, listed=name not in UNLISTED)


def register_builtin(catalogue: Catalogue) -> None:
    """Add every built-in technique to ``catalogue`` (bundles last: they name the techniques above)."""
    from . import bundles, recommendation
    for module in MODULE_ROWS:
        add_module(catalogue, module)
    bundles.register(catalogue)
    recommendation.register(catalogue, {name: members for name, (members, _) in bundles.BUNDLES.items()})

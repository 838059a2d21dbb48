"""The rule of ``auto`` (:mod:`.auto`): what it reads from a space (:class:`SpaceFacts`) and which
member starts, which takes over and why (:func:`plan`, :func:`multi_objective_plan`), as data and
short code; the table is in :mod:`.auto`'s docstring."""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Optional

from ..parameters import (ArrayParameter, BooleanArray, ConfigurationManipulator, FeasibleSpace, FloatArray,
                          FloatParameter, NumericParameter, OrdinalParameter, PermutationParameter)

BO, STRUCTURAL, BANDIT = "BayesianOptimization", "StructuralSurrogate", "AUCBanditMetaTechniqueA"
#: the member of spaces too wide for the GP: a TPE model (one density per parameter) and a GA
WIDE = "AUCBanditMetaTechniqueG"
#: the multi-objective members, in the order :func:`multi_objective_plan` considers them (the first that
#: fits the run starts; the last serves as its fallback, as BANDIT does for one objective)
MOBO, NSGA2 = "MultiObjectiveBO", "NSGA2"
MULTI_OBJECTIVE_MEMBERS = (MOBO, NSGA2)
#: the member of tours of at least :data:`~.structural.identification.MIN_ITEMS` items whose test limit covers
#: its random tours (:func:`_tour_plan`)
METRIC = "MetricStructuralSurrogate"
MEMBERS = (BO, STRUCTURAL, BANDIT, WIDE, METRIC)
#: the members a store's ranking may make the hand-over member
STORE_CHOICES = (BO, STRUCTURAL, BANDIT)
#: short names in decision lines
TITLES = {BO: "Bayesian optimization", STRUCTURAL: "StructuralSurrogate", BANDIT: "AUCBanditMetaTechniqueA",
          WIDE: "AUCBanditMetaTechniqueG", METRIC: "MetricStructuralSurrogate",
          MOBO: "multi-objective Bayesian optimization", NSGA2: "NSGA-II"}
#: a permutation with more items than this is a tour or an order (smaller ones are categorical)
TOUR_ITEMS = 5
#: above this many parameters the GP's per-suggestion cost and its data needs rule BO out
BO_MAX_DIMENSION = 30
#: the same for a run with several objectives and at most ``short_budget`` tests: each evaluation there
#: stands for a point of a front that a designer pays for (on the 40-parameter HPVM2FPGA model the front
#: of MultiObjectiveBO's 100 evaluations covered more of random search's 1,000 than NSGA-II's did, at
#: 1-2 processor seconds per evaluation, growing about linearly with the parameters)
MOBO_MAX_DIMENSION = 60
#: feasible configurations counted exactly only up to this many partial configurations
COUNT_NODES = 200_000


@dataclass(frozen=True)
class SpaceFacts:
    """What the rule reads from a space: parameter kinds, dimension, constraints, feasible size."""

    kinds: Dict[str, int]
    tour_items: int
    dimension: int
    constraints: int
    feasible: Optional[float]

    def text(self) -> str:
        """``7 ordinal parameters, 2 known constraints, 1,200 feasible configurations``."""
        parts = [f"{n} {kind} parameter{'s' * (n != 1)}" for kind, n in sorted(self.kinds.items())]
        if self.tour_items:
            parts[0:0] = [f"a permutation of {self.tour_items} items"]
        if self.constraints:
            parts.append(f"{self.constraints} known constraint{'s' * (self.constraints != 1)}")
        if self.feasible is not None and math.isfinite(self.feasible):
            parts.append(f"{self.feasible:,.0f} feasible configurations")
        return ", ".join(parts)


def space_facts(manipulator: ConfigurationManipulator) -> SpaceFacts:
    """Classify every parameter and count the feasible configurations where that is cheap."""
    kinds: Counter = Counter()
    tour = 0
    for p in manipulator.parameters:
        if isinstance(p, PermutationParameter) and p.size > TOUR_ITEMS:
            tour = max(tour, p.size)
            continue
        count = p.count if isinstance(p, ArrayParameter) else 1
        if isinstance(p, (FloatParameter, FloatArray)):
            kinds["float"] += count
        elif isinstance(p, (NumericParameter, OrdinalParameter)) and not isinstance(p, BooleanArray):
            kinds["ordinal"] += count
        elif not isinstance(p, PermutationParameter):
            kinds["categorical"] += count
        else:
            kinds["categorical"] += 1
    return SpaceFacts(dict(kinds), tour, sum(kinds.values()) + (tour > 0), len(manipulator.constraints),
                      _feasible_count(manipulator))


def _feasible_count(manipulator: ConfigurationManipulator) -> Optional[float]:
    """Feasible configurations of a finite space: counted by backtracking up to COUNT_NODES partial
    configurations, else the chain of trees' exact size (a table constraint's rows, groups of at most
    COUNT_NODES leaves); None when neither is exact."""
    if not manipulator.is_finite():
        return None
    counted = FeasibleSpace(manipulator).count(COUNT_NODES)
    if counted is not None:
        return float(counted)
    space = FeasibleSpace(manipulator, max_leaves=COUNT_NODES)
    size = space.size()
    return size if space.exact_size and math.isfinite(size) else None


@dataclass(frozen=True)
class Plan:
    """The rule's answer: the first member, the hand-over member (None: none) and why."""

    first: str
    then: Optional[str]
    short: bool
    reason: str


def budget_text(limit: Optional[int], kind: str) -> str:
    """``60 evaluations``, ``a deadline, no test limit``: the budget as the decision lines say it."""
    if kind == "time":
        return "a deadline, no test limit"
    if limit is None:
        return "no test limit"
    return f"{limit} evaluations" + (" (the default cap)" if kind == "default" else "")


def plan(facts: SpaceFacts, limit: Optional[int], kind: str, short_budget: int,
         store_pick: Optional[str] = None) -> Plan:
    """The rule of the module docstring, as code: which member starts, which takes over, and why."""
    why = f"{facts.text()}, {budget_text(limit, kind)}"
    later = store_pick or BANDIT
    if facts.tour_items:
        return _tour_plan(facts.tour_items, limit, kind, why)
    short = kind == "tests" and limit is not None and limit <= short_budget
    if facts.dimension > BO_MAX_DIMENSION:
        return Plan(WIDE, None if short else BANDIT, short, f"{why} (more than {BO_MAX_DIMENSION} parameters)")
    return Plan(BO, None if short else later, short, why)


def _tour_plan(items: int, limit: Optional[int], kind: str, why: str) -> Plan:
    """A tour's member: the metric embedding for a permutation of at least
    :data:`~.structural.identification.MIN_ITEMS` items whose test limit covers its random tours (the last of
    :data:`~.structural.identification.CHECKPOINTS`, 10 per item), else StructuralSurrogate.  However many
    results per pair the limit allows: the embedding centres the prior of the same full-rank model,
    so once the results determine every pair it is that model plus a prior, for the price of its random
    tours and its fits (best/optimum at 3,000 evaluations on every shipped TSPLIB tour of 21-53 items,
    2.2-14 results per pair, seeds 0-6 at 42-53 items, 0-9 on eil51, 0-2 at 21-29: its median is at most
    StructuralSurrogate's on all 15, 1.000-1.005 against 1.000-1.008 at 42-52 items, 1.037 against 1.054
    on ft53; at 10,000 evaluations on 96-100 cities, 2.0-2.2 per pair, 0.998 and 1.002 in median over seeds 1-7
    where StructuralSurrogate ended at 1.033 and 1.020 over seeds 1-5; docs/benchmarks/structural.md).
    The structural package is imported here, not with the module: it loads SciPy, which a run over
    another space never uses (and whose objects a full garbage collection would then scan)."""
    from .structural.identification import CHECKPOINTS, MIN_ITEMS
    per_item = CHECKPOINTS[-1]
    if kind == "tests" and limit is not None and items >= MIN_ITEMS and per_item * items <= limit:
        return Plan(METRIC, None, True, f"{why} (at least {per_item:g} per item for the embedding's random tours)")
    return Plan(STRUCTURAL, None, False, why)


def multi_objective_plan(facts: SpaceFacts, limit: Optional[int], kind: str, objectives: int,
                         short_budget: int) -> Plan:
    """The member of a run with several objectives (``SearchContext.objectives > 1``), the whole run:
    MultiObjectiveBO (a GP per objective, expected hypervolume improvement) where the space has at most
    :data:`MOBO_MAX_DIMENSION` parameters and the test limit is at most ``short_budget``; NSGA-II for
    tours, wider spaces and longer or open-ended runs, whose many cheap evaluations a GP per
    objective could not keep up with."""
    why = f"{facts.text()}, {budget_text(limit, kind)}, {objectives} objectives"
    if facts.tour_items:
        return Plan(NSGA2, None, True, why)
    if facts.dimension > MOBO_MAX_DIMENSION:
        return Plan(NSGA2, None, True, f"{why} (more than {MOBO_MAX_DIMENSION} parameters)")
    if kind == "tests" and limit is not None and limit <= short_budget:
        return Plan(MOBO, None, True, why)
    return Plan(NSGA2, None, True, f"{why} (more than {short_budget} evaluations)" if limit else why)

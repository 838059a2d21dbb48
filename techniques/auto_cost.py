"""The cost policy of ``auto`` (:mod:`.auto`): the figures it decides from (:class:`CostMeter`), its prior
estimates and check points, the exemption a model earns (:func:`model_wins`) and the durations of its
decision lines (:func:`seconds`).

**Cost policy.**  A member's CPU seconds per suggestion must stay at most ``max(cost_share x median
measurement seconds / parallelism, cpu_floor)``; a member above it hands over to
``AUCBanditMetaTechniqueA`` (the cheapest, never handed over), unless its model has shown that it
wins per evaluation (StructuralSurrogate's ``model_record``: its model's record of new bests likelier
better than its fallback's).  Exempt too: the member the rule picked for a budget of at most
``short_budget`` tests, where a model was measured to win per evaluation and the whole run's search
CPU is bounded by the budget.  The check runs at fixed points (after
:data:`COST_FIRST` results with a known cost, then every :data:`COST_EVERY`), with a member's prior
estimate (:data:`PRIOR_CPU`) until it has made :data:`MEASURED_AFTER` suggestions, so a decision
from counts, the budget and clearly cheap or expensive measurements is the same in every process;
a switch that depends on measured CPU can differ between processes when the figures are close to
the threshold (tests inject the costs).  Measurements of unknown cost never trigger it.

:class:`~.auto.AutoTechnique` applies the policy: it clocks its members' proposals into a
:class:`CostMeter`, passes it every result's measurement cost, and checks the active member whenever
:meth:`CostMeter.measured` says a check is due.
"""
from __future__ import annotations

import math
import statistics
from collections import deque
from typing import Any, Deque, Dict, Iterable, Optional

from .auto_rule import BANDIT, BO, METRIC, MOBO, NSGA2, STRUCTURAL, WIDE
from .base import Technique

#: CPU seconds per suggestion assumed for a member until it has made MEASURED_AFTER suggestions
#: (README "The default technique": BO 0.05-0.14 s, StructuralSurrogate about 3 ms on a 48-city
#: tour, A about 0.3 ms, on the 2-core development machine)
PRIOR_CPU = {BO: 0.05, STRUCTURAL: 0.003, METRIC: 0.01, BANDIT: 0.0003, WIDE: 0.002, MOBO: 0.1, NSGA2: 0.001}
MEASURED_AFTER = 25
#: results with a known cost before the first cost check, and between later checks
COST_FIRST, COST_EVERY = 5, 25
#: measurement costs kept for the median (the most recent results with a known cost)
COSTS_KEPT = 200


class CostMeter:
    """What the cost policy decides from: each member's CPU seconds of its last :data:`MEASURED_AFTER`
    proposal calls and its number of suggestions, and the measurement seconds of the run's results."""

    def __init__(self) -> None:
        self.cpu: Dict[str, Deque[float]] = {}
        self.made: Dict[str, int] = {}
        self.costs: Deque[float] = deque(maxlen=COSTS_KEPT)
        self.known_costs = 0

    def add_member(self, name: str) -> None:
        """Called when member ``name`` is bound: it starts with no suggestions and no CPU samples."""
        self.cpu[name] = deque(maxlen=MEASURED_AFTER)
        self.made[name] = 0

    def suggested(self, name: str, cpu: Optional[float] = None) -> None:
        """Called for each suggestion of member ``name``, with the CPU seconds its proposal took when clocked."""
        if cpu is not None:
            self.cpu[name].append(cpu)
        self.made[name] += 1

    def measured(self, cost: float) -> bool:
        """Called for each new result with its measurement seconds (NaN: unknown, not counted); True when
        a cost check is due (after :data:`COST_FIRST` known costs, then every :data:`COST_EVERY`)."""
        if math.isnan(cost):
            return False
        self.costs.append(cost)
        self.known_costs += 1
        return self.known_costs == COST_FIRST or (self.known_costs > COST_FIRST
                                                  and (self.known_costs - COST_FIRST) % COST_EVERY == 0)

    def cpu_per_suggestion(self, name: str) -> float:
        """The member's CPU seconds per suggestion: its prior until it made MEASURED_AFTER, then the
        mean over its last MEASURED_AFTER proposal calls."""
        samples = self.cpu.get(name)
        if self.made.get(name, 0) < MEASURED_AFTER or not samples:
            return PRIOR_CPU.get(name, 0.0)
        return sum(samples) / len(samples)

    def median_cost(self) -> float:
        """The median measurement seconds of the costs kept (called only when there is one)."""
        return statistics.median(self.costs)

    def allowance(self, cost_share: float, cpu_floor: float, parallelism: int) -> float:
        """Search CPU seconds per suggestion the cost policy allows now."""
        return max(cost_share * self.median_cost() / max(1, parallelism), cpu_floor)

    def to_state(self) -> Dict[str, Any]:
        """The figures as :meth:`~.auto.AutoTechnique.state_dict` records them."""
        return {"costs": list(self.costs), "known_costs": self.known_costs, "made": dict(self.made),
                "cpu": {n: list(v) for n, v in self.cpu.items()}}

    def load_state(self, state: Dict[str, Any], members: Iterable[str]) -> None:
        """Restore :meth:`to_state`'s figures for the bound ``members`` (called on resume)."""
        self.costs.extend(state.get("costs", []))
        self.known_costs = int(state.get("known_costs", 0))
        for name in members:
            self.made[name] = int(state.get("made", {}).get(name, 0))
            self.cpu[name].extend(state.get("cpu", {}).get(name, []))


def model_wins(member: Technique) -> bool:
    """Whether the member's model has shown that it wins per evaluation: its record of new bests
    is likelier better than its cheap fallback's (``model_record`` > 0.5; StructuralSurrogate)."""
    record = getattr(member, "model_record", None)
    return record is not None and record() > 0.5


def seconds(value: float) -> str:
    """``0.052 s``, ``3.1 ms``, ``12 µs``: a duration at a readable scale."""
    if value >= 0.1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.0f} µs"

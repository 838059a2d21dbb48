"""The Pareto front of a multi-objective run, kept by the search driver as results arrive.

A result *enters* the front when no member is at least as good in every objective (so a duplicate
vector does not enter); members it dominates leave.  Entering the front is exactly a positive
hypervolume improvement for any reference point beyond the front's nadir, so it is the "new best" of a
multi-objective run: ``Feedback.was_new_best``, the bandits' credit, the database's ``was_new_best``
flag and the store's affinity all use it.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .techniques.pareto import dominates, non_dominated


@dataclass
class FrontMember:
    """One configuration on the front: oriented values (lower is better) and where it was recorded."""

    values: Tuple[float, ...]
    key: str
    config: Dict[str, Any]
    result_id: int


class ParetoFront:
    """The non-dominated OK results of a run (called by the search driver for every OK result)."""

    def __init__(self) -> None:
        self.members: List[FrontMember] = []

    def offer(self, values: Sequence[float], key: str, config: Dict[str, Any], result_id: int) -> bool:
        """Add a result when it enters the front; returns True when it did."""
        vec = tuple(float(v) for v in values)
        if not vec or not all(math.isfinite(v) for v in vec):
            return False
        if any(m.key == key for m in self.members):
            return False
        if any(all(a <= b for a, b in zip(m.values, vec)) for m in self.members):
            return False
        self.members = [m for m in self.members if not dominates(vec, m.values)]
        self.members.append(FrontMember(vec, key, config, result_id))
        return True

    def sorted_members(self) -> List[FrontMember]:
        """Members by their first objective, then the next ones (for display)."""
        return sorted(self.members, key=lambda m: m.values)


def front_of(rows: Sequence[Tuple[Sequence[float], Any]]) -> List[int]:
    """Indices of the rows ``(oriented vector, anything)`` on the Pareto front of their OK vectors."""
    finite = [i for i, (v, _) in enumerate(rows) if v and all(math.isfinite(x) for x in v)]
    keep = non_dominated([list(rows[i][0]) for i in finite])
    return [finite[i] for i in keep]


def front_summary(front: ParetoFront, objective: Any) -> List[Dict[str, Any]]:
    """``--summary-json``'s ``pareto_front``: one ``{"configuration", "objectives"}`` per member, the
    objectives as the user's metrics (``{"time": 0.05, "energy": 510.0}``)."""
    return [{"configuration": m.config, "objectives": objective.displays(m.values)}
            for m in front.sorted_members()]


def front_fields(front: ParetoFront, objective: Any) -> Dict[str, Any]:
    """The Summary fields of a run (``pareto_front``, ``objective_units``): empty for one objective."""
    names = getattr(objective, "names", None)
    if names is None:
        return {}
    return {"pareto_front": front_summary(front, objective), "objective_units": dict(zip(names, objective.units))}


def front_lines(front: Optional[List[Dict[str, Any]]], units: Optional[Dict[str, Optional[str]]],
                limit: int = 20) -> List[str]:
    """The summary's lines about the front: its size and each point's values with their units."""
    if front is None:
        return []
    lines = [f"  Pareto front: {len(front)} configuration{'s' if len(front) != 1 else ''}"]
    for point in front[:limit]:
        values = ", ".join(f"{name} {_value(v, (units or {}).get(name))}" for name, v in point["objectives"].items())
        cfg = _short(point["configuration"])
        lines.append(f"    {values}  {cfg}")
    if len(front) > limit:
        lines.append(f"    ... and {len(front) - limit} more (--summary-json lists them all)")
    return lines


def _value(value: float, unit: Optional[str]) -> str:
    return f"{value:.6g}" if unit is None else f"{value:.6g} {unit}"


def _short(config: Dict[str, Any]) -> str:
    text = json.dumps(config, sort_keys=True)
    return text if len(text) <= 160 else text[:160] + " ..."

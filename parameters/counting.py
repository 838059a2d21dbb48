"""Exact counting of the feasible configurations of a search space (:meth:`.FeasibleSpace.count`):
backtracking over each constraint group in parameter order, checking every constraint as soon as
the parameters it reads are set, within a budget of visited partial configurations.  It needs no
chain of trees and works on any :class:`~.constrained_space.ConstrainedSpace`.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from .constrained_space import ConstrainedSpace
from .constraints import Constraint


def count_feasible(m: ConstrainedSpace, names: Sequence[str], max_nodes: int) -> Optional[int]:
    """Exact count of the feasible configurations of ``m``, whose parameters ``names`` give the order
    (called by :meth:`.FeasibleSpace.count`); None when a parameter cannot be enumerated or more than
    ``max_nodes`` partial configurations would be visited."""
    order = {n: i for i, n in enumerate(names)}
    total, visited = 1, [0]
    for group in m.groups():
        names = sorted(group, key=order.__getitem__)
        domains = [d for d in (m.parameter(n).domain() for n in names) if d is not None]
        if len(domains) < len(names):
            return None
        checks = [[c for c in m.group_constraints(group)
                   if c.reads and max(names.index(r) for r in c.reads) == depth] for depth in range(len(names))]
        try:
            total *= _count_group(names, domains, checks, {}, 0, visited, max_nodes)
        except _Budget:
            return None
    return total


class _Budget(Exception):
    pass


def _count_group(names: List[str], domains: List[List[Any]], checks: List[List[Constraint]],
                 partial: Dict[str, Any], depth: int, visited: List[int], max_nodes: int) -> int:
    if depth == len(names):
        return 1
    count = 0
    for value in domains[depth]:
        visited[0] += 1
        if visited[0] > max_nodes:
            raise _Budget()
        partial[names[depth]] = value
        if all(c.is_satisfied(partial) for c in checks[depth]):
            count += _count_group(names, domains, checks, partial, depth + 1, visited, max_nodes)
    partial.pop(names[depth], None)
    return count

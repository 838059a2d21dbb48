"""The structure known constraints give a search space: independent groups and a table's feasible rows.

:func:`connected_groups` links the parameters that some constraint reads together (union-find); each
resulting group can be sampled and modelled on its own, so independent constraints do not multiply
rejection rates.  :func:`feasible_table_rows` lists the rows of a :class:`~.table.TableConstraint`
that covers a whole group and that satisfy the group's other constraints.
:class:`~.manipulator.ConfigurationManipulator` calls both and caches their answers.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Set

from .base import Config, Parameter
from .constraints import Constraint
from .table import TableConstraint


def connected_groups(names: Sequence[str], constraints: Sequence[Constraint]) -> List[Set[str]]:
    """Parameter-name sets connected through ``constraints``; a parameter no constraint links is its
    own group.  Ordered by each group's first member in ``names``."""
    parent = {n: n for n in names}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for c in constraints:
        for other in c.reads[1:]:
            parent[find(other)] = find(c.reads[0])
    by_root: Dict[str, Set[str]] = {}
    for n in names:
        by_root.setdefault(find(n), set()).add(n)
    return list(by_root.values())  # dict order follows the first member's insertion


def feasible_table_rows(names: FrozenSet[str], checks: Sequence[Constraint],
                        by_name: Mapping[str, Parameter]) -> Optional[List[Config]]:
    """The partial configurations of the group ``names`` given by a :class:`TableConstraint` among
    ``checks`` (the group's constraints) that reads exactly that group: its rows with a legal value
    for every parameter that satisfy the other checks (table order); None when no table covers it."""
    table = next((c for c in checks if isinstance(c, TableConstraint) and set(c.reads) == names), None)
    if table is None:
        return None
    others = [c for c in checks if c is not table]
    rows = []
    for row in table.rows:
        part = table.row_config(row)
        if all(by_name[n].is_valid(v) for n, v in part.items()) and \
                all(c.is_satisfied(part) for c in others):
            rows.append(part)
    return rows

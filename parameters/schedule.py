"""Schedule parameters: permutations whose items must respect precedence rules (``deps``).

:class:`ScheduleParameter` inherits every operator of :class:`~.permutation.PermutationParameter`;
each operator result passes through :meth:`ScheduleParameter._repair`, a stable topological sort, so
it always respects ``deps``.  Also here: validation of ``deps`` and the exact (or bounded) count of
legal orders used for the search-space size.
"""
from __future__ import annotations

import heapq
import math
import random
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .base import Parameter, ParameterError
from .permutation import PermutationParameter
from .permutation_moves import Item

__all__ = ["ScheduleParameter"]

#: most partial orders (ideals) explored per component when counting a schedule's search space
_COUNT_STATE_CAP = 50_000


def _dep_pairs(name: str, deps: Any) -> List[Tuple[Any, Any]]:
    """Accept ``{item: [before...]}`` or the JSON form ``[[item, [before...]], ...]``; return pairs."""
    if deps is None:
        return []
    if isinstance(deps, Mapping):
        pairs = list(deps.items())
    elif isinstance(deps, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in deps):
        pairs = [tuple(p) for p in deps]
    else:
        raise ParameterError(f"parameter {name!r}: deps must map item -> list of items that come before it, "
                             f"got {deps!r}")
    for item, before in pairs:
        if isinstance(before, (str, bytes)) or not isinstance(before, (list, tuple)):
            raise ParameterError(f"parameter {name!r}: deps[{item!r}] must be a list of items, "
                                 f"got {before!r}")
    return pairs


class ScheduleParameter(PermutationParameter):
    """A permutation of ``items`` in which each item comes after all items listed for it in ``deps``.

    ``deps`` maps an item to the list of items that must come before it.  Every operator's result
    is passed through :meth:`_repair` (a stable topological sort), so it always respects ``deps``.
    """

    kind = "schedule"

    def __init__(self, name: str, items: Sequence[Any], deps: Any = None) -> None:
        super().__init__(name, items)
        n = len(self.items)
        preds: List[List[int]] = [[] for _ in range(n)]
        for item, before in _dep_pairs(name, deps):
            v = self._lookup(item, "deps key")
            for b in before:
                u = self._lookup(b, f"deps[{item!r}] entry")
                if u == v:
                    raise ParameterError(f"parameter {name!r}: item {item!r} depends on itself; "
                                         f"remove it from deps[{item!r}]")
                preds[v].append(u)
        self._preds: List[List[int]] = [sorted(set(p)) for p in preds]
        self._succs: List[List[int]] = [[] for _ in range(n)]
        for v, ps in enumerate(self._preds):
            for u in ps:
                self._succs[u].append(v)
        self._check_acyclic()
        self._count: Optional[Tuple[int, bool]] = None

    def _lookup(self, item: Any, where: str) -> int:
        try:
            idx = self._index.get(item)
        except TypeError:
            idx = None
        if idx is None:
            raise ParameterError(f"parameter {self.name!r}: {where} {item!r} is not one of the items; "
                                 f"deps may only name items of {self.items!r}")
        return idx

    @property
    def deps(self) -> Dict[Item, List[Item]]:
        """``{item: [items that must come before it]}`` for items with dependencies, in item order."""
        return {self.items[v]: [self.items[u] for u in ps] for v, ps in enumerate(self._preds) if ps}

    def _check_acyclic(self) -> None:
        """Raise ParameterError naming a cycle of ``deps`` (iterative DFS, deterministic)."""
        n = len(self.items)
        color = [0] * n  # 0 new, 1 on the current path, 2 done
        for root in range(n):
            if color[root]:
                continue
            path, nexts = [root], [0]
            color[root] = 1
            while path:
                u = path[-1]
                if nexts[-1] < len(self._succs[u]):
                    w = self._succs[u][nexts[-1]]
                    nexts[-1] += 1
                    if color[w] == 1:
                        cycle = path[path.index(w):] + [w]
                        shown = " -> ".join(repr(self.items[i]) for i in cycle)
                        raise ParameterError(f"parameter {self.name!r}: dependency cycle {shown} ('x -> y' "
                                             f"means x must come before y); remove one of these deps")
                    if color[w] == 0:
                        color[w] = 1
                        path.append(w)
                        nexts.append(0)
                else:
                    color[u] = 2
                    path.pop()
                    nexts.pop()

    # ---- value methods ------------------------------------------------------
    def _first_violation(self, value: Sequence[Item]) -> Optional[Tuple[Item, Item]]:
        """``(before, after)`` for the first broken dependency of a permutation, or None."""
        pos = [0] * len(self.items)
        for i, v in enumerate(value):
            pos[self._index[v]] = i
        for v, ps in enumerate(self._preds):
            for u in ps:
                if pos[u] > pos[v]:
                    return self.items[u], self.items[v]
        return None

    def is_valid(self, value: Any) -> bool:
        """True when ``value`` is a permutation of the items that respects every dependency."""
        return super().is_valid(value) and self._first_violation(value) is None

    def normalize_value(self, value: Any) -> List[Item]:
        """Like the permutation's, then reject (never reorder) a value that breaks a dependency."""
        value = super().normalize_value(value)
        bad = self._first_violation(value)
        if bad:
            raise ParameterError(f"parameter {self.name!r}: {bad[1]!r} comes before {bad[0]!r} but must "
                                 f"come after it; reorder the value")
        return value

    #: drawn one by one with ``random_value`` (a shuffled permutation may break the dependences)
    sample_values = Parameter.sample_values

    def random_value(self, rng: random.Random) -> List[Item]:
        """A random topological order: repeatedly emit a uniformly chosen ready item."""
        indeg = [len(p) for p in self._preds]
        ready = [i for i, d in enumerate(indeg) if d == 0]
        out: List[Item] = []
        while ready:
            j = rng.randrange(len(ready))
            ready[j], ready[-1] = ready[-1], ready[j]
            u = ready.pop()
            out.append(self.items[u])
            for w in self._succs[u]:
                indeg[w] -= 1
                if indeg[w] == 0:
                    ready.append(w)
        return out

    def _repair(self, value: List[Item]) -> List[Item]:
        """Stable topological repair: repeatedly emit the earliest-positioned ready item.

        Returns ``value`` itself when it already respects the dependencies.
        """
        if self._first_violation(value) is None:
            return value
        order = [self._index[v] for v in value]
        rank = [0] * len(order)
        for i, u in enumerate(order):
            rank[u] = i
        indeg = [len(p) for p in self._preds]
        heap = [rank[u] for u in order if indeg[u] == 0]
        heapq.heapify(heap)
        out: List[Item] = []
        while heap:
            u = order[heapq.heappop(heap)]
            out.append(self.items[u])
            for w in self._succs[u]:
                indeg[w] -= 1
                if indeg[w] == 0:
                    heapq.heappush(heap, rank[w])
        return out

    # ---- size ---------------------------------------------------------------
    def count_orders(self) -> Tuple[int, bool]:
        """``(number of legal orders, exact)``; an upper bound with ``exact=False`` when too costly.

        Independent groups of items are counted separately (multinomial times each group's count);
        a group is counted exactly by dynamic programming over its down-sets, or bounded by ``k!``
        when it has more than ``_COUNT_STATE_CAP`` of them.  Cached.
        """
        if self._count is None:
            groups = self._groups()
            total, exact = math.factorial(len(self.items)), True
            for g in groups:
                total //= math.factorial(len(g))
            for g in groups:
                c = self._count_group(g) if len(g) > 1 else 1
                if c is None:
                    c, exact = math.factorial(len(g)), False
                total *= c
            self._count = (total, exact)
        return self._count

    def _groups(self) -> List[List[int]]:
        parent = list(range(len(self.items)))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for v, ps in enumerate(self._preds):
            for u in ps:
                parent[find(u)] = find(v)
        groups: Dict[int, List[int]] = {}
        for i in range(len(self.items)):
            groups.setdefault(find(i), []).append(i)
        return list(groups.values())

    def _count_group(self, group: List[int]) -> Optional[int]:
        local = {g: k for k, g in enumerate(group)}
        need = [sum(1 << local[u] for u in self._preds[g]) for g in group]
        layer: Dict[int, int] = {0: 1}
        states = 0
        for _ in group:
            nxt: Dict[int, int] = {}
            for mask, cnt in layer.items():
                for k, req in enumerate(need):
                    if not (mask >> k) & 1 and mask & req == req:
                        key = mask | (1 << k)
                        nxt[key] = nxt.get(key, 0) + cnt
            states += len(nxt)
            if states > _COUNT_STATE_CAP:
                return None
            layer = nxt
        return sum(layer.values())

    def search_space_size(self) -> float:
        """Number of orders respecting ``deps`` (upper bound when not exact, see :meth:`count_orders`)."""
        try:
            return float(self.count_orders()[0])
        except OverflowError:
            return math.inf

    def log10_search_space_size(self) -> float:
        """``log10`` of :meth:`count_orders`' count."""
        return math.log10(self.count_orders()[0])

    def to_json(self) -> Dict[str, Any]:
        """Deps are written as ``[[item, [before...]], ...]`` pairs so non-string items survive JSON."""
        data = super().to_json()
        data["deps"] = [[k, v] for k, v in self.deps.items()]
        return data

    def describe(self) -> str:
        return f"{super().describe()} with {sum(map(len, self._preds))} precedence rules"

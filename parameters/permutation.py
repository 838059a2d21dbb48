"""Permutation parameters: orderings of a fixed set of items, optionally with precedence rules.

:class:`PermutationParameter` holds a ``list`` that is a permutation of its items (JSON scalars);
:class:`ScheduleParameter` additionally requires a precedence order (``deps``).

The crossovers and mutations of the thesis' Table 4.5 are written first as pure functions on lists
taking explicit cut points (``cross_px``, ``cross_pmx``, ``cross_cx``, ``cross_ox1``, ``cross_ox3``,
``swap_positions``, ``invert_section``), so they can be tested by hand; the operator methods draw the
cut points from the caller's ``random.Random`` and call them.  Every operator on a parameter ends in
:meth:`PermutationParameter._repair`, which is the identity for plain permutations and a stable
topological repair for schedules, so every operator result is legal.
"""
from __future__ import annotations

import heapq
import math
import random
from typing import Any, Dict, Hashable, Iterable, List, Mapping, Optional, Sequence, Tuple

from .base import ComplexParameter, Config, ParameterError, operator

Item = Hashable

# --------------------------------------------------------------------------------------------
# Pure helpers on lists (no randomness).  ``p1`` is the base parent, ``p2`` the donor.
# --------------------------------------------------------------------------------------------


def _positions(perm: Sequence[Item]) -> Dict[Item, int]:
    """Map each item to its index in ``perm``."""
    return {v: i for i, v in enumerate(perm)}


def swap_positions(perm: Sequence[Item], i: int, j: int) -> List[Item]:
    """Return a copy of ``perm`` with the elements at ``i`` and ``j`` swapped."""
    out = list(perm)
    out[i], out[j] = out[j], out[i]
    return out


def invert_section(perm: Sequence[Item], start: int, length: int) -> List[Item]:
    """Return a copy of ``perm`` with ``perm[start:start+length]`` reversed."""
    out = list(perm)
    out[start:start + length] = out[start:start + length][::-1]
    return out


def cross_px(p1: Sequence[Item], p2: Sequence[Item], cut: int) -> List[Item]:
    """Partition crossover (after Whitley): reorder ``p1[:cut]`` by the items' order in ``p2``.

    ``p1[cut:]`` is kept as is.  Example: ``cross_px([1,2,3,4,5], [5,3,1,4,2], 3) == [3,1,2,4,5]``.
    """
    pos2 = _positions(p2)
    return sorted(p1[:cut], key=pos2.__getitem__) + list(p1[cut:])


def cross_pmx(p1: Sequence[Item], p2: Sequence[Item], start: int, length: int) -> List[Item]:
    """Partially-mapped crossover (Goldberg & Lingle 1985), O(n).

    ``p2[start:start+length]`` replaces the same section of ``p1``; each element of ``p1`` displaced
    by ``p2[i]`` moves to the position ``p2[i]`` had in the child, i.e. the child is ``p1`` with the
    section's elements swapped into place one by one.  This is the classic mapping-chain PMX.
    """
    child = list(p1)
    pos = _positions(child)
    for i in range(start, start + length):
        want = p2[i]
        j = pos[want]
        if j != i:
            displaced = child[i]
            child[i], child[j] = want, displaced
            pos[want], pos[displaced] = i, j
    return child


def cross_cx(p1: Sequence[Item], p2: Sequence[Item], start: int) -> List[Item]:
    """Cycle crossover: the child is ``p1`` except on the cycle through index ``start``, taken from ``p2``.

    Replaces ``p1[i]`` by ``p2[i]`` starting at ``start`` and following the element ``p2[i]`` to its
    index in ``p1`` until the cycle closes, so the result is again a permutation.
    """
    child = list(p1)
    pos1 = _positions(p1)
    i = start
    while True:
        child[i] = p2[i]
        i = pos1[p2[i]]
        if i == start:
            return child


def cross_ox3(p1: Sequence[Item], p2: Sequence[Item], start1: int, start2: int,
              length: int) -> List[Item]:
    """Ordered crossover with different cut points (after Deep & Mebrahtu's OX3).

    The child receives ``p2[start2:start2+length]`` at positions ``start1..start1+length-1``; the
    other positions, from ``start1+length`` onwards (cyclic), get ``p1``'s remaining items in the
    order they appear in ``p1`` read cyclically from index ``start1+length``.
    """
    n = len(p1)
    if n == 0:
        return []
    segment = list(p2[start2:start2 + length])
    taken = set(segment)
    s = (start1 + length) % n
    rest = [v for v in list(p1[s:]) + list(p1[:s]) if v not in taken]
    child: List[Item] = list(p1)
    child[start1:start1 + length] = segment
    head = n - s if s else 0  # slots from s to the end of the list (none when s == 0)
    head = min(head, len(rest))
    child[s:s + head] = rest[:head]
    child[:len(rest) - head] = rest[head:]
    return child


def cross_ox1(p1: Sequence[Item], p2: Sequence[Item], start: int, length: int) -> List[Item]:
    """Ordered crossover OX1 (Davis 1985) with the same cut points in both parents.

    The child keeps ``p2[start:start+length]`` in place; the remaining positions, from the second
    cut point onwards (cyclic), are filled with ``p1``'s other items in ``p1``'s cyclic order from
    the second cut point.  Example (Eiben & Smith):
    ``cross_ox1([9,3,7,8,2,6,5,1,4], [1,2,3,4,5,6,7,8,9], 3, 4) == [3,8,2,4,5,6,7,1,9]``.
    """
    return cross_ox3(p1, p2, start, start, length)


CROSSOVERS = ("PX", "PMX", "CX", "OX1", "OX3")


def _section_length(n: int, strength: float, minimum: int = 1) -> int:
    """Length of a crossover/inversion section: ``round(strength*n)`` clamped to ``[minimum, n]``."""
    return max(min(minimum, n), min(n, int(round(float(strength) * n))))


# --------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------


def _is_json_scalar(x: Any) -> bool:
    if x is None or isinstance(x, (str, bool, int)):
        return True
    return isinstance(x, float) and math.isfinite(x)


def _check_items(name: str, items: Any) -> List[Item]:
    """Validate the item list (non-empty JSON scalars, no duplicates); return it as a list."""
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple)):
        raise ParameterError(f"parameter {name!r}: items must be a list of JSON scalars, got {items!r}")
    items = list(items)
    if not items:
        raise ParameterError(f"parameter {name!r}: items must not be empty; give at least one item")
    seen: Dict[Item, Item] = {}
    for x in items:
        if not _is_json_scalar(x):
            raise ParameterError(f"parameter {name!r}: item {x!r} is not a JSON scalar "
                                 f"(str, int, finite float, bool or None); use scalars only")
        if x in seen:
            raise ParameterError(f"parameter {name!r}: duplicate item {x!r} (equal to {seen[x]!r}); "
                                 f"items must be distinct")
        seen[x] = x
    return items


class PermutationParameter(ComplexParameter):
    """A permutation of ``items``; the value is a ``list`` holding each item exactly once."""

    kind = "permutation"

    def __init__(self, name: str, items: Sequence[Any]) -> None:
        super().__init__(name)
        self.items: List[Item] = _check_items(name, items)
        self._index: Dict[Item, int] = _positions(self.items)

    # ---- value methods ------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of items."""
        return len(self.items)

    def seed_value(self) -> List[Item]:
        """The items in the given order (a legal value; repaired for schedules)."""
        return self._repair(list(self.items))

    def random_value(self, rng: random.Random) -> List[Item]:
        """A uniformly random permutation (``rng.shuffle`` of a copy of the items)."""
        value = list(self.items)
        rng.shuffle(value)
        return value

    def _violation(self, value: Any) -> Optional[str]:
        """Why ``value`` is not a permutation of the items, or None when it is."""
        if not isinstance(value, list):
            return f"value must be a list, got {type(value).__name__}"
        if len(value) != len(self.items):
            return f"value has {len(value)} elements, expected {len(self.items)}"
        seen = [False] * len(self.items)
        for v in value:
            try:
                idx = self._index.get(v)
            except TypeError:
                return f"element {v!r} is not an item"
            if idx is None or type(v) is not type(self.items[idx]):
                return f"element {v!r} is not an item"
            if seen[idx]:
                return f"element {v!r} appears twice"
            seen[idx] = True
        return None

    def is_valid(self, value: Any) -> bool:
        """True when ``value`` is a list holding each item exactly once (exact types)."""
        return self._violation(value) is None

    def normalize_value(self, value: Any) -> List[Item]:
        """Accept a list or tuple whose elements equal the items; return the canonical list."""
        if isinstance(value, tuple):
            value = list(value)
        if isinstance(value, list):
            try:
                value = [self.items[self._index[v]] if v in self._index else v for v in value]
            except TypeError:
                pass
        problem = self._violation(value)
        if problem:
            raise ParameterError(f"parameter {self.name!r}: {problem}; give a permutation of {self.items!r}")
        return value

    def search_space_size(self) -> float:
        """``n!`` as a float (``inf`` when it does not fit); see :meth:`log10_search_space_size`."""
        try:
            return float(math.factorial(len(self.items)))
        except OverflowError:
            return math.inf

    def log10_search_space_size(self) -> float:
        """``log10(n!)`` computed with ``lgamma`` (finite for any size)."""
        return math.lgamma(len(self.items) + 1) / math.log(10)

    def to_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "items": list(self.items)}

    def describe(self) -> str:
        shown = self.items if len(self.items) <= 6 else self.items[:5] + ["..."]
        return f"{self.kind} of {len(self.items)} items {shown!r}"

    # ---- repair hook --------------------------------------------------------
    def _repair(self, value: List[Item]) -> List[Item]:
        """Called on every operator result; returns a legal value (identity for permutations)."""
        return value

    def _store(self, child: Config, value: List[Item]) -> None:
        self.set_value(child, self._repair(value))

    # ---- operators ----------------------------------------------------------
    @operator(1)
    def op1_small_random_change(self, child: Config, *, rng: random.Random, p: float = 0.25) -> None:
        """Walk the list, swapping each element with the next one with probability ``p``."""
        value = list(self.get_value(child))
        rand = rng.random
        for i in range(1, len(value)):
            if rand() < p:
                value[i - 1], value[i] = value[i], value[i - 1]
        self._store(child, value)

    @operator(2)
    def op2_random_swap(self, child: Config, parent: Config, *, rng: random.Random) -> None:
        """Set the child to ``parent``'s permutation with one random pair of elements swapped."""
        value = self.get_value(parent)
        if len(value) < 2:
            self._store(child, list(value))
            return
        i, j = rng.sample(range(len(value)), 2)
        self._store(child, swap_positions(value, i, j))

    @operator(2)
    def op2_random_invert(self, child: Config, parent: Config, *, rng: random.Random,
                          strength: float = 0.3) -> None:
        """Set the child to ``parent``'s permutation with a random section (about ``strength*n``, at least 2) reversed."""
        value = self.get_value(parent)
        n = len(value)
        d = _section_length(n, strength, minimum=2)
        start = rng.randint(0, n - d)
        self._store(child, invert_section(value, start, d))

    @operator(3)
    def op3_cross(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                  xchoice: str = "OX1", strength: float = 0.3) -> None:
        """Cross ``p1`` with ``p2`` by the crossover named by ``xchoice`` (PX, PMX, CX, OX1, OX3)."""
        self._set_cross(child, self.get_value(p1), self.get_value(p2), rng, xchoice, strength)

    @operator(3)
    def op3_cross_PX(self, child: Config, p1: Config, p2: Config, *, rng: random.Random) -> None:
        """Partition crossover: reorder ``p1`` up to a random cut point by ``p2``'s order."""
        self._set_cross(child, self.get_value(p1), self.get_value(p2), rng, "PX", 0.0)

    @operator(3)
    def op3_cross_PMX(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                      strength: float = 0.3) -> None:
        """Partially-mapped crossover of a random section of about ``strength*n`` items."""
        self._set_cross(child, self.get_value(p1), self.get_value(p2), rng, "PMX", strength)

    @operator(3)
    def op3_cross_CX(self, child: Config, p1: Config, p2: Config, *, rng: random.Random) -> None:
        """Cycle crossover starting at a random index."""
        self._set_cross(child, self.get_value(p1), self.get_value(p2), rng, "CX", 0.0)

    @operator(3)
    def op3_cross_OX1(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                      strength: float = 0.3) -> None:
        """Ordered crossover: put a ``p2`` section of about ``strength*n`` items into ``p1``'s order."""
        self._set_cross(child, self.get_value(p1), self.get_value(p2), rng, "OX1", strength)

    @operator(3)
    def op3_cross_OX3(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                      strength: float = 0.3) -> None:
        """Ordered crossover with different cut points in the two parents."""
        self._set_cross(child, self.get_value(p1), self.get_value(p2), rng, "OX3", strength)

    @operator(3)
    def op3_swarm(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                  xchoice: str = "OX1", c: float = 0.5, c1: float = 0.5, c2: float = 0.5,
                  strength: float = 0.3, velocity: Any = 0) -> Any:
        """PSO step for permutations: keep the child (weight ``c``) or cross it with ``p1`` (``c1``) or ``p2`` (``c2``).

        The child's current value is the particle's position; the chosen parent is the donor of a
        ``xchoice`` crossover.  Returns ``velocity`` unchanged (permutations have no velocity).
        """
        weights = [max(float(c), 0.0), max(float(c1), 0.0), max(float(c2), 0.0)]
        if sum(weights) <= 0:
            return velocity
        pick = rng.choices((None, p1, p2), weights=weights, k=1)[0]
        if pick is not None:
            self._set_cross(child, self.get_value(child), self.get_value(pick), rng, xchoice, strength)
        return velocity

    # ---- crossover dispatch -------------------------------------------------
    def _set_cross(self, child: Config, a: Sequence[Item], b: Sequence[Item], rng: random.Random,
                   xchoice: str, strength: float) -> None:
        """Draw cut points for crossover ``xchoice`` and store the repaired result in ``child``."""
        self._store(child, self.crossover(a, b, rng, xchoice, strength))

    @staticmethod
    def crossover(a: Sequence[Item], b: Sequence[Item], rng: random.Random, xchoice: str = "OX1",
                  strength: float = 0.3) -> List[Item]:
        """Return crossover ``xchoice`` of base ``a`` and donor ``b`` with random cut points (called by operators)."""
        kind = xchoice[len("op3_cross_"):] if xchoice.startswith("op3_cross_") else xchoice
        n = len(a)
        if kind not in CROSSOVERS:
            raise ParameterError(f"unknown crossover {xchoice!r}; choose one of {list(CROSSOVERS)}")
        if n < 2:
            return list(a)
        if kind == "PX":
            return cross_px(a, b, rng.randint(2, n))
        if kind == "CX":
            return cross_cx(a, b, rng.randrange(n))
        d = _section_length(n, strength)
        if kind == "PMX":
            return cross_pmx(a, b, rng.randint(0, n - d), d)
        if kind == "OX1":
            return cross_ox1(a, b, rng.randint(0, n - d), d)
        return cross_ox3(a, b, rng.randint(0, n - d), rng.randint(0, n - d), d)

# --------------------------------------------------------------------------------------------
# Schedules: permutations with precedence constraints
# --------------------------------------------------------------------------------------------

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
            raise ParameterError(f"parameter {name!r}: deps[{item!r}] must be a list of items, got {before!r}")
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
                if u not in preds[v]:
                    preds[v].append(u)
        self._preds: List[List[int]] = [sorted(p) for p in preds]
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
                        raise ParameterError(f"parameter {self.name!r}: dependency cycle {shown} "
                                             f"('x -> y' means x must come before y); remove one of these deps")
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

"""Permutation parameters: orderings of a fixed set of items, optionally with precedence rules.

:class:`PermutationParameter` holds a ``list`` that is a permutation of its items (JSON scalars);
:class:`ScheduleParameter` (in :mod:`.schedule`) additionally requires a
precedence order (``deps``).

The crossovers and mutations of the thesis' Table 4.5 are pure functions on lists taking explicit
cut points, in :mod:`.permutation_moves` (``cross_px``, ``cross_pmx``, ``cross_cx``, ``cross_ox1``,
``cross_ox3``, ``swap_positions``, ``invert_section``), so they can be tested by hand; the operator
methods here draw the cut points from the caller's ``random.Random`` (the crossovers through
:func:`~.permutation_moves.named_crossover`) and call them.  Every operator on a parameter ends in
:meth:`PermutationParameter._repair`, which is the identity for plain permutations and a stable
topological repair for schedules, so every operator result is legal.
"""
from __future__ import annotations

import itertools
import math
import random
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from .base import ComplexParameter, Config, ParameterError
from .operators import operator
from .permutation_moves import (Item, _linear_roles, _positions, _section_length, difference_swaps, invert_section,
                                move_section, named_crossover, swap_positions)
from .unit_cube import _linear_weights


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
    encoding = "permutation"
    key_style = "tuple"

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

    def _domain(self, limit: int) -> Optional[List[List[Item]]]:
        """The legal orders in lexicographic order of positions (None over ``limit`` orders)."""
        if math.factorial(len(self.items)) > limit:
            return None
        perms = [list(p) for p in itertools.permutations(self.items)]
        return [p for p in perms if self.is_valid(p)]

    def sample_values(self, rng: random.Random, np_rng: Any, count: int) -> List[List[Item]]:
        items = self.items
        order = np.argsort(np_rng.random((count, len(items))), axis=1).tolist()
        return [[items[i] for i in row] for row in order]

    def neighbours(self, value: Any, rng: random.Random, k: int) -> List[List[Item]]:
        """Every adjacent swap plus random swaps (legal orders only)."""
        n = len(value)
        if n < 2:
            return []
        pairs = [(i, i + 1) for i in range(n - 1)]
        extra = max(k, n - 1) - len(pairs)
        for _ in range(max(extra, 0)):
            i, j = rng.sample(range(n), 2)
            pairs.append((min(i, j), max(i, j)))
        out, seen = [], set()
        for i, j in pairs:
            if (i, j) in seen:
                continue
            seen.add((i, j))
            v = list(value)
            v[i], v[j] = v[j], v[i]
            if self.is_valid(v):
                out.append(v)
        return out

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
        """Set the child to ``parent``'s permutation with a random section reversed.

        The section has ``round(strength*n)`` elements, at least 2 (so the operator is never a no-op)."""
        value = self.get_value(parent)
        n = len(value)
        d = _section_length(n, strength, minimum=2)
        start = rng.randint(0, n - d)
        self._store(child, invert_section(value, start, d))

    @operator(2)
    def op2_or_opt(self, child: Config, parent: Config, *, rng: random.Random, max_length: int = 3) -> None:
        """Set the child to ``parent``'s permutation with a section of 1 to ``max_length`` elements moved,
        in the same orientation, to another position (an or-opt move: unlike an inversion it keeps
        the direction of every edge, which is what asymmetric tours and orders need)."""
        value = self.get_value(parent)
        n = len(value)
        if n < 2:
            self._store(child, list(value))
            return
        length = rng.randint(1, max(1, min(int(max_length), n - 1)))
        start = rng.randint(0, n - length)
        to = rng.randint(0, n - length - 1)
        self._store(child, move_section(value, start, length, to if to < start else to + 1))

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
        """PSO step for permutations: keep the child (weight ``c``) or cross it with p1/p2 (``c1``/``c2``).

        The weights are relative (normalised over the three choices).  The child's current value is
        the particle's position; the chosen parent is the donor of a ``xchoice`` crossover.
        Returns ``velocity`` unchanged (permutations have no velocity).
        """
        weights = [max(float(c), 0.0), max(float(c1), 0.0), max(float(c2), 0.0)]
        if sum(weights) <= 0:
            return velocity
        pick = rng.choices((None, p1, p2), weights=weights, k=1)[0]
        if pick is not None:
            self._set_cross(child, self.get_value(child), self.get_value(pick), rng, xchoice, strength)
        return velocity

    @operator(4)
    def op4_set_linear(self, child: Config, p1: Config, p2: Config, p3: Config, *,
                       rng: random.Random, a: float = 1.0, b: float = 1.0, c: float = -1.0,
                       weights: Optional[Sequence[float]] = None) -> None:
        """Simulate ``a*p1 + b*p2 + c*p3`` (``weights=(a,b,c)`` also accepted), as in discrete DE.

        When one weight is 1 and the other two are opposite (``w``, ``-w``), the child gets that
        parent's permutation plus the 'difference' of the other two: each swap of
        :func:`difference_swaps` (minus-parent to plus-parent) is applied with probability
        ``min(1, |w|)``.  Any other weight pattern gives a random value.
        """
        roles = _linear_roles(_linear_weights(a, b, c, weights))
        if roles is None:
            self._store(child, self.random_value(rng))
            return
        vals = [self.get_value(p) for p in (p1, p2, p3)]
        base, plus, minus, scale = roles
        value = list(vals[base])
        if scale > 0:
            for i, j in difference_swaps(vals[minus], vals[plus]):
                if scale >= 1 or rng.random() < scale:
                    value[i], value[j] = value[j], value[i]
        self._store(child, value)

    # ---- crossover dispatch -------------------------------------------------
    def _set_cross(self, child: Config, a: Sequence[Item], b: Sequence[Item], rng: random.Random,
                   xchoice: str, strength: float) -> None:
        """Draw cut points for crossover ``xchoice`` and store the repaired result in ``child``."""
        self._store(child, self.crossover(a, b, rng, xchoice, strength))

    @staticmethod
    def crossover(a: Sequence[Item], b: Sequence[Item], rng: random.Random, xchoice: str = "OX1",
                  strength: float = 0.3) -> List[Item]:
        """Crossover ``xchoice`` (``"PMX"`` or ``"op3_cross_PMX"``...) of base ``a`` and donor ``b``.

        Called by the crossover operators; draws the cut points from ``rng``
        (:func:`~.permutation_moves.named_crossover`); returns a new list."""
        return named_crossover(a, b, rng, xchoice, strength)

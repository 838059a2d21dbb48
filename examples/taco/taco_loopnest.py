"""A tiny loop-nest IR and its C emitter: the engine under the TACO-style code generator.

A :class:`Nest` describes one kernel's five loops *independently of their order*:

* every :class:`Loop` lists the extents it may take, tightest first.  An :class:`Extent` may use
  values bound by loops (or derived values) outside it -- its ``needs``; the emitter picks the
  first extent whose needs are all bound at that point of the chosen order.  The last extent's
  needs are the loop's hard requirement: a loop placed before them cannot be generated
  (:class:`IllegalOrder`).  An extent may *imply* a derived value's guard (``implies``): e.g.
  ``i1 < min(chunk, N - i0*chunk)`` makes the guard ``i < N`` of ``i = i0*chunk + i1`` redundant.
* every :class:`Value` is C code that derives a value (``i = i0*C + i1``, the position bounds of
  row ``i``, ...) from bound names; it is emitted right after the last loop it needs, followed by
  ``if (!(guard)) continue;`` unless an extent already implies the guard.
* the body is the innermost statement; it needs every derived value it reads.

:func:`emit` prints the loops in a given order with one ``#pragma omp parallel for`` on the
parallel loop, an optional ``#pragma GCC unroll`` on the innermost loop, and -- in every loop
outside the parallel one -- a deadline check (``return 1`` once ``tunerlib_deadline_`` passed),
so that orders that open thousands of parallel regions can be stopped (TIMEOUT) instead of
blocking the tuner.  Emission is deterministic: the same nest, order and pragmas give the same
text (the harness caches compiled kernels by the hash of that text).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

#: C statement placed first in every loop that encloses the parallel loop
DEADLINE_CHECK = "if (omp_get_wtime() > tunerlib_deadline_) return 1;"


class IllegalOrder(ValueError):
    """A loop order this generator cannot lower (one-line message naming the loop and what it needs)."""


def names(*items: str) -> FrozenSet[str]:
    """Shorthand for a frozenset of names."""
    return frozenset(items)


@dataclass(frozen=True)
class Extent:
    """One way to bound a loop: ``for (v = 0; v < expr; v++)`` once ``needs`` are bound."""

    needs: FrozenSet[str]
    expr: str
    implies: FrozenSet[str] = frozenset()


@dataclass(frozen=True)
class Loop:
    """A loop variable and its candidate extents (tightest first, the last one always valid)."""

    name: str
    extents: Tuple[Extent, ...]

    @property
    def requires(self) -> FrozenSet[str]:
        """Names that must be bound before this loop can be generated at all."""
        return self.extents[-1].needs


@dataclass(frozen=True)
class Value:
    """Derived value(s): C declarations emitted once ``needs`` are bound, then the guard."""

    name: str
    code: str
    needs: FrozenSet[str]
    guard: str = ""


@dataclass(frozen=True)
class Nest:
    """One kernel's loops (any order), derived values, body and parallel loop."""

    loops: Tuple[Loop, ...]
    values: Tuple[Value, ...]
    body: str
    body_needs: FrozenSet[str]
    parallel: str
    unroll_innermost: int = 0

    def loop(self, name: str) -> Loop:
        """The loop called ``name`` (KeyError when there is none)."""
        for lp in self.loops:
            if lp.name == name:
                return lp
        raise KeyError(name)

    @property
    def loop_names(self) -> List[str]:
        """Loop names in definition order (the identity order)."""
        return [lp.name for lp in self.loops]


@dataclass
class _State:
    bound: Set[str] = field(default_factory=set)
    implied: Set[str] = field(default_factory=set)
    emitted: Set[str] = field(default_factory=set)
    lines: List[str] = field(default_factory=list)
    depth: int = 0

    def put(self, text: str) -> None:
        for line in text.splitlines():
            self.lines.append("  " * self.depth + line)


def check_order(nest: Nest, order: Sequence[str]) -> None:
    """Raise :class:`IllegalOrder` unless ``order`` is a permutation of the nest's loops that can
    be generated (each loop after what its extents need, the body's needs all bound)."""
    _plan(nest, order)


def _plan(nest: Nest, order: Sequence[str]) -> List[Extent]:
    if sorted(order) != sorted(nest.loop_names):
        raise IllegalOrder(f"loop order {list(order)} is not a permutation of {nest.loop_names}")
    bound: Set[str] = set()
    chosen: List[Extent] = []
    for name in order:
        loop = nest.loop(name)
        ext = _pick(loop, bound)
        if ext is None:
            missing = sorted(_expand(loop.requires, _value_sources(nest)) - bound)
            raise IllegalOrder(f"loop order {' '.join(order)} cannot be generated: {name} must lie "
                               f"inside {', '.join(missing)} (it iterates what they select)")
        chosen.append(ext)
        bound.add(name)
        _bind_values(nest, bound)
    if not nest.body_needs <= bound:
        raise IllegalOrder(f"the loop body needs {sorted(nest.body_needs - bound)}, never bound")
    return chosen


def _pick(loop: Loop, bound: Set[str]) -> Optional[Extent]:
    for ext in loop.extents:
        if ext.needs <= bound:
            return ext
    return None


def _bind_values(nest: Nest, bound: Set[str]) -> List[Value]:
    """Add every derivable value to ``bound`` (fixpoint); return them in emission order."""
    out: List[Value] = []
    progress = True
    while progress:
        progress = False
        for v in nest.values:
            if v.name not in bound and v.needs <= bound:
                bound.add(v.name)
                out.append(v)
                progress = True
    return out


def emit(nest: Nest, order: Sequence[str], parallel_pragma: str, indent: int = 1) -> List[str]:
    """C lines of the loop nest in ``order`` (outermost first); raises :class:`IllegalOrder`."""
    extents = _plan(nest, order)
    state = _State(depth=indent)
    outside_parallel = set(order[:list(order).index(nest.parallel)])
    for pos, (name, ext) in enumerate(zip(order, extents)):
        state.implied |= ext.implies
        if name == nest.parallel:
            state.put(parallel_pragma)
        elif nest.unroll_innermost > 1 and pos == len(order) - 1:
            state.put(f"#pragma GCC unroll {nest.unroll_innermost}")
        state.put(f"for (int32_t {name} = 0; {name} < {ext.expr}; {name}++) {{")
        state.depth += 1
        if name in outside_parallel:
            state.put(DEADLINE_CHECK)
        state.bound.add(name)
        _emit_values(nest, state)
    state.put(nest.body)
    for _ in order:
        state.depth -= 1
        state.put("}")
    return state.lines


def _emit_values(nest: Nest, state: _State) -> None:
    for v in _bind_values(nest, state.bound):
        state.put(v.code)
        if v.guard and v.name not in state.implied:
            state.put(f"if (!({v.guard})) continue;")


def precedence_pairs(nest: Nest) -> List[Tuple[str, str]]:
    """(outer, inner) loop pairs implied by the loops' hard requirements: ``inner`` can only be
    generated inside ``outer``.  Derived values are expanded to the loops they come from."""
    sources = _value_sources(nest)
    pairs: List[Tuple[str, str]] = []
    for loop in nest.loops:
        for need in sorted(_expand(loop.requires, sources)):
            if (need, loop.name) not in pairs:
                pairs.append((need, loop.name))
    return pairs


def _value_sources(nest: Nest) -> Dict[str, FrozenSet[str]]:
    out: Dict[str, FrozenSet[str]] = {}
    for v in nest.values:          # values are listed after the values they read
        out[v.name] = _expand(v.needs, out)
    return out


def _expand(needs: Iterable[str], sources: Dict[str, FrozenSet[str]]) -> FrozenSet[str]:
    result: Set[str] = set()
    for n in needs:
        if n in sources:
            result |= sources[n]
        else:
            result.add(n)
    return frozenset(result)

"""Pure moves on permutations: the crossovers and mutations of the thesis' Table 4.5 on plain lists.

Each move takes its cut points explicitly and draws nothing, so it can be tested by hand
(``cross_px``, ``cross_pmx``, ``cross_cx``, ``cross_ox1``, ``cross_ox3``, ``swap_positions``,
``invert_section``, ``move_section``, and ``difference_swaps``, the swap sequence discrete DE
applies).  :func:`named_crossover` draws the cut points of the crossover named in
:data:`CROSSOVERS` from the caller's ``random.Random``; :class:`~.permutation.PermutationParameter`'s
other operators draw theirs and call the moves directly.  ``p1`` is the base parent, ``p2`` the donor.
"""
from __future__ import annotations

import random
from typing import Dict, Hashable, List, Optional, Sequence, Tuple

from .base import ParameterError

Item = Hashable


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


def move_section(perm: Sequence[Item], start: int, length: int, to: int) -> List[Item]:
    """Return a copy of ``perm`` with ``perm[start:start+length]`` taken out and put back, in the same
    orientation, so that it starts at position ``to`` of the remaining list (an or-opt move)."""
    out = list(perm)
    section = out[start:start + length]
    del out[start:start + length]
    out[to:to] = section
    return out


def cross_px(p1: Sequence[Item], p2: Sequence[Item], cut: int) -> List[Item]:
    """Partition crossover (after Whitley): reorder ``p1[:cut]`` by the items' order in ``p2``.

    Example: ``cross_px([1,2,3,4,5], [5,3,1,4,2], 3) == [3,1,2,4,5]``."""
    pos2 = _positions(p2)
    return sorted(p1[:cut], key=pos2.__getitem__) + list(p1[cut:])


def cross_pmx(p1: Sequence[Item], p2: Sequence[Item], start: int, length: int) -> List[Item]:
    """Partially-mapped crossover (Goldberg & Lingle 1985), O(n): ``p2[start:start+length]`` replaces
    the same section of ``p1``; each displaced element moves to the old position of the element
    displacing it (swap-based form, equal to the classic mapping-chain PMX)."""
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
    """Cycle crossover: the child is ``p1`` except on the cycle through index ``start``, taken from
    ``p2`` (replace ``p1[i]`` by ``p2[i]``, go to the index of ``p2[i]`` in ``p1``, until it closes)."""
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

    The child gets ``p2[start2:start2+length]`` at ``start1..start1+length-1``; the other positions,
    from ``start1+length`` on (cyclic), get ``p1``'s other items in ``p1``'s cyclic order from there."""
    n = len(p1)
    segment = list(p2[start2:start2 + length])
    taken = set(segment)
    s = (start1 + length) % n if n else 0
    rest = [v for v in list(p1[s:]) + list(p1[:s]) if v not in taken]
    child: List[Item] = list(p1)
    child[start1:start1 + length] = segment
    head = min(n - s if s else 0, len(rest))  # slots from s to the end (none when s == 0)
    child[s:s + head] = rest[:head]
    child[:len(rest) - head] = rest[head:]
    return child


def cross_ox1(p1: Sequence[Item], p2: Sequence[Item], start: int, length: int) -> List[Item]:
    """Ordered crossover OX1 (Davis 1985): :func:`cross_ox3` with the same cut points in both parents.

    Example (Eiben & Smith): ``cross_ox1([9,3,7,8,2,6,5,1,4], list(range(1, 10)), 3, 4)
    == [3,8,2,4,5,6,7,1,9]``."""
    return cross_ox3(p1, p2, start, start, length)


def difference_swaps(src: Sequence[Item], dst: Sequence[Item]) -> List[Tuple[int, int]]:
    """Index pairs that, swapped in order starting from ``src``, turn it into ``dst`` (O(n)).

    This is the permutation 'difference' ``dst - src`` used by ``op4_set_linear``."""
    cur, pos, swaps = list(src), _positions(src), []
    for i, want in enumerate(dst):
        if cur[i] != want:
            j = pos[want]
            swaps.append((i, j))
            pos[cur[i]], pos[want] = j, i
            cur[i], cur[j] = want, cur[i]
    return swaps


def _linear_roles(ws: Sequence[float]) -> Optional[Tuple[int, int, int, float]]:
    """For weights with one 1 and two opposite entries: ``(base, plus, minus, |w|)``, else None."""
    for i in range(3):
        j, k = [x for x in range(3) if x != i]
        if ws[i] == 1.0 and ws[j] == -ws[k]:
            plus, minus = (j, k) if ws[j] >= 0 else (k, j)
            return i, plus, minus, abs(ws[j])
    return None


CROSSOVERS = ("PX", "PMX", "CX", "OX1", "OX3")


def _section_length(n: int, strength: float, minimum: int = 1) -> int:
    """Length of a crossover/inversion section: ``round(strength*n)`` clamped to ``[minimum, n]``."""
    return max(min(minimum, n), min(n, int(round(float(strength) * n))))


def named_crossover(a: Sequence[Item], b: Sequence[Item], rng: random.Random, xchoice: str = "OX1",
                    strength: float = 0.3) -> List[Item]:
    """Crossover ``xchoice`` (``"PMX"`` or ``"op3_cross_PMX"``...) of base ``a`` and donor ``b``.

    Called by :meth:`~.permutation.PermutationParameter.crossover` and so by the crossover
    operators; draws the cut points from ``rng``; returns a new list."""
    kind = str(xchoice)
    kind = kind[len("op3_cross_"):] if kind.startswith("op3_cross_") else kind
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


"""Array parameters: the shared base of fixed-length lists, and arrays of booleans.

A value is a ``list`` of exactly ``count`` elements.  :class:`ArrayParameter` holds the shared
machinery (validation, JSON, crossover, PSO-by-crossover); subclasses say what one element is:
:class:`BooleanArray` here, the bounded numeric arrays (``FloatArray``, ``IntegerArray``) in
:mod:`.numeric_arrays`.  Every operator writes a fresh list into the child and leaves it legal: right
length, right element type (``bool``, ``float``, ``int`` -- never ``numpy`` scalars) and within bounds.

Unlike OpenTuner, whose array ``op3_cross`` and ``op3_swarm`` were no-op stubs, these really cross.
"""
from __future__ import annotations

import itertools
import math
import random
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .base import ComplexParameter, Config, ParameterError
from .operators import operator
from .unit_cube import _linear_weights


def _is_real(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _velocities(name: str, velocity: Any, count: int) -> List[float]:
    """Expand a PSO velocity (``0``, a number, or a list of ``count`` numbers) to a list of floats."""
    if isinstance(velocity, (list, tuple)):
        if len(velocity) != count or not all(_is_real(v) for v in velocity):
            raise ParameterError(f"parameter {name!r}: velocity must be a number or a list of {count} "
                                 f"finite numbers, got {velocity!r}")
        return [float(v) for v in velocity]
    if not _is_real(velocity):
        raise ParameterError(f"parameter {name!r}: velocity must be a number or a list of {count} "
                             f"numbers, got {velocity!r}")
    return [float(velocity)] * count


def _pso_velocity(name: str, positions: Sequence[Sequence[float]], rng: random.Random, c: float,
                  c1: float, c2: float, velocity: Any) -> List[float]:
    """``c*v + r1*c1*(x1-x) + r2*c2*(x2-x)`` per element with one ``r1, r2``; ``positions=(x, x1, x2)``."""
    x, x1, x2 = positions
    v = _velocities(name, velocity, len(x))
    r1, r2 = rng.random(), rng.random()
    return [c * vi + r1 * c1 * (float(a1) - float(a)) + r2 * c2 * (float(a2) - float(a))
            for vi, a, a1, a2 in zip(v, x, x1, x2)]


def _clip(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


class ArrayParameter(ComplexParameter):
    """Base of fixed-length arrays; subclasses define the element methods ``_elem_*``."""

    encoding = "array"
    key_style = "tuple"

    def __init__(self, name: str, count: int) -> None:
        super().__init__(name)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ParameterError(f"parameter {name!r}: count must be an integer >= 1, got {count!r}")
        self.count = count

    # ---- element methods (subclasses) ---------------------------------------
    def _elem_seed(self) -> Any:
        raise NotImplementedError

    def _elem_random(self, rng: random.Random) -> Any:
        raise NotImplementedError

    def _elem_valid(self, x: Any) -> bool:
        raise NotImplementedError

    def _elem_normalize(self, x: Any) -> Any:
        """Coerce one element or return ``None`` when it cannot be made legal."""
        raise NotImplementedError

    def _elem_space(self) -> float:
        raise NotImplementedError

    def _elem_values(self) -> Optional[List[Any]]:
        """Every legal element in order, or None when the elements are continuous."""
        return None

    def element_unit(self, x: Any) -> float:
        """One element on ``[0, 1]`` (BO's distances and features)."""
        raise NotImplementedError

    def _elem_neighbour(self, x: Any, rng: random.Random) -> Any:
        """A legal element near ``x``."""
        raise NotImplementedError

    def neighbours(self, value: Any, rng: random.Random, k: int) -> List[List[Any]]:
        """Arrays differing in one element (at most ``k`` random positions)."""
        idx = list(range(self.count))
        if len(idx) > k:
            idx = rng.sample(idx, k)
        out = []
        for i in idx:
            v = list(value)
            v[i] = self._elem_neighbour(v[i], rng)
            if v != value:
                out.append(v)
        return out

    # ---- value methods ------------------------------------------------------
    def seed_value(self) -> List[Any]:
        """``count`` copies of the element seed (False / min)."""
        return [self._elem_seed() for _ in range(self.count)]

    def random_value(self, rng: random.Random) -> List[Any]:
        """``count`` independent uniformly random elements."""
        return [self._elem_random(rng) for _ in range(self.count)]

    def is_valid(self, value: Any) -> bool:
        """True for a ``list`` of ``count`` legal elements of the exact element type."""
        return (isinstance(value, list) and len(value) == self.count
                and all(self._elem_valid(x) for x in value))

    def normalize_value(self, value: Any) -> List[Any]:
        """Accept a list or tuple of near-legal elements (e.g. ``3.0`` for an int); raise otherwise."""
        if isinstance(value, tuple):
            value = list(value)
        if not isinstance(value, list) or len(value) != self.count:
            raise ParameterError(f"parameter {self.name!r}: value must be a list of {self.count} elements, "
                                 f"got {value!r}")
        out = [self._elem_normalize(x) for x in value]
        for x, y in zip(value, out):
            if y is None:
                raise ParameterError(f"parameter {self.name!r}: element {x!r} is illegal ({self.describe()})")
        return out

    def search_space_size(self) -> float:
        """(values per element) ** count, ``inf`` when continuous or too large for a float."""
        try:
            return float(self._elem_space() ** self.count)
        except OverflowError:
            return math.inf

    def log10_search_space_size(self) -> float:
        """``count * log10(values per element)``; ``inf`` when continuous."""
        return self.count * math.log10(self._elem_space())

    def _domain(self, limit: int) -> Optional[List[List[Any]]]:
        elems = self._elem_values()
        if elems is None:
            return None
        return [list(t) for t in itertools.product(elems, repeat=self.count)]

    def to_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "count": self.count}

    #: type name of one element (the store's representation counts the elements as sub-parameters)
    element_type = ""

    def structure(self) -> List[Tuple[str, int]]:
        return [(self.element_type, self.count)]

    # ---- operators ----------------------------------------------------------
    def _section(self, rng: random.Random, strength: float) -> range:
        d = max(1, min(self.count, int(round(float(strength) * self.count))))
        start = rng.randint(0, self.count - d)
        return range(start, start + d)

    def _crossed(self, base: Sequence[Any], donor: Sequence[Any], rng: random.Random,
                 strength: float) -> List[Any]:
        out = list(base)
        sec = self._section(rng, strength)
        out[sec.start:sec.stop] = donor[sec.start:sec.stop]
        return out

    @operator(3)
    def op3_cross(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                  strength: float = 0.3) -> None:
        """Set the child to ``p1`` with a random contiguous section taken from ``p2``.

        The section has ``round(strength*count)`` elements, at least 1."""
        self.set_value(child, self._crossed(self.get_value(p1), self.get_value(p2), rng, strength))

    @operator(3)
    def op3_swarm(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                  c: float = 1.0, c1: float = 0.5, c2: float = 0.5, strength: float = 0.3,
                  velocity: Any = 0) -> Any:
        """PSO step by crossover: keep the child (weight ``c``) or cross p1/p2 (``c1``/``c2``) into it.

        The weights are relative (normalised over the three choices); the crossover copies a
        section of about ``strength*count`` elements of the chosen parent into the child.

        Returns ``velocity`` unchanged (this variant has no velocity).
        """
        weights = [max(float(c), 0.0), max(float(c1), 0.0), max(float(c2), 0.0)]
        if sum(weights) <= 0:
            return velocity
        pick = rng.choices((None, p1, p2), weights=weights, k=1)[0]
        if pick is not None:
            self.set_value(child, self._crossed(self.get_value(child), self.get_value(pick), rng, strength))
        return velocity



class BooleanArray(ArrayParameter):
    """``count`` booleans."""

    kind = "bool_array"
    element_type = "BooleanParameter"

    def _elem_seed(self) -> bool:
        return False

    def _elem_random(self, rng: random.Random) -> bool:
        return rng.random() < 0.5

    def _elem_valid(self, x: Any) -> bool:
        return isinstance(x, bool)

    def _elem_normalize(self, x: Any) -> Optional[bool]:
        if isinstance(x, bool):
            return x
        if _is_real(x) and x in (0, 1):
            return bool(x)
        return None

    def _elem_space(self) -> int:
        return 2

    def _elem_values(self) -> List[bool]:
        return [False, True]

    def element_unit(self, x: Any) -> float:
        return float(bool(x))

    def _elem_neighbour(self, x: Any, rng: random.Random) -> bool:
        return not x

    def describe(self) -> str:
        return f"{self.kind} of {self.count} booleans"

    @operator(1)
    def op1_flip_random(self, child: Config, *, rng: random.Random) -> None:
        """Flip one uniformly chosen element."""
        value = list(self.get_value(child))
        i = rng.randrange(self.count)
        value[i] = not value[i]
        self.set_value(child, value)

    @operator(4)
    def op4_set_linear(self, child: Config, p1: Config, p2: Config, p3: Config, *,
                       rng: random.Random, a: float = 1.0, b: float = 1.0, c: float = -1.0,
                       weights: Optional[Sequence[float]] = None) -> None:
        """Simulate ``a*p1 + b*p2 + c*p3`` per element (``weights=(a,b,c)`` also accepted).

        When one weight is 1 and the other two are opposite and non-zero, the child is that parent
        with the elements flipped where the other two differ (binary DE: ``x1 XOR (x2 XOR x3)``);
        with the other two weights 0 it is a copy; any other weight pattern gives a random value.
        """
        ws = _linear_weights(a, b, c, weights)
        vals = [self.get_value(p) for p in (p1, p2, p3)]
        for i in range(3):
            j, k = [x for x in range(3) if x != i]
            if ws[i] == 1.0 and ws[j] == -ws[k]:
                move = ws[j] != 0
                self.set_value(child, [x ^ (move and y != z) for x, y, z in zip(vals[i], vals[j], vals[k])])
                return
        self.set_value(child, self.random_value(rng))

    @operator(3)
    def op3_swarm_parallel(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                           c: float = 1.0, c1: float = 0.5, c2: float = 0.5, vmax: float = 4.0,
                           velocity: Any = 0) -> List[float]:
        """Binary PSO per element (True=1, False=0): element = True with probability sigmoid(velocity).

        The new velocity ``c*v + r1*c1*(x1-x) + r2*c2*(x2-x)`` is clipped to ``[-vmax, vmax]``.

        ``r1, r2`` are shared by all elements.  Returns the new velocity list.
        """
        lim = abs(float(vmax))
        xs = [self.get_value(cfg) for cfg in (child, p1, p2)]
        vs = [_clip(v, -lim, lim) for v in _pso_velocity(self.name, xs, rng, c, c1, c2, velocity)]
        self.set_value(child, [rng.random() < _sigmoid(v) for v in vs])
        return vs

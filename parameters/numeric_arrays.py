"""Bounded numeric arrays: fixed-length lists of floats or integers within inclusive ``[min, max]``.

:class:`FloatArray` and :class:`IntegerArray` share their bounds, JSON fields, unit mapping and
unit-space operators (normal mutation, linear combination) through ``_BoundedArray``; an element's
unit value is its position in the range (integers: the centre of the integer's equal-width bin).
The array machinery they build on (validation, crossover, PSO-by-crossover) is
:class:`~.arrays.ArrayParameter`.
"""
from __future__ import annotations

import math
import random
from typing import Any, Dict, List, Optional, Sequence

from .arrays import ArrayParameter, _clip, _is_real, _pso_velocity
from .base import Config, ParameterError
from .unit_cube import _linear_weights
from .operators import operator


class _BoundedArray(ArrayParameter):
    """Numeric array with inclusive bounds ``[min, max]``; shared code of Float/IntegerArray."""

    def __init__(self, name: str, count: int, min: Any, max: Any) -> None:  # noqa: A002
        super().__init__(name, count)
        for label, bound in (("min", min), ("max", max)):
            if not _is_real(bound):
                raise ParameterError(f"parameter {name!r}: {label} must be a finite number, got {bound!r}")
        if min > max:
            raise ParameterError(f"parameter {name!r}: min {min!r} > max {max!r}; swap them")
        if not math.isfinite(float(max) - float(min)):
            raise ParameterError(f"parameter {name!r}: range [{min!r}, {max!r}] is too wide for floats; "
                                 f"narrow it")
        self.min_value = self._bound(name, min)
        self.max_value = self._bound(name, max)

    def _bound(self, name: str, x: Any) -> Any:
        raise NotImplementedError

    def to_json(self) -> Dict[str, Any]:
        data = super().to_json()
        data.update(min=self.min_value, max=self.max_value)
        return data

    def describe(self) -> str:
        return f"{self.kind} of {self.count} in [{self.min_value}, {self.max_value}]"

    def _elem_seed(self) -> Any:
        return self.min_value

    def _to_unit(self, x: Any) -> float:
        raise NotImplementedError

    def element_unit(self, x: Any) -> float:
        return self._to_unit(x)

    def _elem_neighbour(self, x: Any, rng: random.Random) -> Any:
        """A Gaussian step of a tenth of the range, clipped to the bounds."""
        lo, hi = self.min_value, self.max_value
        step = rng.gauss(0.0, 0.1) * (hi - lo)
        return self._elem_cast(min(max(x + step, lo), hi))

    def _elem_cast(self, x: float) -> Any:
        raise NotImplementedError

    def _from_unit(self, u: float) -> Any:
        raise NotImplementedError

    @operator(1)
    def op1_normal_mutation(self, child: Config, *, rng: random.Random, sigma: float = 0.1) -> None:
        """Add Gaussian noise of std ``sigma`` to every element in unit space ([0, 1] ~ [min, max]).

        The noisy unit value is clipped to [0, 1]; integers map back through equal-width bins."""
        self.set_value(child, [self._from_unit(_clip(self._to_unit(x) + rng.gauss(0.0, sigma), 0.0, 1.0))
                               for x in self.get_value(child)])

    @operator(4)
    def op4_set_linear(self, child: Config, p1: Config, p2: Config, p3: Config, *,
                       rng: random.Random, a: float = 1.0, b: float = 1.0, c: float = -1.0,
                       weights: Optional[Sequence[float]] = None) -> None:
        """Set every element to ``a*p1 + b*p2 + c*p3`` in unit space, clipped to the bounds.

        ``weights=(a, b, c)`` is also accepted (as for the numeric parameters)."""
        a, b, c = _linear_weights(a, b, c, weights)
        unit = self._to_unit
        self.set_value(child, [self._from_unit(_clip(a * unit(x) + b * unit(y) + c * unit(z), 0.0, 1.0))
                               for x, y, z in zip(*(self.get_value(p) for p in (p1, p2, p3)))])


class FloatArray(_BoundedArray):
    """``count`` floats in ``[min, max]``."""

    kind = "float_array"
    element_type = "FloatParameter"

    def _bound(self, name: str, x: Any) -> float:
        return float(x)

    def _elem_random(self, rng: random.Random) -> float:
        return _clip(rng.uniform(self.min_value, self.max_value), self.min_value, self.max_value)

    def _elem_valid(self, x: Any) -> bool:
        return type(x) is float and self.min_value <= x <= self.max_value

    def _elem_normalize(self, x: Any) -> Optional[float]:
        if _is_real(x) and self.min_value <= x <= self.max_value:
            return float(x)
        return None

    def _elem_space(self) -> float:
        return math.inf if self.max_value > self.min_value else 1

    def _elem_cast(self, x: float) -> float:
        return float(x)

    def _to_unit(self, x: float) -> float:
        width = self.max_value - self.min_value
        return (x - self.min_value) / width if width > 0 else 0.0

    def _from_unit(self, u: float) -> float:
        return _clip(self.min_value + u * (self.max_value - self.min_value), self.min_value, self.max_value)

    @operator(3)
    def op3_swarm_parallel(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                           c: float = 1.0, c1: float = 0.5, c2: float = 0.5,
                           velocity: Any = 0) -> List[float]:
        """PSO per element in unit space, as FloatParameter: ``v' = c*v + r1*c1*(x1-x) + r2*c2*(x2-x)``.

        Then ``x += v'``.  ``r1, r2`` are shared by all elements; velocities are clipped to
        ``[-1, 1]`` and positions to the bounds.  Returns the new velocity list.
        """
        units = [[self._to_unit(x) for x in self.get_value(cfg)] for cfg in (child, p1, p2)]
        vs = [_clip(v, -1.0, 1.0) for v in _pso_velocity(self.name, units, rng, c, c1, c2, velocity)]
        self.set_value(child, [self._from_unit(_clip(u + v, 0.0, 1.0)) for u, v in zip(units[0], vs)])
        return vs


class IntegerArray(_BoundedArray):
    """``count`` integers in ``[min, max]`` (inclusive)."""

    kind = "int_array"
    element_type = "IntegerParameter"

    def _bound(self, name: str, x: Any) -> int:
        if isinstance(x, float) and not x.is_integer():
            raise ParameterError(f"parameter {name!r}: int_array bounds must be integers, got {x!r}")
        return int(x)

    def _elem_random(self, rng: random.Random) -> int:
        return rng.randint(self.min_value, self.max_value)

    def _elem_valid(self, x: Any) -> bool:
        return type(x) is int and self.min_value <= x <= self.max_value

    def _elem_normalize(self, x: Any) -> Optional[int]:
        if _is_real(x) and float(x).is_integer() and self.min_value <= x <= self.max_value:
            return int(x)
        return None

    def _elem_space(self) -> int:
        return self.max_value - self.min_value + 1

    def _elem_values(self) -> List[int]:
        return list(range(self.min_value, self.max_value + 1))

    def _elem_cast(self, x: float) -> int:
        return int(round(x))

    def _to_unit(self, x: int) -> float:
        """Integer ``k`` owns the unit interval ``[(k-min)/n, (k-min+1)/n)``; returns its centre."""
        return (x - self.min_value + 0.5) / (self.max_value - self.min_value + 1)

    def _from_unit(self, u: float) -> int:
        bins = self.max_value - self.min_value + 1
        return self.min_value + min(int(u * bins), bins - 1)

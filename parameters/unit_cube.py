"""The unit cube shared by numeric and ordinal parameters, and the number checks their operators use.

:class:`UnitCubeParameter` holds the operators written only in terms of ``get_unit_value`` /
``set_unit_value`` (Gaussian mutation, DE's linear combination, the PSO step); the numeric kinds of
:mod:`.numeric` and :mod:`.scaled_numeric` and the ordinal kind of :mod:`.categorical` inherit them.
The helpers below check real numbers and unit values and resolve ``op4_set_linear`` weights (also
used by the permutation, array and categorical operators).
"""
from __future__ import annotations

import math
import numbers
import random
from typing import Any, Optional, Sequence, Tuple

from .base import Config, ParameterError, PrimitiveParameter
from .operators import operator


def _is_real(x: Any) -> bool:
    """True for real numbers (int, float, numpy scalars), False for bools and everything else."""
    kind = type(x)
    if kind is float or kind is int:  # the common case, without the slower ABC check
        return True
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _clip01(u: float) -> float:
    return 0.0 if u < 0.0 else 1.0 if u > 1.0 else u


def _finite_unit(name: str, unit: Any) -> float:
    """Check a unit value given to ``set_unit_value``; NaN or non-numbers raise ParameterError."""
    if not _is_real(unit) or math.isnan(unit):
        raise ParameterError(f"parameter {name!r}: unit value must be a number in [0, 1], got {unit!r}")
    return _clip01(float(unit))


def _linear_weights(a: float, b: float, c: float,
                    weights: Optional[Sequence[float]]) -> Tuple[float, float, float]:
    """Resolve ``op4_set_linear`` weights: ``weights=(a, b, c)`` overrides the scalar keywords."""
    if weights is not None:
        if len(weights) != 3:
            raise ParameterError(f"op4_set_linear weights must have 3 entries, got {list(weights)!r}")
        a, b, c = weights
    return float(a), float(b), float(c)


class UnitCubeParameter(PrimitiveParameter):
    """Operators shared by every parameter with a unit-cube mapping (numeric and ordinal).

    Subclasses implement ``get_unit_value``/``set_unit_value``; the operators below only use those.
    """

    @operator(1)
    def op1_normal_mutation(self, child: Config, *, rng: random.Random, sigma: float = 0.1) -> None:
        """Add Gaussian noise (std ``sigma``, in unit space) to the value, clipped to the range."""
        self.set_unit_value(child, self.get_unit_value(child) + rng.gauss(0.0, float(sigma)))

    @operator(4)
    def op4_set_linear(self, child: Config, p1: Config, p2: Config, p3: Config, *,
                       rng: random.Random, a: float = 1.0, b: float = 1.0, c: float = -1.0,
                       weights: Optional[Sequence[float]] = None) -> None:
        """Set the value to ``a*p1 + b*p2 + c*p3`` in unit space, clipped.

        ``weights=(a, b, c)`` may be given instead of the three keywords.  Returns None.
        """
        a, b, c = _linear_weights(a, b, c, weights)
        u = a * self.get_unit_value(p1) + b * self.get_unit_value(p2) + c * self.get_unit_value(p3)
        self.set_unit_value(child, u)

    @operator(3)
    def op3_swarm(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                  c: float = 1.0, c1: float = 0.5, c2: float = 0.5, velocity: float = 0.0) -> float:
        """PSO step in unit space: ``v' = c*v + r1*c1*(p1-x) + r2*c2*(p2-x)``; ``x += v'``; returns ``v'``."""
        return self._swarm_step(child, p1, p2, rng, c, c1, c2, velocity, 0.0)

    def _swarm_step(self, child: Config, p1: Config, p2: Config, rng: random.Random, c: float,
                    c1: float, c2: float, velocity: Optional[float], sigma: float) -> float:
        """Shared PSO update; ``sigma > 0`` adds Gaussian noise to the new position (discrete kinds)."""
        v0 = 0.0 if velocity is None else float(velocity)
        if not math.isfinite(v0):
            raise ParameterError(f"parameter {self.name!r}: swarm velocity must be finite, got {velocity!r}")
        x = self.get_unit_value(child)
        r1, r2 = rng.random(), rng.random()
        v = c * v0 + r1 * c1 * (self.get_unit_value(p1) - x) + r2 * c2 * (self.get_unit_value(p2) - x)
        pos = x + v
        if sigma > 0:
            pos += rng.gauss(0.0, float(sigma))
        self.set_unit_value(child, pos)
        return v

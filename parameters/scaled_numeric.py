"""Numeric parameters searched on a transformed scale: log-scaled integers and floats, powers of two.

:class:`ScaledNumericParameter` is the base of these kinds: its unit cube is linear in ``_scale(value)``
while values stay in their own units.  ``log_int`` (:class:`LogIntegerParameter`) uses the shifted
scale ``log(v - min + 1)``, so any integer ``min`` is allowed; ``log_float``
(:class:`LogFloatParameter`) needs ``min > 0``; ``pow2`` (:class:`PowerOfTwoParameter`) has one equal
unit bucket per exponent and rounds to the nearest power of two on the log scale.  The unit-cube
mapping and the operators are those of :mod:`.numeric`.
"""
from __future__ import annotations

import math
import random
from typing import Any, List, Tuple

import numpy as np

from .base import Parameter, ParameterError
from .numeric import FloatParameter, IntegerParameter, NumericParameter


class ScaledNumericParameter(NumericParameter):
    """A numeric parameter searched on a transformed scale: subclasses define ``_scale``/``_unscale``.

    The unit cube is linear in ``_scale(value)``; ``legal_range`` and the stored values stay in
    the original (unscaled) units.
    """

    def _scale(self, v: float) -> float:
        raise NotImplementedError

    def _unscale(self, s: float) -> float:
        raise NotImplementedError

    #: drawn with ``random_value`` unless the scaled kind draws vectorised itself
    sample_values = Parameter.sample_values


class LogIntegerParameter(ScaledNumericParameter, IntegerParameter):
    """An ``int`` in ``[min, max]`` searched on the scale ``log(v - min + 1)`` (any integer ``min``)."""

    kind = "log_int"

    def _scale(self, v: float) -> float:
        return math.log(v - self.min + 1.0)

    def _unscale(self, s: float) -> float:
        return math.exp(s) + self.min - 1.0

    seed_value = NumericParameter.seed_value

    def random_value(self, rng: random.Random) -> int:
        """A value drawn uniformly in unit (log) space."""
        return self._unit_to_value(rng.random())


class LogFloatParameter(ScaledNumericParameter, FloatParameter):
    """A ``float`` in ``[min, max]`` with ``min > 0``, searched on a log scale."""

    kind = "log_float"

    def _check_range(self) -> None:
        if self.min <= 0:
            raise ParameterError(f"parameter {self.name!r}: log_float needs min > 0, got {self.min!r}; "
                                 f"use a positive min or a FloatParameter")

    def _scale(self, v: float) -> float:
        return math.log(v)

    def _unscale(self, s: float) -> float:
        return math.exp(s)

    def sample_values(self, rng: random.Random, np_rng: Any, count: int) -> List[Any]:
        lo, hi = self.min, self.max
        x = np.exp(np_rng.uniform(math.log(lo), math.log(hi), size=count))
        return np.clip(x, lo, hi).tolist()

    def _unit_step(self, value: Any, sigma: float, rng: random.Random) -> float:
        lo, hi = self.legal_range()
        a, b = math.log(lo), math.log(hi)
        u = (math.log(value) - a) / (b - a) + rng.gauss(0.0, sigma)
        x = math.exp(a + min(max(u, 0.0), 1.0) * (b - a))
        return float(min(max(x, lo), hi))


def _is_pow2(x: Any) -> bool:
    return isinstance(x, int) and x >= 1 and x & (x - 1) == 0


class PowerOfTwoParameter(ScaledNumericParameter, IntegerParameter):
    """An ``int`` power of two in ``[min, max]`` (both powers of two >= 1); unit value over the exponent."""

    kind = "pow2"

    def _check_range(self) -> None:
        for field, x in (("min", self.min), ("max", self.max)):
            if not _is_pow2(x):
                raise ParameterError(f"parameter {self.name!r}: pow2 {field} must be a power of two "
                                     f">= 1, got {x!r}")

    @property
    def _exponents(self) -> Tuple[int, int]:
        return self.min.bit_length() - 1, self.max.bit_length() - 1

    def _scale(self, v: float) -> float:
        return math.log2(v)

    def _unscale(self, s: float) -> float:
        return 2.0 ** s

    def _on_grid(self, value: Any) -> bool:
        return _is_pow2(value)

    def _round(self, value: Any) -> int:
        """Nearest power of two on the log scale (ties go up); exact for ints."""
        if isinstance(value, int):
            low = 1 << (value.bit_length() - 1)
            return low if value * value < 2 * low * low else low * 2
        m, e = math.frexp(value)  # value = m * 2**e, 0.5 <= m < 1
        return 1 << (e - 1) if m < math.sqrt(0.5) else 1 << e

    def search_space_size(self) -> int:
        lo, hi = self._exponents
        return hi - lo + 1

    def _domain(self, limit: int) -> List[int]:
        lo, hi = self._exponents
        return [1 << k for k in range(lo, hi + 1)]

    def sample_values(self, rng: random.Random, np_rng: Any, count: int) -> List[Any]:
        lo, hi = self.min.bit_length() - 1, self.max.bit_length() - 1
        return [1 << e for e in np_rng.integers(lo, hi + 1, size=count).tolist()]

    def seed_value(self) -> int:
        lo, hi = self._exponents
        return 1 << ((lo + hi) // 2)

    def random_value(self, rng: random.Random) -> int:
        """A power of two with a uniformly random exponent."""
        lo, hi = self._exponents
        return 1 << rng.randint(lo, hi)

    def _value_to_unit(self, value: Any) -> float:
        lo, hi = self._exponents
        return (value.bit_length() - 1 - lo + 0.5) / (hi - lo + 1)

    def _unit_to_value(self, unit: float) -> int:
        lo, hi = self._exponents
        n = hi - lo + 1
        return 1 << (lo + min(int(math.floor(unit * n)), n - 1))

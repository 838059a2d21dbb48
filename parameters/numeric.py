"""Numeric parameters: integers, floats, log-scaled and power-of-two values.

Every class here is a :class:`PrimitiveParameter`: a value maps to a *unit value* in ``[0, 1]``
and back, and most operators work in that unit space, so a log-scaled parameter is searched on
its log scale for free.

Unit-cube mapping
-----------------
* continuous kinds (``float``, ``log_float``): ``unit = (s(v) - s(min)) / (s(max) - s(min))``
  where ``s`` is the scale (identity or ``log``); a constant range (``min == max``) maps to 0.5.
* integer kinds (``int``, ``log_int``): the unit interval is split into one *bucket* per
  integer, the bucket of ``v`` spanning ``s(v - 0.5) .. s(v + 0.5)``; ``get_unit_value`` returns
  the bucket's centre, so ``set_unit_value(get_unit_value(v))`` gives back ``v`` exactly (for
  ranges below about 2**50 values).  ``int`` buckets are equal; ``log_int`` ones shrink.
* ``pow2``: one equal bucket per exponent.

``LogIntegerParameter`` uses the shifted scale ``s(v) = log(v - min + 1)``, so any integer
``min`` (including 0 and negatives) is allowed, like OpenTuner's.  ``LogFloatParameter`` needs
``min > 0``; ``PowerOfTwoParameter`` needs ``min`` and ``max`` to be integer powers of two >= 1.

Operators: ``op1_normal_mutation``, ``op4_set_linear`` and ``op3_swarm`` work in unit space
(clipped to ``[0, 1]``); ``op1_scale``, ``op3_difference`` and ``opn_sum`` work on the values
themselves, as the thesis describes them, and the result is clipped and rounded to the nearest
legal value (nearest on the scale for ``pow2``).  Every operator leaves a legal value.
"""
from __future__ import annotations

import math
import numbers
import random
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .base import ARITY_N, Config, Parameter, ParameterError, PrimitiveParameter, operator


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


class NumericParameter(UnitCubeParameter):
    """A number in ``[min, max]`` (abstract: use IntegerParameter, FloatParameter or a scaled kind).

    Subclasses set ``_integral`` (values are Python ``int``) and may override ``_scale``/``_unscale``.
    """

    _integral: ClassVar[bool] = False

    def __init__(self, name: str, min: Any, max: Any) -> None:  # noqa: A002 - JSON field names
        super().__init__(name)
        if not self.kind:
            raise TypeError(f"{type(self).__name__} is abstract; use IntegerParameter, FloatParameter "
                            f"or another concrete kind")
        self.min = self._check_bound("min", min)
        self.max = self._check_bound("max", max)
        if self.min > self.max:
            raise ParameterError(f"parameter {name!r}: min {self.min!r} > max {self.max!r}; "
                                 f"swap them or fix the range")
        self._check_range()

    # ---- construction helpers -------------------------------------------------
    def _check_bound(self, field: str, x: Any) -> Any:
        """Validate and coerce a ``min``/``max`` argument (called by ``__init__``)."""
        if not _is_real(x) or not math.isfinite(x):
            raise ParameterError(f"parameter {self.name!r}: {field} must be a finite number, got {x!r}")
        if not self._integral:
            return float(x)
        if isinstance(x, numbers.Integral):
            return int(x)
        if float(x).is_integer():
            return int(x)
        raise ParameterError(f"parameter {self.name!r}: {field} must be an integer for kind "
                             f"{self.kind!r}, got {x!r}")

    def _check_range(self) -> None:
        """Kind-specific range checks (called at the end of ``__init__``)."""
        if not self._integral and not math.isfinite(self.max - self.min):
            raise ParameterError(f"parameter {self.name!r}: range [{self.min}, {self.max}] is too "
                                 f"wide for a float; narrow it")

    # ---- scale (identity here; ScaledNumericParameter overrides) --------------
    def _scale(self, v: float) -> float:
        return float(v)

    def _unscale(self, s: float) -> float:
        return s

    # ---- value rules ----------------------------------------------------------
    def legal_range(self) -> Tuple[Any, Any]:
        """``(min, max)``, both inclusive."""
        return self.min, self.max

    def is_valid(self, value: Any) -> bool:
        """True for a number of the right type inside the range (bool is never valid)."""
        if not _is_real(value):
            return False
        if self._integral:
            if not isinstance(value, int):
                return False
        elif not math.isfinite(value):
            return False
        return self.min <= value <= self.max and self._on_grid(value)

    def _on_grid(self, value: Any) -> bool:
        """Extra legality rule (powers of two); True by default."""
        return True

    def normalize_value(self, value: Any) -> Any:
        """Clip a number into the range and round it to the nearest legal value; non-numbers raise."""
        if not _is_real(value):
            raise ParameterError(f"parameter {self.name!r}: expected a number, got {value!r}")
        if type(value) is not float and type(value) is not int:  # numpy scalars, Fractions ...
            value = int(value) if isinstance(value, numbers.Integral) else float(value)
        if type(value) is float and math.isnan(value):
            raise ParameterError(f"parameter {self.name!r}: expected a number, got NaN")
        if value <= self.min:
            return self.min
        if value >= self.max:
            return self.max
        return self._round(value)

    def _round(self, value: Any) -> Any:
        """Round an in-range number to a legal value (ints: half up; floats: as is)."""
        if not self._integral:
            return float(value)
        if isinstance(value, int):
            return value
        return int(math.floor(value + 0.5))

    def search_space_size(self) -> float:
        """Number of legal values (``inf`` for a non-constant float range)."""
        if self._integral:
            return self.max - self.min + 1
        return 1 if self.min == self.max else math.inf

    def _domain(self, limit: int) -> List[Any]:
        """Integers ``min..max``; a constant float range holds its one value."""
        return list(range(self.min, self.max + 1)) if self._integral else [self.min]

    def to_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "min": self.min, "max": self.max}

    def describe(self) -> str:
        return f"{self.kind} [{self.min!r}, {self.max!r}]"

    def seed_value(self) -> Any:
        """The midpoint of the range on its scale, rounded down to a legal value (deterministic)."""
        lo, hi = self._scale(self.min), self._scale(self.max)
        x = self._unscale(lo + (hi - lo) / 2.0)
        if self._integral:
            x = math.floor(x + 1e-9)
        return self.normalize_value(x)

    def random_value(self, rng: random.Random) -> Any:
        """A value drawn uniformly on the parameter's scale (one ``rng.random()`` call)."""
        return self._unit_to_value(rng.random())

    # ---- unit cube --------------------------------------------------------------
    def get_unit_value(self, config: Mapping[str, Any]) -> float:
        """The value's position in ``[0, 1]`` (bucket centre for integer kinds)."""
        return self._value_to_unit(self.normalize_value(self.get_value(config)))

    def set_unit_value(self, config: Config, unit: float) -> None:
        """Store the legal value at ``unit`` (clipped to ``[0, 1]``; NaN raises ParameterError)."""
        self.set_value(config, self._unit_to_value(_finite_unit(self.name, unit)))

    def _unit_bounds(self) -> Tuple[float, float]:
        """Scaled coordinates of unit 0 and unit 1."""
        if self._integral:
            return self._scale(self.min - 0.5), self._scale(self.max + 0.5)
        return self._scale(self.min), self._scale(self.max)

    def _value_to_unit(self, value: Any) -> float:
        lo, hi = self._unit_bounds()
        if hi == lo:
            return 0.5
        if self._integral:
            s = (self._scale(value - 0.5) + self._scale(value + 0.5)) / 2.0
        else:
            s = self._scale(value)
        return _clip01((s - lo) / (hi - lo))

    def _unit_to_value(self, unit: float) -> Any:
        lo, hi = self._unit_bounds()
        if unit >= 1.0:   # before the degenerate check: a range too narrow to scale still has its max
            return self.max
        if hi == lo or unit <= 0.0:
            return self.min
        return self.normalize_value(self._unscale(lo + unit * (hi - lo)))

    # ---- value-space operators (thesis Table 4.3, NumericParameter) -----------
    @operator(1)
    def op1_scale(self, child: Config, *, rng: random.Random, k: float = 2.0) -> None:
        """Multiply the value by ``k``, then clip and round to a legal value."""
        self.set_value(child, self.normalize_value(self.get_value(child) * k))

    @operator(3)
    def op3_difference(self, child: Config, p1: Config, p2: Config, *, rng: random.Random) -> None:
        """Set the value to ``p1 - p2``, clipped and rounded to a legal value."""
        self.set_value(child, self.normalize_value(self.get_value(p1) - self.get_value(p2)))

    @operator(ARITY_N)
    def opn_sum(self, child: Config, parents: List[Config], *, rng: random.Random) -> None:
        """Set the value to the sum of the parents' values, clipped and rounded to a legal value."""
        total: Any = 0
        for p in parents:
            total = total + self.get_value(p)
        self.set_value(child, self.normalize_value(total))


class IntegerParameter(NumericParameter):
    """An ``int`` in ``[min, max]``; unit buckets of equal width, one per integer."""

    kind = "int"
    _integral = True
    normal_type = int

    def seed_value(self) -> int:
        """The midpoint ``min + (max - min) // 2`` (exact)."""
        return self.min + (self.max - self.min) // 2

    def random_value(self, rng: random.Random) -> int:
        """A uniformly random integer in the range (exact even for huge ranges)."""
        return rng.randint(self.min, self.max)

    @operator(3)
    def op3_swarm(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                  c: float = 1.0, c1: float = 0.5, c2: float = 0.5, velocity: float = 0.0,
                  sigma: float = 0.1) -> float:
        """PSO step in unit space plus Gaussian noise (std ``sigma``), rounded; returns the new velocity."""
        return self._swarm_step(child, p1, p2, rng, c, c1, c2, velocity, float(sigma))

    def sample_values(self, rng: random.Random, np_rng: Any, count: int) -> List[Any]:
        if self.max - self.min < 2 ** 62:
            return np_rng.integers(self.min, self.max + 1, size=count).tolist()
        return super().sample_values(rng, np_rng, count)


class FloatParameter(NumericParameter):
    """A ``float`` in ``[min, max]`` (an ``int`` is accepted as valid and normalized to float)."""

    kind = "float"
    _integral = False
    normal_type = float

    def sample_values(self, rng: random.Random, np_rng: Any, count: int) -> List[Any]:
        lo, hi = self.min, self.max
        return np.minimum(np_rng.uniform(lo, hi, size=count), hi).tolist()

    def _unit_step(self, value: Any, sigma: float, rng: random.Random) -> float:
        lo, hi = self.legal_range()
        u = (value - lo) / (hi - lo) + rng.gauss(0.0, sigma)
        x = lo + min(max(u, 0.0), 1.0) * (hi - lo)
        return float(min(max(x, lo), hi))


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

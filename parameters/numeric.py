"""Numeric parameters: the range, rounding and unit-cube mapping of every numeric kind; ``int`` and ``float``.

:class:`NumericParameter` is a :class:`PrimitiveParameter`: a value maps to a *unit value* in
``[0, 1]`` and back, and most operators work in that unit space, so a log-scaled parameter is
searched on its log scale for free.  This module holds it and the linear kinds
(:class:`IntegerParameter`, :class:`FloatParameter`); the log-scaled and power-of-two kinds are in
:mod:`.scaled_numeric`, and the unit-space operators they share with ordinal parameters in
:mod:`.unit_cube`.

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
from typing import Any, ClassVar, Dict, List, Mapping, Tuple

import numpy as np

from .base import Config, ParameterError
from .operators import ARITY_N, operator
from .unit_cube import UnitCubeParameter, _clip01, _finite_unit, _is_real


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

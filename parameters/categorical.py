"""Unordered categorical parameters: booleans, switches and enums (ordinals: :mod:`.ordinal`;
algorithm selectors: :mod:`.selector`).

Value types (strict: ``is_valid`` checks the exact type, ``normalize_value`` coerces):

* ``bool``      -- ``True``/``False`` (``1``/``0`` are normalized, never valid);
* ``switch``    -- an ``int`` in ``0 .. n-1`` (``True`` is not a valid switch value);
* ``enum``      -- one of ``options`` (JSON scalars), same type as the option (``1.0`` is not ``1``).

Operators on the unordered kinds (:class:`CategoricalParameter`):

* ``op3_swarm`` keeps the child's value or copies ``p1``'s or ``p2``'s, with probabilities
  proportional to ``c``, ``c1``, ``c2``; it returns ``velocity`` unchanged (booleans instead do the
  thesis' sigmoid PSO step and return the new velocity);
* ``op4_set_linear`` simulates ``a*A + b*B + c*C`` as OpenTuner does: the terms are reordered so one
  weight is 1 and the other two are opposite; the child gets that parent's value, "moved" when the
  other two parents differ (booleans flip, switch/enum take another option); any other weight
  pattern gives a random value.
"""
from __future__ import annotations

import math
import numbers
import random
from typing import Any, Dict, List, Optional, Sequence

from .base import ComplexParameter, Config, ParameterError
from .unit_cube import _is_real, _linear_weights
from .operators import operator
from .option_lists import _check_int, _check_options, _Index
from .value_keys import value_key


def _sigmoid(v: float) -> float:
    if v >= 0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)
    return e / (1.0 + e)


# ---- unordered kinds ------------------------------------------------------------------------
class CategoricalParameter(ComplexParameter):
    """Shared operators of the unordered kinds (abstract; not JSON-registered)."""

    def _moved(self, value: Any, rng: random.Random) -> Any:
        """``value`` shifted by a non-zero 'difference' (used by ``op4_set_linear``)."""
        return self.random_value(rng)

    @operator(3)
    def op3_swarm(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                  c: float = 1.0, c1: float = 0.5, c2: float = 0.5, velocity: Any = 0.0) -> Any:
        """Keep the value or copy p1's or p2's, with odds ``c : c1 : c2``; returns ``velocity`` unchanged."""
        weights = [max(float(w), 0.0) for w in (c, c1, c2)]
        if sum(weights) <= 0:
            return velocity
        pick = rng.choices((None, p1, p2), weights=weights, k=1)[0]
        if pick is not None:
            self.set_value(child, self.copy_value(self.get_value(pick)))
        return velocity

    @operator(4)
    def op4_set_linear(self, child: Config, p1: Config, p2: Config, p3: Config, *,
                       rng: random.Random, a: float = 1.0, b: float = 1.0, c: float = -1.0,
                       weights: Optional[Sequence[float]] = None) -> None:
        """Simulate ``a*p1 + b*p2 + c*p3``: copy the weight-1 parent, moved if the other two differ."""
        ws = _linear_weights(a, b, c, weights)
        vals = [self.get_value(p) for p in (p1, p2, p3)]
        for i in range(3):
            j, k = [x for x in range(3) if x != i]
            if ws[i] == 1.0 and ws[j] == -ws[k]:
                value = self.copy_value(vals[i])
                if ws[j] != 0 and not (type(vals[j]) is type(vals[k]) and vals[j] == vals[k]):
                    value = self._moved(value, rng)
                self.set_value(child, value)
                return
        self.set_value(child, self.random_value(rng))


class BooleanParameter(CategoricalParameter):
    """``True`` or ``False``; seed value ``False``."""

    kind = "bool"
    encoding = "category"
    key_style = "plain"

    def seed_value(self) -> bool:
        return False

    def random_value(self, rng: random.Random) -> bool:
        return rng.random() < 0.5

    def is_valid(self, value: Any) -> bool:
        return isinstance(value, bool)

    def normalize_value(self, value: Any) -> bool:
        """Booleans as is; the numbers 0 and 1 become False/True; anything else raises."""
        if isinstance(value, bool):
            return value
        if isinstance(value, numbers.Real) and value in (0, 1):
            return bool(value)
        raise ParameterError(f"parameter {self.name!r}: expected true or false, got {value!r}")

    def search_space_size(self) -> int:
        return 2

    def _domain(self, limit: int) -> List[bool]:
        return [False, True]

    def neighbours(self, value: Any, rng: random.Random, k: int) -> List[bool]:
        return [not value]

    def sample_values(self, rng: random.Random, np_rng: Any, count: int) -> List[bool]:
        return (np_rng.random(count) < 0.5).tolist()

    def to_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "name": self.name}

    def _moved(self, value: Any, rng: random.Random) -> bool:
        return not value

    @operator(1)
    def op1_flip(self, child: Config, *, rng: random.Random) -> None:
        """Flip the value."""
        self.set_value(child, not self.normalize_value(self.get_value(child)))

    @operator(3)
    def op3_swarm(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                  c: float = 1.0, c1: float = 0.5, c2: float = 0.5, velocity: float = 0.0) -> float:
        """PSO step with True=1, False=0; the value becomes True with probability sigmoid(v'); returns v'."""
        v0 = 0.0 if velocity is None else float(velocity)
        if not math.isfinite(v0):
            raise ParameterError(f"parameter {self.name!r}: swarm velocity must be finite, got {velocity!r}")
        x = float(self.normalize_value(self.get_value(child)))
        b1 = float(self.normalize_value(self.get_value(p1)))
        b2 = float(self.normalize_value(self.get_value(p2)))
        r1, r2 = rng.random(), rng.random()
        v = c * v0 + r1 * c1 * (b1 - x) + r2 * c2 * (b2 - x)
        self.set_value(child, rng.random() < _sigmoid(v))
        return v


class _IndexedChoice(CategoricalParameter):
    """Common code of switch and enum: ``_count()`` options, found by ``_find``; uniform random choice."""

    def _count(self) -> int:
        raise NotImplementedError

    def _option(self, i: int) -> Any:
        raise NotImplementedError

    def _find(self, value: Any, strict: bool) -> Optional[int]:
        raise NotImplementedError

    def seed_value(self) -> Any:
        return self._option(0)

    def random_value(self, rng: random.Random) -> Any:
        return self._option(rng.randrange(self._count()))

    def is_valid(self, value: Any) -> bool:
        return self._find(value, strict=True) is not None

    def normalize_value(self, value: Any) -> Any:
        """The option equal to ``value`` (``3.0`` finds ``3``); anything else raises ParameterError."""
        i = self._find(value, strict=False)
        if i is None:
            raise ParameterError(f"parameter {self.name!r}: {value!r} is not one of its values "
                                 f"({self.describe()})")
        return self._option(i)

    def search_space_size(self) -> int:
        return self._count()

    def _domain(self, limit: int) -> List[Any]:
        return [self._option(i) for i in range(self._count())]

    def sample_values(self, rng: random.Random, np_rng: Any, count: int) -> List[Any]:
        return [self._option(i) for i in np_rng.integers(0, self._count(), size=count).tolist()]

    def neighbours(self, value: Any, rng: random.Random, k: int) -> List[Any]:
        """Every other option (``k`` random ones when there are more)."""
        others = [o for o in self._domain(k) if value_key(o) != value_key(value)]
        return others if len(others) <= k else rng.sample(others, k)

    def _moved(self, value: Any, rng: random.Random) -> Any:
        """Another option than ``value``, uniformly (the same one when there is only one)."""
        n = self._count()
        i = self._find(value, strict=False) or 0
        return self._option((i + rng.randrange(1, n)) % n) if n > 1 else value


class SwitchParameter(_IndexedChoice):
    """An unordered choice among ``0 .. n-1`` (an ``int``); seed value 0."""

    kind = "switch"
    encoding = "category"
    key_style = "plain"

    def __init__(self, name: str, n: int) -> None:
        super().__init__(name)
        self.n = _check_int(name, "n", n, 1)

    def _count(self) -> int:
        return self.n

    def _option(self, i: int) -> int:
        return i

    def _find(self, value: Any, strict: bool) -> Optional[int]:
        if not _is_real(value):
            return None
        if strict and type(value) is not int:
            return None
        if isinstance(value, float) and not value.is_integer():
            return None
        return int(value) if 0 <= value < self.n else None

    def to_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "n": self.n}

    def describe(self) -> str:
        return f"switch 0..{self.n - 1}"


class EnumParameter(_IndexedChoice):
    """An unordered choice among ``options`` (distinct JSON scalars); seed value ``options[0]``."""

    kind = "enum"
    encoding = "category"

    def __init__(self, name: str, options: Sequence[Any]) -> None:
        super().__init__(name)
        self.options = _check_options(name, "options", options)
        self._index = _Index(self.options)

    def _count(self) -> int:
        return len(self.options)

    def _option(self, i: int) -> Any:
        return self.options[i]

    def _find(self, value: Any, strict: bool) -> Optional[int]:
        return self._index.find(value, strict)

    def to_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "options": list(self.options)}

    def describe(self) -> str:
        return f"enum {self.options!r}"

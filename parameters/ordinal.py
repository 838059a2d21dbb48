"""The ordinal parameter: one of an ordered list of numbers or strings.

A value is one of ``values`` (same type as the entry: ``1.0`` is not ``1``).  Unlike OpenTuner's
categoricals it is a :class:`~.base.PrimitiveParameter` (through ``UnitCubeParameter``): its unit
value is the index's bucket centre ``(i + 0.5) / n``, or with ``log=True`` the position of
``log(value)`` between ``log(values[0])`` and ``log(values[-1])``, so unit-cube techniques and BO
distances can use the order.  The unordered choices (bool, switch, enum) are in :mod:`.categorical`.
"""
from __future__ import annotations

import bisect
import math
import numbers
import random
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from .base import Config, ParameterError
from .unit_cube import UnitCubeParameter, _clip01, _finite_unit, _is_real
from .operators import operator
from .option_lists import _check_options, _Index


class OrdinalParameter(UnitCubeParameter):
    """One of an ordered list of numbers or strings; unit value over the index (or log value).

    ``log=True`` needs positive numbers in increasing order.  Seed value: the middle entry
    (``values[(n - 1) // 2]``).  Operators: those of ``UnitCubeParameter`` (normal mutation,
    linear combination and PSO in unit space; ``op3_swarm`` adds Gaussian noise ``sigma``).
    """

    kind = "ordinal"

    def __init__(self, name: str, values: Sequence[Any], log: bool = False) -> None:
        super().__init__(name)
        self.values = _check_options(name, "values", values)
        numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in self.values)
        if not numeric and not all(isinstance(v, str) for v in self.values):
            raise ParameterError(f"parameter {name!r}: ordinal values must be all numbers or all "
                                 f"strings, got {self.values!r}")
        if not isinstance(log, bool):
            raise ParameterError(f"parameter {name!r}: log must be true or false, got {log!r}")
        if log and not (numeric and self.values[0] > 0
                        and all(x < y for x, y in zip(self.values, self.values[1:]))):
            raise ParameterError(f"parameter {name!r}: log=True needs positive numbers in increasing "
                                 f"order, got {self.values!r}; sort them or use log=False")
        self.log = log
        self._numeric = numeric
        self._index = _Index(self.values)
        self._pos = self._positions()

    def _positions(self) -> List[float]:
        """Unit value of each entry (called once by ``__init__``; raises if log positions collide)."""
        n = len(self.values)
        if not self.log:
            return [(i + 0.5) / n for i in range(n)]
        if n == 1:
            return [0.5]
        lo, hi = math.log(self.values[0]), math.log(self.values[-1])
        pos = [0.0 if hi == lo else _clip01((math.log(v) - lo) / (hi - lo)) for v in self.values]
        if any(not a < (a + b) / 2.0 < b for a, b in zip(pos, pos[1:])):
            raise ParameterError(f"parameter {self.name!r}: values {self.values!r} are too close together "
                                 f"on a log scale; drop near-duplicates or use log=False")
        return pos

    def legal_range(self) -> Tuple[Any, Any]:
        """``(values[0], values[-1])``: the ends of the order."""
        return self.values[0], self.values[-1]

    def seed_value(self) -> Any:
        return self.values[(len(self.values) - 1) // 2]

    def random_value(self, rng: random.Random) -> Any:
        """A uniformly random entry (uniform over the index, also with ``log=True``)."""
        return self.values[rng.randrange(len(self.values))]

    def is_valid(self, value: Any) -> bool:
        return self._index.find(value, strict=True) is not None

    def normalize_value(self, value: Any) -> Any:
        """The equal entry; for numeric ordinals a number becomes the nearest entry; else raises."""
        i = self._index.find(value, strict=False)
        if i is not None:
            return self.values[i]
        if self._numeric and _is_real(value) and not math.isnan(value):
            if self.log:
                x = math.log(value) if value > 0 else -math.inf
                dist = [abs(math.log(v) - x) for v in self.values]
            else:
                dist = [abs(v - value) for v in self.values]
            return self.values[dist.index(min(dist))]
        raise ParameterError(f"parameter {self.name!r}: {value!r} is not one of its values "
                             f"({self.describe()})")

    def search_space_size(self) -> int:
        return len(self.values)

    def _domain(self, limit: int) -> List[Any]:
        return list(self.values)

    def _grid_values(self) -> List[Any]:
        return list(self.values)

    def sample_values(self, rng: random.Random, np_rng: Any, count: int) -> List[Any]:
        opts = self.values
        return [opts[i] for i in np_rng.integers(0, len(opts), size=count).tolist()]

    def to_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "values": list(self.values), "log": self.log}

    def describe(self) -> str:
        log = ", log" if self.log else ""
        return f"ordinal {len(self.values)} values {self.values[0]!r}..{self.values[-1]!r}{log}"

    def get_unit_value(self, config: Mapping[str, Any]) -> float:
        """Position of the value in ``[0, 1]`` (see the class docstring)."""
        i = self._index.find(self.normalize_value(self.get_value(config)), strict=False)
        assert i is not None  # normalize_value returns one of the entries
        return self._pos[i]

    def set_unit_value(self, config: Config, unit: float) -> None:
        """Store the entry whose position is nearest to ``unit`` (clipped; NaN raises)."""
        u = _finite_unit(self.name, unit)
        n = len(self.values)
        if not self.log:
            i = min(int(math.floor(u * n)), n - 1)
        else:
            mids = [(a + b) / 2.0 for a, b in zip(self._pos, self._pos[1:])]
            i = bisect.bisect_right(mids, u)
        self.set_value(config, self.values[i])

    @operator(3)
    def op3_swarm(self, child: Config, p1: Config, p2: Config, *, rng: random.Random,
                  c: float = 1.0, c1: float = 0.5, c2: float = 0.5, velocity: float = 0.0,
                  sigma: float = 0.1) -> float:
        """PSO step in unit space plus Gaussian noise (std ``sigma``), snapped to an entry; returns v'."""
        return self._swarm_step(child, p1, p2, rng, c, c1, c2, velocity, float(sigma))

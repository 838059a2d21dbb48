"""Single-parameter neighbours for the acquisition local search (BaCO §3.3).

A neighbour differs from a configuration in exactly one parameter and stays feasible:

* parameters in an enumerated constraint group take values from the chain of trees' feasible
  alternatives (ordered kinds prefer the nearest values in the domain, then random others);
* int, log_int, pow2 and ordinal: the values one and two steps away, plus Gaussian steps in unit
  space (sigma 0.05 and 0.2) for wide ranges; float and log_float: Gaussian unit steps
  (sigma 0.01, 0.05, 0.2);
* bool flips; switch and enum take every other option (a random subset when many);
* permutation and schedule: every adjacent swap plus random swaps (schedules keep valid orders only);
* arrays change one element (boolean flip, or a Gaussian unit step);
* selector (no natural move): random values.

Parameters in a non-enumerated constraint group are checked with the group's constraints.
At most ``per_param`` neighbours are produced per parameter.
"""
from __future__ import annotations

import bisect
import math
import random
from typing import Any, Dict, List, Optional, Tuple

from ...parameters import (ArrayParameter, BooleanArray, BooleanParameter, ConfigurationManipulator,
                           EnumParameter, FeasibleSpace, FloatArray, OrdinalParameter, Parameter,
                           PermutationParameter, PrimitiveParameter, SwitchParameter)
from .distances import vkey

Config = Dict[str, Any]
ORDERED_LIMIT = 2000
_FLOAT_SIGMAS = (0.01, 0.05, 0.2)


def _gauss_float(param: PrimitiveParameter, value: float, sigma: float, rng: random.Random) -> float:
    """A Gaussian step of ``sigma`` in unit space for float and log_float parameters."""
    lo, hi = param.legal_range()
    if param.kind == "log_float":
        a, b = math.log(lo), math.log(hi)
        u = (math.log(value) - a) / (b - a) + rng.gauss(0.0, sigma)
        x = math.exp(a + min(max(u, 0.0), 1.0) * (b - a))
    elif param.kind == "float":
        u = (value - lo) / (hi - lo) + rng.gauss(0.0, sigma)
        x = lo + min(max(u, 0.0), 1.0) * (hi - lo)
    else:
        cfg = {param.name: value}
        param.set_unit_value(cfg, param.get_unit_value(cfg) + rng.gauss(0.0, sigma))
        return cfg[param.name]
    return float(min(max(x, lo), hi))


class NeighbourGenerator:
    """Builds feasible single-parameter neighbours of a configuration (called by local search)."""

    def __init__(self, manipulator: ConfigurationManipulator, cot: FeasibleSpace, per_param: int = 10) -> None:
        self.params = manipulator.parameters
        self.cot = cot
        self.per_param = per_param
        self._ordered: Dict[str, Optional[List[Any]]] = {}
        self._pos: Dict[str, Dict[Any, int]] = {}
        self._units: Dict[str, List[float]] = {}
        for p in self.params:
            dom = None
            if isinstance(p, (PrimitiveParameter,)) and not isinstance(p, OrdinalParameter):
                dom = p.domain(ORDERED_LIMIT)
            elif isinstance(p, OrdinalParameter):
                dom = list(p.values)
            self._ordered[p.name] = dom
            if dom is not None:
                self._pos[p.name] = {vkey(v): i for i, v in enumerate(dom)}
                if isinstance(p, PrimitiveParameter):
                    self._units[p.name] = [p.get_unit_value({p.name: v}) for v in dom]

    def neighbours(self, config: Config, rng: random.Random) -> List[Tuple[int, Any, Config]]:
        """Feasible configurations differing from ``config`` in one parameter, as
        ``(parameter index, new value, configuration)`` triples."""
        out: List[Tuple[int, Any, Config]] = []
        for i, p in enumerate(self.params):
            alts = self.cot.alternatives(config, p.name)
            if alts is not None:                 # an enumerated group: its feasible values
                values = self._pick(p, config[p.name], alts, rng)
                out.extend((i, v, self._with(config, p.name, v)) for v in values)
                continue
            group = self.cot.group_of.get(p.name)
            for v in self._values(p, config[p.name], rng):
                cfg = self._with(config, p.name, v)
                if group is None or group.contains(cfg):
                    out.append((i, v, cfg))
        return out

    @staticmethod
    def _with(config: Config, name: str, value: Any) -> Config:
        cfg = dict(config)
        cfg[name] = value
        return cfg

    def _pick(self, p: Parameter, current: Any, alts: List[Any], rng: random.Random) -> List[Any]:
        """Choose up to ``per_param`` of the feasible alternatives, nearest first for ordered kinds."""
        k = self.per_param
        if len(alts) <= k:
            return alts
        pos = self._pos.get(p.name)
        if pos is not None and vkey(current) in pos:
            here = pos[vkey(current)]
            near = sorted(alts, key=lambda v: abs(pos.get(vkey(v), 0) - here))
            chosen, rest = near[: k // 2], near[k // 2:]
            return chosen + rng.sample(rest, k - len(chosen))
        return rng.sample(alts, k)

    def _values(self, p: Parameter, value: Any, rng: random.Random) -> List[Any]:
        k = self.per_param
        if isinstance(p, BooleanParameter):
            return [not value]
        if isinstance(p, (SwitchParameter, EnumParameter)):
            opts = list(range(p.n)) if isinstance(p, SwitchParameter) else list(p.options)
            others = [o for o in opts if vkey(o) != vkey(value)]
            return others if len(others) <= k else rng.sample(others, k)
        if isinstance(p, PrimitiveParameter):
            return self._numeric(p, value, rng)
        if isinstance(p, PermutationParameter):
            return self._permutation(p, value, rng)
        if isinstance(p, ArrayParameter):
            return self._array(p, value, rng)
        return [p.random_value(rng) for _ in range(min(k, 4))]

    def _numeric(self, p: PrimitiveParameter, value: Any, rng: random.Random) -> List[Any]:
        dom = self._ordered.get(p.name)
        k = self.per_param
        if dom is None:                          # float kinds: Gaussian steps in unit space
            out = []
            for t in range(k):
                v = _gauss_float(p, value, _FLOAT_SIGMAS[t % 3], rng)
                if v != value:
                    out.append(v)
            return out
        i = self._pos[p.name].get(vkey(value))
        if i is None:
            return []
        n = len(dom)
        if n - 1 <= k:
            return [v for j, v in enumerate(dom) if j != i]
        picked = {j for j in (i - 1, i + 1, i - 2, i + 2) if 0 <= j < n}
        units = self._units[p.name]
        for t in range(2 * k):
            if len(picked) >= k:
                break
            u = units[i] + rng.gauss(0.0, 0.05 if t % 2 == 0 else 0.2)
            j = min(bisect.bisect_left(units, u), n - 1)
            if j > 0 and units[j] - u > u - units[j - 1]:
                j -= 1
            if j != i:
                picked.add(j)
        return [dom[j] for j in sorted(picked)]

    def _permutation(self, p: PermutationParameter, value: List[Any], rng: random.Random) -> List[Any]:
        n = len(value)
        if n < 2:
            return []
        pairs = [(i, i + 1) for i in range(n - 1)]
        extra = max(self.per_param, n - 1) - len(pairs)
        for _ in range(max(extra, 0)):
            i, j = rng.sample(range(n), 2)
            pairs.append((min(i, j), max(i, j)))
        out, seen = [], set()
        for i, j in pairs:
            if (i, j) in seen:
                continue
            seen.add((i, j))
            v = list(value)
            v[i], v[j] = v[j], v[i]
            if p.is_valid(v):
                out.append(v)
        return out

    def _array(self, p: ArrayParameter, value: List[Any], rng: random.Random) -> List[Any]:
        idx = list(range(p.count))
        if len(idx) > self.per_param:
            idx = rng.sample(idx, self.per_param)
        out = []
        for i in idx:
            v = list(value)
            if isinstance(p, BooleanArray):
                v[i] = not v[i]
            else:
                lo, hi = p.min_value, p.max_value  # type: ignore[attr-defined]
                step = rng.gauss(0.0, 0.1) * (hi - lo)
                x = min(max(v[i] + step, lo), hi)
                v[i] = float(x) if isinstance(p, FloatArray) else int(round(x))
            if v != value:
                out.append(v)
        return out

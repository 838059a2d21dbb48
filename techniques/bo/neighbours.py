"""Single-parameter neighbours for the acquisition local search (BaCO §3.3).

A neighbour differs from a configuration in exactly one parameter and stays feasible:

* parameters in an enumerated constraint group take values from the feasible space's
  alternatives (ordered kinds prefer the nearest values in the domain, then random others);
* other parameters take their kind's own moves (``Parameter.neighbours``): for int, log_int, pow2
  and ordinal the values one and two steps away plus Gaussian unit steps for wide ranges; for
  float and log_float Gaussian unit steps; bool flips; switch and enum take other options;
  permutation and schedule swap items; arrays change one element; selector draws random values.

Parameters in a non-enumerated constraint group are checked with the group's constraints.
At most ``per_param`` neighbours are produced per parameter.
"""
from __future__ import annotations

import random
from typing import Any, Dict, List, Tuple

from ...parameters import ConfigurationManipulator, FeasibleSpace, Parameter
from .distances import vkey

Config = Dict[str, Any]


class NeighbourGenerator:
    """Builds feasible single-parameter neighbours of a configuration (called by local search)."""

    def __init__(self, manipulator: ConfigurationManipulator, cot: FeasibleSpace, per_param: int = 10) -> None:
        self.params = manipulator.parameters
        self.cot = cot
        self.per_param = per_param
        self._pos = {p.name: p.order_positions() for p in self.params}

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
            for v in p.neighbours(config[p.name], rng, self.per_param):
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

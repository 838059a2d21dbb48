"""Distributions on a parameter's unit interval that the unit-valued priors draw from
(:class:`~.priors.Beta` and :class:`~.priors.Near` on numeric and ordinal parameters), and the
probability mass such a distribution gives each listed value of a parameter once a drawn unit value
is mapped to a value the way the parameter maps every unit value.

A distribution has ``sample(rng)`` (one unit value), ``cdf(u)`` (vectorised), ``logpdf(u)`` and
``mode()``.
"""
from __future__ import annotations

import math
import random
from typing import Any, Dict, Hashable, Sequence

import numpy as np

from .base import Parameter
from .value_keys import value_key

#: standard deviation, in unit space, of the local part of a :class:`~.priors.Near` prior
NEAR_WIDTH = 0.1
_EDGE = 1e-9


class BetaDist:
    """``Beta(a, b)`` on [0, 1]."""

    def __init__(self, a: float, b: float) -> None:
        self.a, self.b = a, b

    def sample(self, rng: random.Random) -> float:
        return rng.betavariate(self.a, self.b)

    def cdf(self, u: np.ndarray) -> np.ndarray:
        from scipy.special import betainc   # scipy only once a Beta prior is used: importing stays light
        return betainc(self.a, self.b, np.clip(u, 0.0, 1.0))

    def mode(self) -> float:
        """The density's maximum on [0, 1] (an end when a or b is at most 1; 0.5 for Beta(1, 1))."""
        a, b = self.a, self.b
        if a > 1.0 and b > 1.0:
            return (a - 1.0) / (a + b - 2.0)
        return 0.5 if a == b else (1.0 if a > b else 0.0)

    def logpdf(self, u: float) -> float:
        u = min(max(u, _EDGE), 1.0 - _EDGE)
        return (self.a - 1) * math.log(u) + (self.b - 1) * math.log1p(-u) - _log_beta(self.a, self.b)


def _log_beta(a: float, b: float) -> float:
    """log B(a, b)."""
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _normal_cdf(x: float) -> float:
    """The standard normal distribution function at ``x``."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


class NearDist:
    """``c`` x normal(u0, NEAR_WIDTH) truncated to [0, 1] + ``(1 - c)`` x uniform."""

    def __init__(self, u0: float, c: float) -> None:
        self.u0, self.c = u0, c
        self.lo = _normal_cdf(-u0 / NEAR_WIDTH)
        self.z = _normal_cdf((1.0 - u0) / NEAR_WIDTH) - self.lo

    def sample(self, rng: random.Random) -> float:
        if rng.random() >= self.c:
            return rng.random()
        while True:
            u = rng.gauss(self.u0, NEAR_WIDTH)
            if 0.0 <= u <= 1.0:
                return u

    def mode(self) -> float:
        return self.u0

    def cdf(self, u: np.ndarray) -> np.ndarray:
        u = np.clip(u, 0.0, 1.0)
        from scipy.special import ndtr
        return self.c * (ndtr((u - self.u0) / NEAR_WIDTH) - self.lo) / self.z + (1.0 - self.c) * u

    def logpdf(self, u: float) -> float:
        d = (u - self.u0) / NEAR_WIDTH
        local = math.log(self.c) - 0.5 * d * d - math.log(math.sqrt(2.0 * math.pi) * NEAR_WIDTH * self.z)
        return local if self.c >= 1.0 else float(np.logaddexp(local, math.log1p(-self.c)))


def unit_masses(param: Parameter, values: Sequence[Any], dist: Any) -> np.ndarray:
    """Probability of each listed value when a unit value drawn from ``dist`` is mapped by
    ``set_unit_value``: the distribution's mass between the unit edges where the mapped value
    changes (found by bisection between neighbouring values' unit positions)."""
    name = param.name
    units = [param.get_unit_value({name: v}) for v in values]  # type: ignore[attr-defined]
    order = sorted(range(len(values)), key=units.__getitem__)
    keys = [value_key(values[i]) for i in order]

    def at(u: float) -> Hashable:
        cfg: Dict[str, Any] = {}
        param.set_unit_value(cfg, u)  # type: ignore[attr-defined]
        return value_key(cfg[name])

    edges = [0.0]
    for j in range(len(order) - 1):
        lo, hi = units[order[j]], units[order[j + 1]]
        for _ in range(50):
            mid = (lo + hi) / 2.0
            if at(mid) == keys[j]:
                lo = mid
            else:
                hi = mid
        edges.append(hi)
    edges.append(1.0)
    mass = np.diff(dist.cdf(np.array(edges)))
    out = np.zeros(len(values))
    out[order] = np.maximum(mass, 0.0)
    return out / out.sum() if out.sum() > 0 else np.full(len(values), 1.0 / len(values))

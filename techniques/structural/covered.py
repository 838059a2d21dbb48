"""The range of each number that StructuralSurrogate's results cover, to which the model's joint
minimum over the numbers is limited.

With the numbers' pairwise products the model is a quadratic response surface that need not be convex,
and its minimum then lies at the ends of the numbers' ranges, far from every result; limited to each
number's least and greatest unit value among the OK results, a proposal stays where the fit has data.

Called by :class:`~.technique.StructuralSurrogate` (each OK result, each model proposal) and by
:mod:`.minimise` and :mod:`.constrained`; spaces without the products are not limited.
"""
from __future__ import annotations

from typing import Any, Dict, Sequence

import numpy as np

from ...parameters.features import FeatureLayout


class CoveredRange:
    """Per number of ``layout``'s products block, the least and greatest unit value of the results
    added; no numbers (and no limit) when the layout has no products."""

    def __init__(self, layout: FeatureLayout) -> None:
        self.maps = list(layout.interaction.maps) if layout.interaction is not None else []
        self.lo = np.full(len(self.maps), np.inf)
        self.hi = np.full(len(self.maps), -np.inf)

    @property
    def active(self) -> bool:
        """True when there are numbers to limit and a result was added."""
        return bool(self.maps) and bool(np.all(self.lo <= self.hi))

    def units(self, configs: Sequence[Dict[str, Any]]) -> np.ndarray:
        """The unit values of the numbers of each of ``configs`` (one row per configuration)."""
        return np.array([[m.parameter.get_unit_value(c) for m in self.maps] for c in configs], dtype=float)

    def add(self, config: Dict[str, Any]) -> None:
        """Widen the range to an OK result's ``config`` (called for each one)."""
        if self.maps:
            u = self.units([config])[0]
            self.lo, self.hi = np.minimum(self.lo, u), np.maximum(self.hi, u)

    def inside(self, units: np.ndarray) -> np.ndarray:
        """Which rows of ``units`` lie within the range (all of them while it is not :attr:`active`)."""
        if not self.active:
            return np.ones(len(units), dtype=bool)
        eps = 1e-9
        return np.all((units >= self.lo - eps) & (units <= self.hi + eps), axis=1)

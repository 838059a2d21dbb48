"""Which values StructuralSurrogate's model fits: the objective's own, or their logarithm.

A tour's length is a sum over its edges, so the additive model fits it exactly on the raw values; a
run time or a modelled latency is closer to a *product* of per-choice factors (a tile size that halves
the work, an unroll that doubles the throughput) and spans orders of magnitude, so on the raw values
a few slow configurations dominate the least-squares fit while the logarithm makes the factors additive.

:class:`ValueModels` holds the model of a run.  ``log_values=None`` (the default) fits the raw values
on spaces of permutations alone (a tour's or an order's cost, whose adjacency and precedence features
sum to the objective) and the logarithm on every other space, those where a permutation shares the
space with other parameters included: a loop order beside chunk sizes, unrolls and thread counts is one
more factor of a run time.  On the five recorded TACO tables (least squares over every recorded row,
docs/benchmarks/structural.md) the model's features explain 17-66 % of the variance of the raw times
and 50-80 % of their logarithm (more on four tables; on taco_mttkrp, whose times span a factor of 32,
53 % against 55 %).  Measured, 40 seeds at 100 evaluations (median best/optimum): conv_a4000 1.004
with the logarithm against 1.007 without, HPVM2FPGA edge detection 0.00158 s against 0.00177 s,
rise_kmeans 1.000 (worst 1.002) against 1.000 (worst 1.376); on att48 at 3,000 evaluations, 10 seeds,
1.032 against 1.000.  (Choosing by which of two models predicted the first 15 results better was tried:
on TSP it kept the raw values, but switching models mid-run left conv_a4000 at 1.082, behind both.)
The first value <= 0 ends the logarithm: the raw model is rebuilt from the data and kept.
:func:`raw_by_default` decides the default per run (LowRankStructuralSurrogate keeps the raw values on
every space with a permutation that gets its low-rank prior, as measured on the same page).
"""
from __future__ import annotations

import math
from typing import Callable, Optional

from ...parameters.features import FeatureLayout, PermutationFeatures
from .model import SparseBayesLinear


def raw_by_default(layout: FeatureLayout) -> bool:
    """Whether ``log_values=None`` fits the raw values on the space of ``layout``: when every feature
    map is a permutation's (called once per run, at bind)."""
    orders = [isinstance(fmap, PermutationFeatures) for fmap in layout.maps]
    return bool(orders) and all(orders)


class ValueModels:
    """The model a StructuralSurrogate fits and samples (:attr:`model`) and the transform of its values
    (:attr:`transform`: ``"raw"`` or ``"log"``; ``log_values=None``: ``"raw"`` when ``raw``)."""

    def __init__(self, make: Callable[[], SparseBayesLinear], log_values: Optional[bool] = None,
                 raw: bool = False) -> None:
        self.make = make
        use_log = (not raw) if log_values is None else log_values
        self.transform = "log" if use_log else "raw"
        self.model = make()

    def add(self, active: object, value: float) -> None:
        """Record one finite result."""
        if self.transform == "log" and value <= 0.0:
            self.model, self.transform = self.model.mapped(math.exp, self.make()), "raw"
        self.model.add(active, math.log(value) if self.transform == "log" else value)  # type: ignore[arg-type]

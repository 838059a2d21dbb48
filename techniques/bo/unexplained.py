"""The variance a MultiObjectiveBO GP leaves unexplained among the results best in another objective.

The expected hypervolume improvement trusts every objective's GP posterior as it is.  On the RISE
stencil table the energy is predictable over the whole table, but among the fastest configurations
-- where the front's hypervolume lies -- it is not (a random forest on every row explains 4 % of
its variance there, docs/benchmarks/multi-objective.md): which fast configuration happens to be
frugal is, for a model, noise.  The energy GP then predicts an unmeasured fast configuration at
about the energy of the fast ones measured, with a posterior narrower than the errors it makes
there, and the EHVI rates another fast configuration as a small chance of a small gain.

So (``unexplained_variance``, a threshold on R^2), before each hypervolume proposal: for each
objective ``k``, the OK results best in it (the best :data:`BEST_SHARE`, at least :data:`MIN_ROWS`)
are predicted by every other objective's GP leave-one-out; where the R^2 of those predictions is
below the threshold, that GP's mean squared leave-one-out error over those results is added to its
posterior variance for the EHVI (:func:`unexplained_variance`): the model's posterior is widened by
the error it demonstrably makes where the front's trade-off is decided.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .gp import GaussianProcess

#: share of the OK results that make an objective's best region
BEST_SHARE = 0.25
#: fewest OK results in that region before what the other GPs explain there is judged
MIN_ROWS = 6


def best_rows(column: np.ndarray) -> np.ndarray:
    """Indices of the rows best (lowest) in ``column``: the best :data:`BEST_SHARE`, at least
    :data:`MIN_ROWS`."""
    count = max(MIN_ROWS, int(round(BEST_SHARE * len(column))))
    return np.argsort(column, kind="stable")[:count]


def r_squared(target: np.ndarray, predicted: np.ndarray) -> float:
    """``1 - SSE / SST`` of ``predicted`` against ``target`` (1 when ``target`` is constant)."""
    total = float(np.sum((target - target.mean()) ** 2))
    if total <= 0:
        return 1.0
    return 1.0 - float(np.sum((target - predicted) ** 2)) / total


def unexplained_variance(gps: Sequence[GaussianProcess], threshold: float) -> np.ndarray:
    """Called before each hypervolume proposal with ``unexplained_variance`` set; returns, per
    objective, the variance to add to its GP's posterior (standardised units): for an objective
    whose leave-one-out R^2 among the training rows best in another objective is below
    ``threshold``, its mean squared leave-one-out error over those rows (the largest over such
    other objectives); 0 elsewhere, and everywhere while the rows number fewer than
    :data:`MIN_ROWS`.  All GPs are trained on the same rows in the same order."""
    extra = np.zeros(len(gps))
    if len(gps) < 2 or gps[0].n < MIN_ROWS:
        return extra
    for k in range(len(gps)):
        rows = best_rows(gps[k].y)
        for j, gp in enumerate(gps):
            if j == k:
                continue
            loo = gp.loo_means()[rows]
            if r_squared(gp.y[rows], loo) < threshold:
                extra[j] = max(extra[j], float(np.mean((gp.y[rows] - loo) ** 2)))
    return extra

"""The model's share of suggestions: a two-arm comparison of how often each arm finds a new best.

Each arm (the model, the fallback) has a record of recent results it requested: 1 when the result was
a new best, else 0.  The rates get Beta posteriors with a common prior centred on the pooled rate of
both arms (``strength`` pseudo-results), and the model's share is the posterior probability that its
rate is the higher one (probability matching, as Thompson sampling between the two arms would give).
Unlike the ratio of the two rates, that probability goes to 0 (or 1) as the evidence that one arm
finds new bests less often accumulates, so a model that keeps failing where the fallback succeeds
loses its suggestions within a few dozen results instead of keeping about half of them.
"""
from __future__ import annotations

from typing import Tuple

import numpy as np

#: quadrature points (cell midpoints) for P(rate_model > rate_fallback)
GRID = (np.arange(1000) + 0.5) / 1000
_LOG, _LOG1M = np.log(GRID), np.log1p(-GRID)


def prob_better(model: Tuple[float, float], fallback: Tuple[float, float], strength: float = 2.0) -> float:
    """P(the model's rate of new bests > the fallback's), each arm given as (successes, trials), under
    Beta posteriors whose common prior has the pooled rate (with one success and one failure added) as
    its mean and ``strength`` pseudo-results; 0.5 when neither arm has a record."""
    (sm, nm), (sf, nf) = model, fallback
    if nm + nf == 0:
        return 0.5
    pooled = (sm + sf + 1.0) / (nm + nf + 2.0)
    a, b = strength * pooled, strength * (1.0 - pooled)
    density = _density(a + sm, b + nm - sm)
    other = _density(a + sf, b + nf - sf)
    below = np.cumsum(other) - 0.5 * other  # the fallback's distribution function at the midpoints
    total, scale = float(density.sum()), float(other.sum())
    return float((density * below).sum() / (total * scale)) if total > 0 and scale > 0 else 0.5


def _density(a: float, b: float) -> np.ndarray:
    """The Beta(a, b) density on :data:`GRID`, up to a constant factor (its peak is 1)."""
    log = (a - 1.0) * _LOG + (b - 1.0) * _LOG1M
    return np.exp(log - log.max())

"""Expected hypervolume improvement in the objectives' own units (MultiObjectiveBO's ``ehvi_units`` "metric").

The GPs model standardised (e.g. copula) targets ``y``; the hypervolume a front is judged by is
measured in the metrics' units.  Every transform is increasing, so each objective gets an increasing
piecewise-linear map ``g`` from standardised to metric values (:class:`MetricMap`), through the
training pairs ``(y, raw)``.  A candidate's metric value is then ``Y = g(Z)`` with ``Z`` its GP
posterior ``N(mu, sigma**2)``.

**Exact.**  The improvement is the volume of the non-dominated region (below the reference point)
that the candidate dominates; over a box ``[l, u]`` of the region's decomposition
(:func:`.ehvi.box_decomposition`) its expectation factorises into ``prod_j G_j(u_j) - G_j(l_j)`` with
``G(b) = E[(b - Y)^+]``, the integral of ``Y``'s CDF up to ``b``.  On a linear piece of ``g``
between knots ``(y_k, v_k)`` and ``(y_{k+1}, v_{k+1})`` (slope ``s_k``), that integral is
``s_k sigma (h(t_hi) - h(t_lo))`` with ``h(t) = phi(t) + t Phi(t)`` and ``t`` the piece's ends in
standard units, so ``G`` at every bound is a cumulative sum over the knots: one ``h`` per candidate
and knot, vectorised over all candidates.  With two objectives a front of ``n`` points has ``n + 1``
boxes; the exact form applies while the boxes number at most :data:`EXACT_BOXES` (every 2-objective
front of a tuning run).

**Monte Carlo.**  The mean improvement of :data:`SAMPLES` posterior draws per candidate (common normal
draws, mapped through ``g``): MultiObjectiveBO's default (``metric_ehvi`` "monte_carlo"; its sampling
noise spreads the proposals, which found the benchmark tables' fronts' knees in more runs), and the
only form beyond :data:`EXACT_BOXES` boxes (many objectives).

**The tails.**  Above the highest training target ``g`` is constant (a candidate is never predicted
worse than the worst result: irrelevant to an improvement).  Below the lowest one it is constant too
by default (no prediction beats the best value seen: the front's extremes are extended only by the
tie-breaking EHVI in the GPs' units), or, with ``extrapolate``, continues linearly with the slope
of the secant from the best value to the value at the :data:`TAIL_QUANTILE` of the targets (down to
0 for a positive metric), so a candidate predicted better than every result so far is worth the
improvement beyond the front's extreme, in proportion to how far the values near the best are spread.
With ``geometric`` as well, a metric whose values are all positive continues instead by the same
secant's ratio, ``v0 exp(r (z - y0))`` with ``r = log(v_k / v0) / (y_k - y0)``: each standard unit
below the best target divides the value by the same factor (the multiplicative scale on which
times and energies spread), and no sample reaches 0.  Its partial expectation is closed-form as well: below ``U``,
``E[(b - v0 exp(r (Z - y0))) 1{Z < U}] = b Phi(u) - v0 exp(r (mu - y0) + r**2 sigma**2 / 2) Phi(u - r sigma)``
with ``u = (U - mu) / sigma``.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
from scipy.special import log_ndtr, ndtr

from ..base import Config
from ..pareto import hypervolume, non_dominated
from .acquisition import Acquisition, log_expected_improvement
from .ehvi import box_decomposition, h, hypervolume_improvements

#: the exact EHVI is used while the region's box decomposition has at most this many boxes
EXACT_BOXES = 4096
#: posterior samples per candidate of the Monte-Carlo EHVI (beyond EXACT_BOXES)
SAMPLES = 64
#: the lower tail's slope is the secant from the best target to this quantile of the targets
TAIL_QUANTILE = 0.1
#: weight of the GP units' expected improvement in :class:`MetricImprovement` (a tie-breaker)
TIE_WEIGHT = 1e-3
#: candidates per block of the Monte-Carlo estimate (bounds the samples x boxes arrays)
MC_BLOCK = 512


class MetricMap:
    """The increasing piecewise-linear map from one objective's standardised targets ``y`` to its
    values ``raw``: knots at the distinct targets, constant above the highest and below the lowest
    (the values seen bound every prediction) or, with ``extrapolate``, linear below the lowest (the
    tail's slope, down to 0 when every value is positive; with ``geometric`` too and every value
    positive, exponential at the secant's rate ``rate``).  Built once per proposal."""

    def __init__(self, y: np.ndarray, raw: np.ndarray, extrapolate: bool = False, geometric: bool = False) -> None:
        order = np.argsort(y, kind="stable")
        ys, vs = y[order], np.maximum.accumulate(raw[order])
        keep = np.append(np.diff(ys) > 0, True)      # ties of the targets share one value (the last)
        self.ys, self.vs = ys[keep], vs[keep]
        dy = np.diff(self.ys)
        self.slopes = np.diff(self.vs) / np.where(dy > 0, dy, 1.0)
        self.tail, secant = self._tail_secant() if extrapolate else (0.0, 1.0)
        #: the exponential tail's rate (0: the tail is linear or constant)
        self.rate = math.log1p(self.tail * secant / self.vs[0]) / secant \
            if geometric and self.tail > 0 and self.vs[0] > 0 else 0.0
        #: a metric whose values are all positive stays non-negative on the linear tail
        self.floor = 0.0 if self.tail > 0 and self.vs[0] > 0 and self.rate == 0 else -np.inf

    def _tail_secant(self) -> Tuple[float, float]:
        """The slope and the width (in targets) of the secant from the lowest knot to the first one at
        or beyond TAIL_QUANTILE of the knots with a higher value ((0, 1) when every value is equal)."""
        higher = np.flatnonzero(self.vs > self.vs[0])
        if higher.size == 0:
            return 0.0, 1.0
        k = higher[min(int(TAIL_QUANTILE * len(self.vs)), higher.size - 1)]
        width = float(self.ys[k] - self.ys[0])
        return float((self.vs[k] - self.vs[0]) / width), width

    def to_metric(self, z: np.ndarray) -> np.ndarray:
        """Standardised values (any shape) as the metric's values."""
        out = np.interp(z, self.ys, self.vs)
        below = z < self.ys[0]
        if self.rate > 0:
            return np.where(below, self.vs[0] * np.exp(self.rate * np.minimum(z - self.ys[0], 0.0)), out)
        return np.where(below, np.maximum(self.vs[0] + self.tail * (z - self.ys[0]), self.floor), out)

    def _geometric_tail(self, mu: np.ndarray, sd: np.ndarray, b: float) -> np.ndarray:
        """``E[(b - g(Z)) 1{Z < U}]`` on the exponential tail, ``U`` where the tail reaches ``b`` (the
        lowest knot for ``b`` at or above the best value); shape of ``mu``."""
        if b <= 0:
            return np.zeros_like(mu)
        y0, v0, r = self.ys[0], self.vs[0], self.rate
        upper = y0 + min(math.log(b / v0), 0.0) / r
        u = (upper - mu) / sd
        with np.errstate(over="ignore"):
            return b * ndtr(u) - v0 * np.exp(r * (mu - y0) + 0.5 * (r * sd) ** 2 + log_ndtr(u - r * sd))

    def partial_expectations(self, mu: np.ndarray, sd: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        """``G(b) = E[(b - g(Z))^+]`` for ``Z ~ N(mu, sd**2)``: shape ``(candidates, bounds)`` for
        ``mu``, ``sd`` of shape ``(candidates,)`` and finite ``bounds``."""
        mu, sd = mu[:, None], sd[:, None]
        top = int(np.searchsorted(self.vs, bounds.max(), side="right")) + 1
        ys, vs, slopes = self.ys[:top], self.vs[:top], self.slopes[: top - 1]
        H = h((ys[None, :] - mu) / sd)                                   # (m, knots)
        first = self._geometric_tail(mu, sd, vs[0]) if self.rate > 0 else self.tail * sd * H[:, :1]
        at_knots = np.cumsum(np.concatenate([first,
                                             slopes[None, :] * sd * np.diff(H, axis=1)], axis=1), axis=1)
        k = np.searchsorted(vs, bounds, side="right") - 1                # the piece each bound lies on
        out = np.empty((len(mu), len(bounds)))
        for i, (b, piece) in enumerate(zip(bounds, k)):
            if piece < 0 and self.rate > 0:     # below the lowest value: on the exponential tail
                out[:, i] = self._geometric_tail(mu, sd, b)[:, 0]
            elif piece < 0:          # below the lowest value: on the linear tail
                out[:, i] = (self.tail * sd * h((ys[0] + (b - vs[0]) / self.tail - mu) / sd))[:, 0] \
                    if self.tail > 0 else 0.0
            elif piece >= len(self.vs) - 1:   # above the highest: every sample lies below b
                out[:, i] = at_knots[:, -1] + (b - vs[-1])
            else:
                t = ys[piece] + (b - vs[piece]) / slopes[piece]
                out[:, i] = at_knots[:, piece] + (slopes[piece] * sd * (h((t - mu) / sd) - H[:, piece:piece + 1]))[:, 0]
        if np.isfinite(self.floor):    # nothing lies below the floor: G counts from there
            out = np.maximum(out - self.tail * sd * h((ys[0] + (self.floor - vs[0]) / self.tail - mu) / sd), 0.0)
        return out


class MetricUnits:
    """Expected hypervolume improvement in the objectives' own units.

    Built once per proposal from the GPs' standardised training targets ``y`` and the values they
    came from (``raw``, both ``(rows, objectives)``); ``extrapolate``: the maps' lower tails continue
    linearly, with ``geometric`` exponentially for positive metrics (:class:`MetricMap`);
    ``monte_carlo``: estimate by sampling even where the exact form applies (MultiObjectiveBO's default; docs/benchmarks/multi-objective.md compares the two).  The reference point is 1.1 x the nadir of the
    observed front (10 % of its size beyond it), the one a front is judged by
    (tools/bench_pareto.py), or with ``data_nadir`` of every row of ``raw`` (a design beyond the
    front's nadir in one metric is then worth what it adds beyond the front's extreme in another).  :meth:`ehvi` is divided by the observed front's hypervolume."""

    def __init__(self, y: np.ndarray, raw: np.ndarray, np_rng: np.random.Generator, extrapolate: bool = False,
                 monte_carlo: bool = False, data_nadir: bool = False, geometric: bool = False) -> None:
        self.monte_carlo = monte_carlo
        self.maps: List[MetricMap] = [MetricMap(y[:, j], raw[:, j], extrapolate, geometric)
                                      for j in range(y.shape[1])]
        front = raw[non_dominated(raw)]
        nadir = (raw if data_nadir else front).max(axis=0)
        self.reference = nadir + np.where(nadir != 0, 0.1 * np.abs(nadir), 0.1)
        self.draws = np_rng.standard_normal((SAMPLES, y.shape[1]))
        self.set_front(front)

    def set_front(self, front: np.ndarray) -> None:
        """The front (metric units) improvements are measured against; called again with the
        believed values of results in flight."""
        self.lower, self.upper = box_decomposition(front, self.reference)
        self.scale = max(hypervolume(front, self.reference), 1e-300)

    @property
    def exact(self) -> bool:
        """Whether :meth:`ehvi` is computed exactly (few enough boxes) rather than by Monte Carlo."""
        return not self.monte_carlo and len(self.lower) <= EXACT_BOXES

    def to_metric(self, z: np.ndarray) -> np.ndarray:
        """Standardised values (``(..., objectives)``) as the metrics' values."""
        return np.stack([m.to_metric(z[..., j]) for j, m in enumerate(self.maps)], axis=-1)

    def ehvi(self, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
        """EHVI (over the observed front's hypervolume) of ``m`` candidates with independent
        standardised posteriors ``mean``, ``std`` of shape ``(m, objectives)``."""
        std = np.maximum(std, 1e-12)
        gain = self._exact(mean, std) if self.exact else self._monte_carlo(mean, std)
        return np.maximum(gain, 0.0) / self.scale

    def _exact(self, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
        total = np.ones((len(mean), len(self.lower)))
        for j, m in enumerate(self.maps):
            lo, hi = self.lower[:, j], self.upper[:, j]
            bounds = np.unique(np.concatenate([lo[np.isfinite(lo)], hi]))
            G = m.partial_expectations(mean[:, j], std[:, j], bounds)
            upper = G[:, np.searchsorted(bounds, hi)]
            lower = np.zeros_like(upper)
            finite = np.isfinite(lo)
            lower[:, finite] = G[:, np.searchsorted(bounds, lo[finite])]
            total *= upper - lower
        return total.sum(axis=1)

    def _monte_carlo(self, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
        out = np.empty(len(mean))
        for start in range(0, len(mean), MC_BLOCK):
            mu, sd = mean[start:start + MC_BLOCK], std[start:start + MC_BLOCK]
            z = mu[:, None, :] + sd[:, None, :] * self.draws[None, :, :]
            out[start:start + len(mu)] = hypervolume_improvements(self.to_metric(z), self.lower, self.upper).mean(axis=1)
        return out


class MetricImprovement(Acquisition):
    """An extreme turn's acquisition in the metric's units (MultiObjectiveBO's ``extreme_units``
    "metric"): the expected improvement ``E[(v0 - g(Z))^+]`` of one objective over its best value
    ``v0``, through that objective's :class:`MetricMap` ``g`` (its lower tail decides how much a
    prediction below the best target is worth), relative to ``|v0|``, plus the expected improvement
    in the GP's units at a small weight (a tie-breaker where the tail is clamped or the gain
    underflows); log, times P(feasible)."""

    def __init__(self, encoder: Any, gp: Any, train: List[np.ndarray], metric_map: MetricMap,
                 feasibility: Any = None, eps_f: float = 0.0, feature_encoder: Any = None) -> None:
        super().__init__(encoder, gp, train, float(metric_map.ys[0]), feasibility, eps_f, feature_encoder)
        self.map = metric_map

    def score_encoded(self, enc: List[np.ndarray], configs: Sequence[Config], strict: bool = True,
                      features: Optional[np.ndarray] = None) -> np.ndarray:
        """log of the relative expected improvement in the metric's units (+ the tie-breaker), with
        the feasibility factor and threshold."""
        mean, std = self.gp.predict(self.encoder.sqdists(enc, self.train))
        std = np.maximum(std, 1e-12)
        best = float(self.map.vs[0])
        gain = self.map.partial_expectations(mean, std, np.array([best]))[:, 0] / (abs(best) or 1.0)
        model = np.exp(log_expected_improvement(mean, std, self.y_best))
        s = np.log(np.maximum(np.maximum(gain, 0.0) + TIE_WEIGHT * model, 1e-300))
        return self.weighted(s, configs, strict, features)

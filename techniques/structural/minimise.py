"""Minimising StructuralSurrogate's sampled model over one parameter's values, per feature map.

The model is additive over the parameters' features, so its minimum near the incumbent is found one
parameter at a time from the weights of that parameter's features: a permutation by a descent of
2-opt / or-opt moves on the learned neighbour costs (insertion and swap moves when precedence features
are on; an iterated search after a kick), a number by the best of a grid of unit values within the
trust region, an array element by element, and the numbers jointly by coordinate descent when the
model has their pairwise products (a quadratic response surface).

Called by :class:`~.technique.StructuralSurrogate` for each model proposal.
"""
from __future__ import annotations

from typing import Any, List

import numpy as np

from ...parameters import BooleanArray
from ...parameters.features import ArrayFeatures, FeatureLayout, PermutationFeatures, UnitFeatures, centred
from ..base import Config
from .tours import descend, iterated_search

#: unit values tried for a number under the sampled model (plus the incumbent's)
UNIT_GRID = np.linspace(0.0, 1.0, 33)

#: coordinate-descent sweeps over the numbers when the model has their pairwise products
SWEEPS = 4


def minimise_permutation(fmap: PermutationFeatures, w: np.ndarray, value: List[Any], kick: bool, radius: int,
                         kicks: int, np_rng: np.random.Generator) -> List[Any]:
    """The permutation that minimises the sampled weights ``w`` of ``fmap``'s features: a descent from
    ``value`` of at most ``radius`` moves, or when ``kick`` (and at least 8 items) an iterated search of
    ``kicks`` double-bridge kicks drawn from ``np_rng``."""
    n, pairs = fmap.n, fmap.pairs
    iu = np.triu_indices(n, 1)
    U = np.zeros((n, n))
    U[iu] = w[:pairs]
    C = U + U.T + w[pairs:pairs + n * n].reshape(n, n)
    t = fmap.positions(value)
    P = None
    if fmap.precedence:
        P = np.zeros((n, n))
        P[iu] = w[pairs + n * n:]
    if kick and n >= 8:
        # an iterated search on the model alone; when no kick improved, the last kicked tour
        # (something not measured yet) rather than the incumbent's descent again
        best, last, improved = iterated_search(t, C, np_rng, kicks, P, 4 * n)
        t = best if improved else last
    else:
        t = descend(t, C, P, radius)
    items = fmap.parameter.items
    return fmap.parameter._repair([items[i] for i in t])


def minimise_unit(fmap: UnitFeatures, w: np.ndarray, value: Any, radius: int) -> Any:
    """The number that minimises ``w[0] v + w[1] v**2`` (``v`` its centred unit value) over
    :data:`UNIT_GRID` spread over the trust region (``0.05 radius`` either side of ``value``'s unit
    value) and ``value`` itself."""
    param = fmap.parameter
    u0 = param.get_unit_value({param.name: value})
    step = min(1.0, 0.05 * radius)
    grid = np.clip(np.concatenate((UNIT_GRID * 2 * step + u0 - step, [u0])), 0.0, 1.0)
    v = centred(grid)
    best = float(grid[int(np.argmin(w[0] * v + w[1] * v * v))])
    cfg: Config = {param.name: value}
    param.set_unit_value(cfg, best)
    return cfg[param.name]


def minimise_numbers(layout: FeatureLayout, weights: np.ndarray, cfg: Config, incumbent: Config,
                     radius: int) -> None:
    """Set the numbers of ``cfg`` to a minimum of the sampled quadratic response surface (each
    number's ``v`` and ``v**2``, the pairwise products, ``v`` the centred unit value) by coordinate
    descent from the ``incumbent``'s unit values, each within the trust region around the incumbent's
    (as :func:`minimise_unit`)."""
    block = layout.interaction
    assert block is not None
    lin = np.array([weights[o] for o in block.offsets])
    sq = np.array([weights[o + 1] for o in block.offsets])
    start = layout.interaction_offset
    C = block.coupling(weights[start:start + block.size])
    u0 = np.array([m.parameter.get_unit_value(incumbent) for m in block.maps])
    step = min(1.0, 0.05 * radius)
    u = u0.copy()
    for _ in range(SWEEPS):
        for k in range(u.size):
            grid = np.clip(np.concatenate((UNIT_GRID * 2 * step + u0[k] - step, [u0[k]])), 0.0, 1.0)
            a = lin[k] + float(C[k] @ centred(u))  # C's diagonal is 0
            v = centred(grid)
            u[k] = float(grid[int(np.argmin(a * v + sq[k] * v * v))])
    for fmap, uk in zip(block.maps, u):
        fmap.parameter.set_unit_value(cfg, float(uk))


def minimise_array(fmap: ArrayFeatures, w: np.ndarray, value: List[Any]) -> List[Any]:
    """The array that minimises the sampled weights ``w`` element by element: a boolean element is true
    where its weight is negative, a number the best of :data:`UNIT_GRID` over its whole range."""
    p = fmap.parameter
    if isinstance(p, BooleanArray):  # width 1
        return [bool(wi < 0) for wi in w]
    lo, hi = float(p.min_value), float(p.max_value)
    out = []
    v = centred(UNIT_GRID)
    for k, _ in enumerate(value):
        best = float(UNIT_GRID[int(np.argmin(w[2 * k] * v + w[2 * k + 1] * v * v))])
        x_new = lo + best * (hi - lo)
        out.append(p._elem_normalize(int(round(x_new)) if isinstance(p.min_value, int) else x_new))
    return [x if y is None else y for x, y in zip(value, out)]

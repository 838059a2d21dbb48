"""Parameter importance, fANOVA-style, from a random forest fitted to the results.

A random forest (scikit-learn) is fitted to the OK results (objective oriented so that lower is better;
categories as codes). The importance of a parameter is the share of the model's variance explained by
that parameter alone: the variance of its *marginal* (the model's prediction averaged over the other
parameters) divided by the variance of the predictions. Both are taken under the product of the
parameters' measured marginal distributions (each parameter drawn on its own from its measured values),
under which the functional ANOVA terms are orthogonal, so the fractions add up to at most 1 and what
they leave is interaction between parameters. This is the first-order term of fANOVA (Hutter et al.,
2014) with the measured marginals instead of uniform distributions over the declared ranges: it says
what matters where the tuner searched, and does not trust the forest far from measured points.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

import numpy as np

from .data import ReportError
from .encode import Encoded

__all__ = ["MIN_RESULTS", "Importance", "background", "fit_forest", "importance"]

#: fewer OK results than this give no model worth plotting
MIN_RESULTS = 10
_GRID = 50
_BACKGROUND = 256


@dataclass
class Importance:
    """Main-effect variance fractions, most important first."""

    names: List[str]
    fractions: List[float]
    results: int              #: OK results the forest was fitted to
    r2: float                 #: the forest's out-of-bag R^2 (how well it explains the results)
    skipped: List[str]


def _grid(column: np.ndarray, categorical: bool) -> tuple[np.ndarray, np.ndarray]:
    """(grid values, their weights): every value with its frequency (categories, few values), else
    equally weighted quantiles of the measured values."""
    values, counts = np.unique(column, return_counts=True)
    if categorical or values.size <= _GRID:
        return values, counts / counts.sum()
    grid = np.quantile(column, np.linspace(0, 1, _GRID))
    return grid, np.full(grid.size, 1.0 / grid.size)


def _variances(forest, background: np.ndarray, j: int, grid: tuple) -> tuple[float, float]:
    """(variance of parameter ``j``'s main effect, variance of all the predictions made to get it).

    The forest predicts every (grid value of ``j``, background row) pair: a sample of the product
    distribution. The main effect is the mean over the rows at each grid value; by the law of total
    variance its variance never exceeds that of the whole sample."""
    values, weights = grid
    stacked = np.repeat(background[None, :, :], values.size, axis=0)
    stacked[:, :, j] = values[:, None]
    predicted = forest.predict(stacked.reshape(-1, background.shape[1])).reshape(values.size, -1)
    effect = predicted.mean(axis=1)
    mean = float(np.dot(weights, effect))
    total = float(np.dot(weights, ((predicted - mean) ** 2).mean(axis=1)))
    return float(np.dot(weights, (effect - mean) ** 2)), total


def fit_forest(X: np.ndarray, y: np.ndarray, seed: int = 0, trees: int = 100) -> Any:
    """The random forest (scikit-learn) fitted to ``X`` and the oriented objective ``y``, with its
    out-of-bag R^2 (``oob_score_``); called by :func:`importance` and the contour view."""
    from sklearn.ensemble import RandomForestRegressor
    return RandomForestRegressor(n_estimators=trees, min_samples_leaf=2, oob_score=True,
                                 random_state=seed).fit(X, y)


def background(X: np.ndarray, rng: np.random.Generator, size: int = 256) -> np.ndarray:
    """``size`` rows drawn from the product of the measured marginals (each column drawn on its own),
    the distribution under which main effects and interactions are orthogonal."""
    return np.column_stack([rng.choice(X[:, j], size=size) for j in range(X.shape[1])])


def importance(encoded: Encoded, seed: int = 0, trees: int = 100) -> Importance:
    """Fit the forest and compute every parameter's main-effect fraction (see the module docstring).

    ReportError when there are too few OK results, no parameter that can be placed on an axis, or
    results that all have the same value."""
    X, y = encoded.X, encoded.sign * encoded.y
    if len(y) < MIN_RESULTS:
        raise ReportError(f"parameter importance needs at least {MIN_RESULTS} successful results; "
                          f"these runs have {len(y)}")
    if not encoded.names:
        raise ReportError("parameter importance needs numeric or categorical parameters; "
                          f"these runs have only {', '.join(encoded.skipped) or 'none'}")
    if np.ptp(y) == 0:
        raise ReportError("parameter importance: every successful result has the same value")
    forest = fit_forest(X, y, seed, trees)
    rows = background(X, np.random.default_rng(seed), _BACKGROUND)
    parts = [_variances(forest, rows, j, _grid(X[:, j], name in encoded.categories))
             for j, name in enumerate(encoded.names)]
    total = float(np.mean([t for _, t in parts]))      # each is an estimate of the same variance
    fractions = [min(1.0, effect / total) if total > 0 else 0.0 for effect, _ in parts]
    order = sorted(range(len(fractions)), key=lambda i: (-fractions[i], encoded.names[i]))
    return Importance([encoded.names[i] for i in order], [fractions[i] for i in order], len(y),
                      float(forest.oob_score_), list(encoded.skipped))

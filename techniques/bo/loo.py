"""Choosing BayesianOptimization's surrogate for a proposal by leave-one-out rank correlation.

With two surrogates (the power transforms and the copula of the values, option ``copula_every``), the
option ``surrogate_loo`` gives each BO proposal, while the OK results number at most that many initial
designs, to the surrogate whose GP, fitted on the OK results, ranks them best when each is predicted
from the others: the Spearman correlation between the leave-one-out posterior means
(:meth:`.gp.GaussianProcess.loo_means`) and the targets.  Ranks are
unchanged by the surrogates' monotone target transforms, so the two scores are comparable.  A fit that
explains everything as noise predicts each result from the mean of the others and scores low; ties
(and too few results to rank) keep the surrogate of the turn schedule.
"""
from __future__ import annotations

from typing import Callable, List

import numpy as np
from scipy.stats import rankdata

from .gp import GaussianProcess

#: fewest OK results a leave-one-out ranking is computed on
MIN_RESULTS = 4


def loo_rank_correlation(gp: GaussianProcess) -> float:
    """Spearman correlation of ``gp``'s leave-one-out means with its targets (-1 .. 1; 0 when either
    is constant)."""
    a, b = rankdata(gp.loo_means()), rankdata(gp.y)
    a, b = a - a.mean(), b - b.mean()
    den = float(np.sqrt(np.sum(a * a) * np.sum(b * b)))
    return float(np.sum(a * b)) / den if den > 0 else 0.0


def loo_choice(turn: int, count: int, fitted: Callable[[int], GaussianProcess]) -> int:
    """Called for each BO proposal with two or more surrogates: the index of the one to use.
    ``turn``: the turn schedule's choice; ``fitted(i)``: surrogate ``i``'s GP on the current results."""
    gps = [fitted(i) for i in range(count)]
    if gps[turn].n < MIN_RESULTS:
        return turn
    scores: List[float] = [loo_rank_correlation(gp) for gp in gps]
    best = max(scores)
    return turn if scores[turn] >= best - 1e-12 else scores.index(best)

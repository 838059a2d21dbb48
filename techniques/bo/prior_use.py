"""How Bayesian optimization uses a user prior beyond its random draws: the initial design starts at
the prior's mode, and πBO's weight on the prior is scaled by how far the results agree with it.

**Agreement** (:func:`agreement`).  πBO multiplies the acquisition by ``prior(x) ** (beta / n)``;
the decay alone lets a wrong prior pull the search into its region for dozens of evaluations.  The
results say early whether the prior is right: a right prior's high region (where its weight is above
the uniform one) holds better results than the rest of the space, a wrong prior's holds worse ones.
The agreement is the two-sided p-value of the Mann-Whitney U test (normal approximation) comparing
the results inside the high region with those outside it when the inside ones rank worse, and 1
otherwise (failures count as the worst results).  The technique multiplies πBO's exponent by it: a
prior whose region holds clearly worse results stops steering the acquisition, while a confirmed
one, or one that has not been tested yet, keeps its full weight.
"""
from __future__ import annotations

import math
import random
from typing import Any, Dict, Optional, Sequence

import numpy as np


def agreement(log_weights: Sequence[float], values: Sequence[float]) -> float:
    """How far results agree with the prior, in [0, 1]; called before each BO proposal.

    ``log_weights``: the prior's log weight over uniform of each evaluated configuration;
    ``values``: their results, lower is better, ``inf`` for a failure.  Returns 1 when no result
    lies inside (log weight > 0) or none outside the prior's high region.
    """
    z = rank_score(log_weights, values)
    return 1.0 if z is None or z >= 0.0 else math.erfc(-z / math.sqrt(2.0))


def rank_score(log_weights: Sequence[float], values: Sequence[float]) -> Optional[float]:
    """The Mann-Whitney z-score of the results inside the prior's high region against those
    outside it (positive: the inside ones rank better); None when either side has no result."""
    w = np.asarray(log_weights, dtype=float)
    v = np.asarray(values, dtype=float)
    inside, outside = v[w > 0.0], v[w <= 0.0]
    if inside.size == 0 or outside.size == 0:
        return None
    a, b = inside[:, None], outside[None, :]
    u = float(np.sum(a < b)) + 0.5 * float(np.sum(a == b))
    n1, n2 = inside.size, outside.size
    return (u - 0.5 * n1 * n2) / math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12.0)


def mode_configuration(manipulator: Any, space: Any, rng: random.Random, np_rng: np.random.Generator,
                       tries: int = 64) -> Optional[Dict[str, Any]]:
    """The prior's mode as a whole configuration: the mode's values (``SpacePrior.mode``) with the
    remaining parameters taken from random feasible configurations of ``space`` (a
    ``FeasibleSpace``), the first completion that satisfies the known constraints; None when the
    space has no prior or no completion among ``tries`` is feasible.  Called for the first
    configuration of the initial design."""
    prior = manipulator.prior
    if not prior:
        return None
    mode = prior.mode()
    for cfg in space.sample(rng, np_rng, tries):
        cfg.update(mode)
        if manipulator.is_valid(cfg) and space.is_feasible(cfg):
            return cfg
    return None

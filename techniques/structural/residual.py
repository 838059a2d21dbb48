"""A sparse residual on top of an accepted embedding, fitted to the results measured near the incumbent.

An embedding of the items (:mod:`.embedding`) is identified from uniformly random tours; its errors are
largest on the short steps that decide the best tours, and random tours say little about any one step
(each holds ``n`` of the ``n(n-1)`` steps).  The results measured after the acceptance (the incumbent's
moves, the searches' tours) differ from each other in a few steps, so each pins down the steps it
changes.  :func:`local_residual` fits a correction ``r`` of the weights to those results alone:

    ``min |X (m + r) + c - y|² + damp² |r|²``  (``m`` the embedding's weights, ``c`` a free constant),

by LSQR; the embedding plus ``r`` ranks the incumbent's moves far better
than the embedding (ftv170, 2,000 evaluations into a run: 23 of the 64 moves it ranks first shorten
the tour, none of the embedding's, 9 of the posterior mean's, whose corrections are fitted to the
random tours as well).

On a directed cost most of the steps that the incumbent's best-ranked moves add have not been measured
since the acceptance (their weight is the embedding's alone), and those moves shorten the tour more
often than the moves whose added steps were measured and fitted (ftv170, 2,000 evaluations into a run:
10 of the 156 such moves among the first 256 shorten it, 2 of the 100 others).  :func:`optimism`
lowers each directed step's weight by :data:`OPTIMISM` standard deviations of the step weights over
``sqrt(1 + c)``, ``c`` the step's appearances in those results: an unmeasured step's cost is uncertain
and may be lower than the embedding says, a measured one's is known.

Called by :class:`~.metric.MetricStructuralSurrogate` when it renews its list of measured moves.
"""
from __future__ import annotations

from typing import List

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import lsqr

from ...parameters.features import FeatureGroup, pair_index

#: the ridge of the residual against the fit (standardized values, per unit of a feature)
DAMP = 0.1

#: LSQR iterations per fit
ITERATIONS = 100

#: the lowering of an unmeasured directed step's weight, in standard deviations of the step weights
OPTIMISM = 0.1


def local_residual(X: sp.csr_matrix, y: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """The correction ``r`` (one weight per column of ``X``) of the weights ``centre`` that fits the
    results ``y`` of the rows ``X`` up to a constant, ridge :data:`DAMP` (see the module docstring).
    Zero without rows."""
    if X.shape[0] == 0:
        return np.zeros(X.shape[1])
    A = sp.hstack([X, sp.csr_matrix(np.ones((X.shape[0], 1)))], format="csr")
    r = lsqr(A, y - X @ centre, damp=DAMP, iter_lim=ITERATIONS)[0]
    return np.asarray(r[:-1])


def optimism(X: sp.csr_matrix, weights: np.ndarray, blocks: List[FeatureGroup],
             directions: List[FeatureGroup]) -> np.ndarray:
    """The shift of ``weights`` (one per column of ``X``, whose rows hold 0/1 features) that lowers each
    directed step of each adjacency block (``directions`` their direction groups, same order) by
    :data:`OPTIMISM` x the standard deviation of the block's step weights (adjacency plus direction)
    over ``sqrt(1 + c)``, ``c`` the rows of ``X`` holding the step; 0 on the other columns."""
    shift = np.zeros(weights.size)
    counts = np.bincount(X.indices, minlength=X.shape[1]).astype(float)
    for g, d in zip(blocks, directions):
        n = int(round(np.sqrt(d.size)))
        a, b = np.divmod(np.arange(n * n), n)
        off = a != b
        steps = weights[d.start:d.stop][off] + weights[g.start + pair_index(a[off], b[off], n)]
        spread = float(np.std(steps)) if steps.size else 0.0
        shift[d.start:d.stop] = -OPTIMISM * spread / np.sqrt(1.0 + counts[d.start:d.stop])
    return shift

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

Called by :class:`~.metric.MetricStructuralSurrogate` when it renews its list of measured moves.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import lsqr

#: the ridge of the residual against the fit (standardized values, per unit of a feature)
DAMP = 0.1

#: LSQR iterations per fit
ITERATIONS = 100


def local_residual(X: sp.csr_matrix, y: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """The correction ``r`` (one weight per column of ``X``) of the weights ``centre`` that fits the
    results ``y`` of the rows ``X`` up to a constant, ridge :data:`DAMP` (see the module docstring).
    Zero without rows."""
    if X.shape[0] == 0:
        return np.zeros(X.shape[1])
    A = sp.hstack([X, sp.csr_matrix(np.ones((X.shape[0], 1)))], format="csr")
    r = lsqr(A, y - X @ centre, damp=DAMP, iter_lim=ITERATIONS)[0]
    return np.asarray(r[:-1])

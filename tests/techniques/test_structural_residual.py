"""The local residual on top of an accepted embedding (:mod:`tunerlib.techniques.structural.residual`)."""
import numpy as np
import scipy.sparse as sp

from tunerlib.techniques.structural.residual import local_residual


def _rows(seed, rows=400, width=60, per_row=6):
    rng = np.random.default_rng(seed)
    cols = np.stack([rng.choice(width, per_row, replace=False) for _ in range(rows)])
    return sp.csr_matrix((np.ones(cols.size), cols.ravel(), np.arange(0, cols.size + 1, per_row)),
                         shape=(rows, width))


def test_recovers_a_planted_correction_up_to_a_constant():
    # each row holds as many features as the next (a tour's steps), so a shift of every weight is
    # the constant's: the correction is determined up to it
    X = _rows(0)
    centre = np.random.default_rng(1).random(X.shape[1])
    planted = np.zeros(X.shape[1])
    planted[[3, 17, 40]] = [2.0, -1.5, 1.0]
    y = X @ (centre + planted) + 7.0
    r = local_residual(X, y, centre)
    assert np.ptp(r - planted) < 0.1
    assert np.array_equal(np.argsort(centre + r)[:5], np.argsort(centre + planted)[:5])


def test_zero_without_rows_and_when_the_centre_fits():
    X = _rows(2)
    centre = np.random.default_rng(3).random(X.shape[1])
    assert not local_residual(X[:0], np.zeros(0), centre).any()
    assert np.ptp(local_residual(X, X @ centre - 3.0, centre)) < 1e-3

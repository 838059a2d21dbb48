"""The local residual on top of an accepted embedding (:mod:`tunerlib.techniques.structural.residual`)."""
import numpy as np
import scipy.sparse as sp

from tunerlib.parameters import PermutationParameter
from tunerlib.parameters.features import FeatureLayout, pair_index
from tunerlib.techniques.structural.residual import OPTIMISM, local_residual, optimism


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


def _tours_matrix(layout, tours):
    rows = [layout.encode({"t": t}) for t in tours]
    return sp.csr_matrix((np.concatenate([v for _, v in rows]), np.concatenate([i for i, _ in rows]),
                          np.cumsum([0] + [i.size for i, _ in rows])), shape=(len(rows), layout.size))


def test_optimism_lowers_each_directed_step_by_the_spread_over_the_root_of_its_appearances():
    n = 6
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    adjacency, direction = layout.groups
    X = _tours_matrix(layout, [[0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 5, 4]])
    weights = np.random.default_rng(4).random(layout.size)
    shift = optimism(X, weights, [adjacency], [direction])
    assert not shift[:direction.start].any() and not shift[direction.stop:].any()
    a, b = np.divmod(np.arange(n * n), n)
    off = a != b
    spread = np.std(weights[direction.start:direction.stop][off]
                    + weights[adjacency.start + pair_index(a[off], b[off], n)])
    step = lambda i, j: shift[direction.start + i * n + j]      # noqa: E731
    assert np.isclose(step(1, 0), -OPTIMISM * spread)           # in no tour
    assert np.isclose(step(4, 5), -OPTIMISM * spread / np.sqrt(2.0))   # in one
    assert np.isclose(step(0, 1), -OPTIMISM * spread / np.sqrt(3.0))   # in both
    # the shift lowers an unmeasured step more than a measured one, so moves adding unmeasured steps
    # rank higher than the residual alone puts them
    assert step(1, 0) < step(4, 5) < step(0, 1) < 0.0

"""A sparse Bayesian linear model over structural features, updated incrementally.

``y ≈ mean + x · w`` with a Gaussian prior ``w_j ~ N(0, s_g)`` whose variance ``s_g`` is shared by the
features of one group (one feature kind of one parameter): ``1 / active`` (the objective's standardized
variance spread over the features a configuration holds), a quarter of that for the ``direction`` group
(asymmetry is a correction to the undirected cost).  The noise variance follows the fit's residual with
a small floor.  (Learning the group scales by EM under the diagonal posterior was tried and shrank
them far too much: berlin52 ended at 1.09x instead of 1.00x the optimum at 3,000 evaluations.)  The posterior mean is found by
preconditioned conjugate gradients on the normal equations, warm-started from the previous solution,
so each new observation costs a few sparse products instead of a refit; the posterior variances are
the diagonal approximation ``noise / (x_j·x_j + noise / s_g)``, which is what Thompson sampling here
draws from.

The fit reads the most recent :data:`WINDOW` observations: the window moves at each full re-solve,
and the rows leaving it are taken out of the per-feature counts, so the cost per observation stops
growing with the run (a run of fewer observations sees no difference).

Call protocol: :meth:`add` for every finite observation, :meth:`refresh` before a suggestion (cheap when
little changed), then :meth:`sample` or :attr:`mean` and :meth:`predict`.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np
import scipy.sparse as sp

from ...parameters.features import Active, FeatureGroup

#: feature kinds with the same number of active features in every configuration
CONSTANT_KINDS = ("adjacency", "direction", "one-hot")

#: without an intercept, the offset is the mean of this many first values (the random start)
REFERENCE = 10

#: at most this many observations are folded in by Woodbury updates before a full re-solve (the
#: update costs the cube of their number)
MAX_PENDING = 50

#: most recent observations the model is fitted to (the full re-solve, standardization and noise read
#: these; the cost per observation is flat beyond them)
WINDOW = 20000

#: the smallest noise variance (standardized units): the ridge that keeps an exact fit well-posed
NOISE_FLOOR = 1e-4


class _Rows:
    """Growable CSR storage of the observed feature vectors."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.indices = np.zeros(1024, dtype=np.int32)
        self.data = np.zeros(1024)
        self.indptr = [0]

    def append(self, idx: np.ndarray, val: np.ndarray) -> None:
        start, stop = self.indptr[-1], self.indptr[-1] + idx.size
        if stop > self.indices.size:
            grow = max(stop, 2 * self.indices.size)
            self.indices = np.resize(self.indices, grow)
            self.data = np.resize(self.data, grow)
        self.indices[start:stop] = idx
        self.data[start:stop] = val
        self.indptr.append(stop)

    def matrix(self, first: int = 0) -> sp.csr_matrix:
        """The rows from ``first`` on, as a CSR matrix (views of the buffers, no copy)."""
        lo, hi = self.indptr[first], self.indptr[-1]
        ptr = np.asarray(self.indptr[first:]) - lo
        return sp.csr_matrix((self.data[lo:hi], self.indices[lo:hi], ptr), shape=(ptr.size - 1, self.width))


class _Pending:
    """The rows since the last full solve as the Woodbury correction reads them: each row's entries
    sorted by feature (the order in which the correction's sparse products sum them) and relabelled by
    the features these rows hold, in order of first appearance, so that the correction's products and
    transposes span those features instead of every feature.  A row is sorted and labelled once."""

    def __init__(self, width: int) -> None:
        self.label = np.full(width, -1, dtype=np.int32)
        self.features = np.zeros(0, dtype=np.intp)
        self.indices: List[np.ndarray] = []
        self.data: List[np.ndarray] = []
        self.indptr = [0]

    def clear(self) -> None:
        """Forget the rows (called when a full solve moves the anchor)."""
        self.label[self.features] = -1
        self.features = np.zeros(0, dtype=np.intp)
        self.indices, self.data, self.indptr = [], [], [0]

    def matrix(self, X: sp.csr_matrix) -> Tuple[np.ndarray, sp.csr_matrix]:
        """The features that the rows of ``X`` (every row since the last solve) hold, and those rows,
        sorted, over them; the rows past those already held are added."""
        for i in range(len(self.indptr) - 1, X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            order = np.argsort(X.indices[lo:hi], kind="stable")
            idx, val = X.indices[lo:hi][order], X.data[lo:hi][order]
            new = np.unique(idx[self.label[idx] < 0])
            self.label[new] = np.arange(self.features.size, self.features.size + new.size)
            self.features = np.concatenate((self.features, new))
            self.indices.append(self.label[idx])
            self.data.append(val)
            self.indptr.append(self.indptr[-1] + idx.size)
        data = np.concatenate(self.data) if self.data else np.zeros(0)
        indices = np.concatenate(self.indices) if self.indices else np.zeros(0, dtype=np.int32)
        rows = sp.csr_matrix((data, indices, np.asarray(self.indptr)), shape=(X.shape[0], self.features.size))
        return self.features, rows


class SparseBayesLinear:
    """Bayesian linear regression over ``size`` features in ``groups`` (see the module docstring)."""

    def __init__(self, size: int, groups: Sequence[FeatureGroup], cg_steps: int = 10,
                 fit_intercept: Optional[bool] = None, window: int = WINDOW) -> None:
        self.size = size
        self.window = window
        self.first = 0                          # the oldest observation in the fitted window
        self.groups = list(groups)
        self.cg_steps = cg_steps
        self.rows = _Rows(size)
        self.y: List[float] = []
        self.counts = np.zeros(size)            # x_j · x_j over the observations in the window
        self.prior = np.ones(size)              # s_g per feature
        for g in self.groups:
            scale = 0.25 if g.kind == "direction" else 1.0
            self.prior[g.start:g.stop] = scale / max(g.active, 1)
        self.noise = NOISE_FLOOR
        #: permutations and one-hot groups hold a fixed number of active features in every
        #: configuration, so their weights carry any constant; an intercept is fitted only without them
        if fit_intercept is None:
            fit_intercept = not any(g.kind in CONSTANT_KINDS for g in self.groups)
        self.fit_intercept = fit_intercept
        self.mean = np.zeros(size)               # posterior mean of w (standardized y)
        self.offset, self.scale = 0.0, 1.0        # y standardization
        self.intercept = 0.0
        self.anchor = np.zeros(size)             # the mean at the last full solve
        self.prior_mean = np.zeros(size)         # the prior's centre m (w ~ N(m, s_g)); 0 here
        self._anchor_n = 0
        self._fitted_n = 0
        self._noise_n = 0
        self._pending = _Pending(size)           # the rows since the anchor, for the Woodbury correction

    @property
    def n(self) -> int:
        return len(self.y)

    def add(self, active: Active, y: float) -> None:
        """Record one observation (``y`` finite)."""
        idx, val = active
        self.rows.append(idx, val)
        np.add.at(self.counts, idx, val * val)
        self.y.append(float(y))

    def mapped(self, fn: Callable[[float], float], empty: "SparseBayesLinear") -> "SparseBayesLinear":
        """``empty`` (a new model of the same features) given every observation of this one, each
        value mapped by ``fn``; it is fitted at its first :meth:`refresh`."""
        X = self.rows.matrix()
        for i, y in enumerate(self.y):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            empty.add((X.indices[lo:hi].copy(), X.data[lo:hi].copy()), fn(y))
        return empty

    # ---- fitting --------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Bring the posterior up to date.

        Observations since the last solve are folded in exactly by a Woodbury update under the
        diagonal posterior (cost independent of the data size); when they reach a twentieth of the data
        (at most :data:`MAX_PENDING`), warm-started CG steps re-solve the whole system; when the data
        grew by a quarter, the standardization and the noise variance are renewed around the solve."""
        if self.n == 0 or self.n == self._fitted_n:
            return
        if self.n >= max(8, int(1.25 * self._noise_n)):
            X = self._windowed()
            self._restandardize()
            self._solve(X, steps=max(self.cg_steps, 30))
            self._update_noise(X)
            self._noise_n = self.n
            self._solve(X, steps=self.cg_steps)
        elif self.n - self._anchor_n >= min(max(8, self.n // 20), MAX_PENDING):
            self._solve(self._windowed(), steps=self.cg_steps)
        else:
            self._correct()
        self._fitted_n = self.n

    def _windowed(self) -> sp.csr_matrix:
        """Move the window to the most recent :attr:`window` observations (their rows leave the
        counts) and return its rows."""
        first = max(0, self.n - self.window)
        if first > self.first:
            old = self.rows.matrix(self.first)[: first - self.first]
            np.add.at(self.counts, old.indices, -(old.data * old.data))
            self.first = first
        return self.rows.matrix(self.first)

    def _correct(self) -> None:
        """``mean = anchor + V X_new' (X_new V X_new' + noise I)^-1 (y_new - X_new anchor)``, V diagonal."""
        X = self.rows.matrix(self._anchor_n)
        y = (np.asarray(self.y[self._anchor_n:]) - self.offset) / self.scale
        resid = y - (X @ self.anchor + self.intercept)
        features, Xs = self._pending.matrix(X)  # X's rows sorted, over the features they hold
        v = self.noise / (self.counts[features] + self.noise / self.prior[features])   # their variance()
        XV = sp.csr_matrix((Xs.data * v[Xs.indices], Xs.indices, Xs.indptr), shape=Xs.shape)  # Xs.multiply(v)
        S = (XV @ Xs.T).toarray() + self.noise * np.eye(X.shape[0])
        mean = self.anchor.copy()
        mean[features] += XV.T @ np.linalg.solve(S, resid)
        self.mean = mean

    def _restandardize(self) -> None:
        """Scale by the standard deviation of all values.  The offset is the mean of the first
        :data:`REFERENCE` values (the random start of a run) when there is no intercept: a feature
        never seen then weighs 0, the level of a random configuration, not that of the incumbent's."""
        y = np.asarray(self.y[self.first:])
        scale = float(np.std(y)) or 1.0
        offset = float(np.median(y)) if self.fit_intercept else float(np.mean(self.y[:REFERENCE]))
        self.mean = self.mean * (self.scale / scale)
        self.offset, self.scale = offset, scale

    def _target(self) -> np.ndarray:
        """The standardized values of the window."""
        return (np.asarray(self.y[self.first:]) - self.offset) / self.scale

    def _ridge(self) -> np.ndarray:
        return self.noise / self.prior

    def _solve(self, X: sp.csr_matrix, steps: int) -> None:
        """Preconditioned CG on ``(X'X + R) w = X'(y - intercept) + R m``, ``R = noise/prior`` and ``m``
        the prior's centre, from the current mean.

        With an intercept (only when no feature group carries a constant), it is the mean residual
        (not penalised), eliminated by centring."""
        y = self._target()
        centre = 1.0 if self.fit_intercept else 0.0
        colmean = centre * np.asarray(X.mean(axis=0)).ravel()
        yc = y - centre * y.mean()
        ridge = self._ridge()

        def matvec(w: np.ndarray) -> np.ndarray:
            xw = X @ w
            return X.T @ (xw - centre * xw.mean()) + ridge * w

        b = X.T @ yc + ridge * self.prior_mean
        diag = np.maximum(self.counts - X.shape[0] * colmean * colmean, 0.0) + ridge
        w = self.mean
        r = b - matvec(w)
        z = r / diag
        p = z.copy()
        rz = float(r @ z)
        for _ in range(steps):
            if rz <= 1e-20:
                break
            ap = matvec(p)
            alpha = rz / float(p @ ap)
            w = w + alpha * p
            r = r - alpha * ap
            z = r / diag
            rz_new = float(r @ z)
            p = z + (rz_new / rz) * p
            rz = rz_new
        self.mean = self.anchor = w
        self.intercept = float(y.mean() - colmean @ w) if self.fit_intercept else 0.0
        self._anchor_n = self.n
        self._pending.clear()

    def _update_noise(self, X: sp.csr_matrix) -> None:
        """The noise variance: the mean squared residual of the fit, at least :data:`NOISE_FLOOR`.

        While features outnumber observations the fit interpolates and the noise stays at the floor
        (a deterministic objective is fitted exactly); with more data it follows the misfit."""
        resid = self._target() - (X @ self.mean + self.intercept)
        self.noise = float(np.clip(resid @ resid / max(resid.size, 1), NOISE_FLOOR, 1.0))

    # ---- queries ------------------------------------------------------------------------------------
    def variance(self) -> np.ndarray:
        """Diagonal approximation of the posterior variance of each weight (standardized units)."""
        return self.noise / (self.counts + self.noise / self.prior)

    def sample(self, rng: np.random.Generator, temperature: float = 1.0) -> np.ndarray:
        """A Thompson sample of the weights (diagonal posterior), in standardized units."""
        noise = rng.standard_normal(self.size)
        return self.mean + temperature * np.sqrt(self.variance()) * noise

    def predict(self, active: Active, weights: np.ndarray) -> float:
        """The model's value of one configuration, in the objective's units."""
        idx, val = active
        return self.offset + self.scale * (self.intercept + float(weights[idx] @ val))


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x``, tied values sharing their average rank."""
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return (ends - (counts - 1) / 2.0)[inverse]


def rank_correlation(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation of ``a`` and ``b`` (average ranks for ties); 0.0 when either is
    constant."""
    ra, rb = _average_ranks(np.asarray(a, dtype=float)), _average_ranks(np.asarray(b, dtype=float))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = float(np.sqrt((ra @ ra) * (rb @ rb)))
    return float(ra @ rb) / denom if denom > 0 else 0.0

"""Gaussian-process surrogate (numpy/scipy): Matérn 5/2 over per-parameter distances with ARD.

``k(x, x') = s * (1 + sqrt(5) r + 5/3 r**2) * exp(-sqrt(5) r)`` with
``r**2 = sum_i d_i(x, x')**2 / l_i**2`` (BaCO §3.2, eq. 1-2); observations carry Gaussian noise of
variance ``n``.  The caller passes the stacked squared per-parameter distances (see
:mod:`.distances`) and standardised targets; this module never sees configurations.

Hyperparameters ``theta = (log l_1 .. log l_P, log s, log n)`` are fitted by maximising the log
marginal posterior: the log marginal likelihood plus a Gamma(shape 1.3, rate 0.1) log prior on every
lengthscale (BaCO's prior for normalised inputs); outputscale and noise have box bounds, and with
``noise_prior`` the noise variance of the standardised targets also gets a prior flat up to exp(-4)
(about 2 % of their variance) with a log-normal tail of log sd 1 above it (the centre of BoTorch's
LogNormal(-4, 1) noise prior, Hvarfner et al. 2024; flat below, so fits of deterministic, replayed
measurements keep interpolating).  Without it a fit on a handful of results in many distance
channels often finds "all noise" most likely (outputscale at its floor, noise variance 1): the
posterior is then flat, expected improvement peaks wherever the variance does (the corners and the
ends of ordinal ranges, farthest from the data).  The prior removes those fits but did not make
BayesianOptimization better overall at 20-60 evaluations (docs/benchmarks/default-technique.md),
so it is off by default.  As in
BaCO, many random settings are scored first (lengthscales log-uniform in [0.1, 10], outputscale in
[0.1, 10], noise in [1e-5, 1e-2], plus the previous optimum), and the best few are refined with
L-BFGS-B using the analytic gradient; the best result wins.  The last ``dormant`` channels (the pair
channels of :mod:`.ridges`) start the random settings at lengthscales of 10-100 instead, where they
hardly change the kernel, so a fit turns them on only where the data ask for it.  Cholesky
factorisations add jitter and retry with ten times more (up to 1e-2) before giving up on a setting.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular
from scipy.linalg.lapack import dpotri
from scipy.optimize import minimize

from ..blas import single_thread_blas

SQRT5 = math.sqrt(5.0)
LOG_2PI = math.log(2.0 * math.pi)

#: box bounds (natural units) of the hyperparameters
LENGTHSCALE_BOUNDS = (1e-2, 1e2)
OUTPUTSCALE_BOUNDS = (1e-2, 1e2)
NOISE_BOUNDS = (1e-6, 1.0)
#: Gamma prior on lengthscales (shape, rate)
LENGTHSCALE_PRIOR = (1.3, 0.1)
#: prior on the noise variance of the standardised targets: flat up to exp(first), above it the
#: log-normal tail of sd ``second`` (in the log)
NOISE_PRIOR = (-4.0, 1.0)
JITTER = 1e-8
#: lengthscale range (log-uniform) of the random settings of dormant channels: a channel's squared
#: distances lie in [0, 1], so at these lengthscales it adds at most 1 % to ``r**2`` until a fit shortens it
DORMANT_RANGE = (10.0, 100.0)


class GPFitError(ArithmeticError):
    """No hyperparameter setting gave a positive-definite covariance matrix."""


def matern52(r2: np.ndarray) -> np.ndarray:
    """The unit-variance Matérn 5/2 kernel as a function of the squared scaled distance."""
    r = np.sqrt(np.maximum(r2, 0.0))
    return (1.0 + SQRT5 * r + (5.0 / 3.0) * r2) * np.exp(-SQRT5 * r)


def robust_cholesky(K: np.ndarray, jitter: float = JITTER) -> np.ndarray:
    """Lower Cholesky factor of ``K + jitter I``, retrying with 10x jitter up to 1e-2."""
    n = K.shape[0]
    eye = np.eye(n)
    j = jitter
    while True:
        try:
            return cholesky(K + j * eye, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            if j >= 1e-2:
                raise
            j *= 10.0


def _inverse_from_cholesky(L: np.ndarray) -> np.ndarray:
    """``K^-1`` from the lower Cholesky factor of ``K`` (LAPACK potri, then symmetrised)."""
    inv, info = dpotri(L, lower=1)   # lower triangle; the upper one keeps L's zeros
    if info != 0:
        return cho_solve((L, True), np.eye(L.shape[0]), check_finite=False)
    full = inv + inv.T
    full[np.diag_indices_from(full)] *= 0.5
    return full


@dataclass
class Hyper:
    """Fitted hyperparameters in natural units."""

    lengthscales: np.ndarray
    outputscale: float
    noise: float

    def theta(self) -> np.ndarray:
        return np.concatenate([np.log(self.lengthscales), [math.log(self.outputscale), math.log(self.noise)]])

    @classmethod
    def from_theta(cls, theta: np.ndarray) -> "Hyper":
        return cls(np.exp(theta[:-2]), float(math.exp(theta[-2])), float(math.exp(theta[-1])))


class GaussianProcess:
    """Exact GP on precomputed distance stacks ``D2`` of shape ``(P, n, n)`` and targets ``y``.

    Call :meth:`fit` (hyperparameter search) or :meth:`set_hyper`, then :meth:`predict`.
    """

    def __init__(self, D2: np.ndarray, y: np.ndarray, noise_prior: bool = False, dormant: int = 0) -> None:
        #: (threshold, log sd) of the noise prior's tail (:data:`NOISE_PRIOR`); None: box bounds only
        self.noise_prior = NOISE_PRIOR if noise_prior else None
        #: the last this many channels start the random settings at long lengthscales (:data:`DORMANT_RANGE`)
        self.dormant = dormant
        self.D2 = np.asarray(D2, dtype=float)
        self.y = np.asarray(y, dtype=float).ravel()
        self.P, self.n = self.D2.shape[0], self.y.shape[0]
        if self.D2.shape[1:] != (self.n, self.n):
            raise ValueError(f"distance stack has shape {self.D2.shape}, expected (P, {self.n}, {self.n})")
        lo = [math.log(LENGTHSCALE_BOUNDS[0])] * self.P + [math.log(OUTPUTSCALE_BOUNDS[0]), math.log(NOISE_BOUNDS[0])]
        hi = [math.log(LENGTHSCALE_BOUNDS[1])] * self.P + [math.log(OUTPUTSCALE_BOUNDS[1]), math.log(NOISE_BOUNDS[1])]
        self.bounds = list(zip(lo, hi))
        self.hyper: Optional[Hyper] = None
        self.log_posterior = -math.inf
        #: ``(-log posterior, theta)`` of the best random setting and of every refined setting of the
        #: last :meth:`fit`, in the order found
        self.optima: List[Tuple[float, np.ndarray]] = []
        self._L: Optional[np.ndarray] = None
        self._alpha: Optional[np.ndarray] = None

    # ---- objective ------------------------------------------------------------------------
    def _r2(self, inv_l2: np.ndarray) -> np.ndarray:
        return np.tensordot(inv_l2, self.D2, axes=1) if self.P else np.zeros((self.n, self.n))

    def neg_log_posterior(self, theta: np.ndarray, grad: bool = True) -> Tuple[float, np.ndarray]:
        """``-(log marginal likelihood + log prior)`` and its gradient in ``theta`` (called by L-BFGS-B)."""
        theta = np.asarray(theta, dtype=float)
        ls = np.exp(theta[:-2])
        sf2, sn2 = math.exp(theta[-2]), math.exp(theta[-1])
        inv_l2 = 1.0 / (ls * ls)
        r2 = self._r2(inv_l2)
        r = np.sqrt(np.maximum(r2, 0.0))
        e = np.exp(-SQRT5 * r)
        kf = (1.0 + SQRT5 * r + (5.0 / 3.0) * r2) * e
        K = sf2 * kf
        K[np.diag_indices_from(K)] += sn2
        try:
            L = robust_cholesky(K)
        except np.linalg.LinAlgError:
            return 1e25, np.zeros_like(theta)
        alpha = cho_solve((L, True), self.y, check_finite=False)
        a, b = LENGTHSCALE_PRIOR
        start, scale = self.noise_prior or (math.inf, 1.0)
        excess = max(0.0, float(theta[-1]) - start) / scale
        log_prior = float(np.sum((a - 1.0) * np.log(ls) - b * ls)) - 0.5 * excess * excess
        lml = -0.5 * float(self.y @ alpha) - float(np.sum(np.log(np.diag(L)))) - 0.5 * self.n * LOG_2PI
        value = -(lml + log_prior)
        if not grad:
            return value, np.zeros_like(theta)
        Kinv = _inverse_from_cholesky(L)
        W = np.outer(alpha, alpha) - Kinv
        g = np.empty_like(theta)
        if self.P:
            G = W * (sf2 * (5.0 / 3.0) * (1.0 + SQRT5 * r) * e)
            g[:-2] = 0.5 * inv_l2 * np.tensordot(self.D2, G, axes=([1, 2], [0, 1]))
        g[-2] = 0.5 * float(np.sum(W * (sf2 * kf)))
        g[-1] = 0.5 * sn2 * float(np.trace(W))
        g[:-2] += (a - 1.0) - b * ls
        g[-1] -= excess / scale
        return value, -g

    # ---- fitting ----------------------------------------------------------------------------
    def random_thetas(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """Random starting settings (BaCO's ranges, log-uniform)."""
        out = np.empty((count, self.P + 2))
        out[:, :-2] = np.log(10.0) * rng.uniform(-1.0, 1.0, size=(count, self.P))
        if self.dormant:
            lo, hi = DORMANT_RANGE
            out[:, self.P - self.dormant:self.P] = rng.uniform(math.log(lo), math.log(hi), size=(count, self.dormant))
        out[:, -2] = np.log(10.0) * rng.uniform(-1.0, 1.0, size=count)
        out[:, -1] = np.log(10.0) * rng.uniform(-5.0, -2.0, size=count)
        return out

    def fit(self, rng: np.random.Generator, n_samples: int = 30, n_starts: int = 10,
            previous: Optional[Hyper] = None, maxiter: int = 60, extra: Sequence[Hyper] = ()) -> Hyper:
        """Multi-start MAP fit: score ``n_samples`` random settings (+ ``previous``), refine the best
        ``n_starts`` with L-BFGS-B, and also every setting of ``extra`` (earlier local optima kept for
        :mod:`.marginal`); keeps and returns the best, and lists every refined optimum in
        :attr:`optima`.  Raises GPFitError if all fail."""
        with single_thread_blas():
            return self._fit(rng, n_samples, n_starts, previous, maxiter, extra)

    def _fit(self, rng: np.random.Generator, n_samples: int, n_starts: int, previous: Optional[Hyper],
             maxiter: int, extra: Sequence[Hyper] = ()) -> Hyper:
        thetas = self.random_thetas(rng, max(n_samples, 1))
        if previous is not None and len(previous.lengthscales) == self.P:
            thetas = np.vstack([previous.theta()[None, :], thetas])
        lo, hi = np.array(self.bounds).T
        thetas = np.clip(thetas, lo, hi)
        scores = np.array([self.neg_log_posterior(t, grad=False)[0] for t in thetas])
        order = np.argsort(scores, kind="stable")[: max(1, n_starts)]
        best_theta, best_value = thetas[order[0]], scores[order[0]]
        self.optima = [(float(best_value), best_theta)]
        starts = [thetas[idx] for idx in order] + [np.clip(h.theta(), lo, hi) for h in extra
                                                    if len(h.lengthscales) == self.P]
        for start in starts:
            try:
                res = minimize(self.neg_log_posterior, start, jac=True, method="L-BFGS-B",
                               bounds=self.bounds, options={"maxiter": maxiter})
            except (ValueError, FloatingPointError, np.linalg.LinAlgError):
                continue
            if not np.all(np.isfinite(res.x)):
                continue
            self.optima.append((float(res.fun), np.clip(res.x, lo, hi)))
            if res.fun < best_value:
                best_theta, best_value = np.clip(res.x, lo, hi), float(res.fun)
        if best_value >= 1e24:
            raise GPFitError("no hyperparameter setting gave a positive-definite covariance matrix")
        self.set_hyper(Hyper.from_theta(best_theta))
        self.log_posterior = -best_value
        return self.hyper  # type: ignore[return-value]

    def set_hyper(self, hyper: Hyper) -> None:
        """Fix the hyperparameters and factorise the covariance matrix (called by :meth:`fit`)."""
        self.hyper = hyper
        inv_l2 = 1.0 / (hyper.lengthscales ** 2)
        K = hyper.outputscale * matern52(self._r2(inv_l2))
        K[np.diag_indices_from(K)] += hyper.noise
        self._L = robust_cholesky(K)
        self._alpha = cho_solve((self._L, True), self.y, check_finite=False)

    # ---- prediction -------------------------------------------------------------------------
    def loo_means(self) -> np.ndarray:
        """Leave-one-out posterior means of the training targets under the fitted hyperparameters:
        ``y_i - [K^-1 y]_i / [K^-1]_ii`` (Rasmussen & Williams eq. 5.12), one per training point."""
        if self._L is None or self._alpha is None:
            raise RuntimeError("call fit() or set_hyper() before loo_means()")
        diag = np.diag(_inverse_from_cholesky(self._L))
        return self.y - self._alpha / np.maximum(diag, 1e-300)

    def predict(self, D2_cross: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation of the noise-free latent function.

        ``D2_cross`` has shape ``(P, m, n)``: squared distances from ``m`` query points to the
        training points.  Returns two arrays of length ``m``.
        """
        if self.hyper is None or self._L is None or self._alpha is None:
            raise RuntimeError("call fit() or set_hyper() before predict()")
        h = self.hyper
        inv_l2 = 1.0 / (h.lengthscales ** 2)
        m = D2_cross.shape[1]
        r2 = np.tensordot(inv_l2, D2_cross, axes=1) if self.P else np.zeros((m, self.n))
        Ks = h.outputscale * matern52(r2)               # (m, n)
        mean = Ks @ self._alpha
        v = solve_triangular(self._L, Ks.T, lower=True, check_finite=False)
        var = h.outputscale - np.einsum("ij,ij->j", v, v)
        return mean, np.sqrt(np.maximum(var, 1e-12))

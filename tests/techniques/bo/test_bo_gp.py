"""BO Gaussian process: interpolation, gradient, hyperparameter recovery, robustness."""
import math

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from tunerlib.techniques.bo.gp import GaussianProcess, Hyper, matern52, robust_cholesky


def stack(X):
    """Squared per-dimension distances (P, n, n) of points X (n, P)."""
    return np.stack([(X[:, i, None] - X[None, :, i]) ** 2 for i in range(X.shape[1])])


def cross(Xq, X):
    return np.stack([(Xq[:, i, None] - X[None, :, i]) ** 2 for i in range(X.shape[1])])


def test_posterior_interpolates_noiseless_data():
    rng = np.random.default_rng(0)
    X = rng.random((25, 2))
    y = np.sin(6 * X[:, 0]) + np.cos(4 * X[:, 1])
    y = (y - y.mean()) / y.std()
    gp = GaussianProcess(stack(X), y)
    gp.fit(rng, n_samples=20, n_starts=5)
    mean, std = gp.predict(cross(X, X))
    assert np.max(np.abs(mean - y)) < 0.05
    assert np.max(std) < 0.1
    assert gp.hyper.noise < 1e-2
    # far from the data the uncertainty is larger than at the data
    mean_far, std_far = gp.predict(cross(np.array([[3.0, 3.0]]), X))
    assert std_far[0] > 5 * np.max(std)


def test_fixed_hyperparameters_interpolate_exactly():
    X = np.linspace(0, 1, 8)[:, None]
    y = np.array([0.1, -0.5, 0.3, 1.2, -1.0, 0.0, 0.4, -0.2])
    gp = GaussianProcess(stack(X), y)
    gp.set_hyper(Hyper(np.array([0.3]), 1.0, 1e-8))
    mean, std = gp.predict(cross(X, X))
    assert np.allclose(mean, y, atol=1e-4)
    assert np.all(std < 1e-2)


@pytest.mark.parametrize("noise_prior", [False, True])
def test_analytic_gradient_matches_finite_differences(noise_prior):
    rng = np.random.default_rng(1)
    X = rng.random((15, 3))
    y = rng.normal(size=15)
    gp = GaussianProcess(stack(X), y, noise_prior)
    for theta in (np.array([-1.0, 0.2, 1.0, 0.1, -4.0]), np.array([0.5, -0.3, -2.0, -0.5, -2.0])):
        _, g = gp.neg_log_posterior(theta)
        num = approx_fprime(theta, lambda t: gp.neg_log_posterior(t, grad=False)[0], 1e-6)
        assert np.allclose(g, num, rtol=1e-4, atol=1e-4), (g, num)


def sample_gp(rng, X, lengthscales, noise=1e-4):
    r2 = np.tensordot(1.0 / np.asarray(lengthscales) ** 2, stack(X), axes=1)
    K = matern52(r2) + noise * np.eye(len(X))
    return robust_cholesky(K) @ rng.normal(size=len(X))


def test_fit_recovers_a_known_lengthscale():
    """Data drawn from a GP with lengthscale 0.2 (and an irrelevant second input): the fitted
    lengthscale is within a factor 2, and the irrelevant input gets a much longer one."""
    fitted = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = rng.random((80, 2))
        y = sample_gp(rng, X, [0.2, 1e6])
        y = (y - y.mean()) / y.std()
        gp = GaussianProcess(stack(X), y)
        h = gp.fit(rng, n_samples=30, n_starts=5)
        fitted.append(h.lengthscales)
    med = np.median(np.array(fitted), axis=0)
    assert 0.1 <= med[0] <= 0.4, fitted
    assert med[1] > 5 * med[0], fitted


def test_duplicate_points_do_not_break_the_fit():
    X = np.array([[0.1], [0.1], [0.1], [0.5], [0.9]])
    y = np.array([1.0, 1.0, 1.0, -1.0, 0.0])
    gp = GaussianProcess(stack(X), y)
    gp.fit(np.random.default_rng(0), n_samples=10, n_starts=3)
    mean, std = gp.predict(cross(X, X))
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std))


def test_robust_cholesky_adds_jitter_to_a_singular_matrix():
    K = np.ones((4, 4))
    L = robust_cholesky(K)
    assert np.allclose(L @ L.T, K, atol=1e-3)
    with pytest.raises(np.linalg.LinAlgError):
        robust_cholesky(-np.eye(3))


def test_zero_dimensional_space():
    gp = GaussianProcess(np.zeros((0, 3, 3)), np.array([1.0, -1.0, 0.0]))
    gp.fit(np.random.default_rng(0), n_samples=5, n_starts=2)
    mean, std = gp.predict(np.zeros((0, 2, 3)))
    assert mean.shape == (2,) and math.isfinite(std[0])


def _grid_sample(seed):
    """Seven configurations of four 11-valued ordinal parameters (unit values, as the encoder gives
    them, with a Hamming channel each) and a standardised deterministic objective of them."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 11, size=(7, 4)) / 10.0
    y = 3 * np.abs(X[:, 0] - 0.3) + 2 * np.abs(X[:, 1] - X[:, 2]) + np.sin(7 * X[:, 3])
    hamming = np.stack([(X[:, i, None] != X[None, :, i]).astype(float) for i in range(4)])
    return np.concatenate([stack(X), hamming]), (y - y.mean()) / y.std()


def test_few_observations_are_not_explained_as_noise():
    """With a handful of results in many distance channels the marginal likelihood alone prefers
    "all noise" (outputscale at its floor, noise variance 1): the posterior is then flat, expected
    improvement is largest wherever the variance is (the corners of the space) and the proposals
    stop using the data.  The noise prior keeps the signal: the fitted noise stays below the signal
    variance and the posterior mean follows the observations."""
    for seed in range(8):
        D2, y = _grid_sample(seed)
        gp = GaussianProcess(D2, y, noise_prior=True)
        h = gp.fit(np.random.default_rng(0))
        assert h.noise < 0.1 * h.outputscale, (seed, h)
        mean, _ = gp.predict(D2)
        assert np.corrcoef(mean, y)[0, 1] > 0.9, seed


def test_without_the_noise_prior_few_observations_can_be_explained_as_noise():
    """Without the noise prior (BayesianOptimization's default, option ``noise_prior``) only the box
    bounds apply: some of the samples above then fit as "all noise", which is what the prior prevents."""
    collapsed = 0
    for seed in range(8):
        D2, y = _grid_sample(seed)
        h = GaussianProcess(D2, y).fit(np.random.default_rng(0))
        collapsed += h.noise > h.outputscale
    assert collapsed >= 1

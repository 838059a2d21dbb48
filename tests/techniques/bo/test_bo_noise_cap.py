"""BayesianOptimization's option ``noise_cap_designs``: while the OK results are few, a GP fit that
explains them all as noise is replaced by the most probable fit with the noise variance capped."""
import random

import numpy as np
import pytest

from tunerlib.parameters import ConfigurationManipulator, IntegerParameter, PowerOfTwoParameter
from tunerlib.techniques import Feedback
from tunerlib.techniques.bo import BayesianOptimization, noise_cap
from tunerlib.techniques.bo.gp import GaussianProcess, Hyper
from tunerlib.techniques.bo.noise_cap import NOISE_CAP, NoiseCap, explains_as_noise

FAST = dict(n_random_samples=200, n_starts=3, hp_samples=10, hp_starts=2, max_local_steps=4)


def grid_sample(seed):
    """Seven configurations of four 11-valued ordinal parameters, each with a Hamming channel, and a
    standardised deterministic objective of them (as the encoder gives them to the GP)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 11, size=(7, 4)) / 10.0
    y = 3 * np.abs(X[:, 0] - 0.3) + 2 * np.abs(X[:, 1] - X[:, 2]) + np.sin(7 * X[:, 3])
    smooth = np.stack([(X[:, i, None] - X[None, :, i]) ** 2 for i in range(4)])
    hamming = np.stack([(X[:, i, None] != X[None, :, i]).astype(float) for i in range(4)])
    return np.concatenate([smooth, hamming]), (y - y.mean()) / y.std()


def collapsing_samples():
    """The samples whose unconstrained fit explains everything as noise (seeds 1 and 4 of 0-7)."""
    out = []
    for seed in range(8):
        D2, y = grid_sample(seed)
        if explains_as_noise(GaussianProcess(D2, y).fit(np.random.default_rng(0))):
            out.append((D2, y))
    return out


def test_the_noise_cap_bounds_the_fitted_noise():
    D2, y = grid_sample(1)
    gp = GaussianProcess(D2, y, noise_cap=1e-3)
    h = gp.fit(np.random.default_rng(0))
    assert h.noise <= 1e-3 * (1 + 1e-9)
    assert GaussianProcess(D2, y, noise_cap=10.0).bounds[-1][1] == pytest.approx(0.0)   # at most the box's 1


def test_an_all_noise_fit_of_few_results_is_refitted_with_the_noise_capped():
    samples = collapsing_samples()
    assert samples
    for D2, y in samples:
        rule = NoiseCap(limit=len(y))
        gp, h = rule.fit(D2, y, np.random.default_rng(0), 30, 10, None, 60)
        assert gp.hyper is h and not explains_as_noise(h) and h.noise <= NOISE_CAP * (1 + 1e-9)
        mean, _ = gp.predict(D2)
        assert np.corrcoef(mean, y)[0, 1] > 0.9           # the posterior follows the results
    assert rule.refits == 1


def test_fits_of_more_results_than_the_limit_are_kept():
    for D2, y in collapsing_samples():
        rule = NoiseCap(limit=len(y) - 1)
        _, h = rule.fit(D2, y, np.random.default_rng(0), 30, 10, None, 60)
        assert explains_as_noise(h) and rule.refits == 0


def test_fits_with_signal_are_kept():
    D2, y = grid_sample(0)
    unconstrained = GaussianProcess(D2, y).fit(np.random.default_rng(0))
    _, h = NoiseCap(limit=100).fit(D2, y, np.random.default_rng(0), 30, 10, None, 60)
    assert not explains_as_noise(unconstrained)
    assert np.allclose(h.theta(), unconstrained.theta())


def space():
    return ConfigurationManipulator([PowerOfTwoParameter("a", 1, 1024), PowerOfTwoParameter("b", 1, 1024),
                                     IntegerParameter("c", 0, 9)])


def value(c):
    return 1.0 + abs(np.log2(c["a"]) - 6) + abs(np.log2(c["b"]) - 2) / 2 + abs(c["c"] - 3) / 3


class AllNoise(GaussianProcess):
    """A GP whose unconstrained searches always end in the all-noise optimum."""

    def fit(self, rng, n_samples=30, n_starts=10, previous=None, maxiter=60):
        if self.bounds[-1][1] < 0.0:                      # a capped search: the real one
            return super().fit(rng, n_samples, n_starts, previous, maxiter)
        self.set_hyper(Hyper(np.ones(self.P), 0.01, 1.0))
        self.log_posterior = 0.0
        return self.hyper


@pytest.mark.parametrize("designs", [0, 2])
def test_bo_replaces_all_noise_fits_while_results_are_few(monkeypatch, designs):
    monkeypatch.setattr(noise_cap, "GaussianProcess", AllNoise)
    m = space()
    tech = BayesianOptimization(noise_cap_designs=designs, copula_every=0, hp_refit_growth=0.0, **FAST)
    tech.bind(m, random.Random(0), "BO")
    kept = []
    for _ in range(14):
        cfg = tech.propose().config
        fs = tech._fit_states[0]
        if fs.hyper is not None:                          # the fit this proposal was made with
            kept.append((tech._n_ok, explains_as_noise(fs.hyper)))
        tech.observe(Feedback(cfg, m.hash_config(cfg), value(cfg), "ok", tech.name, False))
    limit = designs * tech.n_initial
    assert any(n > limit for n, _ in kept) and (designs == 0 or any(n <= limit for n, _ in kept))
    for n, all_noise in kept:
        assert all_noise == (n > limit), (n, limit)
    assert (tech._noise_cap.refits > 0) == (designs > 0)

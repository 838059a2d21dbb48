"""MultiObjectiveBO's ``unexplained_variance``: the variance a GP leaves unexplained among the results
best in another objective is added to its posterior in the EHVI, only where its leave-one-out R^2
there is below the threshold."""
import random

import numpy as np
import pytest

from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.techniques import Feedback, create_technique
from tunerlib.techniques.bo import ehvi_acquisition
from tunerlib.techniques.bo.gp import GaussianProcess
from tunerlib.techniques.bo.unexplained import MIN_ROWS, best_rows, r_squared, unexplained_variance

from kit import light


def fitted(x, y):
    gp = GaussianProcess((x[:, None] - x[None, :])[None] ** 2, (y - y.mean()) / y.std())
    gp.fit(np.random.default_rng(0))
    return gp


def two_metrics(noisy_best: bool):
    """40 rows on a line: the first metric rises with ``x``; the second falls with it, smoothly, and
    among the quarter best in the first metric (the lowest ``x``) is either smooth too or noise."""
    x = np.linspace(0.0, 1.0, 40)
    first = x.copy()
    second = 1.0 - x
    if noisy_best:
        second[:10] = 1.0 + np.random.default_rng(1).standard_normal(10)
    return [fitted(x, first), fitted(x, second)]


def test_best_rows_are_the_best_quarter_and_at_least_min_rows():
    assert sorted(best_rows(np.arange(40.0)[::-1])) == list(range(30, 40))
    assert len(best_rows(np.arange(8.0))) == MIN_ROWS


def test_r_squared():
    t = np.array([1.0, 2.0, 3.0])
    assert r_squared(t, t) == 1.0
    assert r_squared(t, np.full(3, 2.0)) == 0.0
    assert r_squared(np.ones(3), np.zeros(3)) == 1.0


def test_noise_among_the_best_of_the_other_objective_widens_that_metric_only():
    extra = unexplained_variance(two_metrics(noisy_best=True), 0.5)
    assert extra[1] > 0.1
    assert extra[0] == 0.0


def test_a_metric_explained_among_the_best_is_left_alone():
    assert np.all(unexplained_variance(two_metrics(noisy_best=False), 0.5) == 0.0)


def test_nothing_is_added_with_fewer_rows_than_min_rows_or_one_objective():
    x = np.linspace(0.0, 1.0, MIN_ROWS - 1)
    gps = [fitted(x, x), fitted(x, np.random.default_rng(2).standard_normal(len(x)))]
    assert np.all(unexplained_variance(gps, 0.99) == 0.0)
    assert np.all(unexplained_variance(two_metrics(True)[:1], 0.99) == 0.0)


def space():
    m = ConfigurationManipulator()
    for i in range(3):
        m.add_parameter(IntegerParameter(f"x{i}", 0, 7))
    return m


def vector(cfg):
    """Time rises with x0 + x1; energy is smooth among the slow configurations and noise (a hash of the
    configuration) among the fast ones."""
    t = 1.0 + cfg["x0"] + cfg["x1"] + 0.1 * cfg["x2"]
    noise = random.Random(cfg["x0"] * 64 + cfg["x1"] * 8 + cfg["x2"]).random()
    return (t, 10.0 * noise if t < 5 else 20.0 - t)


@pytest.mark.parametrize("threshold", [0.0, 0.5])
def test_the_ehvi_gets_the_widened_posterior_only_with_the_option(threshold, monkeypatch):
    seen = []
    original = ehvi_acquisition.HypervolumeAcquisition.score_encoded

    def spy(self, *args, **kwargs):
        seen.append(self.extra_variance)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ehvi_acquisition.HypervolumeAcquisition, "score_encoded", spy)
    m = space()
    tech = create_technique([light("MultiObjectiveBO") + f";unexplained_variance,{threshold};extreme_every,0"])
    tech.bind(m, random.Random(0), tech.name)
    for _ in range(30):
        p = tech.propose()
        vec = vector(p.config)
        tech.observe(Feedback(p.config, m.hash_config(p.config), vec[0], "ok", p.requestor, False, values=vec))
    assert seen
    if threshold == 0.0:
        assert all(v is None for v in seen)
    else:
        assert any(v is not None and v[1] > 0 for v in seen)

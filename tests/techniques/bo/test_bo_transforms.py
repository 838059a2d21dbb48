"""BayesianOptimization's target transforms: Box-Cox exponents chosen by marginal likelihood
(``power_transforms``) and the Gaussian copula (``copula_transform``), which keeps only the order of
the values (a few catastrophic configurations cannot set the GP's scale)."""
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib import tune_function
from tunerlib.parameters import ConfigurationManipulator, EnumParameter, FloatParameter, IntegerParameter
from tunerlib.techniques import Feedback, TechniqueError
from tunerlib.techniques.bo import BayesianOptimization
from tunerlib.techniques.bo.transforms import log_jacobian, transform


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(min_value=-1000, max_value=1000), min_size=2, max_size=40))
def test_copula_targets_keep_only_the_order(values):
    raw = np.array(values, dtype=float)
    t = transform(raw, "copula")
    assert np.all(np.isfinite(t))
    order = np.argsort(raw, kind="stable")
    assert np.all(np.diff(t[order]) >= 0)                        # monotone in the values
    for v in set(values):                                        # ties share one target
        assert np.ptp(t[raw == v]) == 0
    assert np.array_equal(t, transform(np.exp(raw / 1000) * 3 + 7, "copula"))  # any increasing map: same
    if len(set(values)) == len(values):
        assert abs(float(t.mean())) < 1e-9                       # symmetric quantiles of mid-ranks


def test_the_other_transforms_are_unchanged():
    raw = np.array([1.0, 10.0, 100.0])
    assert np.array_equal(transform(raw, 1.0), raw)
    assert np.allclose(transform(raw, 0.0), np.log(raw))


def space():
    return ConfigurationManipulator([IntegerParameter("a", 0, 15), IntegerParameter("b", 0, 15),
                                     EnumParameter("c", ["x", "y", "z"])])


def objective(c):
    return (c["a"] - 11) ** 2 + 0.5 * (c["b"] - 4) ** 2 + (3 if c["c"] == "y" else 0) + 1.0


def _configs(fn, seed):
    seen = []

    def record(c):
        seen.append((c["a"], c["b"], c["c"]))
        return fn(c)
    tune_function(space(), record, test_limit=25, technique=["BayesianOptimization;copula_transform,true"],
                  seed=seed)
    return seen


def test_an_increasing_map_of_the_objective_gives_the_same_search():
    """With the copula the model sees ranks only: the objective and exp of it give one search."""
    plain = _configs(objective, 4)
    assert plain == _configs(lambda c: math.exp(objective(c) / 10.0) + 1e3, 4)
    assert min(objective({"a": a, "b": b, "c": c}) for a, b, c in plain) <= 3.0   # and it searches


@pytest.mark.parametrize("lam", [-1.0, -0.5, 0.5, 2.0])
def test_box_cox_targets_and_their_jacobian(lam):
    raw = np.array([0.3, 1.0, 2.5, 7.0])
    t = transform(raw, lam)
    assert np.allclose(t, (raw ** lam - 1) / lam) and np.all(np.diff(t) > 0)    # increasing
    h = 1e-6                                                                    # d t / d y numerically
    slope = (transform(raw + h, lam) - transform(raw - h, lam)) / (2 * h)
    assert log_jacobian(raw, lam) == pytest.approx(float(np.sum(np.log(slope))), rel=1e-5)
    assert log_jacobian(raw, 1.0) == 0.0 and log_jacobian(raw, "copula") == 0.0


@pytest.mark.parametrize("text", ["", "0,x", "0,,1", "nan", "0,5"])
def test_bad_power_transforms_are_one_line_errors(text):
    with pytest.raises(TechniqueError, match="power_transforms .* use e.g. '0,1'"):
        BayesianOptimization(power_transforms=text)


def test_the_exponent_is_chosen_by_marginal_likelihood():
    """Values that are the reciprocal of a linear function (a throughput-like objective) pick the
    exponent -1 among identity, log and reciprocal; with the default choices the log is kept."""
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), FloatParameter("y", 0.0, 1.0)])
    for choices, want in (("0,1,-1", -1.0), ("0,1", 0.0)):
        tech = BayesianOptimization(power_transforms=choices, n_random_samples=300, n_starts=4, hp_samples=15,
                                    hp_starts=3, max_local_steps=5)
        tech.bind(m, random.Random(0), "BO")
        rng = random.Random(1)
        for _ in range(30):
            cfg = m.random(rng)
            value = 1.0 / (1.0 + 20 * cfg["x"] + 10 * cfg["y"])
            tech.observe(Feedback(cfg, m.hash_config(cfg), value, "ok", "Other", False))
        assert tech.propose() is not None
        assert tech._fs.transform == want


def test_a_non_positive_value_after_a_log_fit_is_modelled_without_the_log():
    """The log chosen on positive values cannot be kept for the refactorisations between searches
    once a value <= 0 arrives (an objective such as a difference or a score): the next fit searches
    again, where only the identity applies, and the model's targets stay finite."""
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), FloatParameter("y", 0.0, 1.0)])
    tech = BayesianOptimization(n_random_samples=200, n_starts=4, hp_samples=15, hp_starts=3, max_local_steps=5)
    tech.bind(m, random.Random(0), "BO")
    rng = random.Random(1)

    def feed(value_of):
        cfg = m.random(rng)
        tech.observe(Feedback(cfg, m.hash_config(cfg), value_of(cfg), "ok", "Other", False))
    for _ in range(40):
        feed(lambda c: math.exp(6 * c["x"] + 3 * c["y"]))          # multiplicative: the log wins
    assert tech.propose() is not None and tech._fs.transform == 0.0
    feed(lambda c: -1.0)
    assert tech.propose() is not None
    assert tech._fs.transform == 1.0 and math.isfinite(tech._fs.model[2])

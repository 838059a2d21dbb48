"""πBO: BayesianOptimization's initial design samples the user priors, and its acquisition is
multiplied by prior(x) ** (prior_beta / n), a weight that decays as results accumulate."""
import math
import random

import numpy as np

from tunerlib.parameters import (Beta, ConfigurationManipulator, EnumParameter, FloatParameter,
                                 IntegerParameter, Probabilities)
from tunerlib.techniques import Feedback
from tunerlib.techniques.bo import BayesianOptimization
from tunerlib.techniques.bo import acquisition as acq_module

LIGHT = dict(n_random_samples=300, n_starts=4, hp_samples=15, hp_starts=3, max_local_steps=5)


def _space():
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), IntegerParameter("n", 0, 30),
                                  EnumParameter("e", ["a", "b", "c", "d"])])
    return m, lambda c: (c["x"] - 0.7) ** 2 + 0.01 * (c["n"] - 20) ** 2 + (c["e"] != "b")


def _drive(tech, m, fn, steps, seen=None):
    best = math.inf
    for _ in range(steps):
        p = tech.propose()
        if seen is not None:
            seen.append((p.config, tech.prior_exponent()))
        v = fn(p.config)
        tech.observe(Feedback(p.config, m.hash_config(p.config), v, "ok", p.requestor, v < best))
        best = min(best, v)
    return best


def test_initial_design_samples_the_prior():
    m, fn = _space()
    m.set_prior("e", Probabilities({"d": 0.97}))
    m.set_prior("x", Beta(1, 30))
    tech = BayesianOptimization(initial_samples=12, **LIGHT)
    tech.bind(m, random.Random(4), "BO")
    first = [tech.propose().config for _ in range(12)]
    assert sum(c["e"] == "d" for c in first) >= 10          # uniform: 3 of 12 expected
    assert np.median([c["x"] for c in first]) < 0.1          # uniform: 0.5


def test_prior_weight_decays_with_results():
    m, fn = _space()
    m.set_prior("e", Probabilities({"a": 0.9}))
    tech = BayesianOptimization(initial_samples=4, prior_beta=8.0, **LIGHT)
    tech.bind(m, random.Random(1), "BO")
    seen = []
    _drive(tech, m, fn, 24, seen)
    exps = [e for _, e in seen]
    assert exps[0] == 8.0 and all(a >= b for a, b in zip(exps, exps[1:]))
    assert math.isclose(exps[-1], 8.0 / 23)                  # beta / n after n results


def test_acquisition_adds_the_weighted_log_prior(monkeypatch):
    m, fn = _space()
    m.set_prior("e", Probabilities({"a": 0.97}))
    captured = []
    original = acq_module.Acquisition.weigh_by_prior

    def spy(self, prior, exponent):
        captured.append((self, exponent))
        original(self, prior, exponent)
    monkeypatch.setattr(acq_module.Acquisition, "weigh_by_prior", spy)
    tech = BayesianOptimization(initial_samples=4, **LIGHT)
    tech.bind(m, random.Random(2), "BO")
    _drive(tech, m, fn, 10)
    assert [round(e, 6) for _, e in captured] == [round(10.0 / n, 6) for n in range(4, 10)]
    acq, exponent = captured[-1]
    pair = [{"x": 0.5, "n": 10, "e": "a"}, {"x": 0.5, "n": 10, "e": "c"}]
    with_prior = acq.score(pair, strict=False)
    acq.prior = None
    plain = acq.score(pair, strict=False)
    gap = (with_prior - plain)[0] - (with_prior - plain)[1]
    assert math.isclose(gap, exponent * (math.log(0.97 * 4) - math.log(0.01 * 4)), rel_tol=1e-9)


def test_a_wrong_prior_still_finds_the_optimum_and_prior_beta_zero_ignores_it():
    m, fn = _space()
    m.set_prior("e", Probabilities({"d": 0.9}))             # the optimum has e = "b"
    m.set_prior("x", Beta(1, 8))                              # and x = 0.7
    tech = BayesianOptimization(**LIGHT)
    tech.bind(m, random.Random(3), "BO")
    assert _drive(tech, m, fn, 45) < 0.05
    off = BayesianOptimization(prior_beta=0.0, **LIGHT)
    off.bind(m, random.Random(3), "BO")
    calls = []
    original = acq_module.Acquisition.weigh_by_prior
    acq_module.Acquisition.weigh_by_prior = lambda self, p, e: calls.append(e)
    try:
        _drive(off, m, fn, 12)
    finally:
        acq_module.Acquisition.weigh_by_prior = original
    assert calls == []

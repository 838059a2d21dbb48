"""BayesianOptimization's surrogate portfolio (``copula_every``): every k-th BO proposal uses a GP on
the copula of the values, the others the GP on the power transforms; each keeps its own fit state."""
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tunerlib.parameters import ConfigurationManipulator, EnumParameter, FloatParameter, IntegerParameter
from tunerlib.techniques import Feedback, TechniqueError
from tunerlib.techniques.bo import BayesianOptimization
from tunerlib.techniques.bo.fitstate import FitState, surrogate_turn
from tunerlib.techniques.bo.gp import Hyper

FAST = dict(n_random_samples=200, n_starts=3, hp_samples=10, hp_starts=2, max_local_steps=4)


def space():
    return ConfigurationManipulator([FloatParameter("x", -2.0, 2.0), IntegerParameter("n", 0, 20),
                                     EnumParameter("e", ["a", "b", "c"])])


def value(c):
    return 1.0 + (c["x"] - 0.5) ** 2 + abs(c["n"] - 7) / 4 + {"a": 0.0, "b": 0.5, "c": 3.0}[c["e"]]


def drive(tech, m, evaluations, seed=0):
    tech.bind(m, random.Random(seed), "BO")
    for _ in range(evaluations):
        proposal = tech.propose()
        assert proposal is not None
        cfg = proposal.config
        tech.observe(Feedback(cfg, m.hash_config(cfg), value(cfg), "ok", tech.name, False))
    return tech


@given(st.integers(1, 200), st.integers(0, 6))
def test_surrogate_turn(turn, every):
    assert surrogate_turn(turn, every) == (1 if every and turn % every == 0 else 0)


def test_each_surrogate_keeps_its_own_fit():
    m = space()
    tech = drive(BayesianOptimization(copula_every=2, **FAST), m, 14)
    power, copula = tech._fit_states
    assert tech._turns == 14 - tech.n_initial
    assert power.transform in (0.0, 1.0) and copula.transform == "copula"
    assert power.fits >= 1 and copula.fits >= 1
    assert power.model is not None and copula.model is not None
    assert copula.model[0] is not power.model[0]          # two GPs, not one refitted


def finite_space():
    return ConfigurationManipulator([IntegerParameter("n", 0, 20), EnumParameter("e", ["a", "b", "c"])])


@pytest.mark.parametrize("options,finite,copulas", [
    ({}, True, [False, True]), ({}, False, [False]),          # the default: the portfolio on finite spaces
    ({"copula_every": 0}, True, [False]), ({"copula_every": 1}, True, [True]),
    ({"copula_every": 3}, False, [False, True]), ({"copula_transform": True}, True, [True]),
    ({"copula_transform": True, "copula_every": 2}, False, [True])])
def test_the_surrogates_an_option_gives(options, finite, copulas):
    tech = BayesianOptimization(**options)
    tech.bind(finite_space() if finite else space(), random.Random(0), "BO")
    assert [fs.copula for fs in tech._fit_states] == copulas


def test_a_negative_period_is_a_one_line_error():
    with pytest.raises(TechniqueError, match="copula_every"):
        BayesianOptimization(copula_every=-1)


def test_state_dict_round_trips_both_surrogates_and_the_turn():
    m = space()
    tech = drive(BayesianOptimization(copula_every=2, **FAST), m, 12)
    state = tech.state_dict()
    assert state["transform"] in (0.0, 1.0) and state["copula"]["transform"] == "copula"
    fresh = BayesianOptimization(copula_every=2, **FAST)
    fresh.bind(m, random.Random(5), "BO")
    fresh.load_state_dict(state)
    assert fresh._turns == tech._turns
    for a, b in zip(fresh._fit_states, tech._fit_states):
        assert list(a.hyper.lengthscales) == pytest.approx(list(b.hyper.lengthscales))
    assert set(fresh._hypers) == {state["transform"], "copula"}
    plain = BayesianOptimization(**FAST)
    plain.bind(m, random.Random(5), "BO")
    plain.load_state_dict(state)                             # a plain BO takes the power surrogate's part
    assert plain._fit_states[0].hyper is not None and len(plain._fit_states) == 1


def test_fit_state_loads_the_old_log_flag_and_nothing():
    fs = FitState()
    assert fs.load_state({}) is None and fs.hyper is None
    old = {"lengthscales": [1.0, 2.0], "outputscale": 1.5, "noise": 1e-4, "log": True}
    assert fs.load_state(old) == 0.0 and fs.transform is None   # the next search chooses again
    assert isinstance(fs.hyper, Hyper)
    fs.transform = 0.0
    assert fs.to_state() == {"lengthscales": [1.0, 2.0], "outputscale": 1.5, "noise": 1e-4, "transform": 0.0}


def test_the_portfolio_finds_the_optimum_region():
    m = space()
    tech = drive(BayesianOptimization(copula_every=2, **FAST), m, 30, seed=3)
    best = min(v for _, v, s in tech._results.values() if s == "ok" and math.isfinite(v))
    assert best < 1.3                                          # optimum 1.0 at x=0.5, n=7, e=a


@pytest.mark.parametrize("noise_prior", [True, False])
def test_the_noise_prior_option_reaches_every_gp(monkeypatch, noise_prior):
    from tunerlib.techniques.bo import fitstate
    seen = []

    class Spy(fitstate.GaussianProcess):
        def __init__(self, D2, y, noise_prior=True, *rest):
            seen.append(noise_prior)
            super().__init__(D2, y, noise_prior, *rest)
    monkeypatch.setattr(fitstate, "GaussianProcess", Spy)
    drive(BayesianOptimization(noise_prior=noise_prior, **FAST), space(), 10)
    assert seen and set(seen) == {noise_prior}

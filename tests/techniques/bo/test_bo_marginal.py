"""BayesianOptimization's option ``hyper_samples``: expected improvement averaged over several GP
hyperparameter settings weighted by their marginal posterior (:mod:`tunerlib.techniques.bo.marginal`)."""
import json
import math
import random

import numpy as np
import pytest
from scipy.stats import norm

from tunerlib.parameters import ConfigurationManipulator, EnumParameter, IntegerParameter, PowerOfTwoParameter
from tunerlib.techniques import Feedback
from tunerlib.techniques.bo import BayesianOptimization
from tunerlib.techniques.bo.acquisition import Acquisition
from tunerlib.techniques.bo.distances import SpaceEncoder
from tunerlib.techniques.bo.gp import GaussianProcess, Hyper
from tunerlib.techniques.bo.marginal import (IntegratedAcquisition, distinct_optima, make_acquisition,
                                             posterior_weights, weighted_models)

FAST = dict(n_random_samples=200, n_starts=3, hp_samples=10, hp_starts=3, max_local_steps=4)


def space():
    return ConfigurationManipulator([PowerOfTwoParameter("a", 1, 1024), IntegerParameter("c", 0, 9),
                                     EnumParameter("e", ["x", "y", "z"])])


def value(c):
    return 1.0 + abs(np.log2(c["a"]) - 6) + abs(c["c"] - 3) / 3 + {"x": 0.0, "y": 0.5, "z": 2.0}[c["e"]]


def random_configs(m, n, seed):
    rng = random.Random(seed)
    return [m.random(rng) for _ in range(n)]


def fitted_gp(m, configs, seed=0):
    enc = SpaceEncoder(m)
    train = enc.encode(configs)
    y = np.array([value(c) for c in configs])
    y = (y - y.mean()) / y.std()
    gp = GaussianProcess(enc.sqdists(train, train), y)
    gp.fit(np.random.default_rng(seed), 20, 6)
    return enc, gp, train, y


def theta(ls, s, n):
    return Hyper(np.array(ls, dtype=float), s, n).theta()


def test_distinct_optima_keeps_the_most_probable_of_each_setting_in_order():
    optima = [(3.0, theta([1.0, 2.0], 1.0, 1e-2)), (1.0, theta([1.0, 2.0], 1.0, 1.05e-2)),
              (2.0, theta([0.2, 2.0], 1.0, 1e-2)), (math.inf, theta([5.0, 5.0], 1.0, 1e-2)),
              (0.5, theta([3.0, 0.1], 0.5, 0.5))]
    kept = distinct_optima(optima, 5)
    assert [h.lengthscales[0] for h in kept] == pytest.approx([3.0, 1.0, 0.2])
    assert kept[1].noise == pytest.approx(1.05e-2)       # the better of the two near-equal settings
    assert len(distinct_optima(optima, 2)) == 2


def test_settings_differing_only_along_flat_directions_count_once():
    # interpolating fits (tiny noise) and switched-off channels (long lengthscales) are one setting
    optima = [(1.0, theta([0.5, 20.0], 1.0, 1e-6)), (1.1, theta([0.5, 80.0], 1.0, 1e-4)),
              (1.2, theta([0.5, 20.0], 1.0, 0.3))]
    kept = distinct_optima(optima, 4)
    assert len(kept) == 2 and kept[1].noise == pytest.approx(0.3)


def test_posterior_weights_normalise_and_favour_the_more_probable_setting():
    w = np.exp(posterior_weights([-10.0, -12.0, -10.0 + math.log(3.0)]))
    assert w.sum() == pytest.approx(1.0)
    assert w[2] == pytest.approx(3.0 * w[0]) and w[0] == pytest.approx(math.exp(2.0) * w[1])


def test_weighted_models_give_the_more_probable_setting_more_weight():
    m = space()
    _, gp, _, _ = fitted_gp(m, random_configs(m, 12, 3))
    worse = Hyper(gp.hyper.lengthscales * 4.0, gp.hyper.outputscale, 0.5)
    models = weighted_models(gp, [gp.hyper, worse])
    assert len(models) == 2 and models[0][0] is gp       # the fitted setting is not repeated
    (_, w_map), (other, w_other) = models
    assert other.hyper.noise == pytest.approx(0.5)
    lp_map = -gp.neg_log_posterior(gp.hyper.theta(), grad=False)[0]
    lp_other = -gp.neg_log_posterior(worse.theta(), grad=False)[0]
    assert lp_map > lp_other and w_map > w_other
    assert w_map - w_other == pytest.approx(lp_map - lp_other)
    assert math.exp(w_map) + math.exp(w_other) == pytest.approx(1.0)


def test_one_sample_is_the_plain_acquisition_and_the_integrated_one_averages_ei():
    m = space()
    enc, gp, train, y = fitted_gp(m, random_configs(m, 12, 3))
    queries = random_configs(m, 30, 9)
    plain = Acquisition(enc, gp, train, float(y.min()))
    single = make_acquisition(enc, [(gp, 0.0)], train, float(y.min()))
    assert type(single) is Acquisition
    assert np.array_equal(single.score(queries), plain.score(queries))
    one = IntegratedAcquisition(enc, [(gp, 0.0)], train, float(y.min()))
    assert one.score(queries) == pytest.approx(plain.score(queries), rel=1e-12, abs=1e-12)

    other = GaussianProcess(gp.D2, gp.y)
    other.set_hyper(Hyper(gp.hyper.lengthscales * 3.0, 1.0, 1e-3))
    w = (0.7, 0.3)
    mix = make_acquisition(enc, [(gp, math.log(w[0])), (other, math.log(w[1]))], train, float(y.min()))
    assert isinstance(mix, IntegratedAcquisition)
    d2 = enc.sqdists(enc.encode(queries), train)
    expected = np.zeros(len(queries))
    for model, wk in zip((gp, other), w):
        mean, std = model.predict(d2)
        z = (float(y.min()) - mean) / std
        expected += wk * std * (norm.pdf(z) + z * norm.cdf(z))
    # (log EI uses an asymptotic expansion far below the incumbent, accurate to about 0.5 %; the
    # closed form here underflows there)
    ok = expected > 1e-12
    assert ok.sum() > 10
    assert mix.score(queries)[ok] == pytest.approx(np.log(expected[ok]), abs=5e-3)


def run(seed, steps=14, **options):
    m = space()
    tech = BayesianOptimization(**FAST, **options)
    tech.bind(m, random.Random(seed), "BO")
    proposals = []
    for _ in range(steps):
        cfg = tech.propose().config
        proposals.append(m.hash_config(cfg))
        tech.observe(Feedback(cfg, m.hash_config(cfg), value(cfg), "ok", tech.name, False))
    return tech, proposals


def test_the_proposals_average_over_several_settings_and_are_deterministic_under_the_seed():
    tech, first = run(5, hyper_samples=4, hyper_after=0)
    _, second = run(5, hyper_samples=4, hyper_after=0)
    assert first == second
    models = tech._fs.model[-1]
    assert len(tech._fs.alternatives) > 1 and len(models) > 1
    assert sum(math.exp(w) for _, w in models) == pytest.approx(1.0)
    single, _ = run(5, hyper_samples=1)
    assert len(single._fs.model[-1]) == 1 and single._fs.alternatives == []


def test_the_kept_settings_round_trip_through_the_state_and_start_the_next_search(monkeypatch):
    tech, _ = run(2, hyper_samples=4, hyper_after=0)
    state = json.loads(json.dumps(tech.state_dict()))
    kept = [fs.alternatives for fs in tech._fit_states]
    assert state["alternatives"]
    m = space()
    resumed = BayesianOptimization(**FAST, hyper_samples=4, hyper_after=0)
    resumed.bind(m, random.Random(2), "BO")
    resumed.load_state_dict(state)
    for fs, before in zip(resumed._fit_states, kept):
        assert len(fs.alternatives) == len(before)
        for restored, saved in zip(fs.alternatives, before):
            assert restored.theta() == pytest.approx(saved.theta())
    fs = resumed._fit_states[0]
    assert fs.alternatives_for == tech._fit_states[0].transform

    extras = []
    original = GaussianProcess.fit

    def spy(self, rng, n_samples=30, n_starts=10, previous=None, maxiter=60, extra=()):
        extras.append(len(extra))
        return original(self, rng, n_samples, n_starts, previous, maxiter, extra)
    monkeypatch.setattr(GaussianProcess, "fit", spy)
    for cfg, v, _ in list(tech._results.values()):
        resumed.observe(Feedback(cfg, m.hash_config(cfg), v, "ok", resumed.name, False))
    resumed.propose()
    assert len(kept[0]) in extras


def test_multi_objective_bo_rejects_the_option_its_acquisition_does_not_use():
    from tunerlib.techniques import TechniqueError, create_technique
    with pytest.raises(TechniqueError, match="MultiObjectiveBO has no option 'hyper_samples'"):
        create_technique(["MultiObjectiveBO;hyper_samples,4"])
    assert create_technique(["MultiObjectiveBO"]).options.hyper_samples == 1

"""πBO: BayesianOptimization's initial design starts at the prior's mode and samples the user priors,
and its acquisition is multiplied by prior(x) ** (prior_beta / n x agreement), a weight that decays
as results accumulate and vanishes where the results contradict the prior."""
import math
import random

import numpy as np
import pytest

from tunerlib.parameters import (Beta, ConfigurationManipulator, EnumParameter, FloatParameter,
                                 IntegerParameter, Probabilities)
from tunerlib.techniques import Feedback
from tunerlib.techniques.bo import BayesianOptimization
from tunerlib.techniques.bo import acquisition as acq_module
from tunerlib.techniques.bo.prior_use import PriorRegion, agreement, magnitude_p, pibo_exponent, pibo_weight

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


def test_initial_design_is_the_mode_then_uniform_draws():
    m, fn = _space()
    m.set_prior("e", Probabilities({"d": 0.97}))
    m.set_prior("x", Beta(1, 30))
    tech = BayesianOptimization(initial_samples=40, **LIGHT)
    tech.bind(m, random.Random(4), "BO")
    first = [tech.propose().config for _ in range(40)]
    assert first[0]["e"] == "d" and first[0]["x"] == 0.0   # the mode of both priors
    rest = first[1:]
    assert 5 <= sum(c["e"] == "d" for c in rest) <= 17     # uniform: 39 / 4; the prior: 38
    assert 0.3 < np.median([c["x"] for c in rest]) < 0.7   # uniform: 0.5; the prior: 0.02
    assert m.random(random.Random(4))["e"] == "d"          # random proposals still draw from it


def test_a_run_that_starts_elsewhere_still_tries_the_mode():
    m, fn = _space()
    m.set_prior_near({"x": 0.6, "n": 12, "e": "a"}, 0.5)
    tech = BayesianOptimization(initial_samples=3, **LIGHT)
    tech.bind(m, random.Random(8), "BO")
    for i in range(4):                                     # results another technique asked for
        cfg = {"x": 0.1 * i, "n": i, "e": "c"}
        tech.observe(Feedback(cfg, m.hash_config(cfg), fn(cfg), "ok", "other", False))
    assert tech.propose().config == {"x": 0.6, "n": 12, "e": "a"}


def test_prior_weight_decays_with_results():
    m, fn = _space()
    m.set_prior("e", Probabilities({"b": 0.9}))              # right: the optimum has e = "b"
    tech = BayesianOptimization(initial_samples=4, prior_beta=8.0, stall_after=0, **LIGHT)
    tech.bind(m, random.Random(1), "BO")
    seen = []
    _drive(tech, m, fn, 24, seen)
    exps = [e for _, e in seen]
    assert exps[0] == 8.0 and all(a >= b for a, b in zip(exps, exps[1:]))
    assert math.isclose(exps[-1], 8.0 / 23)                  # beta / n after n results


def test_acquisition_adds_the_weighted_log_prior(monkeypatch):
    m, fn = _space()
    m.set_prior("e", Probabilities({"b": 0.97}))
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
    pair = [{"x": 0.5, "n": 10, "e": "b"}, {"x": 0.5, "n": 10, "e": "c"}]
    with_prior = acq.score(pair, strict=False)
    acq.prior = None
    plain = acq.score(pair, strict=False)
    gap = (with_prior - plain)[0] - (with_prior - plain)[1]
    # the prior's weight capped at the uniform one: e = "b" (0.97 x 4 values) counts as 1
    assert math.isclose(gap, exponent * (0.0 - math.log(0.01 * 4)), rel_tol=1e-9)


def test_the_region_weight_is_flat_inside_the_prior_high_region_and_the_prior_outside():
    m, _ = _space()
    m.set_prior("e", Probabilities({"b": 0.6, "a": 0.3}))     # weights over uniform: 2.4, 1.2, 0.2, 0.2
    configs = [{"x": 0.5, "n": 10, "e": e} for e in "abcd"]
    region = PriorRegion(m.prior).log_weights(configs)
    assert list(region[:2]) == [0.0, 0.0]
    assert np.allclose(region[2:], math.log(0.05 * 4))
    assert np.allclose(region[2:], m.prior.log_weights(configs)[2:])


def test_only_a_confirmed_prior_is_weighed_by_its_region():
    m, _ = _space()
    m.set_prior("e", Probabilities({"b": 0.6, "a": 0.3}))
    inside, outside = [1.0, 1.0], [-1.0, -1.0]                  # log weights of two results each
    confirmed = pibo_weight(m.prior, inside + outside, [1.0, 2.0, 3.0, 4.0])
    assert isinstance(confirmed, PriorRegion) and confirmed.prior is m.prior
    assert pibo_weight(m.prior, inside + outside, [3.0, 4.0, 1.0, 2.0]) is m.prior   # contradicted
    assert pibo_weight(m.prior, outside, [1.0, 2.0]) is m.prior                       # untested
    assert pibo_weight(m.prior, inside + outside, [1.0, 1.0, 1.0, 1.0]) is m.prior    # no evidence either way


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


def test_the_initial_design_starts_at_the_prior_mode():
    m, fn = _space()
    m.set_prior_near({"x": 0.25, "e": "c"}, 0.6)
    m.set_prior("n", Beta(8, 2))            # mode 7/8: the heaviest of the 31 values' buckets is 27
    tech = BayesianOptimization(initial_samples=5, **LIGHT)
    tech.bind(m, random.Random(6), "BO")
    first = tech.propose().config
    assert first == {"x": 0.25, "n": 27, "e": "c"}
    rest = [tech.propose().config for _ in range(4)]
    assert first not in rest


def test_the_mode_is_completed_feasibly_under_constraints():
    m = ConfigurationManipulator([IntegerParameter("a", 1, 8), IntegerParameter("b", 1, 8)], ["a + b <= 6"])
    m.set_prior("a", Probabilities({4: 0.9}))
    tech = BayesianOptimization(initial_samples=3, **LIGHT)
    tech.bind(m, random.Random(2), "BO")
    first = tech.propose().config
    assert first["a"] == 4 and first["b"] <= 2


def test_agreement_is_one_when_confirmed_and_falls_when_contradicted():
    assert agreement([], []) == 1.0
    assert agreement([2.0, 2.0], [1.0, 3.0]) == 1.0            # nothing outside the high region
    assert agreement([2.0, -1.0, -1.0], [1.0, 5.0, 6.0]) == 1.0  # inside beats outside
    one_pair = agreement([2.0, -1.0], [5.0, 1.0])
    assert 0.2 < one_pair < 0.5                                # one lost pair does not discard it
    many = agreement([2.0] * 6 + [-1.0] * 6, [9.0] * 6 + [1.0] * 6)
    assert many < 0.01                                         # six worse inside than six outside
    failed = agreement([2.0, -1.0, -1.0], [math.inf, 3.0, 4.0])
    assert failed < agreement([2.0, -1.0, -1.0], [3.5, 3.0, 4.0])  # a failure inside is the worst result


def test_a_contradicted_prior_loses_its_weight_a_confirmed_one_keeps_it():
    m, fn = _space()
    m.set_prior("e", Probabilities({"d": 0.9}))                # wrong: the optimum has e = "b"
    wrong = BayesianOptimization(initial_samples=6, prior_beta=8.0, **LIGHT)
    wrong.bind(m, random.Random(5), "BO")
    seen = []
    _drive(wrong, m, fn, 16, seen)
    assert seen[-1][1] < 0.25 * 8.0 / 15                       # plain πBO: 8 / 15
    right = ConfigurationManipulator(m.parameters)
    right.set_prior("e", Probabilities({"b": 0.9}))
    tech = BayesianOptimization(initial_samples=6, prior_beta=8.0, **LIGHT)
    tech.bind(right, random.Random(5), "BO")
    seen = []
    _drive(tech, right, fn, 16, seen)
    assert math.isclose(seen[-1][1], 8.0 / 15)



def _grid():
    """Four integer parameters 0..30: a uniform draw rarely lands in a near prior's high region."""
    m = ConfigurationManipulator([IntegerParameter(n, 0, 30) for n in "abcd"])
    return m, lambda c: float(sum((c[n] - 25) ** 2 for n in "abcd"))


def _unmeasured(tech, m, cfg):
    tech.observe(Feedback(cfg, m.hash_config(cfg), math.inf, "error", "BO", False, unmeasured=True))


def test_a_mode_that_is_a_gap_is_replaced_by_a_draw_near_it():
    inside = []
    for seed in range(8):
        m, fn = _grid()
        m.set_prior_near({"a": 5, "b": 5, "c": 5, "d": 5}, 0.6)
        tech = BayesianOptimization(initial_samples=5, **LIGHT)
        tech.bind(m, random.Random(seed), "BO")
        mode = tech.propose().config
        assert mode == {"a": 5, "b": 5, "c": 5, "d": 5}
        _unmeasured(tech, m, mode)                             # the recording has no row for it
        second = tech.propose().config
        inside.append(m.prior.log_weights([second])[0] > 0.0)  # in the prior's high region
    assert all(inside)


def test_a_measured_mode_is_followed_by_uniform_draws():
    m, fn = _grid()
    m.set_prior_near({"a": 5, "b": 5, "c": 5, "d": 5}, 0.6)
    tech = BayesianOptimization(initial_samples=9, **LIGHT)
    tech.bind(m, random.Random(3), "BO")
    first = tech.propose()
    tech.observe(Feedback(first.config, m.hash_config(first.config), fn(first.config), "ok", "BO", True))
    rest = [tech.propose().config for _ in range(8)]
    assert sum(m.prior.log_weights(rest) > 0.0) <= 2             # uniform: about 0.1 of 8


def test_a_contradicted_prior_whose_mode_is_a_gap_still_loses_its_weight():
    m, fn = _grid()
    m.set_prior_near({"a": 5, "b": 5, "c": 5, "d": 5}, 0.6)     # wrong: the optimum is at 25
    tech = BayesianOptimization(initial_samples=5, prior_beta=8.0, **LIGHT)
    tech.bind(m, random.Random(0), "BO")
    _unmeasured(tech, m, tech.propose().config)
    for _ in range(4):                                          # the rest of the design
        p = tech.propose()
        v = fn(p.config)
        tech.observe(Feedback(p.config, m.hash_config(p.config), v, "ok", "BO", False))
    assert tech.prior_exponent() < 0.5 * 8.0 / 4                # plain πBO at the first BO proposal: 8 / 4


def test_local_samples_come_from_the_concentrated_part_of_the_prior():
    from tunerlib.parameters import FeasibleSpace
    m, _ = _grid()
    m.set_prior_near({"a": 5, "b": 5, "c": 5, "d": 5}, 0.2)
    space = FeasibleSpace(m)
    rng, np_rng = random.Random(1), np.random.default_rng(1)
    local = space.sample(rng, np_rng, 400, local=True)
    mixed = space.sample(rng, np_rng, 400)
    near = lambda cs: np.mean([all(abs(c[n] - 5) <= 9 for n in "abcd") for c in cs])  # noqa: E731
    assert near(local) > 0.97                                  # 3 standard deviations on each
    assert near(mixed) < 0.5                                   # 0.2 x 1 + 0.8 x (19/31)^4


def _stalled_run(monkeypatch, values):
    """A stalled search (``stall_after`` 3, ``global_every`` 3) fed ``values`` in turn, the first
    one the prior's mode's: the (weight, exponent) πBO was given for each BO proposal."""
    m, _ = _grid()
    m.set_prior_near({"a": 20, "b": 20, "c": 20, "d": 20}, 0.6)
    captured = []
    original = acq_module.Acquisition.weigh_by_prior

    def spy(self, prior, exponent):
        captured.append((prior, exponent))
        original(self, prior, exponent)
    monkeypatch.setattr(acq_module.Acquisition, "weigh_by_prior", spy)
    tech = BayesianOptimization(initial_samples=3, prior_beta=8.0, stall_after=3, global_every=3, **LIGHT)
    tech.bind(m, random.Random(2), "BO")
    for v in values:
        p = tech.propose()
        tech.observe(Feedback(p.config, m.hash_config(p.config), v, "ok", "BO", False))
    return tech, captured


def test_a_stalled_search_suspends_an_untested_or_contradicted_prior_on_trust_region_steps_only(monkeypatch):
    # the mode measures worse than the uniform draws: the prior is contradicted, weighs by its density
    values = [20.0, 5.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 1.0, 9.0]  # the best, six worse ones, a better one
    tech, captured = _stalled_run(monkeypatch, values)
    assert all(not isinstance(w, PriorRegion) for w, _ in captured)
    exponents = [e for _, e in captured]
    # BO proposals 4-10: 4 and 5 not yet stalled; stalled: trust-region, trust-region, global,
    # trust-region; after the improvement the prior is back
    assert len(exponents) == 7
    assert exponents[0] > 0.0 and exponents[1] > 0.0
    assert exponents[2:4] == [0.0, 0.0] and exponents[5] == 0.0
    assert exponents[4] > 0.0                                 # the stalled search's global step
    assert exponents[6] > 0.0
    assert tech.prior_exponent(trust_region=True) == 0.0 and tech.prior_exponent() > 0.0


def test_a_confirmed_prior_keeps_its_region_weight_on_trust_region_steps(monkeypatch):
    """The mode measures better than every uniform draw: the prior is confirmed and weighs by its flat
    region, which does not hold a trust-region step to the mode's neighbours, so the trust-region
    steps keep it (and stay inside the region the results confirmed)."""
    values = [5.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0]
    tech, captured = _stalled_run(monkeypatch, values)
    assert len(captured) == 5
    assert all(isinstance(w, PriorRegion) for w, _ in captured)
    for n, (_, e) in enumerate(captured, start=3):           # every step: beta / n, n results so far
        assert e == pytest.approx(8.0 / n)
    assert tech.prior_exponent(trust_region=True) == tech.prior_exponent() > 0.0


def test_only_a_confirmed_prior_is_kept_on_a_trust_region_step():
    assert pibo_exponent(8.0, [2.0, -1.0, -1.0], [1.0, 5.0, 6.0], trust_region=True) == pytest.approx(8.0 / 3)
    assert pibo_exponent(8.0, [2.0, -1.0, -1.0], [6.0, 1.0, 5.0], trust_region=True) == 0.0
    assert pibo_exponent(8.0, [-1.0, -1.0, -1.0], [6.0, 1.0, 5.0], trust_region=True) == 0.0
    assert pibo_exponent(8.0, [-1.0, -1.0, -1.0], [6.0, 1.0, 5.0]) == pytest.approx(8.0 / 3)


def test_agreement_weighs_how_much_worse_the_prior_region_measured():
    """The same order of results, one inside the prior's high region and two outside: the rank test
    alone cannot tell a region 1.5 times slower from one a thousand times slower; the magnitude
    test can (on the log scale of positive values)."""
    slightly = agreement([2.0, -1.0, -1.0], [3.0, 1.0, 2.0])
    far = agreement([2.0, -1.0, -1.0], [1000.0, 1.0, 2.0])
    assert slightly > 0.2                                      # the rank test's p-value, 0.22
    assert far < 0.1 and far < 0.5 * slightly
    two_each = agreement([2.0, 2.0, -1.0, -1.0], [1000.0, 900.0, 1.0, 2.0])
    assert two_each < 0.01


def test_the_magnitude_test_needs_a_spread_and_a_worse_region():
    assert magnitude_p([2.0, -1.0], [1000.0, 1.0]) == 1.0      # two results: no variance to test with
    assert magnitude_p([2.0, -1.0, -1.0], [1.0, 1000.0, 2.0]) == 1.0  # the region measured better
    assert magnitude_p([2.0, 2.0, -1.0], [5.0, 5.0, 1.0]) == 1.0     # no spread inside or outside
    assert magnitude_p([2.0, -1.0, -1.0], [1000.0, -1.0, 2.0]) < 0.01  # values <= 0: their own scale
    # a failure inside counts as the worst finite result, not as infinitely worse
    assert magnitude_p([2.0, -1.0, -1.0], [math.inf, 1.0, 2.0]) == magnitude_p([2.0, -1.0, -1.0], [2.0, 1.0, 2.0])


def test_a_prior_on_a_far_worse_region_loses_its_weight_after_the_design():
    """A wrong prior whose mode measures a thousand times worse than the design's uniform points:
    the first BO proposal already gives it a small fraction of plain πBO's exponent (the rank test
    alone, one result inside against three outside, leaves it 0.18 of it)."""
    m = ConfigurationManipulator([IntegerParameter(n, 0, 30) for n in "abcd"])
    fn = lambda c: 1.0 + sum(abs(c[n] - 25) for n in "abcd") + (1e4 if max(c.values()) < 10 else 0.0)  # noqa: E731
    m.set_prior_near({"a": 5, "b": 5, "c": 5, "d": 5}, 0.6)
    exponents = []
    for seed in range(5):
        tech = BayesianOptimization(initial_samples=4, prior_beta=8.0, **LIGHT)
        tech.bind(m, random.Random(seed), "BO")
        for _ in range(4):
            p = tech.propose()
            v = fn(p.config)
            tech.observe(Feedback(p.config, m.hash_config(p.config), v, "ok", "BO", False))
        exponents.append(tech.prior_exponent())
    assert np.median(exponents) < 0.05 * 8.0 / 4                 # plain πBO: 8 / 4

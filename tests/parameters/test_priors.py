"""User priors: samples follow the declared distributions (fixed seeds, generous but meaningful
thresholds), stay legal and feasible, and bad declarations are one-line errors."""
import collections
import math
import random

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st
from scipy import stats

from tunerlib.parameters import (Beta, BooleanParameter, ConfigurationError, ConfigurationManipulator,
                                 EnumParameter, FeasibleSpace, FloatParameter, IntegerParameter,
                                 LogFloatParameter, Near, OrdinalParameter, PermutationParameter,
                                 PowerOfTwoParameter, Probabilities, TableConstraint)

N = 4000


def _draws(m, name, n=N, seed=7):
    rng = random.Random(seed)
    return [m.random(rng)[name] for _ in range(n)]


def test_beta_prior_on_a_float_follows_beta_ks():
    m = ConfigurationManipulator([FloatParameter("f", 2.0, 6.0)])
    m.set_prior("f", Beta(2, 5))
    units = [(v - 2.0) / 4.0 for v in _draws(m, "f")]
    assert stats.kstest(units, stats.beta(2, 5).cdf).pvalue > 0.01
    assert stats.kstest(units, "uniform").pvalue < 1e-6       # the test can tell the prior from no prior


def test_beta_prior_on_a_log_float_is_beta_on_the_log_scale():
    m = ConfigurationManipulator([LogFloatParameter("lr", 1e-4, 1.0)])
    m.set_prior("lr", {"beta": [5, 1.5]})
    units = [(math.log(v) - math.log(1e-4)) / (math.log(1.0) - math.log(1e-4)) for v in _draws(m, "lr")]
    assert stats.kstest(units, stats.beta(5, 1.5).cdf).pvalue > 0.01


def _chi2_p(observed, expected_probs):
    values = list(expected_probs)
    obs = np.array([observed.get(v, 0) for v in values], dtype=float)
    exp = np.array([expected_probs[v] for v in values]) * obs.sum()
    return stats.chisquare(obs, exp).pvalue


def test_beta_prior_on_an_integer_gives_each_value_its_bucket_mass():
    m = ConfigurationManipulator([IntegerParameter("n", 1, 8)])
    m.set_prior("n", Beta(3, 1))
    cdf = stats.beta(3, 1).cdf
    expected = {k: cdf(k / 8) - cdf((k - 1) / 8) for k in range(1, 9)}   # eight equal buckets
    assert _chi2_p(collections.Counter(_draws(m, "n")), expected) > 0.01
    # the weights used for constrained spaces and πBO are the same masses, relative to uniform
    weights = m.prior.value_log_weights("n", list(range(1, 9)))
    assert np.allclose(np.exp(weights) / 8, [expected[k] for k in range(1, 9)], rtol=1e-3)


def test_beta_prior_on_a_power_of_two_uses_its_log_scale():
    m = ConfigurationManipulator([PowerOfTwoParameter("t", 1, 64)])
    m.set_prior("t", Beta(1, 4))
    counts = collections.Counter(_draws(m, "t"))
    assert counts[1] > counts[2] > counts[4] > counts[16]
    probs = np.exp(m.prior.value_log_weights("t", [1, 2, 4, 8, 16, 32, 64])) / 7
    assert _chi2_p(counts, dict(zip([1, 2, 4, 8, 16, 32, 64], probs))) > 0.01


def test_categorical_probabilities_chi_square():
    m = ConfigurationManipulator([EnumParameter("layout", ["row", "col", "tiled", "blocked"])])
    m.set_prior("layout", Probabilities({"row": 0.55, "tiled": 0.25}))    # the other two share 0.2
    expected = {"row": 0.55, "col": 0.1, "tiled": 0.25, "blocked": 0.1}
    counts = collections.Counter(_draws(m, "layout"))
    assert _chi2_p(counts, expected) > 0.01
    assert _chi2_p(counts, {v: 0.25 for v in expected}) < 1e-6


def test_boolean_and_json_keys():
    m = ConfigurationManipulator([BooleanParameter("vec"), OrdinalParameter("u", [1, 2, 4, 8])])
    m.set_prior("vec", {"probabilities": {"true": 0.9}})
    m.set_prior("u", {"probabilities": {"8": 0.7, "4": 0.1, "2": 0.1, "1": 0.1}})
    draws = [m.random(random.Random(s)) for s in range(2000)]
    assert _chi2_p(collections.Counter(d["vec"] for d in draws), {True: 0.9, False: 0.1}) > 0.01
    assert _chi2_p(collections.Counter(d["u"] for d in draws), {8: 0.7, 4: 0.1, 2: 0.1, 1: 0.1}) > 0.01


def test_near_prior_mixes_local_and_uniform():
    m = ConfigurationManipulator([EnumParameter("e", list("abcde")), FloatParameter("x", 0.0, 10.0)])
    m.set_prior_near({"e": "d", "x": 2.0}, 0.8)
    draws = [m.random(random.Random(s)) for s in range(N)]
    e = collections.Counter(d["e"] for d in draws)
    assert _chi2_p(e, {v: 0.04 + (0.8 if v == "d" else 0.0) for v in "abcde"}) > 0.01
    x = np.array([d["x"] for d in draws])
    assert 0.75 < np.mean(np.abs(x - 2.0) < 2.0) < 0.9       # 0.8 x ~0.95 (within 2 sd) + 0.2 x 0.4
    assert abs(np.median(x) - 2.0) < 0.5
    # one decision per configuration: both far from the centre 0.2 x 0.8 x 0.5 = 0.08 of the time
    # (independent per-parameter priors of the same confidence: about 0.016)
    far = np.mean([(d["e"] != "d") and d["x"] > 5.0 for d in draws])
    assert 0.055 < far < 0.11


def test_prior_weighted_sampling_of_constrained_tree_and_table_groups():
    m = ConfigurationManipulator([IntegerParameter("a", 0, 9), IntegerParameter("b", 0, 9)], ["a + b <= 9"])
    m.set_prior("a", Probabilities({0: 0.5}))                 # values 1..9 share the other half
    np_rng = np.random.default_rng(3)
    sampled = FeasibleSpace(m).sample(random.Random(3), np_rng, N)
    # leaves (a, b) with a + b <= 9 weighted by the prior of a: P(a) ∝ w(a) * (10 - a)
    w = {a: (0.5 if a == 0 else 0.5 / 9) * (10 - a) for a in range(10)}
    total = sum(w.values())
    assert _chi2_p(collections.Counter(c["a"] for c in sampled), {a: v / total for a, v in w.items()}) > 0.01
    by_random = collections.Counter(m.random(random.Random(s))["a"] for s in range(N))
    assert all(m.is_feasible(c) for c in sampled)
    assert by_random[0] > 0.3 * N                              # rejection sampling draws a from its prior too

    rows = [(p, q) for p in range(6) for q in range(6) if (p * q) % 2 == 0]
    t = ConfigurationManipulator([IntegerParameter("p", 0, 5), IntegerParameter("q", 0, 5)])
    t.add_constraint(TableConstraint(["p", "q"], rows))
    t.set_prior("q", Beta(8, 1))
    picks = [t.random(random.Random(s)) for s in range(2000)]
    assert all(t.is_feasible(c) for c in picks)
    assert sum(c["q"] == 5 for c in picks) > 2000 * 0.3        # uniform over rows: 3/27 ~ 0.11


def test_no_prior_leaves_random_unchanged():
    m = ConfigurationManipulator([IntegerParameter("n", 1, 100), EnumParameter("e", list("xyz"))])
    before = [m.random(random.Random(s)) for s in range(20)]
    m.set_prior("n", Beta(2, 2))
    m.prior.clear()
    assert [m.random(random.Random(s)) for s in range(20)] == before


@pytest.mark.parametrize("declare,needle", [
    (lambda m: m.set_prior("n", Beta(0, 1)), "Beta's a must be a number > 0"),
    (lambda m: m.set_prior("n", Beta(1, float("inf"))), "Beta's b must be a number > 0"),
    (lambda m: m.set_prior("e", Beta(2, 2)), "give probabilities instead"),
    (lambda m: m.set_prior("perm", Near([2, 1, 0], 0.5)), "takes no prior"),
    (lambda m: m.set_prior("perm", Beta(2, 2)), "takes no prior"),
    (lambda m: m.set_prior("e", Probabilities({"x": 0.7, "w": 0.1})), "'w' is not one of its values"),
    (lambda m: m.set_prior("e", Probabilities({"x": 0.7, "y": 0.4})), "leaving nothing"),
    (lambda m: m.set_prior("e", Probabilities({"x": 0.7, "y": 0.2, "z": 0.2})), "make them sum to 1"),
    (lambda m: m.set_prior("e", Probabilities({"x": 0.0})), "must be a number > 0"),
    (lambda m: m.set_prior("n", Near(5, 1.0)), "confidence must be"),
    (lambda m: m.set_prior("n", Near(500, 0.5)), "500 is not one of its values"),
    (lambda m: m.set_prior("f", Probabilities({0.5: 1.0})), "use Beta(a, b) for a wide range"),
    (lambda m: m.set_prior("nope", Beta(1, 1)), "unknown parameter 'nope'"),
    (lambda m: m.set_prior("n", {"gamma": 2}), "expected {\"beta\": [a, b]}"),
])
def test_bad_priors_are_one_line_errors(declare, needle):
    m = ConfigurationManipulator([IntegerParameter("n", 1, 100), EnumParameter("e", list("xyz")),
                                  FloatParameter("f", 0.0, 1.0), PermutationParameter("perm", [0, 1, 2])])
    with pytest.raises(ConfigurationError) as info:
        declare(m)
    assert needle in str(info.value) and "\n" not in str(info.value)
    assert not m.prior                                          # nothing half-declared


def test_prior_json_round_trip_and_file_schema():
    m = ConfigurationManipulator([IntegerParameter("n", 1, 100), EnumParameter("e", list("xyz")),
                                  BooleanParameter("b")])
    m.prior.load_json({"near": {"configuration": {"n": 10, "b": True}, "confidence": 0.5},
                       "parameters": {"n": {"beta": [2, 3]}, "e": {"probabilities": {"y": 0.6}}}}, m)
    assert m.prior.priors() == {"n": Beta(2, 3), "e": Probabilities({"y": 0.6})}
    assert m.prior.near() == ({"b": True}, 0.5)               # "n" left the near configuration
    again = ConfigurationManipulator(m.parameters)
    again.prior.load_json(m.prior.to_json(), again)
    rng_a, rng_b = random.Random(5), random.Random(5)
    assert [m.random(rng_a) for _ in range(30)] == [again.random(rng_b) for _ in range(30)]
    with pytest.raises(ConfigurationError, match="unknown key"):
        m.prior.load_json({"paramaters": {}}, m)
    with pytest.raises(ConfigurationError, match="unknown parameter 'zz'"):
        m.prior.load_json({"parameters": {"n": {"beta": [1, 2]}, "zz": {"beta": [1, 2]}}}, m)
    assert m.prior.priors()["n"] == Beta(2, 3)                  # a rejected document changes nothing


_SPACES = st.sampled_from(["tree", "rejection", "table"])


def _space(kind):
    params = [IntegerParameter("a", 0, 15), PowerOfTwoParameter("b", 1, 32), EnumParameter("c", list("pqr")),
              FloatParameter("d", 0.0, 1.0)]
    m = ConfigurationManipulator(params)
    if kind == "tree":
        m.add_constraint("a * b <= 64")
    elif kind == "rejection":
        m.add_constraint("d * a < 6")
    else:
        m.add_constraint(TableConstraint(["a", "b"], [(a, b) for a in range(16) for b in (1, 2, 4, 8, 16, 32)
                                                      if (a + b) % 3 == 0]))
    return m


@settings(max_examples=40, deadline=None)
@given(kind=_SPACES, a=st.floats(0.2, 20), b=st.floats(0.2, 20), conf=st.floats(0.01, 0.99),
       centre=st.fixed_dictionaries({"a": st.integers(0, 15), "b": st.sampled_from([1, 2, 4, 8, 16, 32]),
                                     "c": st.sampled_from("pqr"), "d": st.floats(0, 1)}),
       seed=st.integers(0, 2**31))
# a near prior with almost no feasible mass (a near 15 and b near 32 under a * b <= 64)
@example(kind="tree", a=7.0, b=1.0, conf=0.5, centre={"a": 0, "b": 32, "c": "p", "d": 0.0}, seed=0)
@example(kind="rejection", a=12.0, b=1.0, conf=0.5, centre={"a": 0, "b": 1, "c": "p", "d": 0.9375}, seed=0)
def test_prior_samples_stay_legal_and_feasible(kind, a, b, conf, centre, seed):
    m = _space(kind)
    m.set_prior_near(centre, conf)
    m.set_prior("a", Beta(a, b))
    rng = random.Random(seed)
    configs = [m.random(rng) for _ in range(10)]
    configs += FeasibleSpace(m).sample(rng, np.random.default_rng(seed), 10)
    for cfg in configs:
        m.validate(cfg)
        assert m.is_feasible(cfg), cfg
    assert np.all(np.isfinite(m.prior.log_weights(configs)))


def test_mode_of_each_kind_of_prior():
    m = ConfigurationManipulator([FloatParameter("f", 2.0, 6.0), LogFloatParameter("lr", 1e-4, 1.0),
                                  PowerOfTwoParameter("t", 1, 64), EnumParameter("e", list("abc")),
                                  IntegerParameter("n", 1, 8), FloatParameter("g", 0.0, 1.0),
                                  FloatParameter("h", 0.0, 1.0)])
    assert m.prior.mode() == {}
    m.set_prior("f", Beta(2, 5))                               # density peak at 1/5 of the range
    m.set_prior("lr", Beta(3, 3))                              # the middle of the log scale: 1e-2
    m.set_prior("t", Near(16, 0.5))
    m.set_prior("e", Probabilities({"c": 0.5}))
    m.set_prior("n", Beta(1, 4))                               # decreasing density: the lowest bucket
    m.set_prior("g", Beta(3, 1))                               # increasing density: the top
    m.set_prior_near({"h": 0.3}, 0.6)
    mode = m.prior.mode()
    assert math.isclose(mode["f"], 2.8) and math.isclose(mode["lr"], 1e-2, rel_tol=1e-9)
    assert {k: mode[k] for k in ("t", "e", "n", "g", "h")} == {"t": 16, "e": "c", "n": 1, "g": 1.0, "h": 0.3}


@given(st.floats(0.3, 20.0), st.floats(0.3, 20.0), st.integers(2, 40))
@settings(max_examples=40, deadline=None)
def test_the_mode_of_a_listed_prior_has_the_largest_weight(a, b, top):
    m = ConfigurationManipulator([IntegerParameter("n", 1, top)])
    m.set_prior("n", Beta(a, b))
    weights = m.prior.value_log_weights("n", list(range(1, top + 1)))
    assert weights[m.prior.mode()["n"] - 1] == weights.max()


def test_uniform_samples_ignore_the_priors():
    m = ConfigurationManipulator([IntegerParameter("a", 0, 9), IntegerParameter("b", 0, 9)], ["a + b <= 9"])
    m.set_prior_near({"a": 0, "b": 0}, 0.9)
    space = FeasibleSpace(m)
    uniform = space.sample(random.Random(1), np.random.default_rng(1), N, uniform=True)
    assert all(m.is_feasible(c) for c in uniform)
    leaves = [(a, b) for a in range(10) for b in range(10) if a + b <= 9]
    counts = collections.Counter((c["a"], c["b"]) for c in uniform)
    assert _chi2_p(counts, {leaf: 1 / len(leaves) for leaf in leaves}) > 0.01
    drawn = space.sample(random.Random(1), np.random.default_rng(1), N)
    assert sum(c["a"] == 0 for c in drawn) > 0.5 * N           # the priors still apply without it

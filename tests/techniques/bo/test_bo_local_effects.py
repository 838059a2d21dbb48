"""Per-value distance channels, failure imputation and trust-region steps of BayesianOptimization."""
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters import (ConfigurationManipulator, EnumParameter, FloatParameter, IntegerParameter,
                                 OrdinalParameter)
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.bo.acquisition import Acquisition, LocalSearch
from tunerlib.parameters import FeasibleSpace
from tunerlib.techniques.bo.distances import EqualityEncoder, ConfigKey, SpaceEncoder
from tunerlib.techniques.bo.gp import GaussianProcess
from tunerlib.techniques.bo.neighbours import NeighbourGenerator
from tunerlib.techniques.bo.technique import BayesianOptimization

BLOCKS = [16, 32, 48, 64, 96, 128]


def space():
    return ConfigurationManipulator([OrdinalParameter("bx", BLOCKS), OrdinalParameter("by", [1, 2, 4, 8]),
                                     IntegerParameter("t", 1, 4), EnumParameter("m", ["a", "b"]),
                                     FloatParameter("f", 0.0, 1.0), OrdinalParameter("two", [1, 2])])


def test_equality_channels_only_for_small_numeric_domains():
    m = space()
    enc = SpaceEncoder(m, ordinal_hamming=True)
    extra = [m.names[i] for i in enc.param_index[len(m.names):]]
    assert extra == ["bx", "by", "t"]          # not the enum, the float or the two-valued ordinal
    assert all(isinstance(e, EqualityEncoder) for e in enc.encoders[len(m.names):])
    assert len(SpaceEncoder(m).encoders) == len(m.names)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(BLOCKS), min_size=1, max_size=6), st.lists(st.sampled_from(BLOCKS), min_size=1, max_size=6))
def test_equality_channel_is_zero_exactly_for_equal_values(a, b):
    m = space()
    enc = SpaceEncoder(m, ordinal_hamming=True)
    rng = random.Random(0)
    ca = [dict(m.random(rng), bx=v) for v in a]
    cb = [dict(m.random(rng), bx=v) for v in b]
    D = enc.sqdists(enc.encode(ca), enc.encode(cb))
    channel = len(m.names)                      # the first extra channel belongs to bx
    assert enc.param_index[channel] == m.names.index("bx")
    expect = np.array([[0.0 if x == y else 1.0 for y in b] for x in a])
    assert np.array_equal(D[channel], expect)


def _bo(**opts):
    m = ConfigurationManipulator([OrdinalParameter("a", [1, 2, 4, 8]), OrdinalParameter("b", [1, 2, 4, 8])])
    bo = BayesianOptimization(initial_samples=2, **opts)
    bo.bind(m, random.Random(0), "bo")
    return m, bo


def _feed(m, bo, cfg, value, state="ok"):
    bo.observe(Feedback(cfg, m.hash_config(cfg), value, state, "bo", False))


def test_failures_are_imputed_with_the_worst_ok_value_and_never_become_best():
    m, bo = _bo(failure_imputation=True)
    _feed(m, bo, {"a": 1, "b": 1}, 3.0)
    _feed(m, bo, {"a": 2, "b": 1}, 5.0)
    _feed(m, bo, {"a": 8, "b": 8}, float("inf"), "error")
    train = bo._training_set()
    assert ({"a": 8, "b": 8}, 5.0) in train and len(train) == 3
    _, _, y_best, incumbent, _, _ = bo._fit()
    assert incumbent == {"a": 1, "b": 1}
    m2, off = _bo()                              # off by default
    _feed(m2, off, {"a": 1, "b": 1}, 3.0)
    _feed(m2, off, {"a": 8, "b": 8}, float("inf"), "error")
    assert off._training_set() == [({"a": 1, "b": 1}, 3.0)]


def test_stall_counter_counts_ok_results_since_the_last_improvement():
    m, bo = _bo()
    for i, v in enumerate([5.0, 4.0, 4.5, 6.0]):
        _feed(m, bo, {"a": [1, 2, 4, 8][i], "b": 1}, v)
    _feed(m, bo, {"a": 1, "b": 2}, float("inf"), "error")
    assert bo._stalled() == 2
    _feed(m, bo, {"a": 2, "b": 2}, 1.0)
    assert bo._stalled() == 0


@pytest.mark.parametrize("radius", [1, 2])
def test_trust_region_step_maximises_only_near_the_centre(radius):
    m, every, train_cfgs, y, acq, search, excluded = _three_parameter_search()
    rng, np_rng, key = random.Random(1), np.random.default_rng(1), ConfigKey(m)
    centre = train_cfgs[int(np.argmin(y))]
    chosen = search.run(acq, rng, np_rng, excluded, [centre], radius=radius)
    near = [c for c in every if key(c) not in excluded and sum(c[n] != centre[n] for n in m.names) <= radius]
    assert chosen in near
    assert acq.score([chosen])[0] >= acq.score(near).max() - 1e-9
    assert search.run(acq, rng, np_rng, excluded, [centre], radius=0) is not None


def _three_parameter_search():
    """A scored-whole space of 48 configurations, a GP fitted on every fifth (best at a=1, b=8, mode y/z)."""
    m = ConfigurationManipulator([OrdinalParameter("a", [1, 2, 4, 8]), OrdinalParameter("b", [1, 2, 4, 8]),
                                  EnumParameter("mode", ["x", "y", "z"])])
    cot, key, encoder = FeasibleSpace(m), ConfigKey(m), SpaceEncoder(m, ordinal_hamming=True)
    every = cot.enumerate_all(10_000)
    train_cfgs = every[::5]
    y = np.array([np.log2(c["a"]) - np.log2(c["b"]) + (c["mode"] == "x") for c in train_cfgs])
    y = (y - y.mean()) / y.std()
    train = encoder.encode(train_cfgs)
    gp = GaussianProcess(encoder.sqdists(train, train), y)
    gp.fit(np.random.default_rng(1), 10, 2)
    acq = Acquisition(encoder, gp, train, float(y.min()))
    search = LocalSearch(key, cot, NeighbourGenerator(m, cot), exhaustive_limit=10_000)
    return m, every, train_cfgs, y, acq, search, {key(c) for c in train_cfgs}


def test_trust_region_step_searches_near_every_centre():
    m, every, train_cfgs, y, acq, search, excluded = _three_parameter_search()
    order = np.argsort(y)
    good, bad = train_cfgs[int(order[0])], train_cfgs[int(order[-1])]
    near = lambda c, centre: sum(c[n] != centre[n] for n in m.names) <= 1  # noqa: E731
    # the centres are the trust region: near the good result as well, though the incumbent given is the bad one
    chosen = search.run(acq, random.Random(1), np.random.default_rng(1), excluded, [bad], radius=1,
                        centres=[bad, good])
    union = [c for c in every if search.key(c) not in excluded and (near(c, bad) or near(c, good))]
    assert chosen in union and not near(chosen, bad)
    assert acq.score([chosen])[0] >= acq.score(union).max() - 1e-9
    # without centres, the first incumbent alone is the centre
    alone = search.run(acq, random.Random(1), np.random.default_rng(1), excluded, [bad], radius=1)
    assert near(alone, bad)


def test_a_stalled_search_centres_its_trust_region_steps_on_the_best_results(monkeypatch):
    m, bo = _bo(stall_after=1, global_every=10, local_centres=2)
    for cfg, v in [({"a": 1, "b": 1}, 3.0), ({"a": 8, "b": 8}, 1.0), ({"a": 2, "b": 4}, 2.0), ({"a": 4, "b": 1}, 5.0)]:
        _feed(m, bo, cfg, v)
    assert bo._window.best_configs(2) == [{"a": 8, "b": 8}, {"a": 2, "b": 4}]
    seen = {}
    monkeypatch.setattr(bo.search, "run", lambda *a, **kw: seen.update(radius=a[5], **kw))
    bo._bo_proposal()
    assert seen["radius"] == 2 and seen["centres"] == [{"a": 8, "b": 8}, {"a": 2, "b": 4}]

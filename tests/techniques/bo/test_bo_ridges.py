"""Distance channels on sums and differences of pairs of parameters (``ridge_channels``)."""
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters import (ConfigurationManipulator, EnumParameter, FloatParameter, IntegerParameter,
                                 OrdinalParameter)
from tunerlib.techniques.base import Feedback, TechniqueError
from tunerlib.techniques.bo.distances import SpaceEncoder
from tunerlib.techniques.bo.gp import DORMANT_RANGE, GaussianProcess
from tunerlib.techniques.bo.ridges import RidgeChannels
from tunerlib.techniques.bo.technique import BayesianOptimization

SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]


def space():
    return ConfigurationManipulator([OrdinalParameter("a", SIZES), EnumParameter("m", ["x", "y", "z"]),
                                     OrdinalParameter("b", SIZES), OrdinalParameter("two", [1, 2]),
                                     IntegerParameter("t", 1, 5), FloatParameter("f", 0.0, 1.0)])


def test_pairs_among_numeric_parameters_with_three_or_more_values():
    m = space()
    ridges = RidgeChannels(m.parameters, "both")
    names = [(m.names[i], m.names[j], s) for i, j, s in ridges.channels]
    assert names == [("a", "b", 1.0), ("a", "b", -1.0), ("a", "t", 1.0), ("a", "t", -1.0),
                     ("a", "f", 1.0), ("a", "f", -1.0), ("b", "t", 1.0), ("b", "t", -1.0),
                     ("b", "f", 1.0), ("b", "f", -1.0), ("t", "f", 1.0), ("t", "f", -1.0)]
    assert [s for _, _, s in RidgeChannels(m.parameters, "sum").channels] == [1.0] * 6
    assert [s for _, _, s in RidgeChannels(m.parameters, "difference").channels] == [-1.0] * 6
    assert len(RidgeChannels(m.parameters, "none")) == 0
    with pytest.raises(ValueError, match="ridge_channels"):
        RidgeChannels(m.parameters, "diagonal")


def test_encoder_stack_ends_with_the_pair_channels():
    m = space()
    plain, ridged = SpaceEncoder(m, ordinal_hamming=True), SpaceEncoder(m, ordinal_hamming=True, ridge_channels="sum")
    cfgs = [m.random(random.Random(i)) for i in range(7)]
    D0 = plain.sqdists(plain.encode(cfgs), plain.encode(cfgs[:3]))
    D1 = ridged.sqdists(ridged.encode(cfgs), ridged.encode(cfgs[:3]))
    assert len(ridged) == len(plain) + 6 and D1.shape == (len(ridged), 7, 3)
    assert np.array_equal(D1[:len(plain)], D0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SIZES), st.sampled_from(SIZES)), min_size=2, max_size=8))
def test_sum_channel_is_zero_along_a_constant_product(pairs):
    """Configurations with the same product of two powers of two are at distance 0 on the pair's
    sum channel, and the difference channel measures their ratio the same way."""
    m = space()
    enc = SpaceEncoder(m, ridge_channels="both")
    rng = random.Random(1)
    cfgs = [dict(m.random(rng), a=x, b=y) for x, y in pairs]
    D = enc.sqdists(enc.encode(cfgs), enc.encode(cfgs))
    base = len(enc.encoders)
    log = np.log2(np.array(pairs, dtype=float)) / 11.0          # unit values of 11 powers of two, up to a shift
    along = (log[:, 0] + log[:, 1])[:, None] - (log[:, 0] + log[:, 1])[None, :]
    across = (log[:, 0] - log[:, 1])[:, None] - (log[:, 0] - log[:, 1])[None, :]
    assert np.allclose(D[base], (along / 2) ** 2) and np.allclose(D[base + 1], (across / 2) ** 2)
    assert D.min() >= 0.0 and D.max() <= 1.0 + 1e-12
    same = np.isclose(along, 0.0)
    assert np.all(D[base][same] < 1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_gp_learns_a_diagonal_ridge_on_the_sum_channel(seed):
    """On a function of a x b (a ridge along a diagonal of the log scales) the GP with the sum
    channels turns the axis channels off, puts the short lengthscale on the sum, and is more probable
    than the axis-aligned GP on the same 12 results."""
    m = ConfigurationManipulator([OrdinalParameter("a", SIZES), OrdinalParameter("b", SIZES)])
    rng = random.Random(seed)
    cfgs = [m.random(rng) for _ in range(12)]
    raw = np.array([(np.log2(c["a"] * c["b"]) - 10.0) ** 2 for c in cfgs])
    y = (raw - raw.mean()) / raw.std()
    fits = {}
    for kind in ("none", "sum"):
        enc = SpaceEncoder(m, ridge_channels=kind)
        train = enc.encode(cfgs)
        gp = GaussianProcess(enc.sqdists(train, train), y, dormant=len(enc.ridges))
        fits[kind] = (gp.fit(np.random.default_rng(0)), gp.log_posterior)
    hyper = fits["sum"][0]
    assert hyper.lengthscales[2] * 5 < min(hyper.lengthscales[:2])
    assert fits["sum"][1] > fits["none"][1]


def test_dormant_channels_start_at_long_lengthscales():
    D2 = np.zeros((5, 4, 4))
    gp = GaussianProcess(D2, np.arange(4.0), dormant=2)
    thetas = gp.random_thetas(np.random.default_rng(0), 50)
    lo, hi = np.log(DORMANT_RANGE)
    assert np.all(thetas[:, 3:5] >= lo) and np.all(thetas[:, 3:5] <= hi)
    assert np.all(thetas[:, :3] <= np.log(10.0) + 1e-12)


def test_technique_option_builds_the_channels_and_runs():
    m = ConfigurationManipulator([OrdinalParameter("a", SIZES), OrdinalParameter("b", SIZES),
                                  OrdinalParameter("c", SIZES[:5])])
    bo = BayesianOptimization(ridge_channels="both", initial_samples=4)
    bo.bind(m, random.Random(0), "bo")
    assert len(bo.encoder.ridges) == 6
    seen = set()
    for _ in range(10):
        cfg = bo.desired_configuration()
        key = m.hash_config(cfg)
        assert key not in seen
        seen.add(key)
        value = float(abs(np.log2(cfg["a"] * cfg["b"]) - 8) + cfg["c"])
        bo.observe(Feedback(cfg, key, value, "ok", "bo", False))
    assert bo.best_value < float("inf")
    with pytest.raises(TechniqueError):
        BayesianOptimization(ridge_channels="diagonal")


def test_ridge_after_keeps_the_channels_out_of_the_first_fits():
    """With ``ridge_after`` 2 and 4 initial samples the GP has the per-parameter channels alone until
    8 OK results, and the pair channels from then on."""
    m = ConfigurationManipulator([OrdinalParameter("a", SIZES), OrdinalParameter("b", SIZES)])
    bo = BayesianOptimization(ridge_channels="sum", ridge_after=2, initial_samples=4)
    bo.bind(m, random.Random(0), "bo")
    channels = {}
    for _ in range(12):
        cfg = bo.desired_configuration()
        key = m.hash_config(cfg)
        bo.observe(Feedback(cfg, key, float((np.log2(cfg["a"] * cfg["b"]) - 10.0) ** 2), "ok", "bo", False))
        if bo._fs.model is not None:
            channels[bo._fs.model_at] = bo._fs.model[0].P
    base = len(bo.encoder.encoders)
    assert channels and all(p == (base + 1 if n >= 8 else base) for n, p in channels.items())
    assert {base, base + 1} <= set(channels.values())

"""Small finite spaces: the chain of trees enumerates every feasible configuration and the
acquisition is maximised exactly over the ones not yet evaluated."""
import itertools
import random

import numpy as np

from tunerlib.parameters import (BooleanParameter, ConfigurationManipulator, EnumParameter, FloatParameter,
                                 OrdinalParameter, PermutationParameter)
from tunerlib.techniques.bo.acquisition import Acquisition, LocalSearch
from tunerlib.parameters import FeasibleSpace
from tunerlib.techniques.bo.distances import ConfigKey, SpaceEncoder
from tunerlib.techniques.bo.gp import GaussianProcess
from tunerlib.techniques.bo.neighbours import NeighbourGenerator
from tunerlib.techniques.bo.technique import BayesianOptimization


def small_space():
    m = ConfigurationManipulator([OrdinalParameter("a", [1, 2, 4, 8]), OrdinalParameter("b", [1, 2, 4, 8]),
                                  EnumParameter("mode", ["x", "y", "z"]), BooleanParameter("flag"),
                                  PermutationParameter("p", [0, 1, 2])])
    m.add_constraint("a * b <= 16")
    m.add_constraint("index(p, 0) != 2 or mode != 'z'")
    return m


def brute_force(m):
    names = m.names
    doms = [[1, 2, 4, 8], [1, 2, 4, 8], ["x", "y", "z"], [False, True],
            [list(t) for t in itertools.permutations([0, 1, 2])]]
    return [dict(zip(names, vals)) for vals in itertools.product(*doms)
            if m.is_feasible(dict(zip(names, vals)))]


def canon(cfgs):
    return sorted(repr(sorted(c.items())) for c in cfgs)


def test_enumerate_all_is_exactly_the_feasible_set():
    m = small_space()
    cot = FeasibleSpace(m)
    every = cot.enumerate_all(10_000)
    assert every is not None
    assert canon(every) == canon(brute_force(m))
    assert len(every) == cot.size()


def test_enumerate_all_refuses_large_or_continuous_spaces():
    m = small_space()
    assert FeasibleSpace(m).enumerate_all(10) is None
    cont = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), OrdinalParameter("a", [1, 2])])
    assert FeasibleSpace(cont).enumerate_all(10_000) is None


def test_exhaustive_acquisition_returns_the_exact_argmax_of_unevaluated_configs():
    m = small_space()
    rng, np_rng = random.Random(3), np.random.default_rng(3)
    cot = FeasibleSpace(m)
    key = ConfigKey(m)
    encoder = SpaceEncoder(m)
    every = cot.enumerate_all(10_000)
    train_cfgs = every[::7]
    f = lambda c: (np.log2(c["a"]) - 1.5) ** 2 + (c["mode"] == "y") + 0.3 * c["flag"]  # noqa: E731
    y = np.array([f(c) for c in train_cfgs])
    y = (y - y.mean()) / y.std()
    train = encoder.encode(train_cfgs)
    gp = GaussianProcess(encoder.sqdists(train, train), y)
    gp.fit(np_rng, 10, 2)
    acq = Acquisition(encoder, gp, train, float(y.min()))
    excluded = {key(c) for c in train_cfgs}
    search = LocalSearch(key, cot, NeighbourGenerator(m, cot), n_random=5, n_starts=1, max_steps=1,
                         exhaustive_limit=10_000)
    chosen = search.run(acq, rng, np_rng, excluded, [train_cfgs[0]])
    rest = [c for c in every if key(c) not in excluded]
    scores = acq.score(rest)
    assert key(chosen) not in excluded
    assert acq.score([chosen])[0] >= scores.max() - 1e-6 * abs(scores.max())


def test_bo_exhausts_a_small_space_without_repeats():
    m = ConfigurationManipulator([OrdinalParameter("a", [1, 2, 4, 8]), OrdinalParameter("b", [1, 2, 4, 8]),
                                  EnumParameter("mode", ["x", "y", "z"])])
    m.add_constraint("a * b <= 16")
    bo = BayesianOptimization(initial_samples=3)
    bo.bind(m, random.Random(0), "bo")
    seen = set()
    from tunerlib.techniques.base import Feedback
    total = sum(1 for a, b, mode in itertools.product([1, 2, 4, 8], [1, 2, 4, 8], "xyz") if a * b <= 16)
    for _ in range(total + 3):
        cfg = bo.propose()
        if cfg is None:
            break
        cfg = cfg.config if hasattr(cfg, "config") else cfg
        h = m.hash_config(cfg)
        assert h not in seen
        seen.add(h)
        v = float(np.log2(cfg["a"]) + cfg["b"] / 8 + (cfg["mode"] == "z"))  # noqa: E501
        bo.observe(Feedback(cfg, h, v, "ok", "bo", False))
    assert len(seen) == total

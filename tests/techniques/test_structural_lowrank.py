"""LowRankStructuralSurrogate: the low-rank fit recovers planted pairwise weights from fewer tours than
pairs, its work per observation is bounded, and it hands over to the full-rank model."""
import random

import numpy as np

from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.parameters.features import FeatureLayout
from tunerlib.techniques import registry
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.structural.lowrank import (ITERATIONS, LowRankBayesLinear,
                                                     LowRankStructuralSurrogate)
from tunerlib.techniques.structural.model import SparseBayesLinear

from tourdrive import drive_tour


def planted(n, seed):
    """A symmetric pairwise-cost matrix of rank 2 plus a constant, and a tour cost function."""
    rng = np.random.default_rng(seed)
    U, V = rng.standard_normal((n, 2)), rng.standard_normal((n, 2))
    W = U @ V.T
    W = W + W.T + 10.0
    return W, lambda t: float(W[t, np.roll(t, -1)].sum())


def fitted(cls, layout, tours, cost):
    model = cls(layout.size, layout.groups)
    for k, t in enumerate(tours):
        model.add(layout.encode({"t": list(t)}), cost(t))
        if k % 10 == 9:
            model.refresh()
    model.refresh()
    return model


def held_out_correlation(model, layout, tours, cost):
    pred = [model.predict(layout.encode({"t": list(t)}), model.mean) for t in tours]
    return float(np.corrcoef(pred, [cost(t) for t in tours])[0, 1])


def test_low_rank_fit_recovers_planted_weights_from_fewer_tours_than_pairs():
    n = 40                      # 780 adjacency pairs, 1,600 direction features
    _, cost = planted(n, 0)
    rng = np.random.default_rng(1)
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    train, test = [rng.permutation(n) for _ in range(300)], [rng.permutation(n) for _ in range(200)]
    low = held_out_correlation(fitted(LowRankBayesLinear, layout, train, cost), layout, test, cost)
    full = held_out_correlation(fitted(SparseBayesLinear, layout, train, cost), layout, test, cost)
    assert low > 0.88
    assert full < 0.8           # the full-rank model alone cannot: the data do not determine its weights


def test_work_per_observation_is_bounded_and_stops_at_the_hand_over():
    n = 8                       # 28 pairs + 64 direction features: handed over after 92 observations
    _, cost = planted(n, 2)
    rng = np.random.default_rng(3)
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    model = LowRankBayesLinear(layout.size, layout.groups)
    assert model.handover == 92
    fits = []
    for _ in range(400):
        t = rng.permutation(n)
        model.add(layout.encode({"t": list(t)}), cost(t))
        model.refresh()
        fits.append(model.low_rank_fits)
    # a refit is at most three L-BFGS fits (of at most 2 * ITERATIONS steps), once each 8 observations
    # or a quarter's growth of the data (the full-rank model's schedule)
    steps = [b - a for a, b in zip([0] + fits, fits)]
    assert max(steps) <= 3
    refits = sum(1 for s in steps if s)
    assert refits <= 92 / 8 + np.log(92 / 8) / np.log(1.25) + 1
    assert fits[-1] == fits[92] > 0
    assert ITERATIONS <= 100


def drive(n, evals, seed):
    W, cost = planted(n, seed)
    return drive_tour(LowRankStructuralSurrogate("LowRankStructuralSurrogate"), n, cost, evals, seed)


def test_registered_deterministic_and_uses_the_low_rank_model():
    assert "LowRankStructuralSurrogate" in registry()
    a, tech = drive(30, 120, 5)
    b, _ = drive(30, 120, 5)
    assert a == b
    assert isinstance(tech.model, LowRankBayesLinear) and tech.model.low_rank_fits > 0
    assert np.any(tech.model.prior_mean != 0.0)


def test_without_a_permutation_it_makes_structural_surrogates_suggestions():
    from tunerlib.parameters import EnumParameter, IntegerParameter
    from tunerlib.techniques.structural import StructuralSurrogate

    def run(cls):
        space = ConfigurationManipulator([IntegerParameter("x", 0, 40), EnumParameter("e", list("abcdef"))])
        tech = cls(cls.__name__)
        tech.bind(space, random.Random(7), cls.__name__)
        configs, best = [], np.inf
        for _ in range(230):
            prop = tech.propose()
            cfg = prop.config
            value = (cfg["x"] - 17) ** 2 + "abcdef".index(cfg["e"]) + 1.0
            configs.append(space.hash_config(cfg))
            tech.observe(Feedback(cfg, space.hash_config(cfg), value, "ok", prop.requestor, value < best))
            best = min(best, value)
        return configs
    assert run(LowRankStructuralSurrogate) == run(StructuralSurrogate)


def test_the_prior_is_kept_only_where_the_factors_are_fewer_than_the_weights_they_centre():
    """At the starting rank 2 a directed order of n items has 1 + 8n factor unknowns against
    n(n-1)/2 + n² adjacency and direction weights: 41 against 35 at 5 items (no low-rank prior), 49
    against 51 at 6 (kept)."""
    from tunerlib.techniques.structural.lowrank import low_rank_blocks

    def kept(n, **layout_options):
        layout = FeatureLayout([PermutationParameter("t", list(range(n)))], **layout_options)
        return [b.n for b in low_rank_blocks(layout.groups, 2)]
    assert kept(5) == [] and kept(6) == [6] and kept(12) == [12]
    model = LowRankBayesLinear(FeatureLayout([PermutationParameter("t", list(range(5)))]).size,
                               FeatureLayout([PermutationParameter("t", list(range(5)))]).groups)
    assert model.blocks == [] and model.free.size == model.size and model.handover == 0
    assert LowRankBayesLinear(1, [], max_rank=1).ranks == [1]


def _loop_run(cls, seed, n=60):
    """A 5-loop order beside two numbers and a schedule kind, timed as a product of factors."""
    from tunerlib.parameters import EnumParameter, IntegerParameter
    rng = np.random.default_rng(seed)
    before, kinds = rng.normal(0.0, 0.4, (5, 5)), np.exp(rng.normal(0.0, 0.3, 3))
    space = ConfigurationManipulator([IntegerParameter("a", 1, 64), IntegerParameter("b", 1, 64),
                                      EnumParameter("s", ["static", "dynamic", "guided"]),
                                      PermutationParameter("order", list(range(5)))])
    tech = cls(cls.__name__)
    tech.bind(space, random.Random(seed), cls.__name__)
    configs, best = [], np.inf
    for _ in range(n):
        prop = tech.propose()
        cfg = prop.config
        order = cfg["order"]
        pairs = sum(before[order[i], order[j]] for i in range(5) for j in range(i + 1, 5))
        value = float(np.exp(pairs) * (1 + abs(cfg["a"] - 20)) * (1 + abs(cfg["b"] - 5) / 8)
                      * kinds[["static", "dynamic", "guided"].index(cfg["s"])])
        configs.append(space.hash_config(cfg))
        tech.observe(Feedback(cfg, space.hash_config(cfg), value, "ok", prop.requestor, value < best))
        best = min(best, value)
    return configs, tech


def test_a_five_item_order_beside_numbers_makes_structural_surrogates_suggestions():
    """Where no permutation's factors are identifiable LowRankStructuralSurrogate is StructuralSurrogate:
    its model, its value transform (the logarithm beside other parameters) and its suggestions."""
    from tunerlib.techniques.structural import StructuralSurrogate
    for seed in (0, 1):
        low, tech = _loop_run(LowRankStructuralSurrogate, seed)
        full, ref = _loop_run(StructuralSurrogate, seed)
        assert low == full
        assert type(tech.model) is SparseBayesLinear and tech.values.transform == ref.values.transform == "log"


def test_a_twelve_item_tour_keeps_its_low_rank_prior():
    a, tech = drive(12, 80, 3)
    assert isinstance(tech.model, LowRankBayesLinear) and [b.n for b in tech.model.blocks] == [12]
    assert tech.model.low_rank_fits > 0 and np.any(tech.model.prior_mean != 0.0)

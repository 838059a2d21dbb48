"""StructuralSurrogate's value transform (techniques/structural/transform.py): the raw values on spaces
of permutations alone (tours: exactly the suggestions of ``log_values=False``), the logarithm on every
other space (a loop order beside other parameters included), and the raw values from the first value
<= 0 on."""
import math
import random

import numpy as np

from tunerlib.parameters import ConfigurationManipulator, EnumParameter, OrdinalParameter, PermutationParameter
from tunerlib.parameters.features import FeatureLayout
from tunerlib.techniques import registry
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.structural.model import SparseBayesLinear
from tunerlib.techniques.structural.transform import ValueModels

CHOICES = [str(i) for i in range(6)]


def _enum_space(k=5):
    return ConfigurationManipulator([EnumParameter(f"p{i}", CHOICES) for i in range(k)])


def _factors(seed=0, k=5):
    """Per-parameter, per-choice factors spanning about two orders of magnitude in their product."""
    rng = np.random.default_rng(seed)
    return np.exp(rng.normal(0.0, 0.8, size=(k, len(CHOICES))))


def _product(cfg, f):
    return float(np.prod([f[i, int(cfg[f"p{i}"])] for i in range(f.shape[0])]))


def _run(tech, space, objective, seed, n):
    tech.bind(space, random.Random(f"{seed}"), tech.name)
    out = []
    for _ in range(n):
        proposal = tech.propose()
        value = objective(proposal.config)
        out.append((space.hash_config(proposal.config), value))
        tech.observe(Feedback(proposal.config, space.hash_config(proposal.config), value, "ok",
                              proposal.requestor, False))
    return out


def _tour_objective(n=12, seed=7):
    pts = np.random.default_rng(seed).random((n, 2))
    dist = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    return lambda cfg: float(sum(dist[a, b] for a, b in zip(cfg["tour"], cfg["tour"][1:] + cfg["tour"][:1])))


def test_the_default_is_the_logarithm_without_a_permutation_and_the_raw_values_on_a_tour():
    catalogue = registry()
    f = _factors(4)
    enum = catalogue.create("StructuralSurrogate")
    values = [v for _, v in _run(enum, _enum_space(), lambda c: _product(c, f), 0, 40)]
    assert enum.values.transform == "log" and enum.model.y == [math.log(v) for v in values]
    tour = catalogue.create("StructuralSurrogate")
    values = [v for _, v in _run(tour, ConfigurationManipulator([PermutationParameter("tour", list(range(12)))]),
                                 _tour_objective(), 0, 40)]
    assert tour.values.transform == "raw" and tour.model.y == values


def _loop_space():
    """A 5-loop order beside two chunk sizes and a schedule kind (the shape of the TACO spaces)."""
    sizes = [1, 2, 4, 8, 16, 32, 64, 128]
    return ConfigurationManipulator([OrdinalParameter("chunk", sizes), OrdinalParameter("chunk2", sizes),
                                     EnumParameter("schedule", ["static", "dynamic", "guided"]),
                                     PermutationParameter("order", list(range(5)))])


def _loop_time(seed=0):
    """A run time: a product of per-choice factors, the loop order's a factor of its pairwise precedences
    (together about three orders of magnitude)."""
    rng = np.random.default_rng(seed)
    chunk, chunk2 = np.exp(rng.normal(0.0, 1.0, 8)), np.exp(rng.normal(0.0, 0.7, 8))
    schedule, before = np.exp(rng.normal(0.0, 0.3, 3)), rng.normal(0.0, 0.4, (5, 5))
    sizes = [1, 2, 4, 8, 16, 32, 64, 128]

    def time(cfg):
        order = cfg["order"]
        precedence = sum(before[a, b] for i, a in enumerate(order) for b in order[i + 1:])
        return float(chunk[sizes.index(cfg["chunk"])] * chunk2[sizes.index(cfg["chunk2"])]
                     * schedule[["static", "dynamic", "guided"].index(cfg["schedule"])] * np.exp(precedence))
    return time


def test_a_loop_order_beside_other_parameters_gets_the_logarithm():
    space = _loop_space()
    tech = registry().create("StructuralSurrogate")
    values = [v for _, v in _run(tech, space, _loop_time(), 0, 30)]
    assert tech.values.transform == "log" and tech.model.y == [math.log(v) for v in values]


def test_the_low_rank_surrogate_keeps_the_raw_values_beside_a_permutation_with_a_low_rank_prior():
    """LowRankStructuralSurrogate's default stays the raw values on every space with a permutation that
    gets a low-rank prior (an 8-item order here); beside a 5-item order,
    which gets none, and without a permutation it takes the logarithm as StructuralSurrogate does."""
    sizes = [1, 2, 4, 8, 16, 32, 64, 128]
    eight = ConfigurationManipulator([OrdinalParameter("chunk", sizes), PermutationParameter("order", list(range(8)))])
    loop = registry().create("LowRankStructuralSurrogate")
    values = [v for _, v in _run(loop, eight, lambda c: c["chunk"] * (1.0 + c["order"].index(0)), 0, 30)]
    assert loop.values.transform == "raw" and loop.model.y == values
    five = registry().create("LowRankStructuralSurrogate")
    _run(five, _loop_space(), _loop_time(), 0, 30)
    assert five.values.transform == "log"
    f = _factors(4)
    enum = registry().create("LowRankStructuralSurrogate")
    _run(enum, _enum_space(), lambda c: _product(c, f), 0, 20)
    assert enum.values.transform == "log"


def test_on_a_loop_order_beside_other_parameters_the_default_model_ranks_unseen_times_better():
    """Fitted to the same 60 random configurations, the default model (the logarithm) ranks 300 unseen
    ones by their time better than the raw model does, and well (rank correlation > 0.8)."""
    from tunerlib.techniques.structural.model import rank_correlation
    from tunerlib.techniques.structural.technique import StructuralSurrogate
    space, time = _loop_space(), _loop_time(1)
    rng = random.Random(0)
    seen = [space.random(rng) for _ in range(60)]
    test = [space.random(random.Random(1000 + i)) for i in range(300)]
    rho = {}
    for log_values in (None, False):
        tech = StructuralSurrogate(log_values=log_values)
        tech.bind(space, random.Random(0), tech.name)
        for cfg in seen:
            tech.observe(Feedback(cfg, space.hash_config(cfg), time(cfg), "ok", "seed", False))
        tech.model.refresh()
        rho[log_values] = rank_correlation([tech.model.predict(tech.layout.encode(c), tech.model.mean)
                                            for c in test], [time(c) for c in test])
    assert rho[None] > 0.8 and rho[None] > rho[False] + 0.05, rho


def test_on_tours_the_default_makes_the_raw_models_suggestions():
    """Tours keep the raw values (their length is a sum over edges): the default run is the very run of
    ``log_values=False``, and ``log_values=True`` is another one."""
    catalogue = registry()
    runs = []
    for log_values in (None, False, True):
        tech = catalogue.create("StructuralSurrogate")
        tech.log_values = log_values
        runs.append(_run(tech, ConfigurationManipulator([PermutationParameter("tour", list(range(12)))]),
                         _tour_objective(), 1, 80))
    assert runs[0] == runs[1] and runs[2] != runs[1]


def test_the_log_model_fits_a_product_of_factors_that_the_raw_model_misses():
    """Per-choice factors multiply: from 60 random configurations the log model ranks 200 unseen ones
    nearly perfectly (rank correlation > 0.95), better than the raw model does."""
    from tunerlib.techniques.structural.model import rank_correlation
    space = _enum_space()
    layout = FeatureLayout(space.parameters)
    f = _factors(3)
    rng = random.Random(0)
    fitted = {}
    for log in (True, False):
        models = ValueModels(lambda: SparseBayesLinear(layout.size, layout.groups, cg_steps=50), log_values=log)
        for _ in range(60):
            cfg = space.random(rng)
            models.add(layout.encode(cfg), _product(cfg, f))
        models.model.refresh()
        fitted[log] = models.model
    test = [space.random(random.Random(100 + i)) for i in range(200)]
    truth = [_product(c, f) for c in test]
    rho = {log: rank_correlation([m.predict(layout.encode(c), m.mean) for c in test], truth)
           for log, m in fitted.items()}
    assert rho[True] > 0.95 and rho[True] > rho[False], rho


def test_a_value_at_or_below_zero_rebuilds_the_raw_model_from_the_data():
    space = _enum_space()
    layout = FeatureLayout(space.parameters)
    models = ValueModels(lambda: SparseBayesLinear(layout.size, layout.groups))
    assert models.transform == "log"
    f = _factors(3)
    rng = random.Random(0)
    values = []
    for _ in range(20):
        cfg = space.random(rng)
        values.append(_product(cfg, f))
        models.add(layout.encode(cfg), values[-1])
    assert models.model.y == [math.log(v) for v in values]
    log_rows = models.model.rows.matrix().toarray()
    models.add(layout.encode(space.random(rng)), -1.0)
    assert models.transform == "raw" and models.model.n == 21
    assert np.allclose(models.model.y[:20], values) and models.model.y[20] == -1.0
    assert np.array_equal(models.model.rows.matrix().toarray()[:20], log_rows)
    models.add(layout.encode(space.random(rng)), 2.0)
    assert models.transform == "raw" and models.model.y[21] == 2.0


def test_on_a_product_of_factors_the_log_model_keeps_its_share_and_the_raw_one_loses_it():
    """Twenty 5-way choices whose factors multiply, 8 seeds of 80 evaluations: with the default (log)
    values the model keeps most suggestions (mean share >= 0.5) and ends better than the raw model on
    at least 6 seeds; fitting the raw values it loses its share (mean <= 0.2)."""
    from tunerlib.techniques.structural.technique import StructuralSurrogate
    rnd = np.random.default_rng(0)
    factors = {f"e{i}": dict(zip("abcde", np.exp(rnd.normal(0.0, 0.5, 5)))) for i in range(20)}
    space = ConfigurationManipulator([EnumParameter(f"e{i}", list("abcde")) for i in range(20)])
    shares = {None: [], False: []}
    bests = {None: [], False: []}
    for seed in range(8):
        for log_values in (None, False):
            tech = StructuralSurrogate(log_values=log_values)
            run = _run(tech, space, lambda c: float(np.prod([factors[k][v] for k, v in c.items()])), seed, 80)
            shares[log_values].append(tech._model_share())
            bests[log_values].append(min(v for _, v in run))
    assert np.mean(shares[None]) >= 0.5 and np.mean(shares[False]) <= 0.2, shares
    assert sum(a < b for a, b in zip(bests[None], bests[False])) >= 6, bests

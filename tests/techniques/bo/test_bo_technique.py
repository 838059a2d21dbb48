"""The BayesianOptimization technique: options, protocol, no re-proposals, every kind of space."""
import math
import random

import pytest
from tunerlib import tune_function
from tunerlib.parameters import (BooleanArray, BooleanParameter, ConfigurationManipulator, EnumParameter,
                                 FloatArray, FloatParameter, IntegerArray, IntegerParameter,
                                 LogFloatParameter, LogIntegerParameter, OrdinalParameter,
                                 PermutationParameter, PowerOfTwoParameter, ScheduleParameter,
                                 SelectorParameter, SwitchParameter)
from tunerlib.techniques import Feedback, TechniqueError, Catalogue, register, registry
from tunerlib.techniques.bo import BayesianOptimization, BOOptions
from tunerlib.techniques.bo import register as register_bo

#: cheaper acquisition/hyperparameter search so that the statistical tests stay fast
LIGHT = dict(n_random_samples=300, n_starts=4, hp_samples=15, hp_starts=3, max_local_steps=5)


def ensure(name, factory):
    """Register a test variant at run time (never at import, so collection-time listings of the
    registry, such as the conformance kit's, do not see it)."""
    if name not in registry():
        register(name, factory, "test variant of BayesianOptimization")


def feedback(m, cfg, value, requestor="BO", state=None):
    state = state or ("ok" if math.isfinite(value) else "error")
    return Feedback(cfg, m.hash_config(cfg), value, state, requestor, False)


# ---- API ----------------------------------------------------------------------------------
def test_register_and_options():
    reg = Catalogue()
    register_bo(reg)
    tech = reg.create("BayesianOptimization")
    assert isinstance(tech, BayesianOptimization) and tech.name == "BayesianOptimization"
    hp = tech.option_values()
    assert hp["n_random_samples"] == 2000 and hp["permutation_distance"] == "spearman"
    assert hp["initial_samples"] is None and hp["feasibility_model"] is True
    assert BayesianOptimization(options=BOOptions(n_starts=3)).option_values()["n_starts"] == 3
    with pytest.raises(TechniqueError, match="has no option 'bogus'"):
        BayesianOptimization(bogus=1)
    with pytest.raises(TechniqueError, match="permutation_distance.*cayley.*not allowed"):
        BayesianOptimization(permutation_distance="cayley")
    m = ConfigurationManipulator([PermutationParameter("p", [1, 2, 3])])
    with pytest.raises(TechniqueError, match="unknown parameter"):
        BayesianOptimization(permutation_distances={"q": "kendall"}).bind(m, random.Random(0))


# ---- protocol on small spaces -----------------------------------------------------------------
def small_space():
    m = ConfigurationManipulator([IntegerParameter("i", 0, 4), EnumParameter("e", ["a", "b", "c"]),
                                  BooleanParameter("b")])
    return m, lambda c: (c["i"] - 3) ** 2 + (c["e"] == "a") + 0.5 * c["b"]


def test_never_reproposes_an_evaluated_configuration_and_stops_when_exhausted():
    m, fn = small_space()
    tech = BayesianOptimization(**LIGHT)
    tech.bind(m, random.Random(0), "BO")
    seen = set()
    other_rng = random.Random(1)
    for step in range(40):
        if step % 5 == 4:   # another technique's result: BO must learn it and never propose it
            cfg = m.random(other_rng)
            if m.hash_config(cfg) not in seen:
                seen.add(m.hash_config(cfg))
                tech.observe(feedback(m, cfg, fn(cfg), requestor="Other"))
        proposal = tech.propose()
        if proposal is None:
            break
        key = m.hash_config(proposal.config)
        assert key not in seen, f"re-proposed {proposal.config} at step {step}"
        assert m.is_valid(proposal.config) and proposal.requestor == "BO"
        seen.add(key)
        tech.observe(feedback(m, proposal.config, fn(proposal.config)))
    assert len(seen) == 30 and tech.propose() is None
    assert tech.fallbacks == 0


def test_pending_proposals_are_distinct():
    m, fn = small_space()
    tech = BayesianOptimization(initial_samples=3, **LIGHT)
    tech.bind(m, random.Random(2), "BO")
    first = [tech.propose() for _ in range(3)]
    assert tech.propose() is None            # initial design in flight, fewer than 2 results
    for p in first:
        tech.observe(feedback(m, p.config, fn(p.config)))
    batch = [tech.propose().config for _ in range(6)]   # several BO proposals before any result
    keys = [m.hash_config(c) for c in batch + [p.config for p in first]]
    assert len(set(keys)) == len(keys)


def test_learns_from_other_techniques_and_skips_the_initial_design():
    m, fn = small_space()
    tech = BayesianOptimization(**LIGHT)
    tech.bind(m, random.Random(3), "Bandit/BO")
    rng = random.Random(4)
    for cfg in {m.hash_config(c): c for c in (m.random(rng) for _ in range(12))}.values():
        tech.observe(feedback(m, cfg, fn(cfg), requestor="Bandit/Other"))
    assert tech.propose() is not None
    assert tech._fs.fits == 1 and tech._initial_made == 0


def test_deterministic_under_seed():
    m, fn = small_space()

    def run():
        tech = BayesianOptimization(**LIGHT)
        tech.bind(m, random.Random(9), "BO")
        out = []
        for _ in range(12):
            cfg = tech.propose().config
            out.append(m.hash_config(cfg))
            tech.observe(feedback(m, cfg, fn(cfg)))
        return out
    assert run() == run()


# ---- every kind of space through the real driver ---------------------------------------------
def every_kind_space():
    m = ConfigurationManipulator([
        IntegerParameter("i", 0, 100), FloatParameter("f", -1.0, 1.0), LogFloatParameter("lf", 1e-4, 1.0),
        LogIntegerParameter("li", 0, 1000), PowerOfTwoParameter("p2", 1, 1024), EnumParameter("e", ["a", 2, True]),
        BooleanParameter("b"), OrdinalParameter("o", [1, 2, 4, 8, 16], log=True), SwitchParameter("s", 4),
        PermutationParameter("perm", list(range(5))), ScheduleParameter("sch", ["x", "y", "z", "w"], {"w": ["x"]}),
        IntegerArray("ia", 3, 0, 9), BooleanArray("ba", 3), FloatArray("fa", 2, 0.0, 1.0),
        SelectorParameter("sel", ["u", "v"], 64)])

    def cost(c):
        return ((c["i"] - 37) ** 2 / 100 + c["f"] ** 2 + abs(math.log10(c["lf"]) + 2) + c["s"] + sum(c["ia"]) / 9
                + sum(c["ba"]) + sum(c["fa"]) + c["perm"].index(0) + c["sch"].index("z") + c["sel"]["cutoffs"][0] / 64)
    return m, cost


def constrained_space():
    m = ConfigurationManipulator([IntegerParameter("a", 1, 64), IntegerParameter("b", 1, 64),
                                  PowerOfTwoParameter("ls", 1, 64), PowerOfTwoParameter("gs", 1, 256),
                                  EnumParameter("mode", ["x", "y"]), FloatParameter("free", 0.0, 1.0)])
    m.add_constraint("a < b")
    m.add_constraint("gs % ls == 0 and ls * a <= 256")
    m.add_constraint(lambda c: c["mode"] == "x" or c["b"] > 8, reads=["mode", "b"], name="mode-y-needs-b")

    def cost(c):
        assert m.is_feasible(c), "infeasible configuration measured"
        return abs(c["a"] - 20) + abs(c["b"] - 21) + abs(math.log2(c["ls"]) - 3) + (c["mode"] == "y") + c["free"]
    return m, cost


def permutation_space():
    pts = [(math.cos(k), math.sin(3 * k)) for k in range(8)]
    m = ConfigurationManipulator([PermutationParameter("tour", list(range(8)))])
    return m, lambda c: sum(math.dist(pts[c["tour"][k]], pts[c["tour"][k - 1]]) for k in range(8))


@pytest.mark.parametrize("make", [every_kind_space, constrained_space, permutation_space])
def test_runs_full_budget_on_every_space(make):
    ensure("BO-test-light", lambda: BayesianOptimization(**LIGHT))
    m, fn = make()
    run = tune_function(m, fn, test_limit=22, technique=["BO-test-light"], seed=5)
    assert run.summary.tests == 22, run.summary.stopped_because
    assert all(math.isfinite(v) for v in run.values)


def test_auto_log_transform_is_chosen_by_marginal_likelihood():
    """Multiplicative (runtime-like) data pick the log transform, additive data near zero do not;
    a forced choice and non-positive values are respected."""
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), FloatParameter("y", 0.0, 1.0)])
    funcs = {True: lambda c: math.exp(6 * c["x"] + 4 * c["y"]),
             False: lambda c: (c["x"] - 0.5) ** 2 + (c["y"] - 0.5) ** 2 + 1e-3}
    for want, fn in funcs.items():
        for forced in (None, not want):
            tech = BayesianOptimization(log_transform=forced, **LIGHT)
            tech.bind(m, random.Random(0), "BO")
            rng = random.Random(1)
            for _ in range(30):
                cfg = m.random(rng)
                tech.observe(feedback(m, cfg, fn(cfg), requestor="Other"))
            assert tech.propose() is not None
            assert tech._fs.transform == (0.0 if (want if forced is None else forced) else 1.0)
    tech = BayesianOptimization(log_transform=True, **LIGHT)
    tech.bind(m, random.Random(0), "BO")
    rng = random.Random(1)
    for _ in range(10):
        cfg = m.random(rng)
        tech.observe(feedback(m, cfg, cfg["x"] - 0.5, requestor="Other"))
    assert tech.propose() is not None and tech._fs.transform == 1.0


def test_training_set_is_capped():
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0)])
    tech = BayesianOptimization(max_observations=20, **LIGHT)
    tech.bind(m, random.Random(0), "BO")
    for k in range(50):
        cfg = {"x": k / 50}
        tech.observe(feedback(m, cfg, abs(k - 10) + 1.0, requestor="Other"))
    kept = tech._training_set()
    assert len(kept) == 20
    values = [v for _, v in kept]
    assert min(values) == 1.0 and {c["x"] for c, _ in kept} >= {k / 50 for k in range(40, 50)}
    assert tech.propose() is not None

"""Hidden constraints: the random-forest feasibility model avoids failing regions (statistical)."""
import math
import statistics

from lazystats import wilcoxon

from tunerlib import tune_function
from tunerlib.parameters import ConfigurationManipulator, EnumParameter, FloatParameter, IntegerParameter
from tunerlib.techniques import register, registry
from tunerlib.techniques.bo import BayesianOptimization

#: cheaper acquisition/hyperparameter search so that the statistical test stays fast
LIGHT = dict(n_random_samples=300, n_starts=4, hp_samples=15, hp_starts=3, max_local_steps=5)


def ensure(name, factory):
    """Register a test variant at run time (never at import, so collection-time listings of the
    registry, such as the conformance kit's, do not see it)."""
    if name not in registry():
        register(name, factory, "test variant of BayesianOptimization")


# ---- hidden constraints -----------------------------------------------------------------------
def hidden_space():
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), FloatParameter("y", 0.0, 1.0),
                                  IntegerParameter("k", 0, 20), EnumParameter("e", ["a", "b", "c"])])

    def fn(c):
        if c["x"] + c["y"] < 0.9 or c["e"] == "c":   # hidden constraint: the run fails (ERROR)
            return None
        return (c["x"] - 0.55) ** 2 + (c["y"] - 0.5) ** 2 + (c["k"] - 12) ** 2 / 100 + 0.3 * (c["e"] == "a")
    return m, fn


def test_feasibility_model_wastes_fewer_evaluations_on_hidden_infeasible_points():
    ensure("BO-test-light", lambda: BayesianOptimization(**LIGHT))
    ensure("BO-test-light-noRF", lambda: BayesianOptimization(feasibility_model=False, **LIGHT))
    budget, seeds = 20, 8
    wasted = {}
    for name in ("BO-test-light", "BO-test-light-noRF"):
        wasted[name] = []
        for seed in range(seeds):
            run = tune_function(*hidden_space(), test_limit=budget, technique=[name], seed=seed)
            wasted[name].append(sum(1 for v in run.values if not math.isfinite(v)))
    with_rf, without = wasted["BO-test-light"], wasted["BO-test-light-noRF"]
    assert statistics.mean(with_rf) < statistics.mean(without), wasted
    assert wilcoxon(with_rf, without, alternative="less").pvalue < 0.05, wasted


# ---- before the GP: feasibility-guided sampling ----------------------------------------------------
def test_second_ok_result_is_sought_where_the_classifier_expects_feasibility():
    """Where 10 of 120 loop orders can be run (a precedence rule), after one OK and a few failed
    results the pre-GP proposals are feasible far more often than random draws (1 in 12)."""
    import random

    from tunerlib.parameters import PermutationParameter
    from tunerlib.techniques import Feedback

    def legal(p):
        return p.index(0) < p.index(2) and p.index(1) < p.index(2) and p.index(2) < p.index(3)

    hits = trials = 0
    for seed in range(12):
        m = ConfigurationManipulator([PermutationParameter("order", [0, 1, 2, 3, 4]), IntegerParameter("k", 0, 7)])
        bo = BayesianOptimization(initial_samples=1, n_random_samples=200)
        bo.bind(m, random.Random(seed), "BO")
        rng = random.Random(100 + seed)
        shown = [{"order": [0, 1, 4, 2, 3], "k": 3}]
        while len(shown) < 7:
            cfg = m.random(rng)
            if not legal(cfg["order"]):
                shown.append(cfg)
        for cfg in shown:
            state = "ok" if legal(cfg["order"]) else "error"
            bo.observe(Feedback(cfg, m.hash_config(cfg), 1.0 if state == "ok" else math.inf, state, "x", False))
        proposal = bo.propose()   # one OK result so far: no GP, the guided sampler proposes
        assert proposal is not None and bo._fs.model is None
        trials += 1
        hits += legal(proposal.config["order"])
    assert hits / trials >= 0.5, (hits, trials)   # random proposals: 1 in 12

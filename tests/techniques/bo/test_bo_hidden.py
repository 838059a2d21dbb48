"""Hidden constraints: the random-forest feasibility model avoids failing regions (statistical)."""
import math
import statistics

from scipy.stats import wilcoxon

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

"""Quality: BayesianOptimization beats random search on a 6-D mixed problem at 40 evaluations."""
import math
import statistics

from tunerlib import tune_function
from tunerlib.parameters import (ConfigurationManipulator, EnumParameter, FloatParameter, IntegerParameter,
                                 LogFloatParameter, PermutationParameter, PowerOfTwoParameter)
from tunerlib.techniques import register, registry
from tunerlib.techniques.bo import BayesianOptimization

#: cheaper acquisition/hyperparameter search so that the quality test stays fast
LIGHT = dict(n_random_samples=300, n_starts=4, hp_samples=15, hp_starts=3, max_local_steps=5)


def ensure(name, factory):
    """Register a test variant at run time (never at import, so collection-time listings of the
    registry, such as the conformance kit's, do not see it)."""
    if name not in registry():
        register(name, factory, "test variant of BayesianOptimization")


# ---- quality -----------------------------------------------------------------------------------
def mixed6():
    m = ConfigurationManipulator([IntegerParameter("i", 0, 50), FloatParameter("f", -2.0, 2.0),
                                  LogFloatParameter("lf", 1e-4, 1.0), PowerOfTwoParameter("p2", 1, 1024),
                                  EnumParameter("e", ["a", "b", "c", "d"]), PermutationParameter("perm", list(range(5)))])

    def fn(c):
        inv = sum(1 for a in range(5) for b in range(a + 1, 5) if c["perm"][a] > c["perm"][b])
        return ((c["i"] - 31) ** 2 / 100 + (c["f"] - 0.7) ** 2 + (math.log10(c["lf"]) + 2.5) ** 2 / 2
                + (math.log2(c["p2"]) - 6) ** 2 / 4 + {"a": 1, "b": 0, "c": 2, "d": 1.5}[c["e"]] + inv / 2)
    return m, fn


def test_beats_random_search_on_a_mixed_problem():
    ensure("BO-test-light", lambda: BayesianOptimization(**LIGHT))
    budget, seeds = 40, 5
    best = {}
    for name in ("BO-test-light", "PureRandom"):
        best[name] = [tune_function(*mixed6(), test_limit=budget, technique=[name], seed=s).best_at(budget)
                      for s in range(seeds)]
    assert statistics.median(best["BO-test-light"]) < statistics.median(best["PureRandom"]), best

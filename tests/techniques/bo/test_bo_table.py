"""Chain of trees over a TableConstraint: the rows are the leaves, whatever the domains' size."""
import collections
import random

import numpy as np
from lazystats import chisquare

from tunerlib import tune_function
from tunerlib.parameters import (ConfigurationManipulator, IntegerParameter, PermutationParameter,
                                 PowerOfTwoParameter, TableConstraint)
from tunerlib.parameters import FeasibleSpace


def _space(rows):
    m = ConfigurationManipulator([PowerOfTwoParameter("x", 1, 2**20), IntegerParameter("y", 0, 10**7),
                                  PermutationParameter("p", list(range(5))), IntegerParameter("z", 0, 2)])
    m.add_constraint(TableConstraint(["x", "y", "p"], rows))
    m.add_constraint("y % 2 == 0")
    return m


def _rows(n, seed=0):
    rng = random.Random(seed)
    return [(2 ** rng.randrange(21), rng.randrange(10**7), rng.sample(range(5), 5)) for _ in range(n)]


def test_leaves_are_the_rows_satisfying_the_other_constraints():
    rows = _rows(300)
    cot = FeasibleSpace(_space(rows))
    legal = {(x, y, tuple(p)) for x, y, p in rows if y % 2 == 0}
    assert cot.exact_size and cot.size() == len(legal) * 3          # times the free z
    for cfg in cot.sample(random.Random(1), np.random.default_rng(1), 500):
        assert (cfg["x"], cfg["y"], tuple(cfg["p"])) in legal
    for x, y, p in rows[:50]:
        assert cot.is_feasible({"x": x, "y": y, "p": list(p), "z": 0}) is ((x, y, tuple(p)) in legal)


def test_sampling_is_uniform_over_rows():
    rows = [(2 ** i, 2 * i, [0, 1, 2, 3, 4]) for i in range(10)]
    cot = FeasibleSpace(_space(rows))
    counts = collections.Counter(c["x"] for c in cot.sample(random.Random(2), np.random.default_rng(2), 5000))
    assert chisquare([counts[2 ** i] for i in range(10)]).pvalue > 0.001


def test_alternatives_stay_in_the_table():
    rows = [(1, 2, [0, 1, 2, 3, 4]), (1, 4, [0, 1, 2, 3, 4]), (2, 2, [0, 1, 2, 3, 4]), (1, 2, [1, 0, 2, 3, 4])]
    cot = FeasibleSpace(_space(rows))
    base = {"x": 1, "y": 2, "p": [0, 1, 2, 3, 4], "z": 0}
    assert sorted(cot.alternatives(base, "y")) == [4]
    assert sorted(cot.alternatives(base, "x")) == [2]
    assert cot.alternatives(base, "p") == [[1, 0, 2, 3, 4]]


def test_bo_searches_only_recorded_configurations():
    rows = [r for r in _rows(400, seed=5) if r[1] % 2 == 0]
    value = {(x, y, tuple(p)): abs(np.log2(x) - 7) + y / 1e7 + p.index(0) for x, y, p in rows}
    seen = []

    def objective(cfg):
        key = (cfg["x"], cfg["y"], tuple(cfg["p"]))
        seen.append(key + (cfg["z"],))
        return value[key] + cfg["z"]            # KeyError if BO left the table

    run = tune_function(_space(rows), objective, test_limit=40, technique=["BayesianOptimization"], seed=3)
    assert len(seen) == len(set(seen)) == 40
    assert run.best_at(40) <= sorted(value.values())[len(value) // 10]   # within the best tenth

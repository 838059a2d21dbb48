"""NSGA-II: environmental selection against its definition, learning from others' results, and search
quality against random sampling on a two-objective problem (ZDT1 over floats)."""
import math
import random
import statistics

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tunerlib.parameters import ConfigurationManipulator, FloatParameter
from tunerlib.techniques import Feedback, PureRandom, create_technique
from tunerlib.techniques.nsga2 import NSGA2, Individual, select
from tunerlib.techniques.pareto import crowding_distance, hypervolume, non_dominated_sort


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=20),
       st.integers(1, 12))
def test_selection_keeps_whole_fronts_then_the_most_isolated(points, size):
    pop = [Individual({}, str(i), tuple(map(float, p))) for i, p in enumerate(points)]
    kept = select(list(pop), size)
    assert len(kept) == min(size, len(points))
    fronts = non_dominated_sort(points)
    keys = {ind.key for ind in kept}
    taken = 0
    for front in fronts:
        inside = [str(i) for i in front if str(i) in keys]
        if taken == size:
            assert not inside
            continue
        if taken + len(front) <= size:
            assert len(inside) == len(front)            # a front that fits is kept whole
            taken += len(front)
            continue
        dist = crowding_distance([points[i] for i in front])
        chosen = [d for i, d in zip(front, dist) if str(i) in keys]
        dropped = [d for i, d in zip(front, dist) if str(i) not in keys]
        assert len(chosen) == size - taken and (not dropped or min(chosen) >= max(dropped))
        taken = size
    assert all(ind.rank == 0 for ind in kept if ind.key in {str(i) for i in fronts[0]})


def zdt1(cfg, n=5):
    x = [cfg[f"x{i}"] for i in range(n)]
    g = 1 + 9 * sum(x[1:]) / (n - 1)
    return x[0], g * (1 - math.sqrt(x[0] / g))


def _run(tech, seed, budget=150):
    m = ConfigurationManipulator([FloatParameter(f"x{i}", 0.0, 1.0) for i in range(5)])
    tech.bind(m, random.Random(seed), tech.name)
    points = []
    for _ in range(budget):
        prop = tech.propose()
        vals = zdt1(prop.config)
        points.append(vals)
        tech.observe(Feedback(prop.config, m.hash_config(prop.config), vals[0], "ok", prop.requestor, False,
                              values=vals))
    return hypervolume(points, (1.1, 11.0))


def test_nsga2_beats_random_sampling_on_zdt1():
    nsga = [_run(NSGA2(), s) for s in range(5)]
    rand = [_run(PureRandom(), s) for s in range(5)]
    assert statistics.median(nsga) > statistics.median(rand)
    assert min(nsga) > statistics.median(rand)


def test_others_results_join_the_population_and_failures_do_not():
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0)])
    tech = create_technique(["NSGA2;population_size,4"])
    tech.bind(m, random.Random(0), tech.name)
    for x in [0.1, 0.2, 0.3, 0.4, 0.5]:
        cfg = {"x": x}
        tech.observe(Feedback(cfg, m.hash_config(cfg), x, "ok", "someone-else", False, values=(x, 1 - x)))
    bad = {"x": 0.9}
    tech.observe(Feedback(bad, m.hash_config(bad), math.inf, "error", "someone-else", False,
                          values=(math.inf, math.inf)))
    assert len(tech.population) == 4 and all(np.isfinite(i.values).all() for i in tech.population)
    # the extremes of the (all non-dominated) front survive the cut by crowding
    assert {0.1, 0.5} <= {i.config["x"] for i in tech.population}
    assert tech.propose() is not None                 # breeding from a full population


def test_single_objective_feedback_is_used_as_one_value():
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0)])
    tech = NSGA2(population_size=3)
    tech.bind(m, random.Random(1), "NSGA2")
    for x in (0.4, 0.2, 0.8, 0.6):
        cfg = {"x": x}
        tech.observe(Feedback(cfg, m.hash_config(cfg), x, "ok", "other", False))
    assert sorted(i.config["x"] for i in tech.population) == pytest.approx([0.2, 0.4, 0.6])

"""tools/score.py: the autotuning methodology's score (0 random search, 1 the optimum)."""
import itertools
import math

import numpy as np
import pytest

from tools.score import (Population, best_so_far, cutoff_evaluations, evaluation_budgets,
                                  evaluation_score, expected_random_best, make_population, random_best_over_time,
                                  rank_score, space_score, time_axis, time_score, within, TimeAxis)

#: a tiny recorded space: ties, one failed configuration
VALUES = [3.0, 1.0, None, 2.0, 2.0, 5.0]


def _as_drawn(values):
    """The values a run sees (failed: inf)."""
    return [math.inf if v is None else v for v in values]


def test_closed_form_random_expectation_equals_the_average_over_every_order():
    pop = make_population(VALUES)
    orders = list(itertools.permutations(_as_drawn(VALUES)))
    for k in range(1, len(VALUES) + 1):
        # failed draws do not improve: a prefix without a success counts as the worst recorded value
        brute = np.mean([min(min(o[:k]), pop.worst) for o in orders])
        assert expected_random_best(pop, [k])[0] == pytest.approx(brute)
    assert expected_random_best(pop, [100])[0] == pop.optimum      # more draws than configurations


def test_closed_form_matches_brute_force_on_a_random_table():
    rng = np.random.default_rng(3)
    values = list(rng.integers(1, 20, size=7).astype(float)) + [None]
    pop = make_population(values)
    orders = list(itertools.permutations(_as_drawn(values)))
    for k in (1, 2, 4, 8):
        brute = np.mean([min(min(o[:k]), pop.worst) for o in orders])
        assert expected_random_best(pop, [k])[0] == pytest.approx(brute)


def test_population_counts_failed_and_unmeasured_configurations():
    pop = make_population(VALUES, costs=[1, 2, 3, 4, 5, 6], unmeasured=2)
    assert (pop.size, pop.failed, pop.optimum, pop.worst) == (8, 3, 1.0, 5.0)
    assert (pop.mean_cost, pop.median_cost) == (3.5, 3.5)
    with pytest.raises(ValueError):
        make_population([None, math.inf])


def test_optimum_at_the_first_evaluation_scores_one():
    pop = make_population(VALUES)
    budgets = np.arange(1, 5)
    assert evaluation_score([1.0, 5.0, 3.0], pop, budgets) == pytest.approx(1.0)
    assert rank_score([[1.0, 5.0], [1.0]], pop, budgets) == pytest.approx(1.0)


def test_random_search_scores_zero_on_average_over_every_order():
    pop = make_population(VALUES)
    budgets = np.arange(1, 4)
    scores = [evaluation_score(o, pop, budgets) for o in itertools.permutations(_as_drawn(VALUES))]
    assert np.mean(scores) == pytest.approx(0.0, abs=1e-12)
    assert min(scores) < 0 < max(scores)


def test_worse_than_random_is_negative():
    pop = make_population(VALUES)
    assert evaluation_score([math.inf, 5.0, 3.0], pop, np.arange(1, 4)) < 0


def test_best_so_far_fills_before_the_first_success_and_extends_short_runs():
    got = best_so_far([math.inf, 4.0, math.inf, 2.0], np.array([1, 2, 3, 4, 6]), fill=9.0)
    assert list(got) == [9.0, 4.0, 4.0, 2.0, 2.0]
    assert list(best_so_far([], np.array([1, 2]), fill=9.0)) == [9.0, 9.0]


def test_cutoffs_follow_the_methodology():
    pop = Population(np.arange(1.0, 101.0))    # optimum 1, median 50.5
    # 95 % of the way: target 1 + 49.5 * 0.05 = 3.475 -> worst-first position 97 -> ceil(97 / 4)
    assert cutoff_evaluations(pop, 0.95) == 25
    # 1 %: target 1 + 49.5 * 0.99 = 50.005 -> position 50 -> ceil(50 / 51)
    assert cutoff_evaluations(pop, 0.01) == 1
    # from the start up to the cutoff, exclusive (the methodology's arange)
    assert list(evaluation_budgets(pop, 1000)[[0, -1]]) == [1, 24]
    assert list(evaluation_budgets(pop, 10)[[0, -1]]) == [1, 10]     # capped at the longest run


def test_time_score_uses_the_recorded_seconds():
    pop = make_population([1.0, 2.0, 3.0, 4.0], costs=[1.0, 1.0, 1.0, 1.0])
    budgets = np.arange(1, 4)
    axis = time_axis(pop, budgets, resolution=50)
    assert time_score([1.0, 4.0, 4.0], [1.0, 1.0, 1.0], pop, axis) == pytest.approx(1.0)
    # the same values found slowly score lower than found quickly
    slow = time_score([4.0, 1.0], [1.0, 10.0], pop, axis)
    fast = time_score([4.0, 1.0], [1.0, 0.5], pop, axis)
    assert slow < fast
    with pytest.raises(ValueError):
        time_axis(make_population([1.0, 2.0]), budgets)


#: a small space where the slow configurations also take long to measure (as on the RISE tables)
SLOW_VALUES = [1.0, 1.5, 2.0, 6.0, None, 40.0]
SLOW_COSTS = [0.5, 0.6, 1.0, 3.0, 0.2, 20.0]


def _orders(values, costs):
    """Every order of the space as a run sees it: (values, costs), failed as inf."""
    pairs = list(zip(_as_drawn(values), costs))
    for order in itertools.permutations(pairs):
        yield [v for v, _ in order], [c for _, c in order]


def test_time_baseline_matches_every_order_of_a_small_space():
    pop = make_population(SLOW_VALUES, costs=SLOW_COSTS)
    times = np.array([0.4, 0.55, 1.2, 2.5, 5.0, 30.0])
    exact = []
    for t in times:
        # a run's best at time t: of the draws whose costs have elapsed, the worst value before a success
        bests = []
        for vals, costs in _orders(SLOW_VALUES, SLOW_COSTS):
            done = int(np.searchsorted(np.cumsum(costs), t, side="right"))
            bests.append(min(min(vals[:done], default=math.inf), pop.worst))
        exact.append(np.mean(bests))
    got = random_best_over_time(pop, times, sims=20000)
    assert got == pytest.approx(exact, abs=0.02 * (pop.worst - pop.optimum))


def test_random_search_scores_zero_over_time_when_slow_configurations_cost_more():
    pop = make_population(SLOW_VALUES, costs=SLOW_COSTS)
    times = np.linspace(0.6, 12.0, 40)
    axis = TimeAxis(times, random_best_over_time(pop, times, sims=20000))
    scores = [time_score(v, c, pop, axis) for v, c in _orders(SLOW_VALUES, SLOW_COSTS)]
    assert np.mean(scores) == pytest.approx(0.0, abs=0.05)
    # the methodology's conversion (random search after t seconds = round(t / mean cost) draws, at
    # least one) credits random search with draws a real random run has not finished yet
    draws = np.maximum(np.round(times / pop.mean_cost), 1).astype(int)
    converted = TimeAxis(times, expected_random_best(pop, draws))
    assert np.mean([time_score(v, c, pop, converted) for v, c in _orders(SLOW_VALUES, SLOW_COSTS)]) < -0.5


def test_time_baseline_is_repeatable_and_needs_costs():
    pop = make_population(SLOW_VALUES, costs=SLOW_COSTS)
    times = np.array([1.0, 3.0])
    assert list(random_best_over_time(pop, times)) == list(random_best_over_time(pop, times))
    with pytest.raises(ValueError):
        random_best_over_time(make_population(SLOW_VALUES), times)


def test_space_score_averages_runs_and_reports_the_budget_range():
    pop = make_population([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], costs=[1.0] * 6)
    runs = [[1.0, 2.0, 3.0], [6.0, 5.0, 4.0]]
    s = space_score(runs, pop, 3, costs=[[1.0] * 3, [1.0] * 3])
    budgets = evaluation_budgets(pop, 3)
    assert s.mean == pytest.approx(np.mean([evaluation_score(r, pop, budgets) for r in runs]))
    assert s.budgets == (int(budgets[0]), int(budgets[-1])) and s.runs == 2
    assert s.time_mean is not None and s.rank is not None
    assert space_score(runs, pop, 3).time_mean is None


def test_within_counts_runs_near_the_optimum():
    runs = [[1.04, 9.0], [9.0, 1.06], [1.0]]
    assert within(runs, 1, 1.0, 0.05) == 2
    assert within(runs, 2, 1.0, 0.05) == 2
    assert within(runs, 2, 1.0, 0.10) == 3

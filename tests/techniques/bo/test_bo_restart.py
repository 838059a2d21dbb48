"""BayesianOptimization's restarts after a stall on meaningful gains, and its spread initial design."""
import math
import random

from hypothesis import given, settings, strategies as st

from tunerlib.parameters import ConfigurationManipulator, IntegerParameter, PowerOfTwoParameter
from tunerlib.techniques import Feedback
from tunerlib.techniques.bo import BayesianOptimization
from tunerlib.techniques.bo.design import SpreadDesign
from tunerlib.techniques.bo.distances import SpaceEncoder
from tunerlib.techniques.bo.restart import StallRestart

LIGHT = dict(n_random_samples=200, n_starts=3, hp_samples=10, hp_starts=2, max_local_steps=4)


def feedback(m, cfg, value):
    return Feedback(cfg, m.hash_config(cfg), value, "ok" if math.isfinite(value) else "error", "BO", False)


def test_gains_below_the_threshold_do_not_reset_the_count():
    r = StallRestart(after=4, size=3, min_gain=0.01)
    r.begin()
    r.add(100.0, "ok")
    for k in range(1, 4):
        r.add(100.0 - 0.1 * k, "ok")       # 0.1 % gains each: not meaningful
        assert not r.take()
    r.add(99.6, "ok")                      # the fourth result in a row without a 1 % gain
    assert [r.take() for _ in range(4)] == [True, True, True, False]


def test_a_meaningful_gain_resets_the_count_and_failures_do_not_count():
    r = StallRestart(after=3, size=2, min_gain=0.01)
    r.begin()
    r.add(10.0, "ok")
    r.add(10.0, "ok")
    r.add(math.inf, "error")
    r.add(9.0, "ok")                       # 10 % better: the count starts again
    r.add(9.5, "ok")
    r.add(9.99, "ok")
    assert not r.take()
    r.add(8.95, "ok")                      # 0.6 % better than 9.0: the third result without a gain
    assert r.take() and r.take() and not r.take()


def test_the_wait_grows_with_the_results_counted_at_the_last_gain():
    r = StallRestart(after=3, size=1, min_gain=0.01)
    r.begin()
    for k in range(10):                    # ten results, each 5 % better: the last gain at the 10th
        r.add(100.0 * 0.95 ** k, "ok")
    best = 100.0 * 0.95 ** 9
    for _ in range(9):                     # 9 < 10 results without a gain: no restart yet
        r.add(best, "ok")
        assert not r.take()
    r.add(best, "ok")
    assert r.take()
    for _ in range(19):                    # the next restart waits for as many as counted at this one (20)
        r.add(best, "ok")
        assert not r.take()
    r.add(best, "ok")
    assert r.take()


def test_values_of_both_signs_use_the_spread():
    r = StallRestart(after=2, size=1, min_gain=0.1)
    for v in (-1.0, 1.0):
        r.add(v, "ok")
    assert r.meaningful(-1.0, -1.3) and not r.meaningful(-1.0, -1.1)   # spread 2: a gain of 0.2 needed


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.5, 2.0), min_size=1, max_size=40), st.integers(1, 6), st.integers(1, 4))
def test_a_restart_is_armed_exactly_when_enough_results_bring_no_one_percent_gain(values, after, size):
    r = StallRestart(after=after, size=size, min_gain=0.01)
    r.begin()
    anchor, best, since, n, anchor_at = math.inf, math.inf, 0, 0, 0
    for v in values:
        r.add(v, "ok")
        best, n = min(best, v), n + 1
        if best < anchor * 0.99 or not math.isfinite(anchor):
            anchor, since, anchor_at = best, 0, n
        else:
            since += 1
        armed = since == max(after, anchor_at)
        if armed:
            anchor, since, anchor_at = best, 0, n
        assert (r.due == size) == armed
        while r.take():
            pass


def power_space():
    return ConfigurationManipulator([PowerOfTwoParameter(n, 1, 1024) for n in ("a", "b", "c")])


def test_the_restart_size_and_wait_come_from_the_space():
    m = power_space()
    tech = BayesianOptimization(restart_after=2, **LIGHT)
    tech.bind(m, random.Random(0), "BO")
    assert (tech._restart.after, tech._restart.size) == (8, 4)          # d + 1 = 4
    tech = BayesianOptimization(initial_samples=6, restart_after=2, **LIGHT)
    tech.bind(m, random.Random(0), "BO")
    assert (tech._restart.after, tech._restart.size) == (12, 6)
    tech = BayesianOptimization(**LIGHT)
    tech.bind(m, random.Random(0), "BO")
    assert tech._restart.after == 0 and tech.option_values()["restart_after"] == 0


def test_a_stalled_run_proposes_random_draws_instead_of_model_proposals(monkeypatch):
    m = power_space()
    tech = BayesianOptimization(initial_samples=3, restart_after=2, **LIGHT)
    tech.bind(m, random.Random(1), "BO")
    value = 100.0
    for _ in range(3):                      # the initial design
        tech.observe(feedback(m, tech.propose().config, value))
        value -= 0.01
    model_calls = []
    real = tech._bo_proposal
    monkeypatch.setattr(tech, "_bo_proposal", lambda: model_calls.append(1) or real())
    for _ in range(4):                      # model proposals, each 0.01 % better: the 6th result without a 1 % gain
        tech.observe(feedback(m, tech.propose().config, value))
        value -= 0.01
    assert len(model_calls) == 4
    for _ in range(3):                      # the restart: as many random draws as the design
        tech.observe(feedback(m, tech.propose().config, 200.0))
    assert len(model_calls) == 4
    tech.propose()
    assert len(model_calls) == 5


def test_spread_design_picks_the_candidate_farthest_from_the_points_so_far():
    m = ConfigurationManipulator([IntegerParameter("x", 0, 100), IntegerParameter("y", 0, 100)])
    design = SpreadDesign(SpaceEncoder(m), candidates=3)
    assert design.pick([{"x": 5, "y": 5}, {"x": 90, "y": 90}]) == {"x": 5, "y": 5}   # nothing measured yet
    design.note((0, 0), {"x": 0, "y": 0})
    design.note((100, 100), {"x": 100, "y": 100})
    pool = [{"x": 10, "y": 5}, {"x": 50, "y": 45}, {"x": 95, "y": 100}, {"x": 100, "y": 0}]
    assert design.pick(pool) == {"x": 50, "y": 45}        # the fourth is not among the 3 candidates
    uniform = SpreadDesign(SpaceEncoder(m), candidates=1)
    uniform.note((0, 0), {"x": 0, "y": 0})
    assert uniform.points == [] and uniform.pick(pool) == pool[0]   # no pick reads the points: none kept


def test_design_candidates_spread_the_design_over_the_range():
    m = ConfigurationManipulator([IntegerParameter("x", 0, 1000)])
    spans = {}
    for k in (1, 30):
        widths = []
        for seed in range(10):
            tech = BayesianOptimization(initial_samples=3, design_candidates=k, **LIGHT)
            tech.bind(m, random.Random(seed), "BO")
            xs = sorted(tech.propose().config["x"] for _ in range(3))
            widths.append(min(xs[1] - xs[0], xs[2] - xs[1]))
        spans[k] = sum(widths) / len(widths)
    assert spans[30] > 2 * spans[1]


def test_results_before_the_first_proposal_only_set_the_best():
    m = power_space()
    tech = BayesianOptimization(initial_samples=2, restart_after=1, **LIGHT)
    tech.bind(m, random.Random(2), "Bandit/BO")
    rng = random.Random(3)
    for cfg in {m.hash_config(c): c for c in (m.random(rng) for _ in range(8))}.values():
        tech.observe(feedback(m, cfg, 50.0))   # other arms' results, none better than the first
    assert tech._restart.since == 0 and tech._restart.due == 0
    tech.propose()
    assert tech._fs.fits == 1                  # a model proposal, not a restart's draw


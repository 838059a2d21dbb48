"""Behaviour of the local-search methods: Nelder–Mead and Torczon moves on crafted simplexes and
convergence on a crafted quadratic, pattern-search step halving, the annealing schedule, the
mutation bandit's credit, restarts, repair of infeasible points and the complex-parameter rules.

(Registration and the all-spaces conformance runs are in test_local_search.py.)
"""
import math
import random

import pytest

from tunerlib import tune_function
from tunerlib.parameters import (BooleanParameter, ConfigurationManipulator, EnumParameter, FloatParameter,
                                 IntegerParameter, PermutationParameter)
from tunerlib.techniques import Feedback, Catalogue, register, registry
from tunerlib.techniques import annealing, mutation_bandit, nelder_mead, pattern_search, torczon
from tunerlib.techniques.annealing import PseudoAnnealingSearch, acceptance, cooling_schedule
from tunerlib.techniques.mutation_bandit import AUCBanditMutationTechnique, arm_operators
from tunerlib.techniques.nelder_mead import NelderMead, Vertex, flatness
from tunerlib.techniques.pattern_search import PatternSearch, UnitSpace
from tunerlib.techniques.torczon import Torczon

FRESH = Catalogue()
for _mod in (nelder_mead, torczon, pattern_search, annealing, mutation_bandit):
    _mod.register(FRESH)
for _name in FRESH:
    if _name not in registry():
        register(_name, lambda n=_name: FRESH.create(n), dict(FRESH.describe())[_name])


def unit_square():
    """x, y in [0, 1]: unit values equal the values."""
    return ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), FloatParameter("y", 0.0, 1.0)])


def quadratic_space():
    return ConfigurationManipulator([FloatParameter("x", -2.0, 2.0), FloatParameter("y", -2.0, 2.0)])


def quadratic(c):
    """A tilted elliptic bowl with its minimum 0 at (0.3, -0.7)."""
    dx, dy = c["x"] - 0.3, c["y"] + 0.7
    return dx * dx + 3.0 * dy * dy + dx * dy


def bound(tech, m, seed=0):
    tech.bind(m, random.Random(seed), tech.name)
    return tech


def vertex(x, y, value):
    return Vertex([x, y], {"x": x, "y": y}, value)


def coords(cfgs):
    """Flat list x0, y0, x1, y1, ... of a batch of configurations."""
    return [v for c in cfgs for v in (c["x"], c["y"])]


def approx(*values):
    return pytest.approx(list(values), abs=1e-12)


def simplex():
    """Sorted: best (0.5, 0.5)=1, (0.6, 0.5)=2, worst (0.5, 0.6)=3; centroid of the two best (0.55, 0.5)."""
    return [vertex(0.5, 0.5, 1.0), vertex(0.6, 0.5, 2.0), vertex(0.5, 0.6, 3.0)]


# ---- Nelder–Mead -------------------------------------------------------------------------------
def nm_step(replies):
    """Run one NM step, answering its batches with ``replies``; returns (batches, simplex)."""
    tech, s = bound(NelderMead("NM"), unit_square()), simplex()
    gen, batches = tech.step(s), []
    try:
        batches.append(next(gen))
        for r in replies:
            batches.append(gen.send(r))
    except StopIteration:
        pass
    return batches, s


def test_nm_reflection_accepted():
    batches, s = nm_step([[1.5]])
    assert len(batches) == 1 and coords(batches[0]) == approx(0.6, 0.4)      # c + (c - worst)
    assert s[-1].vec == pytest.approx([0.6, 0.4]) and s[-1].value == 1.5


def test_nm_expansion():
    batches, s = nm_step([[0.5], [0.1]])
    assert coords(batches[1]) == approx(0.65, 0.3)                           # c + 2 (r - c)
    assert s[-1].vec == pytest.approx([0.65, 0.3]) and s[-1].value == 0.1


def test_nm_expansion_rejected_keeps_reflection():
    _, s = nm_step([[0.5], [0.7]])
    assert s[-1].vec == pytest.approx([0.6, 0.4]) and s[-1].value == 0.5


def test_nm_outside_and_inside_contraction():
    batches, s = nm_step([[2.5], [2.4]])                                     # r between 2nd worst and worst
    assert coords(batches[1]) == approx(0.575, 0.45) and s[-1].value == 2.4
    batches, s = nm_step([[4.0], [2.9]])                                     # r worse than the worst
    assert coords(batches[1]) == approx(0.525, 0.55) and s[-1].value == 2.9


def test_nm_shrink_toward_best():
    batches, s = nm_step([[4.0], [3.5], [1.5, 1.6]])
    assert coords(batches[2]) == approx(0.55, 0.5, 0.5, 0.55)
    assert [v.vec for v in s] == [[0.5, 0.5], pytest.approx([0.55, 0.5]), pytest.approx([0.5, 0.55])]


@pytest.mark.parametrize("name", ["RandomNelderMead", "RegularNelderMead", "RightNelderMead",
                                  "RandomTorczon", "RegularTorczon", "RightTorczon"])
def test_simplex_methods_converge_on_crafted_quadratic_within_200(name):
    for seed in range(3):
        run = tune_function(quadratic_space(), quadratic, test_limit=200, technique=[name], seed=seed)
        assert run.best_at(200) < 1e-8, (seed, run.best_at(200))
        best = run.summary.best_configuration
        assert best["x"] == pytest.approx(0.3, abs=1e-3) and best["y"] == pytest.approx(-0.7, abs=1e-3)


# ---- Torczon -----------------------------------------------------------------------------------
def test_torczon_reflection_expansion_contraction():
    tech = bound(Torczon("T"), unit_square())
    s = simplex()
    gen = tech.step(s)
    assert coords(next(gen)) == approx(0.4, 0.5, 0.5, 0.4)                   # x0 + (x0 - xi)
    assert coords(gen.send([0.5, 3.0])) == approx(0.3, 0.5, 0.5, 0.3)        # x0 + 2 (x0 - xi)
    with pytest.raises(StopIteration):
        gen.send([0.2, 4.0])                                                  # expansion wins
    assert [v.vec for v in s] == [pytest.approx([0.3, 0.5]), [0.5, 0.5], pytest.approx([0.5, 0.3])]
    gen = tech.step(s)
    next(gen)
    contracted = gen.send([5.0, 6.0])                                         # no reflected point improves
    assert coords(contracted) == approx(0.4, 0.5, 0.4, 0.4)                  # x0 + (xi - x0) / 2


def test_torczon_keeps_reflection_when_expansion_is_worse():
    tech = bound(Torczon("T"), unit_square())
    s = simplex()
    gen = tech.step(s)
    next(gen)
    gen.send([0.5, 3.0])
    with pytest.raises(StopIteration):
        gen.send([0.9, 4.0])
    assert s[0].vec == pytest.approx([0.4, 0.5]) and s[0].value == 0.5


# ---- pattern search ----------------------------------------------------------------------------
def test_pattern_points_and_borders():
    tech = bound(PatternSearch("P"), unit_square())
    pts = tech.pattern({"x": 0.5, "y": 0.5}, 0.4)
    assert coords(pts) == approx(0.1, 0.5, 0.9, 0.5, 0.5, 0.1, 0.5, 0.9)
    corner = tech.pattern({"x": 0.0, "y": 1.0}, 0.4)                         # no step out of the cube
    assert coords(corner) == approx(0.4, 1.0, 0.0, 0.6)


def test_pattern_search_halves_step_and_converges():
    m = unit_square()
    tech = bound(PatternSearch("P"), m, seed=1)
    best = math.inf
    for _ in range(200):
        p = tech.propose()
        v = (p.config["x"] - 0.3) ** 2 + (p.config["y"] - 0.6) ** 2
        tech.observe(Feedback(p.config, m.hash_config(p.config), v, "ok", "P", v < best))
        best = min(best, v)
    steps = list(tech.step_history)
    assert steps[0] == 0.4
    for a, b in zip(steps, steps[1:]):    # kept after a move, halved otherwise, reset on a restart
        assert b in (a, a / 2) or (b == 0.4 and a / 2 < tech.min_step), (a, b)
    assert 0.4 / 2 ** 20 in steps
    assert best < 1e-6


# ---- pseudo-annealing --------------------------------------------------------------------------
def test_cooling_schedule_and_acceptance():
    sched = cooling_schedule([30, 0])
    assert len(sched) == 101 and sched[0] == 30 and sched[-1] == pytest.approx(0, abs=1e-9)
    assert all(a > b for a, b in zip(sched, sched[1:-1]))
    two = cooling_schedule([10, 5, 0], [5])
    assert two[5] == pytest.approx(5) and len(two) == 106
    assert acceptance(0) == 0 and acceptance(1.0) == pytest.approx(math.exp(-1)) and acceptance(0.05) == 0


@pytest.mark.parametrize("seed", range(3))
def test_annealing_wanders_hot_and_refines_cold(seed):
    """600 evaluations on a 2-D bowl cover one 101-step schedule: a random walk while hot, then
    tiny steps from the global best while frozen."""
    m = unit_square()
    tech = bound(PseudoAnnealingSearch("A"), m, seed=seed)
    best = math.inf
    for _ in range(600):
        p = tech.propose()
        v = (p.config["x"] - 0.7) ** 2 + (p.config["y"] - 0.2) ** 2
        tech.observe(Feedback(p.config, m.hash_config(p.config), v, "ok", "A", v < best))
        best = min(best, v)
    assert best < 1e-2


# ---- mutation bandit ---------------------------------------------------------------------------
def test_arm_operators_per_type():
    assert arm_operators(FloatParameter("f", 0, 1)) == ["op1_randomize", "op1_normal_mutation"]
    assert arm_operators(BooleanParameter("b")) == ["op1_flip"]
    assert arm_operators(EnumParameter("e", [1, 2])) == ["op1_randomize"]
    assert set(arm_operators(PermutationParameter("p", [1, 2, 3]))) == {
        "op1_randomize", "op1_small_random_change", "op2_random_invert", "op2_random_swap"}


def test_mutation_bandit_credits_the_arms_that_find_new_bests():
    m = ConfigurationManipulator([FloatParameter("x", -2, 2)] + [BooleanParameter(f"b{i}") for i in range(5)])
    tech = bound(AUCBanditMutationTechnique("B"), m)
    best = math.inf
    for _ in range(300):
        p = tech.propose()
        v = p.config["x"] ** 2                                                # booleans are irrelevant
        tech.observe(Feedback(p.config, m.hash_config(p.config), v, "ok", "B", v < best))
        best = min(best, v)
    uses = tech.bandit.uses
    float_uses = uses["0:op1_randomize"] + uses["0:op1_normal_mutation"]
    assert float_uses > 0.8 * sum(uses.values()) and tech.bandit.wins["0:op1_normal_mutation"] >= 3
    assert best < 1e-4
    restored = bound(AUCBanditMutationTechnique("B"), m)
    restored.load_state_dict(tech.state_dict())
    assert restored.bandit.uses == uses


# ---- shared machinery --------------------------------------------------------------------------
def test_flatness():
    assert flatness([[0, 0], [1, 0], [0, 1]]) == pytest.approx(1.0)
    assert flatness([[0, 0], [1, 0], [2, 0]]) == 0.0
    assert 0 < flatness([[0, 0], [1, 0], [1, 0.1]]) < 0.2


def test_infeasible_points_are_repaired_toward_the_anchor():
    m = unit_square()
    m.add_constraint("x + y <= 1")
    vec, cfg = UnitSpace(m).feasible([0.9, 0.9], [0.2, 0.2], [{"x": 0.2, "y": 0.2}])
    assert vec == pytest.approx([0.375, 0.375]) and m.is_feasible(cfg)


def test_complex_values_come_from_the_best_vertex_without_mutation():
    m = ConfigurationManipulator([FloatParameter("x", -1, 1), EnumParameter("e", list("abcdef"))])
    tech = bound(NelderMead("NM", initial="right", complex_rate=0.0), m, seed=5)
    seen = set()
    for _ in range(25):
        p = tech.propose()
        seen.add(p.config["e"])
        v = p.config["x"] ** 2
        tech.observe(Feedback(p.config, m.hash_config(p.config), v, "ok", "NM", False))
    assert len(seen) == 1 and tech.restarts == 0


def test_permutation_only_space_falls_back_to_mutating_the_best():
    m = ConfigurationManipulator([PermutationParameter("p", list(range(8)))])
    tech = bound(NelderMead("NM"), m)
    first = tech.propose().config
    tech.observe(Feedback(first, m.hash_config(first), 1.0, "ok", "NM", True))
    for _ in range(20):
        p = tech.propose().config
        assert p != first and sum(a != b for a, b in zip(p, first)) <= 8
        tech.observe(Feedback(p, m.hash_config(p), 2.0, "ok", "NM", False))    # best stays `first`
    assert tech.space.dim == 0 and tech.best_config == first


@pytest.mark.parametrize("cls", [NelderMead, Torczon])
def test_collapsed_integer_simplex_restarts(cls):
    m = ConfigurationManipulator([IntegerParameter("a", 0, 3), IntegerParameter("b", 0, 3)])
    tech = bound(cls("S"), m)
    for _ in range(60):
        p = tech.propose()
        v = (p.config["a"] - 1) ** 2 + (p.config["b"] - 2) ** 2
        tech.observe(Feedback(p.config, m.hash_config(p.config), v, "ok", "S", False))
    assert tech.restarts > 0


def test_multi_nelder_mead_recycles_its_worst_member():
    m, fn = quadratic_space(), quadratic
    tech = bound(FRESH.create("MultiNelderMead"), m)
    best = math.inf
    requestors = set()
    for _ in range(600):
        p = tech.propose()
        requestors.add(p.requestor)
        v = fn(p.config)
        tech.observe(Feedback(p.config, m.hash_config(p.config), v, "ok", p.requestor, v < best))
        best = min(best, v)
    assert all(r.startswith("MultiNelderMead/") and ".R" in r for r in requestors)
    assert len(requestors) > 3                                                # a member was replaced
    assert best < 1e-8

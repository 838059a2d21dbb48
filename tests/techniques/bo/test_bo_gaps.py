"""MultiObjectiveBO's moves between neighbouring front members (``gap_moves``): which pairs are
neighbours, that the largest gaps get the most moves, that every move lies on the path between its
two members, and that the hypervolume proposals' candidates include them on a large space."""
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.techniques import Feedback, create_technique
from tunerlib.techniques.bo.gaps import front_gaps, gap_moves

from kit import light

NAMES = [f"x{i}" for i in range(8)]


def test_two_objective_gaps_pair_consecutive_points_sized_by_their_rectangle():
    front = np.array([[4.0, 1.0], [0.0, 5.0], [1.0, 3.0]])     # unsorted; ranges 4 and 4
    gaps = front_gaps(front)
    sizes = {frozenset((i, j)): s for i, j, s in gaps}
    assert len(gaps) == 2 and set(sizes) == {frozenset((0, 2)), frozenset((1, 2))}
    assert sizes[frozenset((1, 2))] == pytest.approx(0.25 * 0.5)    # (0, 5) -> (1, 3)
    assert sizes[frozenset((0, 2))] == pytest.approx(0.75 * 0.5)    # (1, 3) -> (4, 1)


def test_no_gaps_without_two_distinct_points():
    assert front_gaps(np.zeros((0, 2))) == []
    assert front_gaps(np.array([[1.0, 2.0]])) == []
    assert front_gaps(np.array([[1.0, 2.0], [1.0, 2.0]])) == []


def test_with_three_objectives_each_point_is_paired_with_its_nearest():
    front = np.array([[0.0, 0.0, 1.0], [0.1, 0.1, 0.9], [1.0, 1.0, 0.0]])
    pairs = {frozenset((i, j)) for i, j, _ in front_gaps(front)}
    assert pairs == {frozenset((0, 1)), frozenset((1, 2))}


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_every_move_takes_each_parameter_from_one_of_its_two_neighbours(seed):
    rng = random.Random(seed)
    configs = [{n: rng.randrange(4) for n in NAMES} for _ in range(4)]
    points = np.array([[i, 3.0 - i] for i in range(4)], dtype=float)
    gaps = front_gaps(points)
    for move in gap_moves(configs, gaps, NAMES, random.Random(seed), lambda c: True, count=30):
        between = [(configs[i], configs[j]) for i, j, _ in gaps
                   if all(move[n] in (configs[i][n], configs[j][n]) for n in NAMES)]
        assert between
        assert all(move != a and move != b for a, b in between)


def test_the_largest_gap_gets_the_most_moves_and_moves_are_feasible():
    configs = [{n: k for n in NAMES} for k in range(3)]           # members differ in every parameter
    points = np.array([[0.0, 10.0], [1.0, 9.0], [10.0, 0.0]])     # gap (1, 2) is 81 times gap (0, 1)
    keep = lambda c: c["x0"] != 2 or c["x1"] != 2                # noqa: E731
    moves = gap_moves(configs, front_gaps(points), NAMES, random.Random(0), keep, count=400)
    assert moves and all(keep(m) for m in moves)
    pair = Counter(1 if set(m.values()) <= {1, 2} else 0 for m in moves)
    assert pair[1] > 10 * pair[0] > 0


def test_members_differing_in_one_parameter_have_no_moves_between_them():
    configs = [{n: 0 for n in NAMES}, dict({n: 0 for n in NAMES}, x3=1)]
    assert gap_moves(configs, front_gaps(np.array([[0.0, 1.0], [1.0, 0.0]])), NAMES, random.Random(0),
                     lambda c: True) == []


def pipeline(cfg):
    """(latency, resources) of six stages: each stage's time falls and its resources grow with its
    parallelism."""
    xs = [cfg[f"x{i}"] for i in range(6)]
    return sum(8.0 / (1 + x) for x in xs), float(sum(x * x for x in xs))


@pytest.mark.parametrize("gaps", [True, False])
def test_hypervolume_proposals_on_a_large_space_include_moves_between_front_neighbours(monkeypatch, gaps):
    """With ``gap_moves`` (the default) the local search's extra candidates of a hypervolume proposal
    include moves between neighbouring members of the observed front; without it (and without the
    other extra candidates) there are none."""
    from tunerlib.techniques.bo.acquisition import LocalSearch

    extras = []
    original = LocalSearch.run

    def spy(self, acq, *args, **kwargs):
        if type(acq).__name__ == "HypervolumeAcquisition":
            extras.append(kwargs.get("extra"))
        return original(self, acq, *args, **kwargs)

    monkeypatch.setattr(LocalSearch, "run", spy)
    m = ConfigurationManipulator([IntegerParameter(f"x{i}", 0, 7) for i in range(6)])
    tech = create_technique([light("MultiObjectiveBO;initial_samples,8;extreme_every,0;recombine,false;"
                                   f"front_moves,false;gap_moves,{str(gaps).lower()}")])
    tech.bind(m, random.Random(0), tech.name)
    seen = set()
    while not extras:
        front = [c for c, v in zip(tech._vector_configs, tech._vectors)
                 if not any(all(a <= b for a, b in zip(w, v)) and w != v for w in tech._vectors)]
        prop = tech.propose()
        key = m.hash_config(prop.config)
        values = pipeline(prop.config)
        tech.observe(Feedback(prop.config, key, values[0], "ok", prop.requestor, key not in seen, key in seen,
                              values=values))
        seen.add(key)
    if not gaps:
        assert extras[0] is None
        return
    moves = extras[0]()
    names = [f"x{i}" for i in range(6)]
    assert len(moves) > 100
    assert all(any(all(mv[n] in (a[n], b[n]) for n in names) for a in front for b in front if a != b)
               for mv in moves)


@pytest.mark.parametrize("dimension, option, expected", [(30, "", 20), (6, "", 7), (30, ";initial_samples,31", 31)])
def test_the_initial_design_of_a_large_space_is_capped(dimension, option, expected):
    """MultiObjectiveBO's initial design is d + 1 random designs up to 20 (unless ``initial_samples``
    is set): its first 20 proposals on 30 parameters are design points, the 21st a model's."""
    m = ConfigurationManipulator([IntegerParameter(f"x{i}", 0, 7) for i in range(dimension)])
    tech = create_technique([f"MultiObjectiveBO{option}"])
    tech.bind(m, random.Random(0), tech.name)
    assert tech.n_initial == expected
    single = create_technique(["BayesianOptimization"])
    single.bind(m, random.Random(0), single.name)
    assert single.n_initial == dimension + 1       # single-objective BO keeps d + 1


def test_a_capped_design_hands_over_to_the_model_after_twenty_results(monkeypatch):
    from tunerlib.techniques.bo import multiobjective

    called = []
    monkeypatch.setattr(multiobjective.MultiObjectiveBO, "_bo_proposal",
                        lambda self: called.append(len(self._vectors)) or None)
    m = ConfigurationManipulator([IntegerParameter(f"x{i}", 0, 7) for i in range(30)])
    tech = create_technique([light("MultiObjectiveBO")])
    tech.bind(m, random.Random(0), tech.name)
    while not called:
        prop = tech.propose()
        if prop is None:
            break
        key = m.hash_config(prop.config)
        values = (float(sum(prop.config.values())), float(-sum(prop.config.values())))
        tech.observe(Feedback(prop.config, key, values[0], "ok", prop.requestor, True, False, values=values))
    assert called[0] == 20

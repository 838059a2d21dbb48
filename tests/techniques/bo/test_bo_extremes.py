"""MultiObjectiveBO's proposals aimed at one objective's extreme (``extreme_every``): their schedule, and
that they extend a front whose fast extreme takes every parameter changed together and lies far beyond
the resources of the rest of the front, which the expected hypervolume improvement alone does not
reach within the same budget."""
import json
import random
import statistics

import pytest

from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.techniques import Feedback, create_technique
from tunerlib.techniques.bo.extremes import ExtremeTurns, extreme_objective

from kit import light

WIDTH, TOP = 6, 7


def test_every_nth_proposal_aims_at_the_objectives_in_turn():
    aims = [extreme_objective(turn, 3, 2) for turn in range(12)]
    assert aims == [None, None, 0, None, None, 1, None, None, 0, None, None, 1]
    assert [extreme_objective(turn, 2, 3) for turn in range(6)] == [None, 0, None, 1, None, 2]


@pytest.mark.parametrize("every, objectives", [(0, 2), (3, 1)])
def test_no_extreme_turns_when_disabled_or_single_objective(every, objectives):
    assert all(extreme_objective(turn, every, objectives) is None for turn in range(20))


def test_an_objective_whose_extreme_proposals_keep_missing_gets_no_more():
    turns = ExtremeTurns(every=1, patience=2)
    assert turns.aim(2) == 0
    turns.proposed("a", 0)
    turns.observed("a", (5.0, 9.0), (4.0, 1.0))        # no better than the best latency: a miss
    assert turns.aim(2) == 1
    turns.proposed("b", 1)
    turns.observed("b", (9.0, 0.5), (4.0, 1.0))        # a gain for the second objective
    assert turns.aim(2) == 0
    turns.proposed("c", 0)
    turns.observed("c", None, (4.0, 0.5))              # a failed design: a second miss in a row
    assert turns.aim(2) == 1                            # objective 1 keeps its turns
    turns.observed("unrelated", (1.0, 1.0), (4.0, 0.5))   # not an extreme proposal: counts for nothing
    assert turns.aim(2) is None                         # objective 0's turn goes to the EHVI
    assert turns.aim(2) == 1


def test_a_gain_resets_the_misses():
    turns = ExtremeTurns(every=1, patience=2)
    for key, vec in (("a", (5.0, 1.0)), ("b", (3.0, 1.0)), ("c", (6.0, 1.0))):
        assert turns.aim(2) == 0
        turns.proposed(key, 0)
        turns.observed(key, vec, (4.0, 1.0))        # a miss, a gain, a miss: never two in a row
        turns.aim(2)                                # objective 1's turn
    assert turns.aim(2) == 0


def pipeline(cfg):
    """(latency, resources) of a pipeline of WIDTH stages: each stage's time falls and its resources
    grow with its parallelism, so the fastest design has every parameter at its top and uses far more
    resources than the rest of the front."""
    xs = [cfg[f"x{i}"] for i in range(WIDTH)]
    return sum(8.0 / (1 + x) for x in xs), float(sum(x * x for x in xs))


def measure_one(tech, m, seen):
    """One proposal of ``tech`` measured on :func:`pipeline` and observed; returns its (latency, resources)."""
    prop = tech.propose()
    assert prop is not None
    key = m.hash_config(prop.config)
    values = pipeline(prop.config)
    tech.observe(Feedback(prop.config, key, values[0], "ok", prop.requestor, key not in seen, key in seen,
                          values=values))
    seen.add(key)
    return values


def fastest_found(name, seed, budget=36):
    m = ConfigurationManipulator([IntegerParameter(f"x{i}", 0, TOP) for i in range(WIDTH)])
    tech = create_technique([name])
    tech.bind(m, random.Random(seed), tech.name)
    seen, best = set(), float("inf")
    while len(seen) < budget:
        best = min(best, measure_one(tech, m, seen)[0])
    return best


def test_extreme_turns_reach_the_fast_end_of_the_front():
    # the fastest design (every stage at TOP) has latency 6; over seeds 0-3 the EHVI alone
    # (extreme_every 0) ends at 13.6, 8.3, 8.2 and 8.9 (median 8.6)
    assert statistics.median(fastest_found(light("MultiObjectiveBO"), seed) for seed in range(4)) <= 7.5


def test_a_resumed_technique_continues_the_extreme_turns_where_it_stopped():
    """The schedule's position and the misses in a row are part of the saved state, so a resumed run
    aims its next proposal as the uninterrupted one would."""
    m = ConfigurationManipulator([IntegerParameter(f"x{i}", 0, TOP) for i in range(WIDTH)])
    name = light("MultiObjectiveBO;extreme_every,2;extreme_patience,1")
    tech = create_technique([name])
    tech.bind(m, random.Random(0), tech.name)
    seen = set()
    for _ in range(14):
        measure_one(tech, m, seen)
    saved = tech._extremes
    assert saved.turn > 0
    resumed = create_technique([name])
    resumed.bind(m, random.Random(1), resumed.name)
    resumed.load_state_dict(json.loads(json.dumps(tech.state_dict())))
    assert (resumed._extremes.turn, resumed._extremes.misses) == (saved.turn, saved.misses)
    assert [resumed._extremes.aim(2) for _ in range(6)] == [saved.aim(2) for _ in range(6)]


@pytest.mark.parametrize("copula", [False, True])
def test_extreme_turns_model_their_objective_with_single_objective_transforms(monkeypatch, copula):
    """With ``extreme_copula`` false an extreme turn's expected improvement is taken under a GP of that
    objective fitted with BO's power transforms (the copula's ranks say nothing of how far a design
    would beat the best); with it (the default) under the EHVI's copula GP."""
    import numpy as np
    from tunerlib.techniques.bo import multiobjective

    captured = []
    original = multiobjective.extreme_acquisition

    def spy(objective, gps, train, y, *rest):
        captured.append((objective, y[:, objective].copy()))
        return original(objective, gps, train, y, *rest)

    monkeypatch.setattr(multiobjective, "extreme_acquisition", spy)
    m = ConfigurationManipulator([IntegerParameter(f"x{i}", 0, TOP) for i in range(WIDTH)])
    tech = create_technique([light(f"MultiObjectiveBO;extreme_every,1;initial_samples,8;"
                                   f"extreme_copula,{str(copula).lower()}")])
    tech.bind(m, random.Random(0), tech.name)
    seen = set()
    while not captured:
        measure_one(tech, m, seen)
    objective, column = captured[0]
    copula_column = tech._fitted[1][2][:, objective]
    assert np.array_equal(np.argsort(column, kind="stable"), np.argsort(copula_column, kind="stable"))
    assert np.allclose(column, copula_column) == copula

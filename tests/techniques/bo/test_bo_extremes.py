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
from tunerlib.techniques.bo.extremes import START_RADIUS, ExtremeTurns, extreme_objective, perturbations

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


NAMES = [f"x{i}" for i in range(WIDTH)]


def test_trust_region_moves_change_up_to_the_radius_of_parameters_to_a_donors_values():
    rng = random.Random(0)
    centres = [{n: rng.randrange(100) for n in NAMES} for _ in range(3)]
    donors = [{n: 1000 + rng.randrange(100) for n in NAMES} for _ in range(5)]
    moves = perturbations(centres, donors, NAMES, 0.5, random.Random(1), lambda c: True, count=200)
    assert moves
    changed = []
    for move in moves:
        centre = next(c for c in centres if all(move[n] == c[n] or move[n] >= 1000 for n in NAMES))
        differ = [n for n in NAMES if move[n] != centre[n]]
        assert 1 <= len(differ) <= 3                      # 0.5 x 6 parameters
        assert any(all(move[n] == d[n] for n in differ) for d in donors)
        changed.append(len(differ))
    assert set(changed) == {1, 2, 3}
    assert sum(all(m[n] == centres[0][n] or m[n] >= 1000 for n in NAMES) for m in moves) > len(moves) / 2


def test_trust_region_moves_are_feasible_and_need_centres_and_donors():
    rng = random.Random(0)
    centres = [{n: rng.randrange(100) for n in NAMES}]
    donors = [{n: rng.randrange(100) for n in NAMES}]
    keep = lambda c: c["x0"] == centres[0]["x0"]   # noqa: E731
    moves = perturbations(centres, donors, NAMES, 1.0, random.Random(2), keep)
    assert moves and all(keep(m) for m in moves)
    assert perturbations([], donors, NAMES, 1.0, random.Random(2), keep) == []
    assert perturbations(centres, [], NAMES, 1.0, random.Random(2), keep) == []


def test_the_trust_region_doubles_after_a_gain_and_halves_after_a_miss_and_is_saved():
    turns = ExtremeTurns(every=1, patience=0)
    assert turns.radius_of(0) == START_RADIUS
    for key, vec, radius in (("a", (3.0, 1.0), 2 * START_RADIUS), ("b", (5.0, 1.0), START_RADIUS),
                             ("c", None, START_RADIUS / 2)):
        turns.proposed(key, 0)
        turns.observed(key, vec, (4.0, 1.0))
        assert turns.radius_of(0) == radius
    for key in "defg":
        turns.proposed(key, 1)
        turns.observed(key, (1.0, 0.5), (4.0, 0.1 if key == "g" else 1.0))
    assert turns.radius_of(1) == 0.5                     # three gains (capped at every parameter), a miss
    restored = ExtremeTurns(every=1, patience=0)
    restored.load_state(json.loads(json.dumps(turns.to_state())))
    assert (restored.radius_of(0), restored.radius_of(1)) == (START_RADIUS / 2, 0.5)


def test_with_trust_region_moves_misses_end_the_turns_only_once_the_radius_is_one_parameter():
    turns = ExtremeTurns(every=1, patience=2)
    plain = ExtremeTurns(every=1, patience=2)
    for n, key in enumerate("abcd"):
        for t in (turns, plain):
            t.proposed(key, 0)
            t.observed(key, (5.0, 1.0), (4.0, 1.0))   # misses: 0.25 -> 0.125 -> ... of the parameters
            t.turn = 0                                # the next proposal is objective 0's turn again
        # 40 parameters: the radius spans 5, 2.5, 1.25, 0.6 of them after 1, 2, 3, 4 misses
        assert turns.aim(2, dimension=40) == (0 if n < 3 else None)
        plain.turn = 0
        assert plain.aim(2) == (0 if n < 1 else None)     # without moves: patience alone


def test_an_extreme_turn_on_a_large_space_searches_only_around_the_objectives_best(monkeypatch):
    """On a space too large to be scored whole, an extreme turn's local search starts from its
    trust-region moves and recombinants (and the configurations best in the objective), not from
    random draws of the whole space; with ``extreme_moves`` false, from random draws as a
    hypervolume proposal does."""
    from tunerlib.techniques.bo.acquisition import LocalSearch

    calls = []
    original = LocalSearch.run

    def spy(self, acq, *args, **kwargs):
        calls.append((type(acq).__name__, kwargs.get("random_pool", True), kwargs.get("extra")))
        return original(self, acq, *args, **kwargs)

    monkeypatch.setattr(LocalSearch, "run", spy)
    m = ConfigurationManipulator([IntegerParameter(f"x{i}", 0, TOP) for i in range(WIDTH)])
    for moves in (True, False):
        calls.clear()
        tech = create_technique([light(f"MultiObjectiveBO;extreme_every,2;initial_samples,8;"
                                       f"extreme_moves,{str(moves).lower()}")])
        tech.bind(m, random.Random(0), tech.name)
        seen = set()
        while not any(kind == "Acquisition" for kind, _, _ in calls):
            known = list(tech._vector_configs)       # the designs measured when the proposal is made
            measure_one(tech, m, seen)
        kind, pool, extra = next(c for c in calls if c[0] == "Acquisition")
        assert pool is not moves
        if moves:   # half of the 256 moves are around the fastest design, at most round(1.5) parameters away
            best = min(known, key=lambda c: pipeline(c)[0])
            assert sum(sum(c[n] != best[n] for n in c) <= 2 for c in extra()) >= 100


def test_with_trust_region_moves_a_gain_earns_the_objective_the_next_proposal_too():
    """On a large space (``dimension`` given) an extreme proposal that improved its objective is
    followed by another for that objective, outside the schedule; a miss ends the streak. Without
    ``dimension`` (a space scored whole) the schedule alone decides."""
    turns, plain = ExtremeTurns(every=4, patience=2), ExtremeTurns(every=4, patience=2)
    assert [turns.aim(2, dimension=40) for _ in range(4)] == [None, None, None, 0]
    assert [plain.aim(2) for _ in range(4)] == [None, None, None, 0]
    for t in (turns, plain):
        t.proposed("a", 0)
        t.observed("a", (3.0, 1.0), (4.0, 1.0))          # a gain
    assert turns.aim(2, dimension=40) == 0              # the streak continues
    assert plain.aim(2) is None                         # the schedule: an EHVI proposal
    turns.proposed("b", 0)
    turns.observed("b", (3.5, 1.0), (3.0, 1.0))          # a miss ends it
    assert [turns.aim(2, dimension=40) for _ in range(4)] == [None, None, None, 1]
    turns.proposed("c", 1)
    turns.observed("c", (9.0, 0.5), (3.0, 1.0))
    restored = ExtremeTurns(every=4, patience=2)
    restored.load_state(json.loads(json.dumps(turns.to_state())))
    assert restored.aim(2, dimension=40) == turns.aim(2, dimension=40) == 1


def test_without_extreme_streak_a_gain_earns_nothing_outside_the_schedule():
    turns = ExtremeTurns(every=4, patience=2, follow_gains=False)
    assert [turns.aim(2, dimension=40) for _ in range(4)] == [None, None, None, 0]
    turns.proposed("a", 0)
    turns.observed("a", (3.0, 1.0), (4.0, 1.0))
    assert turns.aim(2, dimension=40) is None
    assert create_technique(["MultiObjectiveBO;extreme_streak,false"]) is not None

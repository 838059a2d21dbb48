"""BayesianOptimization's stratified initial design (``design_strata``, techniques/bo/strata.py)."""
import random

import pytest

from tunerlib.parameters import (ConfigurationManipulator, EnumParameter, IntegerParameter, PermutationParameter,
                                 PowerOfTwoParameter)
from tunerlib.techniques import TechniqueError, create_technique, technique_name
from tunerlib.techniques.bo import BayesianOptimization
from tunerlib.techniques.bo.distances import SpaceEncoder
from tunerlib.techniques.bo.strata import StrataDesign

LIGHT = dict(n_random_samples=200, n_starts=3, hp_samples=10, hp_starts=2, max_local_steps=4)


def pow2_space():
    return ConfigurationManipulator([PowerOfTwoParameter(n, 1, 1024) for n in ("a", "b", "c", "d")])


def design(m, seed, size, **options):
    tech = BayesianOptimization(initial_samples=size, **LIGHT, **options)
    tech.bind(m, random.Random(seed), "BO")
    return [tech.propose().config for _ in range(size)]


def strata_covered(m, configs, size):
    """Distinct (parameter, stratum) cells the configurations occupy, strata of the unit range."""
    cells = set()
    for p in m.parameters:
        for c in configs:
            cells.add((p.name, min(int(p.get_unit_value({p.name: c[p.name]}) * size), size - 1)))
    return len(cells)


def test_a_stratified_design_covers_more_strata_than_the_uniform_one():
    m = pow2_space()
    uniform = sum(strata_covered(m, design(m, seed, 5), 5) for seed in range(10))
    strata = sum(strata_covered(m, design(m, seed, 5, design_strata=True), 5) for seed in range(10))
    assert strata > uniform + 20         # 4 parameters x 5 strata x 10 seeds: at most 200 cells
    assert strata >= 170


def test_the_pick_fills_empty_strata_and_levels_and_ties_go_to_the_earlier_draw():
    m = ConfigurationManipulator([IntegerParameter("x", 0, 99), EnumParameter("e", ["p", "q", "r"])])
    s = StrataDesign(SpaceEncoder(m), strata=4, pool=1, active=True)
    assert s.pool == 16
    pool = [{"x": 10, "e": "p"}, {"x": 60, "e": "q"}]
    assert s.pick(pool) == pool[0]                       # nothing noted: every candidate scores 2
    s.note({"x": 5, "e": "p"})
    s.note({"x": 30, "e": "q"})                          # strata 0 and 1 of x, levels p and q
    pool = [{"x": 20, "e": "p"}, {"x": 45, "e": "r"}, {"x": 55, "e": "r"}, {"x": 90, "e": "q"}]
    assert list(s.scores(pool)) == [0, 1, 2, 1]
    assert s.pick(pool) == {"x": 55, "e": "r"}
    assert s.pick(pool[:2] + pool[3:]) == pool[1]         # tied at 1: the earlier draw
    assert s.pick([]) is None


def test_inactive_design_keeps_nothing():
    m = pow2_space()
    s = StrataDesign(SpaceEncoder(m), strata=5, pool=1, active=False)
    s.note({"a": 1, "b": 1, "c": 1, "d": 1})
    assert all(not seen for seen in s._units)


def test_with_nothing_to_score_the_design_is_the_uniform_one():
    m = ConfigurationManipulator([PermutationParameter("p", list(range(6)))])
    assert design(m, 4, 6, design_strata=True) == design(m, 4, 6)


def test_the_design_is_deterministic_and_respects_known_constraints():
    m = pow2_space()
    m.add_constraint("a * b <= 1024")
    m.add_constraint("c >= d")
    first = design(m, 7, 8, design_strata=True)
    assert first == design(m, 7, 8, design_strata=True)
    assert all(c["a"] * c["b"] <= 1024 and c["c"] >= c["d"] for c in first)
    assert len({tuple(sorted(c.items())) for c in first}) == 8


def test_the_option_round_trips_through_the_name_and_is_checked():
    tech = create_technique(["BayesianOptimization;design_strata,true"])
    assert tech.options.design_strata is True
    assert technique_name(tech) == "BayesianOptimization;design_strata,true"
    assert create_technique(["BayesianOptimization"]).options.design_strata is False
    with pytest.raises(TechniqueError):
        create_technique(["BayesianOptimization;design_strata,maybe"])


def test_multiobjective_bo_uses_the_same_design():
    mobo = create_technique(["MultiObjectiveBO;design_strata,true;initial_samples,5"])
    assert mobo.options.design_strata is True
    m = pow2_space()
    mobo.bind(m, random.Random(3), "MOBO")
    configs = [mobo.propose().config for _ in range(5)]
    assert configs == design(m, 3, 5, design_strata=True)

"""Tests for the feasible-space service (tunerlib.parameters.feasible) and the per-kind hooks it
relies on: ``Parameter.domain``, ``sample_values`` and ``neighbours``."""
import itertools
import math
import random
from typing import Any, Dict, List

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib import tune_function
from tunerlib.parameters import (BooleanArray, BooleanParameter, ComplexParameter, ConfigurationError,
                                 ConfigurationManipulator, EnumParameter, FeasibleSpace, FloatArray,
                                 FloatParameter, IntegerArray, IntegerParameter, LogFloatParameter,
                                 LogIntegerParameter, OrdinalParameter, Parameter, ParameterError,
                                 PermutationParameter, PowerOfTwoParameter, ScheduleParameter,
                                 SelectorParameter, SwitchParameter, parameter_from_json)
from tunerlib.parameters.value_keys import value_key
from tunerlib.parameters.trees import RejectionGroup, TreeGroup

SETTINGS = settings(max_examples=60, deadline=None)


def every_kind() -> List[Parameter]:
    return [IntegerParameter("i", -3, 9), LogIntegerParameter("li", 1, 300), PowerOfTwoParameter("p2", 2, 512),
            FloatParameter("f", 0.5, 4.0), FloatParameter("fc", 2.0, 2.0), LogFloatParameter("lf", 1e-3, 1.0),
            BooleanParameter("b"), SwitchParameter("sw", 5), EnumParameter("e", ["x", 1, True, 2.5]),
            OrdinalParameter("o", [1, 2, 4, 8, 16]), PermutationParameter("p", [0, 1, 2, 3]),
            ScheduleParameter("s", ["a", "b", "c", "d"], deps={"b": ["a"]}), BooleanArray("ba", 3),
            IntegerArray("ia", 2, 0, 3), FloatArray("fa", 2, 0.0, 1.0), SelectorParameter("sel", ["u", "v"], 50)]


KINDS = {p.name: p for p in every_kind()}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_domain_of_every_kind_round_trips(name):
    """A listed domain holds distinct legal values, one per counted value, that survive
    normalisation and a JSON round trip of the parameter; unlisted kinds are infinite or not listable."""
    p = KINDS[name]
    dom = p.domain()
    if dom is None:
        assert name in ("f", "lf", "fa", "sel")
        return
    assert len(dom) == p.search_space_size()
    assert len({value_key(v) for v in dom}) == len(dom)
    assert all(p.is_valid(v) and p.normalize_value(v) == v for v in dom)
    assert parameter_from_json(p.to_json()).domain() == dom
    assert p.domain(limit=len(dom) - 1) is None if len(dom) > 1 else True


@SETTINGS
@given(lo=st.integers(-50, 50), width=st.integers(0, 60), limit=st.integers(1, 100))
def test_integer_domain_is_the_range_or_none_over_the_limit(lo, width, limit):
    p = IntegerParameter("x", lo, lo + width)
    assert p.domain(limit) == (list(range(lo, lo + width + 1)) if width + 1 <= limit else None)


@SETTINGS
@given(name=st.sampled_from(sorted(KINDS)), seed=st.integers(0, 10 ** 6), k=st.integers(1, 12))
def test_neighbours_and_samples_are_legal_values(name, seed, k):
    p = KINDS[name]
    rng = random.Random(seed)
    value = p.random_value(rng)
    assert all(p.is_valid(v) for v in p.neighbours(value, rng, k))
    samples = p.sample_values(rng, np.random.default_rng(seed), 7)
    assert len(samples) == 7 and all(p.is_valid(v) for v in samples)


def test_ordered_kinds_step_to_the_next_values():
    p = IntegerParameter("x", 0, 100)
    assert p.neighbours(50, random.Random(0), 4) == [48, 49, 51, 52]
    assert OrdinalParameter("o", [1, 2, 4, 8]).neighbours(2, random.Random(0), 5) == [1, 4, 8]
    assert BooleanParameter("b").neighbours(True, random.Random(0), 5) == [False]
    assert IntegerParameter("x", 0, 100).order_positions()[7] == 7
    assert EnumParameter("e", ["a", "b"]).order_positions() is None


# ---- small constrained spaces: count == enumeration == brute force -------------------------------
POOL = ["a % b == 0", "a + c <= 6", "b != c", "index(p, 0) != 2 or f", "f or e == 'y'",
        "a * b <= 8", "c >= a"]


def small_space(constraints) -> ConfigurationManipulator:
    m = ConfigurationManipulator([IntegerParameter("a", 1, 5), PowerOfTwoParameter("b", 1, 8),
                                  OrdinalParameter("c", [1, 3, 5]), BooleanParameter("f"),
                                  EnumParameter("e", ["x", "y"]), PermutationParameter("p", [0, 1, 2])])
    for c in constraints:
        m.add_constraint(c)
    return m


def brute_force(m: ConfigurationManipulator) -> List[Dict[str, Any]]:
    names = m.names
    doms = [m.parameter(n).domain() for n in names]
    cfgs = [dict(zip(names, combo)) for combo in itertools.product(*doms)]
    return [c for c in cfgs if m.is_feasible(c)]


@SETTINGS
@given(chosen=st.lists(st.sampled_from(POOL), unique=True, max_size=4))
def test_count_equals_enumeration_and_brute_force(chosen):
    m = small_space(chosen)
    space = FeasibleSpace(m)
    every = brute_force(m)
    listed = space.enumerate_all(100_000)
    assert space.count() == len(every) == len(listed) == space.size()
    assert sorted(map(repr, listed)) == sorted(map(repr, every))
    assert all(space.is_feasible(c) for c in listed)
    if every:
        assert all(m.is_feasible(c) for c in space.sample(random.Random(1), np.random.default_rng(1), 50))
        assert m.is_feasible(space.random_config(random.Random(2)))


def test_count_gives_up_over_the_node_budget_or_on_a_continuous_parameter():
    m = small_space(["a % b == 0"])
    assert FeasibleSpace(m).count(max_nodes=3) is None
    cont = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0)])
    assert FeasibleSpace(cont).count() is None


def test_trees_are_built_on_first_use_only():
    m = small_space(["a % b == 0"])
    space = FeasibleSpace(m)
    assert space._group_of is None
    space.count()
    space.random_config(random.Random(0))
    assert space._group_of is None
    assert isinstance(space.group_of["a"], TreeGroup) and [p.name for p in space.free][:2] == ["c", "f"]


def test_random_config_reports_an_unsatisfiable_group():
    m = ConfigurationManipulator([IntegerParameter("a", 1, 3)])
    m.add_constraint("a > 5")
    with pytest.raises(ConfigurationError, match="no feasible configuration"):
        FeasibleSpace(m).random_config(random.Random(0), max_tries=20)


# ---- a new parameter kind, defined in this one place ----------------------------------------------
class Colour(ComplexParameter):
    """A toy kind: one of a few colour names.  It lists its values (``_domain``) and declares a
    categorical distance (``encoding``); nothing else in tunerlib knows about it."""

    kind = "toy_colour"
    encoding = "category"

    def __init__(self, name: str, colours=("red", "green", "blue", "black")) -> None:
        super().__init__(name)
        self.colours = list(colours)

    def seed_value(self) -> str:
        return self.colours[0]

    def random_value(self, rng: random.Random) -> str:
        return rng.choice(self.colours)

    def is_valid(self, value: Any) -> bool:
        return value in self.colours

    def normalize_value(self, value: Any) -> str:
        if value not in self.colours:
            raise ParameterError(f"parameter {self.name!r}: {value!r} is not a colour")
        return value

    def search_space_size(self) -> int:
        return len(self.colours)

    def to_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "colours": self.colours}

    def _domain(self, limit: int) -> List[str]:
        return list(self.colours)


# kept out of the global kind registry, so that other tests' lists of kinds stay as they are
Parameter._kinds.pop(Colour.kind, None)


def colour_space() -> ConfigurationManipulator:
    m = ConfigurationManipulator([Colour("c"), IntegerParameter("n", 1, 6), Colour("d")])
    m.add_constraint(lambda cfg: cfg["c"] != "black" or cfg["n"] <= 2, reads=["c", "n"], name="dark small")
    return m


def test_a_new_kind_is_enumerated_counted_and_sampled():
    m = colour_space()
    space = FeasibleSpace(m)
    assert isinstance(space.group_of["c"], TreeGroup) and not space.rejection
    assert space.count() == space.size() == (3 * 6 + 2) * 4 == len(space.enumerate_all(1000))
    samples = space.sample(random.Random(0), np.random.default_rng(0), 200)
    assert all(m.is_feasible(s) for s in samples) and {s["d"] for s in samples} == set(Colour("d").colours)
    assert sorted(space.alternatives({"c": "black", "n": 2, "d": "red"}, "c")) == ["blue", "green", "red"]
    assert len(Colour("d").neighbours("red", random.Random(0), 10)) == 4


def test_a_new_kind_gets_bo_distances_features_and_neighbours():
    from tunerlib.techniques.bo.distances import ConfigKey, SpaceEncoder
    from tunerlib.techniques.bo.feasibility import FeatureEncoder
    from tunerlib.techniques.bo.neighbours import NeighbourGenerator
    m = colour_space()
    configs = [{"c": "red", "n": 3, "d": "blue"}, {"c": "black", "n": 1, "d": "blue"}]
    enc = SpaceEncoder(m)
    d = enc.sqdists(enc.encode(configs), enc.encode(configs))
    assert d.shape == (3, 2, 2) and d[0, 0, 1] == 1.0 and d[2, 0, 1] == 0.0
    assert FeatureEncoder(m).features(configs).shape == (2, 4 + 1 + 4)
    assert ConfigKey(m)(configs[0]) == ("red", 3, "blue")
    space = FeasibleSpace(m)
    for _, _, cfg in NeighbourGenerator(m, space).neighbours(configs[1], random.Random(0)):
        assert m.is_feasible(cfg)


def test_bayesian_optimization_tunes_a_new_kind():
    m = colour_space()
    score = {"red": 0.0, "green": 1.0, "blue": 2.0, "black": -3.0}
    run = tune_function(m, lambda c: score[c["c"]] + score[c["d"]] + abs(c["n"] - 2), test_limit=14,
                        technique=["BayesianOptimization"], seed=3)
    assert run.summary.tests == 14 and all(math.isfinite(v) for v in run.values)


def test_rejection_group_for_a_float_in_a_constraint():
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), IntegerParameter("n", 1, 3)])
    m.add_constraint("x * n <= 1")
    space = FeasibleSpace(m)
    assert isinstance(space.group_of["x"], RejectionGroup) and not space.exact_size
    assert space.count() is None and space.enumerate_all(100) is None

"""Tests for BooleanArray, FloatArray and IntegerArray (tunerlib.parameters.arrays and .numeric_arrays)."""
import copy
import inspect
import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters import (ARITY_N, ArrayParameter, BooleanArray, FloatArray, IntegerArray,
                                 ParameterError, parameter_from_json)

SETTINGS = settings(max_examples=80, deadline=None)

COMMON = {"op1_nop": 1, "op1_randomize": 1, "op3_cross": 3, "op3_swarm": 3, "op4_set_linear": 4,
          "opn_stochastic_mix": ARITY_N}
EXPECTED_ARITY = {
    BooleanArray: {**COMMON, "op1_flip_random": 1, "op3_swarm_parallel": 3},
    FloatArray: {**COMMON, "op1_normal_mutation": 1, "op3_swarm_parallel": 3},
    IntegerArray: {**COMMON, "op1_normal_mutation": 1},
}


def make(kind, count, lo=-2, hi=5):
    if kind is BooleanArray:
        return BooleanArray("a", count)
    return kind("a", count, lo, hi)


def call_operator(param, name, child, parents, rng, **kwargs):
    """Call any operator with enough parents; required hyper-parameters (if any) get 1.0."""
    spec = param.operators()[name]
    for p in inspect.signature(getattr(param, name)).parameters.values():
        if (p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
                and p.name != "rng" and p.name not in kwargs):
            kwargs[p.name] = 1.0
    need = len(parents) if spec.arity == ARITY_N else spec.min_parents
    return param.apply_operator(name, child, parents[:need], rng, **kwargs)


def assert_legal(param, value):
    assert isinstance(value, list) and len(value) == param.count
    elem_type = {BooleanArray: bool, FloatArray: float, IntegerArray: int}[type(param)]
    for x in value:
        assert type(x) is elem_type, (x, value)
        if elem_type is not bool:
            assert param.min_value <= x <= param.max_value
    assert param.is_valid(value)


@st.composite
def arrays(draw):
    kind = draw(st.sampled_from([BooleanArray, FloatArray, IntegerArray]))
    count = draw(st.integers(1, 30))
    if kind is BooleanArray:
        return BooleanArray("a", count)
    if kind is IntegerArray:
        lo = draw(st.integers(-50, 50))
        return IntegerArray("a", count, lo, lo + draw(st.integers(0, 20)))
    lo = draw(st.floats(-1e6, 1e6))
    return FloatArray("a", count, lo, lo + draw(st.floats(0, 1e6)))


# ---- legality --------------------------------------------------------------------------------

@given(arrays(), st.integers(0, 2**32 - 1), st.floats(0, 1), st.floats(0, 3))
@SETTINGS
def test_every_operator_keeps_value_legal(param, seed, strength, sigma):
    rng = random.Random(seed)
    assert_legal(param, param.seed_value())
    parents = [{"a": param.random_value(rng)} for _ in range(3)]
    frozen = copy.deepcopy(parents)
    velocity = [rng.uniform(-1e6, 1e6) for _ in range(param.count)]
    for name, spec in param.operators().items():
        defaults = dict(spec.defaults)
        kw = {k: v for k, v in (("strength", strength), ("sigma", sigma), ("velocity", velocity),
                                ("c", rng.random()), ("c1", 2 * rng.random())) if k in defaults}
        child = {"a": param.random_value(rng)}
        out = call_operator(param, name, child, parents, rng, **kw)
        assert_legal(param, child["a"])
        assert parents == frozen, f"{name} modified a parent"
        if name == "op3_swarm_parallel":
            assert isinstance(out, list) and len(out) == param.count
            assert all(type(v) is float and math.isfinite(v) for v in out)


def test_operator_arities():
    for kind, expected in EXPECTED_ARITY.items():
        ops = make(kind, 3).operators()
        assert {k: v.arity for k, v in ops.items() if k in expected} == expected
        assert set(expected) <= set(ops)
    assert "op3_swarm_parallel" not in IntegerArray("a", 2, 0, 1).operators()
    assert dict(BooleanArray("a", 2).operators()["op3_cross"].defaults) == {"strength": 0.3}


# ---- crossover -------------------------------------------------------------------------------

@given(st.integers(1, 40), st.floats(0, 1), st.integers(0, 2**32 - 1))
@SETTINGS
def test_cross_replaces_one_contiguous_section(count, strength, seed):
    param = BooleanArray("a", count)
    child = {"a": [False] * count}
    param.op3_cross(child, {"a": [False] * count}, {"a": [True] * count}, rng=random.Random(seed),
                    strength=strength)
    taken = [i for i, x in enumerate(child["a"]) if x]
    assert len(taken) == max(1, min(count, round(strength * count)))
    assert taken == list(range(taken[0], taken[0] + len(taken)))


def test_cross_known_example_with_seed():
    param = IntegerArray("a", 10, 0, 9)
    p1, p2 = {"a": [0] * 10}, {"a": list(range(10))}
    child = {"a": [9] * 10}
    param.op3_cross(child, p1, p2, rng=random.Random(7), strength=0.3)
    start = random.Random(7).randint(0, 7)
    assert child["a"] == [0] * start + list(range(start, start + 3)) + [0] * (7 - start)


def test_swarm_moves_toward_chosen_parent_only():
    param = IntegerArray("a", 8, 0, 2)
    p1, p2 = {"a": [1] * 8}, {"a": [2] * 8}
    child = {"a": [0] * 8}
    assert param.op3_swarm(child, p1, p2, rng=random.Random(0), c=1, c1=0, c2=0, velocity=5) == 5
    assert child["a"] == [0] * 8
    moved = set()
    for seed in range(30):
        child = {"a": [0] * 8}
        param.op3_swarm(child, p1, p2, rng=random.Random(seed), c=0, c1=0, c2=1, strength=0.5)
        assert sorted(set(child["a"])) == [0, 2] and child["a"].count(2) == 4
        moved.add(tuple(child["a"]))
    assert len(moved) > 1


# ---- PSO (parallel) --------------------------------------------------------------------------

def test_float_swarm_parallel_formula_with_shared_r():
    # unit space, as FloatParameter: the range [0, 10] maps to [0, 1]
    param = FloatArray("a", 4, 0.0, 10.0)
    x, x1, x2 = [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0], [0.0, 0.0, 0.0, 0.0]
    v = [0.05, -0.05, 0.0, 0.1]
    child = {"a": list(x)}
    out = param.op3_swarm_parallel(child, {"a": x1}, {"a": x2}, rng=random.Random(3), c=0.7, c1=1.5,
                                   c2=0.5, velocity=v)
    r = random.Random(3)
    r1, r2 = r.random(), r.random()
    want = [0.7 * vi + (r1 * 1.5 * (a1 - a) + r2 * 0.5 * (a2 - a)) / 10 for vi, a, a1, a2 in zip(v, x, x1, x2)]
    assert out == pytest.approx(want)
    assert child["a"] == pytest.approx([min(10.0, max(0.0, a + 10 * w)) for a, w in zip(x, want)])


def test_float_swarm_parallel_clips_to_bounds():
    param = FloatArray("a", 3, -1.0, 1.0)
    child = {"a": [0.0, 0.5, -0.5]}
    out = param.op3_swarm_parallel(child, child, child, rng=random.Random(0), c=1, velocity=[100, -100, 0.125])
    assert out == [1.0, -1.0, 0.125]
    assert child["a"] == [1.0, -1.0, -0.25]


def test_bool_swarm_parallel_follows_sigmoid():
    param = BooleanArray("a", 6)
    same = {"a": [False, True] * 3}
    child = {"a": list(same["a"])}
    out = param.op3_swarm_parallel(child, same, same, rng=random.Random(0), c=1, vmax=100, velocity=50)
    assert out == [50.0] * 6 and child["a"] == [True] * 6
    param.op3_swarm_parallel(child, same, same, rng=random.Random(0), c=1, vmax=100, velocity=[-50] * 6)
    assert child["a"] == [False] * 6
    out = param.op3_swarm_parallel(child, same, same, rng=random.Random(0), c=1, velocity=[9] * 6)
    assert out == [4.0] * 6  # default vmax


def test_swarm_parallel_shares_r1_r2_across_elements():
    param = FloatArray("a", 5, 0.0, 1.0)
    child = {"a": [0.0] * 5}
    out = param.op3_swarm_parallel(child, {"a": [1.0] * 5}, {"a": [0.0] * 5}, rng=random.Random(9), c=0)
    assert len(set(out)) == 1 and out[0] > 0


def test_swarm_parallel_rejects_bad_velocity():
    param = BooleanArray("a", 3)
    cfg = {"a": [True, False, True]}
    with pytest.raises(ParameterError, match="velocity must be"):
        param.op3_swarm_parallel(cfg, cfg, cfg, rng=random.Random(0), velocity=[1, 2])
    with pytest.raises(ParameterError, match="velocity must be"):
        param.op3_swarm_parallel(cfg, cfg, cfg, rng=random.Random(0), velocity="fast")


# ---- op4_set_linear ---------------------------------------------------------------------------

def test_set_linear_numeric_arrays_combine_in_unit_space():
    ints = IntegerArray("a", 3, 0, 9)
    child = {"a": [0, 0, 0]}
    ints.op4_set_linear(child, {"a": [5, 1, 9]}, {"a": [3, 3, 9]}, {"a": [1, 0, 0]}, rng=random.Random(0))
    assert child["a"] == [7, 4, 9]  # 5+3-1, 1+3-0, clipped to 9
    floats = FloatArray("a", 2, 0.0, 2.0)
    floats.op4_set_linear(child, {"a": [1.0, 0.5]}, {"a": [2.0, 0.0]}, {"a": [0.5, 0.0]},
                          rng=random.Random(0), weights=(1.0, 0.5, -0.5))
    assert child["a"] == pytest.approx([1.75, 0.5])


def test_set_linear_boolean_array_is_binary_de():
    param = BooleanArray("a", 4)
    x1, x2, x3 = {"a": [True, True, False, False]}, {"a": [True, False, True, False]}, {"a": [False] * 4}
    child = {"a": [False] * 4}
    param.op4_set_linear(child, x1, x2, x3, rng=random.Random(0))
    assert child["a"] == [False, True, True, False]  # x1 XOR (x2 XOR x3)
    param.op4_set_linear(child, x1, x2, x3, rng=random.Random(0), a=0.0, b=0.0, c=1.0)
    assert child["a"] == x3["a"]  # weights (0, 0, 1): copy p3


# ---- mutations -------------------------------------------------------------------------------

def test_flip_random_flips_exactly_one():
    param = BooleanArray("a", 12)
    rng = random.Random(5)
    for _ in range(30):
        before = param.random_value(rng)
        child = {"a": list(before)}
        param.op1_flip_random(child, rng=rng)
        assert sum(a != b for a, b in zip(before, child["a"])) == 1


def test_normal_mutation():
    ints = IntegerArray("a", 50, 0, 9)
    rng = random.Random(2)
    value = ints.random_value(rng)
    child = {"a": list(value)}
    ints.op1_normal_mutation(child, rng=rng, sigma=0.0)
    assert child["a"] == value
    ints.op1_normal_mutation(child, rng=rng, sigma=0.3)
    assert child["a"] != value
    floats = FloatArray("a", 50, -3.0, 7.0)
    value = floats.random_value(rng)
    child = {"a": list(value)}
    floats.op1_normal_mutation(child, rng=rng, sigma=0.0)
    assert child["a"] == pytest.approx(value)
    floats.op1_normal_mutation(child, rng=rng, sigma=0.05)
    steps = [abs(a - b) / 10.0 for a, b in zip(child["a"], value)]
    assert 0 < max(steps) < 0.5 and sum(steps) / len(steps) < 0.1


# ---- values, sizes, JSON, errors -------------------------------------------------------------

def test_is_valid_is_strict_and_normalize_coerces():
    f, i, b = FloatArray("a", 2, 0, 1), IntegerArray("a", 2, 0, 3), BooleanArray("a", 2)
    assert f.is_valid([0.0, 1.0]) and not f.is_valid([0, 1.0]) and not f.is_valid([0.5, 1.5])
    assert not f.is_valid((0.0, 1.0)) and not f.is_valid([0.5]) and not f.is_valid([float("nan"), 0.5])
    assert f.normalize_value((0, 1)) == [0.0, 1.0] and type(f.normalize_value((0, 1))[0]) is float
    assert i.is_valid([0, 3]) and not i.is_valid([0, 4]) and not i.is_valid([True, 1]) and not i.is_valid([1.0, 2])
    assert i.normalize_value([1.0, 2]) == [1, 2] and type(i.normalize_value([1.0, 2])[0]) is int
    assert b.is_valid([True, False]) and not b.is_valid([1, 0]) and b.normalize_value([1, 0]) == [True, False]
    for param, bad in [(i, [1.5, 2]), (i, [1, 2, 3]), (f, [2.0, 0.0]), (b, [2, 0]), (b, "ab")]:
        with pytest.raises(ParameterError):
            param.normalize_value(bad)


def test_seed_and_search_space():
    assert BooleanArray("a", 3).seed_value() == [False] * 3
    assert IntegerArray("a", 2, -1, 4).seed_value() == [-1, -1]
    assert FloatArray("a", 2, 0.5, 1).seed_value() == [0.5, 0.5]
    assert BooleanArray("a", 10).search_space_size() == 1024.0
    assert IntegerArray("a", 3, 0, 9).search_space_size() == 1000.0
    assert FloatArray("a", 3, 0, 1).search_space_size() == math.inf
    assert BooleanArray("a", 5000).search_space_size() == math.inf
    assert BooleanArray("a", 5000).log10_search_space_size() == pytest.approx(5000 * math.log10(2))
    assert IntegerArray("a", 3, 0, 9).log10_search_space_size() == pytest.approx(3.0)
    assert FloatArray("a", 3, 0, 1).log10_search_space_size() == math.inf
    with pytest.raises(ParameterError, match="too wide"):
        FloatArray("a", 1, -1e308, 1e308)


@pytest.mark.parametrize("param", [BooleanArray("b", 4), FloatArray("f", 3, -1, 2.5), IntegerArray("i", 5, 0, 7)])
def test_json_round_trip(param):
    data = param.to_json()
    back = parameter_from_json(json.loads(json.dumps(data)))
    assert back == param and parameter_from_json(data) == param and back.to_json() == data
    assert isinstance(back, ArrayParameter)
    value = param.random_value(random.Random(0))
    assert param.is_valid(json.loads(json.dumps(value)))


@pytest.mark.parametrize("build,fragment", [
    (lambda: BooleanArray("a", 0), "count must be an integer >= 1"),
    (lambda: BooleanArray("a", True), "count must be an integer >= 1"),
    (lambda: BooleanArray("a", 2.0), "count must be an integer >= 1"),
    (lambda: FloatArray("a", 2, 3, 1), "min 3 > max 1"),
    (lambda: FloatArray("a", 2, float("nan"), 1), "min must be a finite number"),
    (lambda: FloatArray("a", 2, 0, "9"), "max must be a finite number"),
    (lambda: IntegerArray("a", 2, 0, 2.5), "bounds must be integers"),
    (lambda: IntegerArray("", 2, 0, 2), "name"),
])
def test_constructor_errors_are_one_line(build, fragment):
    with pytest.raises(ParameterError) as info:
        build()
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_determinism_under_same_seed():
    def run(seed):
        out = []
        for param in (BooleanArray("a", 9), FloatArray("a", 9, 0, 1), IntegerArray("a", 9, 0, 5)):
            rng = random.Random(seed)
            parents = [{"a": param.random_value(rng)} for _ in range(3)]
            for name in sorted(param.operators()):
                child = {"a": param.random_value(rng)}
                out.append((name, call_operator(param, name, child, parents, rng), child["a"]))
        return out

    assert run(4) == run(4)
    assert run(4) != run(5)

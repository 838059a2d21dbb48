"""Tests for tunerlib.parameters.numeric and .scaled_numeric: value rules, unit cube, operators, JSON."""
import copy
import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters.base import ParameterError, parameter_from_json
from tunerlib.parameters.operators import ARITY_N
from tunerlib.parameters.numeric import FloatParameter, IntegerParameter, NumericParameter
from tunerlib.parameters.scaled_numeric import (LogFloatParameter, LogIntegerParameter, PowerOfTwoParameter,
                                                ScaledNumericParameter)

SETTINGS = settings(max_examples=100, deadline=None)
KINDS = ["int", "float", "log_int", "log_float", "pow2"]


# ---- helpers --------------------------------------------------------------------------------
@st.composite
def numeric_params(draw, kinds=tuple(KINDS)):
    """Any numeric parameter with a random legal range."""
    kind = draw(st.sampled_from(kinds))
    if kind == "int":
        lo = draw(st.integers(-2 ** 40, 2 ** 40))
        return IntegerParameter("x", lo, lo + draw(st.integers(0, 2 ** 40)))
    if kind == "float":
        lo = draw(st.floats(-1e6, 1e6))
        return FloatParameter("x", lo, lo + draw(st.floats(0, 1e6)))
    if kind == "log_int":
        lo = draw(st.integers(-1000, 1000))
        return LogIntegerParameter("x", lo, lo + draw(st.integers(0, 10 ** 9)))
    if kind == "log_float":
        lo = draw(st.floats(1e-6, 1e3))
        return LogFloatParameter("x", lo, lo * draw(st.floats(1, 1e6)))
    e = draw(st.integers(0, 60))
    return PowerOfTwoParameter("x", 2 ** e, 2 ** (e + draw(st.integers(0, 20))))


def kwargs_for(data, spec):
    """Draw random hyper-parameters for the operator ``spec`` (only those it declares)."""
    names = {n for n, _ in spec.defaults}
    pools = {
        "sigma": st.floats(0, 2), "k": st.floats(-10, 10), "c": st.floats(-3, 3),
        "c1": st.floats(0, 3), "c2": st.floats(0, 3), "velocity": st.floats(-5, 5),
        "a": st.floats(-3, 3), "b": st.floats(-3, 3),
        "weights": st.none() | st.lists(st.floats(0, 5), min_size=1, max_size=5),
    }
    if spec.name == "op4_set_linear":
        pools["weights"] = st.none() | st.tuples(*[st.floats(-3, 3)] * 3)
    out = {}
    for n in sorted(names):
        if n in pools and data.draw(st.booleans()):
            out[n] = data.draw(pools[n])
    return out


def parents_for(p, spec, rng, data):
    n = data.draw(st.integers(1, 4)) if spec.arity == ARITY_N else spec.min_parents
    return [{p.name: p.random_value(rng)} for _ in range(n)]


def close(p, a, b):
    """Values equal (exactly for integer kinds, to 1e-9 of the range on the scale for floats)."""
    if p.kind in ("int", "log_int", "pow2"):
        return a == b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9 * (p.max - p.min))


def one_line_error(fn, *args):
    with pytest.raises(ParameterError) as info:
        fn(*args)
    msg = str(info.value)
    assert msg and "\n" not in msg
    return msg


# ---- values ---------------------------------------------------------------------------------
@SETTINGS
@given(numeric_params(), st.integers(0, 2 ** 32))
def test_random_and_seed_values_are_legal(p, seed):
    rng = random.Random(seed)
    values = [p.random_value(rng) for _ in range(20)]
    assert all(p.is_valid(v) for v in values), values
    assert p.is_valid(p.seed_value()) and p.seed_value() == p.seed_value()
    assert values == [p.random_value(r) for r in [random.Random(seed)] for _ in range(20)]
    assert p.is_valid(p.min) and p.is_valid(p.max)


@SETTINGS
@given(numeric_params(), st.integers(0, 2 ** 32))
def test_unit_round_trip(p, seed):
    rng = random.Random(seed)
    for v in [p.min, p.max, p.seed_value()] + [p.random_value(rng) for _ in range(10)]:
        cfg = {"x": v}
        u = p.get_unit_value(cfg)
        assert 0.0 <= u <= 1.0
        p.set_unit_value(cfg, u)
        assert p.is_valid(cfg["x"]) and close(p, cfg["x"], v), (v, u, cfg["x"])


@SETTINGS
@given(numeric_params(), st.lists(st.floats(-10, 10) | st.sampled_from([math.inf, -math.inf]),
                                  min_size=2, max_size=6))
def test_set_unit_value_clips_and_is_monotonic(p, units):
    got = []
    for u in sorted(units):
        cfg = {}
        p.set_unit_value(cfg, u)
        assert p.is_valid(cfg["x"])
        got.append(cfg["x"])
    assert got == sorted(got)
    cfg = {}
    p.set_unit_value(cfg, -1.0)
    assert cfg["x"] == p.min
    p.set_unit_value(cfg, 2.0)
    assert cfg["x"] == p.max
    one_line_error(p.set_unit_value, cfg, math.nan)
    one_line_error(p.set_unit_value, cfg, "0.5")


@SETTINGS
@given(numeric_params(), st.one_of(st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=False)))
def test_normalize_value_clips_rounds_and_is_idempotent(p, x):
    v = p.normalize_value(x)
    assert p.is_valid(v)
    assert p.normalize_value(v) == v
    assert (v == p.min) if x <= p.min else (v == p.max) if x >= p.max else True


@pytest.mark.parametrize("bad", [None, "3", True, False, [1], math.nan, {"a": 1}])
@pytest.mark.parametrize("p", [IntegerParameter("x", 0, 9), FloatParameter("x", 0, 1),
                               LogIntegerParameter("x", 0, 9), LogFloatParameter("x", 1, 2),
                               PowerOfTwoParameter("x", 1, 8)])
def test_normalize_value_rejects_non_numbers(p, bad):
    one_line_error(p.normalize_value, bad)
    assert not p.is_valid(bad)


def test_type_rules():
    i, f = IntegerParameter("x", 0, 10), FloatParameter("x", 0, 10)
    assert i.is_valid(3) and not i.is_valid(True) and not i.is_valid(3.0) and not i.is_valid(11)
    assert f.is_valid(3) and f.is_valid(3.5) and not f.is_valid(True) and not f.is_valid(math.inf)
    assert i.normalize_value(3.0) == 3 and type(i.normalize_value(3.0)) is int
    assert i.normalize_value(2.5) == 3 and i.normalize_value(-7) == 0 and i.normalize_value(1e300) == 10
    assert type(f.normalize_value(3)) is float and f.normalize_value(-math.inf) == 0.0
    pw = PowerOfTwoParameter("x", 2, 64)
    assert pw.is_valid(8) and not pw.is_valid(6) and not pw.is_valid(8.0) and not pw.is_valid(1)
    assert [pw.normalize_value(v) for v in (3, 5, 6, 11, 12, 3.0, 5.5, 5.9, 1, 1000)] == \
        [4, 4, 8, 8, 16, 4, 4, 8, 2, 64]


@SETTINGS
@given(st.integers(1, 2 ** 80) | st.floats(1, 2.0 ** 80))
def test_pow2_normalize_is_nearest_on_the_log_scale(x):
    p = PowerOfTwoParameter("x", 1, 2 ** 80)
    v = p.normalize_value(x)
    best = min(abs(math.log2(x) - e) for e in range(81))
    assert math.isclose(abs(math.log2(x) - math.log2(v)), best, abs_tol=1e-9)


def test_seed_values():
    assert IntegerParameter("x", 0, 10).seed_value() == 5
    assert IntegerParameter("x", 0, 9).seed_value() == 4
    assert IntegerParameter("x", -3, -3).seed_value() == -3
    assert FloatParameter("x", -1, 3).seed_value() == 1.0
    assert math.isclose(LogFloatParameter("x", 1e-2, 1e2).seed_value(), 1.0)
    assert PowerOfTwoParameter("x", 1, 1024).seed_value() == 32
    assert LogIntegerParameter("x", 0, 1000).seed_value() == 30  # sqrt(1001) - 1, rounded down


def test_integer_unit_buckets_are_equal():
    p = IntegerParameter("x", 0, 3)
    got = []
    for u in (0.0, 0.24, 0.26, 0.49, 0.51, 0.74, 0.76, 1.0):
        cfg = {}
        p.set_unit_value(cfg, u)
        got.append(cfg["x"])
    assert got == [0, 0, 1, 1, 2, 2, 3, 3]
    assert p.get_unit_value({"x": 0}) == 0.125 and p.get_unit_value({"x": 3}) == 0.875


def test_log_scales_sample_on_the_log_scale():
    rng = random.Random(7)
    lf = LogFloatParameter("x", 1e-3, 1e3)
    below = sum(lf.random_value(rng) < 1.0 for _ in range(2000)) / 2000
    assert 0.45 < below < 0.55
    li = LogIntegerParameter("x", 0, 10 ** 6)
    below = sum(li.random_value(rng) < 1000 for _ in range(2000)) / 2000
    assert 0.45 < below < 0.55
    assert math.isclose(lf.get_unit_value({"x": 1.0}), 0.5)
    pw = PowerOfTwoParameter("x", 1, 2 ** 10)
    assert sorted({pw.random_value(rng) for _ in range(500)}) == [2 ** e for e in range(11)]


def test_log_int_accepts_zero_and_negative_min():
    p = LogIntegerParameter("x", -5, 100)
    rng = random.Random(1)
    assert all(p.is_valid(p.random_value(rng)) for _ in range(100))
    cfg = {}
    p.set_unit_value(cfg, 0.0)
    assert cfg["x"] == -5


@pytest.mark.parametrize("p,size", [(IntegerParameter("x", -2, 7), 10), (FloatParameter("x", 0, 1), math.inf),
                                    (FloatParameter("x", 1, 1), 1), (PowerOfTwoParameter("x", 4, 256), 7),
                                    (LogIntegerParameter("x", 0, 99), 100),
                                    (LogFloatParameter("x", 1, 2), math.inf)])
def test_search_space_size(p, size):
    assert p.search_space_size() == size


@pytest.mark.parametrize("cls", [IntegerParameter, FloatParameter, LogIntegerParameter,
                                 LogFloatParameter, PowerOfTwoParameter])
def test_degenerate_range(cls):
    p = cls("x", 4, 4)
    rng = random.Random(0)
    assert p.seed_value() == 4 and p.random_value(rng) == 4
    cfg = {"x": p.seed_value()}
    assert p.get_unit_value(cfg) == 0.5
    for name, spec in p.operators().items():
        parents = [{"x": 4}] * max(spec.min_parents, 1)
        p.apply_operator(name, cfg, parents, rng)
        assert cfg["x"] == 4


# ---- constructor validation -----------------------------------------------------------------
@pytest.mark.parametrize("cls,args", [
    (IntegerParameter, ("x", 5, 1)), (FloatParameter, ("x", 1.5, 1.0)), (IntegerParameter, ("x", 0.5, 3)),
    (IntegerParameter, ("x", True, 3)), (IntegerParameter, ("x", "0", 3)), (FloatParameter, ("x", None, 1)),
    (FloatParameter, ("x", 0, math.inf)), (FloatParameter, ("x", math.nan, 1)),
    (FloatParameter, ("x", -1e308, 1e308)), (LogFloatParameter, ("x", 0, 1)),
    (LogFloatParameter, ("x", -1, 1)), (PowerOfTwoParameter, ("x", 3, 8)),
    (PowerOfTwoParameter, ("x", 2, 12)), (PowerOfTwoParameter, ("x", 0, 8)),
    (LogIntegerParameter, ("x", 10, 1)), (IntegerParameter, ("", 0, 1)),
])
def test_constructor_errors_are_one_line(cls, args):
    one_line_error(cls, *args)


def test_abstract_classes_cannot_be_built():
    with pytest.raises(TypeError):
        NumericParameter("x", 0, 1)
    with pytest.raises(TypeError):
        ScaledNumericParameter("x", 1, 2)


def test_integral_float_bounds_are_coerced():
    p = IntegerParameter("x", 1.0, 4.0)
    assert (p.min, p.max) == (1, 4) and type(p.min) is int
    assert p.to_json() == {"kind": "int", "name": "x", "min": 1, "max": 4}


@SETTINGS
@given(numeric_params())
def test_json_round_trip(p):
    text = json.dumps(p.to_json())
    q = parameter_from_json(json.loads(text))
    assert q == p and type(q) is type(p) and q.kind == p.kind
    assert p.describe().startswith(p.kind) and "\n" not in p.describe()
    assert p.legal_range() == (p.min, p.max)


# ---- operators ------------------------------------------------------------------------------
EXPECTED_ARITY = {"op1_nop": 1, "op1_randomize": 1, "op1_normal_mutation": 1, "op1_scale": 1,
                  "op3_difference": 3, "op3_swarm": 3, "op4_set_linear": 4, "opn_sum": ARITY_N,
                  "opn_stochastic_mix": ARITY_N}


@pytest.mark.parametrize("cls", [IntegerParameter, FloatParameter, LogIntegerParameter,
                                 LogFloatParameter, PowerOfTwoParameter])
def test_operator_listing(cls):
    ops = cls.operators()
    assert {n: s.arity for n, s in ops.items()} == EXPECTED_ARITY
    swarm = dict(ops["op3_swarm"].defaults)
    assert swarm["c"] == 1.0 and swarm["velocity"] == 0.0
    assert ("sigma" in swarm) == (cls not in (FloatParameter, LogFloatParameter))
    assert ops["opn_sum"].min_parents == 1 and ops["op4_set_linear"].min_parents == 3


@settings(max_examples=150, deadline=None)
@given(numeric_params(), st.integers(0, 2 ** 32), st.data())
def test_every_operator_leaves_a_legal_child_deterministically(p, seed, data):
    for name, spec in sorted(p.operators().items()):
        rng = random.Random(seed)
        child = {"x": p.random_value(rng)}
        parents = parents_for(p, spec, rng, data)
        before = copy.deepcopy(parents)
        kwargs = kwargs_for(data, spec)
        twin = dict(child)
        out = p.apply_operator(name, child, parents, random.Random(seed + 1), **kwargs)
        assert p.is_valid(child["x"]), (name, kwargs, child)
        assert parents == before, name
        out2 = p.apply_operator(name, twin, copy.deepcopy(parents), random.Random(seed + 1), **kwargs)
        assert twin == child and out2 == out, name
        if name == "op3_swarm":
            assert isinstance(out, float) and math.isfinite(out)
        else:
            assert out is None


@SETTINGS
@given(st.integers(-50, 50), st.integers(0, 100), st.lists(st.integers(-200, 200), min_size=3, max_size=3),
       st.floats(-4, 4))
def test_value_space_operators(lo, width, vals, k):
    p = IntegerParameter("x", lo, lo + width)
    clip = lambda v: min(max(v, p.min), p.max)  # noqa: E731
    a, b, c = [{"x": clip(v)} for v in vals]
    child, rng = {"x": a["x"]}, random.Random(0)
    p.op3_difference(child, b, c, rng=rng)
    assert child["x"] == clip(b["x"] - c["x"])
    p.opn_sum(child, [a, b, c], rng=rng)
    assert child["x"] == clip(a["x"] + b["x"] + c["x"])
    child = dict(a)
    p.op1_scale(child, rng=rng, k=k)
    assert child["x"] == clip(math.floor(a["x"] * k + 0.5))


@SETTINGS
@given(st.lists(st.floats(0, 10), min_size=3, max_size=3), st.tuples(*[st.floats(-2, 2)] * 3))
def test_set_linear_is_linear_in_unit_space(vals, w):
    p = FloatParameter("x", 0, 10)
    cfgs = [{"x": v} for v in vals]
    child = {"x": 0.0}
    p.op4_set_linear(child, *cfgs, rng=random.Random(0), a=w[0], b=w[1], c=w[2])
    expect = min(max(sum(wi * v / 10 for wi, v in zip(w, vals)), 0.0), 1.0) * 10
    assert math.isclose(child["x"], expect, abs_tol=1e-9)
    other = {"x": 0.0}
    p.op4_set_linear(other, *cfgs, rng=random.Random(0), weights=w)
    assert other == child


@SETTINGS
@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(-1, 1), st.integers(0, 1000))
def test_float_swarm_follows_the_pso_formula(x, y1, y2, v0, seed):
    p = FloatParameter("x", 0, 1)
    child = {"x": x}
    v = p.op3_swarm(child, {"x": y1}, {"x": y2}, rng=random.Random(seed), c=0.7, c1=1.5, c2=1.2,
                    velocity=v0)
    r = random.Random(seed)
    r1, r2 = r.random(), r.random()
    expect_v = 0.7 * v0 + r1 * 1.5 * (y1 - x) + r2 * 1.2 * (y2 - x)
    assert math.isclose(v, expect_v, abs_tol=1e-12)
    assert math.isclose(child["x"], min(max(x + expect_v, 0.0), 1.0), abs_tol=1e-12)


def test_integer_swarm_noise_and_rounding():
    p = IntegerParameter("x", 0, 100)
    rng = random.Random(3)
    seen = set()
    for _ in range(200):
        child = {"x": 50}
        v = p.op3_swarm(child, {"x": 50}, {"x": 50}, rng=rng, sigma=0.1)
        assert v == 0.0 and p.is_valid(child["x"])
        seen.add(child["x"])
    assert len(seen) > 10  # the Gaussian noise moves it even with zero velocity
    child = {"x": 50}
    p.op3_swarm(child, {"x": 50}, {"x": 50}, rng=rng, sigma=0.0)
    assert child["x"] == 50


def test_normal_mutation_moves_in_unit_space():
    p = LogFloatParameter("x", 1e-3, 1e3)
    rng = random.Random(5)
    child = {"x": 1.0}
    p.op1_normal_mutation(child, rng=rng, sigma=0.0)
    assert math.isclose(child["x"], 1.0)
    ratios = []
    for _ in range(300):
        child = {"x": 1.0}
        p.op1_normal_mutation(child, rng=rng, sigma=0.05)
        ratios.append(child["x"])
    # symmetric on the log scale: as many values above 1 as below
    assert 0.4 < sum(r > 1.0 for r in ratios) / len(ratios) < 0.6

"""Tests for tunerlib.parameters.categorical, .ordinal and .selector: bool, switch, enum, ordinal, selector."""
import copy
import itertools
import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters.base import ParameterError, PrimitiveParameter, parameter_from_json
from tunerlib.parameters.operators import ARITY_N
from tunerlib.parameters.categorical import BooleanParameter, EnumParameter, SwitchParameter
from tunerlib.parameters.ordinal import OrdinalParameter
from tunerlib.parameters.selector import SelectorParameter

SETTINGS = settings(max_examples=100, deadline=None)


# ---- helpers --------------------------------------------------------------------------------
def scalar_key(x):
    """Options that count as duplicates share a key (1 and 1.0 do; True and 1 do not)."""
    if isinstance(x, bool):
        return ("b", x)
    if x is None or isinstance(x, str):
        return (type(x).__name__, x)
    return ("n", x)


SCALARS = st.one_of(st.text(max_size=4), st.integers(-1000, 1000), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False, width=32))
OPTIONS = st.lists(SCALARS, min_size=1, max_size=8, unique_by=scalar_key)


@st.composite
def ordinals(draw):
    if draw(st.booleans()):
        values = draw(st.lists(st.text(max_size=4), min_size=1, max_size=8, unique=True))
        return OrdinalParameter("x", values)
    if draw(st.booleans()):
        exps = sorted(draw(st.lists(st.integers(-60, 60), min_size=1, max_size=8, unique=True)))
        values = [10 ** (e / 10) for e in exps]
        return OrdinalParameter("x", values, log=True)
    values = draw(st.lists(st.integers(-100, 100) | st.floats(-1e3, 1e3), min_size=1, max_size=8,
                           unique_by=scalar_key))
    return OrdinalParameter("x", values)


PARAMS = st.one_of(
    st.just(BooleanParameter("x")),
    st.integers(1, 50).map(lambda n: SwitchParameter("x", n)),
    OPTIONS.map(lambda o: EnumParameter("x", o)),
    ordinals(),
    st.builds(lambda c, m: SelectorParameter("x", c, m),
              st.lists(st.text(max_size=3), min_size=1, max_size=5, unique=True), st.integers(0, 10 ** 6)),
)


def kwargs_for(data, spec):
    """Draw random hyper-parameters for the operator ``spec`` (only those it declares)."""
    pools = {
        "sigma": st.floats(0, 2), "c": st.floats(0, 3), "c1": st.floats(0, 3), "c2": st.floats(0, 3),
        "velocity": st.floats(-5, 5), "a": st.sampled_from([1.0, -1.0, 0.5, 0.0]),
        "b": st.sampled_from([1.0, -1.0, 0.5, 0.0]), "weights": st.none(),
    }
    if spec.name == "op4_set_linear":
        pools["c"] = st.sampled_from([1.0, -1.0, 0.5, 0.0])
        pools["weights"] = st.none() | st.tuples(*[st.sampled_from([1.0, -1.0, 0.3, 0.0])] * 3)
    elif spec.name == "opn_stochastic_mix":
        pools["weights"] = st.none() | st.lists(st.floats(0, 5), min_size=1, max_size=5)
    out = {}
    for n, _ in spec.defaults:
        if n in pools and data.draw(st.booleans()):
            out[n] = data.draw(pools[n])
    return out


def one_line_error(fn, *args, **kw):
    with pytest.raises(ParameterError) as info:
        fn(*args, **kw)
    msg = str(info.value)
    assert msg and "\n" not in msg
    return msg


# ---- generic properties ---------------------------------------------------------------------
@SETTINGS
@given(PARAMS, st.integers(0, 2 ** 32))
def test_random_and_seed_values_are_legal_and_deterministic(p, seed):
    values = [p.random_value(random.Random(seed)) for _ in range(2)]
    assert values[0] == values[1]
    rng = random.Random(seed)
    assert all(p.is_valid(p.random_value(rng)) for _ in range(20))
    assert p.is_valid(p.seed_value()) and p.seed_value() == p.seed_value()
    for v in values + [p.seed_value()]:
        assert p.normalize_value(v) == v
        json.dumps(v)


@SETTINGS
@given(PARAMS)
def test_json_round_trip(p):
    q = parameter_from_json(json.loads(json.dumps(p.to_json())))
    assert q == p and type(q) is type(p)
    assert q.seed_value() == p.seed_value()
    assert "\n" not in p.describe() and p.describe().startswith(p.kind)
    assert p.search_space_size() >= 1


@settings(max_examples=150, deadline=None)
@given(PARAMS, st.integers(0, 2 ** 32), st.data())
def test_every_operator_leaves_a_legal_child_deterministically(p, seed, data):
    for name, spec in sorted(p.operators().items()):
        rng = random.Random(seed)
        n = data.draw(st.integers(1, 4)) if spec.arity == ARITY_N else spec.min_parents
        parents = [{"x": p.random_value(rng)} for _ in range(n)]
        child = {"x": p.random_value(rng)}
        twin, before = copy.deepcopy(child), copy.deepcopy(parents)
        kwargs = kwargs_for(data, spec)
        out = p.apply_operator(name, child, parents, random.Random(seed + 1), **kwargs)
        assert p.is_valid(child["x"]), (name, kwargs, child)
        assert parents == before, name
        out2 = p.apply_operator(name, twin, copy.deepcopy(parents), random.Random(seed + 1), **kwargs)
        assert twin == child and out2 == out, name
        if name != "op3_swarm":
            assert out is None
        # the child's value never aliases a parent's mutable value
        if isinstance(child["x"], dict):
            assert all(child["x"]["order"] is not q["x"]["order"] for q in parents)


@pytest.mark.parametrize("p,ops", [
    (BooleanParameter("b"), {"op1_flip": 1}),
    (SwitchParameter("s", 3), {}),
    (EnumParameter("e", ["a", "b"]), {}),
    (SelectorParameter("s", ["a", "b"], 10), {}),
    (OrdinalParameter("o", [1, 2, 3]), {"op1_normal_mutation": 1}),
])
def test_operator_listing(p, ops):
    expected = {"op1_nop": 1, "op1_randomize": 1, "op3_swarm": 3, "op4_set_linear": 4,
                "opn_stochastic_mix": ARITY_N, **ops}
    assert {n: s.arity for n, s in p.operators().items()} == expected
    assert dict(p.operators()["op3_swarm"].defaults)["velocity"] == 0.0


# ---- constructor validation -----------------------------------------------------------------
@pytest.mark.parametrize("cls,args", [
    (SwitchParameter, ("x", 0)), (SwitchParameter, ("x", True)), (SwitchParameter, ("x", 1.5)),
    (SwitchParameter, ("x", "3")), (EnumParameter, ("x", [])), (EnumParameter, ("x", "abc")),
    (EnumParameter, ("x", [1, 1.0])), (EnumParameter, ("x", [[1], 2])), (EnumParameter, ("x", [math.nan])),
    (EnumParameter, ("x", {"a": 1})), (EnumParameter, ("x", None)),
    (OrdinalParameter, ("x", [])), (OrdinalParameter, ("x", ["a", 1])), (OrdinalParameter, ("x", [1, 2, 1])),
    (OrdinalParameter, ("x", [True, False])), (OrdinalParameter, ("x", [-1, 2], True)),
    (OrdinalParameter, ("x", [4, 2, 8], True)), (OrdinalParameter, ("x", ["a", "b"], True)),
    (OrdinalParameter, ("x", [1, 2], "yes")), (OrdinalParameter, ("x", [1e6, 1e6 + 1.2e-10], True)),
    (OrdinalParameter, ("x", [1.0, 1e6, 1e6 + 1.2e-10], True)), (SelectorParameter, ("x", [], 10)),
    (SelectorParameter, ("x", ["a", "a"], 10)), (SelectorParameter, ("x", ["a", "b"], -1)),
    (SelectorParameter, ("x", ["a", "b"], 2.5)), (BooleanParameter, ("",)),
])
def test_constructor_errors_are_one_line(cls, args):
    one_line_error(cls, *args)


# ---- strict types and normalization ---------------------------------------------------------
def test_boolean_rules_and_flip():
    p = BooleanParameter("b")
    assert p.is_valid(True) and not p.is_valid(1) and not p.is_valid(None)
    assert p.normalize_value(1) is True and p.normalize_value(0.0) is False
    one_line_error(p.normalize_value, 2)
    one_line_error(p.normalize_value, "true")
    cfg = {"b": True}
    p.op1_flip(cfg, rng=random.Random(0))
    assert cfg["b"] is False
    assert p.search_space_size() == 2 and p.seed_value() is False


def test_switch_rules():
    p = SwitchParameter("s", 4)
    assert p.is_valid(0) and p.is_valid(3) and not p.is_valid(True) and not p.is_valid(4)
    assert not p.is_valid(2.0) and not p.is_valid(-1)
    assert p.normalize_value(2.0) == 2 and type(p.normalize_value(2.0)) is int
    for bad in (True, 4, -1, 1.5, "1", None):
        one_line_error(p.normalize_value, bad)
    assert p.search_space_size() == 4 and p.seed_value() == 0
    big = SwitchParameter("s", 10 ** 12)  # no per-option storage
    assert big.is_valid(10 ** 12 - 1) and big.search_space_size() == 10 ** 12


def test_enum_rules():
    p = EnumParameter("e", ["a", 1, 2.5, True, None])
    assert all(p.is_valid(v) for v in ["a", 1, 2.5, True, None])
    assert not p.is_valid(1.0) and not p.is_valid(False) and not p.is_valid("b") and not p.is_valid([1])
    assert p.normalize_value(1.0) == 1 and type(p.normalize_value(1.0)) is int
    one_line_error(p.normalize_value, "b")
    one_line_error(p.normalize_value, [1])
    q = EnumParameter("e", [1, True])  # JSON 1 and true are different options
    assert q.is_valid(1) and q.is_valid(True) and q.normalize_value(True) is True
    assert EnumParameter("e", ("x", "y")).to_json()["options"] == ["x", "y"]


def test_ordinal_unit_values_and_nearest():
    lin = OrdinalParameter("o", [1, 10, 100])
    log = OrdinalParameter("o", [1, 10, 100], log=True)
    assert isinstance(lin, PrimitiveParameter) and lin.legal_range() == (1, 100)
    assert [lin.get_unit_value({"o": v}) for v in (1, 10, 100)] == [1 / 6, 0.5, 5 / 6]
    assert [log.get_unit_value({"o": v}) for v in (1, 10, 100)] == [0.0, 0.5, 1.0]
    skew = OrdinalParameter("o", [1, 2, 100], log=True)
    assert math.isclose(skew.get_unit_value({"o": 2}), math.log(2) / math.log(100))
    assert lin.normalize_value(4) == 1 and log.normalize_value(4) == 10  # nearest on its scale
    assert lin.normalize_value(10.0) == 10 and not lin.is_valid(10.0)
    one_line_error(lin.normalize_value, "10")
    s = OrdinalParameter("o", ["lo", "mid", "hi"])
    assert s.seed_value() == "mid" and s.search_space_size() == 3
    one_line_error(s.normalize_value, 1)


@SETTINGS
@given(ordinals(), st.lists(st.floats(-2, 2), min_size=2, max_size=6))
def test_ordinal_unit_round_trip_and_monotonic(p, units):
    for v in p.values:
        cfg = {"x": v}
        u = p.get_unit_value(cfg)
        assert 0.0 <= u <= 1.0
        p.set_unit_value(cfg, u)
        assert cfg["x"] == v and type(cfg["x"]) is type(v)
    idx = []
    for u in sorted(units):
        cfg = {}
        p.set_unit_value(cfg, u)
        idx.append(p.values.index(cfg["x"]))
    assert idx == sorted(idx)
    one_line_error(p.set_unit_value, {}, math.nan)


# ---- selector -------------------------------------------------------------------------------
def test_selector_select_and_rules():
    p = SelectorParameter("s", ["a", "b", "c"], 100)
    v = {"order": ["a", "b", "c"], "cutoffs": [10, 20]}
    assert p.is_valid(v)
    assert [p.select(v, n) for n in (0, 9, 10, 19, 20, 10 ** 9)] == ["a", "a", "b", "b", "c", "c"]
    w = {"order": ["c", "a", "b"], "cutoffs": [10, 10]}
    assert [p.select(w, n) for n in (9, 10)] == ["c", "b"]
    abc = ["a", "b", "c"]
    for bad in ({"order": ["a", "b"], "cutoffs": [1, 2]}, {"order": abc, "cutoffs": [20, 10]},
                {"order": abc, "cutoffs": [1, 101]}, {"order": ["a", "a", "c"], "cutoffs": [1, 2]},
                {"order": abc, "cutoffs": [1, True]}, {"order": tuple(abc), "cutoffs": [1, 2]},
                {"order": abc, "cutoffs": [1, 2], "x": 1}, abc):
        assert not p.is_valid(bad)
    fixed = p.normalize_value({"order": ("b", "a", "c"), "cutoffs": (500, 3.0)})
    assert fixed == {"order": ["b", "a", "c"], "cutoffs": [3, 100]} and p.is_valid(fixed)
    one_line_error(p.normalize_value, {"order": ["a", "b", "z"], "cutoffs": [1, 2]})
    one_line_error(p.normalize_value, {"order": ["a", "b", "c"], "cutoffs": [1]})
    one_line_error(p.normalize_value, {"order": ["a", "b", "c"], "cutoffs": ["1", 2]})
    one_line_error(p.normalize_value, "abc")
    assert p.seed_value() == {"order": ["a", "b", "c"], "cutoffs": [100, 100]}


@pytest.mark.parametrize("k,m", [(1, 5), (2, 0), (3, 4), (4, 3)])
def test_selector_search_space_size_matches_enumeration(k, m):
    p = SelectorParameter("s", list(range(k)), m)
    cutoffs = [c for c in itertools.product(range(m + 1), repeat=k - 1) if list(c) == sorted(c)]
    assert p.search_space_size() == math.factorial(k) * len(cutoffs)


def test_selector_copy_value_is_deep():
    p = SelectorParameter("s", ["a", "b"], 10)
    v = {"order": ["a", "b"], "cutoffs": [3]}
    c = p.copy_value(v)
    c["order"].reverse()
    c["cutoffs"][0] = 7
    assert v == {"order": ["a", "b"], "cutoffs": [3]}


# ---- operator semantics ---------------------------------------------------------------------
CATEGORICALS = [BooleanParameter("x"), SwitchParameter("x", 5), EnumParameter("x", ["a", "b", "c"]),
                SelectorParameter("x", ["a", "b", "c"], 50)]


def two_different(p, rng):
    a = p.random_value(rng)
    while True:
        b = p.random_value(rng)
        if b != a:
            return a, b


@pytest.mark.parametrize("p", CATEGORICALS[1:])
def test_swarm_moves_to_the_chosen_parent(p):
    rng = random.Random(2)
    for _ in range(20):
        x, y = two_different(p, rng)
        z = p.random_value(rng)
        child = {"x": x}
        assert p.op3_swarm(child, {"x": y}, {"x": z}, rng=rng, c=0, c1=1, c2=0, velocity=0.25) == 0.25
        if isinstance(p, SelectorParameter):  # crossover: each part comes from the child or p1
            assert child["x"]["order"] in (x["order"], y["order"])
            assert p.is_valid(child["x"])
        else:
            assert child["x"] == y
        child = {"x": x}
        p.op3_swarm(child, {"x": y}, {"x": z}, rng=rng, c=1, c1=0, c2=0)
        assert child["x"] == x


def test_boolean_swarm_follows_the_pso_formula():
    p = BooleanParameter("x")
    for seed in range(50):
        v = p.op3_swarm({"x": False}, {"x": True}, {"x": False}, rng=random.Random(seed), c=0.5,
                        c1=2.0, c2=1.0, velocity=0.4)
        r = random.Random(seed)
        r1, r2 = r.random(), r.random()
        assert math.isclose(v, 0.5 * 0.4 + r1 * 2.0 * 1.0 + r2 * 1.0 * 0.0)
    rng = random.Random(0)
    for vel, want in ((100.0, True), (-100.0, False)):
        for _ in range(20):
            child = {"x": not want}
            p.op3_swarm(child, {"x": want}, {"x": want}, rng=rng, c=1.0, velocity=vel)
            assert child["x"] is want


@pytest.mark.parametrize("p", CATEGORICALS)
def test_set_linear_simulates_a_plus_b_minus_c(p):
    rng = random.Random(4)
    for _ in range(20):
        a, b = two_different(p, rng)
        child = {"x": p.random_value(rng)}
        p.op4_set_linear(child, {"x": a}, {"x": b}, {"x": b}, rng=rng)  # A + (B - B) = A
        assert child["x"] == a
        p.op4_set_linear(child, {"x": b}, {"x": a}, {"x": b}, rng=rng, a=-1.0, b=1.0, c=1.0)
        assert child["x"] == a  # reordered: B + (A - A)... here weight 1 on p2, p1 == p3
        p.op4_set_linear(child, {"x": a}, {"x": a}, {"x": b}, rng=rng)  # A + (A - B): moved
        assert p.is_valid(child["x"])
        if not isinstance(p, SelectorParameter):
            assert child["x"] != a
        p.op4_set_linear(child, {"x": a}, {"x": a}, {"x": b}, rng=rng, weights=(0.3, 0.3, 0.3))
        assert p.is_valid(child["x"])


def test_set_linear_random_fallback_covers_the_space():
    p = SwitchParameter("x", 4)
    rng = random.Random(9)
    seen = set()
    for _ in range(100):
        child = {"x": 0}
        p.op4_set_linear(child, {"x": 0}, {"x": 0}, {"x": 0}, rng=rng, a=0.5, b=0.5, c=0.5)
        seen.add(child["x"])
    assert seen == {0, 1, 2, 3}


def test_ordinal_operators_work_in_unit_space():
    p = OrdinalParameter("x", [1, 2, 4, 8, 16, 32, 64], log=True)
    child = {"x": 1}
    p.op4_set_linear(child, {"x": 8}, {"x": 64}, {"x": 16}, rng=random.Random(0))
    assert child["x"] == 32  # positions 3 + 6 - 4 = 5 (of 0..6)
    child = {"x": 8}
    p.op1_normal_mutation(child, rng=random.Random(0), sigma=0.0)
    assert child["x"] == 8
    v = p.op3_swarm(child, {"x": 8}, {"x": 8}, rng=random.Random(0), sigma=0.0, velocity=0.0)
    assert v == 0.0 and child["x"] == 8

"""Tests for ConfigurationManipulator: the search space, its configurations and constraints."""
import hashlib
import io
import json
import math
import os
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters import (BooleanParameter, ConfigurationError, ConfigurationManipulator,
                                 Constraint, EnumParameter, FloatParameter, IntegerArray,
                                 IntegerParameter, PermutationParameter, PowerOfTwoParameter)

SETTINGS = settings(max_examples=100, deadline=None)


def make_space():
    m = ConfigurationManipulator([
        IntegerParameter("x", 1, 64), IntegerParameter("y", 1, 64), FloatParameter("f", 0, 1),
        BooleanParameter("b"), EnumParameter("e", ["lo", "mid", "hi"]),
        PermutationParameter("order", ["i", "j", "k"]), PowerOfTwoParameter("p", 1, 256),
        IntegerArray("arr", 3, 0, 9),
    ])
    m.add_constraint("x * y <= 256", name="area")
    m.add_constraint("index(order, 'i') < index(order, 'j')", name="i_before_j")
    m.add_constraint(lambda c: c["b"] or c["f"] < 0.5, reads=["b", "f"], name="b_or_small_f")
    m.add_constraint("max(arr) - min(arr) <= 4", name="flat_arr")
    return m


# --------------------------------------------------------------------------- building
def test_duplicate_parameter_name_is_rejected():
    m = ConfigurationManipulator([IntegerParameter("x", 1, 4)])
    with pytest.raises(ConfigurationError, match="duplicate parameter name 'x'"):
        m.add_parameter(FloatParameter("x", 0, 1))
    with pytest.raises(ConfigurationError, match="needs a Parameter instance"):
        m.add_parameter("x")
    assert len(m) == 1


def test_constraint_reads_must_name_existing_parameters():
    m = ConfigurationManipulator([IntegerParameter("x", 1, 4)])
    with pytest.raises(ConfigurationError, match=r"unknown parameter\(s\) \['y', 'z'\].*known: x"):
        m.add_constraint("x < y + z")
    with pytest.raises(ConfigurationError, match=r"unknown parameter\(s\) \['q'\]"):
        m.add_constraint(lambda c: True, reads=["x", "q"])
    with pytest.raises(ConfigurationError, match="needs reads="):
        m.add_constraint(lambda c: True)
    with pytest.raises(ConfigurationError, match="unexpected end of expression at column 4"):
        m.add_constraint("x <")
    assert m.constraints == []


def test_constraint_names_unique():
    m = ConfigurationManipulator([IntegerParameter("x", 1, 4)])
    a = m.add_constraint(lambda c: True, reads=["x"])
    b = m.add_constraint(lambda c: True, reads=["x"])
    assert (a.name, b.name) == ("<lambda>", "<lambda> #2")
    m.add_constraint("x > 0", name="pos")
    with pytest.raises(ConfigurationError, match="duplicate constraint name 'pos'"):
        m.add_constraint("x > 1", name="pos")
    with pytest.raises(ConfigurationError, match="not both"):
        m.add_constraint(Constraint("x > 2"), name="other")


def test_access_helpers():
    m = make_space()
    assert m.names == ["x", "y", "f", "b", "e", "order", "p", "arr"]
    assert [p.name for p in m] == m.names and len(m) == 8 and "f" in m and "zz" not in m
    assert m.parameter("f").name == "f"
    with pytest.raises(ConfigurationError, match="unknown parameter 'zz'"):
        m.parameter("zz")
    m.parameters.clear()  # a copy: the space is unchanged
    assert len(m.parameters) == 8


# --------------------------------------------------------------------------- configurations
@SETTINGS
@given(st.integers(0, 2 ** 32))
def test_random_configs_validate_and_are_feasible(seed):
    m = make_space()
    cfg = m.random(random.Random(seed))
    m.validate(cfg)
    assert list(cfg) == m.names
    assert m.is_feasible(cfg) and m.violated_constraints(cfg) == []


def test_random_is_deterministic_per_seed():
    m = make_space()
    a = [m.random(random.Random(7)) for _ in range(3)]
    b = [m.random(random.Random(7)) for _ in range(3)]
    assert a == b and a[0] != m.random(random.Random(8))
    with pytest.raises(ConfigurationError, match="random.Random"):
        m.random(7)


def test_random_samples_independent_groups_separately():
    # 12 independent constraints each met by 1 value in 10: joint rejection would need ~10**12 tries
    m = ConfigurationManipulator([IntegerParameter(f"v{i}", 0, 9) for i in range(12)])
    for i in range(12):
        m.add_constraint(f"v{i} == {i % 10}")
    cfg = m.random(random.Random(0), max_tries=1000)
    assert cfg == {f"v{i}": i % 10 for i in range(12)}


def test_unsatisfiable_space_gives_clear_error():
    m = ConfigurationManipulator([IntegerParameter("x", 1, 10), IntegerParameter("y", 1, 10)])
    m.add_constraint("x + y > 100")
    with pytest.raises(ConfigurationError, match="no feasible configuration found in 50 random tries.*"
                                                 "may be unsatisfiable") as info:
        m.random(random.Random(0), max_tries=50)
    assert "\n" not in str(info.value)
    m2 = ConfigurationManipulator([IntegerParameter("x", 1, 10)], ["False"])
    with pytest.raises(ConfigurationError, match="always false"):
        m2.random(random.Random(0))


def test_seed_config_may_be_infeasible():
    m = ConfigurationManipulator([IntegerParameter("x", 1, 9)], ["x > 7"])
    assert m.seed_config() == {"x": 5}
    assert not m.is_feasible(m.seed_config())
    assert m.violated_constraints(m.seed_config()) == ["x > 7"]


@pytest.mark.parametrize("cfg, fragment", [
    ({"x": 2, "f": 0.5, "zz": 1}, "unknown parameter(s) ['zz']"),
    ({"x": 2}, "missing parameter(s) ['f']"),
    ({"x": 99, "f": 0.5}, "parameter 'x': illegal value 99; legal: int [1, 8]"),
    ({"x": 2.0, "f": 0.5}, "parameter 'x': illegal value 2.0"),
    ({"x": 2, "f": "a"}, "parameter 'f': illegal value 'a'; legal: float [0.0, 1.0]"),
    ([("x", 2)], "must be a dict"),
])
def test_validate_messages_are_one_line_and_name_the_problem(cfg, fragment):
    m = ConfigurationManipulator([IntegerParameter("x", 1, 8), FloatParameter("f", 0, 1)], ["x > 6"])
    with pytest.raises(ConfigurationError) as info:
        m.validate(cfg)
    assert fragment in str(info.value) and "\n" not in str(info.value)
    assert not m.is_valid(cfg)


def test_validate_does_not_check_constraints():
    m = ConfigurationManipulator([IntegerParameter("x", 1, 8)], ["x > 6"])
    m.validate({"x": 2})
    assert m.is_valid({"x": 2}) and not m.is_feasible({"x": 2})


def test_normalize():
    m = ConfigurationManipulator([IntegerParameter("x", 1, 8), FloatParameter("f", 0, 1),
                                  PermutationParameter("o", [1, 2, 3])])
    out = m.normalize({"f": 1, "x": 3.0, "o": [3, 1, 2]})
    assert out == {"x": 3, "f": 1.0, "o": [3, 1, 2]} and list(out) == ["x", "f", "o"]
    assert type(out["x"]) is int and type(out["f"]) is float
    with pytest.raises(ConfigurationError, match=r"unknown parameter\(s\) \['extra'\]"):
        m.normalize({"x": 3, "f": 1, "o": [1, 2, 3], "extra": 0})
    with pytest.raises(ConfigurationError, match="parameter 'x'") as info:
        m.normalize({"x": "three", "f": 1, "o": [1, 2, 3]})
    assert "\n" not in str(info.value)


def test_copy_copies_lists():
    m = make_space()
    cfg = m.random(random.Random(3))
    dup = m.copy(cfg)
    assert dup == cfg and dup["order"] is not cfg["order"] and dup["arr"] is not cfg["arr"]
    dup["order"].reverse()
    assert cfg != dup


# --------------------------------------------------------------------------- hashing
TINY = {"n": 3, "t": 0.25, "o": ["b", "a"]}
TINY_JSON = '{"n":3,"o":["b","a"],"t":0.25}'
TINY_SHA = "78a0a3a01c1f114ad687732818cfd0c436448c6b760da1e5ba3e95b1e42b164d"


def tiny_space():
    return ConfigurationManipulator([IntegerParameter("n", 0, 9), FloatParameter("t", 0, 1),
                                     PermutationParameter("o", ["a", "b"])])


def test_canonical_json_and_fixed_hash():
    m = tiny_space()
    assert m.canonical_json(TINY) == TINY_JSON
    assert m.hash_config(TINY) == hashlib.sha256(TINY_JSON.encode()).hexdigest() == TINY_SHA


def test_hash_is_stable_across_processes():
    code = ("from tunerlib.parameters import *\n"
            "m = ConfigurationManipulator([IntegerParameter('n', 0, 9), FloatParameter('t', 0, 1),"
            " PermutationParameter('o', ['a', 'b'])])\n"
            f"print(m.hash_config({TINY!r}))\n")
    for seed in ("0", "12345"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        assert out.stdout.strip() == TINY_SHA


def test_hash_equal_for_int_and_float_spellings_and_key_order():
    m = tiny_space()
    base = m.hash_config({"n": 3, "t": 1.0, "o": ["a", "b"]})
    assert m.hash_config({"o": ["a", "b"], "t": 1, "n": 3}) == base
    assert m.hash_config({"n": 3.0, "t": 1.0, "o": ["a", "b"]}) == base
    signed = ConfigurationManipulator([FloatParameter("g", -1, 1)])
    assert signed.hash_config({"g": 0.0}) == signed.hash_config({"g": -0.0}) == signed.hash_config({"g": 0})
    assert m.hash_config({"n": 4, "t": 1.0, "o": ["a", "b"]}) != base
    assert m.hash_config({"n": 3, "t": 1.0, "o": ["b", "a"]}) != base


@SETTINGS
@given(st.integers(0, 2 ** 32))
def test_hash_of_random_config_survives_json_round_trip(seed):
    m = make_space()
    cfg = m.random(random.Random(seed))
    again = json.loads(json.dumps(cfg))
    assert m.hash_config(again) == m.hash_config(cfg)
    assert json.loads(m.canonical_json(cfg)) == cfg


# --------------------------------------------------------------------------- size
def test_search_space_size():
    m = ConfigurationManipulator([IntegerParameter("x", 1, 4), BooleanParameter("b"),
                                  EnumParameter("e", ["a", "b", "c"]), PermutationParameter("o", [1, 2, 3])])
    assert m.search_space_size() == 144.0 and m.is_finite()
    assert m.log10_search_space_size() == pytest.approx(math.log10(144))
    m.add_parameter(PermutationParameter("big", list(range(300))))
    assert m.search_space_size() == math.inf and m.is_finite()
    assert m.log10_search_space_size() == pytest.approx(math.log10(144) + math.lgamma(301) / math.log(10))
    m.add_parameter(FloatParameter("f", 0, 1))
    assert m.search_space_size() == math.inf and m.log10_search_space_size() == math.inf
    assert not m.is_finite()
    empty = ConfigurationManipulator()
    assert empty.search_space_size() == 1.0 and empty.log10_search_space_size() == 0.0


# --------------------------------------------------------------------------- groups
def test_groups_small_example():
    m = ConfigurationManipulator([IntegerParameter(n, 0, 3) for n in "abcdefg"])
    m.add_constraint("a < b")
    m.add_constraint("d + c > 2")
    m.add_constraint(lambda cfg: cfg["e"] != cfg["d"], reads=["e", "d"])
    assert m.groups() == [{"a", "b"}, {"c", "d", "e"}, {"f"}, {"g"}]
    assert [c.name for c in m.group_constraints({"c", "d", "e"})] == ["d + c > 2", "<lambda>"]


@SETTINGS
@given(st.integers(1, 9).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.lists(st.integers(0, n - 1), min_size=1, max_size=3), max_size=6))))
def test_groups_are_connected_components(data):
    n, edges = data
    names = [f"p{i}" for i in range(n)]
    m = ConfigurationManipulator([IntegerParameter(x, 0, 1) for x in names])
    for reads in edges:
        m.add_constraint(" + ".join(names[i] for i in reads) + " >= 0")
    adj = {x: set() for x in names}
    for reads in edges:
        for i in reads:
            adj[names[i]].update(names[j] for j in reads)
    seen, want = set(), []
    for x in names:  # breadth-first components, in insertion order
        if x in seen:
            continue
        comp, todo = set(), [x]
        while todo:
            y = todo.pop()
            if y not in comp:
                comp.add(y)
                todo.extend(adj[y] - comp)
        seen |= comp
        want.append(comp)
    assert m.groups() == want


# --------------------------------------------------------------------------- serialisation
def test_json_round_trip():
    m = make_space()
    with pytest.raises(ConfigurationError, match=r"\['b_or_small_f'\] are Python callables"):
        m.to_json()
    data = json.loads(json.dumps(m.to_json(skip_callables=True)))
    back = ConfigurationManipulator.from_json(data)
    assert back.to_json() == data
    assert back.names == m.names and back.parameters == m.parameters
    assert [c.name for c in back.constraints] == ["area", "i_before_j", "flat_arr"]
    cfg = m.random(random.Random(1))
    assert back.hash_config(cfg) == m.hash_config(cfg)
    with pytest.raises(ConfigurationError, match="'parameters' list"):
        ConfigurationManipulator.from_json({"params": []})
    with pytest.raises(ConfigurationError, match="unknown parameter kind"):
        ConfigurationManipulator.from_json({"parameters": [{"kind": "nope", "name": "x"}]})


def test_parameter_info_is_canonical():
    a = ConfigurationManipulator([IntegerParameter("x", 1, 4), BooleanParameter("b")], ["x > 1"])
    b = ConfigurationManipulator([BooleanParameter("b"), IntegerParameter("x", 1, 4)])
    b.add_constraint("x > 1", name="renamed")
    assert a.parameter_info() == b.parameter_info()
    json.loads(a.parameter_info())
    c = ConfigurationManipulator([IntegerParameter("x", 1, 5), BooleanParameter("b")], ["x > 1"])
    d = ConfigurationManipulator([IntegerParameter("x", 1, 4), BooleanParameter("b")], ["x > 2"])
    assert len({a.parameter_info(), c.parameter_info(), d.parameter_info()}) == 3
    e = ConfigurationManipulator([IntegerParameter("x", 1, 4)])
    e.add_constraint(lambda cfg: True, reads=["x"], name="py")
    assert '"callable":"py"' in e.parameter_info()


# --------------------------------------------------------------------------- display
def test_print_params_and_describe_space():
    m = make_space()
    buf = io.StringIO()
    m.print_params(buf)
    text = buf.getvalue()
    for fragment in ("x ", "int [1, 64]", "permutation", "['i', 'j', 'k']", "x * y <= 256",
                     "b_or_small_f (Python callable reading b, f)", "constraints (4):"):
        assert fragment in text
    assert text.splitlines()[0].split() == ["name", "kind", "legal", "values"]     # no default given
    buf = io.StringIO()
    default = dict(m.seed_config(), x=64, y=64)
    m.print_params(buf, default=default)
    lines = buf.getvalue().splitlines()
    assert lines[0].split() == ["name", "kind", "legal", "values", "default"]
    assert lines[2].split()[0] == "x" and lines[2].split()[-1] == "64"
    assert "the default configuration violates: " in buf.getvalue()      # x * y <= 256 is broken
    line = m.describe_space()
    assert "\n" not in line and "8 parameters" in line and "4 constraints" in line
    assert "infinite" in line
    finite = ConfigurationManipulator([IntegerParameter("x", 1, 4), BooleanParameter("b")])
    assert "8 configurations" in finite.describe_space()
    assert "2 independent groups" in finite.describe_space()

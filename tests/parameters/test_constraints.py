"""Tests for the safe constraint expression language and the Constraint class."""
import builtins
import re

import pytest
from hypothesis import example, HealthCheck, given, settings
from hypothesis import strategies as st

from tunerlib.parameters.constraints import (Constraint, ConstraintError, UndefinedValueError,
                                             parse_expression)

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ENV = {"a": 3, "b": -2, "c": 0, "d": 7}


# --------------------------------------------------------------------------- generated expressions
def _binop(t):
    left, op, right = t
    if op == "*" and left.endswith("]"):
        left = f"({left})"  # list * int is list repetition in Python; the language has no list arithmetic
    return f"{left} {op} {right}"


ATOMS = st.one_of(st.integers(0, 9).map(str), st.sampled_from(sorted(ENV)))
BINOPS = st.sampled_from(["+", "-", "*", "/", "//", "%", "<", "<=", ">", ">=", "==", "!=", "and", "or"])


def _extend(children):
    return st.one_of(
        st.tuples(children, BINOPS, children).map(_binop),
        children.map(lambda s: f"({s})"),
        children.map(lambda s: f"-{s}"),
        children.map(lambda s: f"not {s}"),
        st.tuples(ATOMS | children.map(lambda s: f"({s})"), st.sampled_from(["0", "1", "2", "-1"]))
        .map(lambda t: f"{t[0]} ** {t[1]}"),
        st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3))
        .map(lambda t: f"{t[0]} ** {t[1]} ** {t[2]}"),
        st.tuples(children, st.sampled_from(["in", "not in"]), st.lists(children, min_size=1, max_size=3))
        .map(lambda t: f"{t[0]} {t[1]} [{', '.join(t[2])}]"),
        st.tuples(st.sampled_from(["abs", "min", "max"]), st.lists(children, min_size=1, max_size=3))
        .map(lambda t: f"{t[0]}({t[1][0]})" if t[0] == "abs" else f"{t[0]}({', '.join(t[1] * 2)})"),
    )


EXPRESSIONS = st.recursive(ATOMS, _extend, max_leaves=10)


def _python_oracle(text):
    """Python's own meaning of a string this test generated: ('ok', value) / ('undefined',) /
    ('type',) / ('syntax',).  eval is used ONLY here, as an oracle, on test-generated text."""
    try:
        code = compile(text, "<oracle>", "eval")
    except SyntaxError:
        return ("syntax",)
    try:
        return ("ok", eval(code, {"__builtins__": {"abs": abs, "min": min, "max": max}}, dict(ENV)))
    except (ZeroDivisionError, OverflowError):
        return ("undefined",)
    except TypeError:
        return ("type",)


def _ours(text):
    try:
        expr = parse_expression(text)
    except ConstraintError:
        return ("syntax",)
    try:
        return ("ok", expr.evaluate(ENV))
    except UndefinedValueError:
        return ("undefined",)
    except ConstraintError:
        return ("type",)


@SETTINGS
@given(EXPRESSIONS)
@example("(not 0 in [0] + 0 / 0)")  # the right operand's error comes before the left's type error
def test_semantics_match_python_on_generated_expressions(text):
    want, got = _python_oracle(text), _ours(text)
    assert got[0] == want[0], (text, want, got)
    if want[0] == "ok":
        assert type(got[1]) is type(want[1]) and got[1] == want[1], (text, want, got)


@SETTINGS
@given(EXPRESSIONS)
def test_reads_are_the_parameter_names_in_the_text(text):
    try:
        expr = parse_expression(text)
    except ConstraintError:
        return
    assert expr.names == set(re.findall(r"[a-z]+", text)) & set(ENV)


@pytest.mark.parametrize("text, value", [
    ("-2 ** 2", -4), ("2 ** 3 ** 2", 512), ("2 ** -1", 0.5), ("(2 ** 3) ** 2", 64),
    ("10 - 4 - 3", 3), ("100 // 10 // 3", 3), ("2 * 3 % 4", 2), ("7 // -2", -4), ("-7 % 3", 2),
    ("1 < 2 < 3", True), ("1 < 3 < 2", False), ("3 > 2 == 2", True), ("not 1 == 2", True),
    ("True and 0 or 5", 5), ("1e3 + .5", 1000.5), ("'ab' == \"ab\"", True),
    ("'x' in ['x', 'y']", True), ("'z' not in ['x', 'y']", True), ("'b' in 'abc'", True),
    ("len([1, 2, 3])", 3), ("log2(1024)", 10.0), ("int(7.9) + float(1)", 8.0), ("round(2.567, 2)", 2.57),
    ("round(2.5)", 2), ("min([4, 2, 9])", 2), ("max(1, 5, 3)", 5), ("abs(-4)", 4), ("int('12')", 12),
])
def test_literal_values(text, value):
    result = parse_expression(text).evaluate({})
    assert result == value and type(result) is type(value)


def test_index_supports_loop_order_constraints():
    c = Constraint("index(order, 'i') < index(order, 'j')")
    assert c.reads == ("order",)
    assert c.is_satisfied({"order": ["i", "k", "j"]})
    assert not c.is_satisfied({"order": ["j", "i", "k"]})


def test_backtick_names_and_function_names_are_not_reads():
    expr = parse_expression("`gcc-O` + max(a, `b c`) > len(order)")
    assert expr.names == {"gcc-O", "a", "b c", "order"}
    assert expr.evaluate({"gcc-O": 1, "a": 2, "b c": 5, "order": [1]}) is True


def test_short_circuit_skips_undefined_operand():
    assert parse_expression("t == 0 or n % t == 0").evaluate({"t": 0, "n": 5}) is True
    assert parse_expression("t != 0 and n % t == 0").evaluate({"t": 0, "n": 5}) is False


# --------------------------------------------------------------------------- rejected input
@pytest.mark.parametrize("text, fragment", [
    ("a.b", "attribute access"), ("x.__class__", "attribute access"), ("a[0]", "subscripts"),
    ("[1, 2][0]", "subscripts"), ("lambda: 1", "'lambda'"), ("__import__('os')", "'__import__'"),
    ("__builtins__", "'__builtins__'"), ("`__x`", "'__x'"), ("foo(1)", "unknown function 'foo'"),
    ("eval('1')", "unknown function 'eval'"), ("open('f')", "unknown function 'open'"),
    ("(a)(1)", "only whitelisted functions"), ("min()", "min() takes"), ("index(p)", "index() takes"),
    ("a if b else c", "'if'"), ("[x for x in y]", "'for'"), ("a is b", "'is'"), ("a = 1", "assignment"),
    ("a && b", "use 'and'"), ("a; b", "';'"), ("(1, 2)", "tuples"), ("1, 2", "tuples"), ("()", "empty"),
    ("0x10", "malformed number"), ("01", "leading zeros"), ("'abc", "unterminated string"),
    ("{1}", "sets and dicts"), ("1 + not 2", "unexpected 'not'"), ("a < not b", "unexpected 'not'"),
    ("", "empty expression"), ("   ", "empty expression"), ("1 2", "unexpected 2"), ("é < 1", "'é'"),
    ("(" * 200 + "1" + ")" * 200, "nested too deeply"), ("-" * 500 + "1", "nested too deeply"),
    ("+".join(["1"] * 300), "too long"), ("2" + "**2" * 300, "nested too deeply"), ("None", "'None'"),
])
def test_rejected_with_one_line_error_naming_a_column(text, fragment):
    with pytest.raises(ConstraintError) as info:
        parse_expression(text)
    msg = str(info.value)
    assert fragment in msg
    assert "\n" not in msg and "at column " in msg


@pytest.mark.parametrize("text, column, hint", [
    ("a <", 4, "write e.g. 'a < 8'"), ("a.b", 2, ""), ("(a + 1", 7, "close the '(' opened at column 1"),
    ("[1, 2", 6, "close the '['"), ("x <= lambda", 6, ""), ("max(a, b", 9, "close the '('"),
])
def test_error_column_and_hint(text, column, hint):
    with pytest.raises(ConstraintError, match=re.escape(f"at column {column};")) as info:
        parse_expression(text)
    assert hint in str(info.value)
    assert str(info.value).startswith(f"constraint {text!r}: ")


def test_parser_and_evaluator_never_call_eval_exec_or_compile(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("eval/exec/compile must not be used")
    for name in ("eval", "exec", "compile"):
        monkeypatch.setattr(builtins, name, boom)
    expr = parse_expression("index(order, 'i') < 2 and a ** 2 <= max(b, 3) * 4")
    assert expr.evaluate({"order": ["i", "j"], "a": 2, "b": 1}) is True


class _AnyName(dict):
    def __missing__(self, key):
        return 1


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab1.0 +-*/%<>=!()[],'\"`_notandirx\\é\n")), max_size=30)
       | st.text(max_size=20))
def test_fuzz_only_constraint_errors(text):
    try:
        expr = parse_expression(text)
    except ConstraintError as exc:
        assert "\n" not in str(exc)
        return
    try:
        expr.evaluate(_AnyName())
    except ConstraintError as exc:
        assert "\n" not in str(exc)


# --------------------------------------------------------------------------- Constraint policy
def test_undefined_arithmetic_counts_as_violated():
    c = Constraint("n % t == 0")
    assert not c.is_satisfied({"n": 12, "t": 0})
    assert c.is_satisfied({"n": 12, "t": 4})
    assert not Constraint("log2(x) < 3").is_satisfied({"x": 0})
    assert not Constraint("x ** 0.5 > 0").is_satisfied({"x": -4})  # complex result
    assert not Constraint("2 ** x > 1").is_satisfied({"x": 10 ** 7})  # refuses to build huge ints
    with pytest.raises(UndefinedValueError):
        parse_expression("1 / t").evaluate({"t": 0})


@pytest.mark.parametrize("text, config, fragment", [
    ("order < 3", {"order": [1, 2]}, "'<' not supported"),
    ("s * 2 > 1", {"s": "ab"}, "needs numbers"),
    ("index(order, 'z') < 1", {"order": ["i"]}, "is not an item"),
    ("q < 1", {}, "parameter 'q' is not in the configuration"),
    ("len(x) > 1", {"x": 5}, "len() needs"),
    ("1 in x", {"x": 5}, "'in' needs a list"),
])
def test_misuse_raises_naming_the_constraint(text, config, fragment):
    c = Constraint(text, name="my-rule")
    with pytest.raises(ConstraintError) as info:
        c.is_satisfied(config)
    assert not isinstance(info.value, UndefinedValueError)
    assert "'my-rule'" in str(info.value) and fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_non_boolean_expression_result_is_an_error():
    with pytest.raises(ConstraintError, match="not a boolean"):
        Constraint("order").is_satisfied({"order": [1]})
    assert Constraint("a - 3").is_satisfied({"a": 4}) is True  # numbers use Python truthiness


def test_callable_constraints():
    c = Constraint(lambda cfg: cfg["x"] < cfg["y"], reads=["x", "y"], name="x_below_y")
    assert c.reads == ("x", "y") and c.name == "x_below_y" and not c.is_expression
    assert c.is_satisfied({"x": 1, "y": 2}) and not c.is_satisfied({"x": 2, "y": 1})

    def fragile(cfg):
        raise RuntimeError("boom")
    with pytest.raises(ConstraintError, match="'fragile' raised RuntimeError: boom") as info:
        Constraint(fragile, reads=["x"]).is_satisfied({"x": 1})
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(ConstraintError, match="declare every parameter"):
        Constraint(lambda cfg: cfg["z"] > 0, reads=["x"]).is_satisfied({"x": 1})
    with pytest.raises(ConstraintError, match="returned None"):
        Constraint(lambda cfg: None, reads=["x"]).is_satisfied({"x": 1})


def test_reads_rules():
    with pytest.raises(ConstraintError, match="needs reads="):
        Constraint(lambda cfg: True)
    with pytest.raises(ConstraintError, match=r"omits \['b'\]"):
        Constraint("a < b", reads=["a"])
    with pytest.raises(ConstraintError, match="got the string"):
        Constraint("a < 1", reads="a")
    assert Constraint("a < b").reads == ("a", "b")
    assert Constraint("b < a", reads=["b", "a", "c", "a"]).reads == ("b", "a", "c")
    with pytest.raises(ConstraintError, match="string or a callable"):
        Constraint(42)


def test_json_round_trip_and_callables_refuse_to_serialize():
    c = Constraint("a * b <= 64", reads=["a", "b", "c"], name="area")
    data = c.to_json()
    assert data == {"expression": "a * b <= 64", "reads": ["a", "b", "c"], "name": "area"}
    back = Constraint.from_json(data)
    assert back.to_json() == data and back.is_satisfied({"a": 8, "b": 8}) and back.name == "area"
    assert Constraint.from_json("a < 2").reads == ("a",)
    with pytest.raises(ConstraintError, match="cannot be serialized"):
        Constraint(lambda cfg: True, reads=["a"], name="py").to_json()
    assert Constraint(lambda cfg: True, reads=["b", "a"], name="py").info() == {"callable": "py", "reads": ["a", "b"]}
    with pytest.raises(ConstraintError, match="'expression' string"):
        Constraint.from_json({"reads": ["a"]})

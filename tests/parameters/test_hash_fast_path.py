"""The search driver's hash fast path equals the canonical hash for every legal configuration."""
import random

from hypothesis import given, settings, strategies as st

from tunerlib.parameters import (BooleanArray, BooleanParameter, ConfigurationManipulator, EnumParameter,
                                 FloatArray, FloatParameter, IntegerArray, IntegerParameter,
                                 LogFloatParameter, OrdinalParameter, PermutationParameter,
                                 PowerOfTwoParameter, ScheduleParameter, SelectorParameter,
                                 SwitchParameter)


def space():
    return ConfigurationManipulator([
        IntegerParameter("i", -5, 5), FloatParameter("f", -1.0, 1.0), LogFloatParameter("lf", 1e-3, 10.0),
        PowerOfTwoParameter("p2", 1, 64), BooleanParameter("b"), SwitchParameter("s", 3),
        EnumParameter("e", ["x", 1, 2.5]), OrdinalParameter("o", [1, 2, 4, 8]),
        PermutationParameter("perm", list(range(7))), ScheduleParameter("sch", ["a", "b", "c"], {"c": ["a"]}),
        SelectorParameter("sel", ["u", "v", "w"], 100), BooleanArray("ba", 4), FloatArray("fa", 3, 0.0, 1.0),
        IntegerArray("ia", 3, 0, 9)])


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2 ** 32))
def test_hash_valid_equals_hash_config(seed):
    m = space()
    cfg = m.random(random.Random(seed))
    m.validate(cfg)
    assert m.hash_valid(cfg) == m.hash_config(cfg)


def test_int_value_for_float_parameter_hashes_like_the_float():
    m = space()
    cfg = m.seed_config()
    cfg["f"] = 1
    m.validate(cfg)
    other = dict(cfg, f=1.0)
    assert m.hash_valid(cfg) == m.hash_valid(other) == m.hash_config(other)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["min", "max", "zero", "negative zero"]), st.sampled_from(["i", "f", "lf", "p2"]))
def test_bounds_and_signed_zero_hash_like_the_canonical_form(where, name):
    """Values a parameter's normal type passes through unchanged (its bounds, 0.0 and -0.0) hash as
    ``hash_config`` does."""
    m = space()
    param = m.parameters_by_name()[name] if hasattr(m, "parameters_by_name") else m._by_name[name]
    value = {"min": param.min, "max": param.max, "zero": 0.0, "negative zero": -0.0}[where]
    cfg = dict(m.seed_config(), **{name: type(param.min)(value) if where.endswith("zero") else value})
    if not m.is_valid(cfg):
        return
    assert m.hash_valid(cfg) == m.hash_config(cfg)

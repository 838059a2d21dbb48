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

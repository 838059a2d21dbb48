"""json_copy gives what a JSON column gives back: json.loads of the stored text."""
import json
import math

from hypothesis import given, strategies as st

from tunerlib.db.jsoncopy import is_plain_json, json_copy
from tunerlib.db.migrations import json_dumps

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_VALUES = st.recursive(_SCALARS | st.tuples(_SCALARS), lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4), max_leaves=12)


@given(_VALUES)
def test_a_copy_equals_the_decoded_text_and_shares_no_list_or_dict(value):
    copied = json_copy(value)
    assert copied == json.loads(json_dumps(value))
    assert json_dumps(copied) == json_dumps(json.loads(json_dumps(value)))  # types too (1 vs 1.0, True vs 1)
    if isinstance(value, (list, dict)):
        assert copied is not value


def test_tuples_int_keys_and_other_classes_go_through_json():
    class Number(float):
        pass
    assert json_copy({"t": (1, 2), 3: "x", "n": Number(1.5)}) == {"t": [1, 2], "3": "x", "n": 1.5}
    assert type(json_copy({"n": Number(1.5)})["n"]) is float
    assert math.isnan(json_copy({"v": float("nan")})["v"])
    assert str(json_copy(-0.0)) == "-0.0"


@given(_VALUES)
def test_a_plain_value_is_made_of_json_types_only_and_encodes(value):
    assert is_plain_json(value) == _json_types_only(value)
    if is_plain_json(value):
        assert json.loads(json_dumps(value)) == value


def _json_types_only(value):
    if type(value) is dict:
        return all(type(k) is str and _json_types_only(v) for k, v in value.items())
    if type(value) is list:
        return all(_json_types_only(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def test_a_value_nested_deeper_than_32_levels_is_not_plain():
    value = 1
    for _ in range(33):
        value = [value]
    assert not is_plain_json(value)
    assert is_plain_json([[1.5, "a", None, True, {"k": [2]}]])

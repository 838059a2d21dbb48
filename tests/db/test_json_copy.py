"""json_copy gives what a JSON column gives back: json.loads of the stored text."""
import json
import math

from hypothesis import given, strategies as st

from tunerlib.db.jsoncopy import json_copy
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

"""compact_encoder: the text of json.JSONEncoder.encode with the same options, from an encoder built once."""
import json
import math
from json import encoder as json_encoder

import pytest
from hypothesis import given, strategies as st

from tunerlib.db.migrations import json_dumps
from tunerlib.parameters import ConfigurationManipulator, FloatParameter
from tunerlib.parameters.jsontext import compact_encoder

OPTIONS = [dict(sort_keys=s, ensure_ascii=a, allow_nan=n) for s in (False, True) for a in (False, True)
           for n in (False, True)]

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20)


def _reference(options):
    return json.JSONEncoder(separators=(",", ":"), **options).encode


@pytest.mark.parametrize("options", OPTIONS)
@given(value=values)
def test_the_text_is_json_encoder_s(options, value):
    assert compact_encoder(**options)(value) == _reference(options)(value)


def _outcome(encode, value):
    try:
        return encode(value)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)


@pytest.mark.parametrize("options", OPTIONS)
def test_what_cannot_be_encoded_raises_as_json_encoder_does(options):
    looped: list = []
    looped.append(looped)
    for value in ({"x": math.nan}, [math.inf], {"x": object()}, {1.5: 2}, looped):
        assert _outcome(compact_encoder(**options), value) == _outcome(_reference(options), value)


def test_an_encoding_that_failed_part_way_leaves_no_container_marked():
    encode = compact_encoder()
    value = {"a": [1, object()]}
    with pytest.raises(TypeError):
        encode(value)
    value["a"][1] = 2          # the same dict and list, now encodable: not taken for a circular reference
    assert encode(value) == '{"a":[1,2]}'


def test_the_hot_path_builds_no_encoder_per_call(monkeypatch):
    """The stored JSON columns and the configuration hash encode through encoders built once."""
    built = []
    make = json_encoder.c_make_encoder
    monkeypatch.setattr(json_encoder, "c_make_encoder", lambda *args: built.append(1) or make(*args))
    manipulator = ConfigurationManipulator([FloatParameter(f"x{i}", -5.0, 5.0) for i in range(4)])
    config = {f"x{i}": 0.25 * i for i in range(4)}
    for _ in range(3):
        json_dumps(config)
        manipulator.hash_valid(config)
    assert built == []



class _PausingDict(dict):
    """A dict whose first ``items()`` (which the C encoder calls on a dict subclass) waits until
    another thread has encoded: an encoding paused inside its containers."""

    def __init__(self, *args, entered, resume):
        super().__init__(*args)
        self.entered, self.resume = entered, resume

    def items(self):
        if not self.entered.is_set():
            self.entered.set()
            self.resume.wait(10)
        return super().items()


def test_an_encoding_on_another_thread_while_one_is_paused_is_not_circular():
    """Each thread encodes through its own markers: the containers a paused encoding is inside are
    not taken for a circular reference by another thread encoding the same value."""
    import threading
    entered, resume = threading.Event(), threading.Event()
    shared = [_PausingDict({"x": 1}, entered=entered, resume=resume)]
    encode, texts = compact_encoder(), []
    paused = threading.Thread(target=lambda: texts.append(encode(shared)))
    paused.start()
    assert entered.wait(10)
    try:
        assert encode(shared) == '[{"x":1}]'
    finally:
        resume.set()
        paused.join()
    assert texts == ['[{"x":1}]']


def test_the_encoder_is_no_closure():
    """psycopg keys its JSON dumpers on the dumps function and, for a closure, warns of a resource leak
    and builds a dumper per value: the encoder handed to the PostgreSQL engine is a callable object."""
    encode = compact_encoder(ensure_ascii=False)
    assert getattr(encode, "__closure__", None) is None
    assert json_dumps is not None and getattr(json_dumps, "__closure__", None) is None

"""Representation strings: canonical, order- and name-independent, decodable; the parameter distance."""
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from tunerlib.parameters import (BooleanArray, BooleanParameter, ConfigurationManipulator, EnumParameter,
                                 FloatParameter, IntegerParameter, PermutationParameter)
from tunerlib.parameters import SelectorParameter
from tunerlib.store.representation import (RepresentationError, decode, distance, encode, encode_entries,
                                           type_counts)

_MAKERS = [lambda n: IntegerParameter(n, 0, 9), lambda n: FloatParameter(n, 0.0, 1.0),
           lambda n: BooleanParameter(n), lambda n: EnumParameter(n, ["a", "b"]),
           lambda n: PermutationParameter(n, [1, 2, 3]), lambda n: BooleanArray(n, 4),
           lambda n: SelectorParameter(n, ["x", "y", "z"], 100)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, len(_MAKERS) - 1), min_size=1, max_size=12), st.randoms(use_true_random=False))
def test_encoding_round_trips_and_ignores_order_and_names(kinds, rng):
    params = [_MAKERS[k](f"p{i}") for i, k in enumerate(kinds)]
    text = encode(ConfigurationManipulator(params))
    shuffled = list(params)
    rng.shuffle(shuffled)
    renamed = [_MAKERS[k](f"other{i}") for i, k in enumerate(kinds)]
    assert encode(ConfigurationManipulator(shuffled)) == text == encode(ConfigurationManipulator(renamed))
    assert encode_entries(decode(text)) == text
    counts = type_counts(decode(text))
    for kind, n in Counter(type(p).__name__ for p in params).items():
        assert counts[kind] >= n  # sub-parameters (array elements) may add to a type


def test_counts_include_sub_parameters():
    space = ConfigurationManipulator([BooleanArray("a", 100), BooleanParameter("b"),
                                      SelectorParameter("s", ["x", "y", "z"], 64)])
    text = encode(space)
    assert text == ('[[["BooleanArray",[["BooleanParameter"],100]],1],[["BooleanParameter"],1],'
                    '[["SelectorParameter",[["LogIntegerParameter"],2]],1]]')
    assert type_counts(decode(text)) == {"BooleanArray": 1, "BooleanParameter": 101, "SelectorParameter": 1,
                                         "LogIntegerParameter": 2}


@pytest.mark.parametrize("bad", ["", "{}", "[1]", '[[["X"],0]]', '[[[],1]]', '[[["X"],true]]', "[[[1],1]]"])
def test_malformed_strings_are_one_line_errors(bad):
    with pytest.raises(RepresentationError) as info:
        decode(bad)
    assert "\n" not in str(info.value)


def test_distance_is_zero_for_equal_structures_and_prefers_supersets():
    a = {"PermutationParameter": 1}
    assert distance(a, {"PermutationParameter": 1}) == 0
    superset = {"PermutationParameter": 1, "BooleanParameter": 3}
    subset_of_b = {"IntegerParameter": 10}
    big = {"PermutationParameter": 1, "IntegerParameter": 10}
    assert distance(big, {"PermutationParameter": 1, "IntegerParameter": 10, "BooleanParameter": 3}) \
        < distance(big, {"PermutationParameter": 1})
    assert distance(a, superset) == 1.0
    assert distance(a, subset_of_b) == pytest.approx(1.0 + 1.0)  # a's type missing (1^2) + b's extra (1)
    assert distance({"IntegerParameter": 100}, {"IntegerParameter": 10}) == pytest.approx(1.0)

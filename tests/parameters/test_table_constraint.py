"""TableConstraint: membership, sampling from the rows, and the space identity."""
import collections
import random

import pytest
from hypothesis import given, settings, strategies as st
from lazystats import chisquare

from tunerlib.parameters import (ConfigurationError, ConfigurationManipulator, ConstraintError,
                                 IntegerParameter, PermutationParameter, TableConstraint)


def _space(rows, extra=()):
    m = ConfigurationManipulator([IntegerParameter("a", 0, 10**6), IntegerParameter("b", 0, 10**6),
                                  PermutationParameter("p", [0, 1, 2]), IntegerParameter("free", 0, 3)])
    m.add_constraint(TableConstraint(["a", "b", "p"], rows))
    for c in extra:
        m.add_constraint(c)
    return m


ROWS = st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50), st.permutations([0, 1, 2])),
                min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(rows=ROWS, seed=st.integers(0, 2**32 - 1))
def test_random_configurations_are_rows_that_satisfy_the_other_constraints(rows, seed):
    legal = {(a, b, tuple(p)) for a, b, p in rows if a <= b}
    m = _space(rows, ["a <= b"])
    rng = random.Random(seed)
    if not legal:
        with pytest.raises(ConfigurationError, match="no row of the table constraint"):
            m.random(rng)
        return
    for _ in range(20):
        cfg = m.random(rng)
        assert (cfg["a"], cfg["b"], tuple(cfg["p"])) in legal
        assert m.is_feasible(cfg)


@settings(max_examples=60, deadline=None)
@given(rows=ROWS, probe=st.tuples(st.integers(0, 50), st.integers(0, 50), st.permutations([0, 1, 2])))
def test_membership_is_row_lookup(rows, probe):
    m = _space(rows)
    a, b, p = probe
    expected = (a, b, tuple(p)) in {(x, y, tuple(q)) for x, y, q in rows}
    assert m.is_feasible({"a": a, "b": b, "p": list(p), "free": 0}) is expected


def test_rows_are_drawn_uniformly():
    rows = [(i, i + 1, [0, 1, 2]) for i in range(8)]
    m = _space(rows)
    rng = random.Random(3)
    counts = collections.Counter(m.random(rng)["a"] for _ in range(4000))
    assert sorted(counts) == list(range(8))
    assert chisquare([counts[i] for i in range(8)]).pvalue > 0.001


def test_returned_permutations_do_not_alias_the_table():
    m = _space([(1, 2, [2, 0, 1])])
    cfg = m.random(random.Random(0))
    cfg["p"].reverse()
    assert m.random(random.Random(0))["p"] == [2, 0, 1]


def test_bad_tables_get_one_line_errors():
    with pytest.raises(ConstraintError, match="has 2 values for 3 parameters"):
        TableConstraint(["a", "b", "p"], [(1, 2)])
    with pytest.raises(ConstraintError, match="has no rows"):
        TableConstraint(["a"], [])


def test_space_identity_depends_on_the_rows_and_is_stable():
    one = _space([(1, 2, [0, 1, 2]), (3, 4, [1, 0, 2])]).parameter_info()
    same = _space([(3, 4, [1, 0, 2]), (1, 2, [0, 1, 2])]).parameter_info()
    other = _space([(1, 2, [0, 1, 2]), (3, 5, [1, 0, 2])]).parameter_info()
    assert one == same and one != other

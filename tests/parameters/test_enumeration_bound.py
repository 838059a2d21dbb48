"""The chain of trees bounds a group's enumeration by visited nodes, never by time: whether a group is
enumerated or sampled by rejection, and so every suggestion drawn from the space, depends on the space
and the seed alone."""
import itertools
import random
import time
import warnings

import pytest

from tunerlib.parameters import ConfigurationManipulator, FeasibleSpace, IntegerParameter
from tunerlib.parameters.trees import MAX_NODES, RejectionGroup, TooLarge, TreeGroup
from tunerlib.techniques import create_technique
from tunerlib.techniques.bo.options import NODES_PER_SECOND, BOOptions


def _space() -> ConfigurationManipulator:
    """Three linked integers 0..19 (8,420 nodes to enumerate, more than one clock check's 4,096)."""
    m = ConfigurationManipulator([IntegerParameter(n, 0, 19) for n in "abc"] + [IntegerParameter("d", 0, 9)])
    m.add_constraint("a + b + c <= 30")
    return m


@pytest.fixture
def jumping_clock(monkeypatch):
    """Every clock reading is a minute after the previous one: a time bound would always be past."""
    ticks = itertools.count()
    for name in ("monotonic", "perf_counter", "time", "process_time"):
        monkeypatch.setattr(time, name, lambda: 60.0 * next(ticks))


def _draws(space: FeasibleSpace, seed: int = 3) -> list:
    rng = random.Random(seed)
    return [space.random_config(rng) for _ in range(20)]


def test_enumeration_ignores_the_clock(jumping_clock):
    space = FeasibleSpace(_space())
    assert isinstance(space.group_of["a"], TreeGroup) and not space.rejection
    assert space.group_of["a"].nodes == 8420 < MAX_NODES


@pytest.mark.parametrize("bound, kind", [(8420, TreeGroup), (8419, RejectionGroup)])
def test_the_node_bound_is_exact_and_its_fallback_repeats(jumping_clock, bound, kind):
    first, second = FeasibleSpace(_space(), max_nodes=bound), FeasibleSpace(_space(), max_nodes=bound)
    assert isinstance(first.group_of["a"], kind) and isinstance(second.group_of["a"], kind)
    assert _draws(first) == _draws(second)
    assert all(c["a"] + c["b"] + c["c"] <= 30 for c in _draws(first))


def test_too_large_names_the_node_bound():
    m = _space()
    params = [m.parameter(n) for n in "abc"]
    with pytest.raises(TooLarge, match="more than 100 nodes"):
        TreeGroup(params, [p.domain() for p in params], list(m.constraints), max_nodes=100)


def test_bo_counts_nodes_and_reads_the_deprecated_seconds_as_nodes():
    assert BOOptions().enumeration_nodes() == MAX_NODES
    assert BOOptions(max_enumeration_nodes=1234).enumeration_nodes() == 1234
    with pytest.warns(DeprecationWarning, match="max_enumeration_nodes"):
        tech = create_technique(["BayesianOptimization;max_enumeration_seconds,2"])
    assert tech.options.enumeration_nodes() == 2 * NODES_PER_SECOND
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        create_technique(["BayesianOptimization;max_enumeration_nodes,1000"])

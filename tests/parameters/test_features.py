"""Structural feature maps: indices in range, tour costs exactly additive, precedence and one-hot counts."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters import (BooleanArray, BooleanParameter, EnumParameter, FloatArray, FloatParameter,
                                 IntegerArray, IntegerParameter, LogFloatParameter, PermutationParameter,
                                 ScheduleParameter, SelectorParameter, SwitchParameter)
from tunerlib.parameters.features import FeatureLayout, PermutationFeatures, pair_index


@given(st.integers(2, 40))
def test_pair_index_is_a_bijection_onto_the_pairs(n):
    a, b = np.triu_indices(n, 1)
    idx = pair_index(a, b, n)
    assert sorted(idx.tolist()) == list(range(n * (n - 1) // 2))
    assert (pair_index(b, a, n) == idx).all()


def _weights_from_matrix(fmap, M):
    """Feature weights that make the model value of a tour its closed length under ``M``."""
    n = fmap.n
    w = np.zeros(fmap.size)
    a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    off = ~np.eye(n, dtype=bool)
    w[fmap.pairs + (a * n + b)[off]] = M[off]  # direction features carry the whole cost
    return w


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 25), st.randoms(use_true_random=False), st.booleans())
def test_a_tour_length_is_additive_over_direction_and_adjacency_features(n, rnd, symmetric):
    param = PermutationParameter("tour", [f"c{i}" for i in range(n)])
    fmap = PermutationFeatures(param, precedence=False)
    rng = np.random.default_rng(rnd.randrange(2 ** 32))
    M = rng.random((n, n))
    if symmetric:
        M = M + M.T
    tour = param.random_value(rnd)
    t = fmap.positions(tour)
    length = M[t, np.roll(t, -1)].sum()
    idx, val = fmap.active(tour)
    assert idx.size == 2 * n and (val == 1).all()
    assert idx.min() >= 0 and idx.max() < fmap.size
    assert np.isclose(val @ _weights_from_matrix(fmap, M)[idx], length)
    if symmetric:  # the same length from the undirected adjacency block alone
        w = np.zeros(fmap.size)
        iu = np.triu_indices(n, 1)
        w[pair_index(iu[0], iu[1], n)] = M[iu]
        assert np.isclose(val @ w[idx], length)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12), st.randoms(use_true_random=False))
def test_precedence_features_mark_exactly_the_pairs_in_order(n, rnd):
    param = PermutationParameter("order", list(range(n)))
    fmap = PermutationFeatures(param, precedence=True)
    order = param.random_value(rnd)
    idx, _ = fmap.active(order)
    prec = set((idx[idx >= fmap.pairs + n * n] - fmap.pairs - n * n).tolist())
    pos = {v: i for i, v in enumerate(order)}
    expected = {int(pair_index(np.array(a), np.array(b), n)) for a, b in itertools.combinations(range(n), 2)
                if pos[a] < pos[b]}
    assert prec == expected


def test_precedence_is_on_by_default_only_for_small_permutations():
    assert PermutationFeatures(PermutationParameter("p", list(range(10)))).precedence
    assert not PermutationFeatures(PermutationParameter("p", list(range(100)))).precedence


def _mixed():
    return [PermutationParameter("order", list("abcde")), EnumParameter("e", ["x", "y", "z"]),
            BooleanParameter("b"), SwitchParameter("s", 4), IntegerParameter("i", 1, 9),
            LogFloatParameter("lf", 1e-3, 1.0), FloatParameter("f", -2.0, 2.0), BooleanArray("ba", 3),
            IntegerArray("ia", 2, 0, 7), FloatArray("fa", 2, -1.0, 1.0),
            ScheduleParameter("sched", [1, 2, 3], deps={3: [1]}),
            SelectorParameter("sel", ["u", "v"], 100)]


@settings(max_examples=50, deadline=None)
@given(st.randoms(use_true_random=False))
def test_a_mixed_layout_encodes_every_configuration_within_its_groups(rnd):
    params = _mixed()
    layout = FeatureLayout(params)
    assert layout.unmodelled == ["sel"]
    cfg = {p.name: p.random_value(rnd) for p in params}
    idx, val = layout.encode(cfg)
    assert idx.min() >= 0 and idx.max() < layout.size
    assert np.all((val >= -1) & (val <= 1))  # numbers' centred values and their products lie in [-1, 1]
    groups = {(g.parameter, g.kind): g for g in layout.groups}
    for name in ("e", "b", "s"):  # one-hot: exactly one active feature per choice
        g = groups[(name, "one-hot")]
        assert ((idx >= g.start) & (idx < g.stop)).sum() == 1
    dense = layout.dense(cfg)
    assert dense.shape == (layout.size,) and np.isclose(dense.sum(), val.sum())


@pytest.mark.parametrize("value,expected", [(-2.0, -1.0), (2.0, 1.0), (0.0, 0.0), (1.0, 0.5)])
def test_numbers_map_to_their_centred_unit_value_and_its_square(value, expected):
    layout = FeatureLayout([FloatParameter("f", -2.0, 2.0)])
    idx, val = layout.encode({"f": value})
    assert idx.tolist() == [0, 1] and np.allclose(val, [expected, expected ** 2])

"""BO distances: each per-type distance equals its definition, in bulk and on random pairs."""
import itertools
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters import (BooleanArray, BooleanParameter, ConfigurationManipulator, EnumParameter,
                                 FloatArray, FloatParameter, IntegerArray, IntegerParameter,
                                 LogFloatParameter, OrdinalParameter, PermutationParameter,
                                 PowerOfTwoParameter, ScheduleParameter, SelectorParameter, SwitchParameter)
from tunerlib.techniques.bo.distances import PermutationEncoder, SpaceEncoder, make_encoder


def brute_spearman(p, q):
    n = len(p)
    pos_p = {x: i for i, x in enumerate(p)}
    pos_q = {x: i for i, x in enumerate(q)}
    total = sum((pos_p[x] - pos_q[x]) ** 2 for x in p)
    return total / (n * (n * n - 1) / 3) if n > 1 else 0.0


def brute_kendall(p, q):
    n = len(p)
    pos_q = {x: i for i, x in enumerate(q)}
    disc = sum(1 for a, b in itertools.combinations(p, 2) if pos_q[a] > pos_q[b])  # a before b in p
    return disc / (n * (n - 1) / 2) if n > 1 else 0.0


def brute_hamming(p, q):
    return sum(1 for a, b in zip(p, q) if a != b) / len(p)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 8).flatmap(lambda n: st.lists(st.permutations([f"i{k}" for k in range(n)]),
                                                    min_size=1, max_size=6)))
def test_bulk_permutation_distances_equal_definitions(perms):
    items = sorted(perms[0])
    param = PermutationParameter("p", items)
    for kind, ref in (("spearman", brute_spearman), ("kendall", brute_kendall), ("hamming", brute_hamming)):
        enc = PermutationEncoder(param, kind)
        E = enc.encode(perms)
        D = enc.sqdist(E, E)
        for a, b in itertools.product(range(len(perms)), repeat=2):
            assert math.isclose(D[a, b], ref(perms[a], perms[b]), abs_tol=1e-9), (kind, perms[a], perms[b])


def test_extremes_are_normalised_to_one():
    p = list(range(6))
    param = PermutationParameter("p", p)
    for kind, far in (("spearman", p[::-1]), ("kendall", p[::-1]), ("hamming", p[1:] + p[:1])):
        enc = PermutationEncoder(param, kind)
        assert math.isclose(enc.sqdist(enc.encode([p]), enc.encode([far]))[0, 0], 1.0), kind


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_primitive_and_categorical_distances(data):
    params = [IntegerParameter("i", 0, 10), FloatParameter("f", -2.0, 2.0), LogFloatParameter("lf", 1e-3, 10.0),
              PowerOfTwoParameter("p2", 1, 256), OrdinalParameter("o", [1, 2, 4, 8]),
              EnumParameter("e", ["a", "b", 3]), BooleanParameter("b"), SwitchParameter("s", 3)]
    import random
    rng = random.Random(data.draw(st.integers(0, 10 ** 6)))
    vals = {p.name: [p.random_value(rng) for _ in range(5)] for p in params}
    for p in params:
        e = make_encoder(p)
        E = e.encode(vals[p.name])
        D = e.sqdist(E, E)
        for a, b in itertools.product(range(5), repeat=2):
            va, vb = vals[p.name][a], vals[p.name][b]
            if p.kind in ("enum", "bool", "switch"):
                want = 0.0 if va == vb and type(va) is type(vb) else 1.0
            else:
                want = (p.get_unit_value({p.name: va}) - p.get_unit_value({p.name: vb})) ** 2
            assert math.isclose(D[a, b], want, abs_tol=1e-12), (p, va, vb)


def test_log_and_pow2_use_the_log_scale():
    e = make_encoder(PowerOfTwoParameter("p", 1, 1024))
    E = e.encode([2, 4, 512, 1024])
    D = e.sqdist(E, E)
    assert math.isclose(D[0, 1], D[2, 3])


def test_arrays_and_selector_mean_per_element():
    ba = make_encoder(BooleanArray("ba", 4))
    E = ba.encode([[True, False, False, False], [False, False, False, True]])
    assert math.isclose(ba.sqdist(E, E)[0, 1], 0.5)
    fa = make_encoder(FloatArray("fa", 2, 0.0, 2.0))
    E = fa.encode([[0.0, 0.0], [2.0, 1.0]])
    assert math.isclose(fa.sqdist(E, E)[0, 1], (1.0 + 0.25) / 2)
    ia = make_encoder(IntegerArray("ia", 3, 0, 3))
    E = ia.encode([[0, 0, 0], [0, 0, 0]])
    assert ia.sqdist(E, E)[0, 1] == 0.0
    sel = make_encoder(SelectorParameter("s", ["a", "b", "c"], 100))
    v1 = {"order": ["a", "b", "c"], "cutoffs": [0, 0]}
    v2 = {"order": ["c", "b", "a"], "cutoffs": [100, 100]}
    E = sel.encode([v1, v2])
    assert math.isclose(sel.sqdist(E, E)[0, 1], 1.0)


def test_space_encoder_stack_shape_and_schedule_override():
    m = ConfigurationManipulator([IntegerParameter("i", 0, 3), ScheduleParameter("s", ["x", "y", "z"], {"z": ["x"]}),
                                  PermutationParameter("p", [1, 2, 3])])
    enc = SpaceEncoder(m, "spearman", {"p": "kendall"})
    assert [type(e).__name__ for e in enc.encoders][1:] == ["PermutationEncoder"] * 2
    assert enc.encoders[2].kind == "kendall" and enc.encoders[1].kind == "spearman"
    import random
    rng = random.Random(0)
    cfgs = [m.random(rng) for _ in range(7)]
    A = enc.encode(cfgs)
    D = enc.sqdists(A, enc.take(A, slice(0, 3)))
    assert D.shape == (3, 7, 3)
    assert np.all(D >= 0) and np.all(D <= 1)
    assert np.allclose(D[:, :3, :3].diagonal(axis1=1, axis2=2), 0)

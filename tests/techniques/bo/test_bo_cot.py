"""Chain of trees: uniform feasible sampling, membership, feasible neighbours, fallback."""
import itertools
import logging
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from lazystats import chisquare

from tunerlib.parameters import (BooleanParameter, ConfigurationManipulator, EnumParameter, FloatParameter,
                                 IntegerParameter, OrdinalParameter, PermutationParameter,
                                 PowerOfTwoParameter)
from tunerlib.parameters.value_keys import value_key
from tunerlib.parameters import FeasibleSpace
from tunerlib.parameters.trees import RejectionGroup, TreeGroup
from tunerlib.techniques.bo.neighbours import NeighbourGenerator


def config_key(names, config):
    """A hashable identity of a legal configuration."""
    return tuple(value_key(config[n]) for n in names)


def paper_space():
    """BaCO §4.2's example: p1>=p2, p4>=p3, p5>=2*p4 (3 * 7 = 21 feasible configurations), plus a
    free boolean."""
    m = ConfigurationManipulator([OrdinalParameter("p1", [2, 4]), OrdinalParameter("p2", [2, 4]),
                                  OrdinalParameter("p3", [1, 4]), OrdinalParameter("p4", [1, 2, 4]),
                                  OrdinalParameter("p5", [2, 4, 8]), BooleanParameter("free")])
    m.add_constraint("p1 >= p2")
    m.add_constraint("p4 >= p3")
    m.add_constraint("p5 >= 2 * p4")
    return m


def tiled_space():
    m = ConfigurationManipulator([IntegerParameter("a", 1, 16), IntegerParameter("b", 1, 16),
                                  PowerOfTwoParameter("ls", 1, 64), PowerOfTwoParameter("gs", 1, 256),
                                  EnumParameter("mode", ["x", "y"]), PermutationParameter("perm", [0, 1, 2]),
                                  FloatParameter("f", 0.0, 1.0)])
    m.add_constraint("a < b")
    m.add_constraint("gs % ls == 0 and ls <= 16")
    m.add_constraint(lambda c: c["mode"] == "x" or c["b"] > 8, reads=["mode", "b"], name="mode-y")
    m.add_constraint("index(perm, 2) != 0 or mode == 'x'")
    return m


_COT = {}


def cot_of(name):
    """Chains of trees built once per module (enumeration is the slow part)."""
    if name not in _COT:
        m = {"paper": paper_space, "tiled": tiled_space}[name]()
        _COT[name] = (m, FeasibleSpace(m))
    return _COT[name]


def all_configs(m, names):
    doms = [m.parameter(n).domain() for n in names]
    for values in itertools.product(*doms):
        yield dict(zip(names, values))


def test_paper_example_leaves_size_and_uniform_sampling():
    m = paper_space()
    cot = FeasibleSpace(m)
    assert sorted(t.size for t in cot.trees) == [3, 7]
    assert cot.size() == 21 * 2 and cot.exact_size
    samples = cot.sample(random.Random(1), np.random.default_rng(1), 8400)
    assert all(m.is_feasible(c) for c in samples)
    names = ["p1", "p2", "p3", "p4", "p5", "free"]
    counts = {}
    for c in samples:
        k = config_key(names, c)
        counts[k] = counts.get(k, 0) + 1
    feasible = [config_key(names, c) for c in all_configs(m, names) if m.is_feasible(c)]
    assert set(counts) == set(feasible) and len(feasible) == 42
    p = chisquare([counts[k] for k in feasible]).pvalue
    assert p > 1e-3, p


def test_tree_walk_would_be_biased_but_leaf_sampling_is_not():
    """Leaf sampling: P(p3 == 4) = 1/7, not the 1/2 a root-to-leaf walk would give."""
    cot = FeasibleSpace(paper_space())
    samples = cot.sample(random.Random(2), np.random.default_rng(2), 7000)
    share = sum(c["p3"] == 4 for c in samples) / len(samples)
    assert abs(share - 1 / 7) < 0.02


def test_constrained_space_sampling_is_feasible_and_uniform_over_groups():
    m, cot = cot_of("tiled")
    assert len(cot.trees) == 2 and [p.name for p in cot.free] == ["f"]
    samples = cot.sample(random.Random(7), np.random.default_rng(7), 3500)
    assert all(m.is_feasible(c) and m.is_valid(c) for c in samples)
    names = ["ls", "gs"]
    feasible = [tuple(c[n] for n in names) for c in all_configs(m, names) if m.is_feasible({**samples[0], **c})]
    counts = {k: 0 for k in feasible}
    for c in samples:
        counts[(c["ls"], c["gs"])] += 1
    assert len(feasible) == 35 and chisquare(list(counts.values())).pvalue > 1e-3


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2 ** 32))
def test_membership_agrees_with_constraint_predicates(seed):
    rng = random.Random(seed)
    for m, cot in (cot_of("paper"), cot_of("tiled")):
        for _ in range(20):
            cfg = {p.name: p.random_value(rng) for p in m.parameters}
            assert cot.is_feasible(cfg) == m.is_feasible(cfg)


def test_size_equals_brute_force_count():
    m, cot = cot_of("tiled")
    base = cot.sample(random.Random(0), np.random.default_rng(0), 1)[0]
    for tree in cot.trees:
        count = sum(1 for c in all_configs(m, tree.names) if m.is_feasible({**base, **c}))
        assert tree.size == count
    assert cot.size() == float("inf")  # the free float


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2 ** 32))
def test_alternatives_and_neighbours_stay_feasible(seed):
    m, cot = cot_of("tiled")
    rng = random.Random(seed)
    cfg = cot.sample(rng, np.random.default_rng(seed), 1)[0]
    for name in ("a", "b", "ls", "gs", "mode", "perm"):
        alts = cot.alternatives(cfg, name)
        brute = [v for v in m.parameter(name).domain()
                 if v != cfg[name] and m.is_feasible({**cfg, name: v})]
        assert alts == brute
    gen = NeighbourGenerator(m, cot, per_param=6)
    nbs = gen.neighbours(cfg, rng)
    assert nbs
    for i, v, nb in nbs:
        assert m.is_feasible(nb) and m.is_valid(nb)
        assert [n for n in m.names if nb[n] != cfg[n]] == [m.names[i]] and nb[m.names[i]] == v


def test_fallback_to_rejection_sampling_is_logged_once(caplog):
    m = tiled_space()
    with caplog.at_level(logging.DEBUG):
        cot = FeasibleSpace(m, max_leaves=40)
        assert cot.group_of              # the chain of trees is built on first use
    warnings = [r for r in caplog.records if "rejection" in r.getMessage()]
    assert len(warnings) == 1 and "'a'" in warnings[0].getMessage()
    assert any(isinstance(g, RejectionGroup) for g in cot.group_of.values())
    assert any(isinstance(g, TreeGroup) for g in cot.group_of.values())
    samples = cot.sample(random.Random(4), np.random.default_rng(4), 300)
    assert all(m.is_feasible(c) for c in samples)
    rng = random.Random(5)
    for _ in range(300):
        cfg = {p.name: p.random_value(rng) for p in m.parameters}
        assert cot.is_feasible(cfg) == m.is_feasible(cfg)
    assert not cot.exact_size


def test_float_in_a_constrained_group_uses_rejection():
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), FloatParameter("y", 0.0, 1.0)])
    m.add_constraint("x + y <= 1")
    cot = FeasibleSpace(m)
    assert not cot.trees and len(cot.rejection) == 1
    assert all(c["x"] + c["y"] <= 1 for c in cot.sample(random.Random(0), np.random.default_rng(0), 200))

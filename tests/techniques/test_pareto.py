"""Pareto helpers against brute-force references: dominance, fronts, crowding, exact hypervolume."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tunerlib.techniques.pareto import (crowding_distance, dominates, hypervolume,
                                        hypervolume_improvement, non_dominated, non_dominated_sort)

# small integer grids make ties and duplicates common
coord = st.integers(min_value=0, max_value=5).map(float)


def point_sets(dim, max_size=7):
    return st.lists(st.lists(coord, min_size=dim, max_size=dim), min_size=0, max_size=max_size)


def brute_front(points):
    return [i for i, p in enumerate(points)
            if not any(dominates(q, p) for j, q in enumerate(points) if j != i)]


def inclusion_exclusion_hv(points, ref):
    """Exact hypervolume: union of the boxes [p, ref] by inclusion-exclusion over all subsets."""
    boxes = [p for p in points if all(x < r for x, r in zip(p, ref))]
    total = 0.0
    for k in range(1, len(boxes) + 1):
        for subset in itertools.combinations(boxes, k):
            corner = np.max(np.asarray(subset), axis=0)
            total += (-1) ** (k + 1) * float(np.prod(np.asarray(ref) - corner))
    return total


def test_dominates_by_hand():
    assert dominates((1, 2), (2, 2))
    assert not dominates((1, 2), (1, 2))          # equal: no strict improvement
    assert not dominates((1, 3), (2, 2))          # trade-off
    assert dominates((1, 1, 1), (1, 1, 2))
    with pytest.raises(ValueError):
        dominates((1, 2), (1, 2, 3))


def test_ties_and_duplicates_by_hand():
    pts = [(1.0, 3.0), (1.0, 3.0), (2.0, 2.0), (2.0, 3.0), (3.0, 1.0)]
    assert non_dominated(pts) == [0, 1, 2, 4]
    assert non_dominated_sort(pts) == [[0, 1, 2, 4], [3]]
    assert hypervolume(pts, (4, 4)) == pytest.approx(3 + 2 + 1)   # staircase of three unit-wide steps
    assert hypervolume_improvement(pts, (1.0, 3.0), (4, 4)) == 0.0
    assert hypervolume_improvement(pts, (1.0, 1.0), (4, 4)) == pytest.approx(9 - 6)


def test_points_outside_reference_and_empty():
    assert hypervolume([], (1, 1)) == 0.0
    assert hypervolume([(2.0, 0.0)], (1, 1)) == 0.0
    assert hypervolume([(1.0, 0.0)], (1, 1)) == 0.0               # on the boundary: no volume
    assert non_dominated([]) == [] and non_dominated_sort([]) == []
    with pytest.raises(ValueError):
        hypervolume([(0.0, 0.0)], (1, 1, 1))


def test_infinite_values_are_dominated():
    pts = [(math.inf, math.inf), (1.0, 2.0), (2.0, math.inf)]
    assert non_dominated(pts) == [1]
    assert hypervolume(pts, (3, 3)) == pytest.approx(2.0)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=1, max_value=4).flatmap(point_sets))
def test_front_matches_brute_force(points):
    assert non_dominated(points) == brute_front(points)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=1, max_value=4).flatmap(point_sets))
def test_sort_partitions_into_successive_fronts(points):
    fronts = non_dominated_sort(points)
    assert sorted(i for f in fronts for i in f) == list(range(len(points)))
    remaining = list(range(len(points)))
    for front in fronts:
        sub = [points[i] for i in remaining]
        assert sorted(front) == [remaining[i] for i in brute_front(sub)]
        remaining = [i for i in remaining if i not in front]


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=4).flatmap(lambda d: st.tuples(
    point_sets(d), st.lists(st.integers(min_value=3, max_value=6).map(float), min_size=d, max_size=d))))
def test_hypervolume_matches_inclusion_exclusion(case):
    points, ref = case
    assert hypervolume(points, ref) == pytest.approx(inclusion_exclusion_hv(points, ref), abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=2, max_value=3).flatmap(lambda d: st.tuples(
    point_sets(d), st.lists(coord, min_size=d, max_size=d))))
def test_improvement_is_difference_of_volumes(case):
    front, point = case
    ref = [6.0] * len(point)
    expected = inclusion_exclusion_hv(front + [point], ref) - inclusion_exclusion_hv(front, ref)
    assert hypervolume_improvement(front, point, ref) == pytest.approx(max(0.0, expected), abs=1e-9)
    if any(dominates(q, point) or list(q) == list(point) for q in front):
        assert hypervolume_improvement(front, point, ref) == 0.0


def test_crowding_distance_by_hand():
    pts = [(0.0, 4.0), (1.0, 2.0), (3.0, 1.0), (4.0, 0.0)]
    d = crowding_distance(pts)
    assert math.isinf(d[0]) and math.isinf(d[3])
    assert d[1] == pytest.approx(3 / 4 + 3 / 4)
    assert d[2] == pytest.approx(3 / 4 + 2 / 4)
    assert np.all(np.isinf(crowding_distance([(1.0, 1.0), (2.0, 0.0)])))
    flat = crowding_distance([(1.0, 1.0), (1.0, 1.0), (1.0, 1.0)])
    assert np.isinf(flat[0]) and np.isinf(flat[2]) and flat[1] == 0.0


@given(st.lists(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, float("inf"), -float("inf")]), min_size=2,
                         max_size=2), max_size=30))
def test_two_objective_front_by_one_sort_matches_brute_force(points):
    assert non_dominated(points) == brute_front(points)

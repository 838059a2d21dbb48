"""MultiObjectiveBO: the exact EHVI against brute-force integration and sampling, the box decomposition
against the hypervolume, the training rows, determinism and batches of distinct proposals (its search
quality is measured on recorded tables by tools/bench_pareto.py)."""
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import norm

from tunerlib.parameters import ConfigurationManipulator, IntegerParameter, PowerOfTwoParameter
from tunerlib.techniques import Feedback, create_technique
from tunerlib.techniques.bo.acquisition import log_expected_improvement
from tunerlib.techniques.bo.ehvi import box_decomposition, expected_hypervolume_improvement, hypervolume_improvements
from tunerlib.techniques.bo.metric_ehvi import MetricUnits
from tunerlib.techniques.bo.multiobjective import training_rows
from tunerlib.techniques.pareto import hypervolume, hypervolume_improvement

from kit import light

coord = st.integers(min_value=0, max_value=5).map(float)


def grid_ehvi(front, mean, std, ref, cells=240):
    """EHVI by the midpoint rule over the region below ``ref`` no front point weakly dominates:
    the integral of prod_j P(Y_j <= z_j) (no box decomposition involved)."""
    d = len(ref)
    lo = np.minimum(np.min(front, axis=0) if len(front) else ref, mean - 8 * std)
    # grid lines through every front coordinate, so each cell lies wholly inside or outside the region
    axes = [np.union1d(np.linspace(lo[j], ref[j], cells + 1), [p[j] for p in front if p[j] < ref[j]])
            for j in range(d)]
    mids = [(a[1:] + a[:-1]) / 2 for a in axes]
    z = np.stack(np.meshgrid(*mids, indexing="ij"), axis=-1).reshape(-1, d)
    size = np.prod(np.stack(np.meshgrid(*[np.diff(a) for a in axes], indexing="ij"), axis=-1).reshape(-1, d), axis=1)
    free = np.ones(len(z), dtype=bool)
    for p in front:
        free &= ~np.all(z >= p, axis=1)
    weight = np.prod(norm.cdf((z - mean) / std), axis=1)
    return float(np.sum((weight * size)[free]))


@pytest.mark.parametrize("d,cells", [(1, 4000), (2, 400), (3, 70)])
def test_ehvi_matches_brute_force_integration(d, cells):
    rng = np.random.default_rng(d)
    for _ in range(3):
        front = rng.uniform(0, 1, (4, d))
        ref = np.full(d, 1.2)
        mean, std = rng.uniform(0, 1.2, d), rng.uniform(0.05, 0.5, d)
        exact = expected_hypervolume_improvement(mean[None], std[None], *box_decomposition(front, ref))[0]
        assert exact == pytest.approx(grid_ehvi(front, mean, std, ref, cells), rel=0.005, abs=1e-5)


def test_ehvi_is_the_mean_hypervolume_improvement_of_samples():
    rng = np.random.default_rng(7)
    front = [(0.2, 0.9), (0.5, 0.5), (0.9, 0.1)]
    ref = (1.0, 1.0)
    mean, std = np.array([0.45, 0.4]), np.array([0.2, 0.3])
    samples = rng.normal(mean, std, (4000, 2))
    hvi = np.array([hypervolume_improvement(front, s, ref) for s in samples])
    exact = expected_hypervolume_improvement(mean[None], std[None], *box_decomposition(front, ref))[0]
    assert abs(exact - hvi.mean()) < 4 * hvi.std() / math.sqrt(len(hvi))


def test_one_objective_is_expected_improvement():
    mean, std = np.array([[0.3], [1.5], [-2.0]]), np.array([[0.5], [0.2], [1.0]])
    boxes = box_decomposition([(1.0,)], (3.0,))
    ei = np.exp(log_expected_improvement(mean[:, 0], std[:, 0], 1.0))
    assert expected_hypervolume_improvement(mean, std, *boxes) == pytest.approx(ei, rel=1e-9)


@settings(max_examples=120, deadline=None)
@given(st.integers(min_value=1, max_value=3).flatmap(
    lambda d: st.lists(st.lists(coord, min_size=d, max_size=d), min_size=0, max_size=6)))
def test_boxes_cover_exactly_the_non_dominated_region(points):
    """Clipped below at -1, the boxes' volumes add up to the reference box minus the hypervolume."""
    d = len(points[0]) if points else 2
    ref = [6.0] * d
    lower, upper = box_decomposition(points, ref)
    volume = np.prod(upper - np.maximum(lower, -1.0), axis=1)
    assert np.all(upper >= np.maximum(lower, -1.0))
    assert volume.sum() == pytest.approx(7.0 ** d - hypervolume(points, ref), abs=1e-9)
    centres = (np.maximum(lower, -1.0) + upper) / 2
    assert not any(all(p[j] <= c[j] for j in range(d)) for c in centres for p in points)


def test_a_dominated_or_certain_candidate_gains_nothing():
    boxes = box_decomposition([(0.2, 0.2)], (1.0, 1.0))
    gain = expected_hypervolume_improvement(np.array([[0.5, 0.5], [0.1, 0.1]]), np.full((2, 2), 1e-9), *boxes)
    assert gain[0] == pytest.approx(0.0, abs=1e-12)
    assert gain[1] == pytest.approx(0.9 * 0.9 - 0.8 * 0.8)


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=1, max_value=3).flatmap(lambda d: st.tuples(
    st.lists(st.lists(coord, min_size=d, max_size=d), min_size=0, max_size=6),
    st.lists(st.lists(coord, min_size=d, max_size=d), min_size=1, max_size=4))))
def test_hypervolume_improvements_of_points_match_the_hypervolume(case):
    front, points = case
    ref = [6.0] * len(points[0])
    gains = hypervolume_improvements(np.array(points), *box_decomposition(front, ref))
    assert gains == pytest.approx([hypervolume_improvement(front, p, ref) for p in points], abs=1e-9)


def test_metric_units_ehvi_is_measured_in_the_metrics_units():
    """Standardised targets map back to the metric: a near-certain candidate gains the hypervolume
    its metric values add, over the observed front's, with reference 1.1 x the observed nadir."""
    raw = np.array([[1.0, 40.0], [2.0, 20.0], [8.0, 10.0], [9.0, 50.0]])
    y = (np.log(raw) - np.log(raw).mean(axis=0)) / np.log(raw).std(axis=0)   # any increasing transform
    units = MetricUnits(y, raw, np.random.default_rng(0))
    assert units.reference == pytest.approx([8.8, 44.0])
    assert units.to_metric(y) == pytest.approx(raw)
    front_hv = hypervolume(raw[:3], (8.8, 44.0))
    assert units.scale == pytest.approx(front_hv)
    at = y[[1]]            # a candidate predicted exactly at (2, 20): dominated by the front, no gain
    assert units.ehvi(at, np.full((1, 2), 1e-9))[0] == pytest.approx(0.0, abs=1e-8)
    halfway = (y[0] + y[1]) / 2     # between (1, 40) and (2, 20) in standardised units: interpolated
    point = units.to_metric(halfway[None])[0]
    assert 1.0 < point[0] < 2.0 and 20.0 < point[1] < 40.0
    gain = units.ehvi(halfway[None], np.full((1, 2), 1e-9))[0]
    assert gain == pytest.approx(hypervolume_improvement(raw[:3], point, (8.8, 44.0)) / front_hv, rel=1e-4)
    assert gain > 0


def test_training_rows_keep_the_best_layers_and_the_most_recent():
    vectors = [(float(i), float(10 - i)) for i in range(6)] + [(9.0 + i, 9.0 + i) for i in range(10)]
    rows = training_rows(vectors, 8)
    assert rows == [0, 1, 2, 3, 12, 13, 14, 15]
    assert training_rows(vectors[:5], 8) == list(range(5))


def space():
    return ConfigurationManipulator([IntegerParameter("a", 0, 15), IntegerParameter("b", 0, 15),
                                     PowerOfTwoParameter("c", 1, 64)])


def vector(cfg):
    x, y, c = cfg["a"] / 15, cfg["b"] / 15, math.log2(cfg["c"]) / 6
    return (x + 0.3 * (y - 0.5) ** 2 + 0.1 * c, (1 - x) ** 2 + 0.3 * y + 0.1 * (1 - c))


def run(seed, n=25, batch=1, units="model"):
    m = space()
    options = {"metric_mc": ';metric_ehvi,"monte_carlo"', "metric_linear": ';metric_tail,"linear"',
               "metric_geometric": ';metric_tail,"geometric"',
               "metric_extreme": ';metric_tail,"geometric";extreme_units,"metric"'}
    name = light("MultiObjectiveBO") + f';ehvi_units,"{units.split("_")[0]}"' + options.get(units, "")
    tech = create_technique([name])
    tech.bind(m, random.Random(seed), tech.name)
    keys = []
    while len(keys) < n:
        props = [tech.propose() for _ in range(batch)]
        props = [p for p in props if p is not None]
        assert props
        batch_keys = [m.hash_config(p.config) for p in props]
        assert len(set(batch_keys)) == len(batch_keys)
        for p, key in zip(props, batch_keys):
            vec = vector(p.config)
            tech.observe(Feedback(p.config, key, vec[0], "ok", p.requestor, False, values=vec))
        keys += batch_keys
    return keys


@pytest.mark.parametrize("units", ["model", "metric", "metric_mc", "metric_linear", "metric_geometric",
                                   "metric_extreme"])
def test_deterministic_given_the_seed(units):
    assert run(3, units=units) == run(3, units=units)
    assert run(3, units=units) != run(4, units=units)


@pytest.mark.parametrize("units", ["model", "metric"])
def test_batch_proposals_are_distinct_and_spread_by_the_believer(units):
    keys = run(5, n=24, batch=4, units=units)
    assert len(set(keys)) == len(keys)

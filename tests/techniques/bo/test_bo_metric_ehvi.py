"""The expected hypervolume improvement in the metrics' units (techniques/bo/metric_ehvi.py): the exact
form against brute-force quadrature and Monte Carlo on random fronts, the linear and geometric tails
below the best value, and MultiObjectiveBO reusing its fit while no result arrived."""
import random

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st
from scipy.stats import norm, rankdata

from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.techniques import Feedback, create_technique
from tunerlib.techniques.bo import metric_ehvi
from tunerlib.techniques.bo.ehvi import hypervolume_improvements
from tunerlib.techniques.bo.metric_ehvi import MetricImprovement, MetricMap, MetricUnits
from tunerlib.techniques.bo.multiobjective import MultiObjectiveBO
from tunerlib.techniques.pareto import hypervolume_improvement

from kit import light


def space():
    return ConfigurationManipulator([IntegerParameter("a", 0, 15), IntegerParameter("b", 0, 15)])


def vector(cfg):
    x, y = cfg["a"] / 15, cfg["b"] / 15
    return (x + 0.3 * (y - 0.5) ** 2, (1 - x) ** 2 + 0.3 * y)


def copula(raw):
    """Each column's normal quantiles of its mid-ranks (MultiObjectiveBO's default GP targets)."""
    return np.column_stack([norm.ppf((rankdata(raw[:, j]) - 0.5) / len(raw)) for j in range(raw.shape[1])])


def axis_rule(m, bounds, mu, sd, order=6, width=0.5):
    """Gauss-Legendre nodes and weights (times the normal density) over mu +- 8 sd, with an
    interval break at every kink of the integrand along this axis: the map's knots, where its
    tail meets the floor, and where it crosses a box bound of the decomposition."""
    lo, hi = mu - 8 * sd, mu + 8 * sd
    cuts = [m.ys]
    if m.rate > 0:
        below = bounds[(bounds > 0) & (bounds < m.vs[0])]
        cuts.append(m.ys[0] + np.log(below / m.vs[0]) / m.rate)
    elif m.tail > 0:
        below = bounds[bounds < m.vs[0]]
        cuts.append(m.ys[0] + (below - m.vs[0]) / m.tail)
        if np.isfinite(m.floor):
            cuts.append([m.ys[0] + (m.floor - m.vs[0]) / m.tail])
    cuts.append(np.interp(bounds[bounds >= m.vs[0]], m.vs, m.ys))
    cuts = np.concatenate([np.ravel(c) for c in cuts] + [[lo, hi]])
    cuts = np.unique(cuts[(cuts >= lo) & (cuts <= hi)])
    pieces = np.ceil(np.diff(cuts) / (width * sd)).astype(int)
    edges = np.concatenate([np.linspace(a, b, k + 1)[:-1] for a, b, k in zip(cuts[:-1], cuts[1:], pieces)] + [[hi]])
    x, w = np.polynomial.legendre.leggauss(order)
    half = np.diff(edges)[:, None] / 2
    nodes = (edges[:-1, None] + half * (x + 1)).ravel()
    weights = (half * w).ravel() * norm.pdf((nodes - mu) / sd) / sd
    return nodes, weights


def quadrature_ehvi(units, mean, std):
    """E[improvement of to_metric(Z)] for independent normal Z: a tensor Gauss-Legendre rule whose
    intervals break at every kink of the integrand (no factorisation over boxes involved)."""
    rules = []
    for j, m in enumerate(units.maps):
        bounds = np.concatenate([units.lower[:, j], units.upper[:, j]])
        rules.append(axis_rule(m, bounds[np.isfinite(bounds)], mean[j], std[j]))
    (z0, w0), (z1, w1) = rules
    z = np.stack(np.meshgrid(z0, z1, indexing="ij"), axis=-1)
    gains = hypervolume_improvements(units.to_metric(z), units.lower, units.upper)
    return float(w0 @ gains @ w1) / units.scale


raws = st.integers(min_value=3, max_value=25).flatmap(
    lambda n: st.tuples(st.integers(0, 2 ** 32 - 1), st.just(n), st.booleans()))


@settings(max_examples=25, deadline=None)
@given(raws)
@example((2856, 20, True))       # a narrow posterior across a kink of the front
def test_exact_two_objective_ehvi_matches_quadrature_on_random_fronts(case):
    seed, n, extrapolate = case
    rng = np.random.default_rng(seed)
    raw = np.exp(rng.normal(0.0, 1.0, (n, 2)))
    raw[rng.random(n) < 0.2, 1] = raw[0, 1]                # ties in one metric
    units = MetricUnits(copula(raw), raw, rng, extrapolate)
    assert units.exact
    mean = rng.normal(-1.0, 1.2, (4, 2))
    std = rng.uniform(0.05, 1.5, (4, 2))
    exact = units.ehvi(mean, std)
    reference = [quadrature_ehvi(units, m, s) for m, s in zip(mean, std)]
    # exact up to the rule's error on polynomial pieces and the tails beyond 8 sd
    assert exact == pytest.approx(reference, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("d", [2, 3])
def test_exact_ehvi_matches_monte_carlo_of_the_same_map(d, monkeypatch):
    rng = np.random.default_rng(d)
    raw = np.exp(rng.normal(0.0, 1.0, (15, d)))
    units = MetricUnits(copula(raw), raw, rng, extrapolate=True)
    mean, std = rng.normal(-1.0, 0.8, (5, d)), rng.uniform(0.2, 1.0, (5, d))
    exact = units.ehvi(mean, std)
    z = mean[:, None, :] + std[:, None, :] * rng.standard_normal((5, 100_000, d))
    sampled = hypervolume_improvements(units.to_metric(z), units.lower, units.upper).mean(axis=1) / units.scale
    assert exact == pytest.approx(sampled, rel=0.03, abs=1e-4)
    assert not MetricUnits(copula(raw), raw, rng, extrapolate=True, monte_carlo=True).exact   # asked for
    monkeypatch.setattr(metric_ehvi, "EXACT_BOXES", 0)     # beyond the limit: the Monte-Carlo estimate
    assert not units.exact
    estimate = units.ehvi(mean, std)
    assert estimate == pytest.approx(np.maximum(units._monte_carlo(mean, std), 0) / units.scale)
    assert np.corrcoef(estimate, exact)[0, 1] > 0.8


@pytest.mark.parametrize("seed", range(6))
def test_exact_ehvi_with_the_geometric_tail_matches_quadrature(seed):
    rng = np.random.default_rng(100 + seed)
    raw = np.exp(rng.normal(0.0, 1.0, (12, 2)))
    units = MetricUnits(copula(raw), raw, rng, extrapolate=True, geometric=True)
    assert units.exact and all(m.rate > 0 for m in units.maps)
    mean = rng.normal(-2.0, 1.0, (4, 2))            # mostly below the best targets: on the tails
    std = rng.uniform(0.05, 1.5, (4, 2))
    reference = [quadrature_ehvi(units, m, s) for m, s in zip(mean, std)]
    assert units.ehvi(mean, std) == pytest.approx(reference, rel=1e-6, abs=1e-7)


def test_exact_ehvi_with_the_geometric_tail_matches_monte_carlo():
    rng = np.random.default_rng(7)
    raw = np.exp(rng.normal(0.0, 1.0, (15, 2)))
    units = MetricUnits(copula(raw), raw, rng, extrapolate=True, geometric=True)
    mean, std = rng.normal(-1.5, 0.8, (5, 2)), rng.uniform(0.2, 1.5, (5, 2))
    z = mean[:, None, :] + std[:, None, :] * rng.standard_normal((5, 200_000, 2))
    sampled = hypervolume_improvements(units.to_metric(z), units.lower, units.upper).mean(axis=1) / units.scale
    assert units.ehvi(mean, std) == pytest.approx(sampled, rel=0.03, abs=1e-4)


def test_the_map_continues_geometrically_below_the_best_value_for_a_positive_metric():
    """Each standard unit below the best target divides the value by the secant's ratio (3 / 2 from
    the best knot to the next), so the tail never reaches 0; a metric with a value at or below 0
    keeps the linear tail."""
    y = np.array([-1.0, 0.0, 1.0, 2.0])
    m = MetricMap(y, np.array([2.0, 3.0, 7.0, 8.0]), extrapolate=True, geometric=True)
    assert m.rate == pytest.approx(np.log(1.5))
    assert m.to_metric(np.array([-2.0, -3.0, 0.5])) == pytest.approx([2.0 / 1.5, 2.0 / 2.25, 5.0])
    assert m.to_metric(np.array([-60.0]))[0] > 0
    signed = MetricMap(y, np.array([-1.0, 0.0, 4.0, 5.0]), extrapolate=True, geometric=True)
    assert signed.rate == 0 and signed.to_metric(np.array([-2.0])) == pytest.approx([-2.0])


class _Fixed:
    """A GP stand-in with fixed posterior means and standard deviations."""

    def __init__(self, mean, std):
        self.mean, self.std = np.asarray(mean, float), np.asarray(std, float)

    def predict(self, cross):
        return self.mean, self.std


class _Encoder:
    def sqdists(self, enc, train):
        return None


def test_an_extreme_turn_in_metric_units_weighs_how_far_a_design_beats_the_best():
    """``MetricImprovement``: with the geometric tail, a design predicted surely 1 unit below the best
    target gains ``1 - 1 / 1.5`` of the best value (plus the tie-breaker, 1e-3 x the 1 unit it
    beats the best target by); one predicted at or above it gains only the tie-breaker; a clamped map leaves only the tie-breaker, which keeps the GP units' order."""
    y = np.array([-1.0, 0.0, 1.0, 2.0])
    raw = np.array([2.0, 3.0, 7.0, 8.0])
    geometric = MetricMap(y, raw, extrapolate=True, geometric=True)
    acq = MetricImprovement(_Encoder(), _Fixed([-2.0, -1.0, 0.5], [1e-9] * 3), None, geometric)
    s = np.exp(acq.score_encoded(None, [{}, {}, {}]))
    assert s[0] == pytest.approx(1 - 1 / 1.5 + 1e-3, rel=1e-6)
    assert s[1] < 1e-3 and s[2] < 1e-12
    wide = MetricImprovement(_Encoder(), _Fixed([-1.0, -1.0], [0.5, 1.0]), None, geometric)
    narrow_score, wide_score = wide.score_encoded(None, [{}, {}])
    assert wide_score > narrow_score
    clamped = MetricImprovement(_Encoder(), _Fixed([-2.0, -1.5, 0.5], [0.3] * 3), None, MetricMap(y, raw))
    order = np.argsort(-clamped.score_encoded(None, [{}, {}, {}]))
    assert list(order) == [0, 1, 2]


def test_the_map_continues_linearly_below_the_best_value_down_to_zero():
    y = np.array([-1.0, 0.0, 1.0, 2.0])
    raw = np.array([2.0, 3.0, 7.0, 8.0])
    m = MetricMap(y, raw, extrapolate=True)
    assert m.to_metric(y) == pytest.approx(raw)
    assert m.to_metric(np.array([-1.5, -10.0])) == pytest.approx([1.5, 0.0])    # slope 1 to (0, 3), floor 0
    assert m.to_metric(np.array([5.0])) == pytest.approx([8.0])                  # constant above the worst
    clamped = MetricMap(y, raw)
    assert clamped.to_metric(np.array([-1.5])) == pytest.approx([2.0])


def test_beating_the_fronts_extreme_is_worth_its_hypervolume():
    """A candidate surely faster than the fastest result, at its energy, extends the front: the gain is
    the hypervolume its extrapolated value adds (a map clamped at the best value gives none)."""
    raw = np.array([[1.0, 40.0], [2.0, 20.0], [8.0, 10.0], [9.0, 50.0], [3.0, 45.0]])
    y = copula(raw)
    units = MetricUnits(y, raw, np.random.default_rng(0), extrapolate=True)
    z = np.array([[y[:, 0].min() - 0.5, y[0, 1]]])
    point = units.to_metric(z)[0]
    assert point[0] < 1.0 and point[1] == pytest.approx(40.0)
    gain = units.ehvi(z, np.full((1, 2), 1e-6))[0]
    assert gain == pytest.approx(hypervolume_improvement(raw[:3], point, units.reference) / units.scale, rel=1e-3)
    assert gain > 0
    clamped = MetricUnits(y, raw, np.random.default_rng(0))
    assert clamped.ehvi(z, np.full((1, 2), 1e-6))[0] < 1e-3 * gain


def test_proposals_without_new_results_reuse_the_fit(monkeypatch):
    """A batch proposed while results are in flight is scored with one fit per objective, not one
    per proposal."""
    m = space()
    tech = create_technique([light("MultiObjectiveBO")])
    tech.bind(m, random.Random(0), tech.name)
    fits = []
    original = MultiObjectiveBO._fit_gp
    monkeypatch.setattr(MultiObjectiveBO, "_fit_gp", lambda self, D2, raw: fits.append(1) or original(self, D2, raw))
    while tech._n_ok < 6 or not fits:
        p = tech.propose()
        vec = vector(p.config)
        tech.observe(Feedback(p.config, m.hash_config(p.config), vec[0], "ok", p.requestor, False, values=vec))
    fits.clear()
    batch = [tech.propose() for _ in range(3)]
    assert len({m.hash_config(p.config) for p in batch}) == 3
    assert len(fits) == 2           # two objectives, fitted once for the three proposals


def test_the_data_reference_lies_beyond_every_result_and_values_a_design_past_the_front_nadir():
    """``data_nadir`` (``metric_reference`` "data"): the reference point is 1.1 x the nadir of every
    row rather than of the front, so with the linear tail a design faster than the front's fastest
    but using more than the front's largest share is worth something."""
    raw = np.array([[1.0, 4.0], [2.0, 2.0], [4.0, 1.0], [8.0, 9.0], [9.0, 8.0]])
    y = copula(raw)
    front_ref = MetricUnits(y, raw, np.random.default_rng(0), extrapolate=True)
    data_ref = MetricUnits(y, raw, np.random.default_rng(0), extrapolate=True, data_nadir=True)
    assert np.allclose(front_ref.reference, [4.4, 4.4]) and np.allclose(data_ref.reference, [9.9, 9.9])
    fast_and_big = np.array([[y[:, 0].min() - 1.0, y[:, 1].max()]])   # beats the fastest, the largest share
    tight = np.full((1, 2), 1e-3)
    assert front_ref.ehvi(fast_and_big, tight)[0] == 0.0
    assert data_ref.ehvi(fast_and_big, tight)[0] > 0.0

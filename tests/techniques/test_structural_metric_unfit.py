"""MetricStructuralSurrogate on tours whose step costs are clustered and very unequal (cheap steps along
rings of items, costs of thousands between them: no low-dimensional metric): the identification hands
over as soon as its fits cannot explain the results they were fitted to, instead of measuring random
tours up to the last checkpoint; instances with a metric (planted Euclidean, clustered Euclidean) are
still accepted."""
import numpy as np
import pytest

from tunerlib.parameters import PermutationParameter
from tunerlib.parameters.features import FeatureLayout
from tunerlib.techniques.structural import MetricStructuralSurrogate, identification
from tunerlib.techniques.structural.identification import adjusted_r2

from tourdrive import drive_tour, identified, tour_cost as cost


def clustered_rings(k, m, seed):
    """``k`` clusters of ``m`` items (``m`` even), each a ring of steps costing 0 and 20 in turn, its other
    pairs 10,000; between clusters the even items of two linked clusters 30 apart, other pairs 3,500 or
    9,000; the items shuffled."""
    rng = np.random.default_rng(seed)
    n = k * m
    c, r = np.arange(n) // m, np.arange(n) % m
    W = rng.choice([3500.0, 9000.0], size=(n, n))
    linked = rng.random((k, k)) < 0.5
    even = r % 2 == 0
    W[np.ix_(even, even)] = np.where(linked[np.ix_(c[even], c[even])], 30.0, W[np.ix_(even, even)])
    W[c[:, None] == c[None, :]] = 10000.0
    for i in range(n):
        W[i, c[i] * m + (r[i] + 1) % m] = 20.0 if r[i] % 2 else 0.0
    W = np.triu(W, 1) + np.triu(W, 1).T
    perm = rng.permutation(n)
    return W[np.ix_(perm, perm)]


def clustered_euclidean(n, seed):
    """Points in tight clusters far apart: very unequal steps, but a metric."""
    rng = np.random.default_rng(seed)
    centres = rng.random((n // 6, 2)) * 1000.0
    pts = centres[rng.integers(0, len(centres), n)] + rng.normal(0.0, 5.0, (n, 2))
    return np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))


def test_adjusted_r2_discounts_the_unknowns():
    assert adjusted_r2(0.9, 1000, 0) == pytest.approx(0.9)
    assert adjusted_r2(0.5, 101, 50) == pytest.approx(1.0 - 0.5 * 100 / 50)


@pytest.mark.parametrize("seed", [0, 2])
def test_clustered_rings_are_handed_over_to_the_full_rank_prior(seed):
    n = 20
    model, tours = identified(clustered_rings(5, 4, seed))
    assert model.status == "handed over"
    assert tours is not None and tours <= identification.CHECKPOINTS[-1] * n
    assert not np.any(model.prior_mean)            # StructuralSurrogate's prior from then on


def _model_at_a_checkpoint(monkeypatch, fitted, held_out):
    """A model with random tours up to its first checkpoint whose fits are made to report ``fitted``
    (adjusted R² on their training rows) and ``held_out``; returns the status its identification gives."""
    n = 20
    W = clustered_rings(5, 4, 0)
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    model = identification.MetricBayesLinear(layout.size, layout.groups, seed=0)
    rng, f = np.random.default_rng(1), cost(W)
    k = 0
    while not model.checkpoint(k):
        k += 1
        t = rng.permutation(n)
        model.add(layout.encode({"t": list(t)}), f(t))
        model.mark_random()

    def fits(X, y, hold, directed):
        model.fitted_r2 = max(model.fitted_r2, fitted)
        return held_out, 2, directed, np.zeros(0)
    monkeypatch.setattr(model, "_fit_dims", fits)
    assert k < model.checkpoints()[-1]
    return model.identify()


@pytest.mark.parametrize("fitted, held_out, status", [
    (identification.UNFIT - 0.05, -0.01, "handed over"),
    (identification.UNFIT - 0.05, 0.01, "identifying"),       # predicts held-out tours better than their mean
    (identification.UNFIT + 0.05, -0.5, "identifying"),       # explains its own results: more may make it predict
    (-np.inf, -0.5, "identifying"),                   # no fit judged yet (too few results per unknown)
])
def test_a_checkpoint_hands_over_when_the_fits_explain_neither_their_results_nor_held_out_ones(
        monkeypatch, fitted, held_out, status):
    assert _model_at_a_checkpoint(monkeypatch, fitted, held_out) == status


def test_a_clustered_euclidean_instance_is_still_accepted():
    model, _ = identified(clustered_euclidean(20, 0))
    assert model.status == "accepted"


def test_the_technique_measures_fewer_random_tours_on_clustered_rings_and_is_deterministic():
    W = clustered_rings(5, 4, 3)
    n, evals = W.shape[0], int(identification.CHECKPOINTS[-2] * W.shape[0]) + 5
    runs = [drive_tour(MetricStructuralSurrogate("M"), n, cost(W), evals, 0) for _ in range(2)]
    assert runs[0][0] == runs[1][0]
    tech = runs[0][1]
    assert tech.model.status == "handed over"
    assert tech.random_results < identification.CHECKPOINTS[-1] * n

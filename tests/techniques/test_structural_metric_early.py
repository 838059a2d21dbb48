"""MetricBayesLinear's identification checkpoints: under-determined dimensions are not fitted, a
checkpoint after a dimension's first fit starts from the previous fit and fewer random starts, and
the held-out results are random ones."""
import numpy as np
import pytest

from tunerlib.parameters import PermutationParameter
from tunerlib.parameters.features import FeatureLayout
from tunerlib.techniques.structural import identification
from tunerlib.techniques.structural.identification import MetricBayesLinear



def euclidean(n, seed):
    pts = np.random.default_rng(seed).random((n, 2)) * 100.0
    return np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))


def cost(W):
    return lambda t: float(W[t, np.roll(t, -1)].sum())


def random_tours_model(W, tours, seed=0, mark=True):
    n = W.shape[0]
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    model = MetricBayesLinear(layout.size, layout.groups, seed=seed)
    rng, f = np.random.default_rng(seed + 1), cost(W)
    for _ in range(tours):
        t = rng.permutation(n)
        model.add(layout.encode({"t": list(t)}), f(t))
        if mark:
            model.mark_random()
    return model


def test_an_under_determined_dimension_is_not_fitted():
    n = 30
    model = random_tours_model(euclidean(n, 1), int(identification.CHECKPOINTS[0] * n))  # 72 training rows, 61 unknowns
    assert model.identify() == "identifying"
    assert model.fit_starts == 0


def test_a_later_checkpoint_fits_from_the_previous_fit_and_fewer_random_starts(monkeypatch):
    monkeypatch.setattr(identification, "ACCEPT", 2.0)          # never accepted: every checkpoint fits
    monkeypatch.setattr(identification, "DIMS", (2,))
    n = 30
    W = euclidean(n, 2)
    model = random_tours_model(W, 8 * n)
    model.directions = None                             # symmetric fits only
    first = model.identify()
    assert first == "identifying" and model.fit_starts == identification.RESTARTS
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    rng = np.random.default_rng(9)
    for _ in range(n):
        t = rng.permutation(n)
        model.add(layout.encode({"t": list(t)}), cost(W)(t))
        model.mark_random()
    model.identify()
    assert model.fit_starts == identification.RESTARTS + identification.WARM_RESTARTS + 1


@pytest.mark.parametrize("mark", [True, False])
def test_the_held_out_rows_are_random_results(mark):
    n = 25
    W = euclidean(n, 3)
    model = random_tours_model(W, 40, mark=mark)
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    t = np.arange(n)
    for _ in range(20):                                # tours of a search, not marked
        model.add(layout.encode({"t": list(t)}), cost(W)(t))
    hold = model._held_out(model.n)
    if mark:
        assert hold.sum() == 8 and not hold[40:].any()
    else:
        assert np.array_equal(np.flatnonzero(hold), np.arange(0, 60, 5))


def test_a_planted_instance_is_still_identified_from_fewer_random_tours_than_ten_per_item():
    n = 40
    model, tours = identified_by_checkpoints(n, 4, tour_seed=1)
    assert model.status == "accepted" and tours < int(identification.CHECKPOINTS[-1] * n)
    assert model.held_out_r2 >= identification.ACCEPT


def identified_by_checkpoints(n, seed, tour_seed=None):
    """A model of a planted instance given random tours up to the checkpoint that decides (accepts or
    hands over), and the number of tours it was given."""
    W = euclidean(n, seed)
    model = random_tours_model(W, 0)
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    rng = np.random.default_rng(seed + 1 if tour_seed is None else tour_seed)
    for k in range(1, int(identification.CHECKPOINTS[-1] * n) + 1):
        t = rng.permutation(n)
        model.add(layout.encode({"t": list(t)}), cost(W)(t))
        model.mark_random()
        if model.checkpoint(k) and model.identify() != "identifying":
            break
    return model, k


def test_the_accepted_embedding_is_fitted_to_convergence(monkeypatch):
    # checkpoint fits cut short (as on instances whose fits need more than ITERATIONS) and accepted
    # anyway: the fit at acceptance goes on to convergence, so that a further fit from the accepted
    # positions hardly lowers the loss (the short distances, which decide the embedding's best
    # tour, settle last)
    monkeypatch.setattr(identification, "ITERATIONS", 15)
    monkeypatch.setattr(identification, "ACCEPT", 0.3)
    monkeypatch.setattr(identification, "ACCEPT_LAST", 0.3)
    model, _ = identified_by_checkpoints(24, 3)
    assert model.status == "accepted" and model.fits == 1
    X, y = model.rows.matrix(model.first), model._target()
    theta = model.theta[model._key]
    loss = model.embedding.loss(theta, X, y)[0]
    assert model.embedding.fit(X, y, theta, 5000)[1] >= 0.99 * loss

"""The directed embedding of MetricStructuralSurrogate (an out- and an in-point per item): its
weights are a tour's directed steps, its gradient is exact, and on a planted asymmetric instance it
predicts held-out tours where the symmetric embedding alone does not."""
import numpy as np
import scipy.sparse as sp

from tunerlib.parameters import PermutationParameter
from tunerlib.parameters.features import FeatureLayout
from tunerlib.techniques.structural import identification
from tunerlib.techniques.structural.embedding import Embedding
from tunerlib.techniques.structural.identification import MetricBayesLinear
from tunerlib.techniques.structural.model import rank_correlation
from tunerlib.techniques.structural.tours import iterated_search

from tourdrive import drive_tour


def layout_of(n):
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    adjacency = [g for g in layout.groups if g.kind == "adjacency"]
    direction = [g for g in layout.groups if g.kind == "direction"]
    return layout, adjacency, direction


def planted(n, seed):
    """``w_ij = |a_i - b_j|``: every item leaves from one point and arrives at another."""
    rng = np.random.default_rng(seed)
    A = rng.random((n, 2)) * 100.0
    B = A + rng.normal(0.0, 25.0, (n, 2))
    W = np.sqrt(((A[:, None] - B[None]) ** 2).sum(-1))
    np.fill_diagonal(W, 0.0)
    return W


def cost(W):
    return lambda t: float(W[t, np.roll(t, -1)].sum())


def test_directed_weights_sum_to_the_tours_directed_steps():
    n = 25
    layout, adj, dirs = layout_of(n)
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    emb = Embedding(adj, 3, True, dirs)
    w = emb.weights(np.concatenate([[0.5], A.ravel(), B.ravel()]), layout.size)
    W = 0.5 + np.sqrt(((A[:, None] - B[None]) ** 2).sum(-1) + 1e-10)
    for _ in range(5):
        t = rng.permutation(n)
        idx, val = layout.encode({"t": list(t)})
        assert np.isclose(w[idx] @ val, cost(W)(t))
        assert np.isclose(w[idx] @ val, cost(W)(t[::-1])) is np.isclose(cost(W)(t), cost(W)(t[::-1]))
    lifted = emb.lifted(np.concatenate([[0.5], A.ravel()]))
    symmetric = Embedding(adj, 3).weights(np.concatenate([[0.5], A.ravel()]), layout.size)
    assert np.allclose(emb.weights(lifted, layout.size), symmetric)


def test_directed_gradient_matches_finite_differences():
    n = 21
    layout, adj, dirs = layout_of(n)
    rng = np.random.default_rng(1)
    rows = [layout.encode({"t": list(rng.permutation(n))}) for _ in range(40)]
    X = sp.vstack([sp.csr_matrix((v, (np.zeros_like(i), i)), shape=(1, layout.size)) for i, v in rows]).tocsr()
    y = rng.standard_normal(40)
    emb = Embedding(adj, 2, True, dirs)
    theta = emb.start(rng)
    value, grad = emb.loss(theta, X, y)
    h = 1e-6
    numeric = np.array([(emb.loss(theta + h * e, X, y)[0] - value) / h for e in np.eye(theta.size)])
    assert np.allclose(numeric, grad, rtol=1e-3, atol=1e-3 * np.abs(grad).max())


def identify(W, directed, seed=0):
    """A model given random tours until a checkpoint accepts (or the last hands over); ``directed``
    False: the model as without direction features, symmetric embeddings only."""
    n = W.shape[0]
    layout, _, _ = layout_of(n)
    model = MetricBayesLinear(layout.size, layout.groups, seed=seed)
    if not directed:
        model.directions = None
    rng, f = np.random.default_rng(seed + 1), cost(W)
    held = [rng.permutation(n) for _ in range(100)]
    for k in range(1, int(identification.CHECKPOINTS[-1] * n) + 1):
        t = rng.permutation(n)
        model.add(layout.encode({"t": list(t)}), f(t))
        if model.checkpoint(k) and model.identify() != "identifying":
            break
    predicted = [model.prior_mean[layout.encode({"t": list(t)})[0]].sum() for t in held]
    return model, rank_correlation(predicted, [f(t) for t in held])


def test_planted_asymmetric_instance_is_identified_by_the_directed_embedding_only(monkeypatch):
    monkeypatch.setattr(identification, "CHECKPOINTS", (6, 10))
    W = planted(30, 4)
    model, corr = identify(W, directed=True)
    assert model.status == "accepted" and model.embedding.directed
    assert corr > 0.9
    old, _ = identify(W, directed=False)
    assert old.status == "handed over" and old.held_out_r2 < 0.9
    # the tour searched on the accepted weights is close to the one searched on the true ones
    n = W.shape[0]
    U = np.zeros((n, n))
    iu = np.triu_indices(n, 1)
    U[iu] = model.prior_mean[:iu[0].size]
    C = U + U.T + model.prior_mean[iu[0].size:iu[0].size + n * n].reshape(n, n)
    found = iterated_search(np.arange(n), C, np.random.default_rng(0), 20)[0]
    best = iterated_search(np.arange(n), W, np.random.default_rng(0), 20)[0]
    assert cost(W)(found) <= 1.1 * cost(W)(best)


def test_symmetric_instances_keep_the_symmetric_embedding():
    pts = np.random.default_rng(5).random((24, 2)) * 100.0
    W = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    model, corr = identify(W, directed=True)
    assert model.status == "accepted" and not model.embedding.directed and corr > 0.9


def test_technique_searches_a_directed_embedding(monkeypatch):
    from tunerlib.techniques.structural import MetricStructuralSurrogate
    monkeypatch.setattr(identification, "CHECKPOINTS", (6, 10))
    W = planted(24, 7)
    values, tech = drive_tour(MetricStructuralSurrogate("M"), 24, cost(W), 260, 3)
    assert tech.model.status == "accepted" and tech.model.embedding.directed
    best = cost(W)(iterated_search(np.arange(24), W, np.random.default_rng(0), 20)[0])
    assert min(values) <= 1.1 * best

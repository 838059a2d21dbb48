"""MetricBayesLinear.sample: the posterior's Thompson sample, or, with LOCAL_SAMPLES once an embedding
is accepted, the same noise around the measured moves' ranking (the embedding plus the residual)."""
import numpy as np

from tunerlib.parameters import PermutationParameter
from tunerlib.parameters.features import FeatureLayout
from tunerlib.techniques.structural import identification

from tourdrive import identified, tour_cost


def euclidean(n, seed):
    pts = np.random.default_rng(seed).random((n, 2)) * 100.0
    return np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))


def accepted_with_local_results(n=24):
    """An accepted model of a planted instance given 40 tours near one tour after the acceptance."""
    W = euclidean(n, 0)
    model, _ = identified(W)
    assert model.status == "accepted"
    layout, rng, t = FeatureLayout([PermutationParameter("t", list(range(n)))], False), np.random.default_rng(5), np.arange(n)
    for _ in range(40):
        s = t.copy()
        i, j = sorted(rng.choice(n, 2, replace=False))
        s[i:j + 1] = s[i:j + 1][::-1]
        model.add(layout.encode({"t": list(s)}), tour_cost(W)(s))
    model.refresh()
    return model


def test_samples_are_centred_on_the_local_weights_only_when_asked(monkeypatch):
    model = accepted_with_local_results()
    local = model.local_weights()
    assert np.abs(local - model.mean).max() > 1e-3          # the two centres differ
    noise = np.sqrt(model.variance()) * np.random.default_rng(1).standard_normal(model.size)
    assert np.allclose(model.sample(np.random.default_rng(1)), model.mean + noise)       # off by default
    monkeypatch.setattr(identification, "LOCAL_SAMPLES", True)
    assert np.allclose(model.sample(np.random.default_rng(1)), local + noise)
    assert np.allclose(model.sample(np.random.default_rng(1), 0.0), local)


def test_before_an_acceptance_the_samples_stay_the_posteriors(monkeypatch):
    monkeypatch.setattr(identification, "LOCAL_SAMPLES", True)
    n = 24
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    model = identification.MetricBayesLinear(layout.size, layout.groups, seed=0)
    for k in range(30):
        t = np.random.default_rng(k).permutation(n)
        model.add(layout.encode({"t": list(t)}), tour_cost(euclidean(n, 0))(t))
    model.refresh()
    assert model.embedding is None
    noise = np.sqrt(model.variance()) * np.random.default_rng(2).standard_normal(model.size)
    assert np.allclose(model.sample(np.random.default_rng(2)), model.mean + noise)

"""MetricStructuralSurrogate: the metric embedding recovers a planted 2-D instance's distance ordering
from fewer random tours than pairs, hands over on a non-metric matrix, and the technique uses it."""
import random

import numpy as np
import pytest

from tunerlib.parameters import ConfigurationManipulator, EnumParameter, IntegerParameter, PermutationParameter
from tunerlib.techniques import registry
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.structural import MetricStructuralSurrogate, StructuralSurrogate
from tunerlib.techniques.structural.identification import MIN_ITEMS
from tunerlib.techniques.structural.model import rank_correlation
from tunerlib.techniques.structural.tours import iterated_search

from tourdrive import drive_tour, identified, tour_cost as cost


def euclidean(n, seed):
    pts = np.random.default_rng(seed).random((n, 2)) * 100.0
    return np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))


def non_metric(n, seed):
    """Independent pair weights: no low-dimensional embedding predicts them."""
    rng = np.random.default_rng(seed)
    W = rng.random((n, n)) * 100.0
    return np.triu(W, 1) + np.triu(W, 1).T


def test_recovers_the_distance_ordering_from_fewer_tours_than_pairs():
    n = 30                                          # 435 pairs
    W = euclidean(n, 0)
    model, tours = identified(W)
    assert model.status == "accepted" and tours < n * (n - 1) // 2
    iu = np.triu_indices(n, 1)
    fitted = model.prior_mean[:len(iu[0])]
    assert rank_correlation(fitted, W[iu]) > 0.95
    # the tour searched on the fitted weights is close to the one searched on the true distances
    C = np.zeros((n, n))
    C[iu] = fitted
    found = iterated_search(np.arange(n), C + C.T, np.random.default_rng(0), 20)[0]
    best = iterated_search(np.arange(n), W, np.random.default_rng(0), 20)[0]
    assert cost(W)(found) <= 1.05 * cost(W)(best)


def test_hands_over_on_a_non_metric_matrix(monkeypatch):
    from tunerlib.techniques.structural import identification
    monkeypatch.setattr(identification, "CHECKPOINTS", (3, 5))     # the last checkpoint hands over; fewer fits
    n = MIN_ITEMS
    model, _ = identified(non_metric(n, 3))
    assert model.status == "handed over"
    assert model.held_out_r2 < 0.9
    assert not np.any(model.prior_mean)            # StructuralSurrogate's prior from then on


def drive(W, evals, seed, cls=MetricStructuralSurrogate):
    return drive_tour(cls(cls.__name__), W.shape[0], cost(W), evals, seed)


def test_registered_deterministic_and_searches_the_accepted_embedding():
    assert "MetricStructuralSurrogate" in registry()
    W = euclidean(MIN_ITEMS + 4, 5)
    a, tech = drive(W, 180, 5)
    b, _ = drive(W, 180, 5)
    assert a == b
    assert tech.model.status == "accepted"
    n = W.shape[0]
    best = cost(W)(iterated_search(np.arange(n), W, np.random.default_rng(0), 20)[0])
    assert min(a) <= 1.05 * best


@pytest.mark.parametrize("space", ["numbers", "small permutation"])
def test_without_a_permutation_to_embed_it_makes_structural_surrogates_suggestions(space):
    def run(cls):
        if space == "numbers":
            params = [IntegerParameter("x", 0, 40), EnumParameter("e", list("abcdef"))]
        else:
            params = [PermutationParameter("p", list(range(MIN_ITEMS - 1)))]
        manipulator = ConfigurationManipulator(params)
        tech = cls(cls.__name__)
        tech.bind(manipulator, random.Random(7), cls.__name__)
        configs, best = [], np.inf
        for _ in range(150):
            prop = tech.propose()
            cfg = prop.config
            if space == "numbers":
                value = (cfg["x"] - 17) ** 2 + "abcdef".index(cfg["e"]) + 1.0
            else:
                value = float(np.dot(cfg["p"], np.arange(len(cfg["p"])) ** 2))
            configs.append(manipulator.hash_config(cfg))
            tech.observe(Feedback(cfg, manipulator.hash_config(cfg), value, "ok", prop.requestor, value < best))
            best = min(best, value)
        return configs
    assert run(MetricStructuralSurrogate) == run(StructuralSurrogate)


def test_a_resumed_run_re_derives_the_embedding_from_the_fed_back_results():
    import json
    W = euclidean(MIN_ITEMS + 4, 6)
    n, f = W.shape[0], cost(W)
    space = ConfigurationManipulator([PermutationParameter("t", list(range(n)))])
    tech = MetricStructuralSurrogate("M")
    tech.bind(space, random.Random(2), "M")
    feedbacks, best = [], np.inf
    for _ in range(180):
        prop = tech.propose()
        value = f(np.asarray(prop.config["t"]))
        fb = Feedback(prop.config, space.hash_config(prop.config), value, "ok", prop.requestor, value < best)
        best = min(best, value)
        tech.observe(fb)
        feedbacks.append(fb)
    assert tech.model.status == "accepted"
    state = json.loads(json.dumps(tech.state_dict()))
    fresh = MetricStructuralSurrogate("M")
    fresh.bind(space, random.Random(2), "M")     # the engine feeds every stored result back, then the state
    for fb in feedbacks:
        fresh.observe(fb)
    fresh.load_state_dict(state)
    assert fresh.model.status == "accepted" and fresh.random_results == tech.random_results
    assert np.array_equal(fresh.model.prior_mean, tech.model.prior_mean)
    assert fresh.state_dict()["random_results"] == state["random_results"]


def test_every_fit_of_the_accepted_embedding_is_searched(monkeypatch):
    # at acceptance and after each refit (the data grew by a quarter) the next suggestion is an
    # iterated search on the embedding from the incumbent
    searched = []
    jump = MetricStructuralSurrogate._jump

    def recording(self):
        searched.append(self.model.fits)
        return jump(self)
    monkeypatch.setattr(MetricStructuralSurrogate, "_jump", recording)
    W = euclidean(MIN_ITEMS + 4, 5)
    _, tech = drive(W, 320, 5)
    assert tech.model.status == "accepted" and tech.model.fits >= 3
    assert searched == list(range(1, tech.model.fits + 1))

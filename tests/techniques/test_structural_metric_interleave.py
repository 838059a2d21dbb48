"""MetricStructuralSurrogate's random phase after a tentative fit: a share of its suggestions are tours
chosen from the last checkpoint's fit that was neither accepted nor judged unfit and whose held-out R²
is above 0 (no tours are chosen from one at or below 0), while the checkpoints
fit and judge the random tours alone (the same fits, acceptance and random tours as without them);
deterministic, and re-derived on resume."""
import json
import random

import numpy as np
import pytest

from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.parameters.features import FeatureLayout
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.structural import MetricStructuralSurrogate, identification, metric
from tunerlib.techniques.structural.identification import MetricBayesLinear

from tourdrive import tour_cost as cost


def euclidean(n, seed):
    pts = np.random.default_rng(seed).random((n, 2)) * 100.0
    return np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))


def run(W, evals, seed=1):
    """The feedbacks of ``evals`` suggestions of a MetricStructuralSurrogate on ``W``, each with
    whether the model held a tentative fit when it was proposed; and the technique."""
    n = W.shape[0]
    space = ConfigurationManipulator([PermutationParameter("t", list(range(n)))])
    tech = MetricStructuralSurrogate("M")
    tech.bind(space, random.Random(seed), "M")
    out, best = [], np.inf
    for _ in range(evals):
        tentative = getattr(tech.model, "tentative", None) is not None and tech.model.status == "identifying"
        prop = tech.propose()
        value = cost(W)(np.asarray(prop.config["t"]))
        fb = Feedback(prop.config, space.hash_config(prop.config), value, "ok", prop.requestor, value < best)
        best = min(best, value)
        tech.observe(fb)
        out.append((fb, tentative))
    return out, tech


def test_after_a_tentative_fit_the_stated_share_of_the_random_phase_is_chosen_from_it(monkeypatch):
    monkeypatch.setattr(identification, "ACCEPT", 2.0)          # never accepted: the phase goes on
    monkeypatch.setattr(identification, "ACCEPT_LAST", 2.0)
    W = euclidean(24, 1)
    out, tech = run(W, 220)
    assert tech.model.status == "identifying" and tech.model.tentatives >= 2
    before = [fb.requestor for fb, tentative in out if not tentative]
    after = [fb.requestor for fb, tentative in out if tentative]
    assert set(before) == {"M/identify"}                       # no fit yet: every tour random
    share = after.count("M/tentative") / len(after)
    assert len(after) > 80 and abs(share - metric.INTERLEAVE) < 0.12
    assert tech.random_results == before.count("M/identify") + after.count("M/identify")
    chosen = [fb.value for fb, _ in out if fb.requestor == "M/tentative"]
    randoms = [fb.value for fb, _ in out if fb.requestor == "M/identify"]
    assert np.median(chosen) < 0.6 * np.median(randoms)      # chosen from the fit: far shorter


def _held_out_at_most(cap, monkeypatch):
    """Cap the held-out R² of every checkpoint's best fit at ``cap`` (the fits themselves unchanged)."""
    fit_dims = MetricBayesLinear._fit_dims

    def capped(self, X, y, hold, directed):
        r2, dim, directed_, theta = fit_dims(self, X, y, hold, directed)
        return min(r2, cap), dim, directed_, theta
    monkeypatch.setattr(MetricBayesLinear, "_fit_dims", capped)


@pytest.mark.parametrize("cap", [0.0, -0.3])
def test_a_tentative_fit_at_or_below_zero_held_out_r2_chooses_no_tours(cap, monkeypatch):
    monkeypatch.setattr(identification, "ACCEPT", 2.0)          # never accepted: the phase goes on
    monkeypatch.setattr(identification, "ACCEPT_LAST", 2.0)
    _held_out_at_most(cap, monkeypatch)
    out, tech = run(euclidean(24, 1), 220)
    assert tech.model.status == "identifying" and tech.model.held_out_r2 == cap
    assert tech.model.tentative is None and tech.model.tentatives == 0
    assert {fb.requestor for fb, _ in out} == {"M/identify"}


def test_a_tentative_fit_above_zero_held_out_r2_chooses_the_stated_share(monkeypatch):
    monkeypatch.setattr(identification, "ACCEPT", 2.0)
    monkeypatch.setattr(identification, "ACCEPT_LAST", 2.0)
    _held_out_at_most(0.05, monkeypatch)                        # just above the gate
    out, tech = run(euclidean(24, 1), 220)
    assert tech.model.held_out_r2 == 0.05 and tech.model.tentatives >= 2
    after = [fb.requestor for fb, tentative in out if tentative]
    share = after.count("M/tentative") / len(after)
    assert len(after) > 80 and abs(share - metric.INTERLEAVE) < 0.12


def test_the_checkpoints_fit_and_judge_the_random_tours_alone():
    n = 30
    W = euclidean(n, 2)
    layout = FeatureLayout([PermutationParameter("t", list(range(n)))], False)
    rng, f = np.random.default_rng(5), cost(W)
    tours = [rng.permutation(n) for _ in range(5 * n)]
    models = [MetricBayesLinear(layout.size, layout.groups, seed=3) for _ in range(2)]
    for k, t in enumerate(tours):
        for model in models:
            model.add(layout.encode({"t": list(t)}), f(t))
            model.mark_random()
        if k >= 3 * n and k % 3 == 0:     # a chosen tour after a first fit: near the identity, unmarked
            u = np.arange(n)
            u[[k % n, (k + 1) % n]] = u[[(k + 1) % n, k % n]]
            models[1].add(layout.encode({"t": list(u)}), f(u))
    a, b = (model.identify() for model in models)
    assert a == b
    assert models[0].held_out_r2 == models[1].held_out_r2
    for key, theta in models[0].theta.items():
        assert np.array_equal(theta, models[1].theta[key])


def test_the_random_tours_and_the_acceptance_are_those_of_a_run_without_chosen_tours(monkeypatch):
    W = euclidean(30, 4)
    with_chosen, tech = run(W, 300)
    monkeypatch.setattr(metric, "INTERLEAVE", 0.0)
    without, plain = run(W, 300)
    assert any(fb.requestor == "M/tentative" for fb, _ in with_chosen)
    assert tech.model.status == plain.model.status == "accepted"
    assert tech.random_results == plain.random_results
    assert tech.model.held_out_r2 == plain.model.held_out_r2
    randoms = [[fb.key for fb, _ in out if fb.requestor == "M/identify"] for out in (with_chosen, without)]
    assert randoms[0] == randoms[1][:len(randoms[0])]


def test_the_chosen_tours_are_deterministic_and_re_derived_on_resume():
    W = euclidean(24, 6)
    a, tech = run(W, 150, seed=2)
    b, _ = run(W, 150, seed=2)
    assert [fb.key for fb, _ in a] == [fb.key for fb, _ in b]
    assert any(fb.requestor == "M/tentative" for fb, _ in a)
    state = json.loads(json.dumps(tech.state_dict()))
    fresh = MetricStructuralSurrogate("M")
    fresh.bind(ConfigurationManipulator([PermutationParameter("t", list(range(24)))]), random.Random(2), "M")
    for fb, _ in a:                       # the engine feeds every stored result back, then the state
        fresh.observe(fb)
    fresh.load_state_dict(state)
    assert fresh.random_results == tech.random_results
    assert fresh.model.random_rows == tech.model.random_rows
    assert fresh.model.tentatives == tech.model.tentatives and fresh.model.status == tech.model.status
    assert np.array_equal(fresh.model.tentative, tech.model.tentative)

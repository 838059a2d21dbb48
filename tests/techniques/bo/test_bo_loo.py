"""BayesianOptimization's option ``surrogate_loo``: each BO proposal uses the surrogate whose GP ranks
the OK results best by leave-one-out prediction (:mod:`tunerlib.techniques.bo.loo`)."""
import random

import numpy as np
import pytest

from tunerlib.parameters import ConfigurationManipulator, EnumParameter, IntegerParameter, PowerOfTwoParameter
from tunerlib.techniques import Feedback
from tunerlib.techniques.bo import BayesianOptimization, technique
from tunerlib.techniques.bo.gp import GaussianProcess, Hyper
from tunerlib.techniques.bo.loo import MIN_RESULTS, loo_choice, loo_rank_correlation

FAST = dict(n_random_samples=200, n_starts=3, hp_samples=10, hp_starts=2, max_local_steps=4)


def stack(X):
    return np.stack([(X[:, i, None] - X[None, :, i]) ** 2 for i in range(X.shape[1])])


def smooth_sample(n=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2
    return X, (y - y.mean()) / y.std()


def gp_with(X, y, hyper):
    gp = GaussianProcess(stack(X), y)
    gp.set_hyper(hyper)
    return gp


def test_loo_means_equal_predictions_from_the_other_points():
    X, y = smooth_sample()
    hyper = Hyper(np.array([0.4, 0.7]), 1.3, 1e-3)
    means = gp_with(X, y, hyper).loo_means()
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        rest = gp_with(X[keep], y[keep], hyper)
        cross = np.stack([(X[i, d] - X[keep, d])[None, :] ** 2 for d in range(2)])
        assert rest.predict(cross)[0][0] == pytest.approx(means[i], abs=1e-6)


def test_an_all_noise_fit_ranks_the_results_worse_than_a_fit_with_signal():
    X, y = smooth_sample()
    signal = gp_with(X, y, Hyper(np.array([0.4, 0.7]), 1.0, 1e-4))
    noise = gp_with(X, y, Hyper(np.array([0.4, 0.7]), 0.01, 1.0))
    assert loo_rank_correlation(signal) > 0.8
    assert loo_rank_correlation(noise) < loo_rank_correlation(signal)


def test_loo_choice_takes_the_better_ranking_and_keeps_the_turn_on_ties_and_few_results():
    X, y = smooth_sample()
    signal = gp_with(X, y, Hyper(np.array([0.4, 0.7]), 1.0, 1e-4))
    noise = gp_with(X, y, Hyper(np.array([0.4, 0.7]), 0.01, 1.0))
    assert loo_choice(0, 2, [noise, signal].__getitem__) == 1
    assert loo_choice(1, 2, [signal, noise].__getitem__) == 0
    assert loo_choice(1, 2, [signal, signal].__getitem__) == 1
    few = gp_with(X[:MIN_RESULTS - 1], y[:MIN_RESULTS - 1], Hyper(np.array([0.4, 0.7]), 0.01, 1.0))
    assert loo_choice(1, 2, [signal, few].__getitem__) == 1


def space():
    return ConfigurationManipulator([PowerOfTwoParameter("a", 1, 1024), IntegerParameter("c", 0, 9),
                                     EnumParameter("e", ["x", "y", "z"])])


def value(c):
    return 1.0 + abs(np.log2(c["a"]) - 6) + abs(c["c"] - 3) / 3 + {"x": 0.0, "y": 0.5, "z": 2.0}[c["e"]]


@pytest.mark.parametrize("designs", [0, 1, 100])
def test_each_proposal_uses_the_surrogate_of_best_loo_ranking_while_results_are_few(monkeypatch, designs):
    calls = []

    def spy(turn, count, fitted):
        chosen = loo_choice(turn, count, fitted)
        calls.append((tech._turns, turn, chosen, [loo_rank_correlation(fitted(i)) for i in range(count)]))
        return chosen
    monkeypatch.setattr(technique, "loo_choice", spy)
    m = space()
    tech = BayesianOptimization(surrogate_loo=designs, **FAST)
    tech.bind(m, random.Random(1), "BO")
    chosen_at = {}
    for _ in range(16):
        ok_before = tech._window.ok_states
        proposal = tech.propose()
        if calls and calls[-1][0] == tech._turns and tech._turns not in chosen_at:
            _, turn, chosen, scores = calls[-1]
            chosen_at[tech._turns] = ok_before
            assert tech._fs is tech._fit_states[chosen]
            assert all(fs.model_at == len(tech._results) for fs in tech._fit_states)   # both fitted
            assert scores[chosen] == max(scores) or (chosen == turn and ok_before < MIN_RESULTS)
        cfg = proposal.config
        tech.observe(Feedback(cfg, m.hash_config(cfg), value(cfg), "ok", tech.name, False))
    limit = designs * tech.n_initial
    assert len(tech._fit_states) == 2 and tech._turns > 1
    assert sorted(chosen_at) == [t for t in range(1, tech._turns + 1) if tech.n_initial + t - 1 <= limit]
    assert all(n <= limit for n in chosen_at.values())

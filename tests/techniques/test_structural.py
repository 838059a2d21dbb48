"""StructuralSurrogate: the model recovers additive costs, the tour search is exact, the technique finds
optima of additive problems and stays no worse than plain mutation where the objective is not additive."""
import itertools
import json
import random
import statistics

import numpy as np
import pytest

from tunerlib import tune_function
from tunerlib.parameters import ConfigurationManipulator, EnumParameter, IntegerParameter, PermutationParameter
from tunerlib.parameters.features import FeatureLayout
from tunerlib.techniques import registry
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.structural import StructuralSurrogate
from tunerlib.techniques.structural.constrained import FeasibleCandidates
from tunerlib.techniques.structural.credit import prob_better
from tunerlib.techniques.structural.model import SparseBayesLinear
from tunerlib.techniques.structural.tours import (_neighbourhood, apply_or_opt, apply_two_opt, local_search,
                                                  move_table, order_search, precedence_changes, tour_value)


def _matrix(n, seed, symmetric=True):
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2)) * 100
    M = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1)).round()
    if not symmetric:
        M = M + rng.integers(0, 30, (n, n)) * (1 - np.eye(n))
    if symmetric is None:  # no symmetric part at all
        M = rng.integers(1, 100, (n, n)) * (1 - np.eye(n))
    return M


def _held_karp(M):
    """Exact shortest closed tour (dynamic programming; small n only)."""
    n = len(M)
    best = {(1, 0): 0.0}
    for size in range(2, n + 1):
        for subset in itertools.combinations(range(1, n), size - 1):
            mask = 1 | sum(1 << k for k in subset)
            for last in subset:
                prev = mask ^ (1 << last)
                best[(mask, last)] = min(best[(prev, j)] + M[j][last] for j in [0, *subset]
                                         if j != last and (prev, j) in best)
    full = (1 << n) - 1
    return min(best[(full, j)] + M[j][0] for j in range(1, n))


@pytest.mark.parametrize("n, seed", [(2, 0), (3, 1), (4, 2), (7, 3), (12, 4), (29, 5)])
def test_precedence_changes_of_every_insertion_and_swap_equal_the_resummed_values(n, seed):
    rng = np.random.default_rng(seed)
    P, C = rng.standard_normal((n, n)), np.zeros((n, n))
    t = rng.permutation(n)
    neighbours = _neighbourhood(t)
    resummed = np.array([tour_value(row, C, P) for row in neighbours]) - tour_value(t, C, P)
    assert np.allclose(precedence_changes(t, P), resummed, rtol=0, atol=1e-9)
    assert len(neighbours) == n * (n - 1) + (n - 1) * (n - 2) // 2   # every insertion, every non-adjacent swap


@pytest.mark.parametrize("n", [5, 6, 8, 13])
@pytest.mark.parametrize("symmetric", [True, False])
def test_every_scored_move_equals_the_change_in_tour_value(n, symmetric):
    M = _matrix(n, n, symmetric)
    t = np.random.default_rng(0).permutation(n)
    base = tour_value(t, M)
    table = move_table(t, M)
    two_opt = {(i, j) for i in range(n) for j in range(i + 2, n)}
    assert {tuple(x) for x in np.argwhere(np.isfinite(table[0]))} == two_opt
    for i, j in two_opt:
        assert tour_value(apply_two_opt(t, i, j), M) - base == pytest.approx(table[0, i, j])
    for s in (1, 2, 3):
        for reverse in (False, True):
            deltas = table[2 * s - 1 + reverse]
            for i, k in zip(*np.nonzero(np.isfinite(deltas))):
                moved = apply_or_opt(t, i, s, k, reverse)
                assert sorted(moved) == list(range(n))
                assert tour_value(moved, M) - base == pytest.approx(deltas[i, k])
            legal = ((np.arange(n)[None, :] - np.arange(n)[:, None] + 1) % n) > s
            if reverse:
                legal &= (np.arange(n)[:, None] + s <= n) & (s > 1)
            assert (np.isfinite(deltas) == legal).all()


def test_local_searches_never_worsen_and_end_in_a_local_optimum():
    M = _matrix(12, 3, symmetric=False)
    t = np.random.default_rng(1).permutation(12)
    out = local_search(t, M)
    assert tour_value(out, M) <= tour_value(t, M)
    assert np.min(move_table(out, M)) >= -1e-9
    P = np.triu(np.random.default_rng(2).random((12, 12)), 1)
    ordered = order_search(t, M, P)
    assert tour_value(ordered, M, P) <= tour_value(t, M, P)


def _random_tours(param, count, seed):
    rnd = random.Random(seed)
    return [param.random_value(rnd) for _ in range(count)]


@pytest.mark.parametrize("symmetric", [True, False])
def test_the_model_recovers_known_additive_costs_from_data(symmetric):
    n = 12
    M = _matrix(n, 7, True if symmetric else None)
    param = PermutationParameter("tour", list(range(n)))
    layout = FeatureLayout([param], precedence=False)
    model = SparseBayesLinear(layout.size, layout.groups, cg_steps=50)
    length = lambda tour: tour_value(np.asarray(tour), M)  # noqa: E731
    for tour in _random_tours(param, 400, 1):
        model.add(layout.encode({"tour": tour}), length(tour))
    for _ in range(4):
        model.n_changed = True
        model._fitted_n = 0
        model.refresh()
    errors = [abs(model.predict(layout.encode({"tour": t}), model.mean) - length(t)) / length(t)
              for t in _random_tours(param, 50, 2)]
    assert max(errors) < 0.01


def test_the_model_reads_a_bounded_window_of_a_long_run(monkeypatch):
    """With a window of 300 observations, a run of 3,000 re-solves on at most the window plus the
    pending observations, its per-feature counts are those of the window's rows, and it still
    recovers the known costs."""
    n = 12
    M = _matrix(n, 7, True)
    param = PermutationParameter("tour", list(range(n)))
    layout = FeatureLayout([param], precedence=False)
    model = SparseBayesLinear(layout.size, layout.groups, cg_steps=50, window=300)
    solved = []
    solve = SparseBayesLinear._solve
    monkeypatch.setattr(SparseBayesLinear, "_solve", lambda self, X, steps: (solved.append(X.shape[0]),
                                                                               solve(self, X, steps))[1])
    length = lambda tour: tour_value(np.asarray(tour), M)  # noqa: E731
    for tour in _random_tours(param, 3000, 1):
        model.add(layout.encode({"tour": tour}), length(tour))
        model.refresh()
    assert max(solved) <= 300 + 50 and model.first >= 3000 - 300 - 50
    X = model.rows.matrix(model.first)
    assert np.allclose(model.counts, np.asarray(X.multiply(X).sum(axis=0)).ravel())
    errors = [abs(model.predict(layout.encode({"tour": t}), model.mean) - length(t)) / length(t)
              for t in _random_tours(param, 50, 2)]
    assert max(errors) < 0.02


def test_it_finds_the_exact_optimum_of_a_small_tour_well_within_the_budget():
    M = _matrix(11, 5)
    optimum = _held_karp(M)
    space = lambda: ConfigurationManipulator([PermutationParameter("tour", list(range(11)))])  # noqa: E731
    best = [tune_function(space(), lambda c: tour_value(np.asarray(c["tour"]), M), test_limit=400,
                          technique=["StructuralSurrogate"], seed=s).summary.best_value for s in (1, 2, 3)]
    assert best == [optimum] * 3


def _inversions_squared(cfg):
    p = cfg["order"]
    inv = sum(1 for i in range(len(p)) for j in range(i + 1, len(p)) if p[i] > p[j])
    return float(inv * inv)


def test_on_a_non_additive_objective_it_is_no_worse_than_plain_greedy_mutation():
    space = lambda: ConfigurationManipulator([PermutationParameter("order", list(range(14)))])  # noqa: E731

    def median(technique):
        return statistics.median(
            tune_function(space(), _inversions_squared, test_limit=300, technique=[technique],
                          seed=s).summary.best_value for s in range(5))

    assert median("StructuralSurrogate") <= median("UniformGreedyMutation")


def test_the_model_side_never_proposes_a_measured_configuration():
    m = ConfigurationManipulator([PermutationParameter("p", list(range(5))), EnumParameter("e", ["a", "b"])])
    tech = StructuralSurrogate(initial=3)
    tech.bind(m, random.Random(0), "S")
    rnd = random.Random(1)
    for _ in range(120):  # half of the 240 configurations
        cfg = m.random(rnd)
        tech.observe(Feedback(cfg, m.hash_config(cfg), float(sum(cfg["p"][:2])), "ok", "other", False))
    for _ in range(30):
        cfg = tech._from_model()
        assert cfg is None or m.hash_config(cfg) not in tech.seen


def test_mixed_spaces_are_searched_and_state_round_trips():
    m = ConfigurationManipulator([IntegerParameter("i", 0, 50), EnumParameter("e", ["a", "b", "c"]),
                                  PermutationParameter("p", list(range(6)))])

    def f(c):
        return (c["i"] - 17) ** 2 + {"a": 5, "b": 0, "c": 9}[c["e"]] + c["p"].index(0)

    run = tune_function(m, f, test_limit=150, technique=["StructuralSurrogate"], seed=4)
    assert run.summary.best_value <= 2
    tech = registry().create("StructuralSurrogate")
    tech.bind(m, random.Random(0), "S")
    for _ in range(60):
        proposal = tech.propose()
        cfg = proposal.config
        tech.observe(Feedback(cfg, m.hash_config(cfg), float(f(cfg)), "ok", proposal.requestor, False))
    state = json.loads(json.dumps(tech.state_dict()))
    assert state["credit"]["fallback"] and state["fallback"]["bandit"]
    fresh = registry().create("StructuralSurrogate")
    fresh.bind(m, random.Random(1), "S")
    fresh.load_state_dict(state)
    assert fresh.state_dict() == state


def test_a_resumed_run_keeps_the_saved_record_without_counting_the_replayed_results_twice():
    """A resume without replay feeds every stored result back to ``observe`` (which counts the model's
    and the fallback's new bests again) and then loads the snapshot: the snapshot's record is the
    record, not added to the re-counted one."""
    m = ConfigurationManipulator([IntegerParameter("i", 0, 50), PermutationParameter("p", list(range(6)))])

    def f(c):
        return (c["i"] - 17) ** 2 + c["p"].index(0)

    tech = registry().create("StructuralSurrogate")
    tech.bind(m, random.Random(0), "S")
    fed = []
    for _ in range(80):
        proposal = tech.propose()
        cfg = proposal.config
        fed.append(Feedback(cfg, m.hash_config(cfg), float(f(cfg)), "ok", proposal.requestor, False))
        tech.observe(fed[-1])
    state = json.loads(json.dumps(tech.state_dict()))
    assert state["credit"]["model"] and state["credit"]["fallback"] and state["predictions"]
    resumed = registry().create("StructuralSurrogate")
    resumed.bind(m, random.Random(0), "S")
    for feedback in fed:
        resumed.observe(feedback)
    resumed.load_state_dict(state)
    assert resumed.state_dict()["credit"] == state["credit"]
    assert resumed.state_dict()["predictions"] == state["predictions"]


def test_through_the_real_cli_runs_are_identical_across_processes_under_a_seed(tmp_path):
    import re
    import subprocess
    import sys
    from pathlib import Path
    tuner = Path(__file__).resolve().parents[2] / "examples" / "tsp" / "tsp_tuner.py"
    lengths = []
    for k in range(2):
        out = subprocess.run([sys.executable, str(tuner), "--random", "16", "--technique", "StructuralSurrogate",
                              "--test-limit", "120", "--seed", "5", "--database", str(tmp_path / f"{k}.db")],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        lengths.append(re.search(r"length: (\d+)", out.stdout).group(1))
    assert lengths[0] == lengths[1]


def _linked_space():
    """Two linked choices (gs a multiple of ls; one-hot features, so the cost is exactly additive)
    and an enum; the optimum is (gs 16, ls 16, 'c') -- the per-parameter minimum (gs 8, ls 16) is
    infeasible."""
    m = ConfigurationManipulator([EnumParameter("gs", [1, 2, 4, 8, 16, 32]),
                                  EnumParameter("ls", [1, 2, 4, 8, 16, 32]), EnumParameter("e", ["a", "b", "c"])])
    m.add_constraint("gs % ls == 0")
    gs_cost = {1: 9, 2: 7, 4: 5, 8: 0, 16: 1, 32: 6}
    ls_cost = {1: 8, 2: 6, 4: 5, 8: 4, 16: 0, 32: 9}

    def f(c):
        return gs_cost[c["gs"]] + ls_cost[c["ls"]] + {"a": 2, "b": 1, "c": 0}[c["e"]]
    return m, f


def test_on_a_constrained_space_the_model_minimum_is_taken_over_feasible_configurations():
    m, f = _linked_space()
    feasible = [c for c in (dict(gs=g, ls=l, e=e) for g in [1, 2, 4, 8, 16, 32] for l in [1, 2, 4, 8, 16, 32]
                            for e in "abc") if c["gs"] % c["ls"] == 0]
    cands = FeasibleCandidates(m, FeatureLayout(m.parameters))
    assert cands.enumerated and cands.X.shape[0] == len(feasible)
    layout = FeatureLayout(m.parameters)
    model = SparseBayesLinear(layout.size, layout.groups)
    for cfg in feasible:
        model.add(layout.encode(cfg), f(cfg))
    model.refresh()
    best = cands.best(model.mean, feasible[0], radius=99, excluded=set(), own=None,
                      rng=random.Random(0), np_rng=np.random.default_rng(0))
    assert best == {"gs": 16, "ls": 16, "e": "c"}
    cands.mark(m.hash_config(best))                       # measured: the next best feasible one
    second = cands.best(model.mean, feasible[0], 99, set(), None, random.Random(0), np.random.default_rng(0))
    assert second != best and m.is_feasible(second) and f(second) == min(f(c) for c in feasible if c != best)


def test_model_proposals_on_constrained_spaces_are_feasible_and_find_the_optimum():
    m, f = _linked_space()
    run = tune_function(m, f, test_limit=30, technique=["StructuralSurrogate"], seed=4)
    assert run.summary.best_value == 1  # gs 16, ls 16, 'c'


def _fed(objective, n=80, seed=0, **options):
    """A StructuralSurrogate on ten 4-way choices, given ``n`` random configurations valued by
    ``objective`` (as another technique's results)."""
    m = ConfigurationManipulator([EnumParameter(f"e{i}", list("abcd")) for i in range(10)])
    tech = StructuralSurrogate(**options)
    tech.bind(m, random.Random(seed), "SS")
    rng = random.Random(seed + 1)
    for i in range(n):
        cfg = m.random(rng)
        tech.observe(Feedback(cfg, m.hash_config(cfg), objective(cfg, rng), "ok", "other", False))
        if i % 5 == 4:
            tech.model.refresh()
    return tech


def test_the_gate_gives_the_model_nothing_while_it_does_not_predict_and_has_no_better_record():
    weights = {f"e{i}": {c: (i + 1) * k for k, c in enumerate("abcd")} for i in range(10)}
    additive = [_fed(lambda cfg, rng: sum(weights[k][v] for k, v in cfg.items()), seed=s, explore=0)
                for s in range(8)]
    noisy = [_fed(lambda cfg, rng: rng.random(), seed=s, explore=0) for s in range(8)]
    # predictions track the values: the share (0.5 before any record) is not capped
    assert min(t._model_share() for t in additive) == pytest.approx(0.5)
    # rank correlation within a standard error of 0: no share for the model
    assert statistics.mean(t._model_share() for t in noisy) < 0.05
    # the plain cap (no gate_z): near min_share (0.1) on average
    plain = [_fed(lambda cfg, rng: rng.random(), seed=s, explore=0, gate_z=None) for s in range(8)]
    assert statistics.mean(t._model_share() for t in plain) < 0.25
    noise = noisy[0]
    ungated = _fed(lambda cfg, rng: rng.random(), gate=0, explore=0)
    assert ungated._model_share() == pytest.approx(0.5)
    again = StructuralSurrogate()
    again.bind(noise.manipulator, random.Random(0), "SS")
    again.load_state_dict(json.loads(json.dumps(noise.state_dict())))
    assert list(again.predictions) == list(noise.predictions)


def test_the_model_side_does_its_linear_algebra_on_one_blas_thread(monkeypatch):
    """Threaded BLAS on vectors of the model's size costs more than it saves on a busy machine and
    makes sums depend on the thread count (tunerlib.techniques.blas): the model refresh, sampling and
    search run with BLAS limited to one thread, and the limit is lifted again afterwards."""
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    seen = []
    refresh = SparseBayesLinear.refresh
    monkeypatch.setattr(SparseBayesLinear, "refresh", lambda self: (seen.append(blas_threads()), refresh(self))[1])
    m = ConfigurationManipulator([PermutationParameter("tour", list(range(12)))])
    with threadpool_limits(limits=2, user_api="blas"):
        outside = blas_threads()
        tune_function(m, lambda c: float(sum(abs(a - b) for a, b in zip(c["tour"], c["tour"][1:]))),
                      test_limit=40, technique=["StructuralSurrogate"], seed=1)
        assert blas_threads() == outside
    assert seen and all(threads == [1] * len(threads) for threads in seen), seen


def test_prob_better_is_a_probability_that_follows_the_records():
    assert prob_better((0.0, 0.0), (0.0, 0.0)) == pytest.approx(0.5)
    assert prob_better((3.0, 30.0), (3.0, 30.0)) == pytest.approx(0.5, abs=0.01)
    assert prob_better((0.0, 20.0), (8.0, 60.0)) < 0.05
    assert prob_better((6.0, 30.0), (2.0, 60.0)) > 0.95
    # more evidence of the same rates: more decisive
    assert prob_better((0.0, 20.0), (4.0, 40.0)) < prob_better((0.0, 5.0), (1.0, 10.0)) < 0.5


def _credited(model_improves, fallback_improves, steps=80, **options):
    """A StructuralSurrogate (no gate) on ten 4-way choices after ``steps`` suggestions of its own,
    each result a new best when the requesting arm's ``*_improves(k)`` says so for its k-th result."""
    m = ConfigurationManipulator([EnumParameter(f"e{i}", list("abcd")) for i in range(10)])
    tech = StructuralSurrogate(gate=0, **options)
    tech.bind(m, random.Random(0), "SS")
    counts = {"model": 0, "fallback": 0}
    for _ in range(steps):
        proposal = tech.propose()
        arm = "model" if proposal.requestor == tech.path else "fallback"
        improves = (model_improves if arm == "model" else fallback_improves)(counts[arm])
        counts[arm] += 1
        value = tech.best_value - 1.0 if tech.best_config is not None and improves else 1000.0 + counts[arm]
        cfg = proposal.config
        tech.observe(Feedback(cfg, m.hash_config(cfg), value, "ok", proposal.requestor, False))
    return tech, counts


def test_a_model_whose_proposals_never_improve_falls_to_the_floor():
    # the fallback finds a new best one time in ten, the model never: within 80 suggestions the
    # model's share is min_share (the rate ratio would still give it about a third)
    tech, counts = _credited(lambda k: False, lambda k: k % 10 == 9)
    assert tech._model_share() == pytest.approx(tech.min_share)
    assert counts["model"] >= 6


def test_a_model_that_improves_more_often_keeps_its_share():
    tech, counts = _credited(lambda k: k % 3 == 2, lambda k: k % 10 == 9)
    assert tech._model_share() >= 0.8
    assert counts["model"] > counts["fallback"] - 10


def test_the_model_keeps_its_share_on_an_additive_objective():
    # twenty 5-way choices with additive random costs: the model's proposals find new bests more often
    # than the fallback's, and it keeps a majority share (fitting the raw values, which a sum is; the
    # default fits the logarithm on spaces without a permutation: test_structural_transform.py)
    rnd = np.random.default_rng(0)
    weights = {f"e{i}": dict(zip("abcde", rnd.random(5))) for i in range(20)}
    m = ConfigurationManipulator([EnumParameter(f"e{i}", list("abcde")) for i in range(20)])
    for seed in range(3):
        tech = StructuralSurrogate(log_values=False)
        tech.bind(m, random.Random(seed), "SS")
        for _ in range(80):
            proposal = tech.propose()
            cfg = proposal.config
            value = float(sum(weights[k][v] for k, v in cfg.items()))
            tech.observe(Feedback(cfg, m.hash_config(cfg), value, "ok", proposal.requestor, False))
        model, fallback = tech.credit["model"], tech.credit["fallback"]
        assert sum(model) / len(model) > sum(fallback) / len(fallback)
        assert tech._model_share() >= 0.6

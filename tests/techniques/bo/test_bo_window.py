"""BayesianOptimization's training window (techniques/bo/window.py): the same training set as choosing
from every result, without scanning every result per proposal."""
import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters import ConfigurationManipulator, FloatParameter
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.bo.technique import BayesianOptimization
from tunerlib.techniques.bo.window import TrainingWindow


def _chosen_from_everything(results, cap, impute):
    """The training set chosen from the whole list of (config, value, state) results."""
    ok = [(c, v) for c, v, s in results if s == "ok" and math.isfinite(v)]
    if impute and ok:
        worst = max(v for _, v in ok)
        ok += [(c, worst) for c, _, s in results if s != "ok"]
    if len(ok) <= cap:
        return ok
    keep = set(sorted(range(len(ok)), key=lambda i: ok[i][1])[: cap // 2])
    for i in range(len(ok) - 1, -1, -1):
        if len(keep) >= cap:
            break
        keep.add(i)
    return [ok[i] for i in sorted(keep)]


RESULT = st.tuples(st.sampled_from([1.0, 2.0, 3.0, 0.5, math.inf, math.nan]),
                   st.sampled_from(["ok", "ok", "ok", "error", "infeasible"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(RESULT, max_size=40), st.integers(1, 12), st.booleans())
def test_the_window_chooses_what_a_full_scan_chooses(results, cap, impute):
    window = TrainingWindow(cap, impute)
    seen = []
    for i, (value, state) in enumerate(results):
        window.add(i, value, state)
        seen.append((i, value, state))
        assert window.training_set() == _chosen_from_everything(seen, cap, impute)
    best, since = math.inf, 0
    for _, v, s in seen:
        if s == "ok" and math.isfinite(v):
            best, since = (v, 0) if v < best else (best, since + 1)
    assert window.stalled == since and window.ok_states == sum(s == "ok" for _, _, s in seen)


class _Unscannable(dict):
    """A results dict that counts scans of all its entries."""

    scans = 0

    def values(self):
        _Unscannable.scans += 1
        return super().values()


def test_a_proposal_does_not_scan_every_result():
    """After 3,000 results (no failure), choosing the training set, the stall count and whether a
    feasibility model is needed read no list of every result."""
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), FloatParameter("y", 0.0, 1.0)])
    bo = BayesianOptimization(initial_samples=2)
    bo.bind(m, random.Random(0), "bo")
    rng = random.Random(1)
    for _ in range(3000):
        cfg = m.random(rng)
        bo.observe(Feedback(cfg, m.hash_config(cfg), cfg["x"] + cfg["y"], "ok", "bo", False))
    bo._results = _Unscannable(bo._results)
    _Unscannable.scans = 0
    train = bo._training_set()
    assert len(train) == bo.options.max_observations and bo._stalled() >= 0
    assert bo._fit_feasibility() is None
    assert _Unscannable.scans == 0


def _feasibility_from_everything(results, cap):
    """The feasibility forest's window chosen from the whole list of (config, value, state) results."""
    if len(results) <= cap:
        return [(c, s == "ok") for c, _, s in results]
    ok = [(i, v) for i, (_, v, s) in enumerate(results) if s == "ok" and math.isfinite(v)]
    best = [i for i, _ in sorted(ok, key=lambda e: (e[1], e[0]))[: cap // 2]]
    failed = [i for i, (_, _, s) in enumerate(results) if s != "ok"]
    keep = set(range(len(results) - cap, len(results))) | set(best)
    keep |= set(failed[max(0, len(failed) - cap // 2):])
    return [(results[i][0], results[i][2] == "ok") for i in sorted(keep)]


@settings(max_examples=300, deadline=None)
@given(st.lists(RESULT, max_size=40), st.integers(1, 12))
def test_the_feasibility_window_is_the_recent_the_best_and_the_recent_failures(results, cap):
    window = TrainingWindow(cap, False)
    seen = []
    for i, (value, state) in enumerate(results):
        window.add(i, value, state)
        seen.append((i, value, state))
        configs, labels = window.feasibility_set()
        assert list(zip(configs, labels)) == _feasibility_from_everything(seen, cap)
        assert len(configs) <= max(len(seen) if len(seen) <= cap else 0, 2 * cap)


def test_the_feasibility_forest_trains_on_a_bounded_window():
    """After 2,000 results, a third of them failures, the forest is trained on at most twice the GP's
    cap of results, not on every result."""
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), FloatParameter("y", 0.0, 1.0)])
    bo = BayesianOptimization(initial_samples=2, max_observations=100)
    bo.bind(m, random.Random(0), "bo")
    rng = random.Random(1)
    for _ in range(2000):
        cfg = m.random(rng)
        state = "error" if cfg["x"] > 0.66 else "ok"
        bo.observe(Feedback(cfg, m.hash_config(cfg), cfg["x"] + cfg["y"], state, "bo", False))
    sizes = []
    fit = bo.feasibility.fit
    bo.feasibility.fit = lambda configs, labels, seed: sizes.append(len(configs)) or fit(configs, labels, seed)
    assert bo._fit_feasibility() is bo.feasibility
    assert sizes and sizes[0] <= 200
    assert bo.feasibility.probability([{"x": 0.9, "y": 0.5}])[0] < 0.5 < bo.feasibility.probability(
        [{"x": 0.1, "y": 0.5}])[0]


def test_stall_gain_keeps_the_stall_count_through_small_improvements():
    gained, any_gain = TrainingWindow(300, False, stall_gain=0.01), TrainingWindow(300, False)
    for k, value in enumerate((100.0, 99.9, 99.8, 99.5)):
        gained.add({"x": k}, value, "ok")
        any_gain.add({"x": k}, value, "ok")
    assert (gained.stalled, any_gain.stalled) == (3, 0)
    assert gained.best == any_gain.best == 99.5
    gained.add({"x": 9}, 98.9, "ok")           # 1.1 % below 100: a meaningful gain
    assert gained.stalled == 0
    mixed = TrainingWindow(300, False, stall_gain=0.5)
    for k, value in enumerate((0.5, -0.1, -0.11)):   # across zero any gain counts; then 10 % < 50 %
        mixed.add({"x": k}, value, "ok")
    assert mixed.stalled == 1


def test_a_run_crawling_by_tenths_of_a_percent_counts_as_stalled_by_default():
    m = ConfigurationManipulator([FloatParameter("x", 0.0, 1.0)])
    tech = BayesianOptimization()
    assert tech.option_values()["stall_gain"] == 0.01
    tech.bind(m, random.Random(0), "BO")
    for k in range(8):
        cfg = {"x": k / 10}
        tech.observe(Feedback(cfg, m.hash_config(cfg), 100.0 * 0.999 ** k, "ok", "Other", True))
    assert tech._stalled() == 7 >= tech.options.stall_after    # the trust-region steps are due

"""BayesianOptimization's initial design sized from the run's test limit (techniques/bo/budget.py)."""
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tunerlib import tune_function
from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.techniques import Feedback, register, registry
from tunerlib.techniques.auto import AutoTechnique
from tunerlib.techniques.auto_rule import BO
from tunerlib.techniques.base import SearchContext
from tunerlib.techniques.bo import BayesianOptimization
from tunerlib.techniques.bo.budget import design_size, known_test_limit

#: cheaper acquisition/hyperparameter search
LIGHT = dict(n_random_samples=200, n_starts=3, hp_samples=10, hp_starts=2, max_local_steps=3)
#: the design as a fifth of a known test limit
SHARE = dict(design_share=0.2)


def limited(limit):
    return SearchContext(test_limit=limit, budget_kind="tests")


def space(d):
    return ConfigurationManipulator([IntegerParameter(f"x{i}", 0, 15) for i in range(d)])


def bound(d, context, **options):
    tech = BayesianOptimization(**{**LIGHT, **options})
    tech.set_context(context)
    tech.bind(space(d), random.Random(0), "BO")
    return tech


def test_the_design_is_a_share_of_a_known_test_limit_between_one_and_two_designs():
    assert design_size(10, limited(100), 0.2, 2.0) == 20
    assert design_size(10, limited(200), 0.2, 2.0) == 22           # capped at 2 (d + 1)
    assert design_size(10, limited(20), 0.2, 2.0) == 11            # never below d + 1
    assert design_size(4, limited(20), 0.2, 2.0) == 5
    assert design_size(10, limited(100), 0.0, 2.0) == 11           # share 0: d + 1
    assert design_size(10, limited(100), 0.2, 2.0, fixed=7) == 7   # initial_samples wins


def test_without_a_known_test_limit_the_design_is_d_plus_1():
    for context in (SearchContext(), SearchContext(test_limit=1000, budget_kind="default"),
                    SearchContext(test_limit=None, budget_kind="time", stop_after=60.0)):
        assert known_test_limit(context) is None
        assert design_size(10, context, 0.2, 2.0) == 11


@settings(max_examples=200, deadline=None)
@given(d=st.integers(1, 60), limit=st.integers(1, 10 ** 5), share=st.floats(0.0, 1.0),
       cap=st.floats(1.0, 10.0))
def test_the_design_stays_between_d_plus_1_and_the_cap(d, limit, share, cap):
    size = design_size(d, limited(limit), share, cap)
    assert d + 1 <= size <= max(d + 1, int(cap * (d + 1)))
    assert size >= min(int(cap * (d + 1)), round(share * limit))


def test_bind_sizes_the_design_from_the_context():
    assert bound(10, limited(100), **SHARE).n_initial == 20
    assert bound(10, limited(20), **SHARE).n_initial == 11
    assert bound(10, SearchContext(), **SHARE).n_initial == 11
    assert bound(10, limited(100), design_share=0.2, design_cap=1.5).n_initial == 16
    assert bound(10, limited(100), initial_samples=3, **SHARE).n_initial == 3
    assert bound(10, limited(100)).n_initial == 11                      # the default: d + 1
    assert BayesianOptimization().option_values()["design_share"] == 0.0


def test_a_run_with_a_test_limit_sizes_the_design_from_it():
    made = []

    def probe():
        made.append(BayesianOptimization("BudgetProbeBO", **LIGHT, **SHARE))
        return made[-1]

    if "BudgetProbeBO" not in registry():
        register("BudgetProbeBO", probe, "test variant of BayesianOptimization")
    values = tune_function(space(4), lambda cfg: sum((v - 5) ** 2 for v in cfg.values()), test_limit=30,
                           technique=["BudgetProbeBO"], seed=1).values
    tech = made[-1]
    assert len(values) == 30 and tech.context.test_limit == 30 and tech.context.budget_kind == "tests"
    assert tech.n_initial == 6 and tech._initial_made == 6      # 0.2 x 30 = 6 > d + 1 = 5


def test_auto_gives_bayesian_optimization_the_runs_test_limit():
    auto = AutoTechnique("auto")
    auto.set_context(limited(100))
    auto.bind(space(10), random.Random(0), "auto")
    member = auto.members[BO]
    assert auto.active == BO and member.context.test_limit == 100 and member.context.budget_kind == "tests"
    assert member.n_initial == design_size(10, member.context, member.options.design_share,
                                           member.options.design_cap)


@pytest.mark.parametrize("fitted", [False, True])
def test_a_resumed_run_keeps_the_design_size_of_its_state(fitted):
    tech = bound(4, limited(100), **SHARE)
    assert tech.n_initial == 10
    if fitted:
        rng = random.Random(3)
        m = tech.manipulator
        for _ in range(12):
            cfg = m.random(rng)
            tech.observe(_ok(m, cfg, sum(cfg.values())))
        assert tech.desired_configuration() is not None
    state = json.loads(json.dumps(tech.state_dict()))
    assert state["initial_samples"] == 10
    resumed = bound(4, limited(20), **SHARE)          # resumed with another limit
    assert resumed.n_initial == 5
    resumed.load_state_dict(state)
    assert resumed.n_initial == 10 and resumed._restart.size == 10


def _ok(m, cfg, value):
    return Feedback(cfg, m.hash_config(cfg), float(value), "ok", "BO", False)

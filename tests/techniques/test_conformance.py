"""Conformance kit: every registered technique on permutation, numeric, mixed and constrained spaces.

Each run goes through the real search driver (``tune_function``, in-memory database), which rejects
illegal proposals with TechniqueError and never measures configurations that violate known
constraints, so a completed run of the full budget is the legality check. The recommendation
bandits (``bndt-A`` ... ``rec-dbi``) run through the same checks with a populated store in
tests/store/test_recommendation.py.
"""
import math

import pytest

from tunerlib import tune_function
from tunerlib.techniques import registry
from tunerlib.techniques.recommendation import approach_names

from conformance_spaces import SPACES, mixed_space
from kit import light

BUDGET = 200
NAMES = [n for n in registry() if n not in approach_names()]


@pytest.mark.parametrize("space", sorted(SPACES))
@pytest.mark.parametrize("name", NAMES)
def test_technique_runs_full_budget_with_legal_feasible_configs(name, space):
    manipulator, fn = SPACES[space]()
    run = tune_function(manipulator, fn, test_limit=BUDGET, technique=[light(name)], seed=3)
    assert run.summary.tests == BUDGET, run.summary.stopped_because
    assert all(math.isfinite(v) for v in run.values)
    assert run.summary.best_value == min(run.values)


@pytest.mark.parametrize("name", NAMES)
def test_technique_is_deterministic_under_seed(name):
    first = tune_function(*mixed_space(), test_limit=60, technique=[light(name)], seed=11).values
    second = tune_function(*mixed_space(), test_limit=60, technique=[light(name)], seed=11).values
    assert first == second

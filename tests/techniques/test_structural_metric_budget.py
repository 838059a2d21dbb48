"""MetricStructuralSurrogate under a known test limit: the random phase ends at the first
identification checkpoint at or past a third of the limit (its last, with the lower bar), and
``auto`` gives its member the run's budget."""
import random

import numpy as np

from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.techniques.auto import AutoTechnique
from tunerlib.techniques.base import Feedback, SearchContext
from tunerlib.techniques.structural import MetricStructuralSurrogate
from tunerlib.techniques.structural.metric import CHECKPOINTS, MIN_ITEMS, RANDOM_SHARE



def cost(W):
    return lambda t: float(W[t, np.roll(t, -1)].sum())


def non_metric(n, seed):
    """Independent pair weights: no low-dimensional embedding predicts them."""
    rng = np.random.default_rng(seed)
    W = rng.random((n, n)) * 100.0
    return np.triu(W, 1) + np.triu(W, 1).T


def _identifying(test_limit, evals, n=MIN_ITEMS):
    """How many random suggestions a run on a non-metric matrix makes, and the model's status."""
    W = non_metric(n, 3)
    tech = MetricStructuralSurrogate("M")
    if test_limit is not None:
        tech.set_context(SearchContext(test_limit=test_limit, budget_kind="tests"))
    space = ConfigurationManipulator([PermutationParameter("t", list(range(n)))])
    tech.bind(space, random.Random(4), "M")
    f, best, randoms = cost(W), np.inf, 0
    for _ in range(evals):
        prop = tech.propose()
        randoms += prop.requestor == "M/identify"
        value = f(np.asarray(prop.config["t"]))
        tech.observe(Feedback(prop.config, space.hash_config(prop.config), value, "ok", prop.requestor,
                              value < best))
        best = min(best, value)
    return randoms, tech.model.status


def test_a_short_test_limit_ends_the_random_phase_at_a_third_of_it():
    n, limit = MIN_ITEMS, 15 * MIN_ITEMS
    last = next(int(c * n) for c in CHECKPOINTS if int(c * n) >= RANDOM_SHARE * limit)
    assert last < int(CHECKPOINTS[-1] * n)
    randoms, status = _identifying(limit, last + 10)
    assert (randoms, status) == (last, "handed over")
    # without a known limit the phase runs to the last of CHECKPOINTS
    randoms, status = _identifying(None, last + 10)
    assert (randoms, status) == (last + 10, "identifying")


def test_a_long_test_limit_keeps_every_checkpoint():
    tech = MetricStructuralSurrogate("M")
    tech.set_context(SearchContext(test_limit=10 ** 6, budget_kind="tests"))
    n = MIN_ITEMS + 5
    tech.bind(ConfigurationManipulator([PermutationParameter("t", list(range(n)))]), random.Random(0), "M")
    assert tech.model.checkpoints() == [int(c * n) for c in CHECKPOINTS]


def test_auto_gives_its_member_the_runs_test_limit():
    n = 30
    auto = AutoTechnique("auto")
    auto.set_context(SearchContext(test_limit=20 * n, budget_kind="tests"))
    auto.bind(ConfigurationManipulator([PermutationParameter("t", list(range(n)))]), random.Random(0), "auto")
    member = auto.members[auto.active]
    assert isinstance(member, MetricStructuralSurrogate)
    assert member.model.test_limit == 20 * n
    assert member.model.checkpoints()[-1] == next(int(c * n) for c in CHECKPOINTS if c * n >= 20 * n / 3)

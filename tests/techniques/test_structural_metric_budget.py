"""MetricStructuralSurrogate under a known test limit: from the first identification checkpoint at
or past a third of the limit, the checkpoints accept from the last one's bar (the hand-over stays at
the last), and ``auto`` gives its member the run's budget."""
import random

import numpy as np

from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.techniques.auto import AutoTechnique
from tunerlib.techniques.base import Feedback, SearchContext
from tunerlib.techniques.structural import MetricStructuralSurrogate
from tunerlib.techniques.structural.identification import CHECKPOINTS, MIN_ITEMS, RANDOM_SHARE



def cost(W):
    return lambda t: float(W[t, np.roll(t, -1)].sum())


def non_metric(n, seed):
    """Independent pair weights: no low-dimensional embedding predicts them."""
    rng = np.random.default_rng(seed)
    W = rng.random((n, n)) * 100.0
    return np.triu(W, 1) + np.triu(W, 1).T


def euclidean(n, seed):
    pts = np.random.default_rng(seed).random((n, 2)) * 100.0
    return np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))


def _identifying(W, test_limit, evals):
    """How many random suggestions a run on ``W`` makes in ``evals``, and the model's status."""
    n = W.shape[0]
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


def _lowered(n, limit):
    return next(int(c * n) for c in CHECKPOINTS if int(c * n) >= RANDOM_SHARE * limit)


def test_from_a_third_of_a_short_test_limit_the_checkpoints_accept_from_the_last_ones_bar(monkeypatch):
    from tunerlib.techniques.structural import identification
    monkeypatch.setattr(identification, "ACCEPT", 1.01)          # only the lowered bar can accept
    n = MIN_ITEMS + 4
    limit = 15 * n
    at = _lowered(n, limit)
    assert at < int(CHECKPOINTS[-1] * n)
    W = euclidean(n, 2)
    assert _identifying(W, limit, at + 10) == (at, "accepted")
    # without a known limit the bar stays until the last of CHECKPOINTS
    assert _identifying(W, None, at + 10) == (at + 10, "identifying")


def test_the_hand_over_stays_at_the_last_checkpoint():
    n = MIN_ITEMS
    limit = 15 * n
    at = _lowered(n, limit)
    assert _identifying(non_metric(n, 3), limit, at + 10) == (at + 10, "identifying")


def test_a_long_test_limit_keeps_the_bar_to_the_last_checkpoint():
    tech = MetricStructuralSurrogate("M")
    tech.set_context(SearchContext(test_limit=10 ** 6, budget_kind="tests"))
    n = MIN_ITEMS + 5
    tech.bind(ConfigurationManipulator([PermutationParameter("t", list(range(n)))]), random.Random(0), "M")
    assert tech.model.lowered() == tech.model.checkpoints()[-1] == int(CHECKPOINTS[-1] * n)


def test_auto_gives_its_member_the_runs_test_limit():
    n = 30
    auto = AutoTechnique("auto")
    auto.set_context(SearchContext(test_limit=20 * n, budget_kind="tests"))
    auto.bind(ConfigurationManipulator([PermutationParameter("t", list(range(n)))]), random.Random(0), "auto")
    member = auto.members[auto.active]
    assert isinstance(member, MetricStructuralSurrogate)
    assert member.model.test_limit == 20 * n
    assert member.model.lowered() == _lowered(n, 20 * n) < member.model.checkpoints()[-1]

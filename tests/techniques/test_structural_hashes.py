"""The structural surrogates hash each configuration they propose once, and the proposal carries that
hash (the search driver does not hash it again)."""
import random

import numpy as np

from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.structural import MetricStructuralSurrogate, StructuralSurrogate
from tunerlib.techniques.structural.identification import MIN_ITEMS


def _hashed_per_model_proposal(tech, evals):
    """Run ``tech`` on a Euclidean tour of MIN_ITEMS + 4 cities; per model proposal: its key, the hash
    of its configuration, the tours hashed while it was made and its tour."""
    pts = np.random.default_rng(5).random((MIN_ITEMS + 4, 2)) * 100.0
    W = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    space = ConfigurationManipulator([PermutationParameter("t", list(range(W.shape[0])))])
    hashed = []
    for name in ("hash_config", "hash_valid"):
        method = getattr(space, name)

        def counting(config, method=method):
            hashed.append(tuple(config["t"]))
            return method(config)
        setattr(space, name, counting)
    tech.bind(space, random.Random(3), "M")
    best, rows = np.inf, []
    for _ in range(evals):
        hashed.clear()
        prop = tech.propose()
        made = list(hashed)
        key = prop.key if prop.key is not None else space.hash_valid(prop.config)
        if prop.requestor == "M":
            rows.append((prop.key, ConfigurationManipulator.hash_config(space, prop.config), made,
                         tuple(prop.config["t"])))
        t = np.asarray(prop.config["t"])
        value = float(W[t, np.roll(t, -1)].sum())
        tech.observe(Feedback(prop.config, key, value, "ok", prop.requestor, value < best))
        best = min(best, value)
    return rows, tech


def _check(rows, least):
    assert len(rows) >= least
    for key, digest, made, proposed in rows:
        assert key == digest                               # the proposal carries its configuration's hash
        assert made.count(proposed) == 1                   # made once, not again when proposed


def test_the_metric_surrogates_model_proposals_carry_their_hash_made_once():
    rows, tech = _hashed_per_model_proposal(MetricStructuralSurrogate("M"), 260)
    assert tech.model.status == "accepted"
    _check(rows, 20)


def test_the_structural_surrogates_model_proposals_carry_their_hash_made_once():
    rows, _ = _hashed_per_model_proposal(StructuralSurrogate("M"), 80)
    _check(rows, 5)

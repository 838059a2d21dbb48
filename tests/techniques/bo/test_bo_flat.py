"""BayesianOptimization's flat fits (:mod:`tunerlib.techniques.bo.flat`): a GP fit that explains the
targets as noise, and the trust-region step ``flat_local`` makes of a proposal from such a fit."""
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tunerlib.parameters import ConfigurationManipulator, OrdinalParameter
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.bo import technique as bo_technique
from tunerlib.techniques.bo.flat import FLAT_SIGNAL_TO_NOISE, flat_radius, is_flat
from tunerlib.techniques.bo.gp import NOISE_BOUNDS, OUTPUTSCALE_BOUNDS, Hyper
from tunerlib.techniques.bo.technique import BayesianOptimization

FAST = dict(n_random_samples=200, n_starts=3, hp_samples=10, hp_starts=2, max_local_steps=4)
LS = np.ones(4)


def test_the_all_noise_fit_at_the_bounds_is_flat_and_a_fit_with_signal_is_not():
    assert is_flat(Hyper(LS, OUTPUTSCALE_BOUNDS[0], NOISE_BOUNDS[1]))
    assert is_flat(Hyper(LS, 0.03, 0.9))
    assert not is_flat(Hyper(LS, 1.0, 1e-3))
    assert not is_flat(Hyper(LS, 0.2, 0.8))


@given(st.floats(-2.0, 2.0), st.floats(-6.0, 0.0), st.integers(1, 4), st.booleans())
def test_flat_radius_is_the_local_radius_exactly_for_flat_fits_with_the_option(log_s, log_n, radius, on):
    hyper = Hyper(LS, 10.0 ** log_s, 10.0 ** log_n)
    flat = hyper.outputscale / hyper.noise < FLAT_SIGNAL_TO_NOISE
    assert is_flat(hyper) == flat
    assert flat_radius(hyper, on, radius) == (radius if on and flat else 0)
    assert flat_radius(None, on, radius) == 0


NAMES = ("a", "b", "c", "d")
#: results clustered in the corner of small values; the best at all ones
RESULTS = [((1, 1, 1, 1), 1.0), ((2, 1, 1, 1), 1.3), ((1, 2, 1, 2), 1.2), ((1, 1, 2, 2), 1.5), ((2, 2, 2, 1), 1.4)]


def _proposal_after_a_flat_fit(monkeypatch, flat_local):
    """The first BO proposal on a 4 x 4-value space after :data:`RESULTS`, the GP's fit forced to the all-noise
    one at the box bounds (outputscale at its floor, noise at its ceiling); no stall steps (``stall_after`` 0)."""
    fit_gp = bo_technique.fit_gp

    def flat_fit(*args, **kwargs):
        gp, y = fit_gp(*args, **kwargs)
        gp.set_hyper(Hyper(gp.hyper.lengthscales, OUTPUTSCALE_BOUNDS[0], NOISE_BOUNDS[1]))
        return gp, y
    monkeypatch.setattr(bo_technique, "fit_gp", flat_fit)
    m = ConfigurationManipulator([OrdinalParameter(n, [1, 2, 4, 8]) for n in NAMES])
    bo = BayesianOptimization(initial_samples=len(RESULTS), stall_after=0, local_radius=1, copula_every=0,
                              hyper_samples=1, flat_local=flat_local, **FAST)
    bo.bind(m, random.Random(0), "bo")
    for values, v in RESULTS:
        cfg = dict(zip(NAMES, values))
        bo.observe(Feedback(cfg, m.hash_config(cfg), v, "ok", "bo", False))
    cfg = bo._bo_proposal()
    return sum(cfg[n] != 1 for n in NAMES)


@pytest.mark.parametrize("flat_local", [True, False])
def test_a_flat_fit_makes_the_proposal_a_trust_region_step_around_the_best(monkeypatch, flat_local):
    changed = _proposal_after_a_flat_fit(monkeypatch, flat_local)
    if flat_local:
        assert changed <= 1          # within local_radius changed parameters of the best
    else:
        assert changed > 1           # the flat fit's expected improvement lies far from the data

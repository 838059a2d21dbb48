"""Integrated acquisition: expected improvement averaged over several GP hyperparameter settings.

A GP fitted on a handful of results has a broad hyperparameter posterior; one point estimate (the
MAP of :meth:`.gp.GaussianProcess.fit`) can explain everything as noise while a setting with
signal is almost as probable, and the expected improvement of the former peaks far from the data.
Following Snoek, Larochelle & Adams (2012, "integrated acquisition"), the acquisition here is the
posterior-weighted mean of EI over ``K`` settings:

    EI(x) = sum_k w_k EI(x | theta_k),    w_k proportional to p(theta_k | data)

The settings are the ``K`` best distinct local optima of the log marginal posterior found by the
multi-start fit (:func:`distinct_optima`; kept in the fit state, refined again as extra starts by the
next hyperparameter search and re-weighted on the current data between searches), so the set is
deterministic given the technique's seed.  Feasibility and prior weights do not depend on the GP's
hyperparameters, so multiplying them onto the averaged EI equals averaging the full acquisition.
With ``K = 1`` BO builds the plain :class:`.acquisition.Acquisition` on the MAP fit.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
from scipy.special import logsumexp

from .acquisition import Acquisition, Config, log_expected_improvement
from .distances import SpaceEncoder
from .feasibility import FeasibilityModel, FeatureEncoder
from .gp import GaussianProcess, Hyper

#: two optima are the same setting when no log-hyperparameter differs by more than this (after
#: :func:`_shape`'s clipping)
DISTINCT = 0.25
#: noise variances below this and lengthscales above this are compared as equal: the marginal
#: posterior is flat along them (an interpolating fit, a channel switched off), so multi-start fits
#: end anywhere there and would count one setting many times
NOISE_FLOOR, LENGTHSCALE_CEILING = 1e-3, 10.0


def _shape(theta: np.ndarray) -> np.ndarray:
    """``theta`` as compared by :func:`distinct_optima`: log lengthscales at most log
    :data:`LENGTHSCALE_CEILING`, log noise at least log :data:`NOISE_FLOOR`."""
    out = np.array(theta, dtype=float)
    out[:-2] = np.minimum(out[:-2], np.log(LENGTHSCALE_CEILING))
    out[-1] = max(out[-1], float(np.log(NOISE_FLOOR)))
    return out


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two log-hyperparameter vectors are the same setting for :func:`distinct_optima`."""
    return len(a) == len(b) and float(np.max(np.abs(_shape(a) - _shape(b)))) <= DISTINCT

#: a weighted model: (GP with fixed hyperparameters, log of its normalised posterior weight)
Weighted = Tuple[GaussianProcess, float]


def distinct_optima(optima: Sequence[Tuple[float, np.ndarray]], k: int) -> List[Hyper]:
    """The ``k`` most probable settings of ``optima`` (``(-log posterior, theta)`` pairs, as in
    :attr:`.gp.GaussianProcess.optima`) that differ pairwise by more than :data:`DISTINCT` in some
    log-hyperparameter (:func:`_same`), most probable first; called after each hyperparameter search."""
    kept: List[np.ndarray] = []
    for value, theta in sorted(optima, key=lambda o: o[0]):
        if len(kept) >= k or not np.isfinite(value) or value >= 1e24:
            continue
        if not any(_same(theta, t) for t in kept):
            kept.append(np.asarray(theta, dtype=float))
    return [Hyper.from_theta(t) for t in kept]


def posterior_weights(log_posteriors: Sequence[float]) -> np.ndarray:
    """Normalised log weights ``log w_k`` proportional to the posterior densities ``exp(log_posteriors)``."""
    lp = np.asarray(log_posteriors, dtype=float)
    return lp - logsumexp(lp)


def weighted_models(gp: GaussianProcess, settings: Sequence[Hyper]) -> List[Weighted]:
    """``gp`` (its fitted setting) and a GP on the same data for every other setting of ``settings``,
    each with its log weight from the log marginal posterior on the current data; called whenever BO
    refits its model with more than one hyperparameter sample.  Settings whose covariance matrix
    cannot be factorised are left out; the fitted one is always kept."""
    models = [gp]
    fitted = gp.hyper.theta()  # type: ignore[union-attr]
    scores = [-gp.neg_log_posterior(fitted, grad=False)[0]]
    for hyper in settings:
        theta = hyper.theta()
        if len(theta) != len(fitted) or _same(theta, fitted):
            continue
        value = gp.neg_log_posterior(theta, grad=False)[0]
        if value >= 1e24:
            continue
        other = GaussianProcess(gp.D2, gp.y, gp.noise_prior is not None, gp.dormant)
        try:
            other.set_hyper(hyper)
        except np.linalg.LinAlgError:
            continue
        models.append(other)
        scores.append(-value)
    return list(zip(models, (float(w) for w in posterior_weights(scores))))


class IntegratedAcquisition(Acquisition):
    """:class:`.acquisition.Acquisition` whose EI is the posterior-weighted mean over ``models``."""

    def __init__(self, encoder: SpaceEncoder, models: Sequence[Weighted], train: List[np.ndarray], y_best: float,
                 feasibility: Optional[FeasibilityModel] = None, eps_f: float = 0.0,
                 feature_encoder: Optional[FeatureEncoder] = None) -> None:
        super().__init__(encoder, models[0][0], train, y_best, feasibility, eps_f, feature_encoder)
        self.models = list(models)

    def log_ei(self, D2_cross: np.ndarray) -> np.ndarray:
        """``log sum_k w_k EI_k`` at query points with squared distances ``D2_cross`` to the training points."""
        parts = [log_w + log_expected_improvement(*gp.predict(D2_cross), self.y_best) for gp, log_w in self.models]
        return logsumexp(np.vstack(parts), axis=0)

    def score_encoded(self, enc: List[np.ndarray], configs: Sequence[Config], strict: bool = True,
                      features: Optional[np.ndarray] = None) -> np.ndarray:
        """The integrated log EI of encoded ``configs`` with feasibility and prior weights (see the base class)."""
        return self.weighted(self.log_ei(self.encoder.sqdists(enc, self.train)), configs, strict, features)


def make_acquisition(encoder: SpaceEncoder, models: Sequence[Weighted], train: List[np.ndarray], y_best: float,
                     feasibility: Optional[FeasibilityModel] = None, eps_f: float = 0.0,
                     feature_encoder: Optional[FeatureEncoder] = None) -> Acquisition:
    """The acquisition of one BO proposal: the plain one on a single model, else the integrated one."""
    if len(models) == 1:
        return Acquisition(encoder, models[0][0], train, y_best, feasibility, eps_f, feature_encoder)
    return IntegratedAcquisition(encoder, models, train, y_best, feasibility, eps_f, feature_encoder)

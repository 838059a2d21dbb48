"""Rejecting GP fits that explain every result as noise while the results are few.

On a handful of results in many distance channels the most likely hyperparameters are often "all
noise": outputscale at its floor, noise variance at the whole variance of the standardised targets.
The posterior mean is then flat and expected improvement is largest where the posterior variance
is, the configurations farthest from the data (the corners of the space).  BayesianOptimization's
option ``noise_cap_designs`` (:class:`NoiseCap`) rejects such a fit while the OK results number at
most that many initial designs: the hyperparameters are searched again with the noise variance
bounded by :data:`NOISE_CAP`, and the most probable setting within that bound (by marginal
posterior, among the same number of random settings and restarts) replaces it.  Unlike the option
``noise_prior`` (:mod:`.gp`), fits that keep some signal are left alone, and so are all fits once
the results are many.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from .gp import NOISE_PRIOR, GaussianProcess, GPFitError, Hyper

#: the bound on the noise variance of the standardised targets in a refit (about 2 % of their variance)
NOISE_CAP = math.exp(NOISE_PRIOR[0])


def explains_as_noise(hyper: Hyper) -> bool:
    """Whether a fit puts at least as much variance in the noise as in the signal."""
    return hyper.noise >= hyper.outputscale


@dataclass
class NoiseCap:
    """The rule of option ``noise_cap_designs``: ``limit`` is the most OK results (that many initial
    designs) at which a fit that explains everything as noise is refitted (0: never)."""

    limit: int = 0
    noise_prior: bool = False
    #: fits replaced by a capped one so far
    refits: int = 0

    def fit(self, D2: np.ndarray, y: np.ndarray, rng: np.random.Generator, samples: int, starts: int,
            previous: Optional[Hyper], maxiter: int) -> Tuple[GaussianProcess, Hyper]:
        """Called for each hyperparameter search of BO's GP on ``len(y)`` OK results; returns the
        fitted GP and its hyperparameters: the unconstrained fit, or the capped one when the rule
        rejects the former (GPFitError when no setting factorises)."""
        gp = GaussianProcess(D2, y, self.noise_prior)
        hyper = gp.fit(rng, samples, starts, previous, maxiter)
        if len(y) > self.limit or not explains_as_noise(hyper):
            return gp, hyper
        capped = GaussianProcess(D2, y, self.noise_prior, noise_cap=NOISE_CAP)
        try:
            capped_hyper = capped.fit(rng, samples, starts, previous, maxiter)
        except GPFitError:
            return gp, hyper
        self.refits += 1
        return capped, capped_hyper

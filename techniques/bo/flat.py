"""Flat GP fits: a fit that explains the targets as noise, and the trust-region radius it calls for.

On a handful of results the most likely GP fit is often "all noise": the outputscale at or near its
lower bound and the noise variance near its upper bound (:data:`.gp.OUTPUTSCALE_BOUNDS`,
:data:`.gp.NOISE_BOUNDS`; the targets are standardised, so signal and noise share a variance of about
1).  The posterior mean of such a fit is nearly constant and its variance largest far from the data,
so the expected improvement peaks at the corners of the space and the ends of the ranges, wherever the
model knows least, not where it predicts anything good.  BayesianOptimization's option ``flat_local``
makes each proposal from such a fit a trust-region step instead: the acquisition is maximised only over
configurations within ``local_radius`` changed parameters of the best result, as a stalled search does.
"""
from __future__ import annotations

from typing import Optional

from .gp import Hyper

#: a fit is flat when its outputscale is below this share of its noise variance.  The box bounds put
#: the most extreme "all noise" fit at 1e-2 / 1 = 0.01; at 0.05 the signal still carries under 5 % of
#: the standardised targets' variance, so its posterior mean moves by less than about a quarter of their
#: standard deviation anywhere, too little to tell one region from another
FLAT_SIGNAL_TO_NOISE = 0.05


def is_flat(hyper: Hyper, threshold: float = FLAT_SIGNAL_TO_NOISE) -> bool:
    """Whether the fitted ``hyper`` explains the targets as noise: outputscale / noise below ``threshold``."""
    return hyper.outputscale < threshold * hyper.noise


def flat_radius(hyper: Optional[Hyper], flat_local: bool, local_radius: int) -> int:
    """The trust-region radius of a BO proposal made from a fit with ``hyper``: ``local_radius`` when
    ``flat_local`` is set and the fit is flat (:func:`is_flat`), else 0 (a global proposal).  Called by
    BayesianOptimization for each BO proposal that is not already a trust-region step."""
    return local_radius if flat_local and hyper is not None and is_flat(hyper) else 0

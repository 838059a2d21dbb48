"""Transforms of the GP's targets (the objective values of OK results) before standardisation.

:func:`transform` maps the values by a Box-Cox exponent or by the Gaussian copula, :func:`log_jacobian`
makes the marginal likelihoods of different exponents comparable, :func:`exponents` parses the
``power_transforms`` option.  Used by :class:`.technique.BayesianOptimization` at every GP fit.
"""
from __future__ import annotations

import math
from typing import List, Union

import numpy as np
from scipy.stats import norm, rankdata

from ..base import TechniqueError

#: a GP target transform: a Box-Cox exponent (1.0 identity, 0.0 log) or "copula"
TransformKey = Union[float, str]


def transform(raw: np.ndarray, key: TransformKey) -> np.ndarray:
    """The GP's targets before standardisation: the Box-Cox transform ``(y**lam - 1) / lam`` of
    exponent ``key`` (1.0: the values themselves, 0.0: their log; other exponents need positive
    values), or ("copula") the standard normal quantiles of the values' mid-ranks ``(rank - 0.5) /
    n`` (ties share their mean rank), which keeps only their order."""
    if key == "copula":
        return norm.ppf((rankdata(raw) - 0.5) / raw.size)
    lam = float(key)
    if lam == 1.0:
        return raw
    if lam == 0.0:
        return np.log(raw)
    return (np.power(raw, lam) - 1.0) / lam


def exponents(text: str) -> List[float]:
    """The Box-Cox exponents of the ``power_transforms`` option ("0,1" -> [0.0, 1.0])."""
    try:
        out = [float(x) for x in text.split(",")]
    except ValueError:
        out = []
    if not out or not all(math.isfinite(x) and -3.0 <= x <= 3.0 for x in out):
        raise TechniqueError(f"BayesianOptimization: power_transforms {text!r} is not a comma-separated list "
                             "of Box-Cox exponents between -3 and 3; use e.g. '0,1' (log or identity)")
    return out


def log_jacobian(raw: np.ndarray, key: TransformKey) -> float:
    """``log |d transform / d y|`` summed over the values: ``(lam - 1) sum(log y)`` for Box-Cox, which
    makes the marginal likelihoods of different exponents comparable (0 for the copula, which is
    never compared)."""
    if key == "copula" or float(key) == 1.0:
        return 0.0
    return (float(key) - 1.0) * float(np.sum(np.log(raw)))

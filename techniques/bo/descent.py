"""An additive model of one objective, descended by MultiObjectiveBO's extreme turns (``extreme_descent``).

An extreme turn maximises the expected improvement of its objective under that objective's GP.
Where the extreme takes many parameters changed together (on the HPVM2FPGA model the latency is a
sum over the pipeline's nodes, and a design is fast only once every node on the critical path is
buffered and unrolled far), the GP's expected improvement rates each one-parameter step near the
best design as worth little, and the turns travel a few per cent per proposal.  A model additive in
the parameters extrapolates instead: if every observed increase of one unroll factor lowered the
latency, it predicts that raising all of them lowers it further.

So every other extreme turn of an objective (with ``extreme_descent``) climbs, from the
configurations best in that objective, the additive model's predicted improvement times
P(feasible): a ridge regression of the objective (its logarithm when every value is positive) on
each parameter's encoded value and its square, the ridge chosen by leave-one-out error.  The
feasibility model keeps the descent off designs that would not fit.  The model is a guess where
the GP has no data, so a descent's miss (a design no better, or one that does not fit) neither
halves the objective's trust region nor counts towards the end of its turns, while its gain counts
as any other turn's (:meth:`.extremes.ExtremeTurns.proposed`; docs/benchmarks/multi-objective.md
has the HPVM2FPGA runs with and without counting them).
:func:`descent_acquisition` is called on such a turn; :class:`DescentAcquisition` scores its
candidates for the local search.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from .acquisition import Acquisition

#: ridge penalties tried (on standardised features), the one of least leave-one-out error kept
RIDGES = (0.01, 0.1, 1.0, 10.0, 100.0)


def features(encoded: Sequence[np.ndarray]) -> np.ndarray:
    """The additive model's design matrix: every encoded column and its square, shape ``(rows, 2 x columns)``."""
    cols = np.hstack([np.asarray(a, dtype=float).reshape(len(a), -1) for a in encoded])
    return np.hstack([cols, cols * cols])


class AdditiveModel:
    """A ridge regression of one objective on :func:`features`; :meth:`predict` gives the objective's
    modelled value in the units it was fitted in (the logarithm, when :attr:`log` is set)."""

    def __init__(self, mean: np.ndarray, scale: np.ndarray, weights: np.ndarray, intercept: float,
                 log: bool) -> None:
        self.mean, self.scale, self.weights, self.intercept, self.log = mean, scale, weights, intercept, log

    def predict(self, encoded: Sequence[np.ndarray]) -> np.ndarray:
        """The fitted units' prediction for encoded configurations."""
        return ((features(encoded) - self.mean) / self.scale) @ self.weights + self.intercept


def fit_additive(encoded: Sequence[np.ndarray], values: np.ndarray) -> Optional[AdditiveModel]:
    """The ridge regression of ``values`` (one objective, lower is better) on the encoded training
    configurations, on the logarithm when every value is positive; None with fewer than three rows
    or non-finite values."""
    y = np.asarray(values, dtype=float)
    if len(y) < 3 or not np.all(np.isfinite(y)):
        return None
    log = bool(np.all(y > 0))
    target = np.log(y) if log else y
    x = features(encoded)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    z = (x - mean) / scale
    intercept = float(target.mean())
    weights, _ = min((_ridge(z, target - intercept, lam) for lam in RIDGES), key=lambda fit: fit[1])
    return AdditiveModel(mean, scale, weights, intercept, log)


def _ridge(z: np.ndarray, t: np.ndarray, lam: float) -> Tuple[np.ndarray, float]:
    """Ridge weights for penalty ``lam`` and their mean squared leave-one-out error (closed form)."""
    hat_inv = np.linalg.solve(z.T @ z + lam * np.eye(z.shape[1]), z.T)
    weights = hat_inv @ t
    leverage = np.einsum("ij,ji->i", z, hat_inv)
    resid = (t - z @ weights) / np.maximum(1.0 - leverage, 1e-6)
    return weights, float(np.mean(resid * resid))


class DescentAcquisition(Acquisition):
    """The additive model's predicted gain over the best value, times P(feasible), in log space: the
    score of a configuration is ``best - prediction`` (with the logarithm, the log of the predicted
    speed-up) plus log P(feasible), so the local search descends the model while the design is
    likely to fit."""

    def __init__(self, base: Acquisition, model: AdditiveModel, best: float) -> None:
        super().__init__(base.encoder, base.gp, base.train, base.y_best, base.feasibility, base.eps_f,
                         base.feature_encoder)
        self.model, self.best = model, best

    def score_encoded(self, enc: List[np.ndarray], configs: Sequence[Any], strict: bool = True,
                      features: Optional[np.ndarray] = None) -> np.ndarray:
        """``best - prediction`` (+ log P(feasible), ``-inf`` below the threshold when ``strict``)."""
        gain = self.best - self.model.predict(enc)
        return self.weighted(gain, configs, strict, features)


def descent_acquisition(base: Acquisition, train: Sequence[np.ndarray], values: np.ndarray) -> Optional[Acquisition]:
    """The :class:`DescentAcquisition` of an extreme turn whose expected-improvement acquisition is
    ``base``: the additive model fitted to the objective's ``values`` at the encoded ``train`` rows;
    None where no model can be fitted (the turn keeps ``base``)."""
    model = fit_additive(train, values)
    if model is None:
        return None
    return DescentAcquisition(base, model, float(np.min(model.predict(train))))

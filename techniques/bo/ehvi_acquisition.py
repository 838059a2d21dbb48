"""The acquisition of :class:`~.multiobjective.MultiObjectiveBO`'s hypervolume proposals: the expected
hypervolume improvement of a candidate's independent predictions (one GP per objective) over the observed
front, in the GPs' standardised units (:mod:`.ehvi`) or, with a :class:`~.metric_ehvi.MetricUnits`, in the
objectives' own units with the standardised one as a tie-breaker, times P(feasible).

With several hyperparameter settings per objective (``hyper_samples``, :mod:`.marginal`) each objective's
prediction is the posterior-weighted mixture of its settings' Gaussians: the metric-units EHVI draws its
samples from the mixtures (:meth:`.metric_ehvi.MetricUnits.ehvi_mixture`), and the tie-breaker and the
believed values of results in flight use the mixtures' means and standard deviations.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ..base import Config
from .acquisition import Acquisition
from .ehvi import box_decomposition, expected_hypervolume_improvement
from .gp import GaussianProcess
from .marginal import Weighted
from .metric_ehvi import Components, MetricUnits

#: weight of the model-units EHVI (tie-breaker where the samples show no improvement)
MODEL_UNITS_WEIGHT = 1e-3


class HypervolumeAcquisition(Acquisition):
    """log EHVI (+ log P(feasible)) of candidates under one GP per objective (standardised units), or
    under each objective's weighted ``mixtures`` of GPs when one has more than one."""

    def __init__(self, encoder: Any, gps: Sequence[GaussianProcess], train: List[np.ndarray],
                 front: np.ndarray, reference: np.ndarray, feasibility: Any = None, eps_f: float = 0.0,
                 feature_encoder: Any = None, metric: Optional[MetricUnits] = None,
                 mixtures: Optional[Sequence[Sequence[Weighted]]] = None) -> None:
        super().__init__(encoder, gps[0], train, 0.0, feasibility, eps_f, feature_encoder)
        self.gps = list(gps)
        self.lower, self.upper = box_decomposition(front, reference)
        self.metric = metric
        self.mixtures = [list(m) for m in mixtures] if mixtures and any(len(m) > 1 for m in mixtures) else None

    def components(self, cross: np.ndarray) -> Components:
        """Per objective: the means and standard deviations ``(settings, m)`` of its settings'
        predictions at the candidates (squared distances ``cross`` to the training set) and their
        normalised weights ``(settings,)``."""
        out = []
        for mixture in self.mixtures or [[(gp, 0.0)] for gp in self.gps]:
            preds = [gp.predict(cross) for gp, _ in mixture]
            out.append((np.array([p[0] for p in preds]), np.array([p[1] for p in preds]),
                        np.exp([w for _, w in mixture])))
        return out

    def predict(self, enc: List[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
        """Posterior means and standard deviations, shape ``(m, objectives)`` (of the mixtures, with
        several settings)."""
        return self._moments(self.components(self.encoder.sqdists(enc, self.train)))

    @staticmethod
    def _moments(parts: Components) -> Tuple[np.ndarray, np.ndarray]:
        means, stds = [], []
        for mu, sd, w in parts:
            if len(w) == 1:
                means.append(mu[0])
                stds.append(sd[0])
                continue
            w = w[:, None] / w.sum()
            mean = (w * mu).sum(axis=0)
            means.append(mean)
            stds.append(np.sqrt(np.maximum((w * (sd ** 2 + mu ** 2)).sum(axis=0) - mean ** 2, 0.0)))
        return np.column_stack(means), np.column_stack(stds)

    def score_encoded(self, enc: List[np.ndarray], configs: Sequence[Config], strict: bool = True,
                      features: Optional[np.ndarray] = None) -> np.ndarray:
        """log EHVI of configurations already encoded, with the feasibility factor and threshold (and
        a prior's πBO weight when one is set)."""
        parts = self.components(self.encoder.sqdists(enc, self.train))
        mean, std = self._moments(parts)
        gain = np.maximum(expected_hypervolume_improvement(mean, std, self.lower, self.upper), 0.0)
        if self.metric is not None:
            metric_gain = self.metric.ehvi_mixture(parts) if self.mixtures else self.metric.ehvi(mean, std)
            gain = metric_gain + MODEL_UNITS_WEIGHT * gain
        s = np.log(np.maximum(gain, 1e-300))
        return self.weighted(s, configs, strict, features)

"""The acquisition of :class:`~.multiobjective.MultiObjectiveBO`'s hypervolume proposals: the expected
hypervolume improvement of a candidate's independent predictions (one GP per objective) over the observed
front, in the GPs' standardised units (:mod:`.ehvi`) or, with a :class:`~.metric_ehvi.MetricUnits`, in the
objectives' own units with the standardised one as a tie-breaker, times P(feasible).
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ..base import Config
from .acquisition import Acquisition
from .ehvi import box_decomposition, expected_hypervolume_improvement
from .gp import GaussianProcess
from .metric_ehvi import MetricUnits

#: weight of the model-units EHVI (tie-breaker where the samples show no improvement)
MODEL_UNITS_WEIGHT = 1e-3


class HypervolumeAcquisition(Acquisition):
    """log EHVI (+ log P(feasible)) of candidates under one GP per objective (standardised units)."""

    def __init__(self, encoder: Any, gps: Sequence[GaussianProcess], train: List[np.ndarray],
                 front: np.ndarray, reference: np.ndarray, feasibility: Any = None, eps_f: float = 0.0,
                 feature_encoder: Any = None, metric: Optional[MetricUnits] = None) -> None:
        super().__init__(encoder, gps[0], train, 0.0, feasibility, eps_f, feature_encoder)
        self.gps = list(gps)
        self.lower, self.upper = box_decomposition(front, reference)
        self.metric = metric

    def predict(self, enc: List[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
        """Posterior means and standard deviations, shape ``(m, objectives)``."""
        cross = self.encoder.sqdists(enc, self.train)
        preds = [gp.predict(cross) for gp in self.gps]
        return np.column_stack([p[0] for p in preds]), np.column_stack([p[1] for p in preds])

    def score_encoded(self, enc: List[np.ndarray], configs: Sequence[Config], strict: bool = True,
                      features: Optional[np.ndarray] = None) -> np.ndarray:
        """log EHVI of configurations already encoded, with the feasibility factor and threshold (and
        a prior's πBO weight when one is set)."""
        mean, std = self.predict(enc)
        gain = np.maximum(expected_hypervolume_improvement(mean, std, self.lower, self.upper), 0.0)
        if self.metric is not None:
            gain = self.metric.ehvi(mean, std) + MODEL_UNITS_WEIGHT * gain
        s = np.log(np.maximum(gain, 1e-300))
        return self.weighted(s, configs, strict, features)

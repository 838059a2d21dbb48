"""Hidden-constraint model: a random-forest classifier predicting P(feasible) (BaCO §4.2).

The BaCO paper says only "a Random Forest model"; its published code (``RFClassificationModel``)
uses scikit-learn's ``RandomForestClassifier`` with 50 trees, ``max_features=0.75``,
``bootstrap=False`` and class weights ``{feasible: 0.8, infeasible: 0.2}``, which we follow (the
weights lean towards calling a point feasible, so the classifier prunes only clearly bad regions).

Features: unit values for primitive parameters (numeric and ordinal), one-hot columns for bool,
switch and enum, item positions for permutations and schedules, element unit values for arrays,
order positions and cutoff logs for selectors.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from ...parameters import ConfigurationManipulator
from .distances import (ArrayEncoder, CategoryEncoder, PermutationEncoder, SelectorEncoder, UnitEncoder,
                        make_encoder)

N_TREES = 50
MAX_FEATURES = 0.75
CLASS_WEIGHT = {1: 0.8, 0: 0.2}   # 1 = feasible


class FeatureEncoder:
    """Turns configurations into the classifier's feature matrix (one row per configuration)."""

    def __init__(self, manipulator: ConfigurationManipulator) -> None:
        self.encoders = [make_encoder(p) for p in manipulator.parameters]
        self._perm: Dict[str, PermutationEncoder] = {}
        for e in self.encoders:
            if isinstance(e, PermutationEncoder):
                self._perm[e.name] = e

    def _columns(self, e: Any, values: Sequence[Any]) -> np.ndarray:
        n = len(values)
        if isinstance(e, UnitEncoder):
            return e.encode(values)
        if isinstance(e, CategoryEncoder):
            idx = e.encode(values)[:, 0].astype(int)
            out = np.zeros((n, len(e.options)))
            out[np.arange(n), idx] = 1.0
            return out
        if isinstance(e, PermutationEncoder):
            return e.positions(values).astype(float)
        if isinstance(e, ArrayEncoder):
            return np.array([[e._unit(x) for x in v] for v in values], dtype=float).reshape(n, e.count)
        if isinstance(e, SelectorEncoder):
            order = e.order.positions([v["order"] for v in values]).astype(float)
            cuts = np.array([[math.log1p(c) for c in v["cutoffs"]] for v in values],
                            dtype=float).reshape(n, e.k)
            return np.hstack([order, cuts])
        return np.zeros((n, 0))

    def features(self, configs: Sequence[Dict[str, Any]]) -> np.ndarray:
        """Feature matrix for ``configs``."""
        cols = [self._columns(e, [c[e.name] for c in configs]) for e in self.encoders]
        if not cols:
            return np.zeros((len(configs), 1))
        X = np.hstack(cols)
        return X if X.shape[1] else np.zeros((len(configs), 1))


class FeasibilityModel:
    """Random forest of feasible (1) versus infeasible/error (0) results.

    :meth:`fit` is called with every completed configuration whenever new results arrived and at
    least one of them is infeasible and one feasible; :meth:`probability` gives P(feasible).
    """

    def __init__(self, manipulator: ConfigurationManipulator) -> None:
        self.features = FeatureEncoder(manipulator)
        self.model: Any = None

    def fit(self, configs: Sequence[Dict[str, Any]], feasible: Sequence[bool], seed: int) -> bool:
        """Train on the given results; returns False (and predicts 1.0) when only one class is present."""
        labels = np.array([1 if f else 0 for f in feasible])
        if len(configs) == 0 or labels.min() == labels.max():
            self.model = None
            return False
        X = self.features.features(configs)
        self.model = RandomForestClassifier(n_estimators=N_TREES, max_features=MAX_FEATURES,
                                            bootstrap=False, class_weight=CLASS_WEIGHT,
                                            random_state=seed % (2 ** 32))
        self.model.fit(X, labels)
        return True

    @property
    def trained(self) -> bool:
        return self.model is not None

    def probability(self, configs: Sequence[Dict[str, Any]]) -> np.ndarray:
        """P(feasible) for each configuration (all ones when the model is not trained)."""
        if self.model is None or len(configs) == 0:
            return np.ones(len(configs))
        proba = self.model.predict_proba(self.features.features(configs))
        col: List[int] = list(self.model.classes_)
        return proba[:, col.index(1)]

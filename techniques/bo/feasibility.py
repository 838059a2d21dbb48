"""Hidden-constraint model: a random-forest classifier predicting P(feasible) (BaCO §4.2).

The BaCO paper says only "a Random Forest model"; its published code (``RFClassificationModel``)
uses scikit-learn's ``RandomForestClassifier`` with 50 trees, ``max_features=0.75``,
``bootstrap=False`` and class weights ``{feasible: 0.8, infeasible: 0.2}``, which we follow (the
weights lean towards calling a point feasible, so the classifier prunes only clearly bad regions).

Features: unit values for primitive parameters (numeric and ordinal), one-hot columns for bool,
switch and enum, item positions for permutations and schedules, element unit values for arrays,
order positions and cutoff logs for selectors.  Permutations of at most
:data:`PAIRWISE_MAX_ITEMS` items also get one 0/1 column per pair of items ("a comes before b"):
loop-order legality rules (a loop nest's concordance, a dependence) are precedence relations, which
a tree can then learn with a single split instead of approximating ``pos[a] < pos[b]`` by a
staircase of axis-aligned splits on two position columns.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, Sequence

import numpy as np

from ...parameters import ConfigurationManipulator
from .distances import (ArrayEncoder, CategoryEncoder, PermutationEncoder, SelectorEncoder, UnitEncoder,
                        make_encoder)

N_TREES = 50
MAX_FEATURES = 0.75
CLASS_WEIGHT = {1: 0.8, 0: 0.2}   # 1 = feasible
PAIRWISE_MAX_ITEMS = 10           # n(n-1)/2 precedence columns: 45 at most


def _unit_columns(e: UnitEncoder, values: Sequence[Any]) -> np.ndarray:
    return e.encode(values)


def _one_hot_columns(e: CategoryEncoder, values: Sequence[Any]) -> np.ndarray:
    n = len(values)
    idx = e.encode(values)[:, 0].astype(int)
    out = np.zeros((n, len(e.options)))
    out[np.arange(n), idx] = 1.0
    return out


def _permutation_columns(e: PermutationEncoder, values: Sequence[Any]) -> np.ndarray:
    return permutation_features(e.positions(values))


def _array_columns(e: ArrayEncoder, values: Sequence[Any]) -> np.ndarray:
    return np.array([[e._unit(x) for x in v] for v in values], dtype=float).reshape(len(values), e.count)


def _selector_columns(e: SelectorEncoder, values: Sequence[Any]) -> np.ndarray:
    order = e.order.positions([v["order"] for v in values]).astype(float)
    cuts = np.array([[math.log1p(c) for c in v["cutoffs"]] for v in values],
                    dtype=float).reshape(len(values), e.k)
    return np.hstack([order, cuts])


#: the feature columns of each ``Parameter.encoding`` (from the parameter's distance encoder)
FEATURES: Dict[str, Callable[[Any, Sequence[Any]], np.ndarray]] = {
    "unit": _unit_columns, "category": _one_hot_columns, "permutation": _permutation_columns,
    "array": _array_columns, "selector": _selector_columns}


class FeatureEncoder:
    """Turns configurations into the classifier's feature matrix (one row per configuration)."""

    def __init__(self, manipulator: ConfigurationManipulator) -> None:
        self.encoders = [make_encoder(p) for p in manipulator.parameters]
        self._columns = [FEATURES[p.encoding] for p in manipulator.parameters]

    def features(self, configs: Sequence[Dict[str, Any]]) -> np.ndarray:
        """Feature matrix for ``configs``."""
        cols = [f(e, [c[e.name] for c in configs]) for f, e in zip(self._columns, self.encoders)]
        if not cols:
            return np.zeros((len(configs), 1))
        X = np.hstack(cols)
        return X if X.shape[1] else np.zeros((len(configs), 1))


def permutation_features(pos: np.ndarray) -> np.ndarray:
    """Item positions ``pos[r, i]``, then (for at most :data:`PAIRWISE_MAX_ITEMS` items) one column
    per pair ``a < b`` that is 1.0 when item ``a`` comes before item ``b``."""
    pos = np.asarray(pos, dtype=float)
    n = pos.shape[1] if pos.ndim == 2 else 0
    if n < 2 or n > PAIRWISE_MAX_ITEMS:
        return pos
    a, b = np.triu_indices(n, k=1)
    return np.hstack([pos, (pos[:, a] < pos[:, b]).astype(float)])


def fit_trees(X: np.ndarray, labels: np.ndarray, seed: int, min_leaf: int = 1) -> list:
    """Called once per feasibility refit: the fitted trees (``tree_`` objects) of the forest that
    ``RandomForestClassifier(n_estimators=N_TREES, max_features=MAX_FEATURES, bootstrap=False,
    class_weight=CLASS_WEIGHT, min_samples_leaf=min_leaf, random_state=seed)`` fits on ``X`` and the
    0/1 ``labels`` (both present).

    The same trees (each tree's seed drawn from ``seed`` in the forest's order, the class weights as
    sample weights), built without the forest's per-tree cloning and input checks, which cost more
    than the trees themselves on the few hundred rows BO sees: about a quarter of the forest's time.
    """
    from sklearn import config_context
    from sklearn.tree import DecisionTreeClassifier
    X = np.ascontiguousarray(X, dtype=np.float32)
    y = np.ascontiguousarray(labels, dtype=np.float64)
    weight = np.where(labels == 1, CLASS_WEIGHT[1], CLASS_WEIGHT[0]).astype(np.float64)
    draws = np.random.RandomState(seed % (2 ** 32))
    trees = []
    with config_context(assume_finite=True, skip_parameter_validation=True):
        for _ in range(N_TREES):
            tree = DecisionTreeClassifier(max_features=MAX_FEATURES, min_samples_leaf=min_leaf,
                                          random_state=draws.randint(np.iinfo(np.int32).max))
            trees.append(tree.fit(X, y, sample_weight=weight, check_input=False).tree_)
    return trees


class PackedForest:
    """The fitted forest's leaf probabilities, evaluated for a whole batch at once.

    Gives the same probabilities as ``RandomForestClassifier.predict_proba`` (inputs are rounded to
    float32 as scikit-learn does) without its per-call overhead, which matters because the local
    search asks for a few hundred points at a time: each tree only finds the leaf of every row
    (``Tree.apply``, compiled) and the leaf's probability of class 1 (feasible) is looked up.
    """

    def __init__(self, trees: Sequence[Any]) -> None:
        self.trees = list(trees)
        self.prob = []
        for t in self.trees:
            value = t.value[:, 0, :]
            total = value.sum(axis=1)
            self.prob.append(value[:, 1] / np.where(total > 0, total, 1.0))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Mean over trees of the leaf probability of class 1 for each row of ``X``."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        total = np.zeros(X.shape[0])
        for tree, prob in zip(self.trees, self.prob):
            total += prob[tree.apply(X)]
        return total / len(self.trees)


class FeasibilityModel:
    """Random forest of feasible (1) versus infeasible/error (0) results.

    :meth:`fit` is called with every completed configuration whenever new results arrived and at
    least one of them is infeasible and one feasible; :meth:`probability` gives P(feasible).
    """

    def __init__(self, manipulator: ConfigurationManipulator, min_leaf: int = 1) -> None:
        self.features = FeatureEncoder(manipulator)
        #: fewest results per leaf: 1 grows every tree until its leaves are pure (BaCO's forest)
        self.min_leaf = min_leaf
        self.model: Any = None   # the fitted PackedForest

    def fit(self, configs: Sequence[Dict[str, Any]], feasible: Sequence[bool], seed: int) -> bool:
        """Train on the given results; returns False (and predicts 1.0) when only one class is present."""
        labels = np.array([1 if f else 0 for f in feasible])
        if len(configs) == 0 or labels.min() == labels.max():
            self.model = None
            return False
        self.model = PackedForest(fit_trees(self.features.features(configs), labels, seed, self.min_leaf))
        return True

    @property
    def trained(self) -> bool:
        return self.model is not None

    def probability(self, configs: Sequence[Dict[str, Any]]) -> np.ndarray:
        """P(feasible) for each configuration (all ones when the model is not trained)."""
        if self.model is None or len(configs) == 0:
            return np.ones(len(configs))
        return self.model.predict(self.features.features(configs))

    def probability_features(self, X: np.ndarray) -> np.ndarray:
        """P(feasible) for rows of a feature matrix built by ``self.features``."""
        if self.model is None or len(X) == 0:
            return np.ones(len(X))
        return self.model.predict(X)

"""The feasibility model's own tree loop (feasibility.fit_trees) is BaCO's forest: the same trees, and
so the same probabilities, as scikit-learn's ``RandomForestClassifier`` with the same settings."""
import numpy as np
import pytest

from tunerlib.techniques.bo.feasibility import CLASS_WEIGHT, MAX_FEATURES, N_TREES, PackedForest, fit_trees


@pytest.mark.parametrize("rows, columns, seed, min_leaf", [(6, 2, 0, 1), (20, 6, 1, 1), (57, 11, 2, 1),
                                                          (300, 9, 2 ** 40 + 3, 1), (57, 11, 4, 3), (300, 9, 5, 2)])
def test_the_trees_predict_what_sklearns_forest_predicts(rows, columns, seed, min_leaf):
    from sklearn.ensemble import RandomForestClassifier   # here, not at collection (1 s per test process)
    rng = np.random.default_rng(seed % 1000)
    X = rng.random((rows, columns))
    X[:, -1] = np.round(X[:, -1] * 3)                      # a few tied values, as one-hot/ordinal columns give
    labels = (X[:, 0] + 0.3 * X[:, 1] + 0.2 * rng.random(rows) > 0.6).astype(int)
    labels[:2] = (0, 1)                                    # both classes present
    forest = RandomForestClassifier(n_estimators=N_TREES, max_features=MAX_FEATURES, bootstrap=False,
                                    class_weight=CLASS_WEIGHT, min_samples_leaf=min_leaf,
                                    random_state=seed % (2 ** 32)).fit(X, labels)
    ours = PackedForest(fit_trees(X, labels, seed, min_leaf))
    query = np.vstack([X, rng.random((200, columns))])
    assert np.array_equal(ours.predict(query), forest.predict_proba(query)[:, 1])


def test_a_different_seed_gives_different_trees():
    rng = np.random.default_rng(5)
    X = rng.random((40, 8))
    labels = (X[:, 0] > 0.5).astype(int)
    query = rng.random((300, 8))
    assert not np.array_equal(PackedForest(fit_trees(X, labels, 1)).predict(query),
                              PackedForest(fit_trees(X, labels, 2)).predict(query))


def test_larger_leaves_do_not_condemn_a_region_for_one_failure():
    """One failed result among feasible ones: fully grown trees give its neighbourhood P(feasible) near 0
    (the acquisition then never goes there); leaves of 3 or more results keep it plausible, while a
    region where every result failed stays improbable."""
    rng = np.random.default_rng(3)
    X = rng.random((30, 3))
    X[:, 0] *= 0.85
    labels = np.ones(30, dtype=int)
    labels[0] = 0                                          # a lone failure
    X[1:7, 0] = 0.9 + 0.1 * rng.random(6)                  # a corner (x0 > 0.9) where everything failed
    labels[1:7] = 0
    near_lone = X[:1] + 0.001
    corner = np.array([[0.97, 0.5, 0.5]])
    full, grouped = PackedForest(fit_trees(X, labels, 7)), PackedForest(fit_trees(X, labels, 7, 3))
    assert full.predict(near_lone)[0] < 0.1 and grouped.predict(near_lone)[0] > 0.8
    assert full.predict(corner)[0] < 0.1 and grouped.predict(corner)[0] < 0.3

"""The feasibility classifier's precedence columns for permutations ("item a before item b")."""
import itertools
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters import ConfigurationManipulator, IntegerParameter, PermutationParameter
from tunerlib.techniques.bo import feasibility
from tunerlib.techniques.bo.feasibility import FeasibilityModel, FeatureEncoder, permutation_features


@settings(max_examples=60, deadline=None)
@given(st.integers(2, feasibility.PAIRWISE_MAX_ITEMS).flatmap(
    lambda n: st.lists(st.permutations(list(range(n))), min_size=1, max_size=5)))
def test_precedence_columns_are_the_pairwise_order(perms):
    n = len(perms[0])
    pos = np.array([[p.index(i) for i in range(n)] for p in perms])
    out = permutation_features(pos)
    pairs = list(itertools.combinations(range(n), 2))
    assert out.shape == (len(perms), n + len(pairs))
    assert np.array_equal(out[:, :n], pos)
    for col, (a, b) in enumerate(pairs, start=n):
        assert list(out[:, col]) == [1.0 if p.index(a) < p.index(b) else 0.0 for p in perms]


def test_long_permutations_keep_positions_only():
    n = feasibility.PAIRWISE_MAX_ITEMS + 1
    pos = np.array([list(range(n)), list(reversed(range(n)))])
    assert np.array_equal(permutation_features(pos), pos)


def test_feature_encoder_adds_the_columns_after_other_parameters():
    m = ConfigurationManipulator([IntegerParameter("k", 0, 3), PermutationParameter("p", [0, 1, 2, 3])])
    X = FeatureEncoder(m).features([{"k": 3, "p": [3, 2, 1, 0]}])
    assert X.shape == (1, 1 + 4 + 6)
    assert X[0, 0] > 0.5 and list(X[0, 5:]) == [0.0] * 6   # every pair reversed


def test_classifier_learns_a_precedence_rule_from_few_examples():
    """A loop-order rule (item 1 before item 3) is one split on a precedence column: after 20
    labelled orders of 5 loops, the classifier separates the other 100 almost perfectly."""
    m = ConfigurationManipulator([PermutationParameter("p", [0, 1, 2, 3, 4])])
    perms = [list(p) for p in itertools.permutations(range(5))]
    errors = []
    for seed in range(10):
        train = random.Random(seed).sample(perms, 20)
        test = [p for p in perms if p not in train]
        legal = [p.index(1) < p.index(3) for p in train]
        if len(set(legal)) < 2:
            continue
        model = FeasibilityModel(m)
        model.fit([{"p": p} for p in train], legal, seed)
        prob = model.probability([{"p": p} for p in test])
        truth = np.array([p.index(1) < p.index(3) for p in test])
        errors.append(np.mean((prob > 0.5) != truth))
    assert len(errors) >= 8 and np.mean(errors) < 0.03, errors

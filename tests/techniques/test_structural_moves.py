"""The vectorised tour search of the structural surrogates against straightforward references: every
move of the move table re-summed on the moved tour, the best-improvement descent move by move, the
or-opt move by list surgery, and the model's Woodbury correction by dense linear algebra.

Integer costs make many moves tie exactly (their changes are exact in floating point), so the
descent's choice among equal moves (the first in the table's order) is checked too."""
import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters import PermutationParameter
from tunerlib.parameters.features import FeatureLayout
from tunerlib.techniques.structural.model import SparseBayesLinear
from tunerlib.techniques.structural.tours import (_best_move, apply_move, apply_or_opt, apply_two_opt, legal_table,
                                                  local_search, move_table, ranked_moves, tour_value)

SECTIONS = ((0, 0, False), (1, 1, False), (2, 1, True), (3, 2, False), (4, 2, True), (5, 3, False), (6, 3, True))


def _legal(m: int, i: int, k: int, n: int) -> bool:
    """Whether entry ``[m, i, k]`` of the table is a move (the rules the table's docstring states)."""
    if m == 0:
        return k >= i + 2
    _, s, reverse = SECTIONS[m]
    if n < 5 or (n < 6 and s == 3) or (k - (i - 1)) % n <= s:   # a section needs 3 others
        return False
    return not reverse or (i + s <= n and s > 1)


def _moved(t: np.ndarray, m: int, i: int, k: int) -> np.ndarray:
    if m == 0:
        return apply_two_opt(t, i, k)
    _, s, reverse = SECTIONS[m]
    return apply_or_opt(t, i, s, k, reverse)


def _reference_table(t: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Each move applied and the tour re-summed (``inf`` where no move)."""
    n = t.size
    base = tour_value(t, C)
    out = np.full((7, n, n), np.inf)
    for m in range(7):
        for i in range(n):
            for k in range(n):
                if _legal(m, i, k, n):
                    out[m, i, k] = tour_value(_moved(t, m, i, k), C) - base
    return out


def _reference_descent(t: np.ndarray, C: np.ndarray, moves: int) -> np.ndarray:
    """Best improvement, scanning moves in the table's order and keeping the first of equal changes."""
    for _ in range(moves):
        table = _reference_table(t, C)
        best = min(((table[m, i, k], m, i, k) for m in range(7) for i in range(t.size) for k in range(t.size)),
                   key=lambda entry: entry[0])
        if not best[0] < 0:
            break
        t = _moved(t, *best[1:])
    return t


@st.composite
def _instances(draw, low: int = 4, high: int = 11):
    n = draw(st.integers(low, high))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    C = rng.integers(0, draw(st.sampled_from([3, 50])), (n, n)).astype(float)
    if draw(st.booleans()):
        C = C + C.T
    return rng.permutation(n), C


@settings(max_examples=40, deadline=None)
@given(_instances())
def test_the_move_table_equals_every_move_applied_and_re_summed(instance):
    t, C = instance
    table = move_table(t, C)
    reference = _reference_table(t, C)
    n = t.size
    if n < 6:
        table[5:] = np.inf   # the search's own rule for short tours (sections of 2-3 need 3 others)
    if n < 5:
        table[1:] = np.inf
    assert np.array_equal(table, reference)


@settings(max_examples=40, deadline=None)
@given(_instances(), st.integers(1, 30))
def test_the_ranked_moves_are_the_tables_lowest_changes_lowest_first(instance, limit):
    t, C = instance
    reference = _reference_table(t, C)
    lowest = np.sort(reference[np.isfinite(reference)])[:limit]
    moved = ranked_moves(t, C, limit)
    changes = [tour_value(m, C) - tour_value(t, C) for m in moved]
    assert np.allclose(changes, lowest)


@settings(max_examples=25, deadline=None)
@given(_instances(), st.integers(1, 12))
def test_the_descent_makes_the_reference_moves_choosing_the_first_of_equal_ones(instance, moves):
    t, C = instance
    assert local_search(t, C, moves).tolist() == _reference_descent(t, C, moves).tolist()


@settings(max_examples=60, deadline=None)
@given(_instances(4, 40))
def test_the_best_move_scored_a_kind_at_a_time_is_the_first_lowest_of_the_whole_table(instance):
    """The descent scores each kind's table in turn in one buffer: its move is the whole table's
    argmin (the first of equal changes in the table's flat order), its change bit for bit."""
    t, C = instance
    table = legal_table(t, C)
    flat = int(np.argmin(table))
    delta, moved = _best_move(t, C)
    if np.isfinite(table.flat[flat]):
        assert delta == table.flat[flat] and moved is not None
        assert moved.tolist() == apply_move(t, flat).tolist()
    else:
        assert moved is None


@settings(max_examples=60, deadline=None)
@given(st.integers(4, 12), st.integers(0, 11), st.integers(1, 3), st.integers(0, 11), st.booleans(),
       st.integers(0, 2 ** 32 - 1))
def test_an_or_opt_move_puts_the_section_after_the_gap_item(n, i, s, k, reverse, seed):
    i, k = i % n, k % n
    if (k - (i - 1)) % n <= s:
        return                       # the gap touches the section: not a move
    t = np.random.default_rng(seed).permutation(n)
    section = [int(t[(i + a) % n]) for a in range(s)]
    rest = [int(x) for x in t if int(x) not in section]
    at = rest.index(int(t[k])) + 1
    expected = rest[:at] + (section[::-1] if reverse else section) + rest[at:]
    assert apply_or_opt(t, i, s, k, reverse).tolist() == expected


@settings(max_examples=15, deadline=None)
@given(st.integers(6, 14), st.integers(0, 2 ** 32 - 1), st.integers(1, 40))
def test_the_woodbury_correction_equals_the_dense_update(n, seed, extra):
    """Results added after a full solve are folded in by ``_correct`` (new rows in the order their
    features were encoded, not sorted, with values other than 1): the mean equals
    ``anchor + V X' (X V X' + noise I)^-1 r``."""
    rng = np.random.default_rng(seed)
    layout = FeatureLayout([PermutationParameter("tour", list(range(n)))], precedence=False)
    model = SparseBayesLinear(layout.size, layout.groups)
    C = rng.random((n, n))
    for _ in range(60):
        t = rng.permutation(n)
        model.add(layout.encode({"tour": t.tolist()}), tour_value(t, C))
    model.refresh()
    for _ in range(extra):
        idx, val = layout.encode({"tour": rng.permutation(n).tolist()})
        model.add((idx, val * rng.uniform(0.5, 2.0, val.size)), rng.random())
    model._correct()
    X = model.rows.matrix(model._anchor_n).toarray()
    y = (np.asarray(model.y[model._anchor_n:]) - model.offset) / model.scale
    V = model.variance()
    r = y - (X @ model.anchor + model.intercept)
    expected = model.anchor + (V[:, None] * X.T) @ np.linalg.solve((X * V) @ X.T + model.noise * np.eye(len(y)), r)
    assert np.allclose(model.mean, expected, rtol=1e-9, atol=1e-12)


def _full_width_correction(model):
    """The Woodbury correction over every feature (scipy's products of the sorted rows), as a reference."""
    X = model.rows.matrix(model._anchor_n)
    y = (np.asarray(model.y[model._anchor_n:]) - model.offset) / model.scale
    Xs, v = X.sorted_indices(), model.variance()
    XV = sp.csr_matrix((Xs.data * v[Xs.indices], Xs.indices, Xs.indptr), shape=X.shape)
    S = (XV @ X.T).toarray() + model.noise * np.eye(X.shape[0])
    return model.anchor + XV.T @ np.linalg.solve(S, y - (X @ model.anchor + model.intercept))


@settings(max_examples=15, deadline=None)
@given(st.integers(6, 14), st.integers(0, 2 ** 32 - 1), st.lists(st.integers(1, 6), min_size=1, max_size=8))
def test_the_woodbury_correction_made_result_by_result_equals_the_full_width_one_bit_for_bit(n, seed, batches):
    """The correction keeps the rows since the last solve sorted and over the features they hold, adding
    each row once; after every batch of new results (and across full solves, which start it afresh)
    its mean is the full-width correction's, bit for bit."""
    rng = np.random.default_rng(seed)
    layout = FeatureLayout([PermutationParameter("tour", list(range(n)))], precedence=False)
    model = SparseBayesLinear(layout.size, layout.groups)
    C = rng.random((n, n))
    for batch in [40, *batches, 20, *batches]:
        for _ in range(batch):
            idx, val = layout.encode({"tour": rng.permutation(n).tolist()})
            model.add((idx, val * rng.uniform(0.5, 2.0, val.size)), tour_value(rng.permutation(n), C))
        if batch >= 20:
            model.refresh()        # a full solve: the anchor moves
            continue
        model._correct()
        assert np.array_equal(model.mean, _full_width_correction(model))

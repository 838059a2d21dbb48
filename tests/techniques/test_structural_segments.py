"""The orientation-keeping section moves of :mod:`tunerlib.techniques.structural.segments` against
straightforward references: each move applied and the tour re-summed, and the ranking of all move
kinds against every distinct moved tour's change."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.techniques.structural.segments import (SHORTEST, longest_section, ranked_directed_moves,
                                                     segment_table)
from tunerlib.techniques.structural.tours import apply_move, apply_or_opt, legal_table, tour_value


@st.composite
def _instances(draw, low=12, high=24):
    n = draw(st.integers(low, high))
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    return rng.permutation(n), rng.random((n, n))


def _canonical(t: np.ndarray) -> bytes:
    return np.roll(t, -int(np.argmin(t))).tobytes()


@settings(max_examples=25, deadline=None)
@given(_instances())
def test_every_section_move_is_scored_as_the_re_summed_tour(instance):
    t, C = instance
    n, longest = t.size, longest_section(t.size)
    table, base = segment_table(t, C, longest), tour_value(t, C)
    assert table.shape == (longest - SHORTEST + 1, n, n)
    for m, s in enumerate(range(SHORTEST, longest + 1)):
        for i in range(n):
            for k in range(n):
                touching = (k - (i - 1)) % n <= s
                assert np.isfinite(table[m, i, k]) != touching
                if not touching:
                    moved = apply_or_opt(t, i, s, k, False)
                    assert abs(tour_value(moved, C) - base - table[m, i, k]) < 1e-9


def _all_moves(t: np.ndarray, C: np.ndarray, reversals: bool) -> dict:
    """Every distinct tour of a 2-opt, or-opt or section move and its change (the references' union)."""
    n, base, out = t.size, tour_value(t, C), {}
    table = legal_table(t, C)
    for flat in np.flatnonzero(np.isfinite(table.ravel())):
        if reversals or int(flat) // (n * n) in (1, 3, 5):
            moved = apply_move(t, int(flat))
            out[_canonical(moved)] = tour_value(moved, C) - base
    for s in range(SHORTEST, longest_section(n) + 1):
        for i in range(n):
            for k in range(n):
                if (k - (i - 1)) % n > s:
                    moved = apply_or_opt(t, i, s, k, False)
                    out[_canonical(moved)] = tour_value(moved, C) - base
    return out


@settings(max_examples=20, deadline=None)
@given(_instances(), st.integers(1, 40), st.booleans())
def test_the_ranked_moves_are_the_lowest_distinct_tours_lowest_first(instance, limit, reversals):
    t, C = instance
    reference = _all_moves(t, C, reversals)
    moved = ranked_directed_moves(t, C, limit, reversals)
    keys = [_canonical(m) for m in moved]
    changes = [tour_value(m, C) - tour_value(t, C) for m in moved]
    assert len(set(keys)) == len(keys) == min(limit, len(reference))
    assert all(key in reference for key in keys)
    assert np.allclose(changes, np.sort(list(reference.values()))[:len(keys)])


def test_a_long_section_moved_without_reversal_is_ranked_first_on_a_directed_cost():
    """A directed ring 0 → 1 → ... → 29 costs 1 a step, every other step 10: the tour with the section
    of items 3-8 cut out and put back between 20 and 21 (orientation kept) is repaired by moving that
    section back, a move 2-opt and the or-opt of 1-3 items cannot make in one step."""
    n = 30
    C = np.full((n, n), 10.0)
    C[np.arange(n), (np.arange(n) + 1) % n] = 1.0
    ring = np.arange(n)
    t = np.concatenate((ring[:3], ring[9:21], ring[3:9], ring[21:]))
    best = ranked_directed_moves(t, C, 1, reversals=False)[0]
    assert tour_value(best, C) == n
    table = legal_table(t, C)
    assert np.min(table) > -27           # the section move saves 27; no 2-opt / or-opt move does

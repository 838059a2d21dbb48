"""The focused descent after a kick (techniques/structural/focused.py) against the whole move table:
its entries are the table's, it scores every move that removes a changed step, and it ends where the
whole-table descent would stop, at a local optimum of the whole neighbourhood."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.techniques.structural.focused import _focused_tables, changed_items, focused_descent, kicked_search
from tunerlib.techniques.structural.tours import (_best_move, _legal_table, double_bridge, iterated_search,
                                                  local_search, tour_value)


@st.composite
def _instances(draw, low: int = 4, high: int = 24):
    n = draw(st.integers(low, high))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    C = rng.integers(0, draw(st.sampled_from([3, 50])), (n, n)).astype(float)
    if draw(st.booleans()):
        C = C + C.T
    steps = np.unique(rng.integers(0, n, draw(st.integers(1, 4))))
    return rng.permutation(n), C, steps


def _removes(m: int, i: int, k: int, n: int, steps: np.ndarray) -> bool:
    """Whether the move ``[m, i, k]`` removes a step at ``steps`` (or-opt: also the section's own
    first and last removed steps, ``i - 1`` and ``i + s - 1``)."""
    if m == 0:
        return i in steps or k in steps
    s = (m + 1) // 2
    return k in steps or (i - 1) % n in steps or (i + s - 1) % n in steps


@settings(max_examples=80, deadline=None)
@given(_instances())
def test_the_focused_entries_are_the_move_tables_and_cover_every_move_at_the_changed_steps(instance):
    t, C, steps = instance
    n = t.size
    table = _legal_table(t, C)
    scored = set()
    for values, m, i, k in _focused_tables(t, np.concatenate((C, C.T)), steps):
        m, i, k = (np.broadcast_to(a, values.shape) for a in (m, i, k))
        reference = table[m, i, k]
        legal = np.isfinite(reference)
        assert np.array_equal(np.isfinite(values), legal)
        assert np.allclose(values[legal], reference[legal])
        scored |= set(zip(m[legal].tolist(), i[legal].tolist(), k[legal].tolist()))
    for m, i, k in np.argwhere(np.isfinite(table)).tolist():
        if _removes(m, i, k, n, steps):
            assert (m, i, k) in scored


@settings(max_examples=60, deadline=None)
@given(_instances(5, 30), st.integers(0, 2 ** 32 - 1))
def test_a_focused_descent_after_a_kick_ends_at_a_local_optimum_of_the_whole_neighbourhood(instance, seed):
    t, C, _ = instance
    optimum = local_search(t, C, 50 * t.size)
    kicked = double_bridge(optimum, np.random.default_rng(seed))
    out = focused_descent(kicked, C, changed_items(optimum, kicked), 50 * t.size)
    assert sorted(out.tolist()) == list(range(t.size))
    assert tour_value(out, C) <= tour_value(kicked, C)
    delta, moved = _best_move(out, C)
    assert moved is None or delta >= -1e-9 * (np.abs(C).mean() + 1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(4, 40), st.integers(0, 2 ** 32 - 1))
def test_the_changed_items_are_the_ends_of_the_steps_one_tour_has_and_the_other_lacks(n, seed):
    rng = np.random.default_rng(seed)
    t = rng.permutation(n)
    other = double_bridge(t, rng) if rng.random() < 0.5 else rng.permutation(n)

    def steps(tour):
        return {frozenset(p) for p in zip(tour.tolist(), np.roll(tour, -1).tolist())}

    ends = {item for step in steps(t) ^ steps(other) for item in step}
    assert set(np.flatnonzero(changed_items(t, other)).tolist()) == ends


def test_the_kicked_search_on_a_metric_matches_the_whole_table_search_in_value():
    """On Euclidean distances the kicked search's tours are local optima of the whole neighbourhood
    no longer than the whole-table iterated search's from the same start, give or take a few percent
    (the kicks draw alike; the descents may part at equal changes or at moves away from the kicks)."""
    ratios = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        points = rng.random((60, 2))
        C = np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))
        start = rng.permutation(60)
        best = kicked_search(start, C, np.random.default_rng(seed), 20, None, 240)[0]
        whole = iterated_search(start, C, np.random.default_rng(seed), 20, None, 240)[0]
        assert _best_move(best, C)[0] >= -1e-9
        ratios.append(tour_value(best, C) / tour_value(whole, C))
    assert np.median(ratios) <= 1.02

"""Compound measured moves (:mod:`tunerlib.techniques.structural.compound`): moves of a tour that change
no common step compose, and their value changes add; the group size doubles after a fresh group
shortens the tour and halves after one does not; a failed group's halves are measured first, the
second half's sum inferred from the first's; and MetricStructuralSurrogate's measured local search
proposes such groups."""
import random
from collections import deque

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.parameters.features import FeatureLayout
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.structural import MetricStructuralSurrogate, compound
from tunerlib.techniques.structural.compound import (MAX_SIZE, CompoundMoves, adapted, compose, disjoint,
                                                     make_move, union)
from tunerlib.techniques.structural.identification import MIN_ITEMS
from tunerlib.techniques.structural.measured import MOVES
from tunerlib.techniques.structural.measured import steps_changed as _change
from tunerlib.techniques.structural.segments import ranked_directed_moves
from tunerlib.techniques.structural.tours import apply_move, legal_table, ranked_moves, tour_value


def _moves_of(t, C, picks):
    """The moves of ``t`` at the legal flat indices ``picks`` of its move table (and their tours)."""
    legal = np.flatnonzero(np.isfinite(legal_table(t, C).ravel()))
    out = []
    for p in picks:
        moved = apply_move(t, int(legal[p % legal.size]))
        out.append((make_move(t, moved, {"t": list(moved)}, ("t", _change(t, moved))), moved))
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(8, 40), st.integers(0, 10_000), st.lists(st.integers(0, 10**6), min_size=2, max_size=12))
def test_moves_that_change_no_common_step_compose_and_their_changes_add(n, seed, picks):
    rng = np.random.default_rng(seed)
    t, C = rng.permutation(n), rng.random((n, n)) * 100.0     # a directed cost
    chosen, moved = [], []
    for move, tour in _moves_of(t, C, picks):
        if disjoint(chosen, move) and move.positions.size:
            chosen.append(move)
            moved.append(tour)
    both = compose(t, chosen)
    assert sorted(both.tolist()) == list(range(n))
    base = tour_value(t, C)
    assert abs((tour_value(both, C) - base) - sum(tour_value(m, C) - base for m in moved)) < 1e-7
    # the compound's change is the union of its moves' changes
    assert ("t", _change(t, both)) == union(chosen) if chosen else True


def test_a_rotated_move_is_aligned_with_the_incumbent():
    t = np.arange(12)
    moved = np.roll(apply_move(t, 3 * 144 + 11 * 12 + 5), 4)  # an or-opt section that wraps, rotated
    move = make_move(t, moved, {}, ("t", _change(t, moved)))
    assert move.positions.size < 12
    assert tour_value(compose(t, [move]), np.eye(12)) == tour_value(moved, np.eye(12))


def test_the_group_size_doubles_on_a_shortened_tour_and_halves_otherwise_within_bounds():
    assert [adapted(1, True), adapted(2, True), adapted(MAX_SIZE, True)] == [2, 4, MAX_SIZE]
    assert [adapted(4, False), adapted(2, False), adapted(1, False)] == [2, 1, 1]
    moves = CompoundMoves()
    moves.load_state_dict({"size": 4})
    assert moves.state_dict() == {"size": 4}
    moves.load_state_dict({"size": 10**6})
    assert moves.size == MAX_SIZE


def _search(W, t0, evals, max_size, monkeypatch, check=None):
    """A measured local search of the true costs ``W`` by CompoundMoves alone (the ranked list: the
    incumbent's 64 best moves under ``W``); returns the values measured.  ``check(group, value)`` is
    called with each group and its value before the result is observed."""
    monkeypatch.setattr(compound, "MAX_SIZE", max_size)
    n = W.shape[0]
    space = ConfigurationManipulator([PermutationParameter("t", list(range(n)))])
    maps = FeatureLayout(space.parameters, False).maps
    groups, seen, measured = CompoundMoves(), set(), set()
    incumbent, value, of, moves = {"t": t0.tolist()}, tour_value(t0, W), None, deque()
    values = []
    for _ in range(evals):
        t = np.asarray(incumbent["t"])
        if of != t.tobytes():
            of, moves = t.tobytes(), deque()
            for moved in ranked_moves(t, W, 64):
                moves.append(({"t": moved.tolist()}, ("t", _change(t, moved))))
        made = groups.next(moves, incumbent, value, maps, space, lambda key: key not in seen, measured)
        if made is None:
            break
        cfg, key = made
        seen.add(key)
        v = tour_value(np.asarray(cfg["t"]), W)
        if check is not None:
            check(groups.flight[key], v)
        groups.observe(key, True, v)
        values.append(v)
        if v < value:
            incumbent, value = cfg, v
    return values


def _instance(n, seed):
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2)) * 100.0
    return np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1)), rng.permutation(n)


def test_each_group_measures_the_sum_of_its_moves_and_inferred_sums_are_exact(monkeypatch):
    W, t0 = _instance(40, 1)
    sizes, inferred = [], []

    def check(group, value):
        sizes.append(len(group.moves))
        true = sum(tour_value(compose(m.source, [m]), W) - tour_value(m.source, W) for m in group.moves)
        assert abs((value - group.base) - true) < 1e-7
        partner = group.partner
        if partner is not None:       # the second half's sum, fixed by this half's result
            inferred.append((partner, sum(tour_value(compose(m.source, [m]), W) - tour_value(m.source, W)
                                          for m in partner.moves)))
    values = _search(W, t0, 300, MAX_SIZE, monkeypatch, check)
    assert max(sizes) >= 4 and len(values) > 20
    assert inferred and all(p.total is None or abs(p.total - true) < 1e-7 for p, true in inferred)
    assert any(p.total is not None for p, _ in inferred)


def test_groups_shorten_a_poor_tour_in_fewer_evaluations_than_single_moves(monkeypatch):
    for seed in (1, 2, 3):
        W, t0 = _instance(60, seed)
        single = _search(W, t0, 150, 1, monkeypatch)
        grouped = _search(W, t0, 150, MAX_SIZE, monkeypatch)
        assert min(grouped[:30]) < min(single[:30])


def _applied_ranked_moves(incumbent, t, W):
    """The incumbent's ranked moves (under ``W``, as the technique ranks them below), no two changing a
    common step, that ``t`` applies, when ``t`` is the incumbent with them applied and nothing else
    changed; else []."""
    diff = set(np.flatnonzero(t != incumbent).tolist())
    found, covered = [], set()
    for moved in ranked_moves(incumbent, W, MOVES):
        move = make_move(incumbent, moved, {}, ("t", _change(incumbent, moved)))
        spots = set(move.positions.tolist())
        if spots and spots <= diff and disjoint([m for m, _ in found], move) \
                and np.array_equal(t[move.positions], move.items):
            found.append((move, moved))
            covered |= spots
    return found if covered == diff else []


def test_the_technique_measures_several_ranked_moves_in_one_evaluation(monkeypatch):
    """Ranked by the true costs (the searches on the embedding left out, so that the incumbent stays a
    poor tour), MetricStructuralSurrogate's measured moves shorten the tour often, and then a measured
    move is the incumbent with several of its ranked moves applied at once, its change the sum of theirs."""
    n = MIN_ITEMS + 20
    W, _ = _instance(n, 4)
    made, measured_move = [], MetricStructuralSurrogate._measured_move

    def recording(self):
        made.append(measured_move(self))
        return made[-1]
    monkeypatch.setattr(MetricStructuralSurrogate, "_measured_move", recording)
    monkeypatch.setattr(MetricStructuralSurrogate, "_jump", lambda self: None)
    monkeypatch.setattr(MetricStructuralSurrogate, "_embedded",
                        lambda self, weights=None: [(m, W) for m in self.layout.maps])
    space = ConfigurationManipulator([PermutationParameter("t", list(range(n)))])
    tech = MetricStructuralSurrogate("M")
    tech.bind(space, random.Random(3), "M")
    best, compounds = np.inf, 0
    for _ in range(600):
        incumbent = None if tech.best_config is None else np.asarray(tech.best_config["t"])
        prop = tech.propose()
        t = np.asarray(prop.config["t"])
        value = tour_value(t, W)
        if incumbent is not None and made and prop.config is made[-1] and tech.directed is False:
            applied = _applied_ranked_moves(incumbent, t, W)
            if len(applied) >= 2:
                compounds += 1
                base = tour_value(incumbent, W)
                assert abs(value - base - sum(tour_value(m, W) - base for _, m in applied)) < 1e-7
        tech.observe(Feedback(prop.config, space.hash_config(prop.config), value, "ok", prop.requestor,
                              value < best))
        best = min(best, value)
    assert tech.model.status == "accepted" and compounds >= 3


def test_directed_moves_compose_too():
    rng = np.random.default_rng(7)
    n = 30
    t, C = rng.permutation(n), rng.random((n, n))
    chosen, moved = [], []
    for tour in ranked_directed_moves(t, C, 64, False):
        move = make_move(t, tour, {}, ("t", _change(t, tour)))
        if disjoint(chosen, move):
            chosen.append(move)
            moved.append(tour)
    assert len(chosen) >= 2
    base = tour_value(t, C)
    assert abs(tour_value(compose(t, chosen), C) - base - sum(tour_value(m, C) - base for m in moved)) < 1e-9

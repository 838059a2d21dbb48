"""MetricStructuralSurrogate's measured local search: once the embedding is accepted, the model's side
measures the incumbent reversed once, then proposes the incumbent's moves that the embedding ranks
best, best first, each change (the steps a move removes and adds) once; on a directed cost (the
reversal's value differs) only moves that keep every section's orientation."""
import random

import numpy as np

from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.structural import MetricStructuralSurrogate, identification, measured
from tunerlib.techniques.structural.identification import MIN_ITEMS
from tunerlib.techniques.structural.measured import MOVES, steps_changed
from tunerlib.techniques.structural.segments import ranked_directed_moves
from tunerlib.techniques.structural.tours import ranked_moves


def _run(evals, seed=5, detour=0.0):
    """Per suggestion: (incumbent, proposal, requestor, the incumbent's ranked moves under the accepted
    embedding at that time or None), and the technique; ``detour``: each ordered step costs up to that
    much more than its distance (drawn per direction), a directed cost."""
    rng = np.random.default_rng(5)
    pts = rng.random((MIN_ITEMS + 4, 2)) * 100.0
    W = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1)) + detour * rng.random((MIN_ITEMS + 4,) * 2)
    space = ConfigurationManipulator([PermutationParameter("t", list(range(W.shape[0])))])
    tech = MetricStructuralSurrogate("M")
    tech.bind(space, random.Random(seed), "M")
    best, rows = np.inf, []
    for _ in range(evals):
        incumbent, ranked = None, None
        if tech.best_config is not None and tech.model.status == "accepted":
            incumbent = np.asarray(tech.best_config["t"])
            C = tech._embedded()[0][1]
            moved = ranked_directed_moves(incumbent, C, MOVES, False) if tech.directed else ranked_moves(incumbent, C, MOVES)
            ranked = [m.tolist() for m in moved]
        prop = tech.propose()
        t = np.asarray(prop.config["t"])
        rows.append((incumbent, t, prop.requestor, ranked))
        value = float(W[t, np.roll(t, -1)].sum())
        tech.observe(Feedback(prop.config, space.hash_config(prop.config), value, "ok", prop.requestor,
                              value < best))
        best = min(best, value)
    return rows, tech


def _record_measured_moves(monkeypatch) -> list:
    """The tours MetricStructuralSurrogate._measured_move returns from now on (None when it has none)."""
    made: list = []
    measured_move = MetricStructuralSurrogate._measured_move

    def recording(self):
        cfg = measured_move(self)
        made.append(None if cfg is None else list(cfg["t"]))
        return cfg
    monkeypatch.setattr(MetricStructuralSurrogate, "_measured_move", recording)
    return made


def test_after_acceptance_the_model_measures_the_embeddings_best_moves_of_the_incumbent_once_each(monkeypatch):
    made = _record_measured_moves(monkeypatch)
    rows, tech = _run(260)
    assert tech.model.status == "accepted"
    after = [row for row in rows if row[3] is not None and row[2] == "M"]
    # the first is the search on the accepted embedding, the second the incumbent reversed, the third
    # the incumbent's best-ranked move
    assert after[1][1].tolist() == after[1][0][::-1].tolist() and tech.directed is False
    assert after[2][1].tolist() == after[2][3][0]
    moves = [row for row in after if row[1].tolist() in made]
    assert len(moves) >= 5 and all(t.tolist() in ranked for _, t, _, ranked in moves)
    changes = [steps_changed(incumbent, t) for incumbent, t, _, _ in moves]
    assert len(set(changes)) == len(changes)


def test_the_measured_moves_are_deterministic():
    a, _ = _run(200)
    b, _ = _run(200)
    assert [row[1].tolist() for row in a] == [row[1].tolist() for row in b]


def test_the_moves_are_ranked_by_the_embedding_plus_the_residual_of_the_results_since_the_acceptance(monkeypatch):
    lists, weights = [], []
    ranked, local_weights = measured.ranked_moves, identification.MetricBayesLinear.local_weights

    def ranking(t, C, limit):
        lists.append(C.copy())
        return ranked(t, C, limit)

    def fitted(self):
        weights.append(local_weights(self))
        return weights[-1]
    monkeypatch.setattr(measured, "ranked_moves", ranking)
    monkeypatch.setattr(identification.MetricBayesLinear, "local_weights", fitted)
    _, tech = _run(260)
    assert len(lists) >= 3 and len(weights) == len(lists)
    for C, w in zip(lists, weights):
        assert np.array_equal(C, tech._embedded(w)[0][1])
    # the residual moves the ranking's weights off the embedding's
    assert not np.allclose(weights[-1], tech.model.prior_mean)


def test_the_measured_moves_do_not_wait_for_the_models_share(monkeypatch):
    # with no share for the model, only the measured moves (and the searches on the embedding) are its own
    monkeypatch.setattr(MetricStructuralSurrogate, "_model_share", lambda self: 0.0)
    rows, tech = _run(260)
    assert tech.model.status == "accepted"
    own = [row for row in rows if row[3] is not None and row[2] == "M"]
    moves = [row for row in own if row[1].tolist() in row[3]]
    assert len(moves) >= 10
    # the first measured move is the incumbent's best-ranked one, proposed right after the search and
    # the reversal
    assert own[2][1].tolist() == own[2][3][0]


def test_on_a_directed_cost_the_measured_moves_keep_every_sections_orientation(monkeypatch):
    made = _record_measured_moves(monkeypatch)
    rows, tech = _run(260, detour=20.0)
    assert tech.model.status == "accepted" and tech.directed is True
    moves = [row for row in rows if row[3] is not None and row[2] == "M" and row[1].tolist() in made]
    assert len(moves) >= 5
    # each removes three steps and adds three: no section is reversed
    assert all(len(steps_changed(incumbent, t)[0]) == 3 for incumbent, t, _, _ in moves)

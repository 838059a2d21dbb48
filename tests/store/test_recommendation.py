"""Recommendation: the thesis' worked example (Tables 6.1-6.2), DBI initial sets on a hand-built store,
the fallback to a plain AUC bandit, and every registered approach through the conformance checks with a
populated store."""
import math
import random

import pytest

from tunerlib import TuningRunManager, tune_function
from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.store import CrossSessionStore
from tunerlib.store.queries import correlated, load_affinities, nearest_by_parameters, pearson, ranked
from tunerlib.store.recommender import StoreRecommender
from tunerlib.techniques import Feedback, PureRandom
from tunerlib.techniques.recommendation import RecommendationBandit, approach_names

from tunerlib.testing import SPACES, mixed_space
from stores import PERMUTATION, affinity_pairs, hand_run

TABLE_6_1 = {  # search affinity: dg42, br17, PBsort
    "PSO-OX3": (0.35, 0.10, 0.02), "GA-OX3": (0.25, 0.15, 0.10), "GA-inv": (0.05, 0.40, 0.11),
    "DE": (0.10, 0.16, 0.50), "PSO-inv": (0.10, 0.35, 0.01)}
PB_SORT = '[[["IntegerParameter"],12],[["SelectorParameter",[["LogIntegerParameter"],3]],2]]'
BNDT_STATIC = ("bndt-A", "bndt-pgd", "bndt-D")
ATT48 = {"GA-inv": 0.09, "DE": 0.10, "PSO-inv": 0.30}  # Table 6.2, techniques known in att48


@pytest.fixture
def thesis_store(tmp_path):
    path = str(tmp_path / "thesis.db")
    with CrossSessionStore(path) as store:
        for column, (program, rep) in enumerate((("dg42", PERMUTATION), ("br17", PERMUTATION),
                                                 ("PBsort", PB_SORT))):
            values = {name: row[column] for name, row in TABLE_6_1.items()}
            store.write_run(hand_run(program, affinity_pairs(values), rep))
        yield load_affinities(store)


def _rep(table, program):
    return next(r.id for r in table.reps.values() if r.program == program)


def test_thesis_example_similarity(thesis_store):
    table = thesis_store
    near = nearest_by_parameters(table, {"PermutationParameter": 1})
    assert {rep for d, rep in near if d == 0} == {_rep(table, "dg42"), _rep(table, "br17")}
    assert near[-1] == (pytest.approx(1 + 3), _rep(table, "PBsort"))  # a missing type, three extra ones
    rho = {table.reps[rep].program: r for r, rep in correlated(table, ATT48)}
    assert rho["dg42"] == pytest.approx(0.54, abs=0.01)
    assert rho["br17"] == pytest.approx(0.28, abs=0.01)
    assert rho["PBsort"] == pytest.approx(-0.63, abs=0.01)
    assert max(rho, key=rho.get) == "dg42"


def _named(name):
    return PureRandom(name)


def _bandit_on_tsp(names, **options):
    bandit = RecommendationBandit([_named(n) for n in names], name="rec", **options)
    return bandit


def _bind(bandit, n=8):
    bandit.bind(ConfigurationManipulator([PermutationParameter("t", list(range(n)))]), random.Random(1), "rec")


def _observe(bandit, name, requests, bests, start):
    for i in range(requests):
        value = start - i if i < bests else 1e9
        bandit.observe(Feedback({"t": list(range(8))}, f"{name}{i}", value, "ok", f"rec/{name}", i < bests))


def test_thesis_example_recommends_pso_ox3_and_replaces_ga_inv(thesis_store):
    bandit = _bandit_on_tsp(["GA-inv", "PSO-inv", "DE"], interval=1, swap_below=1.0, min_age=0)  # the thesis' rule
    bandit.attach_recommender(StoreRecommender(thesis_store, {"PermutationParameter": 1}), _named)
    _bind(bandit)
    for name, start in (("GA-inv", 3000.0), ("DE", 2000.0), ("PSO-inv", 1000.0)):
        _observe(bandit, name, 100, round(ATT48[name] * 100), start)
    assert bandit.affinities() == pytest.approx(ATT48)
    assert bandit.propose() is not None  # the 1st request ends an interval: recommendation phase
    assert bandit.swaps == [["GA-inv", "PSO-OX3"]]
    assert [t.name for t in bandit.techniques] == ["PSO-OX3", "PSO-inv", "DE"]
    assert bandit.techniques[0].best_value == 1000.0 - 29  # the newcomer saw the run's results
    assert bandit.recommender.log[-1]["representations"] == ["tests/dg42"]
    cautious = _bandit_on_tsp(["GA-inv", "PSO-inv", "DE"], interval=1, min_age=0)  # only a clear laggard goes
    cautious.attach_recommender(StoreRecommender(thesis_store, {"PermutationParameter": 1}), _named)
    _bind(cautious)
    for name, start in (("GA-inv", 3000.0), ("DE", 2000.0), ("PSO-inv", 1000.0)):
        _observe(cautious, name, 100, round(ATT48[name] * 100 / 2 if name == "GA-inv" else ATT48[name] * 100), start)
    cautious.propose()
    assert cautious.swaps == [["GA-inv", "PSO-OX3"]]  # 0.04 <= half the mean (0.073)


def test_dbi_initial_set_comes_from_the_nearest_representation(tmp_path):
    ints = '[[["IntegerParameter"],10]]'
    with CrossSessionStore(str(tmp_path / "s.db")) as store:
        store.write_run(hand_run("tsp-a", affinity_pairs({"X": 0.3, "Y": 0.2, "Q": 0.0})))
        store.write_run(hand_run("tsp-b", affinity_pairs({"X": 0.1, "Y": 0.4})))
        store.write_run(hand_run("ints", affinity_pairs({"Z": 0.5, "X": 0.45}), ints))
        store.write_run(hand_run("perm-bool", affinity_pairs({"W": 0.9}),
                                 '[[["BooleanParameter"],1],[["PermutationParameter"],1]]'))
        table = load_affinities(store)
    bandit = _bandit_on_tsp(["A", "B"], initial_from_store=True, size=3, swap=False)
    bandit.attach_recommender(StoreRecommender(table, {"PermutationParameter": 1}), _named)
    _bind(bandit)
    assert [t.name for t in bandit.techniques] == ["Y", "X"]  # pooled over tsp-a and tsp-b; Q has 0
    assert bandit.initial_source == "store" and bandit.bandit.arms == ["Y", "X"]
    recommender = StoreRecommender(table, {"IntegerParameter": 12})
    assert recommender.initial_techniques() == ["Z", "X"]
    assert pearson([1, 1], [1, 2]) is None and pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)


def test_dbi_set_builds_a_stored_structural_surrogate_with_its_fallback_under_it(tmp_path):
    """A technique that holds its own bandit (StructuralSurrogate: the default bandit is its fallback)
    is no meta-technique: the DBI set takes it from the store, and what its fallback requests counts
    for it in the recommendation bandit."""
    from tunerlib.engine.cross_session import _build
    with CrossSessionStore(str(tmp_path / "s.db")) as store:
        store.write_run(hand_run("tsp", affinity_pairs({"StructuralSurrogate": 0.4, "OrOptGreedyMutation": 0.2})))
        table = load_affinities(store)
    bandit = _bandit_on_tsp(["A"], initial_from_store=True, size=2, swap=False)
    bandit.attach_recommender(StoreRecommender(table, {"PermutationParameter": 1}), _build)
    _bind(bandit)
    assert [t.name for t in bandit.techniques] == ["StructuralSurrogate", "OrOptGreedyMutation"]
    surrogate = bandit.techniques[0]
    assert surrogate.fallback.path == "rec/StructuralSurrogate/AUCBanditMetaTechniqueA"
    feedback = Feedback({"t": list(range(8))}, "k", 5.0, "ok", surrogate.fallback.path + "/UniformGreedyMutation", True)
    assert bandit.sub_technique_of(feedback) is surrogate


def test_without_a_store_an_approach_is_its_auc_bandit(tmp_path, monkeypatch, capsys):
    """Without a store (and without the starter history) a recommendation bandit is its AUC bandit."""
    monkeypatch.setenv("TUNERLIB_STORE", str(tmp_path / "missing.db"))
    m, fn = SPACES["permutation"]()
    plain = tune_function(m, fn, test_limit=150, technique=["AUCBanditMetaTechniqueA"], seed=4).values
    for name in ("rec-bndt-A", "rec-A", "bndt-dbi", "rec-bndt-dbi"):
        manager = TuningRunManager.for_space(m, program_name="p", test_limit=150, seed=4, no_starter_history=True,
                                             database="memory://", technique=[name])
        assert "runs as a plain AUC bandit" in capsys.readouterr().err
        values = []
        while (desired := manager.get_next_desired_result()) is not None:
            values.append(fn(desired.configuration.data))
            manager.report_result(desired, _result(values[-1]))
        manager.finish()
        if name != "rec-A":  # rec-A spreads uses evenly: another allocation by design
            assert values == plain, name
    assert not (tmp_path / "missing.db").exists()


def _result(value):
    from tunerlib import Result
    return Result(time=value)


@pytest.fixture(scope="module")
def populated_store(tmp_path_factory):
    """A store with generated-bandit runs on each conformance space (uploaded with --upload)."""
    path = str(tmp_path_factory.mktemp("store") / "store.db")
    for space, make in sorted(SPACES.items()):
        for seed in (1, 2, 3):
            m, fn = make()
            manager = TuningRunManager.for_space(m, program_name=space, test_limit=150, seed=seed,
                                                 database="memory://", generate_bandit_technique=True,
                                                 upload=True, store=path, quiet=True)
            while (desired := manager.get_next_desired_result()) is not None:
                manager.report_result(desired, _result(fn(desired.configuration.data)))
            manager.finish()
    return path


def _run(name, space, seed, store, budget=200):
    m, fn = space()
    manager = TuningRunManager.for_space(m, program_name="target", test_limit=budget, seed=seed,
                                         database="memory://", technique=[name], store=store, quiet=True)
    values = []
    while (desired := manager.get_next_desired_result()) is not None:
        values.append(fn(desired.configuration.data))
        manager.report_result(desired, _result(values[-1]))
    summary = manager.finish()
    return values, summary, manager.run.technique


@pytest.mark.parametrize("name", approach_names())
def test_every_approach_is_legal_and_complete_with_a_store(name, populated_store):
    for space in sorted(SPACES):
        values, summary, technique = _run(name, SPACES[space], 3, populated_store)
        assert summary.tests == 200 and all(math.isfinite(v) for v in values), (space, summary.stopped_because)
        assert (technique.recommender is not None) == technique.uses_store == (name not in BNDT_STATIC)
        if name.endswith("dbi"):
            assert technique.initial_source == "store", space
    again = _run(name, mixed_space, 11, populated_store, 60)[0]
    assert _run(name, mixed_space, 11, populated_store, 60)[0] == again


def test_recommendation_bandits_swap_on_a_populated_store(populated_store):
    swaps = {space: _run("rec-bndt-A", SPACES[space], 5, populated_store)[2].swaps for space in SPACES}
    assert any(swaps.values()), swaps
    assert not any(_run("bndt-A", SPACES[space], 5, populated_store)[2].swaps for space in SPACES)


def test_run_rank_scores_techniques_by_the_runs_they_took_part_in(tmp_path):
    with CrossSessionStore(str(tmp_path / "s.db")) as store:
        for best, techniques in ((1.0, {"good": (1, 90), "both": (1, 10)}), (2.0, {"both": (1, 50), "bad": (1, 50)}),
                                 (3.0, {"bad": (5, 100)})):
            run = hand_run("p", techniques)
            run.best_value = best
            store.write_run(run)
        store.write_run(hand_run("alone", {"lonely": (9, 10)}))  # one run: nothing to rank it against
        table = load_affinities(store, "run-rank")
    [rep] = [r for r in table.reps.values() if r.program == "p"]
    scores = table.affinity[rep.id]
    assert scores["good"] == (1.0, 0.9) and scores["bad"] == (pytest.approx(0.5 * 0.5 / 1.5), 1.5)
    assert scores["both"] == (pytest.approx((1.0 * 0.1 + 0.5 * 0.5) / 0.6), pytest.approx(0.6))
    assert not any("lonely" in s for s in table.affinity.values())
    assert any("lonely" in s for s in table.similarity.values())  # similarity keeps the affinities
    assert [n for n, *_ in ranked(table, [rep.id])] == ["good", "both", "bad"]


def test_loading_affinities_while_a_run_is_uploaded(tmp_path, monkeypatch):
    """A run uploaded while the table loads (history generation uploads as runs finish) brings a
    technique the reader has not seen yet: it must not break the reader."""
    import tunerlib.store.queries as queries
    path = str(tmp_path / "s.db")
    with CrossSessionStore(path) as store:
        store.write_run(hand_run("p", affinity_pairs({"old": 0.2})))
    snapshots = queries._final_snapshots

    def upload_meanwhile():
        with CrossSessionStore(path) as other:
            other.write_run(hand_run("p", affinity_pairs({"new": 0.3})))
        return snapshots()

    monkeypatch.setattr(queries, "_final_snapshots", upload_meanwhile)
    with CrossSessionStore(path) as store:
        table = load_affinities(store)
    assert {name for known in table.affinity.values() for name in known} <= {"old", "new"}


def test_run_rank_gives_runs_with_the_same_best_the_same_score(tmp_path):
    """Runs tied at the same best (small instances solved by most runs) share the mean of their ranks,
    so the order they happen to be stored in does not rank their techniques."""
    with CrossSessionStore(str(tmp_path / "s.db")) as store:
        for best, name in ((1.0, "first"), (1.0, "second"), (1.0, "third"), (2.0, "worst")):
            run = hand_run("p", {name: (1, 10)})
            run.best_value = best
            store.write_run(run)
        table = load_affinities(store, "run-rank")
    [rep] = [r for r in table.reps.values() if r.program == "p"]
    scores = {name: score for name, (score, _) in table.affinity[rep.id].items()}
    assert scores == {"first": pytest.approx(2 / 3), "second": pytest.approx(2 / 3),
                      "third": pytest.approx(2 / 3), "worst": 0.0}


def _space_tuner(space):
    """A tuner script (MeasurementInterface) over one conformance space, to run through its real main()."""
    from tunerlib import MeasurementInterface, Result

    class SpaceTuner(MeasurementInterface):
        def manipulator(self):
            return SPACES[space]()[0]

        def program_name(self):
            return "target"

        def run(self, desired_result, input, limit):
            return Result(time=SPACES[space]()[1](desired_result.configuration.data))
    return SpaceTuner


def test_swaps_are_logged_once_each_and_listed_in_the_summary_and_the_report(populated_store, tmp_path, capsys):
    import json
    from tunerlib.cli import main
    found = 0
    for space in sorted(SPACES):
        db, js = tmp_path / f"{space}.db", tmp_path / f"{space}.json"
        args = ["--technique", "rec-bndt-A", "--store", populated_store, "--test-limit", "200", "--seed", "5",
                "--database", str(db), "--summary-json", str(js)]
        assert _space_tuner(space).main(args) == 0
        lines = [line for line in capsys.readouterr().err.splitlines() if "swapped out" in line]
        swaps = json.loads(js.read_text())["extra"].get("technique_swaps", [])
        assert len(lines) == len(swaps)                              # one line per swap, at the default level
        for line, swap in zip(lines, swaps):
            assert line.startswith(f"tunerlib: rec-bndt-A: at request {swap['request']} swapped out {swap['removed']}")
            assert f"for {swap['added']}, recommended by the store" in line
        if swaps:
            found += 1
            assert main(["report", str(db), "-o", str(tmp_path / "r.html")]) == 0
            text = (tmp_path / "r.html").read_text()
            assert text.count("<th>technique swap</th>") == len(swaps)
            assert f"at request {swaps[0]['request']}: {swaps[0]['removed']}" in text
            quiet = _space_tuner(space).main(args[:-4] + ["--database", str(tmp_path / "q.db"), "--log-level",
                                                          "warning"])
            assert quiet == 0 and "swapped out" not in capsys.readouterr().err
    assert found, "no space swapped: the test shows nothing"

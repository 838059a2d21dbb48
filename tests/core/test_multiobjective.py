"""Several objectives: the --objectives syntax, MultiObjective, the run's Pareto front (dominance, ties,
infeasible points, maximised metrics), the front in the summary, and the refusal of single-objective
techniques."""
import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from tunerlib import Result, TuningRunManager, UsageError
from tunerlib.front import ParetoFront, front_lines
from tunerlib.multiobjective import (MultiObjective, check_resume_objectives, parse_objectives,
                                     stored_objectives)
from tunerlib.objectives import MaximizeAttribute, MinimizeAttribute, MinimizeTime, ObjectiveError
from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.techniques.pareto import dominates, non_dominated


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    """Runs made without a database argument write ./tunerlib.db: here, not in the checkout."""
    monkeypatch.chdir(tmp_path)


def test_parse_objectives_syntax_units_and_directions():
    obj = parse_objectives("time, energy,max:accuracy", {"accuracy": "%"})
    assert isinstance(obj, MultiObjective)
    assert obj.names == ["time", "energy", "accuracy"] and obj.units == ["s", "J", "%"]
    assert obj.describe() == "minimize time, minimize energy, maximize accuracy"
    assert isinstance(obj.objectives[0], MinimizeTime)
    assert isinstance(obj.objectives[2], MaximizeAttribute)
    assert isinstance(parse_objectives("min:util_lut"), MinimizeAttribute)     # one metric: one objective
    assert parse_objectives("util_lut").unit is None


@pytest.mark.parametrize("text, message", [("", "at least one metric"), ("time,time", "time twice"),
                                           ("max:", "is not a metric"), ("up:time", "is not a metric"),
                                           ("time energy", "is not a metric")])
def test_parse_objectives_errors_are_one_line(text, message):
    with pytest.raises(UsageError, match=message) as err:
        parse_objectives(text)
    assert "\n" not in str(err.value)


def test_values_orient_maximised_metrics_and_fail_loudly():
    obj = MultiObjective([MinimizeAttribute("a"), MaximizeAttribute("b")])
    assert obj.values(Result(extra={"a": 2.0, "b": 5.0})) == (2.0, -5.0)
    assert obj.displays((2.0, -5.0)) == {"a": 2.0, "b": 5.0}
    assert obj.values(Result(state="ERROR")) == (math.inf, math.inf)
    assert obj.value(Result(extra={"a": 2.0, "b": 5.0})) == 2.0           # the first objective
    with pytest.raises(ObjectiveError):
        obj.values(Result(extra={"a": 1.0}))
    with pytest.raises(ValueError, match="twice"):
        MultiObjective([MinimizeAttribute("a"), MaximizeAttribute("a")])


def test_front_ties_duplicates_and_infeasible_by_hand():
    front = ParetoFront()
    assert front.offer((1.0, 3.0), "a", {}, 1)
    assert not front.offer((1.0, 3.0), "b", {}, 2)        # equal vector: no hypervolume gained
    assert not front.offer((1.0, 4.0), "c", {}, 3)        # weakly dominated
    assert not front.offer((math.inf, math.inf), "d", {}, 4)
    assert front.offer((3.0, 1.0), "e", {}, 5)
    assert front.offer((0.5, 3.0), "f", {}, 6)            # dominates "a", which leaves
    assert sorted(m.key for m in front.members) == ["e", "f"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=25))
def test_front_equals_the_non_dominated_set_of_all_offers(points):
    front = ParetoFront()
    entered = [front.offer(tuple(map(float, p)), str(i), {}, i) for i, p in enumerate(points)]
    expected = {tuple(map(float, points[i])) for i in non_dominated([list(p) for p in points])} if points else set()
    assert {m.values for m in front.members} == expected
    for i, p in enumerate(points):   # entered <=> no earlier point weakly dominates it
        earlier = points[:i]
        assert entered[i] == (not any(all(a <= b for a, b in zip(q, p)) for q in earlier))


def _space():
    return ConfigurationManipulator([IntegerParameter("x", 0, 20), IntegerParameter("y", 0, 20)])


def _measure(cfg):
    x, y = cfg["x"], cfg["y"]
    if x == 0:
        return Result(state="INFEASIBLE")
    return Result(time=x / 10, extra={"quality": 20 - abs(x - 10) - y})


def test_a_run_reports_its_front_with_maximised_metrics(tmp_path):
    obj = MultiObjective([MinimizeTime(), MaximizeAttribute("quality")])
    manager = TuningRunManager.for_space(_space(), obj, technique=["NSGA2"], test_limit=60, seed=3, quiet=True)
    seen, flags = [], []
    run = manager.run
    sink = run.search.on_result

    def spy(row, value, new):
        flags.append(new)
        sink(row, value, new)
    run.search.on_result = spy
    while (desired := manager.get_next_desired_result()) is not None:
        result = _measure(desired.configuration.data)
        manager.report_result(desired, result)
        if result.state == "OK":
            seen.append((result.time, -result.extra["quality"]))
    summary = manager.finish()
    expected = {seen[i] for i in non_dominated(seen)}
    got = {(p["objectives"]["time"], -p["objectives"]["quality"]) for p in summary.pareto_front}
    assert got == expected and summary.objective_units == {"time": "s", "quality": None}
    assert sum(flags) >= len(expected)
    path = tmp_path / "s.json"
    summary.write_json(str(path))
    data = json.loads(path.read_text())
    assert data["pareto_front"][0].keys() == {"configuration", "objectives"}
    text = summary.render()
    assert f"Pareto front: {len(expected)} configuration" in text and "best minimize time (first objective)" in text


def test_single_objective_runs_are_unchanged():
    manager = TuningRunManager.for_space(_space(), MinimizeTime(), test_limit=5, seed=1, quiet=True,
                                         technique=["PureRandom"])
    while (desired := manager.get_next_desired_result()) is not None:
        manager.report_result(desired, Result(time=1.0 + desired.configuration.data["x"]))
    summary = manager.finish()
    assert summary.pareto_front is None and "Pareto" not in summary.render()


def test_a_single_objective_technique_is_refused_at_construction():
    obj = MultiObjective([MinimizeTime(), MaximizeAttribute("quality")])
    with pytest.raises(UsageError, match="'UniformGreedyMutation' optimises one objective") as err:
        TuningRunManager.for_space(_space(), obj, technique=["UniformGreedyMutation"], test_limit=5, quiet=True)
    assert "\n" not in str(err.value)
    # a bandit is multi-objective when all its arms are
    TuningRunManager.for_space(_space(), obj, technique=["NSGA2", "PureRandom"], test_limit=5, quiet=True)
    with pytest.raises(UsageError, match="AUCBandit"):
        TuningRunManager.for_space(_space(), obj, technique=["NSGA2", "UniformGreedyMutation"], test_limit=5,
                                   quiet=True)


def test_resume_objectives_must_match():
    obj = parse_objectives("time,energy")
    info = {"uuid": "u", "args": {"objective_list": stored_objectives(obj)}}
    check_resume_objectives(info, obj)
    with pytest.raises(UsageError, match="optimised minimize time, minimize energy, not minimize time"):
        check_resume_objectives(info, MinimizeTime())
    with pytest.raises(UsageError, match="optimised one objective"):
        check_resume_objectives({"uuid": "u", "args": {}}, obj)
    check_resume_objectives({"uuid": "u", "args": {}}, MinimizeTime())


def test_front_lines_show_units_and_cut_long_fronts():
    front = [{"configuration": {"x": i}, "objectives": {"time": 0.1 * i, "energy": 10.0 - i}} for i in range(25)]
    lines = front_lines(front, {"time": "s", "energy": "J"}, limit=20)
    assert lines[0] == "  Pareto front: 25 configurations"
    assert "time 0.1 s, energy 9 J" in lines[2] and "and 5 more" in lines[-1]


def test_dominance_helper_agrees_with_front():
    assert dominates((1.0, 1.0), (1.0, 2.0)) and not dominates((1.0, 2.0), (1.0, 2.0))


def test_the_bandit_credits_entries_to_the_front():
    """In a multi-objective run the AUC bandit's credit (was_new_best) is "entered the Pareto front",
    i.e. a positive hypervolume improvement."""
    from tunerlib.techniques.pareto import hypervolume_improvement
    obj = MultiObjective([MinimizeTime(), MaximizeAttribute("quality")])
    manager = TuningRunManager.for_space(_space(), obj, technique=["NSGA2", "PureRandom"], test_limit=50,
                                         seed=5, quiet=True)
    credited, points = [], []
    sink = manager.run.search.on_result

    def spy(row, value, new):
        credited.append((row.requestor, new))
        sink(row, value, new)
    manager.run.search.on_result = spy
    while (desired := manager.get_next_desired_result()) is not None:
        result = _measure(desired.configuration.data)
        manager.report_result(desired, result)
        vec = (result.time, -result.extra["quality"]) if result.state == "OK" else None
        gain = 0.0 if vec is None else hypervolume_improvement(points or [(100.0, 100.0)], vec, (100.0, 100.0))
        assert credited[-1][1] == (gain > 0), (vec, points)
        if vec is not None:
            points.append(vec)
    history = manager.run.technique.bandit.history
    arm_wins = sum(v for _, v in history)
    assert arm_wins == sum(new for who, new in credited if who.startswith("AUCBandit/")) and arm_wins > 0


def test_the_store_counts_front_entries_as_new_bests(tmp_path):
    """A multi-objective run uploaded to the store: its snapshots credit exactly the results that entered
    the Pareto front (the driver's was_new_best flags), not improvements of the first objective."""
    from tunerlib.db import ResultsDB
    from tunerlib.store.export import export_run
    obj = MultiObjective([MinimizeTime(), MaximizeAttribute("quality")])
    manager = TuningRunManager.for_space(_space(), obj, technique=["PureRandom"], test_limit=60, seed=7,
                                         quiet=True, database=str(tmp_path / "r.db"))
    while (desired := manager.get_next_desired_result()) is not None:
        result = _measure(desired.configuration.data)
        manager.report_result(desired, result)
    run_id = manager.run.run_id
    manager.finish()
    db = ResultsDB(str(tmp_path / "r.db"))
    stored = export_run(db, run_id)
    rows = db.run_results(run_id)
    db.close()
    whole = [s for s in stored.snapshots if s.technique is None]
    flagged = sum(r.was_new_best for r in rows)
    best_time = [r.time for r in rows if r.state == "OK"]
    improvements = sum(1 for i, t in enumerate(best_time) if t < min(best_time[:i], default=math.inf))
    assert whole[-1].new_bests == flagged and flagged != improvements

"""``auto``, the default technique: its decisions on small spaces of each kind, its cost policy with
injected costs, hand-over at stagnation, persistence, and how the run reports its decisions."""
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tunerlib import MeasurementInterface, TuningOptions, TuningRun, tune_function
from tunerlib.script.api import TuningRunManager
from tunerlib.objectives import MinimizeAttribute
from tunerlib.parameters import (BooleanParameter, ConfigurationManipulator, EnumParameter, FloatParameter,
                                 IntegerParameter, PermutationParameter)
from tunerlib.result import Result
from tunerlib.techniques import DEFAULT_TECHNIQUE, Feedback, SearchContext, create_technique
from tunerlib.techniques.auto import AutoTechnique
from tunerlib.techniques.auto_cost import COST_FIRST, MEASURED_AFTER
from tunerlib.techniques.auto_rule import (BANDIT, BO, METRIC, MOBO, NSGA2, STRUCTURAL, WIDE, SpaceFacts,
                                          multi_objective_plan)

from kit import LIGHT_BO


def _light_build(name):
    return create_technique([LIGHT_BO if name == BO else name])


def _auto(manipulator, context, seed=0, **options):
    tech = AutoTechnique(build=_light_build, **options)
    tech.set_context(context)
    tech.bind(manipulator, random.Random(seed), "auto")
    return tech


def tour(items=10):
    return ConfigurationManipulator([PermutationParameter("tour", list(range(items)))])


def ordinals_with_constraints():
    m = ConfigurationManipulator([IntegerParameter(f"o{i}", 1, 8) for i in range(7)])
    m.add_constraint(lambda c: c["o0"] * c["o1"] <= 32, reads=["o0", "o1"])
    m.add_constraint(lambda c: c["o2"] >= c["o3"], reads=["o2", "o3"])
    return m


def floats(n=4):
    return ConfigurationManipulator([FloatParameter(f"x{i}", -5.0, 5.0) for i in range(n)])


def mixed():
    return ConfigurationManipulator([FloatParameter("x", 0.0, 1.0), IntegerParameter("n", 1, 64),
                                     EnumParameter("mode", ["a", "b", "c"]),
                                     PermutationParameter("order", [0, 1, 2])])


TESTS = lambda n: SearchContext(test_limit=n, budget_kind="tests")  # noqa: E731


def _feed(tech, cost, own=True, new_best=False, value=1.0, n=1):
    """``n`` results of the active member (or a seed) with measurement ``cost``."""
    for _ in range(n):
        proposal = tech.propose()
        requestor = proposal.requestor if own and proposal else "seed"
        config = proposal.config if proposal else tech.manipulator.random(random.Random(len(tech.decisions)))
        tech.observe(Feedback(config, tech.manipulator.hash_config(config), value, "ok", requestor, new_best,
                              cost=cost))


def test_default_technique_is_auto():
    assert DEFAULT_TECHNIQUE == "auto"
    assert isinstance(create_technique([]), AutoTechnique)


@pytest.mark.parametrize("space, context, member, then, words", [
    (tour, TESTS(3000), STRUCTURAL, None, ["a permutation of 10 items", "3000 evaluations"]),
    (lambda: tour(100), TESTS(3000), METRIC, None, ["a permutation of 100 items", "at least 10 per item"]),
    (lambda: tour(100), TESTS(999), STRUCTURAL, None, ["a permutation of 100 items", "999 evaluations"]),
    (lambda: tour(100), TESTS(1000), METRIC, None, ["a permutation of 100 items", "1000 evaluations"]),
    (lambda: tour(100), TESTS(9900), METRIC, None, ["a permutation of 100 items", "9900 evaluations"]),
    (lambda: tour(100), TESTS(10000), METRIC, None, ["a permutation of 100 items", "10000 evaluations"]),
    (lambda: tour(70), TESTS(3000), METRIC, None, ["a permutation of 70 items", "at least 10 per item"]),
    (lambda: tour(52), TESTS(3000), METRIC, None, ["a permutation of 52 items", "3000 evaluations"]),
    (lambda: tour(20), TESTS(200), METRIC, None, ["a permutation of 20 items", "200 evaluations"]),
    (lambda: tour(20), TESTS(199), STRUCTURAL, None, ["a permutation of 20 items", "199 evaluations"]),
    (lambda: tour(19), TESTS(3000), STRUCTURAL, None, ["a permutation of 19 items", "3000 evaluations"]),
    (lambda: tour(19), TESTS(300), STRUCTURAL, None, ["a permutation of 19 items", "300 evaluations"]),
    (lambda: tour(100), SearchContext(stop_after=60.0, budget_kind="time"), STRUCTURAL, None, ["no test limit"]),
    (ordinals_with_constraints, TESTS(60), BO, None, ["7 ordinal parameters", "2 known constraints", "60 evaluations"]),
    (floats, TESTS(1000), BO, BANDIT, ["4 float parameters", "1000 evaluations", "cost of a measurement"]),
    (mixed, TESTS(100), BO, None, ["2 categorical parameters", "1 float parameter", "1 ordinal parameter"]),
    (lambda: floats(40), TESTS(100), WIDE, None, ["40 float parameters", "more than 30 parameters"]),
    (lambda: floats(40), TESTS(1000), WIDE, BANDIT, ["40 float parameters", "1000 evaluations"]),
    (floats, SearchContext(stop_after=60.0, budget_kind="time"), BO, BANDIT, ["a deadline, no test limit"]),
    (floats, SearchContext(test_limit=1000, budget_kind="default"), BO, BANDIT, ["(the default cap)"]),
])
def test_first_decision_by_space_and_budget(space, context, member, then, words):
    """A long run's BO waits for the first measurements' cost: the bandit makes those suggestions."""
    tech = _auto(space(), context)
    assert tech.plan.first == member and tech.plan.then == then
    starts = BANDIT if then and member == BO else member
    assert tech.active == starts and [d["technique"] for d in tech.decisions] == [starts]
    assert (BO in tech.members) == (starts == BO)
    for word in words:
        assert word in tech.decisions[0]["reason"]


def test_feasible_size_is_counted_where_it_can_be():
    tech = _auto(ordinals_with_constraints(), TESTS(60))
    assert tech.facts.feasible is not None and 0 < tech.facts.feasible < 8 ** 7
    assert "feasible configurations" in tech.decisions[0]["reason"]


def test_a_table_space_counts_its_rows():
    """A space restricted to recorded rows (a TableConstraint over wide domains) is counted by its
    rows, though backtracking over the domains would exceed the node budget."""
    from tunerlib.parameters import TableConstraint
    from tunerlib.techniques.auto_rule import space_facts
    names = [f"p{i}" for i in range(6)]
    m = ConfigurationManipulator([IntegerParameter(n, 0, 99) for n in names])
    rng = random.Random(4)
    rows = {tuple(rng.randrange(100) for _ in names) for _ in range(500)}
    m.add_constraint(TableConstraint(names, [list(r) for r in rows]))
    facts = space_facts(m)
    assert facts.feasible == len(rows)
    assert f"{len(rows):,} feasible configurations" in facts.text()


def test_cheap_measurements_hand_a_long_run_to_the_cheap_bandit():
    tech = _auto(floats(), TESTS(2000))
    _feed(tech, cost=1e-5, n=COST_FIRST)
    assert tech.active == BANDIT and BO not in tech.members      # BO is never even built
    assert [d["technique"] for d in tech.decisions] == [BANDIT, BANDIT]
    assert tech.decisions[1]["evaluation"] == COST_FIRST and "CPU per suggestion" in tech.decisions[1]["reason"]


def test_expensive_measurements_keep_bo():
    tech = _auto(floats(), TESTS(2000))
    _feed(tech, cost=2.0, new_best=True, n=COST_FIRST + 3)
    assert tech.active == BO and [d["technique"] for d in tech.decisions] == [BANDIT, BO]
    assert "measurements of 2.00 s" in tech.decisions[1]["reason"]
    assert len(tech.members[BO]._results) == COST_FIRST + 3      # it saw the results made before it started


def test_a_short_budget_keeps_bo_whatever_the_cost():
    tech = _auto(floats(), TESTS(100))
    _feed(tech, cost=1e-6, new_best=True, n=COST_FIRST + 3)
    assert tech.active == BO


def test_unknown_costs_never_trigger_the_cost_policy():
    tech = _auto(floats(), TESTS(2000))
    _feed(tech, cost=math.nan, new_best=True, n=COST_FIRST + 3)
    assert tech.active == BO


def test_parallelism_divides_the_measurement_time_among_the_suggestions():
    serial = _auto(floats(), SearchContext(test_limit=2000, budget_kind="tests", parallelism=1))
    parallel = _auto(floats(), SearchContext(test_limit=2000, budget_kind="tests", parallelism=8))
    for tech in (serial, parallel):
        _feed(tech, cost=0.06, new_best=True, n=COST_FIRST)
    assert serial.active == BO and parallel.active == BANDIT


def test_cost_share_option_overrides_the_policy():
    tech = create_technique(["auto;cost_share,100.0"])
    assert isinstance(tech, AutoTechnique) and tech.cost_share == 100.0
    tech._build = _light_build
    tech.set_context(TESTS(2000))
    tech.bind(floats(), random.Random(0), tech.name)
    _feed(tech, cost=1e-3, new_best=True, n=COST_FIRST)
    assert tech.active == BO                  # 100 x 1 ms allows 0.1 s per suggestion


def test_measured_cpu_replaces_the_prior():
    tech = _auto(tour(), TESTS(3000))
    clock = iter(range(0, 10**6))
    tech.cpu_clock = lambda: 0.5 * next(clock)   # every proposal call "takes" 0.5 s
    assert tech.meter.cpu_per_suggestion(STRUCTURAL) < 0.01
    _feed(tech, cost=math.nan, n=MEASURED_AFTER)
    assert tech.meter.cpu_per_suggestion(STRUCTURAL) == pytest.approx(0.5)
    _feed(tech, cost=1e-4, n=COST_FIRST)
    assert tech.active == BANDIT and "0.50 s of CPU per suggestion" in tech.decisions[-1]["reason"]


def test_the_metric_embedding_of_a_long_tour_is_exempt_from_the_cost_policy():
    """Its random tours come first and its fits are costly, but the test limit bounds the whole run's
    search CPU: a cheap measurement does not hand it over, as it does StructuralSurrogate."""
    tech = _auto(tour(60), TESTS(1000))
    assert tech.active == METRIC
    clock = iter(range(0, 10**6))
    tech.cpu_clock = lambda: 0.5 * next(clock)
    _feed(tech, cost=1e-4, n=MEASURED_AFTER + COST_FIRST)
    assert tech.active == METRIC and [d["technique"] for d in tech.decisions] == [METRIC]


def test_a_long_run_hands_over_when_bo_stagnates():
    tech = _auto(floats(), TESTS(1000), patience=4)
    _feed(tech, cost=math.nan, new_best=True, n=COST_FIRST)
    assert tech.active == BO and "not known" in tech.decisions[-1]["reason"]
    _feed(tech, cost=math.nan, new_best=True)
    _feed(tech, cost=math.nan, n=3)
    assert tech.active == BO
    _feed(tech, cost=math.nan)
    assert tech.active == BANDIT and "no new best in its last 4 results" in tech.decisions[-1]["reason"]


def test_a_wide_space_hands_its_bandit_over_to_a_when_it_stagnates():
    """More than 30 parameters: G's arms (a GA and a TPE model) start; A takes over once they stall.
    G's results come from its arms (``auto/AUCBanditMetaTechniqueG/ga-base``): they count as its own."""
    tech = _auto(floats(40), TESTS(1000), patience=4)
    assert tech.active == WIDE and BO not in tech.members
    _feed(tech, cost=1e-5, new_best=True, n=COST_FIRST + 3)
    assert tech.active == WIDE
    _feed(tech, cost=1e-5, n=4)
    assert tech.active == BANDIT and "AUCBanditMetaTechniqueG found no new best in its last 4 results" in \
        tech.decisions[-1]["reason"]


def test_a_wide_space_with_a_short_budget_keeps_g_the_whole_run():
    tech = _auto(floats(40), TESTS(100), patience=4)
    _feed(tech, cost=1e-5, n=40)
    assert tech.active == WIDE and len(tech.decisions) == 1


@pytest.mark.parametrize("dims, limit, member", [(40, 60, WIDE), (3, 300, BANDIT)])
def test_the_member_that_runs_throughout_reproduces_its_own_run(dims, limit, member):
    """The member that starts draws from the run's stream: where it keeps the run (a wide space's G
    under a short budget; A after the cost policy refused BO on microsecond measurements), ``auto``
    makes the same measurements as ``--technique MEMBER`` under the same seed."""
    space = lambda: ConfigurationManipulator([FloatParameter(f"x{i}", -2.0, 2.0) for i in range(dims)])  # noqa: E731
    fn = lambda c: sum((c[f"x{i}"] - 0.5) ** 2 for i in range(dims))  # noqa: E731
    runs = [tune_function(space(), fn, test_limit=limit, seed=3, technique=technique,
                          measurement_cost=lambda c: 1e-6).values for technique in (["auto"], [member])]
    assert runs[0] == runs[1]


def test_state_round_trip_continues_the_decisions():
    tech = _auto(floats(), TESTS(2000))
    _feed(tech, cost=1e-5, n=COST_FIRST + 2)
    state = json.loads(json.dumps(tech.state_dict()))
    again = _auto(floats(), TESTS(2000))
    again.load_state_dict(state)
    assert again.active == BANDIT and again.decisions == tech.decisions and again.results == tech.results
    assert again.retired == [] and BO not in again.members


class _Store:
    def initial_techniques(self):
        return ["PureRandom", STRUCTURAL, BANDIT]


def test_the_store_ranking_picks_the_hand_over_member():
    tech = AutoTechnique(build=_light_build)
    tech.set_context(SearchContext(test_limit=1000, budget_kind="tests", store="store.db"))
    assert tech.uses_store
    tech.attach_recommender(_Store(), _light_build)
    tech.bind(floats(), random.Random(0), "auto")
    assert tech.plan.then == STRUCTURAL and "store ranks StructuralSurrogate first" in tech.decisions[0]["reason"]


def _space_fn():
    m = ordinals_with_constraints()
    return m, lambda c: sum((c[f"o{i}"] - 3) ** 2 for i in range(7))


def test_tune_function_reports_the_decisions_and_is_deterministic():
    runs = [tune_function(*_space_fn(), test_limit=600, seed=5 + (s == 2),
                          measurement_cost=lambda c: 1e-6) for s in range(3)]
    first = runs[0]
    decisions = first.summary.extra["technique_decisions"]
    assert [d["technique"] for d in decisions] == [BANDIT, BANDIT]
    assert runs[0].values == runs[1].values and runs[0].values != runs[2].values


def test_reported_measurement_cost_reaches_the_technique():
    manager = TuningRunManager.for_space(floats(), MinimizeAttribute("value"), test_limit=20, seed=1,
                                         database="memory://", quiet=True)
    desired = manager.get_next_desired_result()
    manager.report_result(desired, Result(extra={"value": 1.0}), cost=2.5)
    assert list(manager.run.technique.meter.costs) == [2.5]
    manager.finish()


class _Wide(MeasurementInterface):
    def manipulator(self):
        return ConfigurationManipulator([IntegerParameter("a", 0, 10 ** 6), IntegerParameter("b", 0, 3),
                                         BooleanParameter("c")])

    def objective(self):
        return MinimizeAttribute("v")

    def run(self, desired_result, input, limit):
        c = desired_result.configuration.data
        return Result(extra={"v": float(abs(c["a"] - 5000) + c["b"] + c["c"])})


def test_resume_continues_the_decisions(tmp_path):
    def opts(**kw):
        return TuningOptions(database=str(tmp_path / "r.db"), quiet=True, seed=2, **kw)
    first = TuningRun(_Wide(opts(test_limit=300)), opts(test_limit=300))
    decisions = first.run().extra["technique_decisions"]
    assert decisions[0]["technique"] == BANDIT and "300 evaluations" in decisions[0]["reason"]
    # the serial loop records each measurement's cost, which reaches the technique (Feedback.cost)
    assert decisions[1]["evaluation"] == COST_FIRST and "measurements of" in decisions[1]["reason"]
    saved = first.db.load_technique_state(first.run_id, "auto")["state"]
    assert saved["decisions"] == decisions
    from tunerlib.report.data import load_runs
    from tunerlib.report.render import _facts
    from tunerlib.report.summary import summarize
    first.db.close()
    run = load_runs(str(tmp_path / "r.db"))[0]
    assert run.decisions == decisions                       # what tunerlib report shows
    facts = [v for k, v in _facts(summarize(run)) if k == "technique decision"]
    assert facts[0] == f"at evaluation 0: {BANDIT} -- {decisions[0]['reason']}"
    resumed = opts(test_limit=320, resume=True)
    summary = TuningRun(_Wide(resumed), resumed).run()
    assert summary.tests == 320 and summary.technique == "auto"
    # the same members at the same evaluations (the first reason names the resumed run's test limit)
    again = summary.extra["technique_decisions"]
    assert [(d["evaluation"], d["technique"]) for d in again] == [(d["evaluation"], d["technique"]) for d in decisions]
    assert again[1:] == decisions[1:] and "320 evaluations" in again[0]["reason"]


def test_the_cli_prints_the_decision_and_the_summary_json_keeps_it(tmp_path):
    script = Path(__file__).parents[2] / "examples" / "rosenbrock" / "rosenbrock_tuner.py"
    out = tmp_path / "s.json"
    proc = subprocess.run([sys.executable, str(script), "--test-limit", "12", "--seed", "1", "--database",
                           str(tmp_path / "r.db"), "--summary-json", str(out)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "tunerlib: auto: BayesianOptimization -- 4 float parameters, 12 evaluations" in proc.stderr
    decisions = json.loads(out.read_text())["extra"]["technique_decisions"]
    assert decisions == [{"evaluation": 0, "technique": BO, "reason": "4 float parameters, 12 evaluations"}]


def test_a_model_that_wins_per_evaluation_keeps_its_turn_despite_its_cost():
    tech = _auto(tour(), TESTS(3000))
    clock = iter(range(0, 10**6))
    tech.cpu_clock = lambda: 0.5 * next(clock)
    member = tech.members[STRUCTURAL]
    member.model_record = lambda: 0.9            # its model finds new bests more often than its fallback
    _feed(tech, cost=math.nan, n=MEASURED_AFTER)
    _feed(tech, cost=1e-4, n=COST_FIRST)
    assert tech.active == STRUCTURAL
    member.model_record = lambda: 0.3
    _feed(tech, cost=1e-4, n=25)
    assert tech.active == BANDIT


@pytest.mark.parametrize("facts, limit, kind, member", [
    (SpaceFacts({"ordinal": 4}, 0, 4, 0, 3000.0), 60, "tests", MOBO),
    (SpaceFacts({"ordinal": 4}, 0, 4, 0, 3000.0), 1000, "tests", NSGA2),
    (SpaceFacts({"ordinal": 4}, 0, 4, 0, 3000.0), None, "time", NSGA2),
    (SpaceFacts({"ordinal": 40}, 0, 40, 0, None), 100, "tests", MOBO),
    (SpaceFacts({"ordinal": 40}, 0, 40, 0, None), 1000, "tests", NSGA2),
    (SpaceFacts({"float": 61}, 0, 61, 0, None), 60, "tests", NSGA2),
    (SpaceFacts({}, 30, 1, 0, None), 60, "tests", NSGA2),
])
def test_several_objectives_pick_model_based_search_for_short_budgets(facts, limit, kind, member):
    chosen = multi_objective_plan(facts, limit, kind, 2, short_budget=200)
    assert (chosen.first, chosen.then) == (member, None)
    assert "2 objectives" in chosen.reason


_IMPORTS_OF_A_RUN = """
import sys
from tunerlib import tune_function
from tunerlib.parameters import ConfigurationManipulator, FloatParameter, PermutationParameter
space = {space}
tune_function(space, lambda c: 1.0, test_limit={limit}, seed=1, measurement_cost=lambda c: 1e-6)
print("scipy" in sys.modules)
"""


@pytest.mark.parametrize("space, limit, loads", [
    ("ConfigurationManipulator([FloatParameter(f'x{i}', -5.0, 5.0) for i in range(4)])", 300, False),
    ("ConfigurationManipulator([PermutationParameter('t', list(range(12)))])", 10, True)])
def test_only_a_run_that_needs_the_structural_members_loads_scipy(space, limit, loads):
    """A float space's long run holds the bandit (the cost policy refuses BO): loading SciPy there would
    only give a full garbage collection its objects to scan during the run."""
    code = _IMPORTS_OF_A_RUN.format(space=space, limit=limit)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip().splitlines()[-1] == str(loads)

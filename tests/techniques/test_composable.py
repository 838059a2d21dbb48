"""Composable evolutionary techniques: operator maps, the two technique bases, named techniques."""
import math
import random
import statistics

import pytest

from tunerlib import tune_function
from tunerlib.parameters import (BooleanArray, BooleanParameter, ConfigurationManipulator, EnumParameter,
                                 FloatArray, FloatParameter, IntegerArray, IntegerParameter,
                                 LogFloatParameter, LogIntegerParameter, OrdinalParameter,
                                 PermutationParameter, PowerOfTwoParameter, ScheduleParameter,
                                 SelectorParameter, SwitchParameter)
from tunerlib.techniques import Feedback, TechniqueError, Catalogue, registry
from tunerlib.techniques.composable_presets import NAMED, register
from tunerlib.techniques.composable import ComposableEvolutionaryTechnique
from tunerlib.techniques.composable_bases import GreedyComposableTechnique, RandomThreeParentsComposableTechnique
from tunerlib.techniques.operator_map import OperatorChoice, OperatorMap, kind_of

# ---------------------------------------------------------------- spaces and objectives
_rng = random.Random(42)
CITIES = [(_rng.random(), _rng.random()) for _ in range(12)]


def tour_length(cfg):
    t = cfg["tour"]
    return sum(math.dist(CITIES[t[i]], CITIES[t[i - 1]]) for i in range(len(t)))


def tsp_space():
    return ConfigurationManipulator([PermutationParameter("tour", list(range(12)))]), tour_length


def rosenbrock_space():
    def rosen(cfg):
        x = [cfg[f"x{i}"] for i in range(3)] + [float(cfg["n"])]
        return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(3))
    return ConfigurationManipulator([FloatParameter(f"x{i}", -3.0, 3.0) for i in range(3)]
                                    + [IntegerParameter("n", -3, 3)]), rosen


def mixed_space():
    m = ConfigurationManipulator([
        IntegerParameter("i", 0, 100), FloatParameter("f", -1.0, 1.0), LogFloatParameter("lf", 1e-4, 1.0),
        LogIntegerParameter("li", 1, 1000), PowerOfTwoParameter("p2", 1, 1024),
        EnumParameter("e", ["a", "b", "c"]), BooleanParameter("b"), OrdinalParameter("o", [1, 2, 4, 8]),
        SwitchParameter("s", 4), SelectorParameter("sel", ["u", "v", "w"], 100),
        PermutationParameter("perm", list(range(5))), ScheduleParameter("sch", ["x", "y", "z"], {"z": ["x"]}),
        IntegerArray("ia", 3, 0, 9), BooleanArray("ba", 3), FloatArray("fa", 2, 0.0, 1.0)])

    def cost(cfg):
        inv = sum(1 for a in range(5) for b in range(a + 1, 5) if cfg["perm"][a] > cfg["perm"][b])
        return ((cfg["i"] - 37) ** 2 / 100 + cfg["f"] ** 2 + abs(math.log10(cfg["lf"]) + 2) + cfg["li"] / 1000
                + abs(math.log2(cfg["p2"]) - 5) + (cfg["e"] != "b") + cfg["b"] + cfg["o"] / 8 + cfg["s"]
                + inv + sum(cfg["ia"]) / 9 + sum(cfg["ba"]) + sum(cfg["fa"]) + cfg["sch"].index("z"))
    return m, cost


def constrained_space():
    m = ConfigurationManipulator([IntegerParameter("a", 1, 64), IntegerParameter("b", 1, 64),
                                  PowerOfTwoParameter("ls", 1, 64), PowerOfTwoParameter("gs", 1, 256),
                                  EnumParameter("mode", ["x", "y"]),
                                  PermutationParameter("order", list(range(4)))])
    m.add_constraint("a < b")
    m.add_constraint("gs % ls == 0 and ls * a <= 256")
    m.add_constraint(lambda c: c["mode"] == "x" or c["b"] > 8, reads=["mode", "b"], name="mode-y-needs-b")

    def cost(cfg):
        assert m.is_feasible(cfg), "infeasible configuration measured"
        return abs(cfg["a"] - 20) + abs(cfg["b"] - 21) + abs(math.log2(cfg["ls"]) - 3) + (cfg["mode"] == "y")
    return m, cost


SPACES = {"permutation": tsp_space, "numeric": rosenbrock_space, "mixed": mixed_space,
          "constrained": constrained_space}


# ---------------------------------------------------------------- helpers
def named_key(name):
    """Register a recording wrapper of the named factory in the global registry (once)."""
    key = f"TestComposable_{name}"
    if key not in registry():
        factory = NAMED[name][0]

        def make():
            tech = factory()
            original = tech.propose

            def propose():
                prop = original()
                if prop is not None:
                    PROPOSED.setdefault(key, []).append(prop.config)
                return prop
            tech.propose = propose
            return tech
        from tunerlib.techniques import register as global_register
        global_register(key, make, NAMED[name][1])
    return key


PROPOSED = {}


def drive(tech, m, fn, n, seed=0):
    """bind + n propose/observe rounds with immediate feedback; returns the proposals."""
    tech.bind(m, random.Random(seed), tech.name)
    out, best = [], math.inf
    for _ in range(n):
        prop = tech.propose()
        assert prop is not None
        out.append(prop.config)
        value = fn(prop.config)
        tech.observe(Feedback(prop.config, m.hash_valid(prop.config), value, "ok", prop.requestor, value < best))
        best = min(best, value)
    return out


def feed(tech, cfg, value):
    m = tech.manipulator
    tech.observe(Feedback(cfg, m.hash_config(cfg), value, "ok" if math.isfinite(value) else "error",
                          tech.path, False))


def int_space(n=3):
    return ConfigurationManipulator([IntegerParameter(f"x{i}", 0, 1000) for i in range(n)])


# ---------------------------------------------------------------- operator maps
class TwoParents(ComposableEvolutionaryTechnique):
    """A test base guaranteeing only the primary parent plus one."""

    def minimum_number_of_parents(self):
        return 2

    def get_parents(self, population):
        return [population[0], self.global_best()]

    def update_population(self, child, population):
        pass


def test_operator_needing_more_parents_than_the_base_guarantees_is_rejected_at_construction():
    with pytest.raises(TechniqueError, match="guarantees 2 parent.*op3_cross_OX1 needs 3") as info:
        TwoParents(operator_map={"permutation": "op3_cross_OX1"})
    assert "\n" not in str(info.value)
    with pytest.raises(TechniqueError, match="needs 4"):
        TwoParents(operator_map={"float": OperatorChoice("op4_set_linear", (1.0, 0.5, -0.5))})
    TwoParents(operator_map={"permutation": "op2_random_invert", "float": "opn_stochastic_mix"})
    GreedyComposableTechnique(operator_map={"float": "op4_set_linear"})  # the bases guarantee 4


@pytest.mark.parametrize("entries, message", [
    ({"int": "op3_cross_OX1"}, "has no operator 'op3_cross_OX1'"),
    ({"nosuchkind": "op1_nop"}, "unknown parameter kind 'nosuchkind'"),
    ({"int": OperatorChoice("op1_scale", (), {"q": 1})}, "has no hyper-parameter 'q'"),
    ({"int": OperatorChoice("op1_scale", (2.0, 3.0))}, "at most 1 positional"),
    ({"int": OperatorChoice("op1_scale", (2.0,), {"k": 2.0})}, "both positionally and by keyword"),
    ({"float": OperatorChoice("op3_swarm", (), {"velocity": 1.0})}, "velocity' is technique state"),
    ({"float": 3}, "must be an OperatorChoice"),
])
def test_bad_operator_maps_are_rejected_with_one_line_errors(entries, message):
    with pytest.raises(TechniqueError, match=message) as info:
        OperatorMap(entries)
    assert "\n" not in str(info.value)


def test_non_json_operator_values_are_rejected():
    with pytest.raises(TechniqueError, match="not a JSON"):
        OperatorChoice("op1_scale", (), {"k": math.nan})
    with pytest.raises(TechniqueError, match="identifier"):
        OperatorChoice("op 1")


def test_lookup_walks_the_mro_and_own_kind_wins():
    op_map = OperatorMap({IntegerParameter: "op1_normal_mutation", "pow2": "op1_randomize",
                          "permutation": "op3_cross_PMX"})
    assert list(op_map) == ["int", "permutation", "pow2"]
    assert op_map.lookup(LogIntegerParameter("a", 1, 9)).op == "op1_normal_mutation"
    assert op_map.lookup(PowerOfTwoParameter("b", 1, 8)).op == "op1_randomize"
    assert op_map.lookup(ScheduleParameter("c", [1, 2])).op == "op3_cross_PMX"
    assert op_map.lookup(FloatParameter("d", 0, 1)) is None
    assert kind_of(LogFloatParameter("e", 1, 2)) == "log_float"


def test_positional_args_bind_to_hyper_parameters_in_order():
    spec = FloatParameter.operators()["op4_set_linear"]
    assert OperatorChoice("op4_set_linear", (1.0, 0.3, -0.3)).bound_kwargs(spec) == {"a": 1.0, "b": 0.3, "c": -0.3}


def test_bad_operator_hyper_parameter_values_are_reported_at_bind():
    m, _ = tsp_space()
    tech = GreedyComposableTechnique(operator_map={"permutation": OperatorChoice("op3_cross", (), {"xchoice": "bogus"})})
    with pytest.raises(TechniqueError, match="op3_cross fails on parameter 'tour'"):
        tech.bind(m, random.Random(0))


# ---------------------------------------------------------------- the technique bases
def test_initial_population_then_children_with_several_requests_in_flight():
    m = int_space()
    tech = GreedyComposableTechnique(population_size=5)
    tech.bind(m, random.Random(1), "g")
    init = [tech.propose().config for _ in range(5)]
    assert tech.propose() is None                     # nothing evaluated yet: wait, never block
    feed(tech, init[3], 10.0)                         # results may arrive out of order
    kids = [tech.propose().config for _ in range(3)]  # several children in flight at once
    assert all(k is not None for k in kids) and len(tech.population) == 1
    for i, v in ((0, 5.0), (1, 4.0), (2, 3.0), (4, 2.0)):
        feed(tech, init[i], v)
    assert sorted(mb.value for mb in tech.population) == [2.0, 3.0, 4.0, 5.0, 10.0]
    keys = {m.hash_config(c) for c in init}
    assert not keys & {m.hash_config(k) for k in kids}  # never re-proposes a known configuration


def _greedy_with_population(values):
    m = int_space()
    tech = GreedyComposableTechnique(population_size=len(values), crossover_rate=0.5)
    tech.bind(m, random.Random(3), "g")
    for v in values:
        feed(tech, tech.propose().config, v)
    return tech


def test_greedy_cycles_members_and_pairs_each_with_the_global_best():
    tech = _greedy_with_population([5.0, 1.0, 7.0])
    pop = tech.population
    for i in range(6):
        parents = tech.get_parents(pop)
        assert parents[0] is pop[i % 3] and parents[2] is pop[i % 3]
        assert parents[1].config == pop[1].config and parents[1].transient  # the best (value 1.0)
        assert tech.get_parents(pop)[0] is pop[i % 3]  # retries keep the member
        tech.child_proposed(parents[0])


def test_greedy_replaces_a_member_only_when_the_child_is_better():
    tech = _greedy_with_population([5.0, 6.0, 7.0])
    before = [(dict(mb.config), mb.value) for mb in tech.population]
    worse = tech.propose().config                       # primary: member 0 (value 5)
    feed(tech, worse, 5.0)                              # equal is not better
    assert [(mb.config, mb.value) for mb in tech.population] == before
    better = tech.propose().config                      # primary: member 1 (value 6)
    feed(tech, better, 0.5)
    after = [(mb.config, mb.value) for mb in tech.population]
    assert after[1] == (better, 0.5) and after[0] == before[0] and after[2] == before[2]


def test_crossover_rate_selects_parameters_with_at_least_one():
    m = int_space(10)
    for rate, lo, hi in ((0.0, 1, 1), (1.0, 10, 10), (0.5, 4.0, 6.0)):
        tech = GreedyComposableTechnique(crossover_rate=rate)
        tech.bind(m, random.Random(0), "g")
        counts = [len(tech.select_parameters(m.parameters)) for _ in range(400)]
        assert min(counts) >= 1 and lo <= statistics.mean(counts) <= hi


def _random3_with_population(values, **kw):
    m = int_space()
    tech = RandomThreeParentsComposableTechnique(population_size=len(values), **kw)
    tech.bind(m, random.Random(4), "r")
    for v in values:
        feed(tech, tech.propose().config, v)
    return tech


def test_random_three_uses_the_oldest_member_as_primary_and_three_others():
    tech = _random3_with_population([3.0, 9.0, 1.0, 4.0, 8.0], best_probability=0.0)
    pop = tech.population
    for _ in range(10):
        oldest = min(pop, key=lambda mb: mb.age)
        parents = tech.get_parents(pop)
        assert parents[0] is oldest
        tech.child_proposed(oldest)
        assert oldest.age == max(mb.age for mb in pop)  # touched: youngest now
        assert len(parents) == 4 and all(p is not oldest and not p.transient for p in parents[1:])
        assert len({id(p) for p in parents[1:]}) == 3


def test_random_three_includes_the_global_best_with_its_probability():
    always = _random3_with_population([3.0, 9.0, 1.0, 4.0, 8.0], best_probability=1.0)
    assert all(sum(p.transient for p in always.get_parents(always.population)) == 1 for _ in range(20))
    some = _random3_with_population([3.0, 9.0, 1.0, 4.0, 8.0], best_probability=0.2)
    share = statistics.mean(any(p.transient for p in some.get_parents(some.population)) for _ in range(1000))
    assert 0.15 < share < 0.25


def test_random_three_replaces_the_oldest_member_when_the_child_is_better():
    tech = _random3_with_population([3.0, 9.0, 1.0, 4.0, 8.0])
    pop = tech.population
    oldest = min(pop, key=lambda mb: mb.age)
    child = tech.propose().config
    feed(tech, child, 0.1)
    assert oldest.config == child and oldest.value == 0.1
    nxt = min(pop, key=lambda mb: mb.age)
    snapshot = [(dict(mb.config), mb.value) for mb in pop]
    feed(tech, tech.propose().config, 100.0)  # worse: the oldest keeps its configuration
    assert [(mb.config, mb.value) for mb in pop] == snapshot and nxt.age == max(mb.age for mb in pop)


def test_swarm_operators_keep_a_velocity_per_member():
    m = ConfigurationManipulator([FloatParameter("x", -1.0, 1.0), FloatArray("v", 3, 0.0, 1.0)])
    tech = GreedyComposableTechnique(population_size=4, crossover_rate=1.0, operator_map={
        "float": OperatorChoice("op3_swarm", (), {"c": 0.7}), "float_array": "op3_swarm_parallel"})
    drive(tech, m, lambda c: c["x"] ** 2 + sum(c["v"]), 40)
    velocities = [mb.velocity for mb in tech.population]
    assert all(isinstance(v["x"], float) and len(v["v"]) == 3 for v in velocities)
    assert any(v["x"] != 0.0 for v in velocities)


def test_equality_follows_class_hyper_parameters_and_operator_map():
    a = GreedyComposableTechnique(operator_map={"int": "op1_randomize"}, crossover_rate=0.5)
    b = GreedyComposableTechnique(operator_map={"int": OperatorChoice("op1_randomize")}, crossover_rate=0.5)
    assert a == b and hash(a) == hash(b) and a.name == b.name
    assert a != GreedyComposableTechnique(operator_map={"int": "op1_randomize"}, crossover_rate=0.4)
    assert a != GreedyComposableTechnique(operator_map={"int": "op1_scale"}, crossover_rate=0.5)
    assert GreedyComposableTechnique() != RandomThreeParentsComposableTechnique()


def test_bad_hyper_parameters_are_rejected():
    for kw, msg in (({"population_size": 0}, "out of range"), ({"population_size": 2.5}, "integer"),
                    ({"crossover_rate": True}, "number"), ({"mutation": 1}, "has no option .mutation.")):
        with pytest.raises(TechniqueError, match=msg):
            GreedyComposableTechnique(**kw)


def test_named_techniques_register_into_a_fresh_registry():
    reg = Catalogue()
    register(reg)
    assert {"ComposableDiffEvolution", "ComposableDiffEvolutionCX"} <= set(reg)
    a, b = reg.create("ComposableDiffEvolutionCX"), reg.create("ComposableDiffEvolutionCX")
    assert a is not b and a == b
    assert a.operator_map["permutation"].kwargs == {"xchoice": "op3_cross_CX"}
    assert all(desc for _, desc in reg.describe())


# ---------------------------------------------------------------- full runs through the driver
@pytest.mark.parametrize("space", sorted(SPACES))
@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_technique_runs_legal_feasible_and_deterministic(name, space):
    key = named_key(name)
    m, fn = SPACES[space]()
    PROPOSED[key] = []
    run = tune_function(m, fn, test_limit=200, technique=[key], seed=11)
    proposed = PROPOSED[key]
    assert len(run.values) == 200 and all(math.isfinite(v) for v in run.values)
    for cfg in proposed:
        m.validate(cfg)
        assert m.is_feasible(cfg)
    again = tune_function(SPACES[space]()[0], fn, test_limit=200, technique=[key], seed=11)
    assert again.values == run.values


def test_composable_beats_pure_random_on_a_12_city_tour():
    m, fn = tsp_space()
    seeds = range(4)

    def mean_best(name):
        return statistics.mean(tune_function(tsp_space()[0], fn, test_limit=300, technique=[name],
                                             seed=s).best_at(300) for s in seeds)
    rand = mean_best("PureRandom")
    for name in ("ComposableGreedyOX1Swarm", "ComposableDiffEvolutionPMX"):
        assert mean_best(named_key(name)) < 0.9 * rand, name


def test_direct_drive_on_constrained_space_only_proposes_feasible_configs():
    m, fn = constrained_space()
    for factory, _ in NAMED.values():
        for cfg in drive(factory(), m, fn, 250, seed=2):
            m.validate(cfg)
            assert m.is_feasible(cfg)


def test_space_without_mapped_kinds_and_nop_map_falls_back_to_random():
    m = ConfigurationManipulator([BooleanParameter("a"), EnumParameter("e", [1, 2, 3])])
    tech = TwoParents(operator_map={"bool": "op1_nop", "enum": "op1_nop"})
    got = drive(tech, m, lambda c: 0.0, 60)  # children always equal their parent: random fallback
    assert len(got) == 60 and all(m.is_valid(c) for c in got)

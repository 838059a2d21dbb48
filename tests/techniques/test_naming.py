"""Generated technique names: round trips, the grammar's errors, random composable techniques."""
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunerlib.parameters import (BooleanArray, BooleanParameter, ConfigurationManipulator, EnumParameter,
                                 FloatArray, FloatParameter, IntegerParameter, LogFloatParameter,
                                 OrdinalParameter, PermutationParameter, PowerOfTwoParameter,
                                 ScheduleParameter)
from tunerlib.techniques import Feedback, PureRandom, TechniqueError, Catalogue
from tunerlib.techniques.composable_presets import NAMED, register
from tunerlib.techniques.composable_bases import (TECHNIQUE_BASES, GreedyComposableTechnique,
                                                  RandomThreeParentsComposableTechnique)
from tunerlib.techniques.naming import (is_generated_name, parse_name, random_composable, resolve,
                                        technique_from_name, technique_name)
from tunerlib.techniques.operator_map import OperatorChoice, required_parents

ALL_KINDS = ["bool", "bool_array", "enum", "float", "float_array", "int", "int_array", "log_float",
             "log_int", "ordinal", "permutation", "pow2", "schedule", "selector", "switch"]
GREEDY = "GreedyComposableTechnique"


def assert_round_trip(tech):
    name = technique_name(tech)
    back = technique_from_name(name)
    assert back == tech and type(back) is type(tech)
    assert back.option_values() == tech.option_values() and back.operator_map == tech.operator_map
    assert technique_name(back) == name
    assert not any(c.isspace() for c in name)
    return name


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2 ** 32), kinds=st.sets(st.sampled_from(ALL_KINDS), min_size=1))
def test_random_composable_round_trips(seed, kinds):
    tech = random_composable(random.Random(seed), kinds)
    assert set(tech.operator_map) == kinds
    assert_round_trip(tech)


_json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 20, 10 ** 20),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
_json = st.recursive(_json_scalar, lambda inner: st.lists(inner, max_size=3), max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(xchoice=st.text(max_size=15), strength=st.floats(allow_nan=False, allow_infinity=False),
       args=st.lists(_json, max_size=3), weights=_json, pop=st.integers(1, 500),
       rate=st.floats(0.0, 1.0), base=st.sampled_from(sorted(TECHNIQUE_BASES)))
def test_hand_built_maps_with_awkward_values_round_trip(xchoice, strength, args, weights, pop, rate, base):
    """Strings holding ; | [ ] " or spaces, -0.0, huge ints and nested lists survive the name."""
    op_map = {"permutation": OperatorChoice("op3_cross", (), {"xchoice": xchoice, "strength": strength}),
              "float": OperatorChoice("op4_set_linear", tuple(args), {"weights": weights}),
              "bool": OperatorChoice("op1_flip")}
    tech = TECHNIQUE_BASES[base](operator_map=op_map, population_size=pop, crossover_rate=rate)
    assert_round_trip(tech)


def test_named_techniques_round_trip_and_resolve():
    reg = Catalogue()
    register(reg)
    for name in NAMED:
        tech = reg.create(name)
        generated = assert_round_trip(tech)
        fresh = resolve(generated)
        assert fresh == tech and fresh is not resolve(generated)
        assert fresh.name == fresh.path == generated


def test_grammar_example_and_canonical_order():
    tech = GreedyComposableTechnique(crossover_rate=0.5, population_size=30, operator_map={
        "permutation": OperatorChoice("op3_cross_OX1", (), {"strength": 0.3}),
        "float": OperatorChoice("op3_swarm", (), {"c1": 1.5, "c": 0.6})})
    assert technique_name(tech) == ('GreedyComposableTechnique;crossover_rate,0.5;population_size,30'
                                    '|float;op3_swarm;[[["c",0.6],["c1",1.5]]]'
                                    '|permutation;op3_cross_OX1;[[["strength",0.3]]]')
    de = RandomThreeParentsComposableTechnique(operator_map={"int": OperatorChoice("op4_set_linear", (1, 0.5, -0.5))})
    assert technique_name(de).endswith("|int;op4_set_linear;[1,0.5,-0.5,[]]")
    assert_round_trip(de)


def test_lenient_input_is_canonicalised():
    loose = ('GreedyComposableTechnique;population_size,12;crossover_rate,1 '
             'permutation;op3_cross_PMX;[[]]  int;op1_scale;[[ ["k", 2] ]]')
    tech = technique_from_name(loose)
    assert tech.population_size == 12 and tech.crossover_rate == 1.0
    assert tech.operator_map["int"].kwargs == {"k": 2}
    assert technique_name(tech) == ('GreedyComposableTechnique;crossover_rate,1.0;population_size,12'
                                    '|int;op1_scale;[[["k",2]]]|permutation;op3_cross_PMX;[[]]')
    assert technique_from_name(GREEDY) == GreedyComposableTechnique()  # defaults fill omissions


@pytest.mark.parametrize("name, message", [
    ("", "character 0 .*expected a technique base name"),
    ("Nope;x,1", "character 0 .*unknown technique base 'Nope'"),
    (GREEDY + ";", "character 26 .*expected a hyper-parameter name"),
    (GREEDY + ";crossover_rate", "character 40 .*expected ',' after hyper-parameter name"),
    (GREEDY + ";crossover_rate,", "character 41 .*not a JSON value"),
    (GREEDY + ";crossover_rate,abc", "character 41 .*not a JSON value"),
    (GREEDY + ";crossover_rate,NaN", "character 41 .*NaN is not allowed"),
    (GREEDY + ';crossover_rate,{"a":1}', "character 41 .*must be a number"),
    (GREEDY + ";crossover_rate,1.5", "character 26 .*out of range"),
    (GREEDY + ";population_size,3.0", "character 26 .*must be an integer"),
    (GREEDY + ";mutation_rate,0.1", "character 26 .*no hyper-parameter 'mutation_rate'"),
    (GREEDY + ";crossover_rate,0.1;crossover_rate,0.2", "character 45 .*given twice"),
    (GREEDY + "#int;op1_nop;[[]]", "character 25 .*unexpected character"),
    (GREEDY + "|", "character 26 .*expected a parameter kind"),
    (GREEDY + "|int", "character 29 .*expected ';' after parameter kind"),
    (GREEDY + "|int;", "character 30 .*expected an operator name"),
    (GREEDY + "|int;op1_nop", "character 37 .*expected ';' after operator"),
    (GREEDY + "|int;op1_nop;", "character 38 .*not a JSON value"),
    (GREEDY + "|int;op1_nop;[]", "character 38 .*must be a list ending in a list of pairs"),
    (GREEDY + "|int;op1_nop;[1]", "character 38 .*must be a list ending in a list of pairs"),
    (GREEDY + '|int;op1_scale;[[["k"]]]', 'character 40 .*is not a \\["name",value\\] pair'),
    (GREEDY + '|int;op1_scale;[[["k",1],["k",2]]]', "character 40 .*given twice"),
    (GREEDY + "|int;op9;[[]]", "character 26 .*has no operator 'op9'"),
    (GREEDY + "|zz;op1_nop;[[]]", "character 26 .*unknown parameter kind 'zz'"),
    (GREEDY + '|int;op1_scale;[[["q",1]]]', "character 26 .*has no hyper-parameter 'q'"),
    (GREEDY + '|float;op3_swarm;[[["velocity",1]]]', "character 26 .*technique state"),
    (GREEDY + "|int;op1_nop;[[]]|int;op1_flip;[[]]", "character 43 .*two entries"),
    (GREEDY + "|int;op1_nop;[[]]x", "character 42 .*unexpected character"),
])
def test_malformed_names_give_one_line_errors_with_position(name, message):
    with pytest.raises(TechniqueError, match=message) as info:
        technique_from_name(name)
    text = str(info.value)
    assert "\n" not in text and text.startswith("bad technique name")


def test_arity_beyond_the_base_is_a_name_error_too():
    from tunerlib.techniques.composable_bases import TECHNIQUE_BASES as bases

    class OneParent(GreedyComposableTechnique):
        def minimum_number_of_parents(self):
            return 2

    bases["OneParent"] = OneParent
    try:
        with pytest.raises(TechniqueError, match="character 10 .*needs 3"):
            technique_from_name("OneParent|permutation;op3_cross_OX1;[[]]")
        assert technique_from_name("OneParent|permutation;op2_random_swap;[[]]").minimum_number_of_parents() == 2
    finally:
        del bases["OneParent"]


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2 ** 32), edits=st.lists(st.tuples(st.integers(0, 10 ** 6), st.sampled_from(
    ["", ";", ",", "|", " ", "[", "]", '"', "x", "1", "-", "e", "{"])), min_size=1, max_size=4))
def test_corrupted_names_parse_or_fail_with_technique_error(seed, edits):
    name = technique_name(random_composable(random.Random(seed), ["int", "permutation", "bool"]))
    for pos, text in edits:
        pos %= len(name) + 1
        name = name[:pos] + text + name[pos + (text == ""):]
    try:
        tech = technique_from_name(name)
    except TechniqueError as exc:
        assert "\n" not in str(exc)
    else:
        assert technique_from_name(technique_name(tech)) == tech


def test_parse_name_and_is_generated_name():
    root, hparams, entries = parse_name(GREEDY + ";crossover_rate,0.25|bool;op1_flip;[[]]")
    assert root == GREEDY and hparams == {"crossover_rate": 0.25} and entries == {"bool": OperatorChoice("op1_flip")}
    assert is_generated_name(GREEDY) and is_generated_name(GREEDY + "|bool;op1_flip;[[]]")
    assert not is_generated_name("PureRandom") and not is_generated_name("GreedyComposableTechniqueX")
    assert technique_name(PureRandom("PureRandom")) == "PureRandom"


def mixed_space():
    m = ConfigurationManipulator([
        IntegerParameter("i", 0, 50), FloatParameter("f", -1.0, 1.0), LogFloatParameter("lf", 1e-3, 1.0),
        PowerOfTwoParameter("p", 1, 64), EnumParameter("e", ["a", "b"]), BooleanParameter("b"),
        OrdinalParameter("o", [1, 3, 9]), PermutationParameter("perm", list(range(6))),
        ScheduleParameter("s", [1, 2, 3], {3: [1]}), BooleanArray("ba", 4), FloatArray("fa", 2, 0.0, 1.0)])
    m.add_constraint("i >= 10 or e == 'a'")
    return m


def test_random_composable_covers_the_kinds_of_a_space_within_documented_ranges():
    m = mixed_space()
    kinds = {"int", "float", "log_float", "pow2", "enum", "bool", "ordinal", "permutation", "schedule",
             "bool_array", "float_array"}
    bases = set()
    for seed in range(40):
        tech = random_composable(random.Random(seed), m)
        bases.add(type(tech).__name__)
        assert set(tech.operator_map) == kinds
        hp = tech.option_values()
        assert 10 <= hp["population_size"] <= 50 and 0.1 <= hp["crossover_rate"] <= 1.0
        assert 0.0 <= hp.get("best_probability", 0.0) <= 0.5
        for kind, choice in tech.operator_map.items():
            assert choice.op != "op1_nop"
            spec = type(m.parameter({"int": "i", "float": "f", "log_float": "lf", "pow2": "p", "enum": "e",
                                     "bool": "b", "ordinal": "o", "permutation": "perm", "schedule": "s",
                                     "bool_array": "ba", "float_array": "fa"}[kind])).operators()[choice.op]
            assert required_parents(spec) <= tech.minimum_number_of_parents()
            for key in ("strength", "sigma", "p"):
                if key in choice.kwargs:
                    assert 0.0 < choice.kwargs[key] <= 0.7
    assert bases == {"GreedyComposableTechnique", "RandomThreeParentsComposableTechnique"}
    assert technique_name(random_composable(random.Random(7), m)) == technique_name(random_composable(random.Random(7), m))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 32))
def test_random_composable_techniques_run_legally_on_a_mixed_constrained_space(seed):
    m = mixed_space()
    tech = resolve(technique_name(random_composable(random.Random(seed), m)))
    tech.bind(m, random.Random(seed), tech.name)
    best = math.inf
    for _ in range(100):
        prop = tech.propose()
        assert prop is not None
        m.validate(prop.config)
        assert m.is_feasible(prop.config)
        value = prop.config["i"] + prop.config["f"] + sum(prop.config["fa"])
        tech.observe(Feedback(prop.config, m.hash_valid(prop.config), value, "ok", prop.requestor, value < best))
        best = min(best, value)

"""MultiObjectiveBO's recombinants (``recombine``): crossovers of good configurations join the
acquisition's candidates on spaces too large to be scored whole."""
import random

from hypothesis import given, settings, strategies as st

from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.techniques import Feedback, create_technique
from tunerlib.techniques.bo.recombine import parents_by_layers, recombinants

import numpy as np

NAMES = [f"x{i}" for i in range(8)]
WIDE = 1000


@given(st.integers(0, 2 ** 32 - 1), st.integers(2, 6))
@settings(max_examples=30, deadline=None)
def test_every_child_takes_each_value_from_one_of_two_parents(seed, n):
    rng = random.Random(seed)
    parents = [{name: rng.randrange(WIDE) for name in NAMES} for _ in range(n)]
    children = recombinants(parents, NAMES, random.Random(seed), lambda c: True, count=50)
    assert children
    for child in children:
        assert child not in parents
        assert any(all(child[k] in (a[k], b[k]) for k in NAMES)
                   for a in parents for b in parents if a is not b)


def test_infeasible_children_are_dropped_and_one_parent_gives_none():
    rng = random.Random(0)
    parents = [{name: rng.randrange(WIDE) for name in NAMES} for _ in range(4)]
    keep = lambda c: c["x0"] == parents[0]["x0"]   # noqa: E731
    assert all(keep(c) for c in recombinants(parents, NAMES, random.Random(1), keep))
    assert recombinants(parents[:1], NAMES, random.Random(1), lambda c: True) == []


def test_parents_are_the_best_layers_until_enough():
    vectors = np.array([[1.0, 5.0], [5.0, 1.0], [2.0, 6.0], [6.0, 2.0], [9.0, 9.0]])
    configs = [{"i": i} for i in range(5)]
    assert parents_by_layers(vectors, configs, least=2) == [{"i": 0}, {"i": 1}]
    assert parents_by_layers(vectors, configs, least=3) == [{"i": 0}, {"i": 1}, {"i": 2}, {"i": 3}]
    assert len(parents_by_layers(vectors, configs, least=10)) == 5


def first_model_proposal(recombine: bool):
    """The first model-based proposal on 8 parameters of 1,000 values each (far too many to score
    whole), with a single random sample and no local steps: without recombinants (and without the
    moves between front neighbours, crossovers too) it can only be that random sample or a move
    around a front member with values of random draws."""
    m = ConfigurationManipulator([IntegerParameter(name, 0, WIDE - 1) for name in NAMES])
    name = ("MultiObjectiveBO;n_random_samples,1;n_starts,1;max_local_steps,0;hp_samples,4;hp_starts,1;"
            f"initial_samples,10;extreme_every,0;gap_moves,false;recombine,{str(recombine).lower()}")
    tech = create_technique([name])
    tech.bind(m, random.Random(0), tech.name)
    seen = []
    for _ in range(10):
        prop = tech.propose()
        cfg = prop.config
        values = (float(sum(cfg.values())), float(sum(WIDE - v for v in cfg.values())) + cfg["x0"] % 7)
        tech.observe(Feedback(cfg, m.hash_config(cfg), values[0], "ok", prop.requestor, True, False, values=values))
        seen.append(cfg)
    return tech.propose().config, seen


def is_crossover(cfg, seen):
    return cfg not in seen and all(any(cfg[k] == s[k] for s in seen) for k in NAMES)


def test_a_model_proposal_can_be_a_crossover_of_evaluated_configurations():
    cfg, seen = first_model_proposal(True)
    assert is_crossover(cfg, seen)
    cfg, seen = first_model_proposal(False)
    assert not is_crossover(cfg, seen)


def test_no_recombinants_are_drawn_on_a_space_scored_whole():
    """On a space small enough to be scored whole the acquisition is maximised exactly and the
    recombinants (which would consume the technique's random stream) are never drawn."""
    m = ConfigurationManipulator([IntegerParameter(name, 0, 3) for name in NAMES[:4]])
    tech = create_technique(["MultiObjectiveBO;hp_samples,4;hp_starts,1;initial_samples,6;extreme_every,2"])
    tech.bind(m, random.Random(0), tech.name)

    def refuse(parents):
        raise AssertionError("recombinants drawn on a space scored whole")

    tech._recombinants = lambda parents: refuse   # the local search would call it
    for _ in range(10):
        prop = tech.propose()
        cfg = prop.config
        values = (float(sum(cfg.values())), float(12 - sum(cfg.values())) + cfg["x0"] % 2)
        tech.observe(Feedback(cfg, m.hash_config(cfg), values[0], "ok", prop.requestor, True, False, values=values))

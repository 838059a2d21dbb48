"""The additive model MultiObjectiveBO's extreme turns descend (``extreme_descent``): it extrapolates an
additive objective beyond the designs it was fitted on, and every other extreme turn of an objective
climbs it instead of the GP's expected improvement."""
import random

import numpy as np
import pytest

from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.techniques import Feedback, create_technique
from tunerlib.techniques.bo import multiobjective
from tunerlib.techniques.bo.descent import DescentAcquisition, fit_additive
from tunerlib.techniques.bo.extremes import START_RADIUS, ExtremeTurns
from tunerlib.techniques.bo.distances import SpaceEncoder

from kit import light

WIDTH, TOP = 6, 7


def pipeline(cfg):
    """(latency, resources) of a pipeline of WIDTH stages: each stage's time falls and its resources
    grow with its parallelism (the development toy of test_bo_extremes)."""
    xs = [cfg[f"x{i}"] for i in range(WIDTH)]
    return sum(8.0 / (1 + x) for x in xs), float(sum(x * x for x in xs))


def measure_one(tech, m, seen):
    """One proposal of ``tech`` measured on :func:`pipeline` and observed."""
    prop = tech.propose()
    assert prop is not None
    key = m.hash_config(prop.config)
    values = pipeline(prop.config)
    tech.observe(Feedback(prop.config, key, values[0], "ok", prop.requestor, key not in seen, key in seen,
                          values=values))
    seen.add(key)


def space():
    return ConfigurationManipulator([IntegerParameter(f"x{i}", 0, TOP) for i in range(WIDTH)])


def test_the_additive_model_ranks_the_design_beyond_every_observed_one_first():
    """Fitted on designs with at most half the stages fast, it predicts the design with every stage at
    its top (never observed) to be faster than any of them, as the pipeline's latency is."""
    m = space()
    rng = random.Random(0)
    train = []
    for _ in range(24):
        cfg = {f"x{i}": rng.randint(0, TOP) for i in range(WIDTH)}
        for i in rng.sample(range(WIDTH), WIDTH // 2):
            cfg[f"x{i}"] = rng.randint(0, 2)
        train.append(cfg)
    encoder = SpaceEncoder(m)
    values = np.array([pipeline(c)[0] for c in train])
    model = fit_additive(encoder.encode(train), values)
    assert model is not None and model.log
    top = model.predict(encoder.encode([{f"x{i}": TOP for i in range(WIDTH)}]))[0]
    assert top < model.predict(encoder.encode(train)).min()
    assert fit_additive(encoder.encode(train[:2]), values[:2]) is None
    assert not fit_additive(encoder.encode(train), values - values.mean()).log


@pytest.mark.parametrize("every", [2, 1, 0])
def test_every_other_extreme_turn_descends_the_additive_model(monkeypatch, every):
    """With ``extreme_descent`` 2 an objective's first, third, ... extreme turns climb the additive
    model (x P(feasible)), its others the GP's expected improvement; with 1 every turn climbs the
    model, with 0 none."""
    kinds = []
    m = space()
    tech = create_technique([light(f"MultiObjectiveBO;extreme_every,1;initial_samples,8;"
                                   f"extreme_descent,{every}")])
    tech.bind(m, random.Random(0), tech.name)
    original = tech.search.run

    def spy(acq, *args, **kwargs):
        if not isinstance(acq, multiobjective.HypervolumeAcquisition):
            kinds.append((isinstance(acq, DescentAcquisition), dict(tech._descents)))
        return original(acq, *args, **kwargs)

    monkeypatch.setattr(tech.search, "run", spy)
    seen = set()
    while len(kinds) < 8:
        measure_one(tech, m, seen)
    before = {}
    for descended, counts in kinds:
        (turns,) = [n for j, n in counts.items() if n != before.get(j, 0)]
        assert descended == (every > 0 and (turns - 1) % every == 0)
        before = counts
    assert len(before) == 2


def test_a_descent_turns_miss_leaves_the_trust_region_and_the_patience_alone():
    """A descent proposal (a probe of another model) that misses neither halves its objective's radius
    nor counts towards the end of its turns; one that gains counts as any extreme proposal's gain."""
    turns = ExtremeTurns(every=1, patience=1)
    turns.proposed("probe", 0, probe=True)
    turns.observed("probe", None, (4.0, 1.0))                 # failed: a miss, not counted
    assert (turns.radius_of(0), turns.misses.get(0, 0)) == (START_RADIUS, 0)
    turns.proposed("plain", 0)
    turns.observed("plain", (5.0, 1.0), (4.0, 1.0))           # the GP's turn missed: counted
    assert (turns.radius_of(0), turns.misses[0]) == (START_RADIUS / 2, 1)
    turns.proposed("gain", 0, probe=True)
    turns.observed("gain", (3.0, 1.0), (4.0, 1.0))            # a probe's gain doubles the radius
    assert (turns.radius_of(0), turns.misses[0], turns.streak) == (START_RADIUS, 0, 0)
    assert not turns.probes

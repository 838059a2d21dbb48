"""BayesianOptimization's option ``hyper_after``: the integrated acquisition of ``hyper_samples``
(:mod:`tunerlib.techniques.bo.marginal`) only once the OK results number that many initial designs."""
import json
import random

import numpy as np
import pytest

from tunerlib.parameters import ConfigurationManipulator, EnumParameter, IntegerParameter, PowerOfTwoParameter
from tunerlib.techniques import Feedback, TechniqueError, create_technique
from tunerlib.techniques.bo import BayesianOptimization
from tunerlib.techniques.bo.budget import designs_reached
from tunerlib.techniques.naming import technique_name

FAST = dict(n_random_samples=200, n_starts=3, hp_samples=10, hp_starts=3, max_local_steps=4)
#: three parameters: initial designs of d + 1 = 4 points
DESIGN = 4


def space():
    return ConfigurationManipulator([PowerOfTwoParameter("a", 1, 1024), IntegerParameter("c", 0, 9),
                                     EnumParameter("e", ["x", "y", "z"])])


def value(c):
    return 1.0 + abs(np.log2(c["a"]) - 6) + abs(c["c"] - 3) / 3 + {"x": 0.0, "y": 0.5, "z": 2.0}[c["e"]]


def run(seed, steps, **options):
    """(technique, proposal hashes, number of weighted models behind each proposal: 0 for design points)."""
    m = space()
    tech = BayesianOptimization(**FAST, **options)
    tech.bind(m, random.Random(seed), "BO")
    proposals, mixtures = [], []
    for _ in range(steps):
        before = tech._turns
        cfg = tech.propose().config
        proposals.append(m.hash_config(cfg))
        mixtures.append(len(tech._fs.model[-1]) if tech._turns > before else 0)
        tech.observe(Feedback(cfg, m.hash_config(cfg), value(cfg), "ok", tech.name, False))
    return tech, proposals, mixtures


def test_designs_reached_counts_results_in_initial_designs():
    assert designs_reached(0, 0, 5) and designs_reached(3, 0, 5)
    assert not designs_reached(9, 2, 5) and designs_reached(10, 2, 5) and designs_reached(11, 2, 5)


@pytest.mark.parametrize("seed", [1, 3])
def test_proposals_are_those_of_one_sample_before_the_threshold_and_integrated_after(seed):
    threshold = 2 * DESIGN
    steps = threshold + 6
    _, plain, _ = run(seed, steps, hyper_samples=1)
    tech, late, mixtures = run(seed, steps, hyper_samples=4, hyper_after=2)
    _, early, _ = run(seed, steps, hyper_samples=4, hyper_after=0)
    # proposal i is made on i results: the first `threshold` ones are the plain acquisition's, exactly
    assert late[:threshold] == plain[:threshold]
    assert mixtures[DESIGN:threshold] == [1] * (threshold - DESIGN)
    assert early[:threshold] != plain[:threshold]          # the average from the first fit changes them
    assert max(mixtures[threshold:]) > 1                   # and from the threshold on it is used
    assert late != plain
    assert any(fs.alternatives for fs in tech._fit_states)


def test_no_settings_are_kept_before_the_threshold_and_the_state_round_trips_them_after():
    m = space()
    tech, _, _ = run(3, 2 * DESIGN - 1, hyper_samples=4, hyper_after=2)
    state = json.loads(json.dumps(tech.state_dict()))
    assert all(not fs.alternatives for fs in tech._fit_states) and "alternatives" not in state
    resumed = BayesianOptimization(**FAST, hyper_samples=4, hyper_after=2)
    resumed.bind(m, random.Random(3), "BO")
    resumed.load_state_dict(state)
    assert all(not fs.alternatives for fs in resumed._fit_states)

    tech, _, _ = run(3, 2 * DESIGN + 4, hyper_samples=4, hyper_after=2)
    state = json.loads(json.dumps(tech.state_dict()))
    assert state["alternatives"]
    resumed = BayesianOptimization(**FAST, hyper_samples=4, hyper_after=2)
    resumed.bind(m, random.Random(3), "BO")
    resumed.load_state_dict(state)
    restored, saved = resumed._fit_states[0].alternatives, tech._fit_states[0].alternatives
    assert len(restored) == len(saved) > 0
    assert np.allclose(np.concatenate([h.theta() for h in restored]), np.concatenate([h.theta() for h in saved]))


def test_the_option_is_named_validated_and_single_objective():
    tech = create_technique(["BayesianOptimization;hyper_samples,4;hyper_after,2"])
    assert tech.options.hyper_after == 2 and tech.option_values()["hyper_after"] == 2
    assert create_technique([technique_name(tech)]).options.hyper_after == 2
    assert (BayesianOptimization().options.hyper_samples, BayesianOptimization().options.hyper_after) == (4, 4)
    assert create_technique(["BayesianOptimization"]).option_values()["hyper_after"] == 4
    for bad in ("BayesianOptimization;hyper_after,-1", "BayesianOptimization;hyper_after,1.5"):
        with pytest.raises(TechniqueError, match="hyper_after"):
            create_technique([bad])
    with pytest.raises(TechniqueError, match="MultiObjectiveBO has no option 'hyper_after'"):
        create_technique(["MultiObjectiveBO;hyper_after,2"])
    mobo = create_technique(["MultiObjectiveBO"]).options      # its GPs keep one setting each
    assert (mobo.hyper_samples, mobo.hyper_after) == (1, 0)


def test_the_default_proposes_as_hyper_samples_4_with_hyper_after_4():
    steps = 4 * DESIGN + 6
    _, default, mixtures = run(1, steps)
    assert default == run(1, steps, hyper_samples=4, hyper_after=4)[1]
    assert default[:4 * DESIGN] == run(1, steps, hyper_samples=1)[1][:4 * DESIGN]
    assert max(mixtures[4 * DESIGN:]) > 1

"""The bundle AUCBanditMetaTechniqueG (a GA and a TPE arm): what it is made of, that it learns, and that
its TPE arm leaves tours to the GA.  Legality on every space kind is the conformance kit's
(test_conformance.py runs it on every registered bundle)."""
import random
import statistics
import sys
from pathlib import Path

from tunerlib import tune_function
from tunerlib.parameters import ConfigurationManipulator, PermutationParameter
from tunerlib.techniques import AUCBanditMetaTechnique, create_technique
from tunerlib.techniques.base import Feedback

G = "AUCBanditMetaTechniqueG"

sys.path.insert(0, str(Path(__file__).parent))
from test_tpe import _separable  # noqa: E402


def test_g_is_a_bandit_over_a_ga_and_a_deferring_tpe_arm():
    tech = create_technique([G])
    assert isinstance(tech, AUCBanditMetaTechnique) and tech.name == "AUCBanditMetaTechniqueG"
    assert [t.name for t in tech.techniques] == ["ga-base", "BanditTPE"]
    assert tech.techniques[1].defer and tech.bandit.C == 0.05 and tech.bandit.window == 500


def test_g_beats_random_search_on_a_separable_objective():
    space, fn = _separable()
    default, rnd = [], []
    for seed in range(8):
        default.append(tune_function(space, fn, test_limit=60, technique=[G], seed=seed).best_at(60))
        rnd.append(tune_function(space, fn, test_limit=60, technique=["PureRandom"], seed=seed).best_at(60))
    # measured: G's median 2, random search's 10 (8 seeds; the default ahead on all 8)
    assert statistics.median(default) * 2 <= statistics.median(rnd)
    assert sum(d < r for d, r in zip(default, rnd)) >= 6


def test_on_tours_every_suggestion_comes_from_the_ga():
    """BanditTPE models no tour of 10 cities (more than 256 orders), so it never proposes: every
    proposal of a run is the GA's, and the run improves on its first results."""
    space = ConfigurationManipulator([PermutationParameter("tour", list(range(10)))])
    tech = create_technique([G])
    tech.bind(space, random.Random(3), tech.name)
    requestors, values, best = set(), [], float("inf")
    for _ in range(120):
        prop = tech.propose()
        tour = prop.config["tour"]
        value = float(sum(abs(a - b) for a, b in zip(tour, tour[1:])))
        tech.observe(Feedback(prop.config, space.hash_config(prop.config), value, "ok", prop.requestor,
                              value < best))
        best = min(best, value)
        requestors.add(prop.requestor)
        values.append(value)
    assert requestors == {"AUCBanditMetaTechniqueG/ga-base"}
    assert min(values) < min(values[:10])

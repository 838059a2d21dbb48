"""BayesianOptimizationGA: BayesianOptimization and ga-base take turns, and both learn from every
result (legality on every space kind is the conformance kit's)."""
import random

from tunerlib.parameters import ConfigurationManipulator, EnumParameter, OrdinalParameter
from tunerlib.techniques import create_technique
from tunerlib.techniques.meta import RoundRobinMetaTechnique
from tunerlib.techniques.base import Feedback

from kit import LIGHT_BO


def test_the_model_and_the_ga_take_turns_and_see_each_others_results():
    space = ConfigurationManipulator([OrdinalParameter(f"x{i}", list(range(6))) for i in range(3)]
                                     + [EnumParameter("e", list("abc"))])
    tech = create_technique(["BayesianOptimizationGA"])
    assert isinstance(tech, RoundRobinMetaTechnique)
    assert [t.name for t in tech.techniques] == ["BayesianOptimization", "ga-base"]
    tech.techniques[0] = create_technique([LIGHT_BO])   # same code paths, less fitting CPU
    tech.techniques[0].name = "BayesianOptimization"
    tech.bind(space, random.Random(5), tech.name)
    requestors, best = [], float("inf")
    for _ in range(16):
        prop = tech.propose()
        cfg = prop.config
        value = sum((cfg[f"x{i}"] - i) ** 2 for i in range(3)) + (cfg["e"] != "b")
        tech.observe(Feedback(cfg, space.hash_config(cfg), value, "ok", prop.requestor, value < best))
        best = min(best, value)
        requestors.append(prop.requestor.rsplit("/", 1)[-1])
    assert requestors == ["BayesianOptimization", "ga-base"] * 8
    bo = tech.techniques[0]
    assert len(bo._results) == 16        # the model holds the GA's results too

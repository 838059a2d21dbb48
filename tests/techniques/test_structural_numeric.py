"""StructuralSurrogate on numeric spaces: the fallback is exactly the default bandit, pairwise
interaction features and the joint search of the numeric parameters."""
import random

from tunerlib import tune_function
from tunerlib.parameters import ConfigurationManipulator, FloatParameter
from tunerlib.techniques import registry
from tunerlib.techniques.base import Feedback


def _rosenbrock(cfg):
    x = [cfg[f"x{i}"] for i in range(4)]
    return float(sum(100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2 for a, b in zip(x, x[1:])))


def _float_space(dims=4):
    return ConfigurationManipulator([FloatParameter(f"x{i}", -5.0, 5.0) for i in range(dims)])


def test_with_the_model_switched_off_it_makes_the_default_bandits_suggestions():
    """The fallback draws the stream it would draw as the root technique: a run whose model never gets
    a suggestion (initial beyond the budget) measures exactly what the default bandit measures."""
    catalogue = registry()
    for seed in (0, 3):
        off = catalogue.create("StructuralSurrogate")
        off.initial = 10 ** 6
        plain = catalogue.create("AUCBanditMetaTechniqueA")
        values = []
        for tech in (off, plain):
            space = _float_space()
            tech.bind(space, random.Random(f"{seed}"), tech.name)
            run = []
            for _ in range(60):
                proposal = tech.propose()
                value = _rosenbrock(proposal.config)
                run.append(value)
                tech.observe(Feedback(proposal.config, space.hash_config(proposal.config), value, "ok",
                                      proposal.requestor, False))
            values.append(run)
        assert values[0] == values[1]

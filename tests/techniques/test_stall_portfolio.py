"""StallPortfolioMetaTechnique (BayesianOptimizationGA's scheduler): the primary alone until it stalls,
then turns with the partner until the primary finds a new best.  Legality on every space kind is
the conformance kit's (it runs BayesianOptimizationGA)."""
import random

import pytest

from tunerlib.parameters import ConfigurationManipulator, IntegerParameter
from tunerlib.techniques import PureRandom, TechniqueError, create_technique
from tunerlib.techniques.base import Feedback
from tunerlib.techniques.meta import StallPortfolioMetaTechnique


def _run(tech, new_best_for_primary):
    """Propose and answer 1 + len(flags) times; the primary's i-th result is a new best when
    ``new_best_for_primary[i]``; the partner's never.  Returns who proposed, in order."""
    space = ConfigurationManipulator([IntegerParameter("x", 0, 10 ** 9)])
    tech.bind(space, random.Random(0), "P")
    flags, who = list(new_best_for_primary), []
    while flags:
        prop = tech.propose()
        name = prop.requestor.rsplit("/", 1)[-1]
        new = flags.pop(0) if name == "primary" else False
        tech.observe(Feedback(prop.config, space.hash_config(prop.config), 1.0, "ok", prop.requestor, new))
        who.append(name)
    return who


def test_the_partner_takes_every_other_turn_only_while_the_primary_stalls():
    tech = StallPortfolioMetaTechnique([PureRandom("primary"), PureRandom("partner")], patience=3)
    # primary: a new best, then 3 without (stalled), 2 more without, then a new best, then 1 without
    who = _run(tech, [True, False, False, False, False, False, True, False])
    assert who == ["primary"] * 4 + ["partner", "primary", "partner", "primary", "partner", "primary",
                                     "primary"]


def test_options_and_the_registered_bundle():
    with pytest.raises(TechniqueError, match="exactly two sub-techniques"):
        StallPortfolioMetaTechnique([PureRandom("a")])
    bundle = create_technique(["BayesianOptimizationGA;patience,4"])
    assert isinstance(bundle, StallPortfolioMetaTechnique) and bundle.patience == 4
    assert [t.name for t in bundle.techniques] == ["BayesianOptimization", "ga-base"]

"""The technique conformance kit (:mod:`tunerlib.testing`) on every registered technique: each check
of :data:`tunerlib.testing.CHECKS` is one test per technique.

This is the one legality kit: the family test files (evolutionary, local search, BO, structural)
test behaviour only.  The recommendation bandits (``bndt-A`` ... ``rec-dbi``) need a populated
store; they run the same kit in tests/store/test_recommendation.py.  BayesianOptimization runs with
light fitting settings (tests/helpers/kit.py); its search quality is tested in tests/techniques/bo.
"""
import pytest

from tunerlib.techniques import registry
from tunerlib.techniques.recommendation import approach_names
from tunerlib.testing import CHECKS, ConformanceError, check_technique, drive, permutation_space

from kit import light

NAMES = [n for n in registry() if n not in approach_names()]
#: the suite runs the kit at 0.6 of its budgets (at least 30 measurements a check: the full-budget runs
#: 120 on each space, the protocol checks 90 proposals); model-based techniques whose proposals cost much
#: CPU run smaller budgets.  A user's own technique gets the library's defaults (scale 1).
SCALE = {"auto": 0.2, "BayesianOptimization": 0.2, "MultiObjectiveBO": 0.2, "BayesianOptimizationGA": 0.2,
         "StructuralSurrogate": 0.3, "LowRankStructuralSurrogate": 0.3,
         "MetricStructuralSurrogate": 0.3}
DEFAULT_SCALE = 0.6


@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize("name", NAMES)
def test_conformance(name, check):
    check_technique(light(name), [check], scale=SCALE.get(name, DEFAULT_SCALE))


def test_the_kit_catches_an_illegal_proposal(monkeypatch):
    from tunerlib import testing
    from tunerlib.techniques import PureRandom
    from tunerlib.techniques.base import Proposal

    class Illegal(PureRandom):
        def propose(self):
            prop = super().propose()
            return Proposal(dict(prop.config, tour=[0] * 10), prop.requestor) if prop else None
    monkeypatch.setattr(testing, "_create", lambda name: Illegal())
    with pytest.raises(ConformanceError, match="Illegal: legality: illegal proposal"):
        drive("Illegal", *permutation_space(), 10, seed=0)


def test_unknown_checks_are_named():
    with pytest.raises(ValueError, match="unknown conformance check 'nope'"):
        check_technique("PureRandom", ["nope"])


@pytest.mark.parametrize("name", ["NSGA2", "PureRandom"])
def test_the_multi_objective_check_leaves_nothing_in_the_working_folder(name, tmp_path, monkeypatch):
    """The kit is run from a user's project folder: its runs keep their results in memory (a technique
    that is not multi-objective is refused on the way, NSGA2's run goes through the real driver)."""
    monkeypatch.chdir(tmp_path)
    check_technique(name, ["multi-objective"], scale=0.2)
    assert list(tmp_path.iterdir()) == []

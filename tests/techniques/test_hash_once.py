"""A configuration is hashed once on its way from a technique to the results database: a technique that
hashed it (the evolutionary family, pattern search and Nelder-Mead) passes the hash in its Proposal,
and the search driver uses it instead of hashing again."""
import pytest

from tunerlib import tune_function
from tunerlib.engine.search import SearchDriver
from tunerlib.parameters import ConfigurationManipulator, FloatParameter, PermutationParameter

HASHING = ["DifferentialEvolution", "ga-base", "RandomNelderMead", "PatternSearch", "AUCBanditMetaTechniqueA"]


def _floats():
    return ConfigurationManipulator([FloatParameter(f"x{i}", -5.0, 5.0) for i in range(4)])


def _quadratic(cfg):
    return sum((cfg[f"x{i}"] - 0.5) ** 2 for i in range(4))


def _count_hashes(monkeypatch):
    calls = [0]
    original = ConfigurationManipulator.hash_valid

    def counted(self, config):
        calls[0] += 1
        return original(self, config)

    monkeypatch.setattr(ConfigurationManipulator, "hash_valid", counted)
    return calls


@pytest.mark.parametrize("technique", HASHING)
def test_proposals_carry_the_hash_of_their_configuration(monkeypatch, technique):
    """Every key a proposal carries is the hash of the configuration it carries (checked against a fresh
    hash as the driver takes it), and the techniques that hash their configurations pass the key on."""
    carried = []
    submit = SearchDriver.submit

    def checked(self, proposal):
        if proposal.key is not None:
            assert proposal.key == self.manipulator.hash_config(proposal.config)
            carried.append(proposal.key)
        return submit(self, proposal)

    monkeypatch.setattr(SearchDriver, "submit", checked)
    run = tune_function(_floats(), _quadratic, test_limit=150, technique=[technique], seed=3)
    assert len(run.values) == 150
    assert len(carried) >= 10


@pytest.mark.parametrize("technique", ["DifferentialEvolution", "ga-base", "RandomNelderMead"])
def test_each_measured_configuration_is_hashed_about_once(monkeypatch, technique):
    """Hash computations per measured configuration (duplicate proposals and rejected candidates of a
    technique are hashed too, so a little over one); a technique hashing a configuration, then the
    driver hashing it again gives two or more."""
    calls = _count_hashes(monkeypatch)
    run = tune_function(_floats(), _quadratic, test_limit=300, technique=[technique], seed=5)
    assert len(run.values) == 300
    assert calls[0] <= 1.25 * 300


def test_tour_proposals_carry_their_hash(monkeypatch):
    """The same on a permutation, where a hash costs most."""
    calls = _count_hashes(monkeypatch)
    space = ConfigurationManipulator([PermutationParameter("tour", list(range(12)))])
    run = tune_function(space, lambda cfg: sum(abs(a - b) for a, b in zip(cfg["tour"], cfg["tour"][1:])),
                        test_limit=200, technique=["ga-base"], seed=2)
    assert len(run.values) == 200
    assert calls[0] <= 1.25 * 200


def test_the_conformance_kit_catches_a_wrong_key(monkeypatch):
    """A proposal whose key is not its configuration's hash would store the configuration under another
    configuration's identity: the kit's legality check refuses it."""
    from tunerlib import testing
    from tunerlib.techniques import PureRandom
    from tunerlib.techniques.base import Proposal
    from tunerlib.testing import ConformanceError, drive, permutation_space

    class WrongKey(PureRandom):
        def propose(self):
            prop = super().propose()
            return Proposal(prop.config, prop.requestor, "0" * 64) if prop else None
    monkeypatch.setattr(testing, "_create", lambda name: WrongKey())
    with pytest.raises(ConformanceError, match="WrongKey: legality: proposal carries key 000000000000"):
        drive("WrongKey", *permutation_space(), 10, seed=0)

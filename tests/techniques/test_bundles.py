"""Named bundles and generated bandits."""
import random
import sys
from pathlib import Path

import zygote

from tunerlib.parameters import (ConfigurationManipulator, EnumParameter, FloatParameter,
                                 PermutationParameter)
from tunerlib.techniques import AUCBanditMetaTechnique, create_technique, generate_bandit, registry
from tunerlib.techniques.bundles import BUNDLES

SCRIPT = Path(__file__).resolve().parents[1] / "core" / "scripts" / "toy_tuner.py"


def space():
    return ConfigurationManipulator([FloatParameter("f", 0.0, 1.0), EnumParameter("e", ["a", "b"]),
                                     PermutationParameter("p", list(range(5)))])


def test_generated_bandit_is_deterministic_and_has_five_distinct_arms():
    names = []
    for _ in range(2):
        bandit = generate_bandit(registry(), space(), random.Random(42))
        assert isinstance(bandit, AUCBanditMetaTechnique) and len(bandit.techniques) == 5
        names.append([t.name for t in bandit.techniques])
    assert names[0] == names[1] and len(set(names[0])) == 5
    other = [t.name for t in generate_bandit(registry(), space(), random.Random(43)).techniques]
    assert other != names[0]
    mixes = [generate_bandit(registry(), space(), random.Random(s)).techniques for s in range(10)]
    assert any(";" in t.name for arms in mixes for t in arms), "no random composable arm in 10 draws"


def test_every_bundle_is_registered_and_builds_its_members():
    for name, (members, _desc) in BUNDLES.items():
        tech = create_technique([name])
        assert [t.name.split(".R")[0] for t in tech.techniques] == members


def test_cli_generate_bandit_technique(tmp_path):
    proc = zygote.run([sys.executable, str(SCRIPT), "--generate-bandit-technique", "--seed", "3",
                       "--test-limit", "60", "--database", str(tmp_path / "g.db"), "--quiet"],
                      capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "after 60 tests" in proc.stdout
    clash = zygote.run([sys.executable, str(SCRIPT), "--generate-bandit-technique", "--technique",
                        "PureRandom", "--database", str(tmp_path / "g.db")], capture_output=True, text=True)
    assert clash.returncode == 2 and "exclude each other" in clash.stderr


def test_generated_bandits_draw_every_listed_catalogue_technique_that_is_no_meta_technique():
    """History generation draws its arms from the whole catalogue: techniques added later (the
    structural surrogate, or-opt mutation) are arms too; bundles and approaches never are."""
    from tunerlib.techniques.bundles import _NOT_ARMS
    pool = [n for n in registry() if n not in _NOT_ARMS]
    assert {"StructuralSurrogate", "OrOptGreedyMutation"} <= set(pool)
    assert not set(pool) & {"AUCBanditMetaTechniqueA", "rec-bndt-dbi", "GreedyMutationBandit"}
    drawn = {t.name for s in range(200) for t in generate_bandit(registry(), space(), random.Random(s)).techniques}
    assert {"StructuralSurrogate", "OrOptGreedyMutation"} <= drawn

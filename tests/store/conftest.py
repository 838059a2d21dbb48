import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

TOY = Path(__file__).parents[1] / "core" / "scripts" / "toy_tuner.py"


@pytest.fixture(scope="session")
def toy():
    """The ToyTuner module, imported from its script file."""
    spec = importlib.util.spec_from_file_location("toy_tuner_store", TOY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def cli():
    """Run ``tunerlib ARGS`` as a real subprocess (``python -m tunerlib.cli``)."""
    def run(*args, timeout=120, **kw):
        return subprocess.run([sys.executable, "-m", "tunerlib.cli", *map(str, args)], capture_output=True,
                              text=True, timeout=timeout, **kw)
    return run


@pytest.fixture
def results_db(tmp_path, toy):
    """A results database with three finished runs of the toy tuner (two techniques, one bandit)."""
    path = tmp_path / "results.db"
    for seed, technique in ((1, "AUCBanditMetaTechniqueA"), (2, "PureRandom"), (3, "PSO_GA_DE")):
        assert toy.ToyTuner.main(["--database", str(path), "--test-limit", "60", "--seed", str(seed),
                                  "--technique", technique, "--quiet"]) == 0
    return path

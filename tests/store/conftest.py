import contextlib
import importlib.util
import io
from pathlib import Path
from types import SimpleNamespace

import pytest

from tunerlib.cli import main

TOY = Path(__file__).parents[1] / "core" / "scripts" / "toy_tuner.py"


@pytest.fixture(scope="session")
def toy_module(toy):
    """The ToyTuner module (for test files that also define a ``toy`` helper)."""
    return toy


@pytest.fixture(scope="session")
def toy():
    """The ToyTuner module, imported from its script file."""
    spec = importlib.util.spec_from_file_location("toy_tuner_store", TOY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def cli():
    """Run ``tunerlib ARGS`` in this process (the console script's ``main``); returns an object with
    returncode, stdout and stderr like subprocess.run (the subprocess path is covered by
    tests/store/test_upload.py's kill test and tests/tools/test_history.py)."""
    def run(*args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in args])
        return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())
    return run


@pytest.fixture
def results_db(tmp_path, toy):
    """A results database with three finished runs of the toy tuner (two techniques, one bandit)."""
    path = tmp_path / "results.db"
    for seed, technique in ((1, "AUCBanditMetaTechniqueA"), (2, "PureRandom"), (3, "PSO_GA_DE")):
        assert toy.ToyTuner.main(["--database", str(path), "--test-limit", "60", "--seed", str(seed),
                                  "--technique", technique, "--quiet"]) == 0
    return path

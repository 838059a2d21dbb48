import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent / "scripts" / "toy_tuner.py"


def _load():
    spec = importlib.util.spec_from_file_location("toy_tuner", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def toy():
    """The ToyTuner module, imported from its script file."""
    return _load()


@pytest.fixture
def run_script():
    """Run the toy tuner script as a real subprocess; returns CompletedProcess."""
    def run(*args, timeout=120, **kw):
        return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                              text=True, timeout=timeout, **kw)
    return run

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import zygote

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
    """Run the toy tuner script as a real process (a zygote child, or a new interpreter with
    ``fresh=True``: where a test compares processes that must not share a hash seed); CompletedProcess."""
    def run(*args, timeout=120, fresh=False, **kw):
        argv = [sys.executable, str(SCRIPT), *map(str, args)]
        return (subprocess.run if fresh else zygote.run)(argv, capture_output=True, text=True, timeout=timeout,
                                                         **kw)
    return run

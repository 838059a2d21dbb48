"""The source passes ``ruff check`` with the repository's ruff.toml (pyflakes, pycodestyle errors,
flake8-bugbear): no unused imports or variables, no loop variables captured late, no shadowed
definitions.  ruff comes with the ``[test]`` extra."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff (the [test] extra) is not installed")
def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr

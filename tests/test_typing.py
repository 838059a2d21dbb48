"""mypy finds nothing in the installed package (``tunerlib`` with ``tunerlib.parameters`` and
``tunerlib.techniques``) and in the checkout's ``tools``, at its default strictness with pyproject.toml's ``[tool.mypy]``.  It runs
through ``tools/typecheck.py``, which lays the package out as installed (setup.cfg maps two top-level
folders into it).  mypy comes with the ``[test]`` extra."""
import importlib.util
import sys

import pytest

from tools import typecheck


def test_the_tree_is_the_installed_package(tmp_path):
    (tmp_path / "setup.cfg").write_text("[options]\npackage_dir =\n    tunerlib = tunerlib\n"
                                        "    tunerlib.parameters = parameters\n")
    for folder, name in (("tunerlib", "core.py"), ("parameters", "base.py")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
        (tmp_path / folder / name).write_text("x: int = 1\n")
    links = typecheck.build_tree(tmp_path)
    package = tmp_path / "build" / "typecheck" / "tunerlib"
    assert sorted(p.name for p in package.iterdir()) == ["__init__.py", "core.py", "parameters"]
    assert (package / "parameters" / "base.py").read_text() == "x: int = 1\n"
    line = "build/typecheck/tunerlib/parameters/base.py:1: error: x"
    assert typecheck._source_path(line, links, tmp_path) == "parameters/base.py:1: error: x"
    assert typecheck._source_path("build/typecheck/tunerlib/core.py:1: e", links, tmp_path) == "tunerlib/core.py:1: e"


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy (the [test] extra) is not installed")
def test_mypy_finds_nothing():
    done = typecheck.run([], python=sys.executable, timeout=1800)  # a first run, without a cache, takes minutes
    assert done.returncode == 0, done.stdout + done.stderr

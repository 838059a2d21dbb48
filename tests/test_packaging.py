"""Packaging: every Python package folder is listed in setup.cfg, so a regular (non-editable)
``pip install .`` ships all of tunerlib, not only what an editable install happens to find."""
import configparser
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed_in_setup_cfg():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    listed = {line.strip() for line in cfg["options"]["packages"].splitlines() if line.strip()}
    roots = {}
    for line in cfg["options"]["package_dir"].splitlines():
        if "=" in line:
            name, folder = (part.strip() for part in line.split("=", 1))
            roots[name] = REPO / folder
    found = set()
    for name, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder).parts
            if "__pycache__" not in rel:
                found.add(".".join((name, *rel)))
    missing = sorted(found - listed)
    assert not missing, f"add {missing} to [options] packages in setup.cfg"


def test_the_built_package_ships_py_typed(tmp_path):
    """PEP 561: type checkers read tunerlib's annotations only when ``tunerlib/py.typed`` is installed.
    ``build_py`` is the step that fills a wheel (and a regular install) with the package's files."""
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py",
                           "--build-lib", str(tmp_path / "lib")], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "lib" / "tunerlib" / "py.typed").is_file()
    assert (tmp_path / "lib" / "tunerlib" / "parameters" / "__init__.py").is_file()


def test_the_starter_history_is_package_data_that_the_built_package_finds(tmp_path):
    """setuptools' build_py (what a wheel and ``pip install .`` copy) ships the starter history, and
    tunerlib imported from that build reads it."""
    import os
    import subprocess
    import sys
    build = tmp_path / "build"
    done = subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                           "--build-lib", str(build)], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (build / "tunerlib" / "store" / "starter_history.json.gz").is_file(), \
        "add starter_history.json.gz to [options.package_data] tunerlib.store in setup.cfg"
    probe = ("import tunerlib.store.starter as s; rows = s.read_starter(); "
             "print(s.STARTER_PATH.is_relative_to(%r), len(rows.representations) if rows else 0)" % str(build))
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(build)})
    assert done.returncode == 0, done.stderr
    inside, representations = done.stdout.split()
    assert inside == "True" and int(representations) > 0


def test_the_built_package_ships_the_user_commands_and_not_the_benchmark_harness(tmp_path):
    """tools/ (compare, score, bench_*: run from a checkout) is not installed; the ``history`` command
    and the recorded-table readers the examples replay are, and the built CLI finds ``history``."""
    import os
    import subprocess
    import sys
    build = tmp_path / "build"
    done = subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                           "--build-lib", str(build)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not (build / "tunerlib" / "tools").exists() and not (build / "tools").exists()
    assert (build / "tunerlib" / "replay" / "recorded" / "__init__.py").is_file()
    help_text = subprocess.run([sys.executable, "-m", "tunerlib.cli", "history", "--help"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=300,
                               env={**os.environ, "PYTHONPATH": str(build)})
    assert help_text.returncode == 0, help_text.stderr
    assert "starter" in help_text.stdout and help_text.stderr == ""

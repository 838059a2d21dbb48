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

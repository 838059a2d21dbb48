"""mypy over the installed package ``tunerlib``, read from the checkout, and over the checkout's ``tools``.

    python -m tools.typecheck                    # the whole package, with pyproject.toml's [tool.mypy]
    python -m tools.typecheck -p tunerlib.db     # one subpackage (any other mypy arguments pass through)

setup.cfg installs the top-level folders ``parameters/`` and ``techniques/`` as ``tunerlib.parameters`` and
``tunerlib.techniques`` (``package_dir``), a mapping mypy cannot follow: given the folders it would check
them as top-level packages ``parameters`` and ``techniques``, whose relative imports (``from ..parameters``)
leave the package.  So this tool first builds the package as installed under ``build/typecheck/``, a tree
of symbolic links into the checkout (``tunerlib/<entry>`` for every entry of ``tunerlib/``, and one link
for each mapped folder), which ``[tool.mypy]``'s ``mypy_path`` names, and then runs mypy on it.  The
tree is rebuilt on every run (a new module is seen at once); mypy's incremental cache (``.mypy_cache``)
keeps a second run fast.  Messages name the checkout's files (``parameters/base.py``, not the link).

The exit status is mypy's: 0 clean, 1 errors found, 2 bad usage or a crash.
"""
from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
TREE = Path("build") / "typecheck"
PACKAGE = "tunerlib"


def package_dirs(root: Path = ROOT) -> Dict[str, str]:
    """setup.cfg's ``package_dir``: package name -> source folder (relative to ``root``)."""
    parser = configparser.ConfigParser()
    parser.read(root / "setup.cfg")
    mapping = {}
    for line in parser.get("options", "package_dir", fallback="").splitlines():
        if "=" in line:
            name, folder = (part.strip() for part in line.split("=", 1))
            mapping[name] = folder
    return mapping


def build_tree(root: Path = ROOT) -> Dict[Path, Path]:
    """Called before mypy runs: (re)builds ``root/build/typecheck/tunerlib`` as the installed package made of
    links into the checkout; returns link folder -> source folder (for rewriting the messages)."""
    tree = root / TREE
    shutil.rmtree(tree, ignore_errors=True)
    package = tree / PACKAGE
    package.mkdir(parents=True)
    mapping = package_dirs(root)
    top = root / mapping.get(PACKAGE, PACKAGE)
    for entry in sorted(top.iterdir()):
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry.resolve())
    links = {package: top}
    for name, folder in mapping.items():
        if name.startswith(PACKAGE + "."):
            link = tree.joinpath(*name.split("."))
            if link.exists() or link.is_symlink():
                raise SystemExit(f"typecheck: {name} is both a folder of {top} and mapped to {folder} in setup.cfg")
            link.symlink_to((root / folder).resolve())
            links[link] = root / folder
    return links


def _source_path(text: str, links: Dict[Path, Path], root: Path) -> str:
    """``text`` (one line of mypy's output) with a link-tree path replaced by the checkout's path."""
    for link in sorted(links, key=lambda p: len(p.parts), reverse=True):
        rel = os.path.relpath(link, root)
        if text.startswith(rel + os.sep):
            return os.path.relpath(links[link], root) + text[len(rel):]
    return text


def run(args: Sequence[str], root: Path = ROOT, python: Optional[str] = None,
        timeout: Optional[float] = None) -> subprocess.CompletedProcess:
    """Builds the tree and runs mypy from ``root`` with ``args`` (default: the packages that ``[tool.mypy]``
    names); returns the finished process, its output rewritten to name the checkout's files."""
    links = build_tree(root)
    command: List[str] = [python or sys.executable, "-m", "mypy", *args]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=timeout)
    out = "\n".join(_source_path(line, links, root) for line in done.stdout.splitlines())
    return subprocess.CompletedProcess(command, done.returncode, out + ("\n" if out else ""), done.stderr)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m tools.typecheck [mypy arguments]``: prints mypy's report and returns its exit status."""
    done = run(list(sys.argv[1:] if argv is None else argv))
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())

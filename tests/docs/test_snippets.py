"""Every code block of the documentation runs, at a small budget, so examples cannot rot.

* Python code in the docs comes only from files (``literalinclude`` of ``docs/snippets/*.py`` or of an
  example), and every snippet file runs here; the README's Python blocks are copies of snippet files.
* Shell blocks marked ``<!-- runs -->`` and the ``$ command`` lines of the pages' marked figures
  (``<!-- figure: ... -->``, tools/doc_figures.py) run here, a page's commands in order in one
  temporary folder that holds the repository's ``examples/``, ``docs/`` and ``tools/``, with budgets
  cut to a tenth (``--test-limit N`` -> N // 10, at least 2) and ``--size`` to 48.
* The Python block of an example README included by a guide runs too (where its data is present).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
SNIPPETS = DOCS / "snippets"
README = REPO / "README.md"
HAS_GCC = shutil.which("gcc") is not None
NO_GCC = "gcc is not installed: the tutorial's C program cannot be built"

#: snippet file -> (command-line arguments, a text its output must contain, needs gcc)
RUNS = {
    "quick_tuner.py": (["--test-limit", "3", "--seed", "1", "--quiet"], "best configuration", True),
    "block_tuner.py": (["--test-limit", "6", "--seed", "1", "--quiet"], "best vs hand-picked blocks", False),
    "options_help.py": (["--test-limit", "5", "--seed", "1", "--quiet"], "best configuration", False),
    "ask_tell.py": ([], "'n': 3", False),
    "tune_function.py": ([], "{'x': ", False),
    "search_space.py": ([], "'tile_x'", False),
    "my_technique.py": ([], "", False),
    "replay_csv.py": ([], "best configuration: {\"block\": 32", False),
    "analysis.py": ([], "new_bests  affinity", False),
    "priors_space.py": ([], "best: {", False),
    "multi_objective.py": ([], "{'time': ", False),
    "bench_callgrind.py": (["--evals", "30", "--json", "--technique", "auto"], "first1000_median_ms", False),
}
MARKED = re.compile(r"^<!-- runs -->\n```(?:bash|sh)\n([\s\S]*?)^```|^<!-- figure: [^>]*-->\n```\w*\n((?:\$ .*\n)+)",
                    re.M)


def _pages():
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)


def _sandbox(tmp_path: Path) -> dict:
    """A folder with the repository's runnable trees, and an environment whose ``python`` and
    ``tunerlib`` are this interpreter's."""
    for name in ("examples", "docs", "tools"):
        (tmp_path / name).symlink_to(REPO / name)
    bin_dir = tmp_path / ".bin"
    bin_dir.mkdir()
    for name, command in (("python", ""), ("tunerlib", " -m tunerlib.cli")):
        launcher = bin_dir / name
        launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}"{command} "$@"\n')
        launcher.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "TUNERLIB_STORE": str(tmp_path / "store.db"), "MPLBACKEND": "Agg"}


def test_every_snippet_file_is_run_here():
    assert sorted(p.name for p in SNIPPETS.glob("*.py")) == sorted(RUNS)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_snippet_runs(name, tmp_path):
    args, expected, needs_gcc = RUNS[name]
    if needs_gcc and not HAS_GCC:
        pytest.skip(NO_GCC)
    if name == "analysis.py":
        pytest.importorskip("pandas", reason="the [analysis] extra (pandas) is not installed")
    env = _sandbox(tmp_path)
    database = ["--database", str(tmp_path / "t.db")] if args else []
    proc = subprocess.run([sys.executable, str(SNIPPETS / name), *args, *database], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert expected in proc.stdout


def test_docs_hold_python_only_as_included_files():
    """A Python block written into a page could rot unseen: pages include files that run here."""
    inline, missing = [], []
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        inline += [page.name for _ in re.finditer(r"^```python", text, re.M)]
        for target in re.findall(r"^```\{(?:literalinclude|include)\} (\S+)", text, re.M):
            if not (page.parent / target).resolve().is_file():
                missing.append(f"{page.relative_to(DOCS)}: {target}")
    assert not inline, f"write these Python blocks as docs/snippets files and literalinclude them: {inline}"
    assert not missing


def test_the_readme_is_short_and_its_python_blocks_are_snippet_files():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    snippets = {p.read_text(encoding="utf-8"): p.name for p in SNIPPETS.glob("*.py")}
    assert [snippets.get(b) for b in blocks] == ["quick_tuner.py", "ask_tell.py"]


def _commands(page: Path) -> list:
    """The page's runnable commands, in order."""
    found = []
    for block, figure in MARKED.findall(page.read_text(encoding="utf-8")):
        found.append(block if block else "\n".join(line[2:] for line in figure.splitlines()))
    return found


def _marked_pages():
    return [p for p in _pages() if _commands(p)]


def _small(command: str) -> str:
    """The command at a small budget, without the installation step it may start with."""
    command = re.sub(r"^pip install [^&]*&&\s*", "", command)
    command = re.sub(r"--test-limit (\d+)", lambda m: f"--test-limit {max(2, int(m.group(1)) // 10)}", command)
    return re.sub(r"--size \d+", "--size 48", command)


@pytest.mark.parametrize("page", _marked_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_marked_commands_run(page, tmp_path):
    script = "\n".join(_small(c) for c in _commands(page))
    if not HAS_GCC and ("tutorial" in script or "quick_tuner" in script):
        pytest.skip(NO_GCC)
    if "tunerlib report" in script:
        pytest.importorskip("matplotlib", reason="tunerlib report's figures need the [plot] extra")
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=_sandbox(tmp_path),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{script}\n{proc.stderr[-3000:]}"


def test_the_tsp_guide_python_block_runs():
    shared = Path(os.environ.get("TUNERLIB_SHARED_DIR", REPO.parent / "shared")) / "data" / "tsplib"
    if not (shared / "berlin52.tsp").is_file() or not (shared / "berlin52.opt.tour").is_file():
        pytest.skip("the shared TSPLIB folder (berlin52.tsp, berlin52.opt.tour) is absent")
    text = (REPO / "examples" / "tsp" / "README.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    code += "\nassert tsplib.tour_length(inst.matrix, tour) == 7542\n"
    proc = subprocess.run([sys.executable, "-c", code], cwd=shared, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO / "examples" / "tsp")})
    assert proc.returncode == 0, proc.stderr[-3000:]

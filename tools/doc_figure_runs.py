"""Running a figure's commands for tools/doc_figures.py, each in a sandbox copy of the repository.

:func:`run_figure` is called for every figure that ``--check`` or ``--update`` re-runs: it runs the
figure's commands in order and returns their output lines, or None and one line saying why a command
failed (an exit status, a timeout).  Each command runs from a temporary folder of symlinks to the
repository's entries (:func:`_sandbox`), with ``../shared`` linking the shared data folder
(:func:`shared_dir`) and the files it writes redirected into that folder; the shared folder's absolute
path in the output is written ``../shared``.
"""
from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from tools.doc_figure_pages import Figure

#: the repository root: the sandbox links its entries, and doc_figures.py reads its pages from it
REPO = Path(__file__).resolve().parent.parent
#: options whose value is a file the run writes: redirected into the temporary folder when absolute
_WRITTEN = ("--database", "--results-log", "--summary-json", "--final-config", "--json")


def _split_env(command: str) -> Tuple[Dict[str, str], List[str]]:
    words = shlex.split(command)
    env = {}
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    return env, words


def shared_dir() -> Path:
    """The shared data folder: $TUNERLIB_SHARED_DIR or ../shared beside the repository."""
    return Path(os.environ.get("TUNERLIB_SHARED_DIR") or REPO.parent / "shared").resolve()


def _sandbox(root: Path) -> Path:
    """A temporary repository root: symlinks to the repository's entries (not .git, nor a results
    database in the checkout with its -wal, -shm and -journal files, which a run there may be writing
    and deleting: a command's own default database is made fresh); ``../shared`` the shared folder."""
    work = root / "repo"
    work.mkdir()
    for entry in REPO.iterdir():
        if entry.name != ".git" and not entry.name.startswith("tunerlib.db"):
            (work / entry.name).symlink_to(entry)
    if shared_dir().exists():
        (root / "shared").symlink_to(shared_dir())
    return work


def _argv(words: List[str], folder: Path) -> List[str]:
    argv = list(words)
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    for i, word in enumerate(argv[:-1]):
        if word in _WRITTEN and os.path.isabs(argv[i + 1]):
            argv[i + 1] = str(folder / ("out-" + os.path.basename(argv[i + 1])))
    return argv


def run_figure(fig: Figure, timeout: Optional[float] = None) -> Tuple[Optional[List[str]], str]:
    """(the output lines of the figure's commands, one after the other, "") or (None, why one failed)."""
    lines: List[str] = []
    deadline = time.monotonic() + (timeout or fig.timeout)
    for command in fig.commands:
        out, why = _run_command(command, max(1.0, deadline - time.monotonic()))
        if out is None:
            return None, why if len(fig.commands) == 1 else f"`{command}` {why}"
        lines += out
    return lines, ""


def _run_command(command: str, timeout: float) -> Tuple[Optional[List[str]], str]:
    env_words, words = _split_env(command)
    with tempfile.TemporaryDirectory(prefix="readme-figure-") as tmp:
        root = Path(tmp)
        work = _sandbox(root)
        (root / "tmp").mkdir()
        env = dict(os.environ, TUNERLIB_SHARED_DIR=str(root / "shared"), TMPDIR=str(root / "tmp"),
                   TUNERLIB_STORE=str(root / "store.db"), PYTHONHASHSEED="0")
        env.update(env_words)
        if "TUNERLIB_SHARED_DIR" in env_words:
            env["TUNERLIB_SHARED_DIR"] = str((work / env_words["TUNERLIB_SHARED_DIR"]).resolve())
        try:       # its own session, so a timeout stops the processes it started too
            proc = subprocess.Popen(_argv(words, root), cwd=work, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, start_new_session=True)
        except OSError as exc:
            return None, f"cannot run: {exc}"
        try:
            text, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return None, f"timed out after {timeout:g} s (raise timeout= in its marker)"
        if proc.returncode != 0:
            tail = (err.strip().splitlines() or ["no output on stderr"])[-1]
            return None, f"exited with {proc.returncode}: {tail}"
        for prefix in {str(root / "shared"), str(shared_dir()), os.path.realpath(root / "shared")}:
            text = text.replace(prefix, "../shared")
        text = text.replace(str(work) + os.sep, "")
        return [line.rstrip() for line in text.rstrip("\n").split("\n")], ""

"""The product does not narrate how it was made: no tracked file (this one aside) names a work session,
an issue number, a scratch script, a "was X until" history, or the design document that is not part
of the repository (the documentation's architecture page replaces it)."""
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve().relative_to(REPO).as_posix()
PATTERNS = re.compile(r"session [0-9]|issue [0-9]|scratch script|\bwas \w+ until\b|design\.md", re.I)


def _tracked():
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, timeout=60)
    if proc.returncode != 0:
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [REPO / name for name in proc.stdout.decode().split("\0") if name and name != THIS]


def test_no_history_narration_in_tracked_files():
    found = []
    for path in _tracked():
        if not path.is_file() or path.suffix in (".png", ".svg", ".gz", ".db"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if PATTERNS.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:100]}")
    assert not found, "history in the product (say what the code does, not how it came to be):\n" + "\n".join(found)

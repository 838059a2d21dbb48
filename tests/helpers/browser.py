"""A real headless browser for the tests: Chromium from the distribution's packages (``.ci/run`` installs
it where it can). :func:`chromium` skips the test with the reason where none is installed."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import List

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run")


def chromium() -> str:
    """Path of a Chromium-like browser; skips the test when there is none."""
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless browser: install Chromium (apt-get install -y chromium) to render the report")


def run_browser(args: List[str], timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the browser headless with a throwaway profile and ``args`` (e.g. ``--dump-dom URL``)."""
    with tempfile.TemporaryDirectory(prefix="tunerlib-chromium-") as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                              text=True, timeout=timeout)


def dump_dom(path: Path) -> str:
    """The DOM of the local file ``path`` after the browser loaded it, serialised as HTML."""
    proc = run_browser(["--dump-dom", path.resolve().as_uri()])
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def screenshot(path: Path, png: Path, size: str = "1200,3000") -> bytes:
    """A PNG screenshot of the local file ``path``."""
    proc = run_browser([f"--screenshot={png}", f"--window-size={size}", path.resolve().as_uri()])
    assert proc.returncode == 0 and png.exists(), proc.stderr[-2000:]
    return png.read_bytes()

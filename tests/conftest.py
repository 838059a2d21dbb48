"""Shared test set-up: tests/helpers is importable (``from procs import ...``); the PostgreSQL fixtures
``postgres_server`` and ``postgres_url`` (tests/helpers/pg.py) are available to every test module."""
import atexit
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "helpers"))
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (a checkout's harness)

from pg import postgres_server, postgres_url  # noqa: E402,F401  (fixtures registered for all tests)

# No test may read or write the user's own cross-session store: the default store of this session is
# a file in a fresh temporary directory (tests that use a store pass --store / a URL explicitly).
# The library has no default shared data folder; the tests read ../shared beside the repository (as CI
# lays it out) unless TUNERLIB_SHARED_DIR names another.
os.environ.setdefault("TUNERLIB_SHARED_DIR", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                          os.pardir, "shared"))
# The suite starts several hundred Python processes (tuner scripts, workers, CLI commands). Where the
# environment forbids bytecode caching (PYTHONDONTWRITEBYTECODE), each of them would compile every
# tunerlib module from source again; the tests cache bytecode outside the repository instead, in one
# folder under the temporary directory shared by the test processes and their children (CPython checks
# each cached file against its source and writes it atomically). The folder is this user's own.


def _private_cache_dir() -> str:
    path = os.path.join(tempfile.gettempdir(), f"tunerlib-test-pycache-{os.getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.stat(path)
        if info.st_uid == os.getuid() and not info.st_mode & 0o022:
            return path
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="tunerlib-test-pycache-")


_PYCACHE = _private_cache_dir()
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ["PYTHONPYCACHEPREFIX"] = _PYCACHE
sys.dont_write_bytecode = False
sys.pycache_prefix = _PYCACHE
_STORE_DIR = tempfile.mkdtemp(prefix="tunerlib-test-store-")
os.environ["TUNERLIB_STORE"] = os.path.join(_STORE_DIR, "store.db")
# each test process (the controller and every xdist worker) removes its own store folder when it exits
atexit.register(shutil.rmtree, _STORE_DIR, ignore_errors=True)


def pytest_xdist_auto_num_workers(config):
    """How many test processes ``-n auto`` (setup.cfg's addopts) starts: one per core and one more, at
    most 8, since part of the suite waits on the tuner processes it starts, their sleeps and their time
    limits (on 2 cores, 3 processes took 238 s, 4 took 249 s and 2 took 336 s).
    ``TUNERLIB_TEST_WORKERS=N`` overrides it; ``-n 0`` runs everything in this process."""
    override = os.environ.get("TUNERLIB_TEST_WORKERS")
    if override:
        return int(override)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(2, min(8, cores + 1))

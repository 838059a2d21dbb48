"""Shared test set-up: tests/helpers is importable (``from procs import ...``)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "helpers"))

# No test may read or write the user's own cross-session store: the default store of this session is
# a file in a fresh temporary directory (tests that use a store pass --store / a URL explicitly).
import tempfile  # noqa: E402

os.environ["TUNERLIB_STORE"] = os.path.join(tempfile.mkdtemp(prefix="tunerlib-test-store-"), "store.db")

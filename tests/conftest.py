"""Shared test set-up: tests/helpers is importable (``from procs import ...``); the PostgreSQL fixtures
``postgres_server`` and ``postgres_url`` (tests/helpers/pg.py) are available to every test module."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "helpers"))

from pg import postgres_server, postgres_url  # noqa: E402,F401  (fixtures registered for all tests)

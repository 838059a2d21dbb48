"""Fixtures of the reporting tests (tests/helpers/reportkit.py)."""
from reportkit import empty_db, results_db  # noqa: F401

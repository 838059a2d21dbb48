"""Fixtures of the dashboard tests (tests/helpers/dashkit.py)."""
from dashkit import writer  # noqa: F401

"""Shared test set-up: tests/helpers is importable (``from procs import ...``)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "helpers"))

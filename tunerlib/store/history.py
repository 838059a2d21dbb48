"""The ``tunerlib history`` command: the starter history shipped with tunerlib, from a store.

    tunerlib history starter --store history.db      # writes tunerlib/store/starter_history.json.gz

The store is filled by tuning runs uploaded with ``tunerlib upload``, or, for the shipped starter
history, by the benchmark harness of a checkout (``python -m tools.history generate``: runs with
random search approaches on the benchmark problems, uploaded as they finish).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .starter import STARTER_PATH, write_starter
from .schema import StoreError
from .crosssession import CrossSessionStore

__all__ = ["add_command", "main_starter"]


def add_command(sub: Any) -> None:
    """Add ``history`` to the ``tunerlib`` command's subparsers ``sub`` (called by its parser)."""
    history = sub.add_parser("history", help="the starter history shipped with tunerlib, from a store",
                             description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = history.add_subparsers(dest="action", required=True)
    starter = actions.add_parser("starter", help="write the starter history shipped with tunerlib (package "
                                                 "data) from a store")
    starter.add_argument("--store", help="store URL or path (default $TUNERLIB_STORE or the user data directory)")
    starter.add_argument("--out", help="file to write (default: the package's tunerlib/store/starter_history.json.gz)")
    starter.set_defaults(handler=main_starter)


def main_starter(ns: argparse.Namespace) -> int:
    """Run ``tunerlib history starter``; returns the exit code (one-line errors with exit code 2)."""
    out = Path(ns.out) if ns.out else STARTER_PATH
    try:
        with CrossSessionStore(ns.store, create=False) as store:
            rows = write_starter(store, out)
    except (StoreError, OSError) as exc:
        print(f"tunerlib: error: history starter: {exc}", file=sys.stderr)
        return 2
    runs = len({row[1] for row in rows.snapshots})
    print(f"starter history: {len(rows.representations)} representations, {runs} runs, "
          f"{len(rows.snapshots)} snapshots in {out} ({out.stat().st_size / 1024:.1f} KiB)")
    return 0

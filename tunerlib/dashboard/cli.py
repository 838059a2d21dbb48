"""The ``tunerlib dashboard`` command: a local web page following runs live (extra ``[dashboard]``).

Checks before it serves, each a one-line error with exit code 2: plotly is installed (its offline
bundle draws the charts), every ``DB_URL`` is an existing results database it can read, and the port
can be bound. Nothing heavier than argparse is imported until the command runs.
"""
from __future__ import annotations

import argparse
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any, List

__all__ = ["DEFAULT_PORT", "add_command", "plotly_bundle"]

#: the port ``tunerlib dashboard`` listens on unless ``--port`` says otherwise
DEFAULT_PORT = 8050
_EXTRA = "pip install 'tunerlib[dashboard]'"


class DashboardError(Exception):
    """The dashboard cannot start; the message is one line naming the fix."""


def plotly_bundle() -> Path:
    """The path of ``plotly.min.js`` in the installed plotly package (found without importing it);
    DashboardError when plotly is not installed or lacks its bundle."""
    try:
        spec = find_spec("plotly")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise DashboardError(f"the dashboard draws its charts with plotly, which is not installed: {_EXTRA}")
    for folder in spec.submodule_search_locations:
        bundle = Path(folder) / "package_data" / "plotly.min.js"
        if bundle.is_file():
            return bundle
    raise DashboardError(f"the installed plotly has no offline bundle (package_data/plotly.min.js): "
                         f"reinstall it with {_EXTRA}")


def add_command(sub: Any) -> None:
    """Add ``dashboard`` to the ``tunerlib`` subcommands (called by the command's parser)."""
    parser = sub.add_parser(
        "dashboard", help="a local web page following tuning runs live (extra [dashboard])",
        description="Serve a web page that follows the runs of one or more results databases live: "
                    "runs with state, progress and best value; best so far against evaluations and "
                    "seconds; techniques' allocation and new bests; parameter importance, slice and "
                    "parallel-coordinates views; the technique's decisions; failed results with their "
                    "text. It only reads the databases. JSON API under /api/ (see the dashboard guide).")
    parser.add_argument("databases", nargs="+", metavar="DB_URL",
                        help="results database: file path or SQLAlchemy URL (SQLite or PostgreSQL)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 lets "
                             "every machine that reaches this one read the runs)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="N",
                        help=f"port to listen on (default {DEFAULT_PORT}; 0: any free port)")
    parser.set_defaults(handler=run_command)


def run_command(ns: argparse.Namespace) -> int:
    """Body of ``tunerlib dashboard``: check, open, serve until Ctrl-C; the exit code."""
    from ..db import DatabaseError
    opened: List[Any] = []
    try:
        server = _start(ns, opened)
    except (DashboardError, DatabaseError) as exc:
        for db in opened:
            db.close()
        print(f"tunerlib dashboard: error: {exc}", file=sys.stderr)
        return 2
    from .server import serve
    serve(server, lambda url: print(f"tunerlib dashboard: following {_runs_text(server)} at {url} "
                                    "(Ctrl-C stops)", flush=True))
    return 0


def _start(ns: argparse.Namespace, opened: List[Any]) -> Any:
    """The bound server of ``ns``'s databases (appended to ``opened`` as they open)."""
    if not 0 <= ns.port <= 65535:
        raise DashboardError(f"--port {ns.port}: pass a port number from 0 to 65535")
    bundle = plotly_bundle()
    from .board import Board
    from .server import DashboardServer
    from .source import ReadOnlyDatabase
    for url in ns.databases:
        opened.append(ReadOnlyDatabase(url))
    try:
        return DashboardServer((ns.host, ns.port), Board(opened), bundle)
    except OSError as exc:
        raise DashboardError(f"cannot listen on {ns.host}:{ns.port} ({exc.strerror or exc}): "
                             "pass another --port (0: any free one) or --host") from None


def _runs_text(server: Any) -> str:
    names = ", ".join(db.display_url for db in server.board.databases)
    return f"the runs of {names}"


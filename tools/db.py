"""Results-database maintenance from the command line.

    python -m tunerlib.tools.db migrate URL   # upgrade a database to this tunerlib's schema (back it up first)
    python -m tunerlib.tools.db runs URL      # one line per tuning run: uuid, program, version, state,
                                              # tests, label, start date (ISO 8601)

URL is a file path (a SQLite database) or a SQLAlchemy URL. Neither command creates a database that does
not exist. Errors are one line on stderr with exit code 2.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence, TextIO

from tunerlib.db import DatabaseError
from tunerlib.db import format_run, list_runs, migrate_database

PROG = "python -m tunerlib.tools.db"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of this tool (subcommands ``migrate`` and ``runs``)."""
    parser = argparse.ArgumentParser(prog=PROG, description="tunerlib results-database maintenance")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    migrate = sub.add_parser("migrate", help="upgrade a results database to the current schema version")
    migrate.add_argument("database", metavar="URL", help="file path or SQLAlchemy URL")
    runs = sub.add_parser("runs", help="list the tuning runs in a results database")
    runs.add_argument("database", metavar="URL", help="file path or SQLAlchemy URL")
    return parser


def run_command(command: str, url: str, out: TextIO, err: TextIO, prog: str = PROG) -> int:
    """Run ``migrate`` or ``runs`` on ``url``, writing to ``out``/``err``; returns the exit code."""
    try:
        if command == "migrate":
            out.write(migrate_database(url) + "\n")
        else:
            runs = list_runs(url)
            for info in runs:
                out.write(format_run(info) + "\n")
            if not runs:
                err.write(f"{prog}: no tuning runs in {url}\n")
    except DatabaseError as exc:
        err.write(f"{prog}: error: {exc}\n")
        return 2
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``python -m tunerlib.tools.db``; returns the process exit code."""
    ns = build_parser().parse_args(argv)
    return run_command(ns.command, ns.database, sys.stdout, sys.stderr)


if __name__ == "__main__":
    sys.exit(main())

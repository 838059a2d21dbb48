"""The ``tunerlib`` command (a tuner script's own command line is :mod:`tunerlib.script.main`)."""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from .db import DatabaseError
from .errors import UsageError
from .logs import add_arguments as add_log_arguments, cli_logging
from .script.main import list_techniques, quiet_when_stdout_closes


def _add_plugin_commands(sub) -> None:
    """Commands other packages add (entry-point group ``tunerlib.commands``: ``add(subparsers)``, which
    sets ``handler``)."""
    from importlib.metadata import entry_points
    for entry in entry_points(group="tunerlib.commands"):
        try:
            entry.load()(sub)
        except ImportError as exc:  # a broken plugin must not break the other commands
            print(f"tunerlib: warning: command {entry.name!r} unavailable: {exc}", file=sys.stderr)


def _add_worker_command(sub) -> None:
    """``tunerlib worker``: measure a run's requests on this machine (:mod:`tunerlib.executors.remote`)."""
    worker = sub.add_parser("worker", help="measure the requests of a --distributed run on this machine")
    worker.add_argument("--database", required=True, metavar="URL", help="the run's results database")
    worker.add_argument("--interface", required=True, metavar="MODULE:CLASS",
                        help="the tuner script's MeasurementInterface: module:Class or path/to/tuner.py:Class")
    worker.add_argument("--machine-class", metavar="NAME", help="machine class recorded with every result")
    worker.add_argument("--parallelism", type=int, default=1, metavar="N", help="worker processes (default 1)")
    worker.add_argument("--lease", type=float, default=30.0, metavar="S",
                        help="a claim not renewed for S seconds is measured by another worker (default 30)")
    worker.add_argument("--run", metavar="UUID", help="serve this run (a unique prefix will do)")
    worker.add_argument("--label", help="serve the newest running run with this label")
    worker.add_argument("--quiet", action="store_true", help="print errors only")

    def handler(ns) -> int:
        from .executors.remote import WorkerSettings, serve
        return serve(WorkerSettings(ns.database, ns.interface, ns.machine_class, ns.parallelism, ns.lease,
                                    ns.run, ns.label, ns.quiet))
    worker.set_defaults(handler=handler)


def build_parser() -> argparse.ArgumentParser:
    """The parser of the ``tunerlib`` command, every subcommand included (plugins' too); called by
    :func:`main` and by the documentation's generated CLI reference."""
    parser = argparse.ArgumentParser(prog="tunerlib", description="tunerlib autotuning framework")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("techniques", help="list registered techniques")
    runs = sub.add_parser("runs", help="list the tuning runs in a results database")
    runs.add_argument("database", metavar="URL", help="file path or SQLAlchemy URL")
    migrate = sub.add_parser("migrate", help="upgrade a results database to the current schema version")
    migrate.add_argument("database", metavar="URL", help="file path or SQLAlchemy URL")
    errors = sub.add_parser("errors", help="print the full error text of every ERROR result")
    errors.add_argument("database", metavar="URL", help="file path or SQLAlchemy URL")
    errors.add_argument("--run", metavar="UUID", help="only this run (a unique UUID prefix will do)")
    from .store.cli import add_commands
    add_commands(sub)
    from .report.cli import add_commands as add_report_commands
    add_report_commands(sub)
    from .dashboard.cli import add_command as add_dashboard_command
    add_dashboard_command(sub)
    _add_worker_command(sub)
    from .store.history import add_command as add_history_command
    add_history_command(sub)
    _add_plugin_commands(sub)
    _add_log_options(parser)
    return parser


def _add_log_options(parser: argparse.ArgumentParser) -> None:
    """``--log-level`` and ``-v/--verbose`` on every (sub)command that does not have them yet."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                if "--log-level" not in child._option_string_actions:
                    add_log_arguments(child)
                _add_log_options(child)


@quiet_when_stdout_closes
def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``tunerlib`` command: ``techniques``, ``runs URL``, ``errors URL``, ``migrate URL``, ``worker``
    (:mod:`tunerlib.executors.remote`), ``upload
    RESULTS_DB`` and ``store QUERY`` (:mod:`tunerlib.store.cli`), ``plot``, ``report`` and ``export``
    (:mod:`tunerlib.report.cli`); returns the exit code.

    ``history`` is :mod:`tunerlib.store.history`; ``runs``, ``errors`` and ``migrate`` are
    :mod:`tunerlib.db.admin`; database errors are one line on stderr with exit code 2.
    """
    ns = build_parser().parse_args(argv)
    with cli_logging(getattr(ns, "log_level", None), getattr(ns, "verbose", False), getattr(ns, "quiet", False)):
        return _command(ns)


def _command(ns: argparse.Namespace) -> int:
    """Run the parsed ``tunerlib`` subcommand (the rest of :func:`main`); the exit code."""
    if getattr(ns, "handler", None) is not None:
        return ns.handler(ns)
    if ns.command in ("upload", "store"):
        from .store.cli import run_command
        return run_command(ns)
    if ns.command == "techniques":
        list_techniques(sys.stdout)
        return 0
    from .db.admin import error_texts, migrate_database
    from .report.runlist import run_table, write_table
    try:
        if ns.command == "migrate":
            print(migrate_database(ns.database))
            return 0
        if ns.command == "errors":
            for uuid, result_id, text in error_texts(ns.database, ns.run):
                print(f"=== run {uuid}, result {result_id}\n{text}")
            return 0
        header, rows = run_table(ns.database)
    except (DatabaseError, UsageError) as exc:
        print(f"tunerlib: error: {exc}", file=sys.stderr)
        return 2
    if rows:
        write_table(header, rows, sys.stdout)
    else:
        print(f"tunerlib: no tuning runs in {ns.database}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

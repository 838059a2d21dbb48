"""Command-line entry points: a tuner script's ``main()`` and the ``tunerlib`` command."""
from __future__ import annotations

import argparse
import functools
import os
import select
import signal
import sys
from typing import Callable, Optional, Sequence, TextIO, Type, TypeVar

from .db import DatabaseError
from .objectives import ObjectiveError
from .parameters import ConfigurationError, ParameterError
from .engine.search import TunerScriptError
from .techniques import TechniqueError, registry
from .errors import UsageError
from .options import own_docstring
from .engine.run import TuningRun

#: errors reported as one line (exit code 2) instead of a traceback
USER_ERRORS = (UsageError, DatabaseError, TechniqueError, ConfigurationError, ParameterError,
               TunerScriptError, ObjectiveError)


_Entry = TypeVar("_Entry", bound=Callable[..., int])


def quiet_when_stdout_closes(entry: _Entry) -> _Entry:
    """Wrap a command-line entry point (a tuner script's ``main()``, the ``tunerlib`` command) so that
    output piped into a reader that stops early (``| head``) ends it quietly, as SIGPIPE ends other
    commands: no traceback, exit status 128 + SIGPIPE.  Whatever was recorded stays; a broken pipe to
    anything but stdout (a worker, a database connection) is still an error."""
    @functools.wraps(entry)
    def wrapper(*args, **kwargs) -> int:
        try:
            return entry(*args, **kwargs)
        except BrokenPipeError:
            if not _stdout_closed():
                raise
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
            return 128 + signal.SIGPIPE
    return wrapper  # type: ignore[return-value]


def _stdout_closed() -> bool:
    """True when nobody reads stdout any more (its pipe's reader has gone)."""
    try:
        sys.stdout.flush()
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except BrokenPipeError:
        return True
    except (OSError, ValueError, AttributeError):  # not a real file, or no poll() on this platform
        return False


def list_techniques(out: TextIO) -> None:
    """Print every registered technique with its one-line description."""
    entries = registry().describe()
    width = max(len(name) for name, _ in entries)
    for name, desc in entries:
        out.write(f"{name:<{width}}  {desc}\n")


@quiet_when_stdout_closes
def run_interface_main(cls: Type, args: Optional[Sequence[str]] = None) -> int:
    """Body of ``MeasurementInterface.main``: parse, handle the info flags, tune, summarise."""
    options = cls.Options.parse(args, description=own_docstring(cls))
    if options.list_techniques:
        list_techniques(sys.stdout)
        return 0
    try:
        interface = cls(options)
        if options.print_params or options.print_search_space_size:
            manipulator = interface.manipulator()
            if options.print_params:
                seeds = list(interface.seed_configurations())
                manipulator.print_params(sys.stdout, default=seeds[0] if seeds else None)
            if options.print_search_space_size:
                print(f"log10 search space size: {manipulator.log10_search_space_size():.2f}")
            return 0
        run = TuningRun(interface, options)
        if run.resumed and "version_change" in run.resumed_from:
            print(f"{cls.__name__}: {run.resumed_from['version_change']}", file=sys.stderr)
        if run.resumed and not options.quiet:
            info = run.resumed_from
            print(f"{cls.__name__}: resuming run {info['uuid']} ({info['tests']} tests so far, seed "
                  f"{info['seed']}, state {info['state']})", file=sys.stderr)
        summary = run.run()
    except USER_ERRORS as exc:
        print(f"{cls.__name__}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{cls.__name__}: interrupted before the run started; nothing was measured", file=sys.stderr)
        return 130
    return _report(cls.__name__, options, summary)


def _report(name: str, options, summary) -> int:
    """Print the end of a run (the summary, or one line when a signal stopped it); the exit code."""
    if options.summary_json:
        summary.write_json(options.summary_json)
    if summary.signal is not None:
        print(f"{name}: {summary.interrupted_line()}", file=sys.stderr)
        return summary.exit_code
    print(summary.render())
    if summary.exit_code:
        states = summary.states_text() or "no results"
        hint = f"; first error {summary.first_error}" if summary.first_error else ""
        print(f"{name}: error: no measurement succeeded ({states}){hint}", file=sys.stderr)
    return summary.exit_code


def _add_plugin_commands(sub) -> None:
    """Commands other packages add (entry-point group ``tunerlib.commands``: ``add(subparsers)``, which
    sets ``handler``); tunerlib.tools adds ``history`` this way, so core never imports tools."""
    from importlib.metadata import entry_points
    for entry in entry_points(group="tunerlib.commands"):
        try:
            entry.load()(sub)
        except ImportError as exc:  # a broken plugin must not break the other commands
            print(f"tunerlib: warning: command {entry.name!r} unavailable: {exc}", file=sys.stderr)


def _add_worker_command(sub) -> None:
    """``tunerlib worker``: measure a run's requests on this machine (:mod:`tunerlib.remote`)."""
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
    _add_worker_command(sub)
    _add_plugin_commands(sub)
    return parser


@quiet_when_stdout_closes
def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``tunerlib`` command: ``techniques``, ``runs URL``, ``errors URL``, ``migrate URL``, ``worker``
    (:mod:`tunerlib.remote`), ``upload
    RESULTS_DB`` and ``store QUERY`` (:mod:`tunerlib.store.cli`), ``plot``, ``report`` and ``export``
    (:mod:`tunerlib.report.cli`); returns the exit code.

    ``runs`` and ``migrate`` do what ``python -m tunerlib.tools.db`` does (shared code in
    :mod:`tunerlib.db.admin`); database errors are one line on stderr with exit code 2.
    """
    parser = build_parser()
    ns = parser.parse_args(argv)
    if getattr(ns, "handler", None) is not None:
        return ns.handler(ns)
    if ns.command in ("upload", "store"):
        from .store.cli import run_command
        return run_command(ns)
    if ns.command == "techniques":
        list_techniques(sys.stdout)
        return 0
    from .db.admin import error_texts, format_run, list_runs, migrate_database
    try:
        if ns.command == "migrate":
            print(migrate_database(ns.database))
            return 0
        if ns.command == "errors":
            for uuid, result_id, text in error_texts(ns.database, ns.run):
                print(f"=== run {uuid}, result {result_id}\n{text}")
            return 0
        infos = list_runs(ns.database)
    except DatabaseError as exc:
        print(f"tunerlib: error: {exc}", file=sys.stderr)
        return 2
    for info in infos:
        print(format_run(info))
    if not infos:
        print(f"tunerlib: no tuning runs in {ns.database}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

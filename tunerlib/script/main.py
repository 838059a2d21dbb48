"""The tuner script's command line: what ``MeasurementInterface.main()`` does (parse the options, answer
the info flags, tune, print the summary), and the exit codes a command line gives."""
from __future__ import annotations

import functools
import os
import select
import signal
import sys
from typing import Callable, Optional, Sequence, TextIO, Type, TypeVar

from ..db import DatabaseError
from ..engine.run import TuningRun
from ..errors import TunerScriptError, UsageError
from ..logs import options_logging
from ..objectives import ObjectiveError
from ..options import own_docstring
from ..parameters import ConfigurationError, ParameterError
from ..techniques import TechniqueError, registry

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
    with options_logging(options):
        return _run_interface(cls, options)


def _run_interface(cls: Type, options) -> int:
    """Handle the info flags, tune, summarise (the rest of :func:`run_interface_main`)."""
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
        info = run.resumed_from
        if info is not None and "version_change" in info:
            print(f"{cls.__name__}: {info['version_change']}", file=sys.stderr)
        if info is not None and not options.quiet:
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

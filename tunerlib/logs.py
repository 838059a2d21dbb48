"""Log levels of the ``tunerlib`` command and of tuner scripts (``--log-level``, ``-v/--verbose``).

tunerlib reports through :mod:`logging`: every module logs to its own logger under ``tunerlib.``
(``logging.getLogger(__name__)``), so one setting controls them all. A library caller that configures
nothing sees warnings and errors only (Python's default). The command-line entry points call
:func:`configure`, which prints the ``tunerlib`` loggers' records on stderr as one line each
(``tunerlib: <message>``; ``tunerlib: warning: ...`` for warnings and errors; the logger's name too
at debug level), at ``info`` by default, ``warning`` with ``--quiet`` and ``debug`` with ``-v``.
"""
from __future__ import annotations

import argparse
import logging
import sys
from contextlib import contextmanager
from typing import Any, Iterator, Optional

__all__ = ["LEVELS", "add_arguments", "cli_logging", "configure", "configured", "level_of", "options_logging", "tell"]

#: the values of ``--log-level``
LEVELS = ("debug", "info", "warning", "error")
ROOT = "tunerlib"


class _Stderr(logging.Handler):
    """Writes each record to the current ``sys.stderr`` (not the one at start: tests and callers may
    replace it) as one line."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:  # noqa: BLE001  (logging must never break the run)
            self.handleError(record)


class _Format(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        if record.levelno >= logging.WARNING:
            return f"tunerlib: {record.levelname.lower()}: {text}"
        if record.levelno < logging.INFO:
            return f"tunerlib: debug: {record.name}: {text}"
        return f"tunerlib: {text}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--log-level`` and ``-v/--verbose`` to a command's parser (called for every ``tunerlib``
    subcommand; tuner scripts get them as :class:`~tunerlib.options.TuningOptions` fields)."""
    parser.add_argument("--log-level", choices=LEVELS, default=None,
                        help="what tunerlib reports on stderr (default info; warning with --quiet)")
    parser.add_argument("-v", "--verbose", action="store_true", help="the same as --log-level debug")


def level_of(log_level: Optional[str], verbose: bool = False, quiet: bool = False) -> int:
    """The logging level the options ask for: ``--verbose`` is debug, an explicit ``--log-level``
    wins over ``--quiet``, else info (warning with ``--quiet``)."""
    if verbose:
        return logging.DEBUG
    if log_level:
        if log_level not in LEVELS:
            from .errors import UsageError
            raise UsageError(f"--log-level {log_level}: expected one of {', '.join(LEVELS)}")
        return getattr(logging, log_level.upper())
    return logging.WARNING if quiet else logging.INFO


def configure(log_level: Optional[str] = None, verbose: bool = False, quiet: bool = False) -> int:
    """Print the ``tunerlib`` loggers' records at the level the options ask for (:func:`level_of`) on
    stderr from now on; returns that level. Calling it again changes the level and keeps one handler.
    Entry points use :func:`cli_logging`, which undoes this when they return."""
    level = level_of(log_level, verbose, quiet)
    logger = logging.getLogger(ROOT)
    logger.setLevel(level)
    if not configured():
        handler = _Stderr()
        handler.setFormatter(_Format())
        logger.addHandler(handler)
    return level


@contextmanager
def cli_logging(log_level: Optional[str] = None, verbose: bool = False, quiet: bool = False) -> Iterator[int]:
    """:func:`configure` for the duration of one command-line entry point (the ``tunerlib`` command,
    a tuner script's ``main()``); the logger's level and handlers are restored afterwards, so a
    process that calls an entry point and then the library is not left configured."""
    logger = logging.getLogger(ROOT)
    before, handlers = logger.level, list(logger.handlers)
    try:
        yield configure(log_level, verbose, quiet)
    finally:
        logger.setLevel(before)
        for handler in list(logger.handlers):
            if handler not in handlers:
                logger.removeHandler(handler)


def configured() -> bool:
    """Whether a command-line entry point has called :func:`configure` in this process."""
    return any(isinstance(h, _Stderr) for h in logging.getLogger(ROOT).handlers)


def tell(logger: logging.Logger, level: int, text: str, quiet: bool = False) -> None:
    """Report ``text`` at ``level``: through ``logger`` where an entry point configured logging (its
    level decides), else, for library callers that configured nothing, on stderr as before
    (``tunerlib: text``, ``tunerlib: warning: text``), info lines only unless ``quiet``."""
    if configured():
        logger.log(level, text)
    elif level >= logging.WARNING or not quiet:
        prefix = f"{logging.getLevelName(level).lower()}: " if level >= logging.WARNING else ""
        print(f"tunerlib: {prefix}{text}", file=sys.stderr)


def options_logging(options: Any) -> Any:
    """:func:`cli_logging` from a tuner script's options (``log_level``, ``verbose``, ``quiet``)."""
    return cli_logging(getattr(options, "log_level", None), bool(getattr(options, "verbose", False)),
                       bool(getattr(options, "quiet", False)))

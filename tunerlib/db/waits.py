"""Waiting out a SQLite database that another process keeps locked.

SQLite lets one writer in at a time; a connection that wants to write while another holds the write lock
waits up to its busy timeout (``TUNERLIB_BUSY_TIMEOUT`` seconds, default 30), then fails with "database is
locked". :class:`~tunerlib.db.storage.ResultsDB` takes the write lock at the start of every write
transaction (``BEGIN IMMEDIATE``), before anything is written, so a transaction that could not get it can
simply be tried again: it retries for up to :data:`LOCK_PATIENCE` seconds in all, so a measurement whose
result is being stored is never lost to a lock another program holds for a while (a backup, an editor, a
long query). :class:`LockWaits` says so in one line per incident.
"""
from __future__ import annotations

import os
import sqlite3
import sys
import time
from typing import Callable, Optional, Protocol, Set

from sqlalchemy.exc import OperationalError

from .models import DatabaseError

__all__ = ["BUSY_TIMEOUT_VARIABLE", "LOCK_PATIENCE", "LockNotices", "LockWaits", "busy_timeout", "is_lock_error",
           "wait_for_lock"]

#: the environment variable with the SQLite busy timeout in seconds
BUSY_TIMEOUT_VARIABLE = "TUNERLIB_BUSY_TIMEOUT"
_DEFAULT_BUSY_TIMEOUT = 30.0

#: seconds a transaction keeps trying to get a lock before it fails with DatabaseError
LOCK_PATIENCE = 600.0


def busy_timeout() -> float:
    """The SQLite busy timeout in seconds (``TUNERLIB_BUSY_TIMEOUT``, default 30); DatabaseError with
    the fix when the variable is not a positive number."""
    text = os.environ.get(BUSY_TIMEOUT_VARIABLE, "").strip()
    if not text:
        return _DEFAULT_BUSY_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise DatabaseError(f"{BUSY_TIMEOUT_VARIABLE}={text!r} is not a positive number of seconds: unset it "
                            f"or set e.g. {BUSY_TIMEOUT_VARIABLE}=30")
    return value


def is_lock_error(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" / "database table is locked" (another connection holds
    the lock past the busy timeout)."""
    orig = getattr(exc, "orig", None) or exc
    if not isinstance(orig, (sqlite3.OperationalError, OperationalError)):
        return False
    name = getattr(orig, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "is locked" in str(orig)


class LockNotices(Protocol):
    """What :func:`wait_for_lock` tells about a wait: :class:`LockWaits`, or a worker's messenger to its pool."""

    def waiting(self, who: str, text: str, since: Optional[float] = None) -> None:
        """``who`` could not get the lock since ``since``; ``text`` says what."""

    def done(self, who: str) -> None:
        """``who`` got the lock after waiting (or gave up)."""


class LockWaits:
    """Called by ResultsDB when a transaction could not get a lock (:meth:`waiting`, once per failed
    try) and when it got it after waiting (:meth:`done`). Prints one line per incident, however many
    processes report to it: when the first waiter starts waiting, unless its wait began before the
    last incident ended (a late report of that one). ``check`` is called between tries and may raise
    to stop waiting (a worker that was told to stop)."""

    def __init__(self, say: Optional[Callable[[str], None]] = None,
                 check: Optional[Callable[[], None]] = None) -> None:
        self.say = say if say is not None else _stderr
        self.check = check
        self._waiting: Set[str] = set()
        self._ended = float("-inf")  # time.monotonic() when the last incident ended

    def waiting(self, who: str, text: str, since: Optional[float] = None) -> None:
        """``who`` (a process or worker name) could not get the lock since ``since`` (``time.monotonic()``,
        which is the same clock in every process of a machine; default now); ``text`` says what."""
        if not self._waiting and (time.monotonic() if since is None else since) > self._ended:
            self.say(text)
        self._waiting.add(who)
        if self.check is not None:
            self.check()

    def done(self, who: str) -> None:
        """``who`` got the lock after waiting (or gave up): its part of the incident is over."""
        if who in self._waiting:
            self._waiting.discard(who)
            if not self._waiting:
                self._ended = time.monotonic()


def _stderr(text: str) -> None:
    print(f"tunerlib: {text}", file=sys.stderr, flush=True)


def wait_for_lock(attempt: Callable[[], object], waits: LockNotices, who: str, display: str,
                  failure: Callable[[Exception], DatabaseError]) -> object:
    """``attempt()``, tried again while it fails only because the database is locked, for up to
    :data:`LOCK_PATIENCE` s (then ``failure(exc)`` is raised); reports the wait to ``waits``."""
    started: Optional[float] = None
    try:
        while True:
            try:
                return attempt()
            except (sqlite3.OperationalError, OperationalError) as exc:
                if not is_lock_error(exc):
                    raise failure(exc) from exc
                now = time.monotonic()
                started = now if started is None else started
                if now - started >= LOCK_PATIENCE:
                    raise failure(exc) from exc
                waits.waiting(who, f"database {display} is locked by another process; waiting for it "
                                   f"(up to {LOCK_PATIENCE:.0f} s), nothing is lost", started)
    finally:
        if started is not None:
            waits.done(who)

"""Maintenance of results databases, shared by ``tunerlib runs|migrate`` and ``python -m tunerlib.tools.db``.

Each function takes the ``--database`` value (a path or a SQLAlchemy URL), does one job and returns plain
data or text; errors are :class:`~tunerlib.db.models.DatabaseError` with a one-line message, which the
command-line front ends print and turn into exit code 2. Nothing here creates a database that does not
exist.
"""
from __future__ import annotations

import os
from datetime import datetime
from typing import Any, Optional

from .migrations import _sqlite_path, migrate, resolve_url
from .models import DatabaseError
from .storage import ResultsDB

__all__ = ["display_url", "format_run", "list_runs", "migrate_database", "require_existing"]


def display_url(url: Optional[str]) -> str:
    """How ``url`` is shown in messages: the file path for SQLite files, else the URL without password."""
    sa_url = resolve_url(url)
    return _sqlite_path(sa_url) or sa_url.render_as_string(hide_password=True)


def require_existing(url: Optional[str]) -> None:
    """Raise DatabaseError when ``url`` names a SQLite file that does not exist (called before opening
    a database only to read it, so that a mistyped path is reported instead of created)."""
    path = _sqlite_path(resolve_url(url))
    if path is not None and not os.path.isfile(path):
        raise DatabaseError(f"no database file {path}: pass the path of an existing tunerlib database")


def list_runs(url: Optional[str]) -> list[dict]:
    """The tuning runs of an existing database in id order (see :meth:`ResultsDB.list_runs`)."""
    require_existing(url)
    with ResultsDB(url) as database:
        return database.list_runs()


def migrate_database(url: Optional[str]) -> str:
    """Upgrade an existing database to this tunerlib's schema; returns the one-line report.

    ``"migrated X from version a to b"`` or ``"X already at version N"``; errors as for
    :func:`tunerlib.db.migrate` (back the database up first).
    """
    old, new = migrate(url)
    shown = display_url(url)
    if old == new:
        return f"{shown} already at version {new}"
    return f"migrated {shown} from version {old} to {new}"


def _iso(timestamp: Any) -> str:
    """Unix seconds as local ISO 8601 with the UTC offset, or ``-`` when missing."""
    if timestamp is None:
        return "-"
    return datetime.fromtimestamp(float(timestamp)).astimezone().isoformat(timespec="seconds")


def format_run(info: dict) -> str:
    """One line for a :meth:`ResultsDB.list_runs` entry: uuid, program, version, state, tests, label,
    start date (ISO 8601)."""
    label = info["label"] if info["label"] is not None else "-"
    return (f"{info['uuid']}  {info['program']}  {info['version']}  {info['state']}  "
            f"tests={info['tests']}  label={label}  started={_iso(info['start_date'])}")

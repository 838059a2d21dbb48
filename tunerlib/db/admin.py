"""Maintenance of results databases: the ``tunerlib runs|errors|migrate`` commands.

Each function takes the ``--database`` value (a path or a SQLAlchemy URL), does one job and returns plain
data or text; errors are :class:`~tunerlib.db.models.DatabaseError` with a one-line message, which the
command-line front ends print and turn into exit code 2. Nothing here creates a database that does not
exist.
"""
from __future__ import annotations

import os
import socket
from datetime import datetime
from typing import Any, Optional

from .lifecycle import process_alive
from .migrations import _sqlite_path, migrate, resolve_url
from .models import DatabaseError
from .storage import ResultsDB

__all__ = ["display_url", "error_text", "error_texts", "format_run", "list_runs", "migrate_database",
           "require_existing"]


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


def shown_state(info: dict) -> str:
    """The run's state as it really is: a RUNNING run of this machine whose process is gone was
    killed (``KILLED``, continue it with ``--resume``); one of another machine says where it runs."""
    if info["state"] != "RUNNING" or not info.get("host"):
        return info["state"]
    if info["host"] != socket.gethostname():
        return f"RUNNING(on {info['host']})"
    return "RUNNING" if process_alive(info.get("pid")) else "KILLED"


def format_run(info: dict) -> str:
    """One line for a :meth:`ResultsDB.list_runs` entry: uuid, program, version, state (as it really
    is: see :func:`shown_state`), tests, label, start date (ISO 8601), seed."""
    label = info["label"] if info["label"] is not None else "-"
    return (f"{info['uuid']}  {info['program']}  {info['version']}  {shown_state(info)}  "
            f"tests={info['tests']}  label={label}  started={_iso(info['start_date'])}  "
            f"seed={info.get('seed')}")


def error_texts(url: Optional[str], run_uuid: Optional[str] = None) -> list[tuple[str, int, str]]:
    """(run uuid, result id, full error text) of every ERROR result, of one run when ``run_uuid``
    (a unique prefix) is given; DatabaseError for an unknown or ambiguous run."""
    require_existing(url)
    with ResultsDB(url) as database:
        runs = database.list_runs()
        if run_uuid is not None:
            runs = [r for r in runs if r["uuid"].startswith(run_uuid)]
            if len(runs) != 1:
                raise DatabaseError(f"--run {run_uuid}: {'no' if not runs else len(runs)} runs match in "
                                    f"{display_url(url)}; `tunerlib runs` lists them")
        return [(run["uuid"], rid, error_text(extra))
                for run in runs for rid, extra in database.error_results(run["id"])]


def error_text(extra: Any) -> str:
    """The full text of a failed result's ``extra`` (traceback, error, stderr), or ``(no error text)``."""
    if not isinstance(extra, dict):
        return "(no error text)"
    parts = [extra[key].rstrip() for key in ("traceback", "error", "stderr")
             if isinstance(extra.get(key), str) and extra[key].strip()]
    if len(parts) > 1 and parts[1] in parts[0]:  # the traceback already ends with the error line
        parts.pop(1)
    return "\n".join(parts) or "(no error text)"

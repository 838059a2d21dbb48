"""The followed databases and their runs, shared by the server's request threads.

:class:`Board` answers the API's questions: the runs of every database (``/api/runs``) and one run by
its UUID or a unique prefix of it (``/api/runs/<id>``), each refreshed from its database on every
request. A run is followed (its results cached, see :class:`~tunerlib.dashboard.follow.RunFollower`)
from the first time it is listed or asked for.
"""
from __future__ import annotations

import threading
from typing import Any, Dict, List, Sequence, Tuple

from ..db import DatabaseError
from .follow import RunFollower
from .source import ReadOnlyDatabase

__all__ = ["Board", "UnknownRun"]


class UnknownRun(LookupError):
    """No followed database has a run with that id (or the prefix names several): the API's 404."""


class Board:
    """The databases given to ``tunerlib dashboard`` and a follower per run seen in them."""

    def __init__(self, databases: Sequence[ReadOnlyDatabase]) -> None:
        """Follow ``databases`` (opened read-only by the command); nothing is read until asked."""
        self.databases = list(databases)
        self._followers: Dict[str, Tuple[ReadOnlyDatabase, RunFollower]] = {}
        self._lock = threading.Lock()

    def _follower(self, db: ReadOnlyDatabase, info: dict) -> RunFollower:
        with self._lock:
            found = self._followers.get(info["uuid"])
            if found is None:
                found = self._followers[info["uuid"]] = (db, RunFollower(db, info))
        return found[1]

    def runs(self) -> Tuple[List[Dict[str, Any]], List[Tuple[ReadOnlyDatabase, RunFollower]]]:
        """(one entry per database: its URL and the error that kept it from being read, or None;
        every run of the databases that could be read, refreshed, in database then run order)."""
        sources: List[Dict[str, Any]] = []
        found: List[Tuple[ReadOnlyDatabase, RunFollower]] = []
        for db in self.databases:
            try:
                infos = db.runs()
                followers = [self._follower(db, info) for info in infos]
                for follower, info in zip(followers, infos):
                    follower.refresh(info)
            except DatabaseError as exc:
                sources.append({"url": db.display_url, "runs": None, "error": str(exc)})
                continue
            sources.append({"url": db.display_url, "runs": len(infos), "error": None})
            found += [(db, follower) for follower in followers]
        return sources, found

    def run(self, run_id: str) -> Tuple[ReadOnlyDatabase, RunFollower]:
        """The run whose UUID is ``run_id`` or starts with it, refreshed; UnknownRun when none or
        several match (DatabaseError when a database cannot be read)."""
        with self._lock:
            known = self._followers.get(run_id)
        if known is not None:
            info = known[0].run(run_id)
            if info is not None:
                known[1].refresh(info)
                return known
        matches = [(db, info) for db in self.databases for info in db.runs() if info["uuid"].startswith(run_id)]
        if len(matches) != 1:
            raise UnknownRun(f"{'no' if not matches else len(matches)} runs match {run_id!r}")
        db, info = matches[0]
        follower = self._follower(db, info)
        follower.refresh(info)
        return db, follower

    def close(self) -> None:
        """Release every database's connections (when the dashboard stops)."""
        for db in self.databases:
            db.close()


"""Technique state and run artifacts: JSON records of a run, one per (run, name), inserted or replaced.

Technique state (``technique_state``) is what a technique needs to resume; run artifacts
(``run_artifact``, schema 4) are what the run keeps for the reports at its end (:mod:`tunerlib.engine.final_config`).
:class:`NamedRecords` is a mixin of :class:`tunerlib.db.storage.ResultsDB` (each method one short
transaction through ``self._tx`` / ``self._read``).
"""
from __future__ import annotations

import sqlite3
import time
from typing import Any, Optional

from sqlalchemy import Table, bindparam, delete, select, update
from sqlalchemy.exc import IntegrityError

from .models import RunArtifact, TechniqueState

__all__ = ["NamedRecords"]

_INTEGRITY_ERRORS = (IntegrityError, sqlite3.IntegrityError)


def _statements(table: Table) -> tuple:
    """(load, update, insert, delete) of the JSON ``data`` of one (run, name) row of ``table``."""
    where = (table.c.tuning_run_id == bindparam("run"), table.c.name == bindparam("tname"))
    return (select(table.c.data).where(*where),
            update(table).where(*where).values(data=bindparam("d"), updated=bindparam("t")),
            table.insert(), delete(table).where(*where))


_TECHNIQUE_STATE, _RUN_ARTIFACT = _statements(TechniqueState), _statements(RunArtifact)


class NamedRecords:
    """Technique state and run artifacts of :class:`~tunerlib.db.storage.ResultsDB`."""

    _tx: Any
    _read: Any

    def save_technique_state(self, run_id: int, name: str, data: Any) -> None:
        """Insert or replace the JSON state of technique ``name`` in the run."""
        self._save_named(_TECHNIQUE_STATE, run_id, name, data)

    def load_technique_state(self, run_id: int, name: str) -> Optional[Any]:
        """The saved JSON state of technique ``name`` in the run, or None."""
        rows = self._read(_TECHNIQUE_STATE[0], {"run": run_id, "tname": name})
        return rows[0][0] if rows else None

    def save_run_artifact(self, run_id: int, name: str, data: Any) -> None:
        """Insert or replace the run's JSON artifact ``name``; None removes it."""
        if data is None:
            with self._tx() as runner:
                runner.write(_RUN_ARTIFACT[3], {"run": run_id, "tname": name})
        else:
            self._save_named(_RUN_ARTIFACT, run_id, name, data)

    def load_run_artifact(self, run_id: int, name: str) -> Optional[Any]:
        """The run's JSON artifact ``name``, or None."""
        rows = self._read(_RUN_ARTIFACT[0], {"run": run_id, "tname": name})
        return rows[0][0] if rows else None

    def _save_named(self, statements: tuple, run_id: int, name: str, data: Any) -> None:
        _, upd, ins, _ = statements
        params = {"run": run_id, "tname": name, "d": data, "t": time.time()}
        for attempt in range(3):
            try:
                with self._tx() as runner:
                    if runner.write(upd, params) == 0:
                        runner.insert(ins, {"tuning_run_id": run_id, "name": name, "data": data,
                                            "updated": params["t"]})
                return
            except _INTEGRITY_ERRORS:  # inserted concurrently: the next attempt updates it
                if attempt == 2:
                    raise

"""Identity rows: programs and their versions, machines and their classes, inputs and their classes,
each got or created by key.  :class:`IdentityRows` is a mixin of :class:`tunerlib.db.storage.ResultsDB`
(each method short transactions through ``self._tx`` / ``self._read``).
"""
from __future__ import annotations

import hashlib
import sqlite3
from typing import Any, Optional

from sqlalchemy import Table, select, update
from sqlalchemy.exc import IntegrityError

from .models import Input, InputClass, Machine, MachineClass, NotFoundError, Program, ProgramVersion

__all__ = ["IdentityRows"]

_INTEGRITY_ERRORS = (IntegrityError, sqlite3.IntegrityError)
_PV = ProgramVersion


class IdentityRows:
    """Get-or-create of the identity rows of :class:`~tunerlib.db.storage.ResultsDB`."""

    _tx: Any
    _read: Any

    def program_version_id(self, project: str, program: str, version: str, parameter_info: str) -> int:
        """Get or create a program version (called at run start). ``parameter_info`` is the canonical
        text of the search space; versions differing only in it are distinct rows."""
        program_id = self._get_or_create(Program, {"project": project, "name": program})
        digest = hashlib.sha256(parameter_info.encode("utf-8")).hexdigest()
        return self._get_or_create(_PV, {"program_id": program_id, "version": version,
                                         "parameter_info_hash": digest},
                                   {"parameter_info": parameter_info})

    def machine_id(self, name: str, machine_class: Optional[str] = None,
                   cpu_count: Optional[int] = None) -> int:
        """Get or create the machine ``name`` (host name); a given class / cpu_count updates it."""
        class_id = (self._get_or_create(MachineClass, {"name": machine_class})
                    if machine_class is not None else None)
        table = Machine
        values = {"machine_class_id": class_id, "cpu_count": cpu_count}
        machine = self._get_or_create(table, {"name": name}, values)
        changes = {k: v for k, v in values.items() if v is not None}
        if changes:
            with self._tx() as runner:
                runner.write(update(table).where(table.c.id == machine).values(**changes), {}, cache=False)
        return machine

    def input_id(self, program_version_id: int, input_class: str, path: Optional[str] = None,
                 size: Optional[int] = None, extra: Optional[dict] = None) -> int:
        """Get or create an input. Input classes belong to the *program* of ``program_version_id``
        (shared by all its versions), keyed by (name, size); inputs are keyed by (class, path).
        ``extra`` (JSON) is stored on the input when it is created."""
        rows = self._read(select(_PV.c.program_id).where(_PV.c.id == program_version_id), {}, cache=False)
        if not rows:
            raise NotFoundError(f"no program version with id {program_version_id}")
        class_id = self._get_or_create(InputClass, {"program_id": rows[0][0],
                                                              "name": input_class, "size": size})
        return self._get_or_create(Input, {"input_class_id": class_id, "path": path},
                                   {"extra": extra})

    def _get_or_create(self, table: Table, key: dict, values: Optional[dict] = None) -> int:
        """Id of the row of ``table`` matching ``key`` (None matches NULL), inserted if missing."""
        cond = [table.c[k].is_(None) if v is None else table.c[k] == v for k, v in key.items()]
        query = select(table.c.id).where(*cond).order_by(table.c.id).limit(1)
        for attempt in range(3):
            try:
                with self._tx() as runner:
                    rows = runner.rows(query, {}, cache=False)
                    if rows:
                        return int(rows[0][0])
                    return int(runner.insert(table.insert(), {**key, **(values or {})}, cache=False))
            except _INTEGRITY_ERRORS:  # another process inserted the same key first: select it
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

"""Configurations and measurement requests: getting or creating a configuration, queueing a request,
claiming one.  :class:`RequestWrites` is a mixin of :class:`tunerlib.db.storage.ResultsDB` (each method one
short transaction through ``self._tx`` / ``self._read``).

A request is written REQUESTED and claimed later by whoever measures it (:meth:`RequestWrites.claim_next`),
or, for the run's own in-process executor, written already claimed (:meth:`RequestWrites.request_and_claim`):
the same rows, one transaction instead of two.
"""
from __future__ import annotations

import time
from importlib import import_module
from typing import Any, Optional

from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError

from .migrations import json_dumps
from .models import Claim, Configuration, DesiredResult
from .jsoncopy import json_copy
from .runners import JSONText

__all__ = ["RequestWrites"]

_CFG, _DR = Configuration, DesiredResult
_INS_DR = _DR.insert()
_SEL_CONFIG = select(_CFG.c.id).where(_CFG.c.program_version_id == bindparam("pv"),
                                      _CFG.c.hash == bindparam("h"))
_CONFIG_DATA = select(_CFG.c.data).where(_CFG.c.id == bindparam("cfg"))
_PICK = (select(_DR.c.id, _DR.c.configuration_id, _CFG.c.hash, _CFG.c.data, _DR.c.limit, _DR.c.requestor,
                _DR.c.generation)
         .join_from(_DR, _CFG, _DR.c.configuration_id == _CFG.c.id)
         .where(_DR.c.tuning_run_id == bindparam("run"), _DR.c.state == "REQUESTED")
         .order_by(_DR.c.id).limit(1))
_CLAIM = (update(_DR).where(_DR.c.id == bindparam("dr"), _DR.c.state == "REQUESTED")
          .values(state="RUNNING", worker=bindparam("w"), start_date=bindparam("t"), heartbeat=bindparam("t"),
                  lease=bindparam("lease")))


def insert_config_ignoring_duplicates(dialect: str) -> Any:
    """The dialect's ``INSERT ... ON CONFLICT DO NOTHING`` into configuration (None for other dialects);
    the dialect module is imported here, when a database of that dialect is opened."""
    if dialect not in ("sqlite", "postgresql"):
        return None
    module = import_module(f"sqlalchemy.dialects.{dialect}")
    return module.insert(_CFG).on_conflict_do_nothing()


class RequestWrites:
    """The request side of :class:`~tunerlib.db.storage.ResultsDB`."""

    _tx: Any
    _read: Any
    _ins_config: Any
    _fast: bool

    def configuration_id(self, program_version_id: int, hash: str, data: Any) -> int:
        """Get or create the configuration with this hash (``data``, JSON, is stored when created)."""
        params = {"pv": program_version_id, "h": hash}
        rows = self._read(_SEL_CONFIG, params)
        if rows:
            return rows[0][0]
        with self._tx() as runner:
            return self._insert_configuration(runner, program_version_id, hash, data)[0]

    def _insert_configuration(self, runner: Any, program_version_id: int, hash: str, data: Any) -> tuple[int, bool]:
        """Get or create the configuration inside the caller's transaction: its id (another process's,
        when it created the same one first) and whether this call created it."""
        values = {"program_version_id": program_version_id, "hash": hash, "data": data}
        if self._ins_config is not None:  # INSERT ... ON CONFLICT DO NOTHING
            new_id = runner.insert(self._ins_config, values)
        else:
            try:
                with runner.conn.begin_nested():
                    new_id = runner.insert(_CFG.insert(), values)
            except IntegrityError:
                new_id = None
        if new_id is None:  # it exists: created earlier, or concurrently by another process
            return int(runner.rows(_SEL_CONFIG, {"pv": program_version_id, "h": hash})[0][0]), False
        return int(new_id), True

    def request_configuration(self, run_id: int, program_version_id: int, hash: str, data: Any, requestor: str,
                              generation: int, limit: Optional[float] = None) -> int:
        """Get or create the configuration and queue a measurement of it (state REQUESTED, claimed oldest
        first), in one transaction; returns the request's id."""
        with self._tx() as runner:
            cfg_id = self._insert_configuration(runner, program_version_id, hash, data)[0]
            return runner.insert(_INS_DR, {
                "tuning_run_id": run_id, "configuration_id": cfg_id, "requestor": requestor,
                "generation": generation, "limit": limit, "state": "REQUESTED", "request_date": time.time()})

    def request_and_claim(self, run_id: int, program_version_id: int, hash: str, data: Any, requestor: str,
                          generation: int, limit: Optional[float], worker: str) -> Claim:
        """Get or create the configuration and write a request of it already claimed by ``worker``
        (RUNNING, no lease), in one transaction: :meth:`request_configuration` and :meth:`claim_next`
        of it at once, for the run's in-process executor, which measures each request as soon as it is
        written.  A process killed after the commit leaves the request RUNNING, as one killed while
        measuring does (``--resume`` measures it again).  The claim is the one :meth:`claim_next` would
        give: its ``config_data`` is the stored configuration (a copy, through JSON)."""
        now, text = time.time(), json_dumps(data)
        with self._tx() as runner:
            cfg_id, created = self._insert_configuration(runner, program_version_id, hash,
                                                         JSONText(text) if self._fast else data)
            dr_id = runner.insert(_INS_DR, {
                "tuning_run_id": run_id, "configuration_id": cfg_id, "requestor": requestor,
                "generation": generation, "limit": limit, "state": "RUNNING", "request_date": now,
                "worker": worker, "start_date": now, "heartbeat": now, "lease": None})
            stored = json_copy(data, text) if created else runner.rows(_CONFIG_DATA, {"cfg": cfg_id})[0][0]
        if created and self._fast:  # its result can reach the run's poll without a read (see .tail)
            runner.tail.requested(dr_id, run_id, cfg_id, hash, json_copy(data, text), requestor)
        return Claim(dr_id, run_id, cfg_id, hash, stored, limit, requestor, generation)

    def claim_next(self, run_id: int, worker: str, lease: Optional[float] = None) -> Optional[Claim]:
        """Atomically claim the oldest REQUESTED desired result of the run (by id) for
        ``worker`` and mark it RUNNING; None when nothing is requested. Safe across processes: the
        conditional UPDATE is checked by its row count (a claim lost to another worker is retried).
        ``lease`` (seconds): the claim is re-queued unless its heartbeat is renewed (:mod:`.leases`)."""
        while True:
            with self._tx() as runner:
                rows = runner.rows(_PICK, {"run": run_id})
                if not rows:
                    return None  # the empty read transaction ends with the commit
                row = rows[0]
                won = runner.write(_CLAIM, {"dr": row[0], "w": worker, "t": time.time(), "lease": lease})
            if won == 1:
                return Claim(row[0], run_id, row[1], row[2], row[3], row[4], row[5], row[6])

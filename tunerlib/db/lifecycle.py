"""Run lifecycle queries of the results database: who drives a run, which run ``--resume`` continues,
what happens to unfinished requests when a run stops, and the error texts of a run.

:class:`RunLifecycle` is a mixin of :class:`tunerlib.db.storage.ResultsDB`: every method runs in its own
short transaction (``self._tx`` / ``self._read`` of the storage class) and commits before it returns.
"""
from __future__ import annotations

import os
import time
from typing import Any, Optional

from sqlalchemy import and_, bindparam, func, or_, select, update

from .models import (DesiredResult, Machine, MachineClass, NotFoundError, Program, ProgramVersion, Result, ResultPlace,
                     TuningRun)

__all__ = ["RunLifecycle", "process_alive"]

_RUN, _DR, _RES = TuningRun, DesiredResult, Result
_UNFINISHED = or_(_DR.c.state == "REQUESTED", _DR.c.state == "RUNNING")
_REQUEUABLE = or_(_DR.c.state == "CANCELLED", _DR.c.state == "RUNNING")
_SET_DR_STATE = update(_DR).where(_DR.c.id == bindparam("dr")).values(state=bindparam("s"), worker=None,
                                                                       start_date=None)
_RESULT_COUNT = (select(func.count()).select_from(_RES).where(_RES.c.tuning_run_id == _RUN.c.id)
                 .correlate(_RUN).scalar_subquery())
_REQUEST_COUNT = (select(func.count()).select_from(_DR).where(_DR.c.tuning_run_id == _RUN.c.id)
                  .correlate(_RUN).scalar_subquery())
_RUN_SUMMARY = select(_RUN.c.id, _RUN.c.uuid, _RUN.c.program_version_id, _RUN.c.label, _RUN.c.seed,
                      _RUN.c.state, _RUN.c.args, _RUN.c.host, _RUN.c.pid, _RUN.c.script_version, _RESULT_COUNT,
                      _REQUEST_COUNT)
_RUN_SUMMARY_KEYS = ("id", "uuid", "program_version_id", "label", "seed", "state", "args", "host", "pid",
                     "script_version", "tests", "requests")
_PV, _PROG = ProgramVersion, Program
_MACHINE, _MCLASS = Machine, MachineClass
_EXPORT = (select(_RUN.c.uuid, _RUN.c.state, _RUN.c.start_date, _RUN.c.end_date, _RUN.c.seed, _RUN.c.args,
                  _RUN.c.objective, _PROG.c.project, _PROG.c.name, _PV.c.version, _PV.c.parameter_info,
                  _MCLASS.c.name)
           .join_from(_RUN, _PV, _RUN.c.program_version_id == _PV.c.id)
           .join(_PROG, _PV.c.program_id == _PROG.c.id)
           .outerjoin(_MACHINE, _RUN.c.machine_id == _MACHINE.c.id)
           .outerjoin(_MCLASS, _MACHINE.c.machine_class_id == _MCLASS.c.id)
           .where(_RUN.c.id == bindparam("run")))
_EXPORT_KEYS = ("uuid", "state", "start_date", "end_date", "seed", "args", "objective", "project", "program",
                "version", "parameter_info", "machine_class")
_ERRORS = (select(_RES.c.id, _RES.c.extra).where(_RES.c.tuning_run_id == bindparam("run"),
                                                  _RES.c.state == "ERROR")
           .order_by(_RES.c.id))
_RESULT_PLACES = (select(_RES.c.id, _MACHINE.c.name, _MCLASS.c.name, _RES.c.worker)
                  .outerjoin_from(_RES, _MACHINE, _RES.c.machine_id == _MACHINE.c.id)
                  .outerjoin(_MCLASS, _MACHINE.c.machine_class_id == _MCLASS.c.id)
                  .where(_RES.c.tuning_run_id == bindparam("run"),
                         or_(_RES.c.machine_id.is_not(None), _RES.c.worker.is_not(None)))
                  .order_by(_RES.c.id))


def process_alive(pid: Optional[int]) -> bool:
    """True when a process with this id exists on this machine (it may belong to another user)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunLifecycle:
    """Mixin of ResultsDB: run ownership, run selection for ``--resume``, unfinished requests."""

    _tx: Any
    _read: Any

    # ----------------------------------------------------------------------------- ownership
    def take_run(self, run_id: int, host: str, pid: int, script_version: Optional[str] = None) -> None:
        """Mark the run RUNNING, driven by process ``pid`` on ``host`` (called when a resumed run
        starts, after every check passed); a given ``script_version`` replaces the run's."""
        values = {"state": "RUNNING", "end_date": None, "host": host, "pid": pid}
        if script_version is not None:
            values["script_version"] = script_version
        with self._tx() as runner:
            runner.write(update(_RUN).where(_RUN.c.id == run_id).values(**values), {}, cache=False)

    def run_export(self, run_id: int) -> dict:
        """What ``tunerlib upload`` needs of a run besides its results (see ResultsStore.run_export)."""
        rows = self._read(_EXPORT, {"run": run_id})
        if not rows:
            raise NotFoundError(f"no tuning run with id {run_id}")
        return dict(zip(_EXPORT_KEYS, rows[0]))

    def runs_of(self, program_version_id: int, label: Optional[str] = None) -> list[dict]:
        """The runs of a program version (with this label if given), newest first; each dict has id,
        uuid, program_version_id, label, seed, state, args, host, pid, script_version (None when not
        recorded), tests (result rows) and requests (desired result rows)."""
        query = _RUN_SUMMARY.where(_RUN.c.program_version_id == program_version_id)
        if label is not None:
            query = query.where(_RUN.c.label == label)
        return [dict(zip(_RUN_SUMMARY_KEYS, row))
                for row in self._read(query.order_by(_RUN.c.id.desc()), {}, cache=False)]

    def runs_with_uuid_prefix(self, prefix: str) -> list[dict]:
        """The runs whose UUID starts with ``prefix`` (same dicts as :meth:`runs_of`)."""
        query = _RUN_SUMMARY.where(_RUN.c.uuid.startswith(prefix, autoescape=True)).order_by(_RUN.c.id)
        return [dict(zip(_RUN_SUMMARY_KEYS, row)) for row in self._read(query, {}, cache=False)]

    # ------------------------------------------------------------------------- unfinished work
    def cancel_unfinished(self, run_id: int) -> int:
        """Set every REQUESTED or RUNNING desired result of the run to CANCELLED (called when a run stops,
        after its measurement processes are gone); returns how many. ``--resume`` measures them again."""
        stmt = (update(_DR).where(_DR.c.tuning_run_id == run_id, _UNFINISHED)
                .values(state="CANCELLED", worker=None))
        with self._tx() as runner:
            return runner.write(stmt, {}, cache=False)

    def requeue_unfinished(self, run_id: int, at_most: Optional[int] = None) -> int:
        """Put the run's CANCELLED and RUNNING desired results (oldest first, at most ``at_most``) back to
        REQUESTED (called when a run is resumed); the rest become CANCELLED. A claim whose lease is still
        alive (a ``tunerlib worker`` on another machine that kept measuring while the run was down) stays
        RUNNING and counts against ``at_most``. Returns how many were put back."""
        now = time.time()
        live = and_(_DR.c.state == "RUNNING", _DR.c.lease.is_not(None), _DR.c.heartbeat.is_not(None),
                    _DR.c.heartbeat + _DR.c.lease >= now)
        rows = self._read(select(_DR.c.id, live).where(_DR.c.tuning_run_id == run_id, _REQUEUABLE)
                          .order_by(_DR.c.id), {}, cache=False)
        ids = [row[0] for row in rows if not row[1]]
        held = len(rows) - len(ids)
        keep = len(ids) if at_most is None else max(0, min(at_most - held, len(ids)))
        if ids:
            with self._tx() as runner:
                runner.many(_SET_DR_STATE, [{"dr": dr, "s": "REQUESTED" if i < keep else "CANCELLED"}
                                            for i, dr in enumerate(ids)])
        return keep

    def tighten_limits(self, run_id: int, limit: float) -> int:
        """Lower the time limit of the run's REQUESTED desired results to ``limit`` where it is higher or
        unset (called by the search driver when a new best time shrinks the limit); returns how many."""
        stmt = (update(_DR).where(_DR.c.tuning_run_id == run_id, _DR.c.state == "REQUESTED",
                                  or_(_DR.c.limit.is_(None), _DR.c.limit > limit))
                .values(limit=limit))
        with self._tx() as runner:
            return runner.write(stmt, {}, cache=False)

    def running_claims(self, run_id: int, worker: str) -> list[int]:
        """Ids of the run's desired results that ``worker`` holds in state RUNNING."""
        query = select(_DR.c.id).where(and_(_DR.c.tuning_run_id == run_id, _DR.c.state == "RUNNING",
                                            _DR.c.worker == worker))
        return [row[0] for row in self._read(query, {}, cache=False)]

    # ---------------------------------------------------------------------------------- errors
    def error_results(self, run_id: int, limit: Optional[int] = None) -> list[tuple[int, Any]]:
        """(result id, extra) of the run's ERROR results in id order (at most ``limit``)."""
        query = _ERRORS if limit is None else _ERRORS.limit(limit)
        return [(row[0], row[1]) for row in self._read(query, {"run": run_id}, cache=False)]

    def result_places(self, run_id: int) -> dict[int, ResultPlace]:
        """{result id: where it was measured} of the run's results that name a machine or a worker."""
        return {row[0]: ResultPlace(row[1], row[2], row[3]) for row in self._read(_RESULT_PLACES, {"run": run_id})}

"""Reading a run back: its row, the list of runs, its results and requests in order, counts by state,
and marking new bests.  :class:`RunReads` is a mixin of :class:`tunerlib.db.storage.ResultsDB` (each
method one short transaction through ``self._tx`` / ``self._read``).
"""
from __future__ import annotations

from typing import Any, Sequence

from sqlalchemy import bindparam, func, select, update

from .models import (Configuration, DesiredResult, DesiredResultRow, NotFoundError, Program, ProgramVersion, Result,
                     ResultRow, TuningRun)

__all__ = ["RunReads"]

_PV, _CFG, _RUN = ProgramVersion, Configuration, TuningRun
_DR, _RES = DesiredResult, Result
_NEW_BEST = update(_RES).where(_RES.c.id == bindparam("rid")).values(was_new_best=True)
_RESULT_ROWS = (select(_RES.c.id, _RES.c.desired_result_id, _RES.c.configuration_id, _CFG.c.hash,
                       _CFG.c.data, _RES.c.state, _RES.c.time, _RES.c.accuracy, _RES.c.energy,
                       _RES.c.size, _RES.c.extra, _RES.c.was_new_best, _DR.c.requestor,
                       _RES.c.collection_cost, _RES.c.collection_date)
                .join_from(_RES, _CFG, _RES.c.configuration_id == _CFG.c.id)
                .outerjoin(_DR, _RES.c.desired_result_id == _DR.c.id)
                .where(_RES.c.tuning_run_id == bindparam("run")).order_by(_RES.c.id))
_RESULTS_AFTER = _RESULT_ROWS.where(_RES.c.id > bindparam("after"))
_DESIRED_ROWS = (select(_DR.c.id, _CFG.c.hash, _DR.c.requestor, _DR.c.generation, _DR.c.state,
                        _DR.c.result_id)
                 .join_from(_DR, _CFG, _DR.c.configuration_id == _CFG.c.id)
                 .where(_DR.c.tuning_run_id == bindparam("run")).order_by(_DR.c.id))
_COUNTS = (select(_RES.c.state, func.count()).where(_RES.c.tuning_run_id == bindparam("run"))
           .group_by(_RES.c.state))
_RUN_ROW = select(_RUN).where(_RUN.c.id == bindparam("run"))
_PROG = Program
_RESULT_COUNT = (select(func.count()).select_from(_RES).where(_RES.c.tuning_run_id == _RUN.c.id)
                 .correlate(_RUN).scalar_subquery())
_LIST_RUNS = (select(_RUN.c.id, _RUN.c.uuid, _PROG.c.project, _PROG.c.name, _PV.c.version, _RUN.c.label,
                     _RUN.c.state, _RESULT_COUNT, _RUN.c.start_date, _RUN.c.end_date, _RUN.c.seed,
                     _RUN.c.host, _RUN.c.pid, _RUN.c.script_version)
              .join_from(_RUN, _PV, _RUN.c.program_version_id == _PV.c.id)
              .join(_PROG, _PV.c.program_id == _PROG.c.id)
              .order_by(_RUN.c.id))
_LIST_RUNS_KEYS = ("id", "uuid", "project", "program", "version", "label", "state", "tests", "start_date",
                   "end_date", "seed", "host", "pid", "script_version")


class RunReads:
    """The read side of :class:`~tunerlib.db.storage.ResultsDB` (and ``mark_new_best``)."""

    _tx: Any
    _read: Any
    _runner: Any
    _fast: bool

    def run_info(self, run_id: int) -> dict:
        """Dict with id, uuid, program_version_id, label, args, seed, state, start_date, end_date,
        machine_id and objective of a run; NotFoundError if there is none."""
        rows = self._read(_RUN_ROW, {"run": run_id})
        if not rows:
            raise NotFoundError(f"no tuning run with id {run_id}")
        return dict(zip(_RUN.c.keys(), rows[0]))

    def list_runs(self) -> list[dict]:
        """Every tuning run in id order, one query (called by ``tunerlib runs`` and the db tool).

        Each dict has id, uuid, project, program (name), version, label, state, tests (number of result
        rows of the run), start_date, end_date, seed, host and
        pid (of the process that drives or drove the run), and the tuner script's version.
        """
        return [dict(zip(_LIST_RUNS_KEYS, row)) for row in self._read(_LIST_RUNS, {})]

    def mark_new_best(self, result_ids: Sequence[int]) -> None:
        """Set was_new_best on these results (one executemany)."""
        if result_ids:
            with self._tx() as runner:
                runner.many(_NEW_BEST, [{"rid": rid} for rid in result_ids])
            if self._fast:
                runner.tail.marked(result_ids)

    def results_after(self, run_id: int, after_result_id: int) -> list[ResultRow]:
        """Results of the run with id > ``after_result_id`` in id order (the search driver's poll). On
        SQLite, the results this connection wrote since its last read come without a read while no other
        connection committed (:mod:`.tail`)."""
        params = {"run": run_id, "after": after_result_id}
        if not self._fast:
            return [ResultRow(*row) for row in self._read(_RESULTS_AFTER, params)]
        runner = self._runner()
        version = runner.data_version()
        rows = runner.tail.take(run_id, after_result_id, version)
        if rows is None:
            rows = [ResultRow(*row) for row in self._read(_RESULTS_AFTER, params)]
            runner.tail.watch(run_id, rows[-1].id if rows else after_result_id, version)
        return rows

    def run_results(self, run_id: int) -> list[ResultRow]:
        """Every result of the run in id order (resume, summaries)."""
        return [ResultRow(*row) for row in self._read(_RESULT_ROWS, {"run": run_id})]

    def desired_results(self, run_id: int) -> list[DesiredResultRow]:
        """Every desired result of the run in id (request) order."""
        return [DesiredResultRow(*row) for row in self._read(_DESIRED_ROWS, {"run": run_id})]

    def counts_by_state(self, run_id: int) -> dict[str, int]:
        """{result state: number of results} of the run."""
        return {state: count for state, count in self._read(_COUNTS, {"run": run_id})}

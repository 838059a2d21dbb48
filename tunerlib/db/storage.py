"""ResultsDB: the results database shared by the search driver and the measurement workers.

Opening: ``ResultsDB(url)`` creates an engine per instance (:func:`tunerlib.db.migrations.open_engine`:
None -> ./tunerlib.db, a plain path -> SQLite file; SQLite gets WAL, ``synchronous=NORMAL``,
a busy timeout, ``foreign_keys=ON``), then creates and stamps a new database or checks the schema
version of an existing one (:func:`tunerlib.db.migrations.ensure_schema`).

Transactions: every method runs in its own short transaction and commits before it returns, so a result is
durable (it survives a SIGKILL of the process) once :meth:`ResultsDB.complete` has returned. On SQLite a write
transaction takes the write lock first (``BEGIN IMMEDIATE``); while another process holds it past the busy
timeout, the transaction is tried again (:mod:`tunerlib.db.waits`, one line per incident through
:attr:`ResultsDB.lock_waits`), so no result is lost to a lock.

Speed: statements are SQLAlchemy Core statements built once from the Core tables of :mod:`.models`. On SQLite they are
compiled once per instance and executed directly on the sqlite3 connection; other dialects execute them
through a SQLAlchemy Connection. Both runners live in :mod:`tunerlib.db.runners` and give the same results.

Processes and threads: an instance is not thread-safe; use one per thread. Every worker process -- forked
or spawned -- must create its own ``ResultsDB(url)``. An instance that is nevertheless used in a forked
child notices the new process id, abandons the inherited connection without closing it (the parent's
connection stays intact) and reconnects. A parent may call :meth:`ResultsDB.dispose` before forking.

Return types: ids are ints; :class:`~tunerlib.db.models.Claim`, :class:`~tunerlib.db.models.ResultRow` and
:class:`~tunerlib.db.models.DesiredResultRow` are frozen dataclasses; ``run_info`` and
``counts_by_state`` return plain dicts; JSON values come back as plain dicts/lists (treat as read-only).
Dates are Unix seconds (floats).
"""
from __future__ import annotations

import os
import sqlite3
import time as time_module
import uuid as uuid_module
from typing import Any, Optional

from sqlalchemy import BigInteger, bindparam, cast, false, func, or_, select, update
from sqlalchemy.exc import OperationalError

from .migrations import ensure_schema, json_dumps, open_engine
from .models import (RESULT_STATES, RUN_STATES, AlreadyCompleteError, DatabaseError, DesiredResult,
                     NotFoundError, Result, ResultRecord, TuningRun)
from .leases import LeaseQueries
from .identity import IdentityRows
from .named import NamedRecords
from .reads import RunReads
from .requests import RequestWrites, insert_config_ignoring_duplicates
from .notify import CHANNEL, ResultListener
from .lifecycle import RunLifecycle
from .runners import JSONText, _CoreRunner, _Runner, _SQLiteRunner
from .waits import LockNotices, LockWaits, is_lock_error, wait_for_lock

__all__ = ["ResultsDB"]

_OPERATIONAL_ERRORS = (OperationalError, sqlite3.OperationalError)
_ABANDONED: list = []  # connections inherited through fork: kept referenced so that they are never closed
_PROCESS = [os.getpid()]  # this process's id, kept current by a fork hook (os.getpid is a system call)
os.register_at_fork(after_in_child=lambda: _PROCESS.__setitem__(0, os.getpid()))


# ------------------------------------------------------------------------------------------ statements
_RUN = TuningRun
_DR, _RES = DesiredResult, Result

_INS_RUN, _INS_RES = _RUN.insert(), _RES.insert()
_SEL_DR = select(_DR.c.tuning_run_id, _DR.c.configuration_id).where(_DR.c.id == bindparam("dr"))
_OPEN = or_(_DR.c.state == "REQUESTED", _DR.c.state == "RUNNING")
_FINISH_DR = (update(_DR).where(_DR.c.id == bindparam("dr"), _OPEN)
              .values(state="COMPLETE", result_id=bindparam("rid"), heartbeat=None))
# SQLite: the result of an open request, its run and configuration copied from the request row in one statement
_RECORDED = ("machine_id", "input_id", "state", "time", "accuracy", "energy", "size", "extra", "collection_date",
             "collection_cost", "worker")
_INS_RES_OF_DR = _RES.insert().from_select(
    ["tuning_run_id", "configuration_id", "desired_result_id", *_RECORDED, "was_new_best"],
    select(_DR.c.tuning_run_id, _DR.c.configuration_id, _DR.c.id,
           *(bindparam(name, type_=_RES.c[name].type) for name in _RECORDED), false())
    .where(_DR.c.id == bindparam("dr"), _OPEN))
_NOTIFY = select(func.pg_notify(CHANNEL, bindparam("run_text")))
# PostgreSQL draws result ids from a sequence when a row is inserted, not when it commits: two workers
# completing at once can commit ids 8 and 7 in that order, and a poll for "id > 7" in between would
# never see 7. This per-run lock (held to the commit) makes a run's results commit in id order.
# Negative keys: the schema lock (migrations.SCHEMA_LOCK) is positive.
_RESULT_ORDER_LOCK = select(func.pg_advisory_xact_lock(-cast(bindparam("run"), BigInteger) - 1))



class _WriteTransaction:
    """The context manager :meth:`ResultsDB._tx` returns: on SQLite the write lock is taken on entry;
    the transaction is committed when the block ends normally, rolled back when it raises (a driver
    failure becomes a one-line DatabaseError).  A class rather than a generator: two of these run per
    evaluation."""

    __slots__ = ("db", "runner")

    def __init__(self, db: "ResultsDB") -> None:
        self.db = db
        self.runner: Optional[_Runner] = None

    def __enter__(self) -> _Runner:
        db = self.db
        runner = self.runner = db._runner()
        if db._sqlite:
            db._begin_write(runner)
        return runner

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        runner = self.runner
        assert runner is not None
        if kind is None:
            try:
                runner.commit()
            except _OPERATIONAL_ERRORS as failed:
                runner.rollback()
                raise self.db._failure(failed) from failed
            except BaseException:
                runner.rollback()
                raise
            return
        runner.rollback()
        if issubclass(kind, _OPERATIONAL_ERRORS):
            raise self.db._failure(exc) from exc


class ResultsDB(IdentityRows, RequestWrites, RunLifecycle, LeaseQueries, NamedRecords, RunReads):
    """Results database of tunerlib (see the module docstring for transactions, processes, row types)."""

    def __init__(self, url: Optional[str] = None) -> None:
        """Open (creating if needed) the database at ``url``: None -> ./tunerlib.db, a path -> SQLite file.

        Raises DatabaseError (or SchemaVersionError) with a one-line, actionable message.
        """
        self.engine, self.display_url = open_engine(url)
        try:
            ensure_schema(self.engine, self.display_url)
        except BaseException:
            self.engine.dispose()
            raise
        dialect = self.engine.dialect.name
        self._fast = self._sqlite = dialect == "sqlite"
        self._ins_config = insert_config_ignoring_duplicates(dialect)
        self._notify = dialect == "postgresql"
        self._pid = os.getpid()
        self._run: Optional[_Runner] = None
        self._closed = False
        #: told when a transaction waits for a lock another process holds (prints one line per incident)
        self.lock_waits: LockNotices = LockWaits()
        #: this process in the lock notices
        self.waiter = f"pid {os.getpid()}"

    # ----------------------------------------------------------------------------------- plumbing
    def _runner(self) -> _Runner:
        runner = self._run
        if runner is None or self._pid != _PROCESS[0]:
            if self._closed:
                raise DatabaseError(f"ResultsDB({self.display_url}) is closed: create a new ResultsDB")
            if self._pid != _PROCESS[0]:  # inherited through fork: never touch the parent's connection
                _ABANDONED.append(self._run)
                self.engine.dispose(close=False)
                self._pid = os.getpid()
            runner = self._run = _SQLiteRunner(self.engine) if self._fast else _CoreRunner(self.engine)
        return runner

    def _tx(self) -> "_WriteTransaction":
        """One write transaction (``with self._tx() as runner``): committed on success, rolled back on
        error."""
        return _WriteTransaction(self)

    def _read(self, stmt: Any, params: dict, cache: bool = True) -> list:
        """Run a SELECT and end its read transaction at once (no snapshot stays open); tried again
        while another process holds a lock that keeps it from reading."""
        runner = self._runner()
        try:
            return runner.rows(stmt, params, cache)
        except _OPERATIONAL_ERRORS as exc:
            if not is_lock_error(exc):
                raise self._failure(exc) from exc
        finally:
            runner.end_read()
        return self._waiting_out_locks(lambda: runner.rows(stmt, params, cache), runner)

    def _begin_write(self, runner: _Runner) -> None:
        """SQLite: take the write lock before the transaction does anything, tried again while another
        process holds it (nothing is written yet, so trying again is safe)."""
        try:
            runner.begin_write()
        except _OPERATIONAL_ERRORS as exc:
            runner.end_read()
            if not is_lock_error(exc):
                raise self._failure(exc) from exc
            self._waiting_out_locks(runner.begin_write, runner, keep_open=True)

    def _waiting_out_locks(self, call: Any, runner: _Runner, keep_open: bool = False) -> Any:
        """``call()`` (which writes nothing), tried again while another process holds the lock; the
        transaction it opens ends after each try unless ``keep_open`` (a write transaction it began)."""
        def attempt() -> Any:
            try:
                result = call()
            except BaseException:
                runner.end_read()
                raise
            if not keep_open:
                runner.end_read()
            return result
        return wait_for_lock(attempt, self.lock_waits, self.waiter, self.display_url, self._failure)

    def _failure(self, exc: Exception) -> DatabaseError:
        """One-line DatabaseError for a driver failure (SQLite: locked for too long, read-only file, disk full;
        a server: connection lost). The next call reconnects."""
        text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        fix = ("check that it is writable and not held by another program" if self.engine.dialect.name == "sqlite"
               else "check that the database server is running and reachable")
        if text and "disk is full" in text[0]:
            fix = "free space on its disk (what is recorded is kept)"
        return DatabaseError(f"database {self.display_url} failed: {text[0] if text else type(exc).__name__}"
                             f"; {fix}")

    def dispose(self) -> None:
        """Close the held connection and the engine's pool (a parent calls this before forking)."""
        if self._run is not None and self._pid == os.getpid():
            self._run.close()
        elif self._run is not None:
            _ABANDONED.append(self._run)
        self._run = None
        self.engine.dispose(close=self._pid == os.getpid())
        self._pid = os.getpid()

    def worker_url(self) -> str:
        """The URL measurement worker processes open (with its password: they connect with it)."""
        return self.engine.url.render_as_string(hide_password=False)

    def close(self) -> None:
        """Release all connections; the instance cannot be used afterwards."""
        self.dispose()
        self._closed = True

    def __enter__(self) -> "ResultsDB":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---------------------------------------------------------------------------------- runs
    def create_run(self, program_version_id: int, label: Optional[str] = None,
                   args: Optional[dict] = None, seed: Optional[int] = None,
                   machine_id: Optional[int] = None, objective: str = "", host: Optional[str] = None,
                   pid: Optional[int] = None, script_version: Optional[str] = None) -> tuple[int, str]:
        """Record a new tuning run in state RUNNING, driven by process ``pid`` on ``host`` (called when
        a run starts, after its options, technique and seeds were checked); returns (run_id, uuid).
        ``script_version`` is the tuner script's version that workers must match."""
        run_uuid = str(uuid_module.uuid4())
        with self._tx() as runner:
            run_id = runner.insert(_INS_RUN, {
                "uuid": run_uuid, "program_version_id": program_version_id, "label": label,
                "args": args if args is not None else {}, "seed": seed, "state": "RUNNING",
                "start_date": time_module.time(), "end_date": None, "machine_id": machine_id,
                "objective": objective, "host": host, "pid": pid, "script_version": script_version})
        assert run_id is not None  # a plain INSERT gives the new row's id
        return run_id, run_uuid

    def set_run_state(self, run_id: int, state: str) -> None:
        """Set RUNNING / COMPLETE / ABORTED / FAILED; a finished state sets end_date, RUNNING clears it."""
        if state not in RUN_STATES:
            raise ValueError(f"run state {state!r} is not one of {', '.join(RUN_STATES)}")
        end = None if state == "RUNNING" else time_module.time()
        with self._tx() as runner:
            done = runner.write(update(_RUN).where(_RUN.c.id == run_id).values(state=state, end_date=end),
                                {}, cache=False)
        if done != 1:
            raise NotFoundError(f"no tuning run with id {run_id}")

    def complete(self, desired_result_id: int, record: ResultRecord) -> int:
        """Record the result of a desired result and mark that COMPLETE in one transaction (called once
        per measurement, by whoever measured it); returns the result id, durable on return. ValueError
        for a state not in OK/TIMEOUT/ERROR/INFEASIBLE; NotFoundError if the desired result is missing,
        AlreadyCompleteError if it has a result already or its run cancelled it (nothing is written)."""
        if record.state not in RESULT_STATES:
            raise ValueError(f"result state {record.state!r} is not one of {', '.join(RESULT_STATES)}")
        extra = record.extra if record.extra is not None else {}
        text = json_dumps(extra) if self._fast else ""  # encoded once: stored, and held for the poll
        values = {"machine_id": record.machine_id, "input_id": record.input_id, "state": record.state,
                  "time": record.time, "accuracy": record.accuracy, "energy": record.energy, "size": record.size,
                  "extra": JSONText(text) if self._fast else extra,
                  "collection_date": time_module.time(), "collection_cost": record.collection_cost,
                  "worker": record.worker}
        with self._tx() as runner:
            if self._fast:  # one statement: None when the request is missing or not open
                values["dr"] = desired_result_id
                result_id = runner.insert(_INS_RES_OF_DR, values)
                run_id = None if result_id is not None else self._request_row(runner, desired_result_id)[0]
            else:
                run_id, config_id = self._request_row(runner, desired_result_id)
                if self._notify:  # PostgreSQL: results of a run commit in id order (see _RESULT_ORDER_LOCK)
                    runner.rows(_RESULT_ORDER_LOCK, {"run": run_id})
                result_id = runner.insert(_INS_RES, {"tuning_run_id": run_id, "configuration_id": config_id,
                                                     "desired_result_id": desired_result_id, **values,
                                                     "was_new_best": False})
            if result_id is None or runner.write(_FINISH_DR, {"dr": desired_result_id, "rid": result_id}) != 1:
                raise AlreadyCompleteError(f"desired result {desired_result_id} is already complete "
                                           "or cancelled")
            if self._notify:  # wakes the run's ResultListener when this commits
                runner.rows(_NOTIFY, {"run_text": str(run_id)})
        assert result_id is not None  # a plain INSERT gives the new row's id
        if isinstance(runner, _SQLiteRunner):  # committed: the run's poll may take it from here (see .tail)
            runner.tail.completed(desired_result_id, result_id, values, extra, text)
        return result_id

    @staticmethod
    def _request_row(runner: _Runner, desired_result_id: int) -> tuple:
        """(run id, configuration id) of a request; NotFoundError when there is none."""
        rows = runner.rows(_SEL_DR, {"dr": desired_result_id})
        if not rows:
            raise NotFoundError(f"no desired result with id {desired_result_id}")
        return rows[0]

    def listen(self, run_id: int) -> Optional[ResultListener]:
        """A listener that wakes when a result of the run is stored (PostgreSQL), else None (poll)."""
        return ResultListener(self.engine, run_id) if self._notify else None

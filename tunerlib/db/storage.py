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
from contextlib import contextmanager
from importlib import import_module
from typing import Any, Iterator, Optional

from sqlalchemy import BigInteger, bindparam, cast, func, or_, select, update
from sqlalchemy.exc import IntegrityError, OperationalError

from .migrations import ensure_schema, open_engine
from .models import (RESULT_STATES, RUN_STATES, AlreadyCompleteError, Claim, Configuration, DatabaseError, DesiredResult,
                     NotFoundError, ProgramVersion, Result, ResultRecord, TuningRun)
from .leases import LeaseQueries
from .identity import IdentityRows
from .named import NamedRecords
from .reads import RunReads
from .notify import CHANNEL, ResultListener
from .lifecycle import RunLifecycle
from .runners import _CoreRunner, _Runner, _SQLiteRunner
from .waits import LockNotices, LockWaits, is_lock_error, wait_for_lock

__all__ = ["ResultsDB"]

_OPERATIONAL_ERRORS = (OperationalError, sqlite3.OperationalError)
_ABANDONED: list = []  # connections inherited through fork: kept referenced so that they are never closed


# ------------------------------------------------------------------------------------------ statements
_PV, _CFG, _RUN = ProgramVersion, Configuration, TuningRun
_DR, _RES = DesiredResult, Result

_INS_RUN, _INS_DR, _INS_RES = _RUN.insert(), _DR.insert(), _RES.insert()
_SEL_CONFIG = select(_CFG.c.id).where(_CFG.c.program_version_id == bindparam("pv"),
                                      _CFG.c.hash == bindparam("h"))
def _insert_config_ignoring_duplicates(dialect: str) -> Any:
    """The dialect's ``INSERT ... ON CONFLICT DO NOTHING`` into configuration (None for other dialects);
    the dialect module is imported here, when a database of that dialect is opened."""
    if dialect not in ("sqlite", "postgresql"):
        return None
    module = import_module(f"sqlalchemy.dialects.{dialect}")
    return module.insert(_CFG).on_conflict_do_nothing()
_PICK = (select(_DR.c.id, _DR.c.configuration_id, _CFG.c.hash, _CFG.c.data, _DR.c.limit, _DR.c.requestor,
                _DR.c.generation)
         .join_from(_DR, _CFG, _DR.c.configuration_id == _CFG.c.id)
         .where(_DR.c.tuning_run_id == bindparam("run"), _DR.c.state == "REQUESTED")
         .order_by(_DR.c.id).limit(1))
_CLAIM = (update(_DR).where(_DR.c.id == bindparam("dr"), _DR.c.state == "REQUESTED")
          .values(state="RUNNING", worker=bindparam("w"), start_date=bindparam("t"), heartbeat=bindparam("t"),
                  lease=bindparam("lease")))
_SEL_DR = select(_DR.c.tuning_run_id, _DR.c.configuration_id).where(_DR.c.id == bindparam("dr"))
_FINISH_DR = (update(_DR).where(_DR.c.id == bindparam("dr"), or_(_DR.c.state == "REQUESTED", _DR.c.state == "RUNNING"))
              .values(state="COMPLETE", result_id=bindparam("rid"), heartbeat=None))
_NOTIFY = select(func.pg_notify(CHANNEL, bindparam("run_text")))
# PostgreSQL draws result ids from a sequence when a row is inserted, not when it commits: two workers
# completing at once can commit ids 8 and 7 in that order, and a poll for "id > 7" in between would
# never see 7. This per-run lock (held to the commit) makes a run's results commit in id order.
# Negative keys: the schema lock (migrations.SCHEMA_LOCK) is positive.
_RESULT_ORDER_LOCK = select(func.pg_advisory_xact_lock(-cast(bindparam("run"), BigInteger) - 1))



class ResultsDB(IdentityRows, RunLifecycle, LeaseQueries, NamedRecords, RunReads):
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
        self._ins_config = _insert_config_ignoring_duplicates(dialect)
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
        if runner is None or self._pid != os.getpid():
            if self._closed:
                raise DatabaseError(f"ResultsDB({self.display_url}) is closed: create a new ResultsDB")
            if self._pid != os.getpid():  # inherited through fork: never touch the parent's connection
                _ABANDONED.append(self._run)
                self.engine.dispose(close=False)
                self._pid = os.getpid()
            runner = self._run = _SQLiteRunner(self.engine) if self._fast else _CoreRunner(self.engine)
        return runner

    @contextmanager
    def _tx(self) -> Iterator[_Runner]:
        """One write transaction: committed on success, rolled back on error."""
        runner = self._runner()
        if self._sqlite:
            self._begin_write(runner)
        try:
            yield runner
            runner.commit()
        except _OPERATIONAL_ERRORS as exc:
            runner.rollback()
            raise self._failure(exc) from exc
        except BaseException:
            runner.rollback()
            raise

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

    # ------------------------------------------------------------------ configurations & requests
    def configuration_id(self, program_version_id: int, hash: str, data: Any) -> int:
        """Get or create the configuration with this hash (``data``, JSON, is stored when created)."""
        params = {"pv": program_version_id, "h": hash}
        rows = self._read(_SEL_CONFIG, params)
        if rows:
            return rows[0][0]
        with self._tx() as runner:
            return self._insert_configuration(runner, program_version_id, hash, data)

    def _insert_configuration(self, runner: _Runner, program_version_id: int, hash: str, data: Any) -> int:
        """Create the configuration inside the caller's transaction; its id (another process's, when it
        created the same one first)."""
        values = {"program_version_id": program_version_id, "hash": hash, "data": data}
        if self._ins_config is not None:  # INSERT ... ON CONFLICT DO NOTHING
            new_id = runner.insert(self._ins_config, values)
        else:
            assert isinstance(runner, _CoreRunner)  # the sqlite3 runner always has the ON CONFLICT form
            try:
                with runner.conn.begin_nested():
                    new_id = runner.insert(_CFG.insert(), values)
            except IntegrityError:
                new_id = None
        if new_id is None:  # inserted concurrently by another process
            new_id = runner.rows(_SEL_CONFIG, {"pv": program_version_id, "h": hash})[0][0]
        return int(new_id)

    def request_configuration(self, run_id: int, program_version_id: int, hash: str, data: Any, requestor: str,
                              generation: int, limit: Optional[float] = None) -> int:
        """Get or create the configuration and queue a measurement of it (state REQUESTED, claimed oldest
        first), in one transaction; returns the request's id."""
        rows = self._read(_SEL_CONFIG, {"pv": program_version_id, "h": hash})
        with self._tx() as runner:
            cfg_id = rows[0][0] if rows else self._insert_configuration(runner, program_version_id, hash, data)
            return self._insert_request(runner, run_id, cfg_id, requestor, generation, limit)

    @staticmethod
    def _insert_request(runner: _Runner, run_id: int, configuration_id: int, requestor: str, generation: int,
                        limit: Optional[float]) -> int:
        request_id = runner.insert(_INS_DR, {
            "tuning_run_id": run_id, "configuration_id": configuration_id, "requestor": requestor,
            "generation": generation, "limit": limit, "state": "REQUESTED",
            "request_date": time_module.time()})
        assert request_id is not None  # a plain INSERT gives the new row's id
        return request_id

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
                won = runner.write(_CLAIM, {"dr": row[0], "w": worker, "t": time_module.time(), "lease": lease})
            if won == 1:
                return Claim(row[0], run_id, row[1], row[2], row[3], row[4], row[5], row[6])

    def complete(self, desired_result_id: int, record: ResultRecord) -> int:
        """Record the result of a desired result and mark that COMPLETE in one transaction (called once
        per measurement, by whoever measured it); returns the result id, durable on return. ValueError
        for a state not in OK/TIMEOUT/ERROR/INFEASIBLE; NotFoundError if the desired result is missing,
        AlreadyCompleteError if it has a result already or its run cancelled it (nothing is written)."""
        if record.state not in RESULT_STATES:
            raise ValueError(f"result state {record.state!r} is not one of {', '.join(RESULT_STATES)}")
        with self._tx() as runner:
            rows = runner.rows(_SEL_DR, {"dr": desired_result_id})
            if not rows:
                raise NotFoundError(f"no desired result with id {desired_result_id}")
            if self._notify:  # PostgreSQL: results of a run commit in id order (see _RESULT_ORDER_LOCK)
                runner.rows(_RESULT_ORDER_LOCK, {"run": rows[0][0]})
            result_id = runner.insert(_INS_RES, {
                "tuning_run_id": rows[0][0], "configuration_id": rows[0][1],
                "desired_result_id": desired_result_id, "machine_id": record.machine_id,
                "input_id": record.input_id, "state": record.state, "time": record.time,
                "accuracy": record.accuracy, "energy": record.energy, "size": record.size,
                "extra": record.extra if record.extra is not None else {}, "was_new_best": False,
                "collection_date": time_module.time(), "collection_cost": record.collection_cost,
                "worker": record.worker})
            if runner.write(_FINISH_DR, {"dr": desired_result_id, "rid": result_id}) != 1:
                raise AlreadyCompleteError(f"desired result {desired_result_id} is already complete "
                                           "or cancelled")
            if self._notify:  # wakes the run's ResultListener when this commits
                runner.rows(_NOTIFY, {"run_text": str(rows[0][0])})
        assert result_id is not None  # a plain INSERT gives the new row's id
        return result_id

    def listen(self, run_id: int) -> Optional[ResultListener]:
        """A listener that wakes when a result of the run is stored (PostgreSQL), else None (poll)."""
        return ResultListener(self.engine, run_id) if self._notify else None

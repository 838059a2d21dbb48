"""ResultsDB: the results database shared by the search driver and the measurement workers.

Opening: ``ResultsDB(url)`` resolves the URL (:func:`resolve_url`), creates an engine per instance
(:func:`open_engine`: SQLite gets ``journal_mode=WAL``, ``synchronous=NORMAL``, ``busy_timeout=30000`` and
``foreign_keys=ON`` on every connection), then creates and stamps a new database or checks the schema
version of an existing one (:func:`tunerlib.db.models.ensure_schema`).

Transactions: every method runs in its own short transaction and commits before it returns, so a result is
durable (it survives a SIGKILL of the process) once :meth:`ResultsDB.complete` has returned. Hot paths run
prebuilt SQLAlchemy Core statements on one connection held by the instance.

Processes and threads: an instance belongs to the thread that uses it (it is not thread-safe). Every worker
process -- forked or spawned -- should create its own ``ResultsDB(url)``. An instance inherited through
``fork`` notices the new process id, drops the inherited connection without closing it (so the parent's
connection is untouched) and reconnects; a parent may also call :meth:`ResultsDB.dispose` before forking.

Return types: ids are ints; :class:`~tunerlib.db.models.Claim`, :class:`~tunerlib.db.models.ResultRow` and
:class:`~tunerlib.db.models.DesiredResultRow` are frozen dataclasses; ``run_info`` and
``counts_by_state`` return plain dicts; JSON values come back as plain dicts/lists. Times are Unix seconds.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
import uuid as uuid_module
from contextlib import contextmanager
from typing import Any, Iterator, Optional

from sqlalchemy import (URL, Connection, Engine, Table, bindparam, create_engine, event, func, make_url,
                        or_, select, update)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import ArgumentError, IntegrityError, NoSuchModuleError

from .models import (RESULT_STATES, RUN_STATES, Claim, Configuration, DatabaseError, DesiredResult,
                     DesiredResultRow, Input, InputClass, Machine, MachineClass, NotFoundError, Program,
                     ProgramVersion, Result, ResultRow, SchemaVersionError, TechniqueState, TuningRun,
                     ensure_schema)

DEFAULT_URL = "sqlite:///tunerlib.db"
URL_EXAMPLE = "sqlite:///path/tunerlib.db or postgresql+psycopg://user@host/db"
_EXTRAS = {"postgresql": "pip install 'tunerlib[postgres]'"}

__all__ = ["ResultsDB", "DatabaseError", "SchemaVersionError", "NotFoundError", "open_engine",
           "resolve_url", "DEFAULT_URL"]


# ------------------------------------------------------------------------------------------ statements
_PV, _CFG, _RUN = ProgramVersion.__table__, Configuration.__table__, TuningRun.__table__
_DR, _RES, _TS = DesiredResult.__table__, Result.__table__, TechniqueState.__table__
_PENDING = or_(_DR.c.state == "REQUESTED", _DR.c.state == "RUNNING")

_SEL_CONFIG = select(_CFG.c.id).where(_CFG.c.program_version_id == bindparam("pv"),
                                      _CFG.c.hash == bindparam("h"))
_INS_DR = _DR.insert()
_PICK = (select(_DR.c.id, _DR.c.configuration_id, _CFG.c.hash, _CFG.c.data, _DR.c.limit, _DR.c.requestor,
                _DR.c.generation)
         .join_from(_DR, _CFG, _DR.c.configuration_id == _CFG.c.id)
         .where(_DR.c.tuning_run_id == bindparam("run"), _DR.c.state == "REQUESTED")
         .order_by(_DR.c.priority.desc(), _DR.c.id).limit(1))
_CLAIM = (update(_DR).where(_DR.c.id == bindparam("dr"), _DR.c.state == "REQUESTED")
          .values(state="RUNNING", worker=bindparam("w"), start_date=bindparam("t")))
_SEL_DR_FOR_RESULT = select(_DR.c.tuning_run_id, _DR.c.configuration_id, _DR.c.state).where(
    _DR.c.id == bindparam("dr"))
_INS_RESULT = _RES.insert()
_FINISH_DR = (update(_DR).where(_DR.c.id == bindparam("dr"), _DR.c.state != "COMPLETE")
              .values(state="COMPLETE", result_id=bindparam("rid")))
_NEW_BEST = update(_RES).where(_RES.c.id == bindparam("rid")).values(was_new_best=True)
_PENDING_COUNT = select(func.count()).select_from(_DR).where(_DR.c.tuning_run_id == bindparam("run"),
                                                              _PENDING)
_RESULT_ROWS = (select(_RES.c.id, _RES.c.desired_result_id, _RES.c.configuration_id, _CFG.c.hash,
                       _CFG.c.data, _RES.c.state, _RES.c.time, _RES.c.accuracy, _RES.c.energy,
                       _RES.c.size, _RES.c.extra, _RES.c.was_new_best, _DR.c.requestor,
                       _RES.c.collection_cost)
                .join_from(_RES, _CFG, _RES.c.configuration_id == _CFG.c.id)
                .outerjoin(_DR, _RES.c.desired_result_id == _DR.c.id)
                .where(_RES.c.tuning_run_id == bindparam("run"))
                .order_by(_RES.c.id))
_RESULTS_AFTER = _RESULT_ROWS.where(_RES.c.id > bindparam("after"))


class ResultsDB:
    """Results database of tunerlib (see the module docstring for transactions, processes, row types)."""

    def __init__(self, url: Optional[str] = None) -> None:
        """Open (creating if needed) the database at ``url``: None -> ./tunerlib.db, a path -> SQLite file.

        Raises DatabaseError (or SchemaVersionError) with a one-line, actionable message.
        """
        self.engine, self.display_url = open_engine(url)
        ensure_schema(self.engine, self.display_url)
        self._pid = os.getpid()
        self._conn: Optional[Connection] = None
        self._closed = False
        name = self.engine.dialect.name
        self._upsert_dialect = {"sqlite": sqlite, "postgresql": postgresql}.get(name)

    # ----------------------------------------------------------------------------------- plumbing
    def _connection(self) -> Connection:
        conn = self._conn
        if conn is None or self._pid != os.getpid():
            conn = self._reconnect()
        return conn

    def _reconnect(self) -> Connection:
        if self._closed:
            raise DatabaseError(f"ResultsDB({self.display_url}) is closed: create a new ResultsDB")
        if self._pid != os.getpid():  # inherited through fork: leave the parent's connection alone
            self._conn = None
            self.engine.dispose(close=False)
            self._pid = os.getpid()
        self._conn = self.engine.connect()
        return self._conn

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        """One transaction on the held connection: committed on success, rolled back on error."""
        conn = self._connection()
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        conn.commit()

    def _read(self, stmt: Any, params: dict) -> list:
        """Run a SELECT and end its (read) transaction at once so that no snapshot stays open."""
        conn = self._connection()
        try:
            return conn.execute(stmt, params).all()
        finally:
            conn.rollback()

    def _get_or_create(self, table: Table, key: dict, values: Optional[dict] = None) -> int:
        """Id of the row of ``table`` matching ``key`` (None matches NULL), inserted if missing."""
        cond = [table.c[k].is_(None) if v is None else table.c[k] == v for k, v in key.items()]
        query = select(table.c.id).where(*cond).order_by(table.c.id).limit(1)
        for attempt in range(3):
            try:
                with self._tx() as conn:
                    found = conn.execute(query).scalar()
                    if found is None:
                        found = conn.execute(table.insert(), {**key, **(values or {})}).inserted_primary_key[0]
                return int(found)
            except IntegrityError:  # another process inserted the same key first: select it
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def dispose(self) -> None:
        """Close the held connection and the engine's pool (call in a parent before forking workers)."""
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None
        self.engine.dispose(close=self._pid == os.getpid())
        self._pid = os.getpid()

    def close(self) -> None:
        """Release all connections; the instance cannot be used afterwards."""
        self.dispose()
        self._closed = True

    def __enter__(self) -> "ResultsDB":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---------------------------------------------------------------- programs, machines, inputs
    def program_version_id(self, project: str, program: str, version: str, parameter_info: str) -> int:
        """Get or create the program version; called once at run start. ``parameter_info`` is canonical
        text describing the search space (versions differing only in it are distinct)."""
        program_id = self._get_or_create(Program.__table__, {"project": project, "name": program})
        digest = hashlib.sha256(parameter_info.encode("utf-8")).hexdigest()
        return self._get_or_create(_PV, {"program_id": program_id, "version": version,
                                         "parameter_info_hash": digest},
                                   {"parameter_info": parameter_info})

    def machine_id(self, name: str, machine_class: Optional[str] = None,
                   cpu_count: Optional[int] = None) -> int:
        """Get or create the machine ``name`` (host name); given class/cpu_count update a stored one."""
        class_id = (self._get_or_create(MachineClass.__table__, {"name": machine_class})
                    if machine_class is not None else None)
        table = Machine.__table__
        values = {"machine_class_id": class_id, "cpu_count": cpu_count}
        machine = self._get_or_create(table, {"name": name}, values)
        changes = {k: v for k, v in values.items() if v is not None}
        if changes:
            with self._tx() as conn:
                conn.execute(update(table).where(table.c.id == machine).values(**changes))
        return machine

    def input_id(self, program_version_id: int, input_class: str, path: Optional[str] = None,
                 size: Optional[int] = None, extra: Optional[dict] = None) -> int:
        """Get or create an input. Input classes belong to the *program* of ``program_version_id``
        (shared by its versions) and are keyed by (name, size); inputs by (class, path). ``extra`` is
        stored on the input when it is created."""
        rows = self._read(select(_PV.c.program_id).where(_PV.c.id == program_version_id), {})
        if not rows:
            raise NotFoundError(f"no program version with id {program_version_id}")
        class_id = self._get_or_create(InputClass.__table__, {"program_id": rows[0][0],
                                                              "name": input_class, "size": size})
        return self._get_or_create(Input.__table__, {"input_class_id": class_id, "path": path},
                                   {"extra": extra})

    # ---------------------------------------------------------------------------------- runs
    def create_run(self, program_version_id: int, label: Optional[str] = None,
                   args: Optional[dict] = None, seed: Optional[int] = None,
                   machine_id: Optional[int] = None, objective: str = "") -> tuple[int, str]:
        """Record a new tuning run in state RUNNING; returns (run_id, uuid string)."""
        run_uuid = str(uuid_module.uuid4())
        with self._tx() as conn:
            res = conn.execute(_RUN.insert(), {
                "uuid": run_uuid, "program_version_id": program_version_id, "label": label,
                "args": args if args is not None else {}, "seed": seed, "state": "RUNNING",
                "start_date": time.time(), "end_date": None, "machine_id": machine_id,
                "objective": objective})
        return int(res.inserted_primary_key[0]), run_uuid

    def latest_run(self, program_version_id: int, label: Optional[str] = None) -> Optional[int]:
        """Id of the most recently created run of the program version (with this label if given)."""
        query = select(_RUN.c.id).where(_RUN.c.program_version_id == program_version_id)
        if label is not None:
            query = query.where(_RUN.c.label == label)
        rows = self._read(query.order_by(_RUN.c.id.desc()).limit(1), {})
        return int(rows[0][0]) if rows else None

    def run_info(self, run_id: int) -> dict:
        """Dict with id, uuid, program_version_id, label, args, seed, state, start_date, end_date,
        machine_id and objective of a run; NotFoundError if there is none."""
        rows = self._read(select(_RUN).where(_RUN.c.id == run_id), {})
        if not rows:
            raise NotFoundError(f"no tuning run with id {run_id}")
        return dict(rows[0]._mapping)

    def set_run_state(self, run_id: int, state: str) -> None:
        """Set RUNNING / COMPLETE / ABORTED; a finished state sets end_date, RUNNING clears it."""
        if state not in RUN_STATES:
            raise ValueError(f"run state {state!r} is not one of {', '.join(RUN_STATES)}")
        end = None if state == "RUNNING" else time.time()
        with self._tx() as conn:
            res = conn.execute(update(_RUN).where(_RUN.c.id == run_id).values(state=state, end_date=end))
        if res.rowcount != 1:
            raise NotFoundError(f"no tuning run with id {run_id}")

    # ------------------------------------------------------------------ configurations & requests
    def configuration_id(self, program_version_id: int, hash: str, data: Any) -> int:
        """Get or create the configuration with this hash (``data`` is stored only when created)."""
        params = {"pv": program_version_id, "h": hash}
        rows = self._read(_SEL_CONFIG, params)
        if rows:
            return rows[0][0]
        values = {"program_version_id": program_version_id, "hash": hash, "data": data}
        dialect = self._upsert_dialect
        with self._tx() as conn:
            if dialect is not None:
                stmt = dialect.insert(_CFG).on_conflict_do_nothing().returning(_CFG.c.id)
                new_id = conn.execute(stmt, values).scalar()
            else:
                try:
                    with conn.begin_nested():
                        new_id = conn.execute(_CFG.insert(), values).inserted_primary_key[0]
                except IntegrityError:
                    new_id = None
            if new_id is None:
                new_id = conn.execute(_SEL_CONFIG, params).scalar_one()
        return int(new_id)

    def request(self, run_id: int, configuration_id: int, requestor: str, generation: int,
                limit: Optional[float] = None, priority: int = 0) -> int:
        """Queue a measurement (state REQUESTED); returns the desired_result id. Higher priority first."""
        with self._tx() as conn:
            res = conn.execute(_INS_DR, {
                "tuning_run_id": run_id, "configuration_id": configuration_id, "requestor": requestor,
                "generation": generation, "priority": priority, "limit": limit, "state": "REQUESTED",
                "request_date": time.time()})
        return res.inserted_primary_key[0]

    def claim_next(self, run_id: int, worker: str) -> Optional[Claim]:
        """Atomically claim the next REQUESTED desired result of the run (priority desc, then id) for
        ``worker`` and mark it RUNNING; None when nothing is requested. Safe across processes."""
        conn = self._connection()
        while True:
            try:
                row = conn.execute(_PICK, {"run": run_id}).first()
                if row is None:
                    conn.rollback()
                    return None
                won = conn.execute(_CLAIM, {"dr": row[0], "w": worker, "t": time.time()}).rowcount
                conn.commit()
            except BaseException:
                conn.rollback()
                raise
            if won == 1:
                return Claim(row[0], run_id, row[1], row[2], row[3], row[4], row[5], row[6])

    def complete(self, desired_result_id: int, state: str, time: Optional[float] = None,
                 accuracy: Optional[float] = None, energy: Optional[float] = None,
                 size: Optional[float] = None, extra: Optional[dict] = None,
                 collection_cost: Optional[float] = None, machine_id: Optional[int] = None,
                 input_id: Optional[int] = None) -> int:
        """Record the result of a desired result and mark it COMPLETE, in one transaction; returns the
        result id. Durable when it returns. ValueError for a bad state; DatabaseError if the desired
        result is missing or already complete."""
        if state not in RESULT_STATES:
            raise ValueError(f"result state {state!r} is not one of {', '.join(RESULT_STATES)}")
        with self._tx() as conn:
            row = conn.execute(_SEL_DR_FOR_RESULT, {"dr": desired_result_id}).first()
            if row is None:
                raise NotFoundError(f"no desired result with id {desired_result_id}")
            result_id = conn.execute(_INS_RESULT, {
                "tuning_run_id": row[0], "configuration_id": row[1], "desired_result_id": desired_result_id,
                "machine_id": machine_id, "input_id": input_id, "state": state, "time": time,
                "accuracy": accuracy, "energy": energy, "size": size,
                "extra": extra if extra is not None else {}, "was_new_best": False,
                "collection_date": _now(), "collection_cost": collection_cost}).inserted_primary_key[0]
            if conn.execute(_FINISH_DR, {"dr": desired_result_id, "rid": result_id}).rowcount != 1:
                raise DatabaseError(f"desired result {desired_result_id} is already complete")
        return result_id

    def reuse(self, desired_result_id: int, result_id: int) -> None:
        """Mark a desired result COMPLETE with an existing result (a duplicate, not re-measured)."""
        with self._tx() as conn:
            done = conn.execute(_FINISH_DR, {"dr": desired_result_id, "rid": result_id}).rowcount
        if done != 1:
            raise NotFoundError(f"no incomplete desired result with id {desired_result_id}")

    def find_result(self, configuration_id: int, run_id: Optional[int] = None) -> Optional[int]:
        """Id of the earliest result measured for the configuration (in ``run_id`` if given), or None."""
        query = select(func.min(_RES.c.id)).where(_RES.c.configuration_id == configuration_id)
        if run_id is not None:
            query = query.where(_RES.c.tuning_run_id == run_id)
        return self._read(query, {})[0][0]

    def abort_requested(self, run_id: int) -> int:
        """Set every REQUESTED desired result of the run to ABORTED; returns how many."""
        return self._move_state(run_id, "REQUESTED", state="ABORTED")

    def requeue_running(self, run_id: int) -> int:
        """Put RUNNING desired results back to REQUESTED (resume after a crash); returns how many."""
        return self._move_state(run_id, "RUNNING", state="REQUESTED", worker=None, start_date=None)

    def _move_state(self, run_id: int, old: str, **values: Any) -> int:
        with self._tx() as conn:
            return conn.execute(update(_DR).where(_DR.c.tuning_run_id == run_id, _DR.c.state == old)
                                .values(**values)).rowcount

    def pending_count(self, run_id: int) -> int:
        """Number of desired results of the run that are REQUESTED or RUNNING."""
        return self._read(_PENDING_COUNT, {"run": run_id})[0][0]

    # ------------------------------------------------------------------------------- results
    def mark_new_best(self, result_ids: list[int]) -> None:
        """Set was_new_best on these results (one batched statement)."""
        if result_ids:
            with self._tx() as conn:
                conn.execute(_NEW_BEST, [{"rid": rid} for rid in result_ids])

    def results_after(self, run_id: int, after_result_id: int) -> list[ResultRow]:
        """Results of the run with id > ``after_result_id``, in id order (the search driver's poll)."""
        return [ResultRow(*row) for row in self._read(_RESULTS_AFTER, {"run": run_id,
                                                                       "after": after_result_id})]

    def run_results(self, run_id: int) -> list[ResultRow]:
        """Every result of the run in id order (resume, summaries)."""
        return [ResultRow(*row) for row in self._read(_RESULT_ROWS, {"run": run_id})]

    def desired_results(self, run_id: int) -> list[DesiredResultRow]:
        """Every desired result of the run in id (request) order."""
        query = (select(_DR.c.id, _CFG.c.hash, _DR.c.requestor, _DR.c.generation, _DR.c.state,
                        _DR.c.result_id)
                 .join_from(_DR, _CFG, _DR.c.configuration_id == _CFG.c.id)
                 .where(_DR.c.tuning_run_id == run_id).order_by(_DR.c.id))
        return [DesiredResultRow(*row) for row in self._read(query, {})]

    def counts_by_state(self, run_id: int) -> dict[str, int]:
        """{result state: number of results} of the run (reused duplicates are not counted again)."""
        query = (select(_RES.c.state, func.count()).where(_RES.c.tuning_run_id == run_id)
                 .group_by(_RES.c.state))
        return {state: count for state, count in self._read(query, {})}

    # ------------------------------------------------------------------------ technique state
    def save_technique_state(self, run_id: int, name: str, data: Any) -> None:
        """Insert or replace the JSON state of technique ``name`` in the run."""
        where = (_TS.c.tuning_run_id == run_id, _TS.c.name == name)
        for attempt in range(3):
            try:
                with self._tx() as conn:
                    now = _now()
                    if conn.execute(update(_TS).where(*where).values(data=data, updated=now)).rowcount:
                        return
                    conn.execute(_TS.insert(), {"tuning_run_id": run_id, "name": name, "data": data,
                                                "updated": now})
                return
            except IntegrityError:  # inserted concurrently: the next attempt updates it
                if attempt == 2:
                    raise

    def load_technique_state(self, run_id: int, name: str) -> Optional[Any]:
        """The saved JSON state of technique ``name`` in the run, or None."""
        rows = self._read(select(_TS.c.data).where(_TS.c.tuning_run_id == run_id, _TS.c.name == name), {})
        return rows[0][0] if rows else None


def _now() -> float:
    return time.time()

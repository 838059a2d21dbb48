"""Reading a results database without ever writing to it, for the dashboard.

:class:`ReadOnlyDatabase` opens SQLite files with ``mode=ro`` (SQLite itself refuses every write, and
the connection can neither create the file nor checkpoint the write-ahead log into it) and PostgreSQL
databases with read-only sessions (``SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY``). It never
creates or migrates a schema: a missing file, an empty or foreign database and another schema version
are refused with one line. Every query is one short read transaction, so a run that writes while the
dashboard reads is never held up, and each call sees what was committed when it started.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, List, Optional

from sqlalchemy import Engine, create_engine, event, func, select
from sqlalchemy.exc import DBAPIError, TimeoutError as PoolTimeout
from sqlalchemy.pool import QueuePool

from ..db import DatabaseError
from ..db.migrations import check_version, missing_sqlite_file, read_schema_version, resolve_url
from ..db.models import (Configuration, DesiredResult, MachineClass, Machine, Program, ProgramVersion, Result,
                         RunArtifact, TechniqueState, TuningRun)
from ..db.waits import busy_timeout

__all__ = ["ReadOnlyDatabase", "RUN_KEYS", "RESULT_KEYS"]

_RUN, _RES, _DR, _CFG = TuningRun, Result, DesiredResult, Configuration
_COUNT = (select(func.count()).select_from(_RES).where(_RES.c.tuning_run_id == _RUN.c.id)
          .correlate(_RUN).scalar_subquery())
_LAST = (select(func.max(_RES.c.id)).where(_RES.c.tuning_run_id == _RUN.c.id)
         .correlate(_RUN).scalar_subquery())
_REQUESTS = (select(func.count()).select_from(_DR).where(_DR.c.tuning_run_id == _RUN.c.id)
             .correlate(_RUN).scalar_subquery())
_SAVED = (select(func.max(TechniqueState.c.updated)).where(TechniqueState.c.tuning_run_id == _RUN.c.id)
          .correlate(_RUN).scalar_subquery())
_ARTIFACT_SAVED = (select(func.max(RunArtifact.c.updated)).where(RunArtifact.c.tuning_run_id == _RUN.c.id)
                   .correlate(_RUN).scalar_subquery())
_RUNS = (select(_RUN.c.id, _RUN.c.uuid, Program.c.project, Program.c.name, ProgramVersion.c.version,
                _RUN.c.label, _RUN.c.state, _RUN.c.start_date, _RUN.c.end_date, _RUN.c.seed, _RUN.c.host,
                _RUN.c.pid, _RUN.c.objective, _RUN.c.args, _COUNT, _LAST, _REQUESTS, _SAVED,
                _ARTIFACT_SAVED)
         .join_from(_RUN, ProgramVersion, _RUN.c.program_version_id == ProgramVersion.c.id)
         .join(Program, ProgramVersion.c.program_id == Program.c.id)
         .order_by(_RUN.c.id))
#: keys of the dicts :meth:`ReadOnlyDatabase.runs` returns
RUN_KEYS = ("id", "uuid", "project", "program", "version", "label", "state", "start_date", "end_date", "seed",
            "host", "pid", "objective", "args", "tests", "last_result", "requests", "state_saved",
            "artifact_saved")
_SPACE = (select(ProgramVersion.c.parameter_info, MachineClass.c.name)
          .join_from(_RUN, ProgramVersion, _RUN.c.program_version_id == ProgramVersion.c.id)
          .outerjoin(Machine, _RUN.c.machine_id == Machine.c.id)
          .outerjoin(MachineClass, Machine.c.machine_class_id == MachineClass.c.id))
_RESULTS = (select(_RES.c.id, _RES.c.state, _RES.c.time, _RES.c.accuracy, _RES.c.energy, _RES.c.size,
                   _RES.c.extra, _RES.c.collection_date, _RES.c.collection_cost, _RES.c.worker, _CFG.c.hash,
                   _CFG.c.data, _DR.c.requestor)
            .join_from(_RES, _CFG, _RES.c.configuration_id == _CFG.c.id)
            .outerjoin(_DR, _RES.c.desired_result_id == _DR.c.id)
            .order_by(_RES.c.id))
#: keys of the dicts :meth:`ReadOnlyDatabase.results_after` returns
RESULT_KEYS = ("id", "state", "time", "accuracy", "energy", "size", "extra", "collection_date",
               "collection_cost", "worker", "config_hash", "config_data", "requestor")
_SUPPORTED = ("sqlite", "postgresql")
#: idle SQLite connections kept open between polls
_POOLED = 5


def _sqlite_engine(path: str) -> Engine:
    """An engine whose connections open ``path`` read-only (``mode=ro``) with the busy timeout.

    Its pool hands each checkout a connection no other thread holds and closes a connection only
    once it is back in the pool (a queue without a limit: the server's request threads never wait
    for one). The pool SQLAlchemy picks for a ``sqlite://`` URL keeps one connection per thread and
    closes any of them once more threads have asked, even one another thread is querying at that
    moment, and closing a ``sqlite3`` connection that another thread is using can crash the
    interpreter."""
    uri = Path(path).absolute().as_uri() + "?mode=ro"
    timeout = busy_timeout()

    def connect() -> sqlite3.Connection:
        connection = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=timeout)
        connection.execute("PRAGMA query_only=ON")
        return connection
    return create_engine("sqlite://", creator=connect, poolclass=QueuePool, pool_size=_POOLED, max_overflow=-1)


def _read_only_session(dbapi_connection: Any, _record: Any) -> None:
    """Make every transaction of a new PostgreSQL connection read-only (the server refuses writes)."""
    cursor = dbapi_connection.cursor()
    cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    cursor.close()
    dbapi_connection.commit()


def _engine(url: str) -> tuple[Engine, str]:
    """(read-only engine, the URL as shown in messages) for ``url``; DatabaseError (one line) when it
    names no existing SQLite file or a dialect the dashboard does not read."""
    sa_url = resolve_url(url)
    backend = sa_url.get_backend_name()
    if backend not in _SUPPORTED:
        raise DatabaseError(f"the dashboard reads SQLite and PostgreSQL results databases, not {backend!r} "
                            f"({url}): pass a file path or a postgresql+psycopg:// URL")
    if backend == "sqlite":
        path = missing_sqlite_file(url)
        if path is not None:
            raise DatabaseError(f"no results database at {path}: pass the path of a tunerlib results database")
        if not sa_url.database or sa_url.database == ":memory:" or sa_url.database.startswith("file:"):
            raise DatabaseError(f"the dashboard follows results database files: {url} names none")
        return _sqlite_engine(sa_url.database), sa_url.database
    try:
        engine = create_engine(sa_url)
    except ImportError as exc:
        raise DatabaseError(f"database driver {exc.name!r} for {url} is not installed: "
                            "pip install 'tunerlib[postgres]'") from None
    event.listen(engine, "connect", _read_only_session)
    return engine, sa_url.render_as_string(hide_password=True)


class ReadOnlyDatabase:
    """One results database, read by the dashboard's request threads (the engine's pool gives each
    query a connection of its own). Created once per ``DB_URL`` when ``tunerlib dashboard`` starts."""

    def __init__(self, url: str) -> None:
        """Open ``url`` read-only and check that it holds a tunerlib results database of this schema
        version; DatabaseError (one line) otherwise."""
        self.engine, self.display_url = _engine(url)
        try:
            with self.engine.connect() as conn:
                version = read_schema_version(conn, self.display_url)
        except DBAPIError as exc:
            self.engine.dispose()
            raise DatabaseError(f"cannot read {self.display_url}: {_first_line(exc)}") from None
        except DatabaseError:
            self.engine.dispose()
            raise
        if version is None:
            self.engine.dispose()
            raise DatabaseError(f"{self.display_url} is not a tunerlib results database (it has no tables): "
                                "pass the --database of a tuning run")
        check_version(version, self.display_url)

    def _rows(self, stmt: Any) -> List[Any]:
        try:
            with self.engine.connect() as conn:
                return list(conn.execute(stmt).all())
        except DBAPIError as exc:
            raise DatabaseError(f"cannot read {self.display_url}: {_first_line(exc)}") from None
        except PoolTimeout:
            raise DatabaseError(f"{self.display_url}: every pooled connection is busy with other requests; "
                                "the page asks again at its next poll") from None

    def runs(self) -> List[dict]:
        """Every run in id order (:data:`RUN_KEYS`: its row, program, result and request counts, the id
        of its last result and when it last saved a technique state and a run artifact); called on every
        poll of the runs list."""
        return [dict(zip(RUN_KEYS, row)) for row in self._rows(_RUNS)]

    def run(self, uuid: str) -> Optional[dict]:
        """The :meth:`runs` entry of the run ``uuid`` (None: no such run); called on every request about
        one run."""
        rows = self._rows(_RUNS.where(_RUN.c.uuid == uuid))
        return dict(zip(RUN_KEYS, rows[0])) if rows else None

    def run_space(self, run_id: int) -> tuple[str, Optional[str]]:
        """(the run's stored search space, its machine class or None); called once per followed run."""
        rows = self._rows(_SPACE.where(_RUN.c.id == run_id))
        return (rows[0][0], rows[0][1]) if rows else ("{}", None)

    def results_after(self, run_id: int, after: int) -> List[dict]:
        """The run's results with id > ``after`` in id order (:data:`RESULT_KEYS`)."""
        stmt = _RESULTS.where(_RES.c.tuning_run_id == run_id, _RES.c.id > after)
        return [dict(zip(RESULT_KEYS, row)) for row in self._rows(stmt)]

    def requests_after(self, run_id: int, after: int) -> List[tuple[int, str]]:
        """(id, requestor) of the run's requests with id > ``after``, in request order."""
        stmt = (select(_DR.c.id, _DR.c.requestor)
                .where(_DR.c.tuning_run_id == run_id, _DR.c.id > after).order_by(_DR.c.id))
        return [(int(i), r) for i, r in self._rows(stmt)]

    def load_technique_state(self, run_id: int, name: str) -> Optional[Any]:
        """The JSON state the run last saved for technique ``name`` (None: none saved yet)."""
        stmt = select(TechniqueState.c.data).where(TechniqueState.c.tuning_run_id == run_id,
                                                   TechniqueState.c.name == name)
        rows = self._rows(stmt)
        return rows[0][0] if rows else None

    def load_run_artifact(self, run_id: int, name: str) -> Optional[Any]:
        """The run's JSON artifact ``name`` (the re-timed best, the final configuration; None: none)."""
        stmt = select(RunArtifact.c.data).where(RunArtifact.c.tuning_run_id == run_id, RunArtifact.c.name == name)
        rows = self._rows(stmt)
        return rows[0][0] if rows else None

    def close(self) -> None:
        """Release the pooled connections (when the dashboard stops)."""
        self.engine.dispose()


def _first_line(exc: DBAPIError) -> str:
    text = str(exc.orig).strip().splitlines()
    return text[0] if text else type(exc.orig).__name__

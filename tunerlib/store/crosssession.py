"""The cross-session store: opening it (schema check and upgrades) and writing uploaded runs.

:class:`CrossSessionStore` writes each run in one transaction (all of it or nothing), keyed by the
local run's UUID: uploading the same run again changes nothing, and a run uploaded while unfinished is
replaced by its completed version, never duplicated. Queries live in :mod:`.queries`.

Where the store is: ``--store URL``, else ``$TUNERLIB_STORE``, else ``store.db`` in the user data
directory (``$XDG_DATA_HOME/tunerlib``, ``~/.local/share/tunerlib``; ``~/Library/Application Support/
tunerlib`` on macOS; ``%LOCALAPPDATA%\\tunerlib`` on Windows).
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional

from sqlalchemy import Connection, CursorResult, Table, delete, func, select
from sqlalchemy.exc import DBAPIError, IntegrityError

from ..db import DatabaseError
from ..db.migrations import begin_exclusive, missing_sqlite_file, open_engine
from . import schema as S
from .export import StoredRun
from .representation import structure_hash
from .schema import StoreError

ENV_VAR = "TUNERLIB_STORE"


def data_dir() -> Path:
    """The user data directory of tunerlib (see the module docstring)."""
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "tunerlib"


def default_store_url() -> str:
    """``$TUNERLIB_STORE`` when set, else the store file in :func:`data_dir`."""
    return os.environ.get(ENV_VAR) or str(data_dir() / "store.db")


def _must_exist(url: str) -> None:
    path = missing_sqlite_file(url)
    if path is not None:
        raise StoreError(f"store {path} does not exist yet: upload runs first (tunerlib upload "
                         "RESULTS_DB, or --upload on a tuner)")


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CrossSessionStore:
    """An open store (a SQLite file or any SQLAlchemy URL, PostgreSQL for a shared one)."""

    def __init__(self, url: Optional[str] = None, create: bool = True) -> None:
        """Open (creating or upgrading the schema if needed) the store at ``url``
        (None: :func:`default_store_url`). ``create=False`` (readers: recommendations, warm start,
        queries) refuses a SQLite file that does not exist instead of creating it. Raises StoreError
        with a one-line message."""
        url = url or default_store_url()
        if not create:
            _must_exist(url)
        try:
            self.engine, self.display_url = open_engine(url)
        except DatabaseError as exc:
            raise StoreError(str(exc).replace("--database", "--store")) from None
        try:
            self._ensure_schema()
        except BaseException:
            self.engine.dispose()
            raise

    def _ensure_schema(self) -> None:
        try:
            with self.engine.connect() as conn:
                begin_exclusive(conn)
                version = S.read_version(conn, self.display_url)
                if version is None:
                    S.StoreBase.metadata.create_all(conn)
                    S.stamp_version(conn, S.STORE_SCHEMA_VERSION)
                elif version != S.STORE_SCHEMA_VERSION:
                    S.upgrade(conn, version, self.display_url)
                conn.commit()
        except DBAPIError as exc:
            first = (str(exc.orig).strip().splitlines() or [type(exc.orig).__name__])[0]
            raise StoreError(f"cannot open store {self.display_url}: {first}; pass --store with a "
                             "writable path or URL") from None

    # ------------------------------------------------------------------------------------ writing
    def write_run(self, run: StoredRun) -> str:
        """Store ``run`` in one transaction: ``added``, ``replaced`` (an earlier upload of the same run
        had other contents, e.g. it was still running) or ``unchanged``. Two processes uploading the
        same run at once: one adds it, the other finds it (a lost race on a unique key is retried once)."""
        try:
            return self._write_run(run)
        except IntegrityError:
            return self._write_run(run)

    def _write_run(self, run: StoredRun) -> str:
        digest = run.digest()
        with self.engine.connect() as conn:
            begin_exclusive(conn)
            found = conn.execute(select(S.TuningRun.id, S.TuningRun.digest)
                                 .where(S.TuningRun.uuid == run.uuid)).first()
            if found is not None and found.digest == digest:
                conn.rollback()
                return "unchanged"
            if found is not None:
                _delete_run(conn, found.id)
            _insert_run(conn, run, digest)
            conn.commit()
        return "added" if found is None else "replaced"

    def counts(self) -> Dict[str, int]:
        """Number of programs, representations, runs, techniques and snapshots in the store."""
        tables = {"programs": S.Program, "representations": S.Representation, "runs": S.TuningRun,
                  "techniques": S.Technique, "snapshots": S.TechniquePerformance}
        with self.engine.connect() as conn:
            return {k: conn.execute(select(func.count()).select_from(t)).scalar_one() for k, t in tables.items()}

    def close(self) -> None:
        """Release the connections."""
        self.engine.dispose()

    def __enter__(self) -> "CrossSessionStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _table(model: Any) -> Table:
    """The table of a declarative store model (typed as a Table: it holds columns and takes inserts)."""
    return model.__table__


def _new_id(result: CursorResult) -> int:
    """The primary key of the row an INSERT added."""
    key = result.inserted_primary_key
    assert key is not None  # a single-row INSERT without ON CONFLICT always has one
    return key[0]


def _get_or_create(conn: Connection, table: Any, key: Dict[str, Any], extra: Optional[Dict[str, Any]] = None) -> int:
    where = [getattr(table, k) == v for k, v in key.items()]
    found = conn.execute(select(table.id).where(*where)).scalar()
    if found is not None:
        return found
    return _new_id(conn.execute(_table(table).insert().values(**key, **(extra or {}))))


def _technique_id(conn: Connection, table: Any, name: str, root: str, full: Optional[str] = None) -> int:
    extra = {"root": root, "name": name} if table is S.MetaTechnique else {"root": root, "name": name,
                                                                            "full_name": full}
    return _get_or_create(conn, table, {"name_hash": _hash(name)}, extra)


def _insert_run(conn: Connection, run: StoredRun, digest: str) -> None:
    program = _get_or_create(conn, S.Program, {"project": run.project, "name": run.program,
                                               "version": run.version, "objective": run.objective})
    rep = _get_or_create(conn, S.Representation, {"program_id": program,
                                                  "structure_hash": structure_hash(run.representation)},
                         {"name": f"{run.project}/{run.program}", "parameter_info": run.representation})
    mclass = None if run.machine_class is None else _get_or_create(conn, S.MachineClass,
                                                                   {"name": run.machine_class})
    meta = None if run.meta is None else _technique_id(conn, S.MetaTechnique, run.meta[1], run.meta[0])
    inserted = conn.execute(_table(S.TuningRun).insert().values(
        uuid=run.uuid, representation_id=rep, meta_technique_id=meta, machine_class_id=mclass,
        space_hash=run.space_hash, log10_space_size=run.log10_space_size, state=run.state,
        start_date=run.start_date, end_date=run.end_date, upload_date=time.time(), tests=run.tests,
        best_value=run.best_value, digest=digest))
    run_id = _new_id(inserted)
    ids = {name: _technique_id(conn, S.Technique, name, root, full)
           for name, (root, full) in run.techniques.items()}
    if ids:
        conn.execute(_table(S.TuningRunTechnique).insert(),
                     [{"tuning_run_id": run_id, "technique_id": t} for t in ids.values()])
    _insert_snapshots(conn, run, run_id, meta, ids)
    if run.configurations:
        conn.execute(_table(S.StoredConfiguration).insert(),
                     [{"tuning_run_id": run_id, "rank": i, "value": v, "data": data}
                      for i, (v, data) in enumerate(run.configurations)])


def _insert_snapshots(conn: Connection, run: StoredRun, run_id: int, meta: Optional[int],
                      ids: Dict[str, int]) -> None:
    def values(s: Any) -> Dict[str, Any]:
        return {"tuning_run_id": run_id, "seconds": s.seconds, "tests": s.tests, "requests": s.requests,
                "new_bests": s.new_bests, "improvement": s.improvement, "best_value": s.best_value}
    techniques = [dict(values(s), technique_id=ids[s.technique]) for s in run.snapshots if s.technique]
    whole = [dict(values(s), meta_technique_id=meta) for s in run.snapshots if s.technique is None]
    if techniques:
        conn.execute(_table(S.TechniquePerformance).insert(), techniques)
    if whole:
        conn.execute(_table(S.MetaTechniquePerformance).insert(), whole)


def _delete_run(conn: Connection, run_id: int) -> None:
    for table in (S.TechniquePerformance, S.MetaTechniquePerformance, S.TuningRunTechnique,
                  S.StoredConfiguration):
        conn.execute(delete(table).where(table.tuning_run_id == run_id))
    conn.execute(delete(S.TuningRun).where(S.TuningRun.id == run_id))


"""Opening a results database and managing its schema version.

* :func:`resolve_url` / :func:`open_engine`: ``--database`` value -> SQLAlchemy engine (SQLite files get
  their directory created and WAL, ``synchronous=NORMAL``, ``foreign_keys=ON`` and the busy timeout of
  :func:`tunerlib.db.waits.busy_timeout`, 30 s unless ``TUNERLIB_BUSY_TIMEOUT`` says otherwise).
* :func:`ensure_schema`: create and stamp a new database, or check the stamped version of an existing one.
  Creating and migrating hold the schema lock (:func:`begin_exclusive`), so processes opening or
  migrating one database at once wait for each other instead of creating the tables twice.
* Upgrades: ``MIGRATIONS`` maps a schema version N to ``upgrade(connection)`` that turns a version-N
  database into a version-(N+1) one using the given SQLAlchemy :class:`~sqlalchemy.Connection` (DDL and
  data statements; no commit). :func:`migrate` applies every step from the stamped version up to
  :data:`~tunerlib.db.models.SCHEMA_VERSION` in order inside one transaction, then stamps the new version;
  if a step fails nothing changes. Schema 2 added ``tuning_run.host`` and ``tuning_run.pid``
  (``MIGRATIONS[1]``); schema 3 claim heartbeats and leases, ``result.worker``,
  ``tuning_run.script_version`` and the ``measurement_worker`` table (``MIGRATIONS[2]``). SQLite connections have
  ``foreign_keys=ON``; a step that rebuilds a table should run ``PRAGMA defer_foreign_keys=ON`` first.

Command line: ``tunerlib migrate URL`` calls :func:`migrate`.
"""
from __future__ import annotations

import os
import re
import time
from typing import Any, Callable, Optional

from sqlalchemy import (URL, Connection, Engine, create_engine, event, func, inspect as sa_inspect,
                        make_url, select, update)
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

from ..parameters.jsontext import compact_encoder
from .models import SCHEMA_VERSION, METADATA, DatabaseError, Meta, SchemaVersionError
from .waits import busy_timeout

DEFAULT_URL = "sqlite:///tunerlib.db"
URL_EXAMPLE = "sqlite:///path/tunerlib.db or postgresql+psycopg://user@host/db"
_EXTRAS = {"postgresql": "pip install 'tunerlib[postgres]'"}
_SCHEME_ONLY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")  # "sqlite:/x" (a one-letter drive is a path)
SCHEMA_LOCK = 0x74756E65
"""PostgreSQL advisory lock key ("tune") held while a database's schema is created or migrated."""


# ----------------------------------------------------------------------------------------- URL, engine

def resolve_url(url: Optional[str]) -> URL:
    """Turn ``--database`` into a SQLAlchemy URL: None -> ./tunerlib.db, a plain path -> a SQLite file.

    A value with ``://`` is a SQLAlchemy URL; ``scheme:rest`` without ``//`` (e.g. ``sqlite:/x``) is
    rejected as a malformed URL rather than silently taken as a relative path.
    """
    if url is None:
        url = DEFAULT_URL
    malformed = DatabaseError(f"malformed database URL {url!r}: use e.g. {URL_EXAMPLE}")
    if "://" not in url:
        if not url.strip():
            raise DatabaseError(f"empty database path: pass --database {URL_EXAMPLE}")
        if _SCHEME_ONLY.match(url):
            raise malformed
        return URL.create("sqlite", database=os.path.expanduser(url))
    try:
        return make_url(url)
    except (ArgumentError, ValueError):
        raise malformed from None


def missing_sqlite_file(url: Optional[str]) -> Optional[str]:
    """The path of the SQLite file ``url`` names when that file does not exist (or is empty), else None
    (an existing file, an in-memory database or another dialect); called by commands that must not
    create a database they were asked to read."""
    path = _sqlite_path(resolve_url(url))
    return path if path is not None and not (os.path.isfile(path) and os.path.getsize(path) > 0) else None


def _sqlite_path(url: URL) -> Optional[str]:
    """The file path of a SQLite URL, or None for in-memory and ``file:`` URI databases."""
    db = url.database
    if url.get_backend_name() != "sqlite" or not db or db == ":memory:" or db.startswith("file:"):
        return None
    return db


def _prepare_sqlite_file(path: str) -> None:
    """Create the parent directory of a SQLite file and check that the file can be written."""
    parent = os.path.dirname(os.path.abspath(path))
    reason = None
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
    probe = path if os.path.exists(path) else parent
    if os.path.isdir(path):
        reason = f"{path} is a directory"
    elif _first_non_directory(parent):
        reason = f"{_first_non_directory(parent)} is not a directory"
    elif reason is None and not os.access(probe, os.W_OK):
        reason = "permission denied"
    if reason:
        raise DatabaseError(f"cannot create database file {path}: {reason}; "
                            "pass --database with a writable path")


def _first_non_directory(path: str) -> Optional[str]:
    """The first existing component of ``path`` that is not a directory (None if there is none)."""
    current = os.sep
    for part in os.path.abspath(path).split(os.sep)[1:]:
        current = os.path.join(current, part)
        if os.path.exists(current) and not os.path.isdir(current):
            return current
    return None


#: the serializer of every JSON column: compact text, non-ASCII characters as they are (built once)
json_dumps: Callable[[Any], str] = compact_encoder(ensure_ascii=False)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={round(busy_timeout() * 1000)}")  # first: switching to WAL waits too
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def open_engine(url: Optional[str]) -> tuple[Engine, str]:
    """Create the engine for ``url`` (see :func:`resolve_url`); returns (engine, printable URL).

    Raises DatabaseError for malformed URLs, unknown dialects, missing drivers and unwritable paths.
    """
    sa_url = resolve_url(url)
    if sa_url.get_backend_name() == "sqlite":
        busy_timeout()  # a malformed TUNERLIB_BUSY_TIMEOUT is refused before anything is opened
    display = sa_url.render_as_string(hide_password=True)
    path = _sqlite_path(sa_url)
    if path is not None:
        _prepare_sqlite_file(path)
        display = path
    try:
        engine = create_engine(sa_url, json_serializer=json_dumps)
    except NoSuchModuleError:
        raise DatabaseError(f"unknown database dialect in URL {display!r}: use e.g. {URL_EXAMPLE}") from None
    except ImportError as exc:
        backend = sa_url.get_backend_name()
        fix = _EXTRAS.get(backend, f"install the Python driver for {backend!r} or use {URL_EXAMPLE}")
        raise DatabaseError(f"database driver {exc.name!r} for {display} is not installed: {fix}") from None
    except (ArgumentError, TypeError, ValueError) as exc:
        raise DatabaseError(f"malformed database URL {display!r} ({exc}): use e.g. {URL_EXAMPLE}") from None
    if sa_url.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine, display


# ---------------------------------------------------------------------------------------- schema version

def read_schema_version(conn: Connection, display: str) -> Optional[int]:
    """The stamped schema version; None for an empty database; DatabaseError for a foreign database."""
    inspector = sa_inspect(conn)
    if not inspector.has_table(Meta.name):
        if inspector.get_table_names():
            raise DatabaseError(f"database {display} is not a tunerlib results database (it has tables but "
                                "no tunerlib_meta): use a new --database")
        return None
    meta = Meta
    value: Any = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    try:
        return int(value)
    except (TypeError, ValueError):
        raise DatabaseError(f"database {display} has no valid schema_version in tunerlib_meta "
                            f"({value!r}): use a new --database") from None


def stamp_schema_version(conn: Connection, version: int, meta: Any = None) -> None:
    """Write ``schema_version`` into tunerlib_meta (or the key/value table ``meta``, e.g. the store's)
    inside the caller's transaction (insert or update)."""
    meta = Meta if meta is None else meta
    done = conn.execute(update(meta).where(meta.c.key == "schema_version").values(value=str(version)))
    if done.rowcount == 0:
        conn.execute(meta.insert().values(key="schema_version", value=str(version)))


def begin_exclusive(conn: Connection) -> None:
    """Start a transaction that holds the schema lock until it ends, so that check-then-create and
    migrations are atomic: SQLite takes its write lock (BEGIN IMMEDIATE), PostgreSQL the database's
    advisory lock :data:`SCHEMA_LOCK` (other creators and migrators wait, then see the result)."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    elif conn.dialect.name == "postgresql":
        conn.execute(select(func.pg_advisory_xact_lock(SCHEMA_LOCK)))


def check_version(version: int, display: str) -> None:
    """Raise SchemaVersionError unless ``version`` is the schema version of this tunerlib."""
    if version == SCHEMA_VERSION:
        return
    head = f"database {display} has schema version {version} but this tunerlib uses {SCHEMA_VERSION}"
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(f"{head}: upgrade tunerlib or use a new --database")
    raise SchemaVersionError(f"{head}: run `tunerlib migrate {display}` to upgrade "
                             "(back it up first) or use a new --database")


def ensure_schema(engine: Engine, display: str) -> None:
    """Create and stamp an empty database, or check the version of an existing one (race-safe)."""
    for attempt in range(3):
        try:
            with engine.connect() as conn:
                try:
                    version = read_schema_version(conn, display)
                except DatabaseError:
                    # outside a transaction SQLite answers each catalogue query from its own
                    # snapshot: a process creating the schema may commit between them; decide
                    # under the write lock below, where the read is one consistent snapshot
                    version = None
                if version is None:
                    conn.rollback()
                    begin_exclusive(conn)
                    version = read_schema_version(conn, display)
                    if version is None:
                        METADATA.create_all(conn)
                        stamp_schema_version(conn, SCHEMA_VERSION)
                        version = SCHEMA_VERSION
                    conn.commit()
            break
        except DBAPIError as exc:
            if attempt == 2 or _is_open_failure(exc):
                raise _open_error(exc, display) from None
            time.sleep(0.05 * (attempt + 1))  # another process created the schema at the same time
    assert version is not None  # the loop ends with a version read or created, or it raises
    check_version(version, display)


def _is_open_failure(exc: DBAPIError) -> bool:
    text = str(exc.orig).lower()
    return "unable to open" in text or "not a database" in text or "readonly" in text


def _open_error(exc: DBAPIError, display: str) -> DatabaseError:
    text = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else type(exc.orig).__name__
    if "not a database" in text:
        return DatabaseError(f"{display} is not a SQLite database ({text}): use a new --database")
    if "unable to open" in text or "readonly" in text:
        return DatabaseError(f"cannot create database file {display}: {text}; "
                             "pass --database with a writable path")
    return DatabaseError(f"cannot open database {display}: {text}")


# ---------------------------------------------------------------------------------------------- upgrades

Migration = Callable[[Connection], None]

def _add_run_owner(conn: Connection) -> None:
    """Schema 1 -> 2: ``tuning_run.host`` and ``tuning_run.pid`` (who drives a RUNNING run)."""
    conn.exec_driver_sql("ALTER TABLE tuning_run ADD COLUMN host TEXT")
    conn.exec_driver_sql("ALTER TABLE tuning_run ADD COLUMN pid INTEGER")


def _add_distributed_measurement(conn: Connection) -> None:
    """Schema 2 -> 3 (distributed measurement): claim heartbeats and leases
    (``desired_result.heartbeat``, ``.lease``), the worker of each result (``result.worker``), the run's
    tuner script version (``tuning_run.script_version``) and the ``measurement_worker`` table."""
    from .models import MeasurementWorker
    conn.exec_driver_sql("ALTER TABLE desired_result ADD COLUMN heartbeat FLOAT")
    conn.exec_driver_sql("ALTER TABLE desired_result ADD COLUMN lease FLOAT")
    conn.exec_driver_sql("ALTER TABLE result ADD COLUMN worker TEXT")
    conn.exec_driver_sql("ALTER TABLE tuning_run ADD COLUMN script_version TEXT")
    MeasurementWorker.create(conn)


#: the technique-state names under which schema 3 kept run artifacts, and their artifact names
_ARTIFACT_STATES = {"tunerlib:final_config": "final_config", "tunerlib:final_best": "final_best"}


def _add_run_artifacts(conn: Connection) -> None:
    """Schema 3 -> 4: the ``run_artifact`` table, filled with the artifacts schema 3 kept as technique
    state under reserved names (then removed from ``technique_state``); ``desired_result.priority``
    (always 0) and its place in the claim index go."""
    from .models import RunArtifact
    RunArtifact.create(conn)
    for old, new in _ARTIFACT_STATES.items():
        conn.exec_driver_sql("INSERT INTO run_artifact (tuning_run_id, name, data, updated) "
                             f"SELECT tuning_run_id, '{new}', data, updated FROM technique_state "
                             f"WHERE name = '{old}'")
        conn.exec_driver_sql(f"DELETE FROM technique_state WHERE name = '{old}'")
    conn.exec_driver_sql("DROP INDEX ix_desired_result_claim")
    conn.exec_driver_sql("ALTER TABLE desired_result DROP COLUMN priority")
    conn.exec_driver_sql("CREATE INDEX ix_desired_result_claim ON desired_result (tuning_run_id, state, id)")


MIGRATIONS: dict[int, Migration] = {1: _add_run_owner, 2: _add_distributed_measurement, 3: _add_run_artifacts}
"""{from_version: upgrade function to from_version + 1}."""


def migration_plan(version: int) -> list[tuple[int, Migration]]:
    """The (from_version, function) steps that bring ``version`` to SCHEMA_VERSION, in order."""
    steps = []
    for step in range(version, SCHEMA_VERSION):
        if step not in MIGRATIONS:
            raise DatabaseError(f"no migration from schema version {step} to {step + 1} is registered: "
                                "use a new --database")
        steps.append((step, MIGRATIONS[step]))
    return steps


def migrate(url: Optional[str]) -> tuple[int, int]:
    """Upgrade the database at ``url`` to SCHEMA_VERSION; returns (old version, new version).

    Back the database up first. Refuses (SchemaVersionError) a database newer than this tunerlib, and
    (DatabaseError) an empty or non-tunerlib database or a version with no registered path.
    """
    path = missing_sqlite_file(url)
    if path is not None and not os.path.isfile(path):
        raise DatabaseError(f"no database file {path}: pass the path of an existing tunerlib database")
    engine, display = open_engine(url)
    try:
        return _migrate(engine, display)
    except DBAPIError as exc:
        if _is_open_failure(exc):
            raise _open_error(exc, display) from None
        raise
    finally:
        engine.dispose()


def _migrate(engine: Engine, display: str) -> tuple[int, int]:
    with engine.connect() as conn:
        begin_exclusive(conn)
        version = read_schema_version(conn, display)
        if version is None:
            raise DatabaseError(f"database {display} is empty: there is nothing to migrate")
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(f"database {display} has schema version {version}, newer than "
                                     f"{SCHEMA_VERSION} of this tunerlib: upgrade tunerlib instead")
        if version == SCHEMA_VERSION:
            conn.rollback()
            return version, version
        for _, upgrade in migration_plan(version):
            upgrade(conn)
        stamp_schema_version(conn, SCHEMA_VERSION)
        conn.commit()
        return version, SCHEMA_VERSION

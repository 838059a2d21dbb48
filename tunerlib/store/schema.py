"""Schema of the cross-session store (DeepTuner thesis ch. 5; docs/concepts/store.md): tables, version, upgrades.

The store is a database of its own, separate from results databases: one row per uploaded tuning run,
the problem it tuned (Program → Representation) and the search approach it used (MetaTechnique,
Technique), plus performance snapshots replayed from the run (TechniquePerformance,
MetaTechniquePerformance). What it holds, and what it never holds, is listed in ``docs/concepts/store.md``: no configuration values (unless uploaded with ``--include-configurations``),
no paths, no host names, no run arguments.

Conventions as in the results database: dates are Unix seconds (REAL), names that can be long
(generated technique names) are TEXT with a SHA-256 key column for uniqueness, JSON never holds pickles.
Bump :data:`STORE_SCHEMA_VERSION` when a table changes and register the upgrade in :data:`MIGRATIONS`.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from sqlalchemy import JSON, Connection, Float, ForeignKey, Integer, String, Text, UniqueConstraint, select
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ..db.migrations import stamp_schema_version

STORE_SCHEMA_VERSION = 1
"""Version of the tables below, stamped in ``store_meta['schema_version']``."""

#: COMPLETE: the local run had stopped when it was uploaded; PARTIAL: it was still running or was
#: interrupted (a later upload of the same run replaces its snapshots)
STORED_RUN_STATES = ("COMPLETE", "PARTIAL")


class StoreError(Exception):
    """The store cannot be opened or an upload cannot be done; the message says why and what to do."""


class StoreBase(DeclarativeBase):
    """Declarative base of the store's tables (never mixed with the results database's)."""


class StoreMeta(StoreBase):
    """Key/value facts about the store; holds ``schema_version``."""

    __tablename__ = "store_meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Program(StoreBase):
    """What was tuned: project (domain), program (problem), version and objective."""

    __tablename__ = "program"
    __table_args__ = (UniqueConstraint("project", "name", "version", "objective"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)
    version: Mapped[str] = mapped_column(Text)
    objective: Mapped[str] = mapped_column(Text)


class Representation(StoreBase):
    """A program's parameter structure: the canonical string of :mod:`.representation`."""

    __tablename__ = "representation"
    __table_args__ = (UniqueConstraint("program_id", "structure_hash"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    program_id: Mapped[int] = mapped_column(ForeignKey("program.id"))
    name: Mapped[str] = mapped_column(Text)
    parameter_info: Mapped[str] = mapped_column(Text)
    structure_hash: Mapped[str] = mapped_column(String(64))


class MachineClass(StoreBase):
    """The ``--machine-class`` of uploaded runs (never a host name)."""

    __tablename__ = "machine_class"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)


class MetaTechnique(StoreBase):
    """The root technique of a run: root (class) name and the name it ran under."""

    __tablename__ = "meta_technique"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    root: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)
    name_hash: Mapped[str] = mapped_column(String(64), unique=True)


class Technique(StoreBase):
    """A technique: root name (class or technique base), the name it ran under (a registered name or a
    generated one, from which it is rebuilt) and its full generated name where it has one."""

    __tablename__ = "technique"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    root: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)
    name_hash: Mapped[str] = mapped_column(String(64), unique=True)
    full_name: Mapped[Optional[str]] = mapped_column(Text)


class TuningRun(StoreBase):
    """One uploaded run, keyed by the UUID of the local run (re-uploading it changes nothing)."""

    __tablename__ = "tuning_run"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    representation_id: Mapped[int] = mapped_column(ForeignKey("representation.id"))
    meta_technique_id: Mapped[Optional[int]] = mapped_column(ForeignKey("meta_technique.id"))
    machine_class_id: Mapped[Optional[int]] = mapped_column(ForeignKey("machine_class.id"))
    #: SHA-256 of the exact search space (names, ranges, constraints): warm start matches on it
    space_hash: Mapped[str] = mapped_column(String(64))
    log10_space_size: Mapped[Optional[float]] = mapped_column(Float)
    state: Mapped[str] = mapped_column(String(16))
    start_date: Mapped[float] = mapped_column(Float)
    end_date: Mapped[Optional[float]] = mapped_column(Float)
    upload_date: Mapped[float] = mapped_column(Float)
    tests: Mapped[int] = mapped_column(Integer)
    best_value: Mapped[Optional[float]] = mapped_column(Float)
    #: SHA-256 of the replayed events: the same digest means a re-upload has nothing new
    digest: Mapped[str] = mapped_column(String(64))


class TuningRunTechnique(StoreBase):
    """Which techniques took part in a run (the thesis' associative table)."""

    __tablename__ = "tuning_run_technique"
    tuning_run_id: Mapped[int] = mapped_column(ForeignKey("tuning_run.id"), primary_key=True)
    technique_id: Mapped[int] = mapped_column(ForeignKey("technique.id"), primary_key=True)


class _Performance:
    """Columns shared by both snapshot tables: the state of the run (or of one technique) when
    ``tests`` results had been collected, ``seconds`` into the run."""

    seconds: Mapped[float] = mapped_column(Float)
    tests: Mapped[int] = mapped_column(Integer)
    requests: Mapped[int] = mapped_column(Integer)
    new_bests: Mapped[int] = mapped_column(Integer)
    #: sum over new bests of the relative improvement (previous best - new) / |previous best|, each
    #: capped at 1: the magnitude-aware affinity's numerator
    improvement: Mapped[float] = mapped_column(Float)
    best_value: Mapped[Optional[float]] = mapped_column(Float)


class TechniquePerformance(_Performance, StoreBase):
    """A snapshot of one technique in one run (requests and new bests are that technique's)."""

    __tablename__ = "technique_performance"
    __table_args__ = (UniqueConstraint("tuning_run_id", "technique_id", "tests"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tuning_run_id: Mapped[int] = mapped_column(ForeignKey("tuning_run.id"))
    technique_id: Mapped[int] = mapped_column(ForeignKey("technique.id"))


class MetaTechniquePerformance(_Performance, StoreBase):
    """A snapshot of the whole run (every requestor, seeds included)."""

    __tablename__ = "meta_technique_performance"
    __table_args__ = (UniqueConstraint("tuning_run_id", "tests"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tuning_run_id: Mapped[int] = mapped_column(ForeignKey("tuning_run.id"))
    meta_technique_id: Mapped[Optional[int]] = mapped_column(ForeignKey("meta_technique.id"))


class StoredConfiguration(StoreBase):
    """One of the best configurations of a run (only with ``--include-configurations``): warm start."""

    __tablename__ = "stored_configuration"
    __table_args__ = (UniqueConstraint("tuning_run_id", "rank"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tuning_run_id: Mapped[int] = mapped_column(ForeignKey("tuning_run.id"))
    rank: Mapped[int] = mapped_column(Integer)
    value: Mapped[float] = mapped_column(Float)
    data: Mapped[Any] = mapped_column(JSON(none_as_null=True))


# ---------------------------------------------------------------------------------- version, upgrades
Migration = Callable[[Connection], None]

MIGRATIONS: Dict[int, Migration] = {}
"""{from_version: upgrade(connection) to from_version + 1}; none yet (version 1 is the first)."""


def read_version(conn: Connection, display: str) -> Optional[int]:
    """The stamped version; None for an empty database; StoreError for a database that is not a store."""
    inspector = sa_inspect(conn)
    if not inspector.has_table(StoreMeta.__tablename__):
        tables = inspector.get_table_names()
        if "tunerlib_meta" in tables:
            raise StoreError(f"{display} is a tunerlib results database, not a store: pass it to "
                             "`tunerlib upload` instead, and give --store another path")
        if tables:
            raise StoreError(f"{display} is not a tunerlib store (it has tables but no store_meta): "
                             "use another --store")
        return None
    meta = StoreMeta.__table__
    value: Any = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    try:
        return int(value)
    except (TypeError, ValueError):
        raise StoreError(f"store {display} has no valid schema_version ({value!r}): use another --store") \
            from None


def stamp_version(conn: Connection, version: int) -> None:
    """Write ``schema_version`` into store_meta inside the caller's transaction."""
    stamp_schema_version(conn, version, StoreMeta.__table__)


def upgrade(conn: Connection, version: int, display: str) -> int:
    """Apply every registered step from ``version`` to STORE_SCHEMA_VERSION inside the caller's
    transaction (the caller commits); StoreError for a newer store or a missing step."""
    if version > STORE_SCHEMA_VERSION:
        raise StoreError(f"store {display} has schema version {version}, newer than {STORE_SCHEMA_VERSION} "
                         "of this tunerlib: upgrade tunerlib")
    for step in range(version, STORE_SCHEMA_VERSION):
        if step not in MIGRATIONS:
            raise StoreError(f"store {display}: no upgrade from schema version {step} to {step + 1}: "
                             "use another --store")
        MIGRATIONS[step](conn)
    if version != STORE_SCHEMA_VERSION:
        stamp_version(conn, STORE_SCHEMA_VERSION)
    return STORE_SCHEMA_VERSION

"""Schema of the tunerlib results database: tables (SQLAlchemy 2.x typed ORM), the row types ResultsDB
returns and the error types. Declarations only: opening and versioning live in :mod:`.migrations`.

The ORM classes define the tables (design.md §7); :mod:`tunerlib.db.storage` runs Core statements built
from ``Model.__table__`` on its hot paths. Conventions:

* every ``*_date`` column (and ``technique_state.updated``) is a REAL holding Unix epoch seconds
  (``time.time()``): cheap to write, trivially subtracted into "seconds into the run";
* JSON columns hold plain dicts/lists (configurations, run args, ``Result.extra``): never pickles or BLOBs;
* state columns are short strings; the allowed values are the ``*_STATES`` tuples below;
* names, labels, requestors and workers are TEXT, without a length limit: generated technique names
  (and a bandit's requestor path) run to hundreds of characters, and PostgreSQL enforces the VARCHAR
  lengths that SQLite ignores. Only values of a known length (hashes, UUIDs, states) are VARCHAR(n).

Bump :data:`SCHEMA_VERSION` whenever a table changes, and register the upgrade in
:mod:`tunerlib.db.migrations`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from sqlalchemy import (JSON, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint,
                        func)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

SCHEMA_VERSION = 3
"""Version of the schema defined in this module, stamped in ``tunerlib_meta['schema_version']``."""

#: RUNNING (its process is measuring, or was killed: see TuningRun.host/pid), COMPLETE (stopped by a
#: limit or an exhausted space), ABORTED (interrupted by a signal or an error after it had results;
#: --resume continues it), FAILED (failed before its first result; never resumed)
RUN_STATES = ("RUNNING", "COMPLETE", "ABORTED", "FAILED")
#: CANCELLED: requested but not measured to the end when the run stopped (a measurement stopped at the
#: deadline or by a signal, or never claimed); --resume measures it again. ABORTED: the same, written by
#: schema-1 tunerlib (not measured again).
DESIRED_RESULT_STATES = ("REQUESTED", "RUNNING", "COMPLETE", "ABORTED", "CANCELLED")
RESULT_STATES = ("OK", "TIMEOUT", "ERROR", "INFEASIBLE")


class DatabaseError(Exception):
    """The results database cannot be opened or used; the message says why and what to do."""


class SchemaVersionError(DatabaseError):
    """The database was written by a tunerlib with another schema version."""


class AlreadyCompleteError(DatabaseError):
    """A result was reported for a request that already has one, or whose run stopped (CANCELLED)."""


class NotFoundError(DatabaseError, LookupError):
    """A run, desired result or other row named by id does not exist."""


JsonColumn = JSON(none_as_null=True)
"""JSON column type: Python ``None`` is stored as SQL NULL, anything else as JSON text."""


class Base(DeclarativeBase):
    """Declarative base of every tunerlib results-database table."""


class Meta(Base):
    """Key/value facts about the database itself; holds ``schema_version``."""

    __tablename__ = "tunerlib_meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Program(Base):
    """A tuned program, identified by (project, name)."""

    __tablename__ = "program"
    __table_args__ = (UniqueConstraint("project", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)


class ProgramVersion(Base):
    """A version of a program together with its canonical search-space description.

    ``parameter_info`` is the canonical JSON text of the search space; it can be long, so uniqueness is
    enforced on its SHA-256 (``parameter_info_hash``) instead of the text itself.
    """

    __tablename__ = "program_version"
    __table_args__ = (UniqueConstraint("program_id", "version", "parameter_info_hash"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    program_id: Mapped[int] = mapped_column(ForeignKey("program.id"))
    version: Mapped[str] = mapped_column(Text)
    parameter_info: Mapped[str] = mapped_column(Text)
    parameter_info_hash: Mapped[str] = mapped_column(String(64))


class Configuration(Base):
    """One point of the search space of a program version, keyed by the hash of its canonical JSON."""

    __tablename__ = "configuration"
    __table_args__ = (UniqueConstraint("program_version_id", "hash"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    program_version_id: Mapped[int] = mapped_column(ForeignKey("program_version.id"))
    hash: Mapped[str] = mapped_column(String(64))
    data: Mapped[Any] = mapped_column(JsonColumn)


class MachineClass(Base):
    """A class of interchangeable machines (``--machine-class``)."""

    __tablename__ = "machine_class"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)


class Machine(Base):
    """A machine results were measured on, identified by its name (host name)."""

    __tablename__ = "machine"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    machine_class_id: Mapped[Optional[int]] = mapped_column(ForeignKey("machine_class.id"))
    cpu_count: Mapped[Optional[int]] = mapped_column(Integer)
    extra: Mapped[Optional[Any]] = mapped_column(JsonColumn)


class InputClass(Base):
    """A class of inputs of a *program* (shared by all its versions), identified by (name, size)."""

    __tablename__ = "input_class"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    program_id: Mapped[int] = mapped_column(ForeignKey("program.id"))
    name: Mapped[str] = mapped_column(Text)
    size: Mapped[Optional[int]] = mapped_column(Integer)
    extra: Mapped[Optional[Any]] = mapped_column(JsonColumn)


# NULL never equals NULL in a UNIQUE constraint, so optional key columns are coalesced in the index.
Index("ux_input_class_key", InputClass.program_id, InputClass.name, func.coalesce(InputClass.size, -1),
      unique=True)


class Input(Base):
    """One concrete input of an input class (a file path, or none for generated inputs)."""

    __tablename__ = "input"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    input_class_id: Mapped[int] = mapped_column(ForeignKey("input_class.id"))
    path: Mapped[Optional[str]] = mapped_column(Text)
    extra: Mapped[Optional[Any]] = mapped_column(JsonColumn)


Index("ux_input_key", Input.input_class_id, func.coalesce(Input.path, ""), unique=True)


class TuningRun(Base):
    """One tuning run: its arguments, seed, objective and lifecycle state (``RUN_STATES``)."""

    __tablename__ = "tuning_run"
    __table_args__ = (Index("ix_tuning_run_version_label", "program_version_id", "label"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    program_version_id: Mapped[int] = mapped_column(ForeignKey("program_version.id"))
    label: Mapped[Optional[str]] = mapped_column(Text)
    args: Mapped[Optional[Any]] = mapped_column(JsonColumn)
    seed: Mapped[Optional[int]] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16))
    start_date: Mapped[float] = mapped_column(Float)
    end_date: Mapped[Optional[float]] = mapped_column(Float)
    machine_id: Mapped[Optional[int]] = mapped_column(ForeignKey("machine.id"))
    #: host name and process id of the process driving the run (schema 2): a RUNNING run whose process
    #: is gone was killed
    host: Mapped[Optional[str]] = mapped_column(Text)
    pid: Mapped[Optional[int]] = mapped_column(Integer)
    objective: Mapped[str] = mapped_column(Text)
    #: version of the tuner script that drives the run (schema 3): ``tunerlib worker`` refuses to
    #: measure for a run whose script version differs from its own
    script_version: Mapped[Optional[str]] = mapped_column(Text)


class DesiredResult(Base):
    """A request to measure a configuration in a run (``DESIRED_RESULT_STATES``).

    Written REQUESTED by the search driver, claimed (RUNNING) by a measurement worker, and set COMPLETE
    with ``result_id`` once its result exists.
    """

    __tablename__ = "desired_result"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tuning_run_id: Mapped[int] = mapped_column(ForeignKey("tuning_run.id"))
    configuration_id: Mapped[int] = mapped_column(ForeignKey("configuration.id"))
    requestor: Mapped[str] = mapped_column(Text)
    generation: Mapped[int] = mapped_column(Integer)
    priority: Mapped[int] = mapped_column(Integer, default=0)
    limit: Mapped[Optional[float]] = mapped_column(Float)
    state: Mapped[str] = mapped_column(String(16))
    worker: Mapped[Optional[str]] = mapped_column(Text)
    request_date: Mapped[float] = mapped_column(Float)
    start_date: Mapped[Optional[float]] = mapped_column(Float)
    result_id: Mapped[Optional[int]] = mapped_column(ForeignKey("result.id", use_alter=True))
    #: schema 3: when the claiming worker last showed it is alive (Unix seconds) and the lease in seconds
    #: after which a claim without a newer heartbeat is put back to REQUESTED (NULL: never, the claims
    #: of the run's own processes)
    heartbeat: Mapped[Optional[float]] = mapped_column(Float)
    lease: Mapped[Optional[float]] = mapped_column(Float)


# Serves claim_next (run, REQUESTED, id; priority is always 0 since schema 2 code) and pending_count
# (run, state) from one index.
Index("ix_desired_result_claim", DesiredResult.tuning_run_id, DesiredResult.state,
      DesiredResult.priority.desc(), DesiredResult.id)


class Result(Base):
    """A measurement of one configuration (``RESULT_STATES``); durable as soon as it is committed."""

    __tablename__ = "result"
    __table_args__ = (Index("ix_result_run_id", "tuning_run_id", "id"),
                      Index("ix_result_configuration", "configuration_id"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tuning_run_id: Mapped[int] = mapped_column(ForeignKey("tuning_run.id"))
    configuration_id: Mapped[int] = mapped_column(ForeignKey("configuration.id"))
    desired_result_id: Mapped[Optional[int]] = mapped_column(ForeignKey("desired_result.id"))
    machine_id: Mapped[Optional[int]] = mapped_column(ForeignKey("machine.id"))
    input_id: Mapped[Optional[int]] = mapped_column(ForeignKey("input.id"))
    state: Mapped[str] = mapped_column(String(16))
    time: Mapped[Optional[float]] = mapped_column(Float)
    accuracy: Mapped[Optional[float]] = mapped_column(Float)
    energy: Mapped[Optional[float]] = mapped_column(Float)
    size: Mapped[Optional[float]] = mapped_column(Float)
    extra: Mapped[Optional[Any]] = mapped_column(JsonColumn)
    was_new_best: Mapped[bool] = mapped_column(Boolean, default=False)
    collection_date: Mapped[float] = mapped_column(Float)
    collection_cost: Mapped[Optional[float]] = mapped_column(Float)
    #: the worker that measured it (schema 3): ``main``, ``worker-N`` or a ``tunerlib worker`` id
    worker: Mapped[Optional[str]] = mapped_column(Text)


class MeasurementWorker(Base):
    """A ``tunerlib worker`` process serving a run (schema 3): registered when it starts, its heartbeat
    renewed while it lives (idle or measuring), ``stopped`` set when it exits. The search driver counts
    the live ones to keep enough requests in flight."""

    __tablename__ = "measurement_worker"
    __table_args__ = (Index("ix_measurement_worker_run", "tuning_run_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tuning_run_id: Mapped[int] = mapped_column(ForeignKey("tuning_run.id"))
    name: Mapped[str] = mapped_column(Text)
    machine_id: Mapped[Optional[int]] = mapped_column(ForeignKey("machine.id"))
    started: Mapped[float] = mapped_column(Float)
    heartbeat: Mapped[float] = mapped_column(Float)
    lease: Mapped[float] = mapped_column(Float)
    stopped: Mapped[Optional[float]] = mapped_column(Float)


class TechniqueState(Base):
    """Persisted JSON state of one technique in one run (for --resume); one row per (run, name)."""

    __tablename__ = "technique_state"
    __table_args__ = (UniqueConstraint("tuning_run_id", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tuning_run_id: Mapped[int] = mapped_column(ForeignKey("tuning_run.id"))
    name: Mapped[str] = mapped_column(Text)
    data: Mapped[Any] = mapped_column(JsonColumn)
    updated: Mapped[float] = mapped_column(Float)


# ----------------------------------------------------------------------------------------------------
# Row types returned by ResultsDB (frozen dataclasses; their JSON fields are plain dicts/lists that the
# caller must treat as read-only).


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """One measurement as ``ResultsDB.complete`` stores it (``state`` in ``RESULT_STATES``; ``extra`` is
    JSON; ``collection_cost`` the seconds the measurement took, machine and input ids where known)."""

    state: str
    time: Optional[float] = None
    accuracy: Optional[float] = None
    energy: Optional[float] = None
    size: Optional[float] = None
    extra: Optional[dict] = None
    collection_cost: Optional[float] = None
    machine_id: Optional[int] = None
    input_id: Optional[int] = None
    worker: Optional[str] = None


@dataclass(frozen=True, slots=True)
class Claim:
    """A desired result claimed by a measurement worker (returned by ``ResultsDB.claim_next``)."""

    dr_id: int
    run_id: int
    configuration_id: int
    config_hash: str
    config_data: Any
    limit: Optional[float]
    requestor: str
    generation: int


@dataclass(frozen=True, slots=True)
class ResultRow:
    """A result joined with its configuration and requestor (``results_after`` / ``run_results``)."""

    id: int
    desired_result_id: Optional[int]
    configuration_id: int
    config_hash: str
    config_data: Any
    state: str
    time: Optional[float]
    accuracy: Optional[float]
    energy: Optional[float]
    size: Optional[float]
    extra: Any
    was_new_best: bool
    requestor: Optional[str]
    collection_cost: Optional[float]
    collection_date: Optional[float] = None


@dataclass(frozen=True, slots=True)
class DesiredResultRow:
    """One desired result in request order (``ResultsDB.desired_results``)."""

    id: int
    config_hash: str
    requestor: str
    generation: int
    state: str
    result_id: Optional[int]

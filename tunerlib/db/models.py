"""Schema of the tunerlib results database: tables (SQLAlchemy 2.x Core), the row types ResultsDB
returns and the error types. Declarations only: opening and versioning live in :mod:`.migrations`.

The Core tables below define the schema (the documentation's "The results database"); :mod:`tunerlib.db.storage` runs Core statements
on them. Conventions:

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

from sqlalchemy import (JSON, Boolean, Column, Float, ForeignKey, Index, Integer, MetaData, String, Table, Text,
                        UniqueConstraint, func)

SCHEMA_VERSION = 4
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


METADATA = MetaData()
"""Every table of the results database (SQLAlchemy Core: declaring tables costs a fraction of what ORM
mapping costs at import, and the storage runs Core statements only)."""


def _id() -> Column:
    return Column("id", Integer, primary_key=True)


def _required(name: str, type_: Any, *args: Any, **kwargs: Any) -> Column:
    return Column(name, type_, *args, nullable=False, **kwargs)


def _ref(name: str, target: str, required: bool = True, **kwargs: Any) -> Column:
    return Column(name, Integer, ForeignKey(target, **kwargs), nullable=not required)


#: key/value facts about the database itself; holds ``schema_version``
Meta = Table("tunerlib_meta", METADATA,
             Column("key", String(64), primary_key=True),
             _required("value", Text))

#: a tuned program, identified by (project, name)
Program = Table("program", METADATA, _id(),
                _required("project", Text), _required("name", Text),
                UniqueConstraint("project", "name"))

#: a version of a program together with its canonical search-space description. ``parameter_info`` is
#: the canonical JSON text of the search space; it can be long, so uniqueness is enforced on its SHA-256
#: (``parameter_info_hash``) instead of the text itself.
ProgramVersion = Table("program_version", METADATA, _id(),
                       _ref("program_id", "program.id"),
                       _required("version", Text), _required("parameter_info", Text),
                       _required("parameter_info_hash", String(64)),
                       UniqueConstraint("program_id", "version", "parameter_info_hash"))

#: one point of the search space of a program version, keyed by the hash of its canonical JSON
Configuration = Table("configuration", METADATA, _id(),
                      _ref("program_version_id", "program_version.id"),
                      _required("hash", String(64)), _required("data", JsonColumn),
                      UniqueConstraint("program_version_id", "hash"))

#: a class of interchangeable machines (``--machine-class``)
MachineClass = Table("machine_class", METADATA, _id(), _required("name", Text, unique=True))

#: a machine results were measured on, identified by its name (host name)
Machine = Table("machine", METADATA, _id(),
                _required("name", Text, unique=True),
                _ref("machine_class_id", "machine_class.id", required=False),
                Column("cpu_count", Integer), Column("extra", JsonColumn))

#: a class of inputs of a *program* (shared by all its versions), identified by (name, size)
InputClass = Table("input_class", METADATA, _id(),
                   _ref("program_id", "program.id"),
                   _required("name", Text), Column("size", Integer), Column("extra", JsonColumn))

# NULL never equals NULL in a UNIQUE constraint, so optional key columns are coalesced in the index.
Index("ux_input_class_key", InputClass.c.program_id, InputClass.c.name, func.coalesce(InputClass.c.size, -1),
      unique=True)

#: one concrete input of an input class (a file path, or none for generated inputs)
Input = Table("input", METADATA, _id(),
              _ref("input_class_id", "input_class.id"),
              Column("path", Text), Column("extra", JsonColumn))

Index("ux_input_key", Input.c.input_class_id, func.coalesce(Input.c.path, ""), unique=True)

#: one tuning run: its arguments, seed, objective and lifecycle state (``RUN_STATES``). ``host`` and
#: ``pid`` (schema 2) name the process driving the run: a RUNNING run whose process is gone was killed.
#: ``script_version`` (schema 3) is the version of the tuner script that drives the run: ``tunerlib
#: worker`` refuses to measure for a run whose script version differs from its own.
TuningRun = Table("tuning_run", METADATA, _id(),
                  _required("uuid", String(36), unique=True),
                  _ref("program_version_id", "program_version.id"),
                  Column("label", Text), Column("args", JsonColumn), Column("seed", Integer),
                  _required("state", String(16)), _required("start_date", Float), Column("end_date", Float),
                  _ref("machine_id", "machine.id", required=False),
                  Column("host", Text), Column("pid", Integer), _required("objective", Text),
                  Column("script_version", Text),
                  Index("ix_tuning_run_version_label", "program_version_id", "label"))

#: a request to measure a configuration in a run (``DESIRED_RESULT_STATES``): written REQUESTED by the
#: search driver, claimed (RUNNING) by a measurement worker, and set COMPLETE with ``result_id`` once its
#: result exists. ``heartbeat`` (schema 3) is when the claiming worker last showed it is alive (Unix
#: seconds) and ``lease`` the seconds after which a claim without a newer heartbeat is put back to
#: REQUESTED (NULL: never, the claims of the run's own processes).
DesiredResult = Table("desired_result", METADATA, _id(),
                      _ref("tuning_run_id", "tuning_run.id"),
                      _ref("configuration_id", "configuration.id"),
                      _required("requestor", Text), _required("generation", Integer),
                      Column("limit", Float), _required("state", String(16)), Column("worker", Text),
                      _required("request_date", Float), Column("start_date", Float),
                      _ref("result_id", "result.id", required=False, use_alter=True),
                      Column("heartbeat", Float), Column("lease", Float))

# Serves claim_next (run, REQUESTED, oldest id first) and the run's requests by state from one index.
Index("ix_desired_result_claim", DesiredResult.c.tuning_run_id, DesiredResult.c.state, DesiredResult.c.id)

#: a measurement of one configuration (``RESULT_STATES``); durable as soon as it is committed.
#: ``worker`` (schema 3) is the worker that measured it: ``main``, ``worker-N`` or a ``tunerlib worker`` id
Result = Table("result", METADATA, _id(),
               _ref("tuning_run_id", "tuning_run.id"),
               _ref("configuration_id", "configuration.id"),
               _ref("desired_result_id", "desired_result.id", required=False),
               _ref("machine_id", "machine.id", required=False),
               _ref("input_id", "input.id", required=False),
               _required("state", String(16)),
               Column("time", Float), Column("accuracy", Float), Column("energy", Float), Column("size", Float),
               Column("extra", JsonColumn), _required("was_new_best", Boolean, default=False),
               _required("collection_date", Float), Column("collection_cost", Float), Column("worker", Text),
               Index("ix_result_run_id", "tuning_run_id", "id"),
               Index("ix_result_configuration", "configuration_id"))

#: a ``tunerlib worker`` process serving a run (schema 3): registered when it starts, its heartbeat
#: renewed while it lives (idle or measuring), ``stopped`` set when it exits. The search driver counts the
#: live ones to keep enough requests in flight.
MeasurementWorker = Table("measurement_worker", METADATA, _id(),
                          _ref("tuning_run_id", "tuning_run.id"),
                          _required("name", Text), _ref("machine_id", "machine.id", required=False),
                          _required("started", Float), _required("heartbeat", Float), _required("lease", Float),
                          Column("stopped", Float),
                          Index("ix_measurement_worker_run", "tuning_run_id"))

#: persisted JSON state of one technique in one run (for --resume); one row per (run, name)
TechniqueState = Table("technique_state", METADATA, _id(),
                       _ref("tuning_run_id", "tuning_run.id"),
                       _required("name", Text), _required("data", JsonColumn), _required("updated", Float),
                       UniqueConstraint("tuning_run_id", "name"))

#: a JSON artifact of one run, kept for the reports (schema 4), one row per (run, name): what the tuner
#: printed as its best at the end (``final_config``) and the best it re-timed (``final_best``); see
#: :mod:`tunerlib.engine.final_config`
RunArtifact = Table("run_artifact", METADATA, _id(),
                    _ref("tuning_run_id", "tuning_run.id"),
                    _required("name", Text), _required("data", JsonColumn), _required("updated", Float),
                    UniqueConstraint("tuning_run_id", "name"))


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
class ResultPlace:
    """Where a result was measured (``result_places``): the machine's name and class, and the worker."""

    machine: Optional[str]
    machine_class: Optional[str]
    worker: Optional[str]


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

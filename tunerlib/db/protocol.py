"""ResultsStore: what the run loop, the drivers and the tools need from a results database.

Backends: :class:`tunerlib.db.storage.ResultsDB` (SQLAlchemy: SQLite files by default, any SQLAlchemy URL)
and :class:`tunerlib.db.memory.MemoryStore` (one process, nothing on disk: ``tune_function``, technique
tests). The storage contract kit :mod:`tunerlib.testing.storage` checks a backend against this protocol;
``tests/db/test_store_contract.py`` runs it against every backend.
:func:`open_store` picks the backend from the ``--database`` value (``memory://`` for the in-memory one).

Every method is one short transaction: what it wrote is durable (for the backend) when it returns.
JSON values (configurations, extras, run arguments, technique state) go in and come out as plain
dicts/lists, never shared with the caller. Ids are ints; dates are Unix seconds.
"""
from __future__ import annotations

from typing import Any, Optional, Protocol, Sequence, Union, runtime_checkable

from .memory import MEMORY_URL, MemoryStore
from .models import Claim, DesiredResultRow, ResultPlace, ResultRecord, ResultRow

__all__ = ["MEMORY_URL", "ResultsStore", "open_store"]


@runtime_checkable
class ResultsStore(Protocol):
    """The storage protocol (see the module docstring for transactions and values)."""

    #: how the store is named in messages (a file path, a URL without password, ``memory://``)
    display_url: str

    # ---- identity rows: called once when a run is set up ----------------------------------
    def program_version_id(self, project: str, program: str, version: str, parameter_info: str) -> int:
        """Get or create the program version; a different ``parameter_info`` is another version."""

    def machine_id(self, name: str, machine_class: Optional[str] = None,
                   cpu_count: Optional[int] = None) -> int:
        """Get or create the machine ``name``; a given class or cpu count updates it."""

    def input_id(self, program_version_id: int, input_class: str, path: Optional[str] = None,
                 size: Optional[int] = None, extra: Optional[dict] = None) -> int:
        """Get or create an input (called by a measurement driver for each new input)."""

    # ---- runs -------------------------------------------------------------------------------
    def create_run(self, program_version_id: int, label: Optional[str] = None, args: Optional[dict] = None,
                   seed: Optional[int] = None, machine_id: Optional[int] = None, objective: str = "",
                   host: Optional[str] = None, pid: Optional[int] = None,
                   script_version: Optional[str] = None) -> tuple[int, str]:
        """A new run in state RUNNING (called when a checked run starts); returns (run id, uuid).
        ``script_version``: the tuner script's version, which ``tunerlib worker`` must match."""

    def take_run(self, run_id: int, host: str, pid: int, script_version: Optional[str] = None) -> None:
        """Mark a resumed run RUNNING, driven by ``pid`` on ``host`` (and its tuner script version)."""

    def set_run_state(self, run_id: int, state: str) -> None:
        """Set RUNNING / COMPLETE / ABORTED / FAILED (called when a run stops)."""

    def runs_of(self, program_version_id: int, label: Optional[str] = None) -> list[dict]:
        """The runs of a program version (and label), newest first, with result and request counts
        (called by ``--resume``)."""

    def runs_with_uuid_prefix(self, prefix: str) -> list[dict]:
        """The runs whose uuid starts with ``prefix`` (called by ``--resume UUID``)."""

    def list_runs(self) -> list[dict]:
        """Every run in id order, joined with its program (``tunerlib runs``)."""

    def run_export(self, run_id: int) -> dict:
        """The run with its program and space (called by ``tunerlib upload``): uuid, state, start_date,
        end_date, seed, args, objective, project, program, version, parameter_info, machine_class
        (None when the run has no machine class)."""

    # ---- requests -------------------------------------------------------------------------
    def configuration_id(self, program_version_id: int, hash: str, data: Any) -> int:
        """Get or create the configuration with this hash (called for each new request)."""

    def request_configuration(self, run_id: int, program_version_id: int, hash: str, data: Any, requestor: str,
                              generation: int, limit: Optional[float] = None) -> int:
        """Get or create the configuration (as :meth:`configuration_id`) and queue a measurement of it in
        state REQUESTED, in one transaction (the search driver, for each new request); returns the
        request's id."""

    def request_and_claim(self, run_id: int, program_version_id: int, hash: str, data: Any, requestor: str,
                          generation: int, limit: Optional[float], worker: str) -> Claim:
        """As :meth:`request_configuration`, the request written already claimed by ``worker`` (RUNNING, no
        lease) in the same transaction (the run's in-process executor measures it at once); the claim."""

    def claim_next(self, run_id: int, worker: str, lease: Optional[float] = None) -> Optional[Claim]:
        """Atomically claim the oldest REQUESTED request for ``worker`` (RUNNING); None if there is none.
        With a ``lease`` (s) the claim is re-queued by :meth:`requeue_expired` unless :meth:`beat` renews
        it (``tunerlib worker``)."""

    def complete(self, desired_result_id: int, record: ResultRecord) -> int:
        """Store the result of a REQUESTED or RUNNING request and mark it COMPLETE (whoever measured it
        first); the result id. AlreadyCompleteError when it has a result or was cancelled."""

    def cancel_unfinished(self, run_id: int) -> int:
        """REQUESTED and RUNNING requests become CANCELLED (called when a run stops)."""

    def requeue_unfinished(self, run_id: int, at_most: Optional[int] = None) -> int:
        """CANCELLED and RUNNING requests, oldest first, become REQUESTED (called by ``--resume``)."""

    def tighten_limits(self, run_id: int, limit: float) -> int:
        """Lower the limit of waiting requests to ``limit`` (called when a new best shrinks it)."""

    def running_claims(self, run_id: int, worker: str) -> list[int]:
        """Ids of the requests ``worker`` holds (called when a worker died)."""

    # ---- leases and remote workers (tunerlib.db.leases) -----------------------------------
    def beat(self, run_id: int, worker: str) -> int:
        """Renew the heartbeat of ``worker`` and its claims (its heartbeat thread); claims it holds."""

    def requeue_expired(self, run_id: int, now: Optional[float] = None) -> list[int]:
        """Claims whose heartbeat is older than their lease become REQUESTED (the search driver)."""

    def release(self, desired_result_id: int, worker: str) -> bool:
        """A worker stopped by a signal gives its claim back unmeasured (REQUESTED)."""

    def register_worker(self, run_id: int, name: str, machine_id: Optional[int], lease: float) -> None:
        """A ``tunerlib worker`` starts serving the run."""

    def unregister_worker(self, run_id: int, name: str) -> None:
        """That worker stops serving the run."""

    def live_workers(self, run_id: int) -> int:
        """Registered workers of the run not stopped and within their lease (the search driver)."""

    # ---- results --------------------------------------------------------------------------
    def results_after(self, run_id: int, after_result_id: int) -> list[ResultRow]:
        """The run's results with id > ``after_result_id`` in id order (the search driver's poll)."""

    def run_results(self, run_id: int) -> list[ResultRow]:
        """Every result of the run in id order."""

    def desired_results(self, run_id: int) -> list[DesiredResultRow]:
        """Every request of the run in request order (``--resume``)."""

    def counts_by_state(self, run_id: int) -> dict[str, int]:
        """{result state: count} of the run."""

    def mark_new_best(self, result_ids: Sequence[int]) -> None:
        """Flag these results as new bests (called by the search driver)."""

    def error_results(self, run_id: int, limit: Optional[int] = None) -> list[tuple[int, Any]]:
        """(result id, extra) of the run's ERROR results in id order (``tunerlib errors``)."""

    def result_places(self, run_id: int) -> dict[int, ResultPlace]:
        """{result id: machine name, machine class and worker} of the run's results that name a machine
        or a worker (``tunerlib export``)."""

    # ---- technique state ------------------------------------------------------------------
    def save_technique_state(self, run_id: int, name: str, data: Any) -> None:
        """Insert or replace the JSON state of technique ``name`` (snapshots, end of run)."""

    def load_technique_state(self, run_id: int, name: str) -> Optional[Any]:
        """The saved state of technique ``name``, or None (``--resume``)."""

    # ---- run artifacts ----------------------------------------------------------------------
    def save_run_artifact(self, run_id: int, name: str, data: Any) -> None:
        """Insert or replace the run's JSON artifact ``name`` (called at the end of a run with what the
        tuner printed as its best, ``final_config``, and the best it re-timed, ``final_best``: see
        :mod:`tunerlib.engine.final_config`); None removes it."""

    def load_run_artifact(self, run_id: int, name: str) -> Optional[Any]:
        """The run's JSON artifact ``name``, or None (``tunerlib report``, ``--resume``)."""

    # ---- connections ------------------------------------------------------------------------
    def listen(self, run_id: int) -> Optional[Any]:
        """An object whose ``wait(timeout)`` returns early when a result of the run is stored by another
        process (PostgreSQL LISTEN/NOTIFY) and ``close()``; None where the engine cannot (poll instead)."""

    def worker_url(self) -> str:
        """The URL measurement worker processes open (UsageError where the store is not shared)."""

    def dispose(self) -> None:
        """Drop pooled connections (before forking workers); the store stays usable."""

    def close(self) -> None:
        """Release everything; the store cannot be used afterwards."""


def open_store(url: Optional[str]) -> Union["ResultsStore", Any]:
    """The store for a ``--database`` value: ``memory://`` is a MemoryStore, anything else a ResultsDB
    (None: ./tunerlib.db)."""
    if url == MEMORY_URL:
        return MemoryStore()
    from .storage import ResultsDB
    return ResultsDB(url)


def open_existing(url: str, verb: str = "read") -> Any:
    """An existing results database for a command that only reads it (``upload``, ``report``):
    DatabaseError (one line) when the SQLite file is missing or empty -- it is not created -- or
    when ``url`` is not a readable tunerlib results database (``cannot <verb> <url>: ...``)."""
    from .migrations import missing_sqlite_file
    from .models import DatabaseError
    from .storage import ResultsDB
    path = missing_sqlite_file(url)
    if path is not None:
        raise DatabaseError(f"no results database at {path}: pass the path of a tunerlib results database")
    try:
        return ResultsDB(url)
    except DatabaseError as exc:
        raise DatabaseError(f"cannot {verb} {url}: {exc}") from None

"""The measurement driver: claims REQUESTED rows, runs the tuner script, stores results.

It shares nothing with the search driver but the results database, so any number of
them can run in parallel processes (or on other machines against a shared database).
"""
from __future__ import annotations

import json
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..db import Claim, ResultRecord, ResultsStore
from ..db.jsoncopy import is_plain_json
from ..interrupts import Interrupts, MeasurementTimedOut
from ..process import command_clock, with_command_seconds
from ..result import Configuration, DesiredResult, Input, Result
from .contracts import InputSelector, Measurable

__all__ = ["MeasurementDriver", "RequestWriter", "claim", "desired_result"]


def desired_result(claim: Claim) -> DesiredResult:
    """The DesiredResult handed to ``run()`` for a claimed request."""
    return DesiredResult(Configuration(claim.config_data, claim.config_hash, claim.configuration_id),
                         claim.dr_id, claim.limit, claim.requestor)


def claim(store: ResultsStore, run_id: int, worker: str, lease: Optional[float] = None) -> Optional[DesiredResult]:
    """The one place a request is claimed, whoever measures it: the oldest REQUESTED request of the run,
    atomically RUNNING for ``worker`` (with a ``lease`` in seconds for a ``tunerlib worker``); None when
    none waits."""
    found = store.claim_next(run_id, worker, lease)
    return None if found is None else desired_result(found)


class RequestWriter:
    """Writes a run's new requests (the search driver's ``write``): REQUESTED, for whoever claims them, or,
    while :attr:`claim_for` names a worker (the in-process executor, which measures each request as soon
    as it gets it), already claimed by that worker in the same transaction, queued in :attr:`claimed`
    for the run loop to hand over."""

    def __init__(self, store: ResultsStore, run_id: int, program_version_id: int) -> None:
        self.store = store
        self.run_id = run_id
        self.pv_id = program_version_id
        #: the worker new requests are written claimed by, or None (written REQUESTED)
        self.claim_for: Optional[str] = None
        #: requests written claimed and not yet handed over, oldest first
        self.claimed: List[DesiredResult] = []

    def __call__(self, key: str, data: Dict[str, Any], requestor: str, generation: int,
                 limit: Optional[float]) -> None:
        """Write one new request (called by the search driver for each)."""
        if self.claim_for is None:
            self.store.request_configuration(self.run_id, self.pv_id, key, data, requestor, generation, limit)
        else:
            self.claimed.append(desired_result(self.store.request_and_claim(
                self.run_id, self.pv_id, key, data, requestor, generation, limit, self.claim_for)))

_MAX_TRACEBACK = 20000


def _check_json(extra: Any) -> None:
    """Raise TypeError or ValueError when ``extra`` cannot be written as JSON (called once per result
    on what ``run()`` returned); a value of JSON's own types is accepted without encoding it."""
    if not is_plain_json(extra):
        json.dumps(extra)


class MeasurementDriver:
    """Called by the in-process executor (:meth:`measure`, for each request it is handed) or by a worker
    process (:meth:`run_one`: claim, measure, record)."""

    def __init__(self, db: Optional[ResultsStore], run_id: int, program_version_id: int,
                 interface: Measurable, input_manager: InputSelector,
                 machine_id: Optional[int], worker: str = "main",
                 interrupts: Optional[Interrupts] = None, cap: Optional[float] = None,
                 retrying: Optional[Callable[[Callable[[], Any]], Any]] = None) -> None:
        """``interrupts`` (installed by the caller) stops a measurement at the run's deadline or on a
        signal; ``cap`` (``--measurement-timeout``) is the longest a measurement may run; ``retrying(call)``
        runs the driver's own database calls (a remote worker retries them when the connection drops).
        ``db`` None: only :meth:`measure_only` may be called (a Dask worker, which has no database)."""
        self.retrying = retrying or (lambda call: call())
        self.db = db
        self.interrupts = interrupts or Interrupts()
        self.cap = cap
        self.run_id = run_id
        self.pv_id = program_version_id
        self.interface = interface
        self.input_manager = input_manager
        self.machine_id = machine_id
        self.worker = worker
        self._input_ids: Dict[Tuple, int] = {}
        #: set when run() broke the contract; the run loop stops with this message
        self.contract_error: Optional[str] = None

    def run_one(self) -> bool:
        """Claim, measure and record one request (a worker's step); False when there was nothing to
        claim. Raises RunInterrupted when the run stops during the measurement: the request stays
        RUNNING and the run loop cancels it."""
        assert self.db is not None  # a driver without a database only measures
        desired = claim(self.db, self.run_id, self.worker)
        if desired is None:
            return False
        _, record = self.measure(desired)
        assert desired.id is not None  # a claimed request has its id
        self.db.complete(desired.id, record)
        return True

    def measure(self, desired: DesiredResult) -> Tuple[Result, ResultRecord]:
        """Measure one claimed request (the serial loop's step between ``ask`` and ``tell``): the
        Result and its database record (cost, machine, input). Raises RunInterrupted as above."""
        result, inp, cost = self.measure_only(desired)
        return result, self.record_of(result, inp, cost)

    def record_of(self, result: Result, inp: Optional[Input], cost: Optional[float]) -> ResultRecord:
        """The database record of ``result``, measured on ``inp`` (None: unknown) in ``cost`` seconds by
        this driver's worker on its machine (called by :meth:`measure`)."""
        return result.record(cost, self.machine_id, None if inp is None else self._input_id(inp), self.worker)

    def measure_only(self, desired: DesiredResult) -> Tuple[Result, Input, float]:
        """Measure one request without touching the database: (Result, the input it ran on, seconds
        it took). :meth:`measure` records them; a Dask worker (no database) returns them to the run.
        The wall time of the commands run under the limit is recorded in the Result (:mod:`.limits`)."""
        limit = self._limit(desired.limit)
        if limit != desired.limit:
            desired = DesiredResult(desired.configuration, desired.id, limit, desired.requestor)
        inp = self.input_manager.select_input(desired)
        start = time.perf_counter()
        with command_clock() as walls:
            try:
                with self.interrupts.measuring(self.cap):
                    result = with_command_seconds(self._measure(desired, inp), walls)
            except MeasurementTimedOut as exc:
                result = Result(state="TIMEOUT", extra={"error": str(exc)})
        if self.interrupts.cap_hit and self.cap is not None and result.state != "TIMEOUT":  # stopped in C code
            result = Result(state="TIMEOUT", extra={"error": str(MeasurementTimedOut(self.cap))})
        return result, inp, time.perf_counter() - start

    def _limit(self, requested: Optional[float]) -> Optional[float]:
        """The ``limit`` run() gets: the request's limit and the cap, whichever is smaller. (The run's
        deadline is not a limit: a measurement stopped by it is cancelled, not a TIMEOUT.)"""
        limits = [v for v in (requested, self.cap) if v is not None]
        return min(limits) if limits else None

    def _measure(self, desired: DesiredResult, inp: Input) -> Result:
        try:
            result = self.interface.run(desired, inp, desired.limit)
        except Exception as exc:  # the run goes on; the traceback is kept with the result
            tb = traceback.format_exc()[-_MAX_TRACEBACK:]
            return Result(state="ERROR", extra={"error": f"{type(exc).__name__}: {exc}",
                                                "traceback": tb})
        if not isinstance(result, Result):
            self.contract_error = (f"{type(self.interface).__name__}.run() returned "
                                   f"{type(result).__name__}, not a tunerlib.Result: "
                                   f"return Result(time=...) or Result(extra={{...}})")
        else:
            try:
                _check_json(result.extra)
            except (TypeError, ValueError) as exc:
                self.contract_error = (f"{type(self.interface).__name__}.run() returned a Result whose "
                                       f"extra is not JSON-compatible ({exc}): store numbers, strings, "
                                       f"lists and dicts only")
        if self.contract_error:
            return Result(state="ERROR", extra={"error": self.contract_error})
        return result

    def _input_id(self, inp: Input) -> int:
        db = self.db
        assert db is not None  # only measure() records inputs, and it needs the database
        key = (inp.input_class, inp.path, inp.size)
        iid = self._input_ids.get(key)
        if iid is None:
            iid = self.retrying(lambda: db.input_id(self.pv_id, inp.input_class, inp.path, inp.size,
                                                          inp.extra))
            self._input_ids[key] = iid
        return iid

"""Executors: what measures the requests of a run.

The run loop (:func:`tunerlib.engine.loop.run_loop`) only proposes requests and feeds results to the
technique; an :class:`Executor` measures, whatever the options: in the run's own process
(:class:`~tunerlib.executors.serial.SerialExecutor`), a local process pool
(:class:`~tunerlib.executors.pool.WorkerPool`, ``--parallelism N``), ``tunerlib worker`` processes
(:class:`~tunerlib.executors.leases.RemoteWorkers`, ``--distributed``) or a Dask cluster
(:class:`~tunerlib.executors.dask.DaskExecutor`). Every request is claimed by :func:`claim`, or written
already claimed when the executor measures each request at once (:attr:`Executor.claims_when_requested`:
the in-process executor; one transaction per request instead of two). There are two kinds, told apart by
:attr:`Executor.pulls_requests`:

* **pulling** executors (the local pool, remote workers): their worker processes claim REQUESTED rows
  and store results in the shared results database themselves; the run loop learns of results from
  the database and never calls :meth:`Executor.submit`.
* **pushing** executors (serial, Dask): the run loop claims each request and hands it over with
  :meth:`Executor.submit`; the executor only runs
  ``MeasurementInterface.run()`` somewhere and gives back what it measured from :meth:`Executor.poll`,
  and the run loop stores it (the model SMAC uses with Dask). Its workers need no database access.

Either way :meth:`Executor.poll` returns :class:`Completion` records that the run loop stores with
``ResultsStore.complete`` -- for a pulling executor only the results its workers could not store
themselves (a worker died while measuring).

The order of calls by the run loop: :meth:`~Executor.start` once; then, each iteration,
:meth:`~Executor.capacity` (before requests are topped up), :meth:`~Executor.in_flight` and
:meth:`~Executor.submit` (pushing executors: until ``in_flight() == capacity()``), and
:meth:`~Executor.poll` (at once with timeout 0, then with the loop's back-off when the database had
no new result); when the run stops (its limits, a signal,
the deadline, an error) :meth:`~Executor.cancel` and then :meth:`~Executor.shutdown`, once each.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..db import AlreadyCompleteError, ResultRecord, ResultsStore
from ..result import DesiredResult
from .measurement import claim

__all__ = ["Completion", "Executor", "claim", "hand_over", "store_completions"]


@dataclass
class Completion:
    """A finished measurement that the run loop stores: the request's id and its database record.
    ``contract_error``: the tuner script broke the ``run()`` contract (the record is its ERROR result);
    the run loop stores the record, then stops the run with that message."""

    desired_id: int
    record: ResultRecord
    contract_error: Optional[str] = None


class Executor(ABC):
    """Measures a run's requests in other processes or on other machines (see the module docstring)."""

    #: True: the executor's workers claim requests and store results in the database themselves
    pulls_requests: bool = False
    #: the worker name a pushing executor's requests are claimed under
    name: str = "run"
    #: True: the run writes each new request already claimed under :attr:`name` (one transaction instead
    #: of a request and a claim), for an executor that measures every request as soon as it is submitted
    claims_when_requested: bool = False

    @abstractmethod
    def start(self) -> None:
        """Called once by the run loop before its first request: start the worker processes, or
        connect to the cluster. Raises UsageError (one line naming the option and the fix) when it
        cannot; the run then stops before anything was measured."""

    @abstractmethod
    def capacity(self) -> int:
        """Called before every top-up of requests: how many requests the run keeps in flight for this
        executor (being measured plus waiting), >= 1. It may change while the run goes on (a cluster
        that grows or shrinks)."""

    @abstractmethod
    def in_flight(self) -> int:
        """Called by the run loop before :meth:`submit` (pushing executors only): how many submitted
        requests have not come back from :meth:`poll` yet."""

    @abstractmethod
    def submit(self, desired: DesiredResult) -> None:
        """Called by the run loop with each request it has claimed for the executor, while
        ``in_flight() < capacity()`` (pushing executors only; a pulling one's workers claim requests
        themselves). Returns at once; the measurement comes back, exactly once, from :meth:`poll`."""

    @abstractmethod
    def poll(self, timeout: float) -> List[Completion]:
        """Called by the run loop when the database had no new result: when nothing has finished,
        wait at most ``timeout`` seconds (the loop's back-off, 1-20 ms), then return the finished
        measurements the run loop must store, [] when there are none. Every submitted request appears exactly once (a
        measurement lost with its worker is measured again first). Raises TunerScriptError when a
        worker found the tuner script broken, and RunInterrupted when a signal or the run's deadline
        comes during the wait."""

    @abstractmethod
    def cancel(self) -> None:
        """Called once when the run stops, before :meth:`shutdown`: stop or abandon the measurements in
        progress (their requests are CANCELLED by the run and measured again by ``--resume``); what
        they would still return is dropped."""

    @abstractmethod
    def shutdown(self) -> None:
        """Called once at the very end, after :meth:`cancel`: release the worker processes or the
        connection to the cluster (a cluster the user started keeps running)."""


def hand_over(executor: Executor, db: ResultsStore, run_id: int, worker: str,
              claimed: Optional[List[DesiredResult]] = None) -> None:
    """Called by the run loop for a pushing executor (serial, Dask): submit the requests the run wrote
    already claimed under ``worker`` (``claimed``, oldest first, taken from the list), then claim waiting
    requests of the run under ``worker`` and submit them, up to the executor's capacity."""
    while executor.in_flight() < executor.capacity():
        desired = claimed.pop(0) if claimed else claim(db, run_id, worker)
        if desired is None:
            return
        executor.submit(desired)


def store_completions(db: ResultsStore, completions: List[Completion]) -> Tuple[int, Optional[str]]:
    """Store what an executor measured (its workers could not); returns how many completions there were
    and the first tuner-script contract error among the stored ones (the run then stops), or None."""
    broken = None
    for done in completions:
        try:
            db.complete(done.desired_id, done.record)
        except AlreadyCompleteError:  # the run was stopping, or a worker stored it after all
            continue
        broken = broken or done.contract_error
    return len(completions), broken

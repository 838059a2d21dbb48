"""The search side of distributed measurement (``--distributed``): how many requests to keep in flight,
re-queueing the claims of workers that stopped renewing their lease, and waiting for new results.

The run process stays the only writer of technique state and the only one that proposes; ``tunerlib
worker`` processes (:mod:`tunerlib.executors.remote`) only claim, measure and complete requests. The run keeps
``(live workers) x (1 + --queue-per-worker)`` requests in flight (at least one worker's worth while
none is registered yet), so that a worker that finishes a measurement finds the next request waiting.

A claim whose lease expired is measured again by another worker (the first may have lost the network);
a request whose lease expired :data:`MAX_EXPIRIES` times is recorded ERROR instead: every worker that
measured it died or was cut off meanwhile, and a configuration that kills its measuring process (the OOM
killer) would otherwise take down the workers one after the other (as Dask's ``KilledWorker``, and a
local worker's death, are recorded ERROR).
"""
from __future__ import annotations

import time
from collections import Counter
from typing import Any, List, Optional

from ..db import AlreadyCompleteError
from ..interrupts import Interrupts
from ..result import DesiredResult, Result
from .base import Completion, Executor
from .orphans import REMEASURE

__all__ = ["RemoteCoordinator", "RemoteWorkers"]

#: seconds the run waits for the database's notice of a new result before it sweeps the leases again
WAKE_EVERY = 0.25

#: seconds between two counts of live workers / two re-queue sweeps
COUNT_EVERY = 0.5
REQUEUE_EVERY = 0.5
#: lease expiries of one request after which it is recorded ERROR instead of measured again
MAX_EXPIRIES = 3


class RemoteCoordinator:
    """Called by the run loop: :meth:`target` before each top-up, :meth:`maintain` while it waits."""

    def __init__(self, db: Any, run_id: int, queue_per_worker: int, local_workers: int = 0) -> None:
        self.db = db
        self.run_id = run_id
        self.queue_per_worker = queue_per_worker
        self.local_workers = local_workers
        self._live = 0
        self._counted: Optional[float] = None
        self._swept = 0.0
        #: request id -> how many times its lease expired (in this process)
        self.expiries: Counter = Counter()

    def live_workers(self) -> int:
        """Registered remote workers that renew their lease (counted at most every COUNT_EVERY s)."""
        now = time.monotonic()
        if self._counted is None or now - self._counted >= COUNT_EVERY:
            self._live = self.db.live_workers(self.run_id)
            self._counted = now
        return self._live

    def target(self) -> int:
        """Requests to keep in flight (measured or waiting): every worker's, plus its queue."""
        workers = max(1, self.live_workers() + self.local_workers)
        return workers * (1 + self.queue_per_worker)

    def maintain(self, now: Optional[float] = None) -> int:
        """Re-queue expired claims (at most every REQUEUE_EVERY s), recording ERROR for a request whose
        lease expired MAX_EXPIRIES times; returns how many were re-queued or recorded this time.
        ``now``: the Unix time leases are judged at (default: now)."""
        tick = time.monotonic()
        if tick - self._swept < REQUEUE_EVERY:
            return 0
        self._swept = tick
        expired = self.db.requeue_expired(self.run_id, now)
        self.expiries.update(expired)
        for dr_id in expired:
            if self.expiries[dr_id] >= MAX_EXPIRIES:
                self._give_up(dr_id)
        return len(expired)

    def _give_up(self, dr_id: int) -> None:
        error = (f"the lease of this request expired {MAX_EXPIRIES} times: each worker measuring it died or "
                 f"lost the database meanwhile; {REMEASURE}")
        try:
            self.db.complete(dr_id, Result(state="ERROR", extra={"error": error}).record())
        except AlreadyCompleteError:  # a worker completed it meanwhile: its result stands
            pass


class RemoteWorkers(Executor):
    """The executor of ``--distributed``: ``tunerlib worker`` processes anywhere claim the run's requests
    with a lease and store their results themselves; with ``--parallelism N > 1`` a local process pool
    (``local``) measures beside them.  A pulling executor: the run loop only keeps requests in flight."""

    pulls_requests = True

    def __init__(self, store: Any, run_id: int, queue_per_worker: int, interrupts: Interrupts,
                 local: Optional[Executor] = None) -> None:
        self.store, self.run_id, self.interrupts, self.local = store, run_id, interrupts, local
        self.coordinator = RemoteCoordinator(store, run_id, queue_per_worker,
                                             local.capacity() if local is not None else 0)
        self._listener: Any = None

    def start(self) -> None:
        """Start the local pool, if any, and listen for the database's notices of new results."""
        if self.local is not None:
            self.local.start()
        self._listener = self.store.listen(self.run_id)

    def capacity(self) -> int:
        """Every live worker's request plus its queue (:meth:`RemoteCoordinator.target`)."""
        return self.coordinator.target()

    def in_flight(self) -> int:
        """Not called (the workers claim requests themselves): 0."""
        return 0

    def submit(self, desired: DesiredResult) -> None:
        """Never called: the workers claim requests from the results database themselves."""
        raise RuntimeError("tunerlib worker processes claim requests themselves; the run loop must not submit them")

    def poll(self, timeout: float) -> List[Completion]:
        """What the local pool measured (its workers' deaths); else re-queue expired claims, and with a
        ``timeout`` wait: up to :data:`WAKE_EVERY` s for the database's notice of a new result, or
        ``timeout`` s where the database sends none (remote workers store their results themselves: they
        come back through the database)."""
        done = self.local.poll(0) if self.local is not None else []
        if done or self.coordinator.maintain() or timeout <= 0:
            return done
        if self._listener is None:        # a database without notices (SQLite): the loop's back-off
            if self.local is not None:
                return self.local.poll(timeout)
            self.interrupts.sleep(timeout)
            return []
        with self.interrupts.measuring():
            self._listener.wait(WAKE_EVERY)
        return []

    def cancel(self) -> None:
        """Stop the local pool's measurements (remote workers see the run stop in the database)."""
        if self.local is not None:
            self.local.cancel()

    def shutdown(self) -> None:
        """Release the local pool and the database listener."""
        try:
            if self.local is not None:
                self.local.shutdown()
        finally:
            if self._listener is not None:
                self._listener.close()

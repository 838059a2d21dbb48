"""The search side of distributed measurement (``--distributed``): how many requests to keep in flight,
re-queueing the claims of workers that stopped renewing their lease, and waiting for new results.

The run process stays the only writer of technique state and the only one that proposes; ``tunerlib
worker`` processes (:mod:`tunerlib.remote`) only claim, measure and complete requests. The run keeps
``(live workers) x (1 + --queue-per-worker)`` requests in flight (at least one worker's worth while
none is registered yet), so that a worker that finishes a measurement finds the next request waiting.
"""
from __future__ import annotations

import time
from typing import Any, Optional

__all__ = ["RemoteCoordinator"]

#: seconds between two counts of live workers / two re-queue sweeps
COUNT_EVERY = 0.5
REQUEUE_EVERY = 0.5


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
        #: claims re-queued because their worker's lease expired
        self.requeued = 0

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

    def maintain(self) -> int:
        """Re-queue expired claims (at most every REQUEUE_EVERY s); returns how many this time."""
        now = time.monotonic()
        if now - self._swept < REQUEUE_EVERY:
            return 0
        self._swept = now
        done = len(self.db.requeue_expired(self.run_id))
        self.requeued += done
        return done

"""Claims with leases and the registry of measurement workers (schema 3), for ``tunerlib worker``.

A worker on another machine claims a request with a *lease* (seconds): :meth:`ResultsDB.claim_next`
stamps the claim's ``heartbeat`` and ``lease``. While it measures, the worker's heartbeat thread calls
:meth:`LeaseQueries.beat` every lease/4 seconds, which renews the heartbeat of every claim it holds and
of its ``measurement_worker`` row. The search driver calls :meth:`LeaseQueries.requeue_expired`: a
claim whose heartbeat is older than its lease (the worker was killed, its machine froze or lost the
network) goes back to REQUESTED and is measured by another worker. Claims without a lease (the run's
own serial loop and ``--parallelism`` pool, whose deaths the run sees directly) never expire.

Whoever completes a request first wins: a late result for a request that already has one (or whose
run stopped) is refused with :class:`~tunerlib.db.models.AlreadyCompleteError`, so a request never has
two results. Dates are Unix seconds of the writing machine's clock: machines that share a run must keep
their clocks within a small fraction of the lease (NTP does).

:class:`LeaseQueries` is a mixin of :class:`tunerlib.db.storage.ResultsDB` (each method one short
transaction through ``self._tx`` / ``self._read``).
"""
from __future__ import annotations

import time
from typing import Any, Optional

from sqlalchemy import and_, bindparam, func, select, update

from .models import DesiredResult, MeasurementWorker

__all__ = ["LeaseQueries"]

_DR, _MW = DesiredResult, MeasurementWorker
_HELD = and_(_DR.c.tuning_run_id == bindparam("run"), _DR.c.state == "RUNNING", _DR.c.worker == bindparam("w"))
_BEAT_CLAIMS = update(_DR).where(_HELD).values(heartbeat=bindparam("t"))
_BEAT_WORKER = (update(_MW).where(_MW.c.tuning_run_id == bindparam("run"), _MW.c.name == bindparam("w"))
                .values(heartbeat=bindparam("t")))
_EXPIRED = select(_DR.c.id).where(_DR.c.tuning_run_id == bindparam("run"), _DR.c.state == "RUNNING",
                                  _DR.c.lease.is_not(None), _DR.c.heartbeat + _DR.c.lease < bindparam("t"))
_REQUEUE = (update(_DR).where(_DR.c.id == bindparam("dr"), _DR.c.state == "RUNNING",
                              _DR.c.heartbeat + _DR.c.lease < bindparam("t"))
            .values(state="REQUESTED", worker=None, start_date=None, heartbeat=None, lease=None))
_RELEASE = (update(_DR).where(_DR.c.id == bindparam("dr"), _DR.c.state == "RUNNING", _DR.c.worker == bindparam("w"))
            .values(state="REQUESTED", worker=None, start_date=None, heartbeat=None, lease=None))
_LIVE = select(func.count()).select_from(_MW).where(
    _MW.c.tuning_run_id == bindparam("run"), _MW.c.stopped.is_(None), _MW.c.heartbeat + _MW.c.lease >= bindparam("t"))


class LeaseQueries:
    """Mixin of ResultsDB: heartbeats, expired claims, the registry of workers."""

    _tx: Any
    _read: Any

    def beat(self, run_id: int, worker: str) -> int:
        """Renew the heartbeat of ``worker`` and of every claim it holds in the run (its heartbeat
        thread, every lease/4 s); returns the number of claims it still holds."""
        params = {"run": run_id, "w": worker, "t": time.time()}
        with self._tx() as runner:
            runner.write(_BEAT_WORKER, params)
            return runner.write(_BEAT_CLAIMS, params)

    def requeue_expired(self, run_id: int, now: Optional[float] = None) -> list[int]:
        """Put the run's claims whose heartbeat is older than their lease back to REQUESTED (called by
        the search driver while remote workers measure); returns their ids."""
        now = time.time() if now is None else now
        ids = [row[0] for row in self._read(_EXPIRED, {"run": run_id, "t": now})]
        done = []
        if ids:
            with self._tx() as runner:  # conditional: a heartbeat that came in meanwhile keeps the claim
                done = [dr for dr in ids if runner.write(_REQUEUE, {"dr": dr, "t": now}) == 1]
        return done

    def release(self, desired_result_id: int, worker: str) -> bool:
        """``worker`` gives a claim back unmeasured (it was stopped by a signal): REQUESTED again.
        False when it no longer held it."""
        with self._tx() as runner:
            return runner.write(_RELEASE, {"dr": desired_result_id, "w": worker}) == 1

    def register_worker(self, run_id: int, name: str, machine_id: Optional[int], lease: float) -> None:
        """A ``tunerlib worker`` starts serving the run (``name`` unique: host, pid and a random part)."""
        now = time.time()
        with self._tx() as runner:
            runner.insert(_MW.insert(), {"tuning_run_id": run_id, "name": name, "machine_id": machine_id,
                                         "started": now, "heartbeat": now, "lease": lease, "stopped": None},
                          cache=False)

    def unregister_worker(self, run_id: int, name: str) -> None:
        """The worker ``name`` stops serving the run (it exits)."""
        with self._tx() as runner:
            runner.write(update(_MW).where(_MW.c.tuning_run_id == run_id, _MW.c.name == name)
                         .values(stopped=time.time()), {}, cache=False)

    def live_workers(self, run_id: int) -> int:
        """Number of registered workers of the run that have not stopped and whose heartbeat is within
        their lease (the search driver sizes the queue of requests by it)."""
        return int(self._read(_LIVE, {"run": run_id, "t": time.time()})[0][0])

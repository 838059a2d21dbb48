"""Leases and the registry of workers of :class:`tunerlib.db.memory.MemoryStore`: one process has no remote
workers, but the store answers these calls as :class:`tunerlib.db.storage.ResultsDB` does (one contract
suite checks both)."""
from __future__ import annotations

import heapq
import time
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["MemoryLeases"]


class MemoryLeases:
    """Mixin of MemoryStore: heartbeats, expired claims, the registry of workers."""

    _requests: Dict[int, dict]
    _waiting: Dict[int, List[int]]
    _workers: Dict[Tuple[int, str], dict]
    _of_run: Any

    def beat(self, run_id: int, worker: str) -> int:
        now = time.time()
        if (run_id, worker) in self._workers:
            self._workers[(run_id, worker)]["heartbeat"] = now
        held = [d for d in self._of_run(run_id, "RUNNING") if d["worker"] == worker]
        for dr in held:
            dr["heartbeat"] = now
        return len(held)

    def requeue_expired(self, run_id: int, now: Optional[float] = None) -> List[int]:
        now = time.time() if now is None else now
        expired = [d for d in self._of_run(run_id, "RUNNING")
                   if d.get("lease") is not None and d["heartbeat"] + d["lease"] < now]
        for dr in expired:
            self._requeue(run_id, dr)
        return [d["id"] for d in expired]

    def _requeue(self, run_id: int, dr: dict) -> None:
        dr.update(state="REQUESTED", worker=None, heartbeat=None, lease=None)
        heapq.heappush(self._waiting.setdefault(run_id, []), dr["id"])

    def release(self, desired_result_id: int, worker: str) -> bool:
        dr = self._requests.get(desired_result_id)
        if dr is None or dr["state"] != "RUNNING" or dr["worker"] != worker:
            return False
        self._requeue(dr["run"], dr)
        return True

    def register_worker(self, run_id: int, name: str, machine_id: Optional[int], lease: float) -> None:
        self._workers[(run_id, name)] = {"heartbeat": time.time(), "lease": lease, "stopped": None}

    def unregister_worker(self, run_id: int, name: str) -> None:
        if (run_id, name) in self._workers:
            self._workers[(run_id, name)]["stopped"] = time.time()

    def live_workers(self, run_id: int) -> int:
        now = time.time()
        return sum(1 for (run, _), w in self._workers.items()
                   if run == run_id and w["stopped"] is None and w["heartbeat"] + w["lease"] >= now)

"""Worker processes for --parallelism N: each runs a MeasurementDriver on its own connection."""
from __future__ import annotations

import multiprocessing
import os
import sys
import time
from typing import List, Optional

from .db import ResultsDB
from .interface import MeasurementInterface
from .measurement import MeasurementDriver

#: exit code of a worker whose tuner script broke the run() contract
CONTRACT_EXIT = 3


def _worker_main(url: str, run_id: int, program_version_id: int, interface: MeasurementInterface,
                 machine_id: Optional[int], name: str, parent: int, stop) -> None:
    db = ResultsDB(url)
    driver = MeasurementDriver(db, run_id, program_version_id, interface, interface.input_manager(),
                               machine_id, worker=name)
    idle = 0.001
    try:
        while not stop.is_set() and os.getppid() == parent:
            if driver.run_one():
                idle = 0.001
                if driver.contract_error:
                    print(f"tunerlib: error: {driver.contract_error}", file=sys.stderr)
                    os._exit(CONTRACT_EXIT)
            else:
                time.sleep(idle)
                idle = min(idle * 2, 0.02)
    finally:
        db.close()


class WorkerPool:
    """Starts N measurement processes (fork where available, so the interface needs no pickling)."""

    def __init__(self, n: int, url: str, run_id: int, program_version_id: int,
                 interface: MeasurementInterface, machine_id: Optional[int]) -> None:
        methods = multiprocessing.get_all_start_methods()
        self.ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.stop_event = self.ctx.Event()
        parent = os.getpid()
        self.procs: List = [
            self.ctx.Process(target=_worker_main, name=f"tunerlib-worker-{i}", daemon=True,
                             args=(url, run_id, program_version_id, interface, machine_id,
                                   f"worker-{i}", parent, self.stop_event))
            for i in range(n)]

    def start(self) -> None:
        for proc in self.procs:
            proc.start()

    def failed(self) -> Optional[str]:
        """A message when a worker died, else None."""
        for proc in self.procs:
            if proc.exitcode is None or proc.exitcode == 0:
                continue
            if proc.exitcode == CONTRACT_EXIT:
                return "run() did not return a tunerlib.Result in a worker (see its message above)"
            return f"measurement worker {proc.name} died with exit code {proc.exitcode}"
        return None

    def stop(self, wait: float) -> None:
        """Ask workers to finish their current measurement; kill those still busy after ``wait`` s."""
        self.stop_event.set()
        deadline = time.monotonic() + wait
        for proc in self.procs:
            proc.join(max(0.0, deadline - time.monotonic()))
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
                proc.join(5)

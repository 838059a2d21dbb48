"""Worker processes for --parallelism N: each runs a MeasurementDriver on its own connection.

A worker ignores SIGINT (the run loop handles Ctrl-C for the whole run) and stops on SIGTERM, on the
run's deadline and when its parent dies: a measurement in progress is stopped at once (its process
group killed by ``call_program``) and its request is left RUNNING for the run loop to cancel. A worker
that dies while measuring (a crash in ``run()``, the OOM killer) is replaced by the pool; the run loop
records that measurement as ERROR.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, List, Optional, Tuple

from .db import ResultsDB
from .interrupts import Interrupts, RunInterrupted, die_with_parent, signal_name
from .measurement import MeasurementDriver

if TYPE_CHECKING:  # annotations only: the interface's main() imports the CLI, which imports this
    from .interface import MeasurementInterface

#: exit code of a worker whose tuner script broke the run() contract
CONTRACT_EXIT = 3


def _worker_main(url: str, run_id: int, program_version_id: int, interface: MeasurementInterface,
                 machine_id: Optional[int], name: str, parent: int, stop, deadline: Optional[float],
                 cap: Optional[float]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(signal.SIGTERM)
    interrupts = Interrupts(deadline, signals=(signal.SIGTERM,), exit_at_once=True).install()
    if os.getppid() != parent:
        return
    db = ResultsDB(url)
    driver = MeasurementDriver(db, run_id, program_version_id, interface, interface.input_manager(),
                               machine_id, worker=name, interrupts=interrupts, cap=cap)
    idle = 0.001
    try:
        while not stop.is_set() and os.getppid() == parent:
            interrupts.check()
            if driver.run_one():
                idle = 0.001
                if driver.contract_error:
                    print(f"tunerlib: error: {driver.contract_error}", file=sys.stderr)
                    os._exit(CONTRACT_EXIT)
            else:
                interrupts.sleep(idle)
                idle = min(idle * 2, 0.02)
    except RunInterrupted:
        pass
    finally:
        db.close()


def death_message(name: str, exitcode: Optional[int]) -> str:
    """What a measurement that killed its worker is recorded with."""
    how = f"was killed by {signal_name(-exitcode)}" if exitcode is not None and exitcode < 0 \
        else f"exited with status {exitcode}"
    return f"measurement worker {name} {how} while measuring this configuration"


class WorkerPool:
    """Starts N measurement processes (fork where available, so the interface needs no pickling)."""

    def __init__(self, n: int, url: str, run_id: int, program_version_id: int,
                 interface: MeasurementInterface, machine_id: Optional[int],
                 deadline: Optional[float] = None, cap: Optional[float] = None) -> None:
        methods = multiprocessing.get_all_start_methods()
        self.ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.stop_event = self.ctx.Event()
        self._args = (url, run_id, program_version_id, interface, machine_id)
        self._tail = (os.getpid(), self.stop_event, deadline, cap)
        self.names = [f"worker-{i}" for i in range(n)]
        self.procs: List = [self._process(name) for name in self.names]
        #: workers that died while the run went on, each replaced by a new process
        self.restarts = 0

    def _process(self, name: str):
        return self.ctx.Process(target=_worker_main, name=f"tunerlib-{name}", daemon=True,
                                args=(*self._args, name, *self._tail))

    def start(self) -> None:
        for proc in self.procs:
            proc.start()

    def failed(self) -> Optional[str]:
        """A message when a worker found the tuner script broken, else None."""
        if any(proc.exitcode == CONTRACT_EXIT for proc in self.procs):
            return "run() did not return a tunerlib.Result in a worker (see its message above)"
        return None

    def replace_dead(self) -> List[Tuple[str, Optional[int]]]:
        """Start a new process for every worker that died; returns (worker name, exit code) of each.
        Called by the run loop while it waits; it records their measurements as ERROR."""
        dead = []
        for i, proc in enumerate(self.procs):
            if proc.exitcode is None or proc.exitcode == CONTRACT_EXIT or self.stop_event.is_set():
                continue
            dead.append((self.names[i], proc.exitcode))
            self.restarts += 1
            self.names[i] = f"worker-{i}.{self.restarts}"  # a new name: its claims are not the dead one's
            self.procs[i] = self._process(self.names[i])
            self.procs[i].start()
        return dead

    def stop(self, cancel: bool, wait: float = 30.0) -> None:
        """Stop the workers. ``cancel``: stop measurements in progress now (SIGTERM); otherwise let
        them finish (at most ``wait`` s). A worker still alive after that is killed."""
        self.stop_event.set()
        if cancel:
            for proc in self.procs:
                if proc.is_alive():
                    try:
                        os.kill(proc.pid, signal.SIGTERM)
                    except ProcessLookupError:
                        pass
            wait = min(wait, 5.0)
        deadline = time.monotonic() + wait
        for proc in self.procs:
            proc.join(max(0.0, deadline - time.monotonic()))
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
                proc.join(5)

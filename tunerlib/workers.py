"""The local executor, ``--parallelism N``: N worker processes, each runs a MeasurementDriver on its own
connection (an :class:`~tunerlib.executor.Executor` whose workers pull requests from the database).

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

from .db import ResultsDB, ResultsStore
from .executor import Completion, Executor
from .interrupts import Interrupts, RunInterrupted, die_with_parent, signal_name
from .measurement import MeasurementDriver
from .result import DesiredResult, Result
from .search import TunerScriptError

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


class WorkerPool(Executor):
    """The local executor (``--parallelism N``): N measurement processes on this machine (fork where
    available, so the interface needs no pickling). A pulling executor: each worker claims requests
    from the results database and stores their results itself."""

    pulls_requests = True

    def __init__(self, n: int, url: str, run_id: int, program_version_id: int,
                 interface: MeasurementInterface, machine_id: Optional[int],
                 deadline: Optional[float] = None, cap: Optional[float] = None,
                 store: Optional[ResultsStore] = None, interrupts: Optional[Interrupts] = None) -> None:
        """``store`` (the run's own connection) finds the claims of a worker that died, ``interrupts``
        (the run loop's) makes :meth:`poll`'s wait stop on a signal or the deadline."""
        methods = multiprocessing.get_all_start_methods()
        self.ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.stop_event = self.ctx.Event()
        self._args = (url, run_id, program_version_id, interface, machine_id)
        self._tail = (os.getpid(), self.stop_event, deadline, cap)
        self.names = [f"worker-{i}" for i in range(n)]
        self.procs: List = [self._process(name) for name in self.names]
        self.store, self.run_id, self.machine_id = store, run_id, machine_id
        self.interrupts = interrupts or Interrupts()
        #: workers that died while the run went on, each replaced by a new process
        self.restarts = 0

    def _process(self, name: str):
        return self.ctx.Process(target=_worker_main, name=f"tunerlib-{name}", daemon=True,
                                args=(*self._args, name, *self._tail))

    # ---- the Executor interface ------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker processes."""
        for proc in self.procs:
            proc.start()

    def capacity(self) -> int:
        """One request in flight per worker process."""
        return len(self.procs)

    def in_flight(self) -> int:
        """Not called (the workers claim requests themselves): 0, nothing is ever submitted."""
        return 0

    def submit(self, desired: DesiredResult) -> None:
        """Never called: the run loop leaves requests REQUESTED in the database for the workers."""
        raise RuntimeError("the local pool's workers claim requests from the results database themselves; "
                           "the run loop must not submit them")

    def poll(self, timeout: float) -> List[Completion]:
        """Replace every worker that died and return an ERROR completion for each measurement it held;
        when none died, sleep ``timeout`` s (the workers' results arrive through the database).
        TunerScriptError when a worker found the tuner script broken."""
        failure = self.failed()
        if failure:
            raise TunerScriptError(failure)
        lost = [Completion(dr_id, Result(state="ERROR", extra={"error": death_message(name, code)})
                           .record(machine_id=self.machine_id))
                for name, code in self.replace_dead() for dr_id in self._claims_of(name)]
        if not lost and timeout > 0:
            self.interrupts.sleep(timeout)
        return lost

    def cancel(self) -> None:
        """Stop the measurements in progress now (SIGTERM to every worker)."""
        self.stop_event.set()
        for proc in self.procs:
            if proc.is_alive():
                try:
                    os.kill(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass

    def shutdown(self, wait: float = 5.0) -> None:
        """Wait up to ``wait`` s for the workers to exit; kill those still alive."""
        self.stop_event.set()
        started = [proc for proc in self.procs if proc.pid is not None]  # start() may have failed midway
        deadline = time.monotonic() + wait
        for proc in started:
            proc.join(max(0.0, deadline - time.monotonic()))
        for proc in started:
            if proc.is_alive():
                proc.kill()
                proc.join(5)

    # ---- watching the workers ----------------------------------------------------------------------
    def _claims_of(self, name: str) -> List[int]:
        return [] if self.store is None else self.store.running_claims(self.run_id, name)

    def failed(self) -> Optional[str]:
        """A message when a worker found the tuner script broken, else None."""
        if any(proc.exitcode == CONTRACT_EXIT for proc in self.procs):
            return "run() did not return a tunerlib.Result in a worker (see its message above)"
        return None

    def replace_dead(self) -> List[Tuple[str, Optional[int]]]:
        """Start a new process for every worker that died; returns (worker name, exit code) of each
        (:meth:`poll` records their measurements as ERROR)."""
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

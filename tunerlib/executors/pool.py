"""The local executor, ``--parallelism N``: N worker processes, each runs a MeasurementDriver on its own
connection (an :class:`~tunerlib.executors.base.Executor` whose workers pull requests from the database).

A worker ignores SIGINT (the run loop handles Ctrl-C for the whole run) and stops on SIGTERM, on the
run's deadline and when its parent dies: a measurement in progress is stopped at once (its process
group killed by ``call_program``) and its request is left RUNNING for the run loop to cancel. A worker
that dies while measuring (a crash in ``run()``, the OOM killer) is replaced by the pool; the run loop
records that measurement as ERROR.

A worker that cannot use the database (it cannot open it, the disk is full) tells the pool why through
its pipe and exits with :data:`DATABASE_EXIT`, without a traceback; a request it held goes back to the
queue. Workers that die outside a measurement are restarted after a growing pause
(:data:`RESTART_PAUSES`); when that goes on for more rounds than there are pauses, with no result stored
in between, the run stops with one line (:class:`DatabaseError` with the worker's reason).
A worker waiting for a database lock another process holds reports it to the pool, which prints one
line per incident for all its workers (:class:`~tunerlib.db.waits.LockWaits`).
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

from ..db import AlreadyCompleteError, DatabaseError, ResultsDB, ResultsStore
from ..db.waits import LockWaits
from .base import Completion, Executor
from ..interrupts import Interrupts, RunInterrupted, die_with_parent, signal_name
from .measurement import MeasurementDriver
from ..errors import TunerScriptError
from ..result import DesiredResult, Result
from .contracts import Measurable

#: exit code of a worker whose tuner script broke the run() contract
CONTRACT_EXIT = 3
#: exit code of a worker that could not use the results database (it sent the pool the reason)
DATABASE_EXIT = 4
#: seconds the pool waits before restarting a worker that died outside a measurement, by round (a round:
#: as many such deaths in a row as there are workers); a death after the last round stops the run
RESTART_PAUSES = (0.1, 0.5, 1.0, 2.0, 4.0)


class _PipeLockWaits:
    """A worker's lock notices: sent to the pool (which prints one line per incident for all workers)."""

    def __init__(self, channel: Any, check: Any) -> None:
        self.channel, self.check, self.reported = channel, check, False

    def waiting(self, who: str, text: str, since: Optional[float] = None) -> None:
        if not self.reported:
            _send(self.channel, "locked", text, time.monotonic() if since is None else since)
            self.reported = True
        self.check()

    def done(self, who: str) -> None:
        if self.reported:
            _send(self.channel, "free", "")
            self.reported = False


def _send(channel: Any, kind: str, text: str, since: Optional[float] = None) -> None:
    try:
        channel.send((kind, text[:2000], since))
    except (OSError, ValueError):
        pass  # the pool is gone: the worker is about to die with it


def _worker_main(url: str, run_id: int, program_version_id: int, interface: Measurable,
                 machine_id: Optional[int], name: str, parent: int, stop, deadline: Optional[float],
                 cap: Optional[float], channel: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(signal.SIGTERM)
    interrupts = Interrupts(deadline, signals=(signal.SIGTERM,), exit_at_once=True).install()
    if os.getppid() != parent:
        return
    try:
        db = ResultsDB(url)
    except DatabaseError as exc:
        _send(channel, "database", str(exc))
        sys.exit(DATABASE_EXIT)

    def check() -> None:
        interrupts.check()
        if stop.is_set() or os.getppid() != parent:
            raise RunInterrupted(None)
    db.lock_waits = _PipeLockWaits(channel, check)
    db.waiter = name
    try:
        driver = MeasurementDriver(db, run_id, program_version_id, interface, interface.input_manager(),
                                   machine_id, worker=name, interrupts=interrupts, cap=cap)
        _serve(driver, interrupts, stop, parent, channel)
    except RunInterrupted:
        pass
    except DatabaseError as exc:
        _send(channel, "database", str(exc))
        sys.exit(DATABASE_EXIT)
    finally:
        db.close()


def _serve(driver: MeasurementDriver, interrupts: Interrupts, stop: Any, parent: int, channel: Any) -> None:
    """A worker's loop: claim, measure, store until the run stops; tells the pool after its first result."""
    idle, stored = 0.001, False
    while not stop.is_set() and os.getppid() == parent:
        interrupts.check()
        try:
            measured = driver.run_one()
        except AlreadyCompleteError:  # the run cancelled the request meanwhile: nothing to store
            continue
        if measured:
            idle = 0.001
            if driver.contract_error:
                print(f"tunerlib: error: {driver.contract_error}", file=sys.stderr)
                os._exit(CONTRACT_EXIT)
            if not stored:
                _send(channel, "measured", "")
                stored = True
        else:
            interrupts.sleep(idle)
            idle = min(idle * 2, 0.02)


def death_message(name: str, exitcode: Optional[int]) -> str:
    """What a measurement that killed its worker is recorded with."""
    return f"measurement worker {name} {_how(exitcode)} while measuring this configuration"


class WorkerPool(Executor):
    """The local executor (``--parallelism N``): N measurement processes on this machine (fork where
    available, so the interface needs no pickling). A pulling executor: each worker claims requests
    from the results database and stores their results itself."""

    pulls_requests = True

    def __init__(self, n: int, url: str, run_id: int, program_version_id: int,
                 interface: Measurable, machine_id: Optional[int],
                 deadline: Optional[float] = None, cap: Optional[float] = None,
                 store: Optional[ResultsStore] = None, interrupts: Optional[Interrupts] = None) -> None:
        """``store`` (the run's own connection) finds the claims of a worker that died, ``interrupts``
        (the run loop's) makes :meth:`poll`'s wait stop on a signal or the deadline."""
        methods = multiprocessing.get_all_start_methods()
        self.ctx = multiprocessing.get_context("fork") if "fork" in methods else multiprocessing.get_context("spawn")
        self.stop_event = self.ctx.Event()
        self._args = (url, run_id, program_version_id, interface, machine_id)
        self._tail = (os.getpid(), self.stop_event, deadline, cap)
        self.names = [f"worker-{i}" for i in range(n)]
        #: the pool's end of each worker's pipe (its reasons, lock waits, first result)
        self.channels: List[Any] = [None] * n
        self._writers: List[Any] = [None] * n
        self.procs: List = [self._process(i) for i in range(n)]
        self.store, self.run_id, self.machine_id = store, run_id, machine_id
        self.interrupts = interrupts or Interrupts()
        #: one line per lock incident, shared with the run's own connection
        self.lock_waits = getattr(store, "lock_waits", None) or LockWaits()
        #: workers that died while the run went on, each replaced by a new process
        self.restarts = 0
        #: workers that died outside a measurement since the last stored result
        self.failures = 0
        self._due: Dict[int, float] = {}  # slot -> time.monotonic() at which its new worker starts
        self._reasons: Dict[int, str] = {}  # slot -> why its worker could not use the database

    def _process(self, i: int):
        reader, writer = self.ctx.Pipe(duplex=False)
        self.channels[i], self._writers[i] = reader, writer
        return self.ctx.Process(target=_worker_main, name=f"tunerlib-{self.names[i]}", daemon=True,
                                args=(*self._args, self.names[i], *self._tail, writer))

    def _start(self, i: int) -> None:
        self.procs[i].start()
        self._writers[i].close()  # the worker holds the only writing end: the pool sees its EOF

    # ---- the Executor interface ------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker processes."""
        for i in range(len(self.procs)):
            self._start(i)

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
        """Read the workers' messages, replace every worker that died and return an ERROR completion
        for each measurement it held; when none died, sleep ``timeout`` s (the workers' results arrive
        through the database). TunerScriptError when a worker found the tuner script broken;
        DatabaseError (one line, the workers' reason) when workers kept dying outside a measurement."""
        failure = self.failed()
        if failure:
            raise TunerScriptError(failure)
        self._read_channels()
        lost = [Completion(dr_id, Result(state="ERROR", extra={"error": death_message(name, code)})
                           .record(machine_id=self.machine_id))
                for name, code, claims in self.replace_dead() for dr_id in claims]
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
        for i, proc in enumerate(self.procs):
            if proc.pid is None:
                self._writers[i].close()
            self.channels[i].close()
        for name in self.names:
            self.lock_waits.done(name)

    # ---- watching the workers ----------------------------------------------------------------------
    def _claims_of(self, name: str) -> List[int]:
        return [] if self.store is None else self.store.running_claims(self.run_id, name)

    def failed(self) -> Optional[str]:
        """A message when a worker found the tuner script broken, else None."""
        if any(proc.exitcode == CONTRACT_EXIT for proc in self.procs):
            return "run() did not return a tunerlib.Result in a worker (see its message above)"
        return None

    def _read_channels(self) -> None:
        """Take in what the workers said (see :meth:`_drain`)."""
        for i in range(len(self.channels)):
            self._drain(i)

    def _drain(self, i: int) -> None:
        """Read worker ``i``'s messages: why it cannot use the database, a lock it waits for, a stored
        result (which ends a series of failures)."""
        try:
            while self.channels[i].poll():
                kind, text, since = self.channels[i].recv()
                if kind == "database":
                    self._reasons[i] = text
                elif kind == "locked":
                    self.lock_waits.waiting(self.names[i], text, since)
                elif kind == "free":
                    self.lock_waits.done(self.names[i])
                elif kind == "measured":
                    self.failures = 0
        except (EOFError, OSError):
            self.lock_waits.done(self.names[i])  # the worker is gone: so is its wait

    def replace_dead(self) -> List[Tuple[str, Optional[int], List[int]]]:
        """Restart every worker that died (at once after a measurement killed it, else after its pause);
        returns (worker name, exit code, ids of the measurements it held) of each measurement that
        killed its worker (:meth:`poll` records them as ERROR)."""
        killed = []
        for i, proc in enumerate(self.procs):
            if i in self._due:
                if self._due[i] <= time.monotonic() and not self.stop_event.is_set():
                    del self._due[i]
                    self._start(i)
                continue
            if proc.exitcode is None or proc.exitcode == CONTRACT_EXIT or self.stop_event.is_set():
                continue
            self._drain(i)
            name, code = self.names[i], proc.exitcode
            claims = self._claims_of(name)
            if claims and code != DATABASE_EXIT:
                killed.append((name, code, claims))
            else:
                for dr_id in claims:  # the database failed, not the configuration: measured again
                    if self.store is not None:  # (claims come from the store)
                        self.store.release(dr_id, name)
                self._count_failure(i, name, code)
            self.channels[i].close()
            self.lock_waits.done(name)
            self.restarts += 1
            self.names[i] = f"worker-{i}.{self.restarts}"  # a new name: its claims are not the dead one's
            self.procs[i] = self._process(i)
            if i not in self._due:
                self._start(i)
        return killed

    def _count_failure(self, i: int, name: str, code: Optional[int]) -> None:
        """A worker died outside a measurement: schedule its restart after the pause of this round of
        failures (a round: as many as there are workers), or stop the run after the last round."""
        rounds = self.failures // len(self.procs)
        reason = self._reasons.pop(i, None)
        if rounds >= len(RESTART_PAUSES):
            head = f"measurement workers stopped {self.failures + 1} times in a row without storing a result"
            if reason is not None:
                raise DatabaseError(f"{head}: {reason}")
            raise TunerScriptError(f"{head}: {name} {_how(code)} (see its message above)")
        self.failures += 1
        self._due[i] = time.monotonic() + RESTART_PAUSES[rounds]


def _how(code: Optional[int]) -> str:
    return f"was killed by {signal_name(-code)}" if code is not None and code < 0 else f"exited with status {code}"

"""``--executor dask --scheduler tcp://HOST:8786``: measure on the workers of an existing Dask cluster.

The run process claims each request and submits one task per request to the cluster
(:meth:`DaskExecutor.submit`); the task, :func:`measure_on_worker`, builds the run's interface on the
Dask worker, runs ``MeasurementInterface.run()`` and returns the Result, the input it ran on, the time
it took and where it ran (:class:`WorkerReply`). The run process stores it (the model SMAC uses): Dask
workers need the tuner script and tunerlib, never the results database.

How the interface reaches a worker: not pickled -- an interface may hold compiled programs or open
files -- but named, as ``tunerlib worker --interface`` names it (:class:`DaskJob`): ``module:Class``
(``python -m pkg.tuner``, or a class imported from a module) or ``/abs/path/tuner.py:Class`` (a script
run as ``python tuner.py``; the workers need the file at that path: a shared file system, as on SLURM
clusters), with the run's options. Each worker thread builds its own interface once and keeps it; a
worker whose tuner script version differs from the run's stops the run with one line.

Lost measurements: Dask itself runs again a task whose worker process died
(``distributed.scheduler.allowed-failures`` times, default 3); a task the cluster lost otherwise
(cancelled by a scheduler restart, its result gone with its worker) is submitted again by the executor,
at most :data:`MAX_ATTEMPTS` times in all. A configuration that killed every worker it ran on
(``KilledWorker``) is recorded ERROR, as a local worker's death is. Every request gets exactly one
result: only the newest submission of a request counts, and only once.

Limits: Dask runs tasks in worker threads, where ``--measurement-timeout`` cannot stop a measurement
with a signal: run() gets the cap as its ``limit`` (``call_program`` honours it). A run that stops
(deadline, Ctrl-C) cancels its tasks, but a measurement already running finishes on its worker. For
timing, start workers with one thread each (``dask worker --nthreads 1 --nworkers N``).
"""
from __future__ import annotations

import logging
import socket
import time
from typing import Any, Dict, List, Optional, Set, Tuple

from ..errors import UsageError
from ..interrupts import Interrupts
from ..result import DesiredResult, Result
from .base import Completion, Executor
from .contracts import RunContext
from .dask_worker import WorkerReply, interface_job, measure_on_worker

__all__ = ["DaskExecutor", "probe_scheduler"]

#: submissions of one request at most (the first included) when the cluster loses its task
MAX_ATTEMPTS = 4
#: seconds between two counts of the cluster's worker threads
COUNT_EVERY = 1.0
#: seconds between two looks for tasks that ended without being reported
CHECK_EVERY = 5.0


# ---- the run side -----------------------------------------------------------------------------------------
def _unreachable(address: str, exc: BaseException) -> UsageError:
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return UsageError(f"--scheduler {address}: cannot reach a Dask scheduler there ({reason}); start one "
                      "(`dask scheduler`, or a dask-jobqueue cluster) and pass its address, "
                      "e.g. --scheduler tcp://HOST:8786")


def probe_scheduler(address: str, timeout: float = 10.0) -> None:
    """Called before the run is created (no tuning-run row for a run that cannot start): UsageError when
    nothing accepts a TCP connection at a ``tcp://`` or ``tls://`` address. Other transports (``inproc``,
    ``ucx``) are left to the Dask client. Imports nothing from Dask."""
    scheme, sep, rest = address.partition("://")
    if not sep or scheme not in ("tcp", "tls"):
        return
    host, _, port = rest.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except (OSError, ValueError) as exc:
        raise _unreachable(address, exc) from None


class DaskExecutor(Executor):
    """A pushing executor: requests are claimed by the run loop and submitted to the Dask cluster at
    ``--scheduler``; their results come back through :meth:`poll` and are stored by the run loop."""

    name = "dask"

    def __init__(self, run: RunContext, interrupts: Interrupts) -> None:
        opts = run.options
        self.address = opts.scheduler
        self.queue_per_worker = opts.queue_per_worker
        self.store, self.pv_id, self.machine_class = run.db, run.pv_id, opts.machine_class
        self.interrupts = interrupts
        self.job = interface_job(run)
        self.tag = run.uuid[:8]
        self.client: Any = None
        #: request id -> (its newest future, the request, attempt number)
        self._tasks: Dict[int, Tuple[Any, DesiredResult, int]] = {}
        self._ended_tasks: Any = None  # distributed.as_completed, made by start()
        self._checked = time.monotonic()
        self._seen_ended: Set[Any] = set()
        self._machines: Dict[str, int] = {}
        self._inputs: Dict[Tuple, int] = {}
        self._threads = 0
        self._counted: Optional[float] = None
        #: submissions made again because the cluster lost a task
        self.resubmitted = 0

    def start(self) -> None:
        """Connect to the scheduler (within Dask's ``distributed.comm.timeouts.connect``, 30 s by default)."""
        try:
            from distributed import Client, as_completed
            from distributed.comm import parse_address
            from distributed.comm.registry import get_backend
        except ImportError:
            raise UsageError("--executor dask needs Dask's distributed scheduler: pip install "
                             "'tunerlib[dask]'") from None
        try:
            get_backend(parse_address(self.address)[0])  # a bad scheme fails here, before a Client exists
            self.client = Client(self.address, set_as_default=False)
            self._ended_tasks = as_completed(loop=self.client.loop, with_results=True, raise_errors=False)
        except (OSError, ValueError, TypeError) as exc:
            raise _unreachable(self.address, exc) from None

    def capacity(self) -> int:
        """Worker threads in the cluster (counted every COUNT_EVERY s; at least 1, so that a cluster whose
        workers are still starting gets work) x (1 + --queue-per-worker)."""
        now = time.monotonic()
        if self._counted is None or now - self._counted >= COUNT_EVERY:
            self._counted = now
            try:
                self._threads = sum(self.client.nthreads().values())
            except (OSError, TimeoutError):  # the scheduler is unreachable for now: keep the last count
                pass
        return max(1, self._threads) * (1 + self.queue_per_worker)

    def in_flight(self) -> int:
        return len(self._tasks)

    def submit(self, desired: DesiredResult, attempt: int = 1) -> None:
        """One task per request (``attempt`` > 1: the cluster lost the earlier ones)."""
        future = self.client.submit(measure_on_worker, self.job, desired,
                                    key=f"tunerlib-{self.tag}-{desired.id}-{attempt}", pure=False)
        assert desired.id is not None  # a claimed request has its id
        self._tasks[desired.id] = (future, desired, attempt)
        self._ended_tasks.add(future)  # its result is fetched in the client's thread when it ends

    def poll(self, timeout: float) -> List[Completion]:
        """The completions of the tasks that ended, their results already fetched (by the client's own
        thread, concurrently: a fetch costs this thread nothing); when none has, wait up to ``timeout``
        s first (the run loop's back-off: 1-20 ms), woken as soon as a result is in."""
        if not self._ended_tasks.has_ready() and timeout > 0:
            self._wait_ready(timeout)
        ended = self._ended_tasks.next_batch(block=False)
        done = [self._ended(future, value, fetched=True) for future, value in ended]
        if time.monotonic() - self._checked >= CHECK_EVERY:
            done += self._check_unreported()
        return [c for c in done if c is not None]

    def _wait_ready(self, timeout: float) -> None:
        """Wait until a fetched result is ready or ``timeout`` s passed (a signal or the deadline stops
        the wait). ``as_completed`` notifies its thread condition each time it queues a result (how its
        own blocking iteration waits); without one (another Dask version) this sleeps ``timeout``."""
        condition = getattr(self._ended_tasks, "thread_condition", None)
        if condition is None:
            self.interrupts.sleep(timeout)
            return
        with self.interrupts.measuring():
            with condition:
                if not self._ended_tasks.has_ready():
                    condition.wait(timeout)

    def _check_unreported(self) -> List[Optional[Completion]]:
        """Tasks that ended at least CHECK_EVERY s ago and were never reported (the client lost its
        fetch): handled here, so that no request waits forever."""
        self._checked = time.monotonic()
        ended = {future for future, _, _ in self._tasks.values() if future.done()}
        late, self._seen_ended = ended & self._seen_ended, ended
        return [self._ended(future, None, fetched=False) for future in late]

    def _ended(self, future: Any, value: Any, fetched: bool) -> Optional[Completion]:
        """The completion of an ended task (``value``: its result, when ``fetched``); None for a stale
        one or one submitted again."""
        dr_id = int(future.key.rsplit("-", 2)[1])
        current = self._tasks.get(dr_id)
        if current is None or current[0] is not future:
            return None  # dropped by cancel(), or an earlier submission
        _, desired, attempt = current
        if future.status == "finished":
            try:
                reply = value if fetched else future.result(timeout=60)
            except Exception as exc:  # noqa: BLE001  (its result was lost with its worker)
                return self._lost(desired, attempt, exc)
            if not isinstance(reply, WorkerReply):
                return self._lost(desired, attempt, None)
            del self._tasks[dr_id]
            return self._completion(dr_id, reply)
        error: Optional[BaseException] = None
        if future.status == "error":  # a fetched error is (type, exception, traceback)
            error = value[1] if fetched and isinstance(value, tuple) else future.exception()
        from distributed import KilledWorker
        if isinstance(error, KilledWorker):
            del self._tasks[dr_id]
            text = str(error).split(". ")[0]
            return Completion(dr_id, Result(state="ERROR", extra={
                "error": f"the measurement killed every Dask worker that ran it (KilledWorker: {text})"}).record())
        return self._lost(desired, attempt, error)

    def _lost(self, desired: DesiredResult, attempt: int, exc: Optional[BaseException]) -> Optional[Completion]:
        """Submit a lost task again, or record ERROR after MAX_ATTEMPTS submissions."""
        why = "cancelled by the cluster" if exc is None else f"{type(exc).__name__}: {exc}"
        if attempt < MAX_ATTEMPTS:
            self.resubmitted += 1
            self.submit(desired, attempt + 1)
            return None
        assert desired.id is not None  # a claimed request has its id
        del self._tasks[desired.id]
        return Completion(desired.id, Result(state="ERROR", extra={
            "error": f"the Dask cluster lost this measurement {attempt} times (last: {why})"}).record())

    def _completion(self, dr_id: int, reply: WorkerReply) -> Completion:
        if reply.refused:
            raise UsageError(reply.refused)
        machine = self._machines.get(reply.host)
        if machine is None:
            machine = self._machines[reply.host] = self.store.machine_id(reply.host, self.machine_class, reply.cpus)
        inp = reply.input
        assert inp is not None and reply.result is not None  # a reply that was not refused
        key = (inp.input_class, inp.path, inp.size)
        input_id = self._inputs.get(key)
        if input_id is None:
            input_id = self._inputs[key] = self.store.input_id(self.pv_id, inp.input_class, inp.path, inp.size,
                                                               inp.extra)
        return Completion(dr_id, reply.result.record(reply.cost, machine, input_id, reply.worker),
                          reply.contract_error)

    def cancel(self) -> None:
        """Cancel every task not ended yet (one already running finishes on its worker; its result is
        dropped)."""
        futures = [future for future, _, _ in self._tasks.values()]
        self._tasks.clear()
        if self.client is not None and futures:
            try:
                self.client.cancel(futures)
            except Exception:  # noqa: BLE001  (the scheduler is gone: nothing left to cancel)
                pass

    def shutdown(self) -> None:
        """Close the connection to the scheduler (the cluster keeps running)."""
        if self.client is not None:
            # as_completed's tracking tasks of futures still in flight fail with CommClosedError once the
            # client closes, and Tornado logs each as an error in the client's loop thread (seen on a busy
            # machine, after a run stopped on a broken run contract): expected, so not printed
            logging.getLogger("tornado.application").addFilter(_closed_comm_filter)
            try:
                self.client.close()
            finally:
                self.client = None


def _closed_comm_filter(record: logging.LogRecord) -> bool:
    """False (drop) for a log record of a callback that failed with Dask's CommClosedError."""
    exc = record.exc_info[1] if record.exc_info else None
    return type(exc).__name__ != "CommClosedError"

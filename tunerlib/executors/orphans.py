"""Orphaned requests: requests left RUNNING by a measuring process that died, measured again safely.

A run that stops cleanly cancels its unfinished requests. A request still RUNNING (without a live lease)
when a run is resumed was being measured when the process measuring it died: SIGKILL, a power cut, or
the configuration itself (the OOM killer, a segfault in ``run()``). Which one cannot be told afterwards.
The in-process executor (``--parallelism 1``) runs ``run()`` in the tuner process, so measuring such a request there again would kill
the resumed run too if the configuration is the cause, on every ``--resume``.

So the in-process executor measures an orphaned request once more in a forked child of the tuner process
(:class:`OrphanGuard`): when the child returns a result it is recorded as usual (a run killed from outside
continues exactly as if it had never stopped); when the child dies too, the request is recorded ERROR
with :func:`orphan_message` and the run goes on. Worker processes (``--parallelism N``, ``tunerlib
worker``, Dask) already measure each request outside the tuner, and the death of one while measuring is
recorded ERROR by the pool or Dask, or its lease expires and another worker measures it.
"""
from __future__ import annotations

import os
import pickle
import signal
import sys
import time
from typing import Any, Callable, Optional, Protocol, Set, Tuple

from ..db import ResultRecord, ResultsStore
from ..interrupts import Interrupts, MeasurementTimedOut, die_with_parent, signal_name
from ..result import DesiredResult, Result


class Measures(Protocol):
    """What the orphan guard needs of the run's measurement driver (:class:`.measurement.MeasurementDriver`)."""

    cap: Optional[float]
    contract_error: Optional[str]
    interrupts: Interrupts

    def measure(self, desired: DesiredResult) -> Tuple[Result, ResultRecord]: ...

    def measure_only(self, desired: DesiredResult) -> Tuple[Result, Any, float]: ...

    def record_of(self, result: Result, inp: Any, cost: Optional[float]) -> ResultRecord: ...

__all__ = ["OrphanGuard", "orphan_message", "requeue_noting_orphans"]

#: how to re-measure an orphaned configuration, named in its ERROR result
REMEASURE = ("re-measure it in a new run with --parallelism 2 (each measurement in a worker process, whose "
             "death is recorded ERROR) and its parameter values (`tunerlib export DB`) as --seed-configuration "
             "FILE.json")


def orphan_message(how: str) -> str:
    """The error text of an orphaned request whose second measurement ended ``how``."""
    return f"the tuner process died while measuring this configuration; {how}; {REMEASURE}"


def requeue_noting_orphans(db: ResultsStore, run_id: int, requeue: Callable[[], Any]) -> Set[int]:
    """Call ``requeue()`` (the store's ``requeue_unfinished`` for the run, when it is resumed) and return
    the ids of the requests it put back to REQUESTED from RUNNING: the orphaned ones."""
    running = {row.id for row in db.desired_results(run_id) if row.state == "RUNNING"}
    requeue()
    return {row.id for row in db.desired_results(run_id) if row.id in running and row.state == "REQUESTED"}


class OrphanGuard:
    """The in-process executor's measurement step: ``driver.measure`` for every request but the orphaned ones
    (``orphans``, ids), which are measured once in a forked child process."""

    def __init__(self, driver: Measures, orphans: Set[int]) -> None:
        self.driver = driver
        self.orphans = set(orphans)

    @property
    def contract_error(self) -> Optional[str]:
        """The driver's: set when ``run()`` broke the contract (the loop stops)."""
        return self.driver.contract_error

    def measure(self, desired: DesiredResult) -> Tuple[Result, ResultRecord]:
        """Called by the in-process executor for each claimed request: the Result and its database record.
        Raises RunInterrupted when the run stops meanwhile (the child, if any, is killed first)."""
        if desired.id not in self.orphans:
            return self.driver.measure(desired)
        self.orphans.discard(desired.id)
        if not hasattr(os, "fork"):
            return self._error(orphan_message("it is not measured in the tuner process again, as it may be "
                                              "what killed it"), None)
        start = time.perf_counter()
        payload, status = _in_child(self.driver, desired)
        if payload is None:
            return self._error(orphan_message(f"so did the separate process that measured it again on "
                                              f"--resume ({_death(status)})"), time.perf_counter() - start)
        (result, inp, cost), contract_error = payload
        self.driver.contract_error = self.driver.contract_error or contract_error
        return result, self.driver.record_of(result, inp, cost)

    def _error(self, message: str, cost: Optional[float]) -> Tuple[Result, ResultRecord]:
        result = Result(state="ERROR", extra={"error": message})
        return result, self.driver.record_of(result, None, cost)


def _in_child(driver: Measures, desired: DesiredResult) -> Tuple[Optional[Any], int]:
    """Measure ``desired`` with ``driver.measure_only`` in a forked child: (((Result, Input, seconds),
    contract error), wait status), or (None, wait status) when the child died without an answer. A stop of
    the run (RunInterrupted in this process) kills the child and goes on."""
    _flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: measure, send the answer, leave without running the parent's clean-ups
        os.close(read_end)
        code = 1
        try:
            die_with_parent(signal.SIGKILL)
            answer = pickle.dumps((driver.measure_only(desired), driver.contract_error))
            with os.fdopen(write_end, "wb") as out:
                out.write(answer)
            code = 0
        finally:
            _flush()
            os._exit(code)
    os.close(write_end)
    data, status = b"", None
    try:
        with os.fdopen(read_end, "rb") as answer_in, driver.interrupts.measuring(driver.cap):
            data = answer_in.read()
            _, status = os.waitpid(pid, 0)
    except MeasurementTimedOut as exc:  # the child is stuck in C code past --measurement-timeout
        if status is None:
            _kill(pid)
            return ((Result(state="TIMEOUT", extra={"error": str(exc)}), None, exc.seconds), None), 0
    except BaseException:
        if status is None:  # not reaped yet: its pid is still its own
            _kill(pid)
        raise
    if status != 0 or not data:
        return None, status
    return pickle.loads(data), status


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _death(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by {signal_name(os.WTERMSIG(status))}"
    return f"it exited with status {os.waitstatus_to_exitcode(status)} without a result"

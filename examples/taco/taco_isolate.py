"""Measure kernels in a separate worker process with a wall-clock deadline (``--backend taco``).

Kernels written by the real TACO have no deadline check of their own and may crash on a schedule
TACO accepted but compiled wrongly.  :class:`IsolatedMeasurer` keeps one worker process (``spawn``:
a fresh interpreter, so no OpenMP runtime state is inherited -- GNU libgomp hangs in a child forked
after the parent ran a parallel region).  The problem is sent once and the worker answers
``"ready"`` when it has imported its modules and received the problem; the measurer waits for that
handshake up to :data:`STARTUP_TIMEOUT_S` (a worker that dies first: ERROR, ``measurement worker
died during start-up``; one that is not ready in time: TIMEOUT, ``worker start-up timed out``), so
start-up, which takes seconds on a loaded machine, is never charged to a measurement's deadline.
Each measurement sends the compiled library's path and OpenMP settings, and the worker loads it and
runs :func:`taco_harness.measure`.  No answer within the deadline: the worker is killed and the
result is TIMEOUT; the worker dies: ERROR (``kernel crashed (SIGSEGV)``).  A new worker starts on
the next measurement, so the tuning run goes on.  Built-in kernels check their own deadline and are
measured in the tuner's process.
"""
from __future__ import annotations

import ctypes
import multiprocessing
import signal
import threading
import time
from multiprocessing.connection import wait as wait_for
from typing import Any, Dict, Optional, Tuple

from taco_harness import CompiledKernel, TimingPolicy, measure
from taco_problem import Problem
from tunerlib import Result

#: seconds a new worker may take to import its modules, receive the problem and answer "ready";
#: generous, since it does not count against any measurement's deadline
STARTUP_TIMEOUT_S = 120.0

#: test hook: seconds a new worker sleeps before it reads the problem (simulates a slow start-up on
#: a loaded machine); read by the parent when it starts a worker and passed to the worker
START_DELAY_S = 0.0


def _serve(conn, start_delay_s: float = 0.0) -> None:
    """The worker's loop: ("problem", problem, backend, policy) once, answered with "ready", then
    ("measure", ...) requests, each answered with a Result."""
    if start_delay_s > 0:
        time.sleep(start_delay_s)
    try:
        _, problem, backend, policy = conn.recv()
    except EOFError:
        return
    conn.send("ready")
    libs: Dict[str, ctypes.CDLL] = {}
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        _, path, compile_s, omp, run_timeout_s, limit = msg
        try:
            if path not in libs:
                libs[path] = ctypes.CDLL(path)
            kernel = CompiledKernel(path, path, compile_s, libs[path])
            kernel.set_omp(*omp)
            result = measure(kernel, problem, backend, policy, run_timeout_s, limit)
        except Exception as exc:   # anything unexpected is this configuration's ERROR
            result = Result(state="ERROR", extra={"error": f"measurement raised {type(exc).__name__}: {exc}"})
        conn.send(result)


def _signal_name(code: Optional[int]) -> str:
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def _send_quietly(conn, msg: Any) -> None:
    """Send ``msg``; a worker that died or was killed meanwhile is noticed by the caller."""
    try:
        conn.send(msg)
    except (OSError, EOFError, ValueError):
        pass


class IsolatedMeasurer:
    """One worker process measuring kernels of one problem (see the module docstring)."""

    def __init__(self, problem: Problem, backend: str, policy: TimingPolicy, slack_s: float = 10.0) -> None:
        self.problem, self.backend, self.policy, self.slack_s = problem, backend, policy, slack_s
        self._ctx = multiprocessing.get_context("spawn")
        self._proc: Any = None
        self._conn: Any = None
        self.restarts = 0

    def _start(self) -> Optional[Result]:
        """Start a worker and wait for its "ready": None, or the ERROR/TIMEOUT of a failed start-up
        (the worker is then stopped; the next measurement starts another)."""
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child, START_DELAY_S), daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        # The problem may be larger than the pipe's buffer: sent from a thread, so a worker that
        # never reads it cannot block the tuner past the start-up limit (killing it ends the send).
        sender = threading.Thread(target=_send_quietly, daemon=True,
                                  args=(parent, ("problem", self.problem, self.backend, self.policy)))
        sender.start()
        limit = STARTUP_TIMEOUT_S
        end = time.monotonic() + limit
        timed_out = False
        while True:
            left = end - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready = wait_for([parent, self._proc.sentinel], left)
            if parent in ready:
                try:
                    if parent.recv() == "ready":
                        sender.join()    # the worker has read the whole problem: the send is done
                        return None
                except (EOFError, OSError):
                    pass                 # the worker's end of the pipe closed: it is dying
                break
            if ready:                    # the sentinel: the worker ended
                break
        if timed_out:
            self._proc.kill()
        self._proc.join(5)               # a dying worker: wait for its exit status
        code = self._proc.exitcode
        sender.join(5)                   # the worker is gone, so a pending send fails at once
        self._stop()
        if timed_out:
            return Result(state="TIMEOUT",
                          extra={"error": f"measurement worker start-up timed out after {limit:g} s; worker killed"})
        return Result(state="ERROR",
                      extra={"error": f"measurement worker died during start-up ({_signal_name(code)})"})

    def deadline(self, run_timeout_s: float, limit: Optional[float]) -> float:
        """Seconds to wait for a ready worker's answer: the check run and the last timed run may
        each take the run timeout, the timed runs stop after the policy's budget; ``slack_s`` covers
        loading the library, binding and checking (not the worker's start-up, see the module doc)."""
        timeout = min(run_timeout_s, limit) if limit else run_timeout_s
        return 2 * timeout + self.policy.budget_s + self.slack_s

    def measure(self, kernel: CompiledKernel, omp: Tuple[int, int, int], run_timeout_s: float,
                limit: Optional[float] = None) -> Result:
        """Measure ``kernel`` (a compiled library; ``omp`` = dynamic, chunk, threads) in the worker."""
        if self._proc is None or not self._proc.is_alive():
            if self._proc is not None:
                self.restarts += 1
            failed = self._start()
            if failed is not None:
                return failed
        wait = self.deadline(run_timeout_s, limit)    # counted from here: the worker is ready
        try:
            self._conn.send(("measure", kernel.path, kernel.compile_s, omp, run_timeout_s, limit))
            if self._conn.poll(wait):
                return self._conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            self._proc.join(5)
            code = self._proc.exitcode
            self._stop()
            return Result(state="ERROR", extra={"error": f"kernel crashed ({_signal_name(code)})"})
        self._stop()
        return Result(state="TIMEOUT", extra={"error": f"no result within {wait:g} s; worker killed"})

    def _stop(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        if self._conn is not None:
            self._conn.close()
        self._conn = None

    def close(self) -> None:
        """Stop the worker (called when the evaluator is done)."""
        self._stop()
        self._proc = None

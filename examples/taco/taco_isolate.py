"""Measure kernels in a separate worker process with a wall-clock deadline (``--backend taco``).

Kernels written by the real TACO have no deadline check of their own and may crash on a schedule
TACO accepted but compiled wrongly.  :class:`IsolatedMeasurer` keeps one worker process (``spawn``:
a fresh interpreter, so no OpenMP runtime state is inherited -- GNU libgomp hangs in a child forked
after the parent ran a parallel region).  The problem is sent once; each measurement sends the
compiled library's path and OpenMP settings, and the worker loads it and runs
:func:`taco_harness.measure`.  No answer within the deadline: the worker is killed and the result is
TIMEOUT; the worker dies: ERROR (``kernel crashed (SIGSEGV)``).  A new worker starts on the next
measurement, so the tuning run goes on.  Built-in kernels check their own deadline and are measured
in the tuner's process.
"""
from __future__ import annotations

import ctypes
import multiprocessing
import signal
from typing import Any, Dict, Optional, Tuple

from taco_harness import CompiledKernel, TimingPolicy, measure
from taco_problem import Problem
from tunerlib import Result


def _serve(conn) -> None:
    """The worker's loop: ("problem", problem, backend, policy) once, then ("measure", ...) requests."""
    problem = backend = policy = None
    libs: Dict[str, ctypes.CDLL] = {}
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg[0] == "problem":
            _, problem, backend, policy = msg
            continue
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


class IsolatedMeasurer:
    """One worker process measuring kernels of one problem (see the module docstring)."""

    def __init__(self, problem: Problem, backend: str, policy: TimingPolicy, slack_s: float = 10.0) -> None:
        self.problem, self.backend, self.policy, self.slack_s = problem, backend, policy, slack_s
        self._ctx = multiprocessing.get_context("spawn")
        self._proc: Any = None
        self._conn: Any = None
        self.restarts = 0

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child,), daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        self._conn.send(("problem", self.problem, self.backend, self.policy))

    def deadline(self, run_timeout_s: float, limit: Optional[float]) -> float:
        """Seconds to wait: the check run and the last timed run may each take the run timeout,
        the timed runs stop after the policy's budget; ``slack_s`` covers start-up and checking."""
        timeout = min(run_timeout_s, limit) if limit else run_timeout_s
        return 2 * timeout + self.policy.budget_s + self.slack_s

    def measure(self, kernel: CompiledKernel, omp: Tuple[int, int, int], run_timeout_s: float,
                limit: Optional[float] = None) -> Result:
        """Measure ``kernel`` (a compiled library; ``omp`` = dynamic, chunk, threads) in the worker."""
        if self._proc is None or not self._proc.is_alive():
            if self._proc is not None:
                self.restarts += 1
            self._start()
        wait = self.deadline(run_timeout_s, limit)
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

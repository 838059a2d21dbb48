"""Measure kernels in a separate worker process with a wall-clock deadline (``--backend taco``).

Kernels written by the real TACO have no deadline check of their own and may crash on a schedule
TACO accepted but compiled wrongly.  :class:`IsolatedMeasurer` runs them in the measurement kit's
:class:`tunerlib.measure.IsolatedWorker` (``spawn``: a fresh interpreter, so no OpenMP runtime state
is inherited -- GNU libgomp hangs in a child forked after the parent ran a parallel region).  The
problem is sent once and the worker answers ``"ready"`` when it has imported its modules and
received the problem; start-up has its own limit (:data:`STARTUP_TIMEOUT_S`) and is never charged
to a measurement's deadline.  Each measurement sends the compiled library's path and OpenMP
settings; the worker loads it and runs :func:`taco_harness.measure`.  The kit's state rule applies:
no answer within the deadline -> the worker is killed, TIMEOUT; the worker dies -> ERROR
(``kernel crashed (SIGSEGV)``); a failed start-up -> ERROR or TIMEOUT.  A new worker starts on the
next measurement, so the tuning run goes on.  Built-in kernels check their own deadline and are
measured in the tuner's process.
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, Optional, Tuple

from taco_harness import CompiledKernel, TimingPolicy, measure
from taco_problem import Problem
from tunerlib import Result
from tunerlib.measure import WARM_TRIES, IsolatedWorker, check_run_limit

#: seconds a new worker may take to import its modules, receive the problem and answer "ready";
#: generous, since it does not count against any measurement's deadline (read at each measurement)
STARTUP_TIMEOUT_S = 120.0

#: test hook: seconds a new worker sleeps before it reads the problem (simulates a slow start-up on
#: a loaded machine); read at each measurement and passed to the next worker started
START_DELAY_S = 0.0


def serve(payload: Tuple[Problem, str, TimingPolicy]) -> Callable[[Tuple], Result]:
    """The worker's set-up (called once in the worker with the problem, backend and policy):
    returns the handler of ("measure", path, compile_s, omp, run_timeout_s, limit) requests."""
    problem, backend, policy = payload
    libs: Dict[str, ctypes.CDLL] = {}

    def handle(msg: Tuple) -> Result:
        _, path, compile_s, omp, run_timeout_s, limit = msg
        if path not in libs:
            libs[path] = ctypes.CDLL(path)
        kernel = CompiledKernel(path, path, compile_s, libs[path])
        kernel.set_omp(*omp)
        return measure(kernel, problem, backend, policy, run_timeout_s, limit)
    return handle


class IsolatedMeasurer:
    """One worker process measuring kernels of one problem (see the module docstring)."""

    def __init__(self, problem: Problem, backend: str, policy: TimingPolicy, slack_s: float = 10.0) -> None:
        self.problem, self.backend, self.policy, self.slack_s = problem, backend, policy, slack_s
        self.worker = IsolatedWorker(serve, (problem, backend, policy), STARTUP_TIMEOUT_S, what="kernel")

    @property
    def restarts(self) -> int:
        """Workers started after the first (one per crash, timeout or failed start-up)."""
        return self.worker.restarts

    def deadline(self, run_timeout_s: float, limit: Optional[float]) -> float:
        """Seconds to wait for a ready worker's answer: the check run, the warm runs judging ``limit``
        (:data:`tunerlib.measure.WARM_TRIES`) and the last timed run may each take the run timeout
        (the check run's limit under ``limit``: :func:`tunerlib.measure.check_run_limit`), the timed
        runs stop after the policy's budget; ``slack_s`` covers loading the library, binding and
        checking (not the worker's start-up, see the module doc)."""
        timeout = min(run_timeout_s, check_run_limit(limit)) if limit else run_timeout_s
        return (2 + WARM_TRIES) * timeout + self.policy.budget_s + self.slack_s

    def measure(self, kernel: CompiledKernel, omp: Tuple[int, int, int], run_timeout_s: float,
                limit: Optional[float] = None) -> Result:
        """Measure ``kernel`` (a compiled library; ``omp`` = dynamic, chunk, threads) in the worker."""
        self.worker.startup_timeout_s, self.worker.start_delay_s = STARTUP_TIMEOUT_S, START_DELAY_S
        reply: Any = self.worker.call(("measure", kernel.path, kernel.compile_s, omp, run_timeout_s, limit),
                                      self.deadline(run_timeout_s, limit))
        return reply

    def close(self) -> None:
        """Stop the worker (called when the evaluator is done)."""
        self.worker.close()

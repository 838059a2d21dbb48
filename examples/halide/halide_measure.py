"""Measuring one Halide schedule: in this process (:class:`Measurer`) or in a worker process with a
compile limit (:class:`IsolatedMeasurer`).

:class:`Measurer` applies a configuration to freshly defined Funcs, JIT-compiles it, runs it once,
checks the output against the reference and times it with :mod:`tunerlib.measure` (the check run
doubles as the warm-up).  A Halide JIT compile cannot be interrupted, so a tuning run measures in
:class:`IsolatedMeasurer`: the kit's :class:`~tunerlib.measure.IsolatedWorker` (a ``spawn``
worker whose start-up -- imports, the reference output -- is not counted) first schedules, compiles
and check-runs the configuration within ``--compile-timeout`` seconds, then times it within a limit
derived from the timing budget.  The kit's state rule applies: Halide rejects the schedule ->
INFEASIBLE (``phase`` schedule, compile or run); wrong output -> ERROR; compile or run past its limit
-> TIMEOUT, the worker is killed and the next measurement starts a fresh one; the worker dies ->
ERROR naming the signal.
"""
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

import baselines
import pipelines
import schedule
from tunerlib import Result, captured_stderr
from tunerlib.measure import (OVER_LIMIT, WARM_TRIES, IsolatedWorker, TimingPolicy, clocked, over_limit, rejected,
                              time_after_check, timed_out, wrong_output)

#: seconds added to the timing phase's limit (binding buffers, the Python around the runs)
TIMING_SLACK_S = 10.0
Checked = Tuple[Optional[pipelines.Compiled], Dict[str, Any], Optional[Result]]


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's message (Halide errors are multi-line)."""
    for line in str(exc).splitlines():
        if line.strip():
            return line.strip()[:500]
    return type(exc).__name__


def default_output(instance: pipelines.Instance, threads: int) -> np.ndarray:
    """Output of Halide's default schedule, checked once against the numpy reference; raises
    ValueError (a bug in pipelines.py) when they disagree.  Called once per process at set-up."""
    compiled, _ = baselines.build_baseline(instance, "default", threads)
    compiled.run()
    out = compiled.output()
    expected = instance.reference()
    if not pipelines.outputs_match(out, expected):
        raise ValueError(f"{instance.spec.name}: the default schedule disagrees with the numpy "
                         f"reference (max error {pipelines.max_abs_error(out, expected):.3g}); "
                         "this is a bug in pipelines.py, please report it")
    return out


def _with_warnings(extra: Dict[str, Any], warnings: List[str]) -> Dict[str, Any]:
    if warnings:
        extra["warnings"] = "\n".join(warnings)[:1000]
    return extra


class Measurer:
    """Measures schedules of one pipeline instance in this process (see the module docstring)."""

    def __init__(self, spec: pipelines.PipelineSpec, instance: pipelines.Instance, reference: np.ndarray,
                 policy: TimingPolicy) -> None:
        self.spec, self.instance, self.reference, self.policy = spec, instance, reference, policy

    def evaluate(self, cfg: Dict[str, Any], limit: Optional[float] = None) -> Result:
        """Measure one configuration; never raises HalideError."""
        compiled, extra, failure = self.compile_checked(cfg)
        if failure is not None:
            return failure
        return self.finish(compiled, extra, limit)

    def compile_checked(self, cfg: Dict[str, Any]) -> Checked:
        """Schedule, JIT-compile, run once and check the output of ``cfg``: ``(compiled, extra,
        None)`` (``extra``: ``compile_s``, ``first_run_s``) or ``(None, extra, failure)`` with an
        INFEASIBLE (Halide error) or ERROR (wrong output) Result."""
        import halide as hl
        warnings: List[str] = []
        phase, extra = "schedule", {}
        try:
            with captured_stderr(warnings):
                alg = self.instance.define()
                schedule.apply_schedule(alg, self.spec, cfg, self.instance.width, self.instance.height)
                phase = "compile"
                compiled = pipelines.compile_algorithm(self.instance, alg)
                extra["compile_s"] = compiled.compile_s
                phase = "run"
                start = time.perf_counter()
                compiled.run()
                extra["first_run_s"] = time.perf_counter() - start
        except hl.HalideError as exc:
            failure = rejected(first_line(exc), phase, **extra)
            return None, extra, Result(state=failure.state, extra=_with_warnings(failure.extra, warnings))
        extra = _with_warnings(extra, warnings)
        failure = self.check(compiled, extra)
        return (None if failure else compiled), extra, failure

    def check(self, compiled: pipelines.Compiled, extra: Dict[str, Any]) -> Optional[Result]:
        """None when ``compiled``'s output matches the reference, else the ERROR (wrong output)."""
        out = compiled.output()
        if pipelines.outputs_match(out, self.reference):
            return None
        failure = wrong_output(f"max abs error {pipelines.max_abs_error(out, self.reference):.3g} "
                               f"(tolerance rtol {pipelines.RTOL:g}, atol {pipelines.ATOL_FRACTION:g}*max|ref|)",
                               **extra)
        extra["error"] = failure.extra["error"]
        return failure

    def finish(self, compiled: pipelines.Compiled, extra: Dict[str, Any], limit: Optional[float]) -> Result:
        """Time a checked schedule (its check run took ``extra["first_run_s"]``): TIMEOUT when it is
        slower than ``limit`` in a warm run (:func:`tunerlib.measure.time_after_check`), else OK with
        the min-of-k time."""
        import halide as hl
        first = extra["first_run_s"]
        try:
            measured = time_after_check(clocked(compiled.run), first, self.policy, limit)
        except hl.HalideError as exc:
            return rejected(first_line(exc), "run", **extra)
        if measured.stopped_because == OVER_LIMIT:
            return over_limit(measured.best, limit, runs=measured.runs, **extra)
        extra.update(runs=measured.runs, median_s=measured.median)
        return Result(time=measured.best, extra=extra)


def serve(payload: Tuple[str, Optional[int], int, TimingPolicy]) -> Callable[[Tuple], Any]:
    """The worker's set-up (called once in the worker with pipeline, size, threads and policy):
    defines the instance and computes the reference; returns the handler of ``("compile", cfg)``
    (answered with the failure Result or ``("checked", extra)``) and ``("time", limit)`` requests."""
    name, size, threads, policy = payload
    spec = pipelines.PIPELINES[name]
    instance = spec.instance(size)
    measurer = Measurer(spec, instance, default_output(instance, threads), policy)
    held: Dict[str, Any] = {}

    def handle(request: Tuple) -> Any:
        if request[0] == "compile":
            compiled, extra, failure = measurer.compile_checked(request[1])
            held.update(compiled=compiled, extra=extra)
            return failure if failure is not None else ("checked", extra)
        return measurer.finish(held.pop("compiled"), held.pop("extra"), request[1])
    return handle


class IsolatedMeasurer:
    """Measures schedules in a worker process with a compile limit (see the module docstring).

    Built once per tuning run; :meth:`close` at the end.
    """

    def __init__(self, pipeline: str, size: Optional[int], threads: int, policy: TimingPolicy,
                 compile_timeout_s: float) -> None:
        self.policy, self.compile_timeout_s = policy, compile_timeout_s
        self.worker = IsolatedWorker(serve, (pipeline, size, threads, policy), what="Halide worker")

    def evaluate(self, cfg: Dict[str, Any], limit: Optional[float] = None) -> Result:
        """Measure one configuration in the worker (called once per configuration by ``run``)."""
        reply = self.worker.call(("compile", dict(cfg)), self.compile_timeout_s)
        if isinstance(reply, Result):
            if reply.state == "TIMEOUT" and "start-up" not in reply.extra.get("error", ""):
                return timed_out(f"schedule, compile and check run did not finish within "
                                 f"{self.compile_timeout_s:g} s (--compile-timeout); worker restarted",
                                 phase="compile")
            return reply
        first = reply[1]["first_run_s"]
        # the timed runs, the check-run-sized warm runs judging the limit, and the slack
        timing_limit = 2 * self.policy.budget_s + (2 + WARM_TRIES) * first + TIMING_SLACK_S
        return self.worker.call(("time", limit), timing_limit)

    def close(self) -> None:
        """Stop the worker (called at the end of a tuning run)."""
        self.worker.close()

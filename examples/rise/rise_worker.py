"""Run the OpenCL measurements in a worker process, so a crashing kernel cannot end the tuning run.

Some configurations crash the OpenCL implementation instead of returning an error: an mm
configuration with 1024 work-items of 8 KiB private accumulators kills PoCL's CPU device with
SIGSEGV while 512 run (PoCL apparently keeps a work-group's private arrays on one 8 MiB thread
stack).  :class:`IsolatedRunner` measures in the measurement kit's
:class:`tunerlib.measure.IsolatedWorker` (``spawn``: a fresh interpreter, OpenCL state is never
forked), whose set-up :func:`serve` opens the :class:`rise_opencl.OpenCLRunner` and makes the
problem's inputs once; its start-up is not charged to any measurement.  The kit's state rule
applies (:mod:`tunerlib.measure.states`):

* the worker dies while measuring -> ``ERROR``, ``extra["error"]`` = ``OpenCL process crashed
  (SIGSEGV)``, ``extra["crashed"] = True``, ``extra["phase"] = "launch"``;
* no answer within ``timeout_s`` -> the worker is killed, ``TIMEOUT``;
* either way the next call starts a fresh worker (its program cache starts empty).

The worker's own stdout and stderr go to /dev/null (PoCL's and the compiler's chatter).
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

import rise_opencl as opencl_backend
import rise_problems as problems
from tunerlib import Result
from tunerlib.measure import IsolatedWorker, TimingPolicy, failed

#: seconds the worker may take to start (imports, device, inputs)
STARTUP_TIMEOUT_S = 120.0
#: what the worker is called in a crash's message
WHAT = "OpenCL process"


def serve(payload: Tuple[str, str, int]) -> Callable[[Tuple], Any]:
    """The worker's set-up (called once in the worker with (device, kernel, size)): opens the
    device and makes the inputs; returns the handler of ``describe``, ``evaluate`` and ``compare``
    requests.  A device that cannot be opened answers every request with ``("error", why)``."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    device, kernel, size = payload
    try:
        runner = opencl_backend.OpenCLRunner(device)
        problem = problems.make_problem(kernel, size)
    except Exception as exc:  # reported to the parent as a one-line error
        why = opencl_backend.first_line(exc)
        return lambda request: ("error", why)

    def handle(request: Tuple) -> Any:
        if request[0] == "describe":
            return ("device", runner.device_name, runner.device.name.strip(), runner.device.max_compute_units)
        if request[0] == "evaluate":
            return runner.evaluate(problem, request[1], request[2], request[3])
        if request[0] == "compare":
            return runner.compare(problem, request[1], request[2])
        raise ValueError(f"unknown request {request[0]!r}")
    return handle


class IsolatedRunner:
    """Measures configurations of one kernel and size on one OpenCL device in a worker process.

    Construct it once per run (raises :class:`rise_opencl.OpenCLUnavailable` when pyopencl or the
    device is missing); :meth:`evaluate` and :meth:`compare` mirror :class:`OpenCLRunner`'s.
    """

    def __init__(self, device: str, kernel: str, size: int, timeout_s: float = 120.0) -> None:
        opencl_backend.import_pyopencl()          # the one-line install hint, before starting
        self.device, self.kernel, self.size, self.timeout_s = device, kernel, size, timeout_s
        self.worker = IsolatedWorker(serve, (device, kernel, size), STARTUP_TIMEOUT_S, what=WHAT)
        reply = self.worker.call(("describe",), STARTUP_TIMEOUT_S)
        if isinstance(reply, Result) or reply[0] != "device":
            why = reply.extra["error"] if isinstance(reply, Result) else reply[1]
            self.close()
            raise opencl_backend.OpenCLUnavailable(why)
        _, self.device_name, self.device_short, self.compute_units = reply

    @property
    def restarts(self) -> int:
        """Workers started after the first (one per crash or timeout)."""
        return self.worker.restarts

    def close(self) -> None:
        """Stop the worker (called at the end of a run; safe to call twice)."""
        self.worker.close()

    def evaluate(self, cfg: Mapping[str, Any], policy: TimingPolicy = opencl_backend.DEFAULT_POLICY,
                 limit: Optional[float] = None) -> Result:
        """Measure one configuration in the worker (see the module docstring for crashes)."""
        reply = self.worker.call(("evaluate", dict(cfg), policy, limit), self.timeout_s)
        if isinstance(reply, tuple):                 # the device could not be opened this time
            return failed(reply[1])
        if reply.state == "TIMEOUT" and "killed" in reply.extra.get("error", ""):
            reply.extra["error"] = (f"no answer within {self.timeout_s:g} s; the OpenCL process was killed")
        if reply.extra.get("crashed"):
            reply.extra["phase"] = "launch"
        return reply

    def compare(self, configs: Mapping[str, Mapping[str, Any]],
                rounds: int) -> Dict[str, Tuple[Optional[float], Optional[str]]]:
        """Re-time configurations in interleaved rounds in the worker (see OpenCLRunner.compare);
        a crash or timeout marks them all as not timed."""
        timeout = self.timeout_s * (1 + len(configs))
        reply = self.worker.call(("compare", {k: dict(v) for k, v in configs.items()}, rounds), timeout)
        if not isinstance(reply, dict):
            reason = reply.extra.get("error", reply.state) if isinstance(reply, Result) else reply[1]
            return {name: (None, reason) for name in configs}
        return reply

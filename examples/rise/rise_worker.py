"""Run the OpenCL measurements in a child process, so a crashing kernel cannot end the tuning run.

Some configurations crash the OpenCL implementation instead of returning an error: an mm
configuration with 1024 work-items of 8 KiB private accumulators kills PoCL's CPU device with
SIGSEGV while 512 run (PoCL apparently keeps a work-group's private arrays on one 8 MiB thread
stack).  :class:`IsolatedRunner` starts ``python rise_worker.py DEVICE KERNEL SIZE`` (a plain
subprocess: nothing of the caller's ``__main__`` is re-imported, OpenCL state is never forked),
which holds the :class:`rise_opencl.OpenCLRunner` and the problem's inputs and answers requests,
one JSON object per line on its stdin/stdout:

* a child that dies while measuring -> ``INFEASIBLE`` with ``extra["phase"] = "launch"``,
  ``extra["crashed"] = True`` and ``extra["error"]`` naming the signal (a hidden constraint);
* a child that does not answer within ``timeout_s`` -> it is killed, ``TIMEOUT``;
* either way the next call starts a fresh child (its program cache starts empty).

The child's own stdout and stderr go to /dev/null (the protocol uses a duplicate of its stdout).
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

import rise_opencl as opencl_backend
import rise_problems as problems
from tunerlib import Result

#: seconds the child may take to start (imports, device, inputs)
STARTUP_TIMEOUT_S = 120.0
Message = Dict[str, Any]


# ------------------------------------------------------------------------------ the child
def serve(device: str, kernel: str, size: int) -> int:
    """The child's loop: answer ``evaluate``/``compare`` requests until ``stop`` or EOF."""
    out = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)                         # stray prints cannot corrupt the protocol

    def send(msg: Message) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()
    try:
        runner = opencl_backend.OpenCLRunner(device)
        problem = problems.make_problem(kernel, size)
    except Exception as exc:  # reported to the parent as a one-line error
        send({"op": "error", "error": opencl_backend.first_line(exc)})
        return 1
    send({"op": "ready", "device_name": runner.device_name, "device_short": runner.device.name.strip()})
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["op"] == "stop":
            break
        try:
            send(_answer(runner, problem, msg))
        except Exception as exc:
            send({"op": "error", "error": f"{type(exc).__name__}: {opencl_backend.first_line(exc)}"})
    return 0


def _answer(runner: opencl_backend.OpenCLRunner, problem: problems.Problem, msg: Message) -> Message:
    if msg["op"] == "evaluate":
        policy = opencl_backend.TimingPolicy(msg["repeats"], msg["budget_s"])
        res = runner.evaluate(problem, msg["cfg"], policy, msg["limit"])
        return {"op": "result", "state": res.state, "time": res.time, "extra": res.extra}
    if msg["op"] == "compare":
        return {"op": "compared", "times": runner.compare(problem, msg["configs"], msg["rounds"])}
    return {"op": "error", "error": f"unknown request {msg['op']!r}"}


def _death(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"signal {-exitcode} ({signal.Signals(-exitcode).name})"
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


class IsolatedRunner:
    """Measures configurations of one kernel and size on one OpenCL device in a child process.

    Construct it once per run (raises :class:`rise_opencl.OpenCLUnavailable` when pyopencl or the
    device is missing); :meth:`evaluate` and :meth:`compare` mirror :class:`OpenCLRunner`'s.
    """

    def __init__(self, device: str, kernel: str, size: int, timeout_s: float = 120.0) -> None:
        opencl_backend.import_pyopencl()          # the one-line install hint, before starting
        self.device, self.kernel, self.size, self.timeout_s = device, kernel, size, timeout_s
        self._proc: Optional[subprocess.Popen] = None
        self.device_name = self.device_short = ""
        self.restarts = 0
        self._timed_out = False
        self._start()

    # ---- the child -----------------------------------------------------------------
    def _start(self) -> None:
        cmd = [sys.executable, str(Path(__file__).resolve()), self.device, self.kernel, str(self.size)]
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True, bufsize=1)
        reply = self._receive(STARTUP_TIMEOUT_S)
        if reply is None or reply["op"] != "ready":
            why = reply["error"] if reply else f"the OpenCL process did not start ({self._why_dead()})"
            self.close()
            raise opencl_backend.OpenCLUnavailable(why)
        self.device_name, self.device_short = reply["device_name"], reply["device_short"]

    def _receive(self, timeout: float) -> Optional[Message]:
        """The child's next message, or None when it died (:attr:`_timed_out` False) or stayed
        silent for ``timeout`` seconds (:attr:`_timed_out` True)."""
        self._timed_out = False
        ready, _, _ = select.select([self._proc.stdout], [], [], timeout)
        if not ready:
            self._timed_out = True
            return None
        line = self._proc.stdout.readline()
        return json.loads(line) if line else None

    def _why_dead(self) -> str:
        try:
            return _death(self._proc.wait(5.0))
        except subprocess.TimeoutExpired:
            return "still running"

    def _call(self, msg: Message, timeout: float) -> Tuple[Optional[Message], str]:
        """Send ``msg`` and wait for the answer: (reply, "") or (None, "crashed: ..."/"timeout")."""
        if self._proc is None or self._proc.poll() is not None:
            self.restarts += 1
            self.close()
            self._start()
        try:
            self._proc.stdin.write(json.dumps(msg) + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            why = f"crashed: the OpenCL process died ({self._why_dead()})"
            self.close()
            return None, why
        reply = self._receive(timeout)
        if reply is not None:
            return reply, ""
        why = "timeout" if self._timed_out else f"crashed: the OpenCL process died ({self._why_dead()})"
        self.close()
        return None, why

    def close(self) -> None:
        """Stop the child (called at the end of a run; safe to call twice)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.poll() is None:
                proc.stdin.write(json.dumps({"op": "stop"}) + "\n")
                proc.stdin.flush()
            proc.wait(2.0)
        except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait(2.0)
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass

    # ---- requests ---------------------------------------------------------------------
    def evaluate(self, cfg: Mapping[str, Any], policy: opencl_backend.TimingPolicy,
                 limit: Optional[float] = None) -> Result:
        """Measure one configuration in the child (see the module docstring for crashes)."""
        reply, why = self._call({"op": "evaluate", "cfg": dict(cfg), "repeats": policy.repeats,
                                 "budget_s": policy.budget_s, "limit": limit}, self.timeout_s)
        if reply is None and why == "timeout":
            return Result(state="TIMEOUT", extra={"error": f"no answer within {self.timeout_s:g} s; "
                                                           "the OpenCL process was killed"})
        if reply is None:
            return Result(state="INFEASIBLE", extra={"error": why, "phase": "launch", "crashed": True})
        if reply["op"] == "error":
            return Result(state="ERROR", extra={"error": reply["error"]})
        return Result(state=reply["state"], time=reply["time"], extra=reply["extra"])

    def compare(self, configs: Mapping[str, Mapping[str, Any]],
                rounds: int) -> Dict[str, Tuple[Optional[float], Optional[str]]]:
        """Re-time configurations in interleaved rounds in the child (see OpenCLRunner.compare);
        a crash or timeout marks them all as not timed."""
        timeout = self.timeout_s * (1 + len(configs))
        reply, why = self._call({"op": "compare", "configs": {k: dict(v) for k, v in configs.items()},
                                 "rounds": rounds}, timeout)
        if reply is None or reply["op"] != "compared":
            reason = why or (reply["error"] if reply else "no answer")
            return {name: (None, reason) for name in configs}
        return {name: (t, why) for name, (t, why) in reply["times"].items()}


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: rise_worker.py DEVICE KERNEL SIZE (started by IsolatedRunner; speaks JSON lines)")
    sys.exit(serve(sys.argv[1], sys.argv[2], int(sys.argv[3])))

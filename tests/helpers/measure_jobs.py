"""Tiny real workloads for tunerlib.measure.IsolatedWorker tests (importable by name in the worker)."""
import os
import signal
import time

from tunerlib import Result
from tunerlib.measure import wrong_output


def setup_square(payload):
    """The worker's set-up: ``payload`` is a start-up delay in seconds (slept before "ready")."""
    time.sleep(payload)
    return handle


def handle(request):
    """One measurement: ("ok", x) -> x squared as the time; ("crash",) -> SIGSEGV; ("sleep", s);
    ("wrong", got, want); ("raise",); ("pid",) -> the worker's pid."""
    op = request[0]
    if op == "ok":
        return Result(time=float(request[1]) ** 2)
    if op == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if op == "sleep":
        time.sleep(request[1])
        return Result(time=request[1])
    if op == "wrong":
        if request[1] != request[2]:
            return wrong_output(f"got {request[1]}, expected {request[2]}")
        return Result(time=1.0)
    if op == "raise":
        raise ValueError("bad configuration value")
    if op == "pid":
        return os.getpid()
    raise AssertionError(f"unknown request {request!r}")


def setup_fails(payload):
    """A set-up that raises (a missing device, say)."""
    raise RuntimeError("no such device")


def setup_dies(payload):
    """A set-up whose process dies before "ready"."""
    os._exit(3)
